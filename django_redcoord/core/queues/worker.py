"""The worker loop: claim in batches, run a handler, acknowledge, heartbeat, reap.

Concurrency is threads: ``concurrency`` threads in one process, each with its
own consumer (and processing list) per queue. Scale further by running more
worker processes. One more thread beats the heartbeat of every consumer (so a
long job does not make its consumer look dead) and reaps the consumers of
dead workers on every queue served.

Each thread loops: one round trip acknowledges the previous batch and claims
up to ``prefetch`` messages; the handler runs them in order. Prefetch is paced
by how long jobs take: a claim takes only as many messages as the queue's
recent jobs run in about ``BATCH_BUDGET / 2`` (at least one), and once a batch
has run longer than ``BATCH_BUDGET`` its unstarted rest goes back to the front
of the queue with the acknowledgements so far (one round trip), for idle
threads and other workers. Fast jobs keep the whole prefetch per round trip;
slow ones are not held back behind each other in one thread while another is
idle, and a finished grouped job frees its group's slot at once. A handler that
raises gets the message retried with backoff (dead-lettered after the last
attempt); raising :class:`Retry` sets the delay before that retry, and
:class:`DeadLetter` sends the message to the dead-letter list at once.
An idle thread blocks on the queues' wake lists (no polling), waking early
when a delayed message falls due. On a Redis Cluster the wake lists of
queues in different hash slots cannot be named in one ``BLPOP``
(``CROSSSLOT``): there one thread per slot blocks on its slot's lists and
hands what it pops to the idle threads (see :class:`_SlotWakers`).

Stopping (``stop()``, e.g. from SIGTERM): threads finish the job in hand (up
to ``shutdown_timeout``), hand back the prefetched messages they did not start
at once, acknowledge what they finished, and retire their consumers. A job
still running at the timeout is left to the reaper; the unstarted rest of its
batch is handed back first (by the main thread, which also gives back the rest
of any batch that waits behind a job past ``BATCH_BUDGET``).

Faults: every loop survives a Redis that goes away (restart, failover, a
pause longer than the socket timeout) and resumes when it answers. A failed
nack is kept and sent later while the rest of the batch runs. A thread that
dies unexpectedly stops the worker with :class:`WorkerCrashed` (a non-zero
exit for ``run_worker``): it never goes on half-alive, nor exits 0.

Job timeouts (``job_timeout``): a Python thread cannot be stopped, so a job
past its timeout is abandoned, not killed. Its message is failed at once (a
retry with backoff, or a dead letter after its last attempt), the rest of
its thread's batch goes back to the queue, and the worker stops and raises
:class:`WorkerCrashed` (error :class:`JobTimedOut`): the supervisor's restart
of the process is what ends the stuck thread. Whatever that thread does after
its timeout is not acknowledged: it can still have side effects, so the
timeout bounds how long a message waits, not how long code runs.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import CoordinationUnavailable, RedcoordError
from ..keys import MAX_NAME_LENGTH, key_slot, validate_name
from ..observe import observe, observers
from ..stopping import StopRelay
from ..transport.commands import MIN_BLOCK, blpop, execute_pipeline
from ..transport.scripts import Script
from ..values import check_count, check_seconds
from . import messages as _messages
from .consumer import Consumer
from .messages import MAX_BATCH, Message, queue_defaults
from .queue import Queue, sample_history

log = logging.getLogger("django_redcoord.queues")

#: Seconds the unstarted rest of a claimed batch may wait behind the jobs ahead of it in its
#: thread before it goes back to the queue; a claim is sized to about half of it.
BATCH_BUDGET = 0.2
#: Seconds the worker's main thread waits before it tries to give back a batch's rest again after
#: Redis did not answer one.
GIVE_BACK_RETRY = 1.0
#: Seconds a --burst thread with nothing to claim blocks for a give-back before it looks whether
#: the worker's other threads are still running a batch.
BURST_RECHECK = 0.25
#: Weight of the newest job in a queue's running mean of job durations (which sizes claims).
PACE_WEIGHT = 0.3

_BEAT = Script("queues/worker_beat")
_QUEUE_BEAT = Script("queues/heartbeat")
_GROUPS_PRUNE = Script("queues/groups_prune")
#: Idle group fields (a rate's remembered start, past) each heartbeat samples per queue.
GROUPS_PRUNE_SAMPLE = 50


class DeadLetter(Exception):
    """Raised by a handler: this message can never succeed; dead-letter it now."""


class Cancelled(Exception):
    """Raised by a handler: this message was cancelled while it ran (its outcome is kept
    elsewhere, e.g. a task's result record); acknowledge it: it is never retried."""


class Retry(Exception):
    """Raised by a handler: this delivery failed; retry after ``delay`` seconds.

    The attempt counts: after the message's last attempt it is dead-lettered
    all the same. ``str(exc)`` is the error recorded with the message.
    """

    def __init__(self, error: str, *, delay: float) -> None:
        super().__init__(error)
        self.delay = check_seconds(delay, "retry delay", allow_zero=True)


class JobTimedOut(RedcoordError):
    """A job ran past its timeout; its thread was abandoned and the worker stopped."""


class WorkerCrashed(RedcoordError):
    """A thread of the worker died unexpectedly; the worker stopped (``thread``, ``error``)."""

    def __init__(
        self, message: str, *, thread: str = "", error: BaseException | None = None
    ) -> None:
        super().__init__(message)
        self.thread = thread
        self.error = error


@dataclass
class Stats:
    ok: int = 0
    failed: int = 0
    dead: int = 0
    cancelled: int = 0
    handed_back: int = 0
    #: deliveries finished (ok, failed or dead) per queue name, for the admin's charts
    finished: dict[str, int] = field(default_factory=dict, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def summary(self) -> str:
        """``3 ok, 1 failed, 0 dead-lettered`` (and the handed back, if any): the stop line's
        words."""
        handed = f", {self.handed_back} handed back" if self.handed_back else ""
        cancelled = f", {self.cancelled} cancelled" if self.cancelled else ""
        return f"{self.ok} ok, {self.failed} failed, {self.dead} dead-lettered{cancelled}{handed}"

    def add(self, outcome: str, queue: str = "") -> None:
        with self.lock:
            setattr(self, outcome, getattr(self, outcome) + 1)
            if queue:
                self.finished[queue] = self.finished.get(queue, 0) + 1


Handler = Callable[[Message], Any]
JobTimeout = Callable[[Message], "float | None"]


@dataclass
class _Job:
    """A running job, as the worker's watchdog sees it (deadline inf: no timeout, not cut short)."""

    consumer: Consumer
    message: Message
    rest: list[Message]  # the batch after it, not started yet (emptied when given back)
    timeout: float
    deadline: float  # time.monotonic()
    reason: str = ""  # why it was cut short (see Worker.cut_short), else a plain timeout
    begun: float = 0.0  # time.monotonic() when its batch began
    # set once the main thread's give-back of its rest (see Worker._give_back_waiting) is decided
    giving: threading.Event | None = None
    rest_given: bool = False  # that give-back went through: its thread starts none of the rest


class _Outage:
    """Backoff and log lines of one loop while Redis is away (no flood of lines)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.since: float | None = None
        self.failures = 0
        self.logged = 0.0

    def failed(self, exc: BaseException) -> float:
        """Record a failure; return how long to wait before the next try."""
        now = time.monotonic()
        if self.since is None:
            self.since, self.logged = now, now
            log.error("%s: Redis unavailable, retrying: %s", self.what, exc)
        elif now - self.logged >= 10.0:
            self.logged = now
            log.error(
                "%s: Redis still unavailable after %.0f s: %s", self.what, now - self.since, exc
            )
        self.failures += 1
        return min(2.0, 0.05 * 2 ** min(self.failures, 6)) * random.uniform(0.5, 1.0)

    def ok(self) -> None:
        if self.since is not None:
            log.warning(
                "%s: Redis answers again after %.1f s", self.what, time.monotonic() - self.since
            )
        self.since, self.failures = None, 0


class _SlotWakers:
    """Idle waits over several hash slots of a Redis Cluster (one ``BLPOP`` cannot span slots).

    One thread per slot blocks on that slot's wake lists, in chunks of at most
    1 s, and turns each token it pops into a permit for the idle worker
    threads (a counter capped at the thread count, so a token popped while
    every thread is busy costs one empty claim round at most, never a lost
    wake-up: the threads claim from every queue before they idle again).
    """

    def __init__(self, groups: list[list[str]], concurrency: int) -> None:
        self.groups = groups
        self.limit = concurrency
        self.permits = 0
        self.cond = threading.Condition()

    def woken(self) -> None:
        with self.cond:
            self.permits = min(self.limit, self.permits + 1)
            self.cond.notify()

    def wait(self, timeout: float) -> bool:
        """Take a permit, waiting up to ``timeout`` seconds; True if one was taken."""
        with self.cond:
            if self.cond.wait_for(lambda: self.permits > 0, timeout):
                self.permits -= 1
                return True
            return False


def wake_groups(queues: Sequence[Queue], *, cluster: bool) -> list[list[str]]:
    """The queues' wake lists, grouped so that each group can be one ``BLPOP``.

    One group on one server; on a Redis Cluster one group per hash slot (queues
    whose names share a ``{tag}`` share a slot), in the order of the queues.
    """
    keys = [q.keys.wake for q in queues]
    if not cluster:
        return [keys]
    groups: dict[int, list[str]] = {}
    for key in keys:
        groups.setdefault(key_slot(key), []).append(key)
    return list(groups.values())


class Worker:
    """Consume ``queues`` with ``handler`` until stopped (or drained, with ``burst``).

    Args:
        queues: the queues, served in the order given (a thread drains the
            first queue's ready messages before claiming from the next).
        handler: ``handler(message)``; its return value is ignored.
        concurrency: threads; prefetch: messages claimed per round trip per
            thread; burst: exit once every queue has nothing ready.
        write_behind: optional object holding writes back for a batch:
            ``has_pending()`` and ``flush()`` (called before each claim, so
            they land ahead of the acknowledgements the claim carries), and
            optionally ``claimed(messages)`` (called with each claimed batch
            before any of it runs; it must not raise), ``close()`` when the worker stops and
            ``settle_dead(queue, entries)`` to mark the records of messages
            dead-lettered by a reaper (the Tasks runner uses these).
        job_timeout: seconds a job may run, or ``job_timeout(message) ->
            seconds | None``; default: the handler's ``job_timeout`` method
            if it has one, else none. See the module for what a timeout does.
            A handler's optional ``timed_out(message, seconds)`` is called
            when one of its jobs times out; it may raise :class:`Retry` or
            :class:`DeadLetter` to decide the message's fate as the handler
            would. A handler's optional ``attach(worker)`` is called as the
            worker starts (the Tasks runner keeps it to :meth:`cut_short` a
            cancelled job); a handler that raises :class:`Cancelled` has its
            message acknowledged and counted ``cancelled``.

    Survives any outage: every loop retries a Redis that cannot be reached
    (with backoff, logging once and then every 10 s) for as long as it takes.
    A handler's exception of any kind (``SystemExit`` included) fails that
    message only. Any other unexpected error stops the worker and ``run()``
    raises :class:`WorkerCrashed`, so a supervisor sees a non-zero exit.
    """

    def __init__(
        self,
        queues: Sequence[Queue],
        handler: Handler,
        *,
        concurrency: int = 1,
        prefetch: int | None = None,
        burst: bool = False,
        worker_id: str | None = None,
        heartbeat: float | None = None,
        timeout: float | None = None,
        shutdown_timeout: float | None = None,
        write_behind: Any = None,
        job_timeout: float | JobTimeout | None = None,
    ) -> None:
        if not queues:
            raise ValueError("a worker needs at least one queue")
        settings = queue_defaults()
        self.queues = list(queues)
        self.handler = handler
        self.concurrency = check_count(concurrency, "concurrency", 1, 256)
        self.prefetch = check_count(
            prefetch if prefetch is not None else settings["WORKER_PREFETCH"],
            "prefetch",
            1,
            MAX_BATCH,
        )
        self.burst = burst
        self.id = worker_id or f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(3)}"
        validate_name(self.id, "worker id")
        room = MAX_NAME_LENGTH - len(f".{self.concurrency - 1}")  # each thread's consumer id
        if len(self.id) > room:
            raise ValueError(
                f"worker id is {len(self.id)} characters long; at most {room} are allowed with "
                f"concurrency {self.concurrency} (each thread's consumer id adds "
                f"'.<thread number>', and a name holds at most {MAX_NAME_LENGTH})"
            )
        self.heartbeat = check_seconds(
            settings["WORKER_HEARTBEAT"] if heartbeat is None else heartbeat, "heartbeat"
        )
        self.timeout = check_seconds(
            settings["WORKER_TIMEOUT"] if timeout is None else timeout, "timeout"
        )
        if self.timeout <= self.heartbeat:
            raise ValueError(
                f"worker timeout ({self.timeout:g} s) must exceed the heartbeat "
                f"({self.heartbeat:g} s)"
            )
        self.shutdown_timeout = check_seconds(
            settings["WORKER_SHUTDOWN_TIMEOUT"] if shutdown_timeout is None else shutdown_timeout,
            "shutdown_timeout",
        )
        self.client = self.queues[0].client
        self.keys = self.queues[0].key_builder
        self.write_behind = write_behind
        if job_timeout is not None and not callable(job_timeout):
            job_timeout = check_seconds(job_timeout, "job_timeout")
        self.job_timeout = job_timeout
        self._timeout_of: JobTimeout | None = None  # resolved in run(): the handler may be set late
        self._jobs: dict[int, _Job] = {}  # thread index -> job with a deadline
        self._jobs_lock = threading.Lock()
        # give-backs whose outcome is unknown, to make again (see _release_rest)
        self._doubtful: list[tuple[Consumer, list[Message]]] = []
        self._doubt_lock = threading.Lock()
        self._give_back_pause = 0.0  # no main-thread give-back before (after an outage)
        self._abandoned: set[str] = set()  # names of threads stuck in a timed-out job
        self.stats = Stats()
        self.current: dict[int, str] = {}  # thread index -> message id (for the admin)
        self._stopping = threading.Event()
        # The heartbeat stops only after the job threads: a worker that drains its jobs on the
        # way out is alive until then, and must not be reaped (its jobs run again meanwhile).
        self._beat_stop = threading.Event()
        self._leaving: set[str] = set()  # threads that ended their jobs and land what they owe
        self._stop_asked = False  # (stop() was called: the relay sets _stopping a moment later)
        self._stop_relay = StopRelay(self._stopping.set, "redcoord-worker-stop")
        self._threads: list[threading.Thread] = []
        self._finished: set[str] = set()  # threads that ended by design (stop, burst)
        self._crash: tuple[str, BaseException] | None = None
        self._consumers = [
            [q.consumer(f"{self.id}.{i}", timeout=self.timeout) for q in self.queues]
            for i in range(self.concurrency)
        ]
        self._resting: dict[
            int, tuple[float, int]
        ] = {}  # id(consumer) -> (left out until, failures in a row)
        # threads claiming or running a batch (a burst thread with nothing left waits for them)
        self._running = 0
        self._pace: dict[str, float] = {}  # queue name -> running mean of its job durations (s)
        groups = wake_groups(self.queues, cluster=self.keys.cluster)
        self._wake_keys = groups[0]
        self._wakers = _SlotWakers(groups, self.concurrency) if len(groups) > 1 else None

    # -- lifecycle ------------------------------------------------------------

    def stop(self) -> None:
        """Ask every thread to finish its job in hand and stop. Safe from a signal handler:
        while the worker runs it takes no lock (see core/stopping.py)."""
        self._stop_asked = True
        self._stop_relay.request()

    @property
    def stopping(self) -> bool:
        return self._stop_asked or self._stopping.is_set()

    def run(self) -> Stats:
        """Run until stopped or (burst) drained; return the counts.

        Raises WorkerCrashed when a thread died unexpectedly (after stopping
        the others and handing back what can be handed back).
        """
        log.info(
            "worker %s: serving %s with %d thread(s), prefetch %d",
            self.id,
            ", ".join(q.name for q in self.queues),
            self.concurrency,
            self.prefetch,
        )
        self._timeout_of = self._resolve_job_timeout()
        beater: threading.Thread | None = None
        wakers: list[threading.Thread] = []
        self._threads = []
        self._stop_relay.start()
        try:  # (a failure while starting still stops what started, and ends the relay)
            attach = getattr(self.handler, "attach", None)
            if attach is not None:  # e.g. the Tasks runner, which cuts a cancelled job short
                attach(self)
            beater = self._start(f"redcoord-beat:{self.id}", self._beat_loop)
            if self._wakers is not None and not self.burst:
                wakers = [
                    self._start(f"redcoord-wake-{i}:{self.id}", self._wake_loop, keys)
                    for i, keys in enumerate(self._wakers.groups)
                ]
            self._threads = [
                self._start(f"redcoord-worker-{i}", self._thread_main, i)
                for i in range(self.concurrency)
            ]
            while not self._stopping.is_set():
                self._stopping.wait(0.1)
                if self.burst and all(t.name in self._finished for t in self._threads):
                    break
                for t in [beater, *wakers, *self._threads]:
                    if not t.is_alive() and t.name not in self._finished and self._crash is None:
                        self._crash = (t.name, RuntimeError(f"thread {t.name} ended unexpectedly"))
                if self._jobs and self._crash is None:
                    self._check_timeouts()
                    self._give_back_waiting(BATCH_BUDGET)
                if self._crash is not None:
                    break
        finally:
            self._stopping.set()
            deadline = time.monotonic() + self.shutdown_timeout
            for t in self._threads:
                if t.name not in self._abandoned:  # stuck: waiting would only delay the restart
                    t.join(max(0.0, deadline - time.monotonic()))
            still = [
                t.name for t in self._threads if t.is_alive() and t.name not in self._abandoned
            ]
            running = [name for name in still if name not in self._leaving]
            if running:  # what their batches have not started goes back now, not via the reaper
                self._give_back_waiting(0.0)
                log.warning(
                    "worker %s: %d job(s) still running after %gs; their messages will be "
                    "redelivered",
                    self.id,
                    len(running),
                    self.shutdown_timeout,
                )
            if len(running) < len(still):
                log.warning(
                    "worker %s: %d thread(s) could not land their results and acknowledgements "
                    "within %gs (Redis did not answer); their messages will be redelivered",
                    self.id,
                    len(still) - len(running),
                    self.shutdown_timeout,
                )
            self._beat_stop.set()
            if beater is not None:
                beater.join(max(0.0, min(2.0, deadline - time.monotonic())))
            for t in wakers:  # each blocks 1 s at most
                t.join(max(0.0, min(1.5, deadline - time.monotonic())))
            self._retire(keep_consumers=bool(still))
            close = getattr(self.write_behind, "close", None)
            if close is not None:
                close()
            self._stop_relay.end()
        if self._crash is not None:
            name, error = self._crash
            if isinstance(error, JobTimedOut):
                raise WorkerCrashed(f"worker {self.id} stopped: {error}", thread=name, error=error)
            raise WorkerCrashed(
                f"worker {self.id} stopped: {name} died: {type(error).__name__}: {error}",
                thread=name,
                error=error,
            )
        log.info("worker %s: stopped: %s", self.id, self.stats.summary())
        return self.stats

    def _start(self, name: str, target: Callable[..., None], *args: Any) -> threading.Thread:
        thread = threading.Thread(
            target=self._guarded, args=(name, target, *args), name=name, daemon=True
        )
        thread.start()
        return thread

    def _guarded(self, name: str, target: Callable[..., None], *args: Any) -> None:
        """A thread's body: ending by design is recorded; anything else crashes the worker."""
        try:
            target(*args)
        except BaseException as exc:
            if self._crash is None:
                self._crash = (name, exc)
            log.critical(
                "worker %s: thread %s died; stopping the worker", self.id, name, exc_info=exc
            )
            self._stopping.set()
        else:
            self._finished.add(name)

    # -- one thread -------------------------------------------------------------

    def _thread_main(self, index: int) -> None:
        consumers = self._consumers[index]
        outage = _Outage(f"worker {self.id} thread {index}")
        leftovers: list[tuple[Consumer, list[Message]]] = []
        while not self._stopping.is_set():
            try:
                worked, hint = self._one_round(index, consumers, leftovers)
                if not worked:
                    if self.burst:
                        if not self._running:
                            break
                        # another thread still runs a batch, whose rest may come back (see
                        # BATCH_BUDGET; a give-back wakes one idle thread): stay for it
                        self._idle(BURST_RECHECK)
                        continue
                    self._idle(hint)
                outage.ok()
            except CoordinationUnavailable as exc:
                self._stopping.wait(outage.failed(exc))
        self._leave(consumers, leftovers)

    def _leave(
        self, consumers: list[Consumer], leftovers: list[tuple[Consumer, list[Message]]]
    ) -> None:
        """On the way out: land results, hand back unstarted messages, acknowledge, retire.

        Retried while Redis is away, up to the shutdown timeout; what is left
        then is redelivered by a reaper once our heartbeat lapses.
        """
        self._leaving.add(threading.current_thread().name)
        deadline = time.monotonic() + self.shutdown_timeout
        for consumer in consumers:
            unstarted = [m for c, batch in leftovers if c is consumer for m in batch]
            while True:
                try:
                    self._settle_doubtful(consumer)
                    self._flush_results()
                    if unstarted:
                        unclaim = getattr(self.write_behind, "handed_back", None)
                        if unclaim is not None:
                            unclaim(unstarted)  # claimed() recorded them; they never started
                    n = consumer.hand_back(unstarted, retire=True)  # sends the acknowledgements too
                    if unstarted:
                        self.stats.handed_back += n
                        log.info(
                            "worker %s: handed back %d unstarted message(s) of %s",
                            self.id,
                            n,
                            consumer.queue.name,
                        )
                    break
                except CoordinationUnavailable as exc:
                    if not unstarted and self._owes_nothing(consumer):
                        # (only its retirement was left to do: its entry lapses with the
                        # heartbeat; waiting the shutdown timeout for it would only delay the stop)
                        log.info(
                            "worker %s: Redis unavailable on exit (%s); nothing of %s was in hand",
                            self.id,
                            exc,
                            consumer.queue.name,
                        )
                        break
                    if time.monotonic() >= deadline:
                        log.error(
                            "worker %s: could not hand back or acknowledge on exit (%s); the "
                            "reaper will redeliver what %s holds",
                            self.id,
                            exc,
                            consumer.processing,
                        )
                        break
                    time.sleep(0.2)

    def _one_round(
        self, index: int, consumers: list[Consumer], leftovers: list[tuple[Consumer, list[Message]]]
    ) -> tuple[bool, float | None]:
        """Claim from the queues in order; run the first non-empty batch.

        A queue whose claim fails (its Redis Cluster primary is down) is left
        out for a backoff while the others are served; raises the outage only
        when no queue could be asked.
        """
        hints = []
        failure: CoordinationUnavailable | None = None
        now = time.monotonic()
        for consumer in consumers:
            if len(consumers) > 1 and self._resting.get(id(consumer), (0.0, 0))[0] > now:
                continue
            with self._jobs_lock:
                self._running += 1  # from before the claim: a burst thread that found nothing
            try:  # meanwhile waits for this one's batch
                messages, hint = self._claim(consumer)
            except CoordinationUnavailable as exc:
                self._done_running()
                failure = exc
                if len(consumers) > 1:
                    failures = self._resting.get(id(consumer), (0.0, 0))[1] + 1
                    self._resting[id(consumer)] = (
                        time.monotonic() + min(5.0, 0.1 * 2**failures),
                        failures,
                    )
                continue
            self._resting.pop(id(consumer), None)
            if messages:
                try:
                    claimed = getattr(self.write_behind, "claimed", None)
                    if claimed is not None:
                        # before any of them starts (the Tasks runner records each attempt's worker)
                        claimed(messages)
                    rest = self._run_batch(index, consumer, messages)
                finally:
                    self._done_running()
                if rest:
                    leftovers.append((consumer, rest))
                return True, None
            self._done_running()
            hints.append(hint)
        if failure is not None and (self.burst or not hints):
            for consumer in (
                consumers
            ):  # every queue failed: an outage of the whole Redis, the caller backs off
                self._resting.pop(id(consumer), None)
            raise failure
        due = [h for h in hints if h is not None]
        return False, min(due) if due else None

    def _done_running(self) -> None:
        with self._jobs_lock:
            self._running -= 1

    def _claim(self, consumer: Consumer) -> tuple[list[Message], float | None]:
        self._settle_doubtful(consumer)  # (before: see there)
        self._flush_results()  # results land before the claim that acknowledges their messages
        return consumer.claim(self._batch_size(consumer.queue.name))

    def _batch_size(self, queue: str) -> int:
        """The prefetch, or fewer when the queue's recent jobs would not end within about
        ``BATCH_BUDGET / 2`` (at least one)."""
        pace = self._pace.get(queue)
        if not pace:
            return self.prefetch
        return max(1, min(self.prefetch, int(BATCH_BUDGET / 2 / pace)))

    def _paced(self, queue: str, seconds: float) -> None:
        pace = self._pace.get(queue)
        self._pace[queue] = seconds if pace is None else pace + PACE_WEIGHT * (seconds - pace)

    def _give_back(self, consumer: Consumer, rest: list[Message]) -> bool:
        """Return the unstarted rest of a batch that has run past ``BATCH_BUDGET`` to the front of
        the queue, after the results and acknowledgements so far. False when Redis surely did not
        take it (nothing of the give-back was sent): the thread then runs them itself. A
        give-back whose outcome is unknown counts as done (see :meth:`_release_rest`)."""
        try:
            self._flush_results()
            consumer.flush()  # the acknowledgements so far (and a heartbeat)
        except CoordinationUnavailable as exc:
            log.warning(
                "worker %s: could not give back %d unstarted message(s) of %s (%s); running them "
                "here",
                self.id,
                len(rest),
                consumer.queue.name,
                exc,
            )
            return False
        outcome = self._release_rest(consumer, rest, None)
        if outcome is False:
            log.warning(
                "worker %s: could not give back %d unstarted message(s) of %s; running them here",
                self.id,
                len(rest),
                consumer.queue.name,
            )
        return outcome is not False

    def _release_rest(
        self, consumer: Consumer, rest: list[Message], behind: str | None
    ) -> bool | None:
        """Give ``rest`` back to the front of the queue (a batch's unstarted messages, waiting
        behind job ``behind`` if given): True when done; False when Redis surely did not take it
        (the call was not sent); None when its outcome is unknown (sent, no reply): then nobody
        here may run them, since Redis may still have taken them, and the give-back is kept and
        made again before the consumer claims again (:meth:`_settle_doubtful`: the script moves
        only what is still on our list, so a second one is harmless)."""
        try:
            n = consumer.release(rest)
        except CoordinationUnavailable as exc:
            if not exc.sent:
                return False
            with self._doubt_lock:
                self._doubtful.append((consumer, rest))
            log.warning(
                "worker %s: the give-back of %d unstarted message(s) of %s got no answer (%s): "
                "not run here; given back again once Redis answers",
                self.id,
                len(rest),
                consumer.queue.name,
                exc,
            )
            return None
        self._rest_released(consumer, rest, n, behind)
        return True

    def _rest_released(
        self, consumer: Consumer, rest: list[Message], n: int, behind: str | None
    ) -> None:
        unclaim = getattr(self.write_behind, "handed_back", None)
        if unclaim is not None:
            unclaim(rest)  # claimed() recorded them; they never started here
        self.stats.handed_back += n
        log.info(
            "worker %s: gave back %d unstarted message(s) of %s%s",
            self.id,
            n,
            consumer.queue.name,
            f" waiting behind job {behind}" if behind else "",
        )

    def _settle_doubtful(self, consumer: Consumer | None = None) -> None:
        """Make again the give-backs whose outcome was unknown: ``consumer``'s, from its own
        thread before it claims again (else a message given back, then claimed again onto the
        same list, would be moved off it while it runs), or every one left when the worker
        stops (no thread claims then). Raises the outage of the first that fails (the others
        wait for the next try)."""
        with self._doubt_lock:
            mine = [d for d in self._doubtful if consumer is None or d[0] is consumer]
            if not mine:
                return
            self._doubtful = [
                d for d in self._doubtful if consumer is not None and d[0] is not consumer
            ]
        for i, (owner, rest) in enumerate(mine):
            try:
                n = owner.release(rest)
            except CoordinationUnavailable:
                with self._doubt_lock:
                    self._doubtful.extend(mine[i:])
                raise
            self._rest_released(owner, rest, n, None)

    def _give_back_waiting(self, after: float) -> None:
        """From the main thread: the unstarted rest of each batch whose job has kept it waiting
        (its batch began over ``after`` seconds ago) goes back to the front of the queue, so
        that idle threads and other workers take it (a thread checks this between its jobs
        too), and a stop whose jobs outlast the shutdown timeout leaves none of it for the
        reaper (whose redelivery counts an attempt). Its thread then starts none of it.

        A pass ends at its first outage, and the next waits ``GIVE_BACK_RETRY`` (but the one at
        the shutdown deadline): with Redis away it costs the main thread one call's socket
        timeout, not one per thread, and the job timeouts and the stop are checked meanwhile."""
        if after and time.monotonic() < self._give_back_pause:
            return
        if not after:  # the stop: no thread claims any more, so every doubt is settled here
            try:
                self._settle_doubtful()
            except CoordinationUnavailable as exc:
                log.warning(
                    "worker %s: give-backs whose outcome is unknown were left to the reaper: %s",
                    self.id,
                    exc,
                )
                return
        while True:
            now = time.monotonic()
            with self._jobs_lock:
                job = next(
                    (
                        j
                        for j in self._jobs.values()
                        if j.rest and j.giving is None and now - j.begun > after
                    ),
                    None,
                )
                if job is None:
                    return
                giving = job.giving = threading.Event()
            rest = job.rest
            outcome: bool | None = False
            try:
                # (release, not hand_back: the acknowledgements are the job's thread's to send)
                outcome = self._release_rest(job.consumer, rest, job.message.id)
            finally:
                if outcome is not False:
                    # (a timeout of the job, settled by this thread later, finds no rest left)
                    job.rest, job.rest_given = [], True
                giving.set()
            if outcome is not True:
                if outcome is False:
                    log.warning(
                        "worker %s: could not give back %d unstarted message(s) of %s waiting "
                        "behind job %s; its thread runs them after it",
                        self.id,
                        len(rest),
                        job.consumer.queue.name,
                        job.message.id,
                    )
                self._give_back_pause = time.monotonic() + GIVE_BACK_RETRY
                return

    def _owes_nothing(self, consumer: Consumer) -> bool:
        """Nothing of ``consumer`` waits for Redis: no message in hand or in doubt, no give-back
        to make again, no result or acknowledgement to land."""
        wb = self.write_behind
        with self._doubt_lock:
            doubtful = any(d[0] is consumer for d in self._doubtful)
        return consumer.owes_nothing and not doubtful and not (wb is not None and wb.has_pending())

    def _flush_results(self) -> None:
        wb = self.write_behind
        if wb is not None and wb.has_pending():
            wb.flush()

    def _run_batch(self, index: int, consumer: Consumer, messages: list[Message]) -> list[Message]:
        """Run a claimed batch; return the messages left unstarted because we are stopping.

        Once the batch has run past ``BATCH_BUDGET``, its unstarted rest goes back to the queue
        (see :meth:`_give_back`)."""
        begun = time.monotonic()
        for i, message in enumerate(messages):
            if self._stopping.is_set():
                return messages[i:]
            if (
                i
                and time.monotonic() - begun > BATCH_BUDGET
                and self._give_back(consumer, messages[i:])
            ):
                return []
            if message.error is not None:  # unreadable: nothing can run it
                self._failed(consumer, message, f"unreadable message: {message.error}", dead=True)
                continue
            self.current[index] = message.id
            started = time.perf_counter()
            timeout = self._timeout(message)
            job = _Job(
                consumer,
                message,
                messages[i + 1 :],
                *(
                    (math.inf, math.inf)
                    if timeout is None
                    else (timeout, time.monotonic() + timeout)
                ),
                begun=begun,
            )
            with self._jobs_lock:
                self._jobs[index] = job
            failure: BaseException | None = None
            tracer = _messages.tracer
            try:
                if tracer is None:
                    self.handler(message)
                # the one place a delivery meets the tracer: its process span, the sender's context
                # restored
                else:
                    with tracer.process(message):
                        self.handler(message)
            except (
                BaseException
            ) as exc:  # SystemExit, KeyboardInterrupt... from a job fail that job only
                failure = exc
            finally:
                self.current.pop(index, None)
                self._paced(message.queue, time.perf_counter() - started)
            with self._jobs_lock:
                mine = self._jobs.pop(index, None) is job
            if not mine:  # the watchdog settled this message already: drop our outcome
                _log_job(message, started, "finished after its timeout, outcome dropped", "")
                return messages[i + 1 :]  # released by the watchdog; releasing again is harmless
            if failure is None:
                consumer.ack(message)
                self.stats.add("ok", message.queue)
                _log_job(message, started, "ok", "")
                if observers:
                    _observe_job(message, "ok", "ack", time.perf_counter() - started)
            elif isinstance(failure, Cancelled):
                consumer.ack(message)
                self.stats.add("cancelled", message.queue)
                _log_job(message, started, "cancelled", str(failure))
                if observers:
                    _observe_job(message, "cancelled", "ack", time.perf_counter() - started)
            elif isinstance(failure, DeadLetter):
                self._failed(consumer, message, str(failure), dead=True, started=started)
            elif isinstance(failure, Retry):
                self._failed(consumer, message, str(failure), started=started, delay=failure.delay)
            else:
                error = f"{type(failure).__module__}.{type(failure).__qualname__}: {failure}"
                self._failed(consumer, message, error, started=started)
            failure = None  # no reference cycle through the traceback
            if job.giving is not None:  # its rest was being given back while it ran
                job.giving.wait()  # (one round trip, within the socket timeout)
                if job.rest_given:
                    return []
        return []

    def _failed(
        self,
        consumer: Consumer,
        message: Message,
        error: str,
        *,
        dead: bool = False,
        started: float | None = None,
        delay: float | None = None,
    ) -> None:
        """Nack a failed delivery; if Redis is away, keep the nack for later and go on with the
        batch."""
        try:
            outcome = consumer.nack(message, error, dead=dead, delay=delay)
        except CoordinationUnavailable as exc:
            consumer.defer_nack(message, error, dead=dead, delay=delay)
            outcome = "dead" if dead else "retry"
            log.warning("job %s on %s: nack deferred (%s)", message.id, message.queue, exc)
        self.stats.add("dead" if outcome == "dead" else "failed", message.queue)
        _log_job(message, started if started is not None else time.perf_counter(), outcome, error)
        if observers:
            duration = 0.0 if started is None else time.perf_counter() - started
            _observe_job(message, "dead" if outcome == "dead" else "failed", outcome, duration)

    # -- job timeouts -------------------------------------------------------------

    def _resolve_job_timeout(self) -> JobTimeout | None:
        limit = (
            self.job_timeout
            if self.job_timeout is not None
            else getattr(self.handler, "job_timeout", None)
        )
        if limit is None or callable(limit):
            return limit
        return lambda message: limit

    def _timeout(self, message: Message) -> float | None:
        if self._timeout_of is None:
            return None
        try:
            limit = self._timeout_of(message)
            return None if limit is None else check_seconds(limit, "job timeout")
        except Exception as exc:  # noqa: BLE001 - a bad timeout must not take the worker down
            log.warning("job %s on %s: no timeout applied: %s", message.id, message.queue, exc)
            return None

    def cut_short(self, message_id: str, seconds: float, reason: str) -> bool:
        """Give the running job of ``message_id`` at most ``seconds`` more (any thread): past
        that it takes the timeout path (see the module), with ``reason`` as its error, and the
        handler's ``timed_out`` hook decides its fate. False if no thread runs it now."""
        deadline = time.monotonic() + seconds
        with self._jobs_lock:
            for job in self._jobs.values():
                if job.message.id == message_id:
                    if deadline < job.deadline:
                        job.deadline, job.timeout, job.reason = deadline, seconds, reason
                    return True
        return False

    def _check_timeouts(self) -> None:
        """Settle the messages of jobs past their deadline, then stop the worker (see the
        module)."""
        now = time.monotonic()
        with self._jobs_lock:  # taking a job out decides it: its thread will drop its outcome
            late = [(i, job) for i, job in self._jobs.items() if job.deadline <= now]
            for i, _ in late:
                del self._jobs[i]
        for index, job in late:
            self._abandoned.add(self._threads[index].name)
            self._time_out(job)
        if late:
            index, job = late[0]
            self._crash = (
                self._threads[index].name,
                JobTimedOut(
                    f"job {job.message.id} on {job.message.queue} "
                    f"{job.reason or f'ran past its timeout of {job.timeout:g} s'}; "
                    "its thread cannot be stopped, so the worker exits to be restarted"
                ),
            )
            self._stopping.set()

    def _time_out(self, job: _Job) -> None:
        message, consumer = job.message, job.consumer
        error, dead, delay = job.reason or f"timed out after {job.timeout:g} s", False, None
        log.critical(
            "job %s on %s: %s; worker %s stops (its thread cannot be stopped)",
            message.id,
            message.queue,
            error,
            self.id,
        )
        hook = getattr(self.handler, "timed_out", None)
        if hook is not None:
            try:
                hook(message, job.timeout)
            except DeadLetter as exc:
                error, dead = str(exc), True
            except Retry as exc:
                error, delay = str(exc), exc.delay
            except Exception as exc:  # noqa: BLE001 - a plain failure, as from the handler
                error = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
        try:
            outcome = consumer.nack(message, error, dead=dead, delay=delay)
            unclaim = getattr(self.write_behind, "handed_back", None)
            if unclaim is not None and job.rest:
                unclaim(job.rest)
            consumer.release(job.rest)
        except (
            CoordinationUnavailable
        ) as exc:  # the reaper redelivers them once this process is gone
            log.error(
                "job %s on %s: could not fail the timed-out job (%s); the reaper will redeliver it",
                message.id,
                message.queue,
                exc,
            )
            return
        self.stats.add("dead" if outcome == "dead" else "failed", message.queue)
        if observers:
            _observe_job(
                message, "timeout", outcome, time.monotonic() - (job.deadline - job.timeout)
            )

    def _idle(self, hint: float | None) -> None:
        """Block on the wake lists until a push, a due delayed message, or 1 s."""
        wait = 1.0 if hint is None else max(MIN_BLOCK, min(hint, 1.0))
        if self._wakers is not None:  # a Cluster, queues in several slots: the wakers block for us
            self._wakers.wait(wait)
            return
        blpop(
            self.client,
            self._wake_keys,
            wait,
            operation=f"wait for messages on {self.queues[0].name!r}",
        )

    def _wake_loop(self, keys: list[str]) -> None:
        """On a Cluster: block on one slot's wake lists; each token popped lets one idle thread
        claim."""
        wakers = self._wakers
        if wakers is None:  # one BLPOP serves every queue: nothing to do here
            return
        outage = _Outage(
            f"worker {self.id} wait on {len(keys)} wake list(s) of slot {key_slot(keys[0])}"
        )
        while not self._stopping.is_set():
            try:
                popped = blpop(
                    self.client, keys, 1.0, operation=f"wait for messages on {keys[0]!r}"
                )
                outage.ok()
            except CoordinationUnavailable as exc:
                self._stopping.wait(outage.failed(exc))
                continue
            if popped is not None:
                wakers.woken()

    # -- heartbeat and reaping ----------------------------------------------------

    def _beat_loop(self) -> None:
        outage = _Outage(f"worker {self.id} heartbeat")
        pause = 0.0
        reported: tuple[int, dict[str, int]] = (
            -1,
            {},
        )  # (minute of our last report, finished per queue then)
        while not self._beat_stop.wait(pause):
            # Fixed rate: the next round starts one heartbeat after this one
            # began, however long its reaps took. A pause counted from the
            # round's end let a loaded host reap less often than every
            # heartbeat, past the documented WORKER_TIMEOUT + WORKER_HEARTBEAT.
            began = time.monotonic()
            try:
                self._beat()
                failure: CoordinationUnavailable | None = None
                for (
                    queue
                ) in self.queues:  # one queue's primary down (Cluster): the others are still reaped
                    try:
                        requeued, buried, reaped = queue.reap()
                        if reaped:
                            log.warning(
                                "queue %s: reaped %d dead consumer(s): %d message(s) requeued, %d "
                                "dead-lettered",
                                queue.name,
                                reaped,
                                requeued,
                                buried,
                            )
                        self._settle(queue)
                    except CoordinationUnavailable as exc:
                        failure = exc
                if failure is not None:
                    raise failure
                sweep = getattr(self.write_behind, "sweep", None)
                if sweep is not None:  # (the Tasks runner: workflows no call moved on)
                    try:
                        sweep()
                    except CoordinationUnavailable:
                        raise
                    except Exception as exc:  # noqa: BLE001 - the heartbeat must go on
                        log.warning("worker %s: the workflow sweep failed: %s", self.id, exc)
                reported = self._sample(time.time(), reported)
                outage.ok()
                pause = max(0.0, began + self.heartbeat - time.monotonic())
            except CoordinationUnavailable as exc:
                pause = min(self.heartbeat, outage.failed(exc))

    def _sample(
        self, now: float, reported: tuple[int, dict[str, int]]
    ) -> tuple[int, dict[str, int]]:
        """Once a minute of our clock: report what we finished to our queues, for the admin's
        charts.

        One round trip (see :func:`sample_history`); the first worker in a
        minute of the server's clock also samples each queue's depth. Takes
        and returns ``(minute, finished per queue)`` of the last report: a
        report that fails is sent, with what was finished since, at the next beat.
        """
        minute = int(now // 60)
        if minute == reported[0]:
            return reported
        with self.stats.lock:
            finished = dict(self.stats.finished)
        before = reported[1]
        sample_history(
            self.queues,
            [finished.get(q.name, 0) - before.get(q.name, 0) for q in self.queues],
            client=self.client,
        )
        return minute, finished

    def _settle(self, queue: Queue) -> None:
        """Mark the records of dead-lettered messages (see Queue.unsettled)."""
        settle = getattr(self.write_behind, "settle_dead", None)
        if settle is None:
            return
        entries = queue.unsettled()
        if entries:
            settle(queue, entries)
            queue.settled([entry for _, _, entry in entries])

    def _beat(self, *, retire: bool = False) -> None:
        timeout_ms = int(self.timeout * 1000)
        fields = [
            "host",
            socket.gethostname(),
            "pid",
            os.getpid(),
            "queues",
            json.dumps([q.name for q in self.queues]),
            "concurrency",
            self.concurrency,
            "current",
            json.dumps(list(self.current.values())),
            "ok",
            self.stats.ok,
            "failed",
            self.stats.failed,
            "dead",
            self.stats.dead,
            "cancelled",
            self.stats.cancelled,
        ]

        def build(pipe: Any) -> None:
            _BEAT.queue(
                pipe,
                [self.keys.workers(self.id), self.keys.worker(self.id)],
                [self.id, timeout_ms, "1" if retire else "0", *fields],
            )
            for q_index, queue in enumerate(self.queues):
                # a rated group's field outlives its last message until its rate's next start
                # has passed: claims drop one each, beats (and a retiring --burst worker) more
                _GROUPS_PRUNE.queue(pipe, [queue.keys.gstate], [GROUPS_PRUNE_SAMPLE])
                if retire:
                    continue
                members = [threads[q_index].processing for threads in self._consumers]
                _QUEUE_BEAT.queue(pipe, [queue.keys.consumers], [timeout_ms, *members])

        execute_pipeline(self.client, build, operation=f"heartbeat of worker {self.id}")

    def _retire(self, *, keep_consumers: bool) -> None:
        try:
            self._beat(retire=not keep_consumers)
        except CoordinationUnavailable as exc:
            log.error("worker %s: could not deregister: %s", self.id, exc)


def _observe_job(message: Message, outcome: str, fate: str, duration: float) -> None:
    """Report a finished delivery (see ..observe, ``message.done``); ``fate`` is the nack's
    answer, or "ack"."""
    task = message.body.get("task", "") if isinstance(message.body, dict) else ""
    observe(
        "message.done",
        queue=message.queue,
        task=task if isinstance(task, str) else "",
        outcome=outcome,
        retried=fate in ("retry", "gone"),
        dead_lettered=fate == "dead",
        duration=duration,
    )


def _log_job(message: Message, started: float, outcome: str, error: str) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    task = message.body.get("task", "") if isinstance(message.body, dict) else ""
    log.info(
        "job %s%s on %s: %s in %.1f ms%s",
        message.id,
        f" ({task})" if task else "",
        message.queue,
        outcome,
        (time.perf_counter() - started) * 1000,
        f": {error}" if error else "",
    )
