// Live refresh of the coordination dashboard: fetch fragments/ (every section
// rendered again by the server, from the templates that rendered the page:
// {section id: html}) with the page's own query (filter, page), swap in the
// sections that changed, then schedule the next fetch 2 s after this one
// ended. No row is built here: the templates are the only place that knows
// what a row looks like, and they escape what they show.
// One request at a time (a slow or paused server never piles requests up);
// a request that takes over 10 s is aborted. Errors (Redis down, a proxy's
// 502, a render problem) are shown and the refresh goes on, so a page opened
// during an outage fills in by itself once Redis answers; the sections keep
// their last content meanwhile and the status says since when it is stale.
// An ended session (403, or a redirect to the login page) stops the refresh.
(function () {
  "use strict";
  const REFRESH_MS = 2000;
  const TIMEOUT_MS = 10000;
  const byId = (id) => document.getElementById(id);
  const status = byId("rc-status");
  const pauseButton = byId("rc-pause");
  const errorBox = byId("rc-error");
  const shown = new Map(); // section id -> the html last swapped in
  let paused = false;
  let stopped = false;
  let inFlight = false;
  let timer = null;
  let staleSince = null;

  // The browser's clock, with its date and zone (the data's own times are the server's, in TIME_ZONE).
  // (dateStyle/timeStyle cannot be combined with timeZoneName: the fields are spelled out.)
  const STAMP = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
    timeZoneName: "short" };
  const now = () => new Date().toLocaleString(undefined, STAMP);
  const setText = (el, text) => {
    if (el) el.textContent = text;
  };

  function swap(sections) {
    for (const [id, html] of Object.entries(sections)) {
      const el = byId(id);
      if (!el || !el.hasAttribute("data-rc-section") || typeof html !== "string" || shown.get(id) === html) continue;
      el.innerHTML = html; // rendered by our templates, autoescaped
      shown.set(id, html);
    }
  }

  function showError(message) {
    if (!staleSince) staleSince = now();
    if (errorBox) {
      errorBox.textContent = message;
      errorBox.style.display = "";
    }
    setText(status, `no fresh data since ${staleSince}: retrying every ${REFRESH_MS / 1000} s`);
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
      const response = await fetch("fragments/" + window.location.search, {
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
      swap(data);
      staleSince = null;
      if (errorBox) errorBox.style.display = "none";
      setText(status, `live, every ${REFRESH_MS / 1000} s (updated ${now()})`);
    } catch (err) {
      showError(err && err.name === "AbortError" ? `no answer within ${TIMEOUT_MS / 1000} s` : String((err && err.message) || err));
    } finally {
      clearTimeout(abort);
      inFlight = false;
      schedule();
    }
  }

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
