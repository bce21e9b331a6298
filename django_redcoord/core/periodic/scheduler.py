"""The leader's side of ``@periodic``: claim due slots under the term, run them, record outcomes.

``Scheduler.tick(now)`` is the loop body of ``manage.py run_leader``: it takes
the wall-clock time as an argument (seconds since the epoch), so tests drive
it without sleeping. Per job it finds the slots due since ``last_slot`` and,
following the job's misfire policy, claims one with ``periodic/claim.lua``:

* the claim checks, atomically, that the leader record still carries our
  token and term, and that the slot is newer than ``last_slot``; then it
  moves ``last_slot``. So a slot runs at most once across leader changes, and
  a leader whose term is over (paused past its lease, then resumed) can never
  claim: its token is not the record's any more.
* only then does the job start, in its own thread. ``periodic/finish.lua``
  records the outcome unless a newer run was claimed since.

Clocks decide *when* a leader tries a slot; the claim decides *whether* it
runs. A leader whose clock is off runs slots early or late, never twice.

A crash between claim and the end of a run loses that run (at most once):
the slot stays claimed and the admin shows it as running under a dead term.

Operators act through Redis, not through the leader (see ``control.py``): a
paused job's slots are claimed but skipped by ``periodic/claim.lua``; "run
now" requests are read from the election's ``requests`` hash at most every
``request_interval`` and claimed, term-fenced, by ``periodic/take_request.lua``.
Schedule edits (``schedules.py``) are read at the same pace: each job's slots
are computed across its kept versions (a ``Timeline``), and each claim names
the version it was computed from, which ``periodic/claim.lua`` checks.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import CoordinationUnavailable
from ..leader.election import LeaderElection
from ..observe import observe, observers
from ..runtime import runtime
from ..transport.commands import as_text
from ..transport.errors import unavailable_as_ours
from ..transport.scripts import Script
from .control import RunRequest, decode_request
from .jobs import CATCHUP_LIMIT, Job, JobContext, _set_current_job
from .schedules import Segment, Timeline, decode_versions

log = logging.getLogger("django_redcoord.periodic")

_CLAIM = Script("periodic/claim")
_FINISH = Script("periodic/finish")
_TAKE_REQUEST = Script("periodic/take_request")

CLAIMED, NOT_LEADER, ALREADY_CLAIMED, PAUSED, STALE_SCHEDULE = 1, 0, 2, 3, 4
# periodic/take_request.lua's codes besides CLAIMED and NOT_LEADER
REQUEST_GONE, REQUEST_EXPIRED, REQUEST_OTHER_JOB = 2, 3, 4
_MAX_ERROR = 1000  # characters of an error message kept in Redis
#: Outcome writes Redis did not take that a scheduler keeps to make again (see Scheduler._finish).
MAX_UNRECORDED = 1000


@dataclass(eq=False)
class Run:
    """One run of a job in a worker thread (times: time.monotonic() seconds)."""

    job: Job
    run_id: str
    slot_ms: int | None
    term: int
    started: float
    request_id: str | None = None  # the "run now" request it runs, if any
    params: dict[str, Any] = field(default_factory=dict)  # keyword arguments set by a schedule edit
    done: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False
    outcome: str = ""
    error: str = ""
    duration: float = 0.0


class Scheduler:
    """Runs the due slots of ``jobs`` while ``election`` leads.

    Args:
        election: the election; only its leader claims slots.
        jobs: the jobs (``periodic.get_jobs().values()``).
        wakeup: set whenever a run ends, so the caller's loop ticks again.
        catchup_limit: misfire="catchup" runs at most this many missed slots.
        request_interval: seconds between two reads of the "run now"
            requests while leading (default: the election's retry period).
            ``tick`` reads them when at least this long has passed since
            the last read; call it that often (``run_leader`` ticks every
            second at least).
    """

    def __init__(
        self,
        election: LeaderElection,
        jobs: Iterable[Job],
        *,
        wakeup: threading.Event | None = None,
        catchup_limit: int = CATCHUP_LIMIT,
        request_interval: float | None = None,
    ) -> None:
        self.election = election
        self.jobs = sorted(jobs, key=lambda job: job.name)
        self._by_name = {job.name: job for job in self.jobs}
        self.wakeup = wakeup or threading.Event()
        self.catchup_limit = catchup_limit
        self.request_interval = (
            election.retry_period if request_interval is None else max(0.0, request_interval)
        )
        self._next_request_read = 0.0  # time.monotonic() of the next read of the requests
        self._ignored_requests: set[str] = set()  # requests for jobs we do not have (logged once)
        self._term: int | None = None  # the term our cached last_slot values belong to
        self._last: dict[str, int | None] = {}
        self._runs: list[Run] = []
        self._runs_lock = threading.Lock()
        self._broken: set[str] = set()  # jobs whose schedule raised (logged once)
        self._timelines: dict[str, Timeline] = {}  # each job's slots across its schedule versions
        self._next_edit_read = 0.0  # time.monotonic() of the next read of the schedule edits
        self._edit_problems: set[tuple[str, str]] = (
            set()
        )  # edits the code cannot apply (logged once)
        self._prefetched_requests: Any = None  # the requests read with the edits, for this tick
        # run_id -> the outcome write Redis did not take (or did not answer), made again each tick
        self._unrecorded: dict[str, tuple[Run, str, str, bool]] = {}
        self._unrecorded_lock = threading.Lock()

    # -- the loop body --------------------------------------------------------------

    def tick(self, now: float) -> float:
        """Claim and start the runs due at ``now`` (seconds since the epoch) if we lead.

        Also claims and starts the pending "run now" requests, read at most
        every ``request_interval`` (one HGETALL; the returned wait does not
        count it: tick at least that often to pick requests up promptly).

        Returns the seconds until the next slot is due or a timeout expires
        (``math.inf`` when nothing is scheduled). Never raises for Redis
        errors: they are logged and the tick is retried a retry period later.
        """
        self._check_timeouts()
        self.record_late()
        fence = self.election.fence()
        if fence is None:
            self._term = None
            return self._until_timeout(math.inf)
        term, token = fence
        now_ms = int(now * 1000)
        next_ms = math.inf
        self._prefetched_requests = None  # only ever this tick's
        try:
            if self._term != term:
                self._load(term)
            elif time.monotonic() >= self._next_edit_read:
                # with the "run now" requests if they are due too: one round trip for both
                self._read_edits(self.jobs, requests=time.monotonic() >= self._next_request_read)
            for job in self.jobs:
                try:
                    next_ms = min(next_ms, self._tick_job(job, now_ms, term, token))
                except CoordinationUnavailable:
                    raise
                except Exception:  # one broken schedule must not stop the others
                    if job.name not in self._broken:
                        log.exception("job %s: its schedule cannot be computed; skipped", job.name)
                        self._broken.add(job.name)
                if self._term is None:
                    return self.election.retry_period  # our term ended under us
            self._tick_requests(term, token)
            if self._term is None:
                return self.election.retry_period
        except CoordinationUnavailable as exc:
            log.warning(
                "scheduler: Redis unavailable, retrying in %g s: %s",
                self.election.retry_period,
                exc,
            )
            return self.election.retry_period
        return self._until_timeout(max(0.0, (next_ms - now_ms) / 1000.0))

    def _load(self, term: int) -> None:
        """Read every job's last_slot once per term (only the leader writes it), and the schedule
        edits."""
        client = self.election.client
        pipe = client.pipeline(transaction=False)
        for job in self.jobs:
            pipe.hget(self.election.keys.job(job.name), "last_slot")
            pipe.hgetall(self.election.keys.schedule(job.name))
        with unavailable_as_ours(client, "read periodic job state"):
            values = pipe.execute()
        self._last = {
            job.name: None if v is None else int(v)
            for job, v in zip(self.jobs, values[::2], strict=True)
        }
        self._set_timelines(self.jobs, values[1::2])
        self._term = term

    def _read_edits(self, jobs: list[Job], *, requests: bool = False) -> None:
        """Read the schedule edits of ``jobs`` (one round trip); next read after request_interval.

        ``requests``: read the pending "run now" requests in the same round
        trip, for this tick's ``_tick_requests``.
        """
        client = self.election.client
        pipe = client.pipeline(transaction=False)
        if requests:
            pipe.hgetall(self.election.keys.requests)
        for job in jobs:
            pipe.hgetall(self.election.keys.schedule(job.name))
        with unavailable_as_ours(client, "read schedule edits"):
            values = pipe.execute()
        if requests:
            self._prefetched_requests = values.pop(0)
        self._set_timelines(jobs, values)

    def _set_timelines(self, jobs: list[Job], raws: list[Any]) -> None:
        self._next_edit_read = time.monotonic() + self.request_interval
        for job, raw in zip(jobs, raws, strict=True):
            timeline = Timeline(job, decode_versions(raw or {}))
            old = self._timelines.get(job.name)
            if old is not None and old.head != timeline.head:
                log.info(
                    "job %s: schedule version %d read (%s)",
                    job.name,
                    timeline.head,
                    timeline.current.words,
                )
            for problem in timeline.problems:
                if (job.name, problem) not in self._edit_problems:
                    self._edit_problems.add((job.name, problem))
                    log.error("job %s: schedule edit %s", job.name, problem)
            self._timelines[job.name] = timeline

    def _timeline(self, job: Job) -> Timeline:
        timeline = self._timelines.get(job.name)
        if timeline is None:  # a job the scheduler did not load (run_now on a fresh scheduler)
            self._read_edits([job])
            timeline = self._timelines[job.name]
        return timeline

    def _tick_job(self, job: Job, now_ms: int, term: int, token: str) -> float:
        """Claim what is due for ``job``; return when it is next due (ms since the epoch)."""
        last = self._last.get(job.name)
        if last is None:
            # A job seen for the first time starts with its next slot: record
            # the latest past slot as done, so a new daily job does not fire
            # at deploy time.
            # With an edit in force, not before it took effect (the slots
            # of the older versions are not the new job's to run).
            current = self._timeline(job).current
            start = current.job.previous_slot(now_ms)
            if current.since_ms is not None and start < current.since_ms:
                start = current.since_ms
            code = self._claim(job, "skip", start, 0, term, token)
            if code != CLAIMED:
                return math.inf if self._term is None else 0.0
            return self._next_due(job, self._last[job.name] or 0)
        paused = False
        stale = 0
        while True:
            if not job.overlap and self._busy(job):
                return math.inf  # the run's end sets `wakeup`
            found, older = self._timeline(job).due_slots(last, now_ms, self.catchup_limit)
            if not found:
                return self._next_due(job, last)
            if (
                paused
            ):  # found paused in this tick: skip what is left at once, not one slot per claim
                (slot, seg), missed, mode = found[-1], older + len(found) - 1, "run"
            elif job.misfire == "catchup":
                (slot, seg), missed, mode = found[0], older, "run"
            elif job.misfire == "coalesce":
                (slot, seg), missed, mode = found[-1], older + len(found) - 1, "run"
            else:  # skip: only a slot reached within its grace runs
                (slot, seg), missed = found[-1], older + len(found) - 1
                late = now_ms - seg.job.due_ms(slot) > seg.job.grace_ms()
                mode = "skip" if late else "run"
                missed += 1 if late else 0
            code = self._claim(job, mode, slot, missed, term, token)
            if code == STALE_SCHEDULE:
                # _claim read the edits again: recompute from them (an edit
                # storm could refuse us forever: give up until the next tick).
                stale += 1
                if stale >= 3:
                    return now_ms + self.election.retry_period * 1000
                continue
            if code not in (CLAIMED, PAUSED):
                return math.inf if self._term is None else 0.0
            last = self._last[job.name] or slot
            if code == PAUSED:
                paused = True
                continue
            if not job.overlap or job.misfire != "catchup":
                # At most one new run per job and tick, except when catching
                # up with overlap=True (every missed slot starts at once).
                return self._next_due(job, last)

    def _claim_segment(self, job: Job, slot: int) -> Segment:
        """The version ``slot`` is claimed under: the one whose window holds it."""
        return self._timeline(job).segment_of(slot)

    def _next_due(self, job: Job, after_ms: int) -> float:
        found = self._timeline(job).next_due(after_ms)
        return math.inf if found is None else found[0]

    def _claim(self, job: Job, mode: str, slot: int, missed: int, term: int, token: str) -> int:
        """Run periodic/claim.lua for ``slot``, naming the version it belongs to; start the run if
        claimed (with that version's schedule and arguments). Returns claim.lua's code."""
        keys = self.election.keys
        seg = self._claim_segment(job, slot)
        following = self._timeline(job).next_due(slot)
        code, value = _CLAIM(
            self.election.client,
            [keys.record, keys.job(job.name), keys.jobs, keys.schedule(job.name)],
            [
                token,
                term,
                job.name,
                mode,
                slot,
                following[0] if following else 0,
                missed,
                seg.words,
                self.election.identity,
                seg.version,
                "" if seg.since_ms is None else seg.since_ms,
            ],
            operation=f"claim a slot of job {job.name!r}",
        )
        code, value = int(code), as_text(value)
        if code == NOT_LEADER:
            # Our term is over though our clock had not noticed yet: act as a
            # standby from now on. The claim wrote nothing.
            log.warning("scheduler: claim of %s refused: term %d is over", job.name, term)
            self._term = None
            return code
        if code == ALREADY_CLAIMED:
            self._last[job.name] = int(value)
            return code
        if code == STALE_SCHEDULE:
            log.info(
                "job %s: slot %s of schedule version %d refused (version %s is the newest): "
                "reading the edits again",
                job.name,
                slot_when(slot),
                seg.version,
                value,
            )
            self._read_edits([job])
            return code
        self._last[job.name] = slot
        if code == PAUSED:
            log.info(
                "job %s: slot %s skipped: the job is paused (%d slot(s) in all)",
                job.name,
                slot_when(slot),
                missed + 1,
            )
            if observers:  # as periodic/claim.lua counts them in `missed`
                observe(
                    "periodic.missed", election=self.election.name, job=job.name, slots=missed + 1
                )
            return code
        if missed and observers:
            observe("periodic.missed", election=self.election.name, job=job.name, slots=missed)
        if missed:
            log.info(
                "job %s: %d slot(s) %s (misfire=%s)",
                job.name,
                missed,
                "dropped" if mode == "skip" or job.misfire != "coalesce" else "coalesced",
                job.misfire,
            )
        if mode != "skip":
            self._start(seg.job, value, slot, term, params=seg.params)
        return code

    # -- "run now" requests ----------------------------------------------------------

    def _tick_requests(self, term: int, token: str) -> None:
        """Read the pending requests (at most every request_interval) and claim those we can run."""
        now = time.monotonic()
        if now < self._next_request_read:
            return
        self._next_request_read = now + self.request_interval
        client = self.election.client
        raw, self._prefetched_requests = self._prefetched_requests, None
        if raw is None:
            with unavailable_as_ours(client, "read run requests"):
                raw = client.hgetall(self.election.keys.requests)
        if not raw:
            self._ignored_requests.clear()
            return
        requests = [decode_request(as_text(k), v) for k, v in raw.items()]
        self._ignored_requests &= {r.id for r in requests if r is not None}
        for request in sorted(
            (r for r in requests if r is not None), key=lambda r: (r.requested_ms, r.id)
        ):
            job = self._by_name.get(request.job)
            if job is None:
                if request.id not in self._ignored_requests:
                    self._ignored_requests.add(request.id)
                    log.warning(
                        "scheduler: run request %s is for job %s, which this leader does not have; "
                        "left to another leader or to expire",
                        request.id,
                        request.job,
                    )
                continue
            if not job.overlap and self._busy(job):
                # Stays pending; the run's end sets `wakeup` and lets the next tick read again.
                continue
            if not self._take(job, request, term, token):
                return

    def _take(self, job: Job, request: RunRequest, term: int, token: str) -> bool:
        """Claim one request with periodic/take_request.lua; start its run. False if our term is
        over."""
        keys = self.election.keys
        current = self._timeline(job).current
        code, run_id = _TAKE_REQUEST(
            self.election.client,
            [keys.record, keys.requests, keys.job(job.name), keys.jobs],
            [token, term, request.id, request.job, current.words, self.election.identity],
            operation=f"claim run request {request.id!r} of job {job.name!r}",
        )
        code = int(code)
        if code == NOT_LEADER:
            log.warning(
                "scheduler: claim of run request %s refused: term %d is over", request.id, term
            )
            self._term = None
            return False
        if code == REQUEST_EXPIRED:
            log.warning(
                "job %s: run request %s expired before a leader claimed it", job.name, request.id
            )
        elif code == CLAIMED:
            log.info(
                "job %s: running request %s%s (asked by %s)",
                job.name,
                request.id,
                "" if request.slot_ms is None else f" for slot {slot_when(request.slot_ms)}",
                request.by,
            )
            self._start(
                current.job,
                as_text(run_id),
                request.slot_ms,
                term,
                request.id,
                params=current.params,
            )
        return True  # REQUEST_GONE: another term claimed it, or it was cancelled

    # -- runs -------------------------------------------------------------------------

    def run_now(
        self, job: Job, timeout: float | None = None, *, slot_ms: int | None = None
    ) -> Run | None:
        """Run ``job`` once now, outside its schedule, if we lead; wait for it.

        ``slot_ms`` (ms since the epoch) is the slot the run is for, as the
        job sees it in ``current_job()`` (None: no slot). Returns the
        finished Run (or still running after ``timeout`` seconds), or None if
        we do not lead. ``last_slot`` is not touched.
        """
        fence = self.election.fence()
        if fence is None:
            return None
        term, token = fence
        keys = self.election.keys
        current = self._timeline(job).current  # its arguments, if an edit set some
        code, run_id = _CLAIM(
            self.election.client,
            [keys.record, keys.job(job.name), keys.jobs, keys.schedule(job.name)],
            [
                token,
                term,
                job.name,
                "adhoc",
                0,
                0,
                0,
                current.words,
                self.election.identity,
                current.version,
                "",
            ],
            operation=f"claim an ad-hoc run of job {job.name!r}",
        )
        if int(code) != CLAIMED:
            return None
        run = self._start(current.job, as_text(run_id), slot_ms, term, params=current.params)
        end = None if timeout is None else time.monotonic() + timeout
        limit = run.job.timeout
        while True:  # waiting, and reporting the job's own timeout as the scheduled runs do
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                break
            chunk = left
            if limit and not run.timed_out:
                due = max(0.0, run.started + limit - time.monotonic())
                chunk = due if chunk is None else min(chunk, due)
            if run.done.wait(chunk):
                break
            if limit and not run.timed_out and time.monotonic() - run.started >= limit:
                self._check_timeouts()
        return run

    def _start(
        self,
        job: Job,
        run_id: str,
        slot: int | None,
        term: int,
        request_id: str | None = None,
        *,
        params: dict[str, Any] | None = None,
    ) -> Run:
        run = Run(job, run_id, slot, term, time.monotonic(), request_id, params=dict(params or {}))
        with self._runs_lock:
            self._runs.append(run)
        # A daemon thread per run, not a ThreadPoolExecutor: the interpreter
        # joins executor threads at exit, so one hung job would keep a stopped
        # leader from exiting after its shutdown timeout.
        threading.Thread(
            target=self._execute, args=(run,), name=f"redcoord-job:{job.name}", daemon=True
        ).start()
        return run

    def _execute(self, run: Run) -> None:
        job = run.job
        context = JobContext(
            job.name,
            run.slot_ms,
            run.term,
            self.election.identity,
            lambda: self.election.term == run.term,
        )
        _set_current_job(context)
        hooks = runtime.job_hooks()  # Django: close_old_connections, before and after
        error, exc_info = "", None
        try:
            for hook in hooks:
                hook()
            if job.is_task:
                job.func.enqueue(**run.params)
            else:
                job.func(**run.params)
            outcome = "ok"
        except BaseException as exc:  # a job's failure is recorded, never fatal to the leader
            outcome, error, exc_info = "error", f"{type(exc).__name__}: {exc}"[:_MAX_ERROR], exc
        finally:
            for hook in hooks:
                try:
                    hook()
                except Exception:  # noqa: BLE001 - the job's outcome is recorded below
                    log.exception("job %s: a hook after the run failed", job.name)
            _set_current_job(None)
        run.duration = time.monotonic() - run.started
        if run.timed_out:
            error = (
                f"timed out after {job.timeout:g} s; ended after {run.duration:.3f} s"
                + (f" with {error}" if error else " without error")
            )[:_MAX_ERROR]
            outcome = "timeout"
        run.outcome, run.error = outcome, error
        if observers:
            observe(
                "periodic.run",
                election=self.election.name,
                job=job.name,
                outcome=outcome,
                duration=run.duration,
            )
        level = logging.INFO if outcome == "ok" else logging.ERROR
        log.log(
            level,
            "job %s slot %s term %d: %s in %.3f s%s",
            job.name,
            _slot_text(run),
            run.term,
            outcome,
            run.duration,
            f" ({error})" if error else "",
            exc_info=exc_info,
        )
        self._finish(run, outcome, error, final=True)
        with self._runs_lock:
            self._runs.remove(run)
        self._next_request_read = 0.0  # a request may have waited for this run to end
        run.done.set()
        self.wakeup.set()

    def _finish(self, run: Run, outcome: str, error: str, *, final: bool) -> None:
        """Record a run's outcome; one Redis did not take is kept and made again at each tick
        until it is (:meth:`record_late`): else the job would show the run as still running (and
        without its outcome) until its next run."""
        try:
            self._write_outcome(run, outcome, error, final)
        except CoordinationUnavailable as exc:
            with self._unrecorded_lock:
                if run.run_id in self._unrecorded or len(self._unrecorded) < MAX_UNRECORDED:
                    self._unrecorded[run.run_id] = (run, outcome, error, final)
                    again = "; recorded again once Redis answers"
                else:
                    again = f" (and {MAX_UNRECORDED} others wait already: this one is dropped)"
            log.warning("job %s: outcome %s not recorded: %s%s", run.job.name, outcome, exc, again)

    def _write_outcome(self, run: Run, outcome: str, error: str, final: bool) -> None:
        _FINISH(
            self.election.client,
            [self.election.keys.job(run.job.name)],
            [run.run_id, outcome, error, int(run.duration * 1000), "1" if final else "0"],
            operation=f"record the outcome of job {run.job.name!r}",
        )

    def record_late(self) -> int:
        """Make again the outcome writes Redis did not take; returns how many still wait.

        The write is safe to make twice: it changes nothing once the run's outcome is
        recorded, nor once a newer run of the job was claimed. The first that fails again
        ends this try (Redis still does not answer)."""
        with self._unrecorded_lock:
            late = list(self._unrecorded.values())
        for run, outcome, error, final in late:
            try:
                self._write_outcome(run, outcome, error, final)
            except CoordinationUnavailable:
                break
            with self._unrecorded_lock:
                if self._unrecorded.get(run.run_id, (None,))[0] is run:
                    del self._unrecorded[run.run_id]
            log.info("job %s: outcome %s recorded late", run.job.name, outcome)
        with self._unrecorded_lock:
            return len(self._unrecorded)

    def _busy(self, job: Job) -> bool:
        with self._runs_lock:
            return any(run.job.name == job.name for run in self._runs)  # a version's Job is a copy

    def _check_timeouts(self) -> None:
        """Report runs past their timeout once; they still count as running."""
        now = time.monotonic()
        with self._runs_lock:
            late = [
                r
                for r in self._runs
                if r.job.timeout and not r.timed_out and now - r.started >= r.job.timeout
            ]
            for run in late:
                run.timed_out = True
        for run in late:
            run.duration = now - run.started
            log.error(
                "job %s slot %s term %d: timeout after %g s, still running",
                run.job.name,
                _slot_text(run),
                run.term,
                run.job.timeout,
            )
            self._finish(
                run,
                "timeout",
                f"still running after its timeout of {run.job.timeout:g} s",
                final=False,
            )

    def _until_timeout(self, wait: float) -> float:
        now = time.monotonic()
        with self._runs_lock:
            for run in self._runs:
                if run.job.timeout and not run.timed_out:
                    wait = min(wait, max(0.0, run.started + run.job.timeout - now))
        return wait

    def running(self) -> list[Run]:
        """Runs not finished yet (including timed-out ones)."""
        with self._runs_lock:
            return list(self._runs)

    def wait_idle(self, timeout: float, abort: threading.Event | None = None) -> list[Run]:
        """Wait up to ``timeout`` seconds for running jobs to end; return those still running."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.running()
            remaining = deadline - time.monotonic()
            if not left or remaining <= 0 or (abort is not None and abort.is_set()):
                return left
            left[0].done.wait(min(remaining, 0.1))


def slot_when(slot_ms: int) -> str:
    """A slot (ms since the epoch) as people read it in a log: ``2026-11-26T18:00:00Z`` (ms kept
    if any)."""
    seconds, ms = divmod(int(slot_ms), 1000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{text}.{ms:03d}Z" if ms else f"{text}Z"


def _slot_text(run: Run) -> str:
    slot = "ad-hoc" if run.slot_ms is None else slot_when(run.slot_ms)
    return slot if run.request_id is None else f"{slot} (request {run.request_id})"


def read_job_states(
    election: LeaderElection, also: Iterable[str] = ()
) -> dict[str, dict[str, Any]]:
    """State of every job with state in Redis, plus the jobs named in ``also`` (two round trips).

    Values are decoded: times (ms since the epoch), durations (ms) and counts
    as int, other fields as str. A job without state maps to ``{}``. A
    paused job has ``paused`` (when it was paused, ms since the epoch).
    """
    client, keys = election.client, election.keys
    with unavailable_as_ours(client, "read periodic job state"):
        listed = sorted({as_text(m) for m in client.smembers(keys.jobs)} | set(also))
        pipe = client.pipeline(transaction=False)
        for name in listed:
            pipe.hgetall(keys.job(name))
        values = pipe.execute()
    numeric = {
        "last_slot",
        "next_due",
        "last_start",
        "last_end",
        "duration",
        "runs",
        "failures",
        "missed",
        "running_since",
        "running_term",
        "paused",
        "paused_slots",
        "consecutive_failures",
        "last_ok",
    }
    states = {}
    for name, raw in zip(listed, values, strict=True):
        decoded = {as_text(k): as_text(v) for k, v in raw.items()}
        states[name] = {
            k: int(v) if k in numeric and v.lstrip("-").isdigit() else v for k, v in decoded.items()
        }
    return states
