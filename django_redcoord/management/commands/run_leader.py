"""``manage.py run_leader``: elect one leader among the processes running it; the leader runs the @periodic jobs.

Run it in several places for redundancy. Every process campaigns; the leader
claims each due slot of each job under its term (``periodic/claim.lua``) and runs
it in a worker thread; standbys wait on Redis (BLPOP) to take over. On
SIGTERM/SIGINT the process stops claiming, waits for running jobs (up to
``REDCOORD["LEADER_SHUTDOWN_TIMEOUT"]``), resigns so a standby takes over at
once, and exits 0.

Options:
  --list                  the jobs, their schedules, next due times and last outcomes
  --run JOB               run one job now, once, if this process can lead (ad hoc:
                          the schedule is not touched)
  --identity NAME         how this process is shown to others (default host:pid)
  --lease/--renew-deadline/--retry-period SECONDS   override the LEADER_* settings
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import conf, discovery
from ...core.exceptions import CoordinationUnavailable, RedcoordError
from ...core.leader.election import DEFAULT_ELECTION, LeaderElection
from ...core.periodic import jobs as schedule
from ...core.periodic.scheduler import Scheduler, read_job_states
from ...core.values import DEFAULT
from ...logs import add_log_format_argument, log_to_console
from ...metrics import add_metrics_arguments, serve_metrics_for

log = logging.getLogger("django_redcoord.leader")

_MAX_SLEEP = 1.0  # seconds: re-tick at least this often (wall-clock jumps, demotion by the clock)


class Command(BaseCommand):
    help = (
        "Elect one leader among the processes running this command; the leader runs the "
        "@periodic jobs. Stops cleanly on SIGTERM/SIGINT (a standby takes over at once)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--list", action="store_true", help="list the jobs, schedules, next due times and last outcomes, then exit")
        parser.add_argument("--run", metavar="JOB", help="run JOB once now if this process can become leader, then exit")
        parser.add_argument("--identity", help="how this process is shown to others (default host:pid)")
        parser.add_argument("--lease", type=float, metavar="SECONDS", help="override REDCOORD['LEADER_LEASE']")
        parser.add_argument("--renew-deadline", type=float, metavar="SECONDS", help="override REDCOORD['LEADER_RENEW_DEADLINE']")
        parser.add_argument("--retry-period", type=float, metavar="SECONDS", help="override REDCOORD['LEADER_RETRY_PERIOD']")
        add_log_format_argument(parser)
        add_metrics_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"] and options["run"]:
            raise CommandError("--list and --run cannot be combined")
        log_to_console(options["verbosity"], options["log_format"])
        try:
            jobs = discovery.autodiscover()
            wakeup = threading.Event()
            election = self._election(options, on_elected=lambda term: wakeup.set())
            if options["list"]:
                self._list(election, jobs)
            elif options["run"]:
                self._run_one(election, jobs, options["run"])
            else:
                metrics = serve_metrics_for(options)
                try:
                    self._serve(election, jobs, wakeup)
                finally:
                    if metrics is not None:
                        metrics.shutdown()
        except (RedcoordError, ValueError) as exc:
            raise CommandError(str(exc)) from exc

    def _election(self, options: dict[str, Any], **callbacks: Any) -> LeaderElection:
        def pick(key: str) -> Any:
            return DEFAULT if options.get(key) is None else options[key]

        if options.get("identity") is not None and not options["identity"].strip():
            raise CommandError("--identity must not be empty")
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
            raise CommandError(f"bad leader timing or identity: {exc}") from exc

    # -- serve: campaign, and run the jobs while leading ---------------------------------

    def _serve(self, election: LeaderElection, jobs: dict[str, schedule.Job], wakeup: threading.Event) -> None:
        stopping, force = threading.Event(), threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            if stopping.is_set():
                force.set()  # a second signal: stop waiting for running jobs
            stopping.set()
            wakeup.set()

        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        scheduler = Scheduler(election, jobs.values(), wakeup=wakeup)
        log.info(
            "run_leader: %s campaigning in election %r (lease %g s, renew deadline %g s, retry %g s) "
            "with %d job(s)", election.identity, election.name, election.lease,
            election.renew_deadline, election.retry_period, len(jobs),
        )  # fmt: skip
        try:
            election.start()
            while not stopping.is_set():
                if not election.running:
                    # The campaign thread rides out outages; it ends only on a
                    # fault no retry mends. Never go on without it (nor exit 0).
                    failure = election.failure
                    raise CommandError(
                        f"run_leader: the election thread died ({type(failure).__name__}: {failure}); "
                        "exiting so that a supervisor restarts this process"
                    )
                wakeup.clear()
                wait = scheduler.tick(time.time())
                wakeup.wait(min(wait, _MAX_SLEEP))
        finally:
            # Stop claiming (the loop is over); keep renewing while running
            # jobs finish, so no standby takes a slot they are still working
            # on; then resign so a standby takes over at once.
            running = scheduler.running()
            timeout = conf.get_config()["LEADER_SHUTDOWN_TIMEOUT"]
            if running:
                log.info("run_leader: stopping; waiting up to %g s for %d running job(s)", timeout, len(running))
            left = scheduler.wait_idle(timeout, abort=force)
            if left:
                log.warning("run_leader: exiting with %d job(s) still running: %s",
                            len(left), ", ".join(run.job.name for run in left))  # fmt: skip
            try:
                election.resign()
            except CoordinationUnavailable as exc:
                log.warning("run_leader: could not resign (the record expires after the lease): %s", exc)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        log.info("run_leader: %s stopped", election.identity)

    # -- --run JOB -----------------------------------------------------------------------

    def _run_one(self, election: LeaderElection, jobs: dict[str, schedule.Job], name: str) -> None:
        job = jobs.get(name)
        if job is None:
            raise CommandError(f"no periodic job named {name!r}; registered jobs: {', '.join(sorted(jobs)) or 'none'}")
        if not election.campaign():
            current = election.current()
            holder = f"{current.identity} leads (term {current.term})" if current else "another process leads"
            raise CommandError(
                f"cannot run {name!r}: {holder}. --run only runs a job where this process can be "
                "the leader; stop the running leaders or wait for the job's schedule"
            )
        election.start()  # keep renewing while the job runs
        try:
            run = Scheduler(election, [job]).run_now(job)
        finally:
            election.resign()
        if run is None:
            raise CommandError(f"cannot run {name!r}: leadership was lost before the run was claimed")
        self.stdout.write(f"job {name}: {run.outcome} in {run.duration:.3f} s (term {run.term})")
        if run.outcome != "ok":
            raise CommandError(f"job {name!r} failed: {run.error}")

    # -- --list --------------------------------------------------------------------------

    def _list(self, election: LeaderElection, jobs: dict[str, schedule.Job]) -> None:
        current = election.current()
        if current is None:
            self.stdout.write("leader: none")
        else:
            self.stdout.write(
                f"leader: {current.identity} (term {current.term}, since {_when(current.since * 1000)}, "
                f"record expires in {current.expires_in:.1f} s)"
            )
        states = read_job_states(election, also=jobs)
        now_ms = int(time.time() * 1000)
        rows = [("JOB", "SCHEDULE", "MISFIRE", "NEXT DUE", "LAST SLOT", "OUTCOME", "RUNS", "RUNNING")]
        for name in sorted(states):
            state, job = states[name], jobs.get(name)
            if job is not None:
                last = state.get("last_slot")
                next_due = job.due_ms(job.next_slot(last if isinstance(last, int) else now_ms))
                schedule, misfire = job.schedule, job.misfire
            else:
                next_due, schedule, misfire = None, f"{state.get('schedule', '?')} (not registered)", "-"
            outcome = state.get("outcome", "-")
            if state.get("error"):
                outcome = f"{outcome}: {state['error'][:60]}"
            rows.append((
                name, schedule, misfire, _when(next_due), _when(state.get("last_slot")), outcome,
                str(state.get("runs", 0)), "yes" if state.get("running") else "-",
            ))  # fmt: skip
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if len(rows) == 1:
            self.stdout.write("(no periodic jobs: add @periodic functions to <app>/jobs.py or REDCOORD['JOBS'])")


def _when(ms: Any) -> str:
    """ms since the epoch -> local time in Django's TIME_ZONE, or '-'."""
    if not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return "-"
    from django.utils import timezone

    return datetime.fromtimestamp(ms / 1000, timezone.get_default_timezone()).strftime("%Y-%m-%d %H:%M:%S")
