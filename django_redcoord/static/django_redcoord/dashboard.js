// Live refresh of the coordination dashboard: fetch data.json, rewrite the
// tables in place, then schedule the next fetch 2 s after this one ended.
// One request at a time (a slow or paused server never piles requests up);
// a request that takes over 10 s is aborted. Errors (Redis down, a proxy's
// 502, a render problem) are shown and the refresh goes on, so a page opened
// during an outage fills in by itself once Redis answers. An ended session
// (403, or a redirect to the login page) stops the refresh. Plain DOM,
// textContent only: names are data.
(function () {
  "use strict";
  const REFRESH_MS = 2000;
  const TIMEOUT_MS = 10000;
  const byId = (id) => document.getElementById(id);
  let canChange = false;
  try {
    canChange = JSON.parse(byId("rc-can-change").textContent) === true;
  } catch (err) {
    canChange = false;
  }
  const status = byId("rc-status");
  const pauseButton = byId("rc-pause");
  const errorBox = byId("rc-error");
  let paused = false;
  let stopped = false;
  let inFlight = false;
  let timer = null;
  let staleSince = null;

  const when = (ms) => (ms ? new Date(Number(ms)).toLocaleTimeString() : "–");
  const dash = (v) => (v === null || v === undefined || v === "" ? "–" : String(v));
  const list = (v) => (Array.isArray(v) ? v : []);
  const setText = (el, text) => {
    if (el) el.textContent = text;
  };

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = dash(text);
    if (cls) td.className = cls;
    return td;
  }

  function actions(links) {
    const td = document.createElement("td");
    td.className = "rc-actions";
    for (const [label, href] of links) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = label;
      td.appendChild(a);
    }
    return td;
  }

  function fill(tbody, rows, build, emptyText, columns) {
    if (!tbody) return;
    const fresh = list(rows).map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.name = dash(row && (row.name || row.id));
      build(row || {}).forEach((td) => tr.appendChild(td));
      return tr;
    });
    if (!fresh.length) {
      const tr = document.createElement("tr");
      tr.className = "rc-empty";
      const td = cell(emptyText, "rc-muted");
      td.colSpan = columns;
      tr.appendChild(td);
      fresh.push(tr);
    }
    tbody.replaceChildren(...fresh);
  }

  const q = (v) => encodeURIComponent(dash(v));

  // A cell whose text links to href (a relative URL built with q()), or plain text without href.
  function linkCell(text, href, cls) {
    const td = cell(text, cls);
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = td.textContent;
      td.replaceChildren(a);
    }
    return td;
  }

  function render(data) {
    const locks = data.locks || {};
    setText(byId("rc-locks-total"), dash(locks.total));
    setText(byId("rc-page"), dash(locks.page));
    setText(byId("rc-pages"), dash(locks.pages));
    fill(byId("rc-locks"), locks.items, (l) => {
      const tds = [cell(l.name), cell(`${dash(l.host)} ${dash(l.pid)} ${dash(l.thread)}`), cell(when(l.acquired_ms)),
        cell(l.ttl_left, "rc-num"), cell(l.fence, "rc-num"), cell(l.waiters, "rc-num")];
      if (canChange) tds.push(actions([["Force release", `action/force-release/?name=${q(l.name)}&fence=${q(l.fence)}`]]));
      return tds;
    }, "No lock is held.", 7);
    const permits = list(data.semaphores).flatMap((sem) =>
      list(sem && sem.holders).map((h) => ({ ...h, name: sem.name, used: sem.used, limit: sem.limit, queued: sem.queued })));
    fill(byId("rc-semaphores"), permits, (p) => {
      const tds = [cell(p.name), cell(`${dash(p.used)} / ${dash(p.limit)}`, "rc-num"), cell(p.queued, "rc-num"),
        cell(`${dash(p.host)} ${dash(p.pid)} ${dash(p.thread)}`), cell(p.ttl, "rc-num"), cell(p.fence, "rc-num")];
      if (canChange) tds.push(actions([["Revoke", `action/revoke-permit/?name=${q(p.name)}&fence=${q(p.fence)}`]]));
      return tds;
    }, "No permit is held.", 7);
    const rwHolders = list(data.rwlocks).flatMap((rw) =>
      list(rw && rw.holders).map((h) => ({ ...h, name: rw.name, writers: rw.writers_waiting, readers: rw.readers_waiting })));
    fill(byId("rc-rwlocks"), rwHolders, (h) => [cell(h.name), cell(h.kind === "w" ? "writing" : "reading"),
      cell(`${dash(h.host)} ${dash(h.pid)} ${dash(h.thread)}`), cell(h.ttl, "rc-num"), cell(h.fence, "rc-num"),
      cell(`${dash(h.writers)} / ${dash(h.readers)}`, "rc-num")], "No read-write lock is held.", 6);
    fill(byId("rc-latches"), data.latches, (x) => [cell(x.kind), cell(x.name), cell(x.state),
      cell(x.broken, x.broken ? "rc-dead" : ""), cell(x.waiting, "rc-num"), cell(x.parties, "rc-num")],
    "No latch or barrier in use.", 6);
    fill(byId("rc-signals"), data.signals, (x) => [cell(x.kind), cell(x.name), cell(x.state), cell(x.waiting, "rc-num")],
      "No event, signal or topic in use.", 4);
    fill(byId("rc-ratelimits"), data.rate_limits, (x) => {
      const tds = [cell(x.name), cell(x.policies), cell(x.key), cell(x.hits, "rc-num"), cell(x.remaining, "rc-num"),
        cell(x.retry_after, "rc-num")];
      if (canChange) tds.push(actions([["Reset", `action/reset-ratelimit/?name=${q(x.name)}&key=${q(x.key)}`]]));
      return tds;
    }, "No rate-limited request in the last two minutes.", 7);
    fill(byId("rc-queues"), data.queues, (x) => {
      const tds = [cell(x.name), cell(x.ready, "rc-num"), cell(x.delayed, "rc-num"), cell(x.processing, "rc-num"),
        linkCell(x.dead, x.dead > 0 ? `dead-letters/?name=${q(x.name)}` : null, "rc-num"), cell(x.head_age, "rc-num")];
      if (canChange) tds.push(actions([["Requeue dead", `action/requeue-dead/?name=${q(x.name)}`],
        ["Purge dead", `action/purge-dead/?name=${q(x.name)}`], ["Purge queue", `action/purge-queue/?name=${q(x.name)}`]]));
      return tds;
    }, "No queue yet.", 7);
    fill(byId("rc-workers"), data.workers, (w) => {
      const state = cell(w.dead ? "dead" : "alive", w.dead ? "rc-dead" : "");
      return [cell(w.id), cell(list(w.queues).join(", ")), cell(list(w.current).join(", ")), cell(w.heartbeat_age, "rc-num"),
        cell(`${dash(w.ok)} / ${dash(w.failed)} / ${dash(w.dead_lettered)}`, "rc-num"), state];
    }, "No worker is running.", 6);
    const jobBodies = document.querySelectorAll("#rc-leaders .rc-jobs");
    const leaderLines = document.querySelectorAll("#rc-leaders .rc-leader");
    list(data.leaders).forEach((election, i) => {
      const leader = election && election.leader;
      setText(leaderLines[i], leader
        ? `${dash(leader.identity)}, term ${dash(leader.term)}, since ${when(leader.since_ms)}`
        : "No leader (is manage.py run_leader running?)");
      const where = `election=${q(election ? election.election : "default")}`;
      fill(jobBodies[i], election && election.jobs, (j) => {
        const tds = [cell(j.name), cell(j.schedule), cell(when(j.last_start)),
          cell(j.duration, "rc-num"), cell(`${dash(j.outcome)} ${j.error || ""}`), cell(j.runs || 0, "rc-num"),
          cell(j.paused ? "paused" : when(j.next_due))];
        if (canChange) tds.push(actions([["Run now", `action/run-job/?name=${q(j.name)}&${where}`],
          j.paused ? ["Resume", `action/resume-job/?name=${q(j.name)}&${where}`]
                   : ["Pause", `action/pause-job/?name=${q(j.name)}&${where}`]]));
        return tds;
      }, "No periodic job has run yet.", canChange ? 8 : 7);
    });
  }

  function showError(message) {
    if (!staleSince) staleSince = new Date();
    if (errorBox) {
      errorBox.textContent = message;
      errorBox.style.display = "";
    }
    setText(status, `no fresh data since ${staleSince.toLocaleTimeString()}: retrying every ${REFRESH_MS / 1000} s`);
  }

  function stop(message) {
    stopped = true;
    clearTimeout(timer);
    if (errorBox) {
      errorBox.textContent = message;
      errorBox.style.display = "";
    }
    setText(status, "live refresh stopped");
  }

  function schedule() {
    clearTimeout(timer);
    if (!paused && !stopped) timer = setTimeout(refresh, REFRESH_MS);
  }

  async function refresh() {
    if (paused || stopped || inFlight) return;
    inFlight = true;
    const controller = new AbortController();
    const abort = setTimeout(() => controller.abort(), TIMEOUT_MS);
    try {
      const response = await fetch("data.json" + window.location.search, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
        signal: controller.signal,
      });
      if (response.status === 403 || (response.redirected && /\/login\//.test(response.url))) {
        stop("Your session has ended or lost its permission: reload the page to log in again.");
        return;
      }
      const type = response.headers.get("content-type") || "";
      if (!type.includes("application/json")) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
      render(data);
      staleSince = null;
      if (errorBox) errorBox.style.display = "none";
      setText(status, `live, every ${REFRESH_MS / 1000} s (updated ${new Date().toLocaleTimeString()})`);
    } catch (err) {
      showError(err && err.name === "AbortError" ? `no answer within ${TIMEOUT_MS / 1000} s` : String((err && err.message) || err));
    } finally {
      clearTimeout(abort);
      inFlight = false;
      schedule();
    }
  }

  document.querySelectorAll(".rc-when").forEach((el) => {
    el.textContent = when(el.dataset.ms);
  });
  if (pauseButton) {
    pauseButton.addEventListener("click", () => {
      paused = !paused;
      pauseButton.textContent = paused ? "Resume live refresh" : "Pause live refresh";
      setText(status, paused ? "paused" : "live, every 2 s");
      if (paused) clearTimeout(timer);
      else refresh();
    });
  }
  schedule();
})();
