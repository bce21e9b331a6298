// Live refresh of the coordination dashboard: poll data.json every 2 s and
// rewrite the tables in place. Plain DOM, textContent only (names are data).
(function () {
  "use strict";
  const canChange = JSON.parse(document.getElementById("rc-can-change").textContent);
  const status = document.getElementById("rc-status");
  const pauseButton = document.getElementById("rc-pause");
  const errorBox = document.getElementById("rc-error");
  let paused = false;

  const when = (ms) => (ms ? new Date(Number(ms)).toLocaleTimeString() : "–");
  const dash = (v) => (v === null || v === undefined || v === "" ? "–" : String(v));

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
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

  function fill(tbodyId, rows, build, emptyText, columns) {
    const tbody = typeof tbodyId === "string" ? document.getElementById(tbodyId) : tbodyId;
    if (!tbody) return;
    const fresh = rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.name = row.name || row.id;
      build(row).forEach((td) => tr.appendChild(td));
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

  const q = (v) => encodeURIComponent(v);

  function render(data) {
    document.getElementById("rc-locks-total").textContent = data.locks.total;
    document.getElementById("rc-page").textContent = data.locks.page;
    document.getElementById("rc-pages").textContent = data.locks.pages;
    fill("rc-locks", data.locks.items, (l) => {
      const tds = [cell(l.name), cell(`${l.host} ${l.pid} ${l.thread}`), cell(when(l.acquired_ms)),
        cell(l.ttl_left, "rc-num"), cell(l.fence, "rc-num"), cell(l.waiters, "rc-num")];
      if (canChange) tds.push(actions([["Force release", `action/force-release/?name=${q(l.name)}&fence=${l.fence}`]]));
      return tds;
    }, "No lock is held.", 7);
    fill("rc-queues", data.queues, (x) => {
      const tds = [cell(x.name), cell(x.ready, "rc-num"), cell(x.delayed, "rc-num"), cell(x.processing, "rc-num"),
        cell(x.dead, "rc-num"), cell(dash(x.head_age), "rc-num")];
      if (canChange) tds.push(actions([["Requeue dead", `action/requeue-dead/?name=${q(x.name)}`],
        ["Purge dead", `action/purge-dead/?name=${q(x.name)}`], ["Purge queue", `action/purge-queue/?name=${q(x.name)}`]]));
      return tds;
    }, "No queue yet.", 7);
    fill("rc-workers", data.workers, (w) => {
      const state = cell(w.dead ? "dead" : "alive", w.dead ? "rc-dead" : "");
      return [cell(w.id), cell(w.queues.join(", ")), cell(dash(w.current.join(", "))), cell(dash(w.heartbeat_age), "rc-num"),
        cell(`${w.ok} / ${w.failed} / ${w.dead_lettered}`, "rc-num"), state];
    }, "No worker is running.", 6);
    const jobBodies = document.querySelectorAll("#rc-leaders .rc-jobs");
    const leaderLines = document.querySelectorAll("#rc-leaders .rc-leader");
    data.leaders.forEach((election, i) => {
      if (leaderLines[i]) {
        leaderLines[i].textContent = election.leader
          ? `${election.leader.identity}, term ${election.leader.term}, since ${when(election.leader.since_ms)}`
          : "No leader (is manage.py run_leader running?)";
      }
      fill(jobBodies[i], election.jobs, (j) => [cell(j.name), cell(dash(j.schedule)), cell(when(j.last_start)),
        cell(dash(j.duration), "rc-num"), cell(`${dash(j.outcome)} ${j.error || ""}`), cell(j.runs || 0, "rc-num"),
        cell(when(j.next_due))], "No periodic job has run yet.", 7);
    });
  }

  async function refresh() {
    if (paused) return;
    try {
      const response = await fetch("data.json" + window.location.search, { headers: { Accept: "application/json" } });
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || response.statusText);
      render(data);
      errorBox.style.display = "none";
      status.textContent = `live, every 2 s (updated ${new Date().toLocaleTimeString()})`;
    } catch (err) {
      errorBox.textContent = String(err.message || err);
      errorBox.style.display = "";
    }
  }

  document.querySelectorAll(".rc-when").forEach((el) => { el.textContent = when(el.dataset.ms); });
  pauseButton.addEventListener("click", () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume live refresh" : "Pause live refresh";
    status.textContent = paused ? "paused" : "live, every 2 s";
    if (!paused) refresh();
  });
  setInterval(refresh, 2000);
})();
