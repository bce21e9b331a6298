"""``manage.py run_leader``: elect one leader among the processes running it; the leader runs the
@periodic jobs.

Run it in several places for redundancy. Every process campaigns; the leader
claims each due slot of each job under its term (``periodic/claim.lua``) and runs
it in a worker thread; standbys wait on Redis (BLPOP) to take over. On
SIGTERM/SIGINT the process stops claiming, waits for running jobs (up to
``REDCOORD["LEADER_SHUTDOWN_TIMEOUT"]``), resigns so a standby takes over at
once, and exits 0.

Options:
  --list                  the jobs, their schedules, next due times and last outcomes
  --run JOB [--slot TIME] run one job now, once, in this process, if it can lead (ad hoc:
                          the schedule is not touched); --slot TIME redoes that slot
  --request JOB [--slot TIME] [--expires SECONDS]
                          ask the current leader to run JOB once (it need not stop)
  --pause JOB / --resume JOB   skip JOB's slots until resumed / run them again
  --identity NAME         how this process is shown to others (default host:pid)
  --lease/--renew-deadline/--retry-period SECONDS   override the LEADER_* settings
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import discovery
from ...contrib.metrics import add_metrics_arguments, serve_metrics_for
from ...core import (
    DEFAULT,
    DEFAULT_ELECTION,
    DEFAULT_REQUEST_TTL,
    ElectionDied,
    Job,
    LeaderElection,
    PeriodicServer,
    RedcoordError,
    Scheduler,
    Timeline,
    finite_number,
    pause_job,
    pending_requests,
    read_job_states,
    read_versions,
    request_run,
    resume_job,
)
from ...logs import add_log_format_argument, log_to_console
from .. import seconds, usage_error

log = logging.getLogger("django_redcoord.leader")

#: How often, and how far apart (s), ``--run`` writes again an outcome Redis did not take.
RECORD_TRIES, RECORD_PAUSE = 5, 1.0
_ACTIONS = ("list", "run", "request", "pause", "resume")  # at most one per invocation


class Command(BaseCommand):
    help = (
        "Elect one leader among the processes running this command; the leader runs the "
        "@periodic jobs. Stops cleanly on SIGTERM/SIGINT (a standby takes over at once)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--list",
            action="store_true",
            help="list the jobs, schedules, next due times and last outcomes, then exit",
        )
        parser.add_argument(
            "--run",
            metavar="JOB",
            help="run JOB once now if this process can become leader, then exit",
        )
        parser.add_argument(
            "--request",
            metavar="JOB",
            help="ask the current leader to run JOB once soon (queued in Redis), then exit",
        )
        parser.add_argument(
            "--slot",
            metavar="TIME",
            help="with --run/--request: the slot to redo, ISO 8601 with an offset "
            "(2024-05-01T03:00:00+02:00) or ms since the epoch",
        )
        parser.add_argument(
            "--expires",
            type=seconds,
            metavar="SECONDS",
            help=f"with --request: drop the request if no leader claims it within SECONDS "
            f"(default {DEFAULT_REQUEST_TTL:g})",
        )
        parser.add_argument(
            "--pause",
            metavar="JOB",
            help="skip JOB's slots until --resume (runs going on continue)",
        )
        parser.add_argument(
            "--resume", metavar="JOB", help="run a paused JOB again from its next slot"
        )
        parser.add_argument(
            "--identity", help="how this process is shown to others (default host:pid)"
        )
        parser.add_argument(
            "--lease", type=seconds, metavar="SECONDS", help="override REDCOORD['LEADER_LEASE']"
        )
        parser.add_argument(
            "--renew-deadline",
            type=seconds,
            metavar="SECONDS",
            help="override REDCOORD['LEADER_RENEW_DEADLINE']",
        )
        parser.add_argument(
            "--retry-period",
            type=seconds,
            metavar="SECONDS",
            help="override REDCOORD['LEADER_RETRY_PERIOD']",
        )
        add_log_format_argument(parser)
        add_metrics_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        # (an action given an empty JOB is still that action: it names no job, and says so,
        # rather than starting a leader)
        given = {action for action in _ACTIONS if options.get(action) not in (None, False)}
        chosen = [f"--{action}" for action in _ACTIONS if action in given]
        if len(chosen) > 1:
            raise usage_error(f"{chosen[0]} and {chosen[1]} cannot be combined")
        if options.get("slot") is not None and not given & {"run", "request"}:
            raise usage_error("--slot goes with --run JOB or --request JOB")
        if options.get("expires") is not None and "request" not in given:
            raise usage_error("--expires goes with --request JOB")
        try:
            log_to_console(options["verbosity"], options["log_format"])
            # (not under the ValueError below: a jobs module that raises one is no usage error)
            jobs = discovery.autodiscover()
        except RedcoordError as exc:
            raise CommandError(str(exc)) from exc
        try:
            wakeup = threading.Event()
            election = self._election(options, on_elected=lambda term: wakeup.set())
            if options["list"]:
                self._list(election, jobs)
            elif "run" in given:
                job = _registered(jobs, options["run"])
                self._run_one(
                    election, jobs, job.name, _slot_ms(job, options.get("slot"), election)
                )
            elif "request" in given:
                job = _registered(jobs, options["request"])
                self._request(
                    election,
                    job,
                    _slot_ms(job, options.get("slot"), election),
                    options.get("expires"),
                )
            elif given & {"pause", "resume"}:
                pause = "pause" in given
                self._pause(
                    election,
                    _registered(jobs, options["pause"] if pause else options["resume"]),
                    pause=pause,
                )
            else:
                metrics = serve_metrics_for(options)
                try:
                    self._serve(election, jobs, wakeup)
                finally:
                    if metrics is not None:
                        metrics.shutdown()
        except ValueError as exc:  # (an option's value: --expires, a job's name...)
            raise usage_error(str(exc)) from exc
        except RedcoordError as exc:
            raise CommandError(str(exc)) from exc

    def _election(self, options: dict[str, Any], **callbacks: Any) -> LeaderElection:
        def pick(key: str) -> Any:
            return DEFAULT if options.get(key) is None else options[key]

        if options.get("identity") is not None and not options["identity"].strip():
            raise usage_error("--identity must not be empty")
        try:
            return LeaderElection(
                DEFAULT_ELECTION,
                lease=pick("lease"),
                renew_deadline=pick("renew_deadline"),
                retry_period=pick("retry_period"),
                identity=options.get("identity"),
                **callbacks,
            )
        except (TypeError, ValueError) as exc:
            raise usage_error(f"bad leader timing or identity: {exc}") from exc

    # -- serve: campaign, and run the jobs while leading ---------------------------------

    def _serve(
        self, election: LeaderElection, jobs: dict[str, Job], wakeup: threading.Event
    ) -> None:
        """The core's serve loop (core/periodic/server.py), stopped by SIGTERM/SIGINT (a second
        one stops waiting for running jobs)."""
        server = PeriodicServer(election, jobs.values(), wakeup=wakeup)
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, lambda signum, frame: server.stop())
        try:
            server.run()
        except ElectionDied as exc:
            raise CommandError(str(exc)) from exc
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    # -- --run JOB -----------------------------------------------------------------------

    def _run_one(
        self,
        election: LeaderElection,
        jobs: dict[str, Job],
        name: str,
        slot_ms: int | None = None,
    ) -> None:
        job = _registered(jobs, name)
        if not election.campaign():
            current = election.current()
            holder = (
                f"{current.identity} leads (term {current.term})"
                if current
                else "another process leads"
            )
            raise CommandError(
                f"cannot run {name!r}: {holder}. --run only runs a job where this process can be "
                f"the leader; use --request {name} to have the leader run it, or stop the running "
                "leaders"
            )
        election.start()  # keep renewing while the job runs
        scheduler = Scheduler(election, [job])
        try:
            run = scheduler.run_now(job, slot_ms=slot_ms)
            # An outcome Redis did not take is made again here (no later tick will), for up to
            # a few seconds: else --list shows the run as running until the job's next one.
            for attempt in range(RECORD_TRIES):
                if not scheduler.record_late():
                    break
                if attempt == RECORD_TRIES - 1:
                    log.warning(
                        "job %s: its outcome could not be recorded: --list shows the run as "
                        "running until the job's next run",
                        name,
                    )
                else:
                    time.sleep(RECORD_PAUSE)
        finally:
            election.resign()
        if run is None:
            raise CommandError(
                f"cannot run {name!r}: leadership was lost before the run was claimed"
            )
        slot = "" if slot_ms is None else f", slot {_when(slot_ms)}"
        self.stdout.write(
            f"job {name}: {run.outcome} in {run.duration:.3f} s (term {run.term}{slot})"
        )
        if run.outcome != "ok":
            raise CommandError(f"job {name!r} failed: {run.error}")

    # -- --request JOB, --pause JOB, --resume JOB ------------------------------------------

    def _request(
        self,
        election: LeaderElection,
        job: Job,
        slot_ms: int | None,
        expires: float | None,
    ) -> None:
        expires = DEFAULT_REQUEST_TTL if expires is None else expires
        request_id = request_run(
            election,
            job.name,
            None if slot_ms is None else slot_ms / 1000,
            expires=expires,
            by=election.identity,
        )
        what = f"a run of {job.name}" + ("" if slot_ms is None else f" for slot {_when(slot_ms)}")
        current = election.current()
        if current is None:
            who = (
                f"nobody leads now: the first leader within {expires:g} s runs it, else it is "
                "dropped"
            )
        else:
            who = f"{current.identity} (term {current.term}) runs it at its next check"
        self.stdout.write(
            f"request {request_id}: {what} is queued; {who}. `run_leader --list` shows the outcome."
        )

    def _pause(self, election: LeaderElection, job: Job, *, pause: bool) -> None:
        if pause:
            done = pause_job(election, job.name)
            self.stdout.write(
                f"job {job.name}: paused; its slots are skipped until `run_leader --resume "
                f"{job.name}`"
                if done
                else f"job {job.name}: already paused"
            )
        else:
            done = resume_job(election, job.name)
            self.stdout.write(
                f"job {job.name}: resumed; it runs again from its next slot"
                if done
                else f"job {job.name}: was not paused"
            )

    # -- --list --------------------------------------------------------------------------

    def _list(self, election: LeaderElection, jobs: dict[str, Job]) -> None:
        current = election.current()
        if current is None:
            self.stdout.write("leader: none")
        else:
            self.stdout.write(
                f"leader: {current.identity} (term {current.term}, since "
                f"{_when(current.since * 1000)}, record expires in {current.expires_in:.1f} s)"
            )
        states = read_job_states(election, also=jobs)
        now_ms = int(time.time() * 1000)
        rows = [
            ("JOB", "SCHEDULE", "MISFIRE", "NEXT DUE", "LAST SLOT", "OUTCOME", "RUNS", "RUNNING")
        ]
        for name in sorted(states):
            state, job = states[name], jobs.get(name)
            if job is not None:
                job = _timeline(election, job).current.job  # an edit's schedule, if one is in force
                last = state.get("last_slot")
                next_due = job.due_ms(job.next_slot(last if isinstance(last, int) else now_ms))
                schedule, misfire = job.schedule, job.misfire

            else:
                next_due, schedule, misfire = (
                    None,
                    f"{state.get('schedule', '?')} (not registered)",
                    "-",
                )
            outcome = state.get("outcome", "-")
            if state.get("error"):
                outcome = f"{outcome}: {state['error'][:60]}"
            rows.append(
                (
                    name,
                    schedule,
                    misfire,
                    "paused" if "paused" in state else _when(next_due),
                    _when(state.get("last_slot")),
                    outcome,
                    str(state.get("runs", 0)),
                    "yes" if state.get("running") else "-",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write(
                "  ".join(
                    cell.ljust(width) for cell, width in zip(row, widths, strict=True)
                ).rstrip()
            )
        if len(rows) == 1:
            self.stdout.write(
                "(no periodic jobs: add @periodic functions to <app>/jobs.py or REDCOORD['JOBS'])"
            )
        requests = pending_requests(election)
        if requests:
            self.stdout.write(f"pending run requests ({len(requests)}):")
            for r in requests:
                slot = "" if r.slot_ms is None else f" for slot {_when(r.slot_ms)}"
                self.stdout.write(
                    f"  {r.id}  {r.job}{slot}, asked by {r.by} at {_when(r.requested_ms)}, "
                    f"expires {_when(r.expires_ms)}"
                )


def _registered(jobs: dict[str, Job], name: str) -> Job:
    job = jobs.get(name)
    if job is None:
        raise usage_error(
            f"no periodic job named {name!r}; registered jobs: {', '.join(sorted(jobs)) or 'none'}"
        )
    return job


def _timeline(election: LeaderElection, job: Job) -> Any:
    """``job``'s slots across the schedule versions kept in Redis (an edit is in force from when
    it was stored)."""
    return Timeline(job, read_versions(election, job.name))


def _slot_ms(job: Job, text: str | None, election: LeaderElection) -> int | None:
    """--slot TIME -> the slot of ``job`` it names (ms since the epoch), by the schedule version
    in force then; CommandError if it is none."""
    if text is None:
        return None
    text = text.strip()
    if text.isascii() and text.isdigit():
        slot = int(text)
    else:
        try:  # Python 3.10's fromisoformat does not read "Z"
            moment = datetime.fromisoformat(
                text[:-1] + "+00:00" if text[-1:] in "Zz" and text else text
            )
        except ValueError:
            raise usage_error(
                f"--slot {text!r} is not a time: give ISO 8601 with an offset "
                "(2024-05-01T03:00:00+02:00, or ...Z for UTC) or milliseconds since the epoch "
                "(1714525200000)"
            ) from None
        if moment.utcoffset() is None:
            raise usage_error(
                f"--slot {text!r} has no UTC offset: add one, e.g. {text}+00:00 or {text}Z"
            )
        slot = round(moment.timestamp() * 1000)
    if slot < 0 or slot > 253402300799999:  # (the epoch to the end of year 9999)
        raise usage_error(
            f"--slot {text!r} is out of range: give a time from 1970-01-01T00:00Z to "
            "9999-12-31T23:59:59Z (or milliseconds since the epoch in that range)"
        )
    if slot > time.time() * 1000:
        raise usage_error(
            f"--slot {text!r} ({_when(slot)}) is in the future: only past slots can be redone"
        )
    then = _timeline(election, job).segment_of(slot).job  # (the schedule in force at that time)
    if then.previous_slot(slot) != slot:
        raise usage_error(
            f"--slot {text!r} ({_when(slot)}) is not a slot of job {job.name!r} ({then.schedule}); "
            f"the nearest are {_when(then.previous_slot(slot))} and {_when(then.next_slot(slot))}"
        )
    return slot


def _when(ms: Any) -> str:
    """ms since the epoch -> local time in Django's TIME_ZONE, or '-'."""
    if not finite_number(ms):
        return "-"
    from django.utils import timezone

    return datetime.fromtimestamp(ms / 1000, timezone.get_default_timezone()).strftime(
        "%Y-%m-%d %H:%M:%S"
    )
