"""The leader's serve loop: campaign, and run the periodic jobs while leading.

``manage.py run_leader`` builds a :class:`PeriodicServer` and runs it, as
``manage.py run_worker`` runs a :class:`~django_redcoord.core.queues.worker.Worker`;
a program without Django can do the same::

    server = PeriodicServer(LeaderElection("jobs", on_elected=...), get_jobs().values())
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    server.run()

:meth:`PeriodicServer.stop` is safe from a signal handler (it takes no lock
while the loop runs: see :mod:`django_redcoord.core.stopping`): the first call ends
the loop (running jobs are given ``shutdown_timeout`` to finish while the
lease is still renewed, then the leader resigns so a standby takes over at
once); a second call stops waiting for them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from ..exceptions import CoordinationUnavailable, RedcoordError
from ..leader.election import LeaderElection
from ..runtime import runtime
from ..stopping import StopRelay
from ..values import DEFAULT, check_seconds
from .jobs import Job
from .scheduler import Scheduler

log = logging.getLogger("django_redcoord.leader")

#: Seconds between two ticks at most (wall-clock jumps, a demotion found by the clock).
MAX_SLEEP = 1.0


class ElectionDied(RedcoordError):
    """The campaign thread ended on a fault no retry mends; the server stopped (``failure``)."""

    def __init__(self, message: str, failure: BaseException | None) -> None:
        super().__init__(message)
        self.failure = failure


class PeriodicServer:
    """Campaign in ``election`` and, while leading, run each slot of ``jobs`` once.

    ``wakeup``: an event the election sets when this process is elected (so the
    first tick comes at once); a new one when not given. ``shutdown_timeout``:
    seconds the running jobs are given on stop (default ``LEADER_SHUTDOWN_TIMEOUT``).
    """

    def __init__(
        self,
        election: LeaderElection,
        jobs: Iterable[Job],
        *,
        wakeup: threading.Event | None = None,
        shutdown_timeout: Any = DEFAULT,
    ) -> None:
        self.election = election
        self.jobs = list(jobs)
        self.wakeup = wakeup if wakeup is not None else threading.Event()
        self.shutdown_timeout = (
            float(runtime.config["LEADER_SHUTDOWN_TIMEOUT"])
            if shutdown_timeout is DEFAULT
            else check_seconds(shutdown_timeout, "shutdown_timeout", allow_zero=True)
        )
        self.scheduler = Scheduler(election, self.jobs, wakeup=self.wakeup)
        self._stopping, self._force = threading.Event(), threading.Event()
        self._stop_relay = StopRelay(self._stop_now, "redcoord-leader-stop")

    def stop(self) -> None:
        """End the loop; called again, stop waiting for running jobs. Safe from a signal
        handler: while the loop runs it takes no lock (see core/stopping.py)."""
        self._stop_relay.request()

    def _stop_now(self) -> None:
        if self._stopping.is_set():
            self._force.set()
        self._stopping.set()
        self.wakeup.set()

    def run(self) -> None:
        """Serve until :meth:`stop`; raises :class:`ElectionDied` if the campaign thread died."""
        election, scheduler = self.election, self.scheduler
        log.info(
            "run_leader: %s campaigning in election %r (lease %g s, renew deadline %g s, retry %g "
            "s) with %d job(s)",
            election.identity,
            election.name,
            election.lease,
            election.renew_deadline,
            election.retry_period,
            len(self.jobs),
        )
        self._stop_relay.start()
        try:
            election.start()
            while not self._stopping.is_set():
                if not election.running:
                    # The campaign thread rides out outages; it ends only on a fault no retry
                    # mends. Never go on without it (nor exit 0).
                    failure = election.failure
                    raise ElectionDied(
                        f"run_leader: the election thread died ({type(failure).__name__}: "
                        f"{failure}); exiting so that a supervisor restarts this process",
                        failure,
                    )
                self.wakeup.clear()
                wait = scheduler.tick(time.time())
                self.wakeup.wait(min(wait, MAX_SLEEP))
        finally:
            try:
                self._wind_down()
            finally:
                self._stop_relay.end()
        log.info("run_leader: %s stopped", election.identity)

    def _wind_down(self) -> None:
        """Stop claiming (the loop is over); keep renewing while running jobs finish, so no
        standby takes a slot they are still working on; then resign so a standby takes over at
        once."""
        running = self.scheduler.running()
        if running:
            log.info(
                "run_leader: stopping; waiting up to %g s for %d running job(s)",
                self.shutdown_timeout,
                len(running),
            )
        left = self.scheduler.wait_idle(self.shutdown_timeout, abort=self._force)
        if left:
            log.warning(
                "run_leader: exiting with %d job(s) still running: %s",
                len(left),
                ", ".join(run.job.name for run in left),
            )
        unrecorded = self.scheduler.record_late()  # (a last try for outcomes Redis did not take)
        if unrecorded:
            log.warning(
                "run_leader: exiting with %d job outcome(s) Redis did not take: those runs show "
                "as running until their next run",
                unrecorded,
            )
        try:
            self.election.resign()
        except CoordinationUnavailable as exc:
            log.warning(
                "run_leader: could not resign (the record expires after the lease): %s", exc
            )
