"""The worker loop: claim in batches, run a handler, acknowledge, heartbeat, reap.

Concurrency is threads: ``concurrency`` threads in one process, each with its
own consumer (and processing list) per queue. Scale further by running more
worker processes. One more thread beats the heartbeat of every consumer (so a
long job does not make its consumer look dead) and reaps the consumers of
dead workers on every queue served.

Each thread loops: one round trip acknowledges the previous batch and claims
up to ``prefetch`` messages; the handler runs them in order. A handler that
raises gets the message retried with backoff (dead-lettered after the last
attempt); raising :class:`DeadLetter` sends it to the dead-letter list at once.
An idle thread blocks on the queues' wake lists (no polling), waking early
when a delayed message falls due.

Stopping (``stop()``, e.g. from SIGTERM): threads finish the job in hand (up
to ``shutdown_timeout``), hand back the prefetched messages they did not start
at once, acknowledge what they finished, and retire their consumers.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .connection import unavailable_as_ours
from .exceptions import CoordinationUnavailable
from .queues import MAX_BATCH, Consumer, Message, Queue, check_count, queue_defaults
from .scripting import Script, execute_pipeline

log = logging.getLogger(__name__)

_BEAT = Script("worker_beat")
_QUEUE_BEAT = Script("queue_heartbeat")


class DeadLetter(Exception):
    """Raised by a handler: this message can never succeed; dead-letter it now."""


@dataclass
class Stats:
    ok: int = 0
    failed: int = 0
    dead: int = 0
    handed_back: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, outcome: str) -> None:
        with self.lock:
            setattr(self, outcome, getattr(self, outcome) + 1)


Handler = Callable[[Message], Any]


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
            optionally ``close()`` when the worker stops (the Tasks runner
            uses it for results).
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
    ) -> None:
        if not queues:
            raise ValueError("a worker needs at least one queue")
        settings = queue_defaults()
        self.queues = list(queues)
        self.handler = handler
        self.concurrency = check_count(concurrency, "concurrency", 1, 256)
        self.prefetch = check_count(prefetch if prefetch is not None else settings["WORKER_PREFETCH"], "prefetch", 1, MAX_BATCH)
        self.burst = burst
        self.id = worker_id or f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(3)}"
        self.heartbeat = float(heartbeat or settings["WORKER_HEARTBEAT"])
        self.timeout = float(timeout or settings["WORKER_TIMEOUT"])
        if self.timeout <= self.heartbeat:
            raise ValueError(f"worker timeout ({self.timeout:g} s) must exceed the heartbeat ({self.heartbeat:g} s)")
        self.shutdown_timeout = float(shutdown_timeout or settings["WORKER_SHUTDOWN_TIMEOUT"])
        self.client = self.queues[0].client
        self.keys = self.queues[0].key_builder
        self.write_behind = write_behind
        self.stats = Stats()
        self.current: dict[int, str] = {}  # thread index -> message id (for the admin)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._consumers = [
            [q.consumer(f"{self.id}.{i}", timeout=self.timeout) for q in self.queues] for i in range(self.concurrency)
        ]

    # -- lifecycle ------------------------------------------------------------

    def stop(self) -> None:
        """Ask every thread to finish its job in hand and stop (safe from a signal handler)."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def run(self) -> Stats:
        """Run until stopped or (burst) drained; return the counts."""
        log.info(
            "worker %s: serving %s with %d thread(s), prefetch %d",
            self.id, ", ".join(q.name for q in self.queues), self.concurrency, self.prefetch,
        )  # fmt: skip
        self._beat()
        beater = threading.Thread(target=self._beat_loop, name=f"redcoord-beat:{self.id}", daemon=True)
        beater.start()
        self._threads = [
            threading.Thread(target=self._thread_main, args=(i,), name=f"redcoord-worker-{i}", daemon=True)
            for i in range(self.concurrency)
        ]
        for t in self._threads:
            t.start()
        try:
            while any(t.is_alive() for t in self._threads) and not self._stopping.is_set():
                for t in self._threads:
                    t.join(0.2)
        finally:
            self._stopping.set()
            deadline = time.monotonic() + self.shutdown_timeout
            for t in self._threads:
                t.join(max(0.0, deadline - time.monotonic()))
            still = [t.name for t in self._threads if t.is_alive()]
            if still:
                log.warning(
                    "worker %s: %d job(s) still running after %gs; their messages will be redelivered",
                    self.id, len(still), self.shutdown_timeout,
                )  # fmt: skip
            self._retire(keep_consumers=bool(still))
            close = getattr(self.write_behind, "close", None)
            if close is not None:
                close()
        log.info("worker %s: stopped (%s)", self.id, self.stats)
        return self.stats

    # -- one thread -------------------------------------------------------------

    def _thread_main(self, index: int) -> None:
        consumers = self._consumers[index]
        while not self._stopping.is_set():
            try:
                worked, hint = self._one_round(index, consumers)
            except CoordinationUnavailable as exc:
                log.error("worker %s: %s; retrying in 1 s", self.id, exc)
                self._stopping.wait(1.0)
                continue
            if worked:
                continue
            if self.burst:
                break
            self._idle(hint)
        for consumer in consumers:
            try:
                self._flush_results()
                consumer.hand_back([], retire=True)  # sends the acknowledgements too
            except CoordinationUnavailable as exc:
                log.error("worker %s: could not acknowledge on exit: %s", self.id, exc)

    def _one_round(self, index: int, consumers: list[Consumer]) -> tuple[bool, float | None]:
        """Claim from the queues in order; run the first non-empty batch."""
        hints = []
        for consumer in consumers:
            messages, hint = self._claim(consumer)
            if messages:
                self._run_batch(index, consumer, messages)
                return True, None
            hints.append(hint)
        due = [h for h in hints if h is not None]
        return False, min(due) if due else None

    def _claim(self, consumer: Consumer) -> tuple[list[Message], float | None]:
        self._flush_results()  # results land before the claim that acknowledges their messages
        return consumer.claim(self.prefetch)

    def _flush_results(self) -> None:
        wb = self.write_behind
        if wb is not None and wb.has_pending():
            wb.flush()

    def _run_batch(self, index: int, consumer: Consumer, messages: list[Message]) -> None:
        for i, message in enumerate(messages):
            if self._stopping.is_set():
                self._flush_results()
                n = consumer.hand_back(messages[i:])
                self.stats.handed_back += n
                log.info("worker %s: handed back %d unstarted message(s) of %s", self.id, n, consumer.queue.name)
                return
            self.current[index] = message.id
            started = time.perf_counter()
            try:
                self.handler(message)
            except DeadLetter as exc:
                consumer.nack(message, str(exc), dead=True)
                self.stats.add("dead")
                _log_job(message, started, "dead", str(exc))
            except Exception as exc:
                error = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
                outcome = consumer.nack(message, error)
                self.stats.add("dead" if outcome == "dead" else "failed")
                _log_job(message, started, outcome, error)
            else:
                consumer.ack(message)
                self.stats.add("ok")
                _log_job(message, started, "ok", "")
            finally:
                self.current.pop(index, None)

    def _idle(self, hint: float | None) -> None:
        """Block on the wake lists until a push, a due delayed message, or 1 s."""
        wait = 1.0 if hint is None else max(0.001, min(hint, 1.0))
        with unavailable_as_ours(self.client, f"wait for messages on {self.queues[0].name!r}"):
            self.client.blpop([q.keys.wake for q in self.queues], timeout=wait)

    # -- heartbeat and reaping ----------------------------------------------------

    def _beat_loop(self) -> None:
        while not self._stopping.wait(self.heartbeat):
            try:
                self._beat()
                for queue in self.queues:
                    requeued, buried, reaped = queue.reap()
                    if reaped:
                        log.warning(
                            "queue %s: reaped %d dead consumer(s): %d message(s) requeued, %d dead-lettered",
                            queue.name, reaped, requeued, buried,
                        )  # fmt: skip
            except CoordinationUnavailable as exc:
                log.error("worker %s: heartbeat failed: %s", self.id, exc)

    def _beat(self, *, retire: bool = False) -> None:
        timeout_ms = int(self.timeout * 1000)
        fields = [
            "host", socket.gethostname(), "pid", os.getpid(),
            "queues", ",".join(q.name for q in self.queues),
            "concurrency", self.concurrency,
            "current", ",".join(self.current.values()),
            "ok", self.stats.ok, "failed", self.stats.failed, "dead", self.stats.dead,
        ]  # fmt: skip

        def build(pipe: Any) -> None:
            _BEAT.queue(pipe, [self.keys.workers(), self.keys.worker(self.id)], [self.id, timeout_ms, "1" if retire else "0", *fields])
            if retire:
                return
            for q_index, queue in enumerate(self.queues):
                members = [threads[q_index].processing for threads in self._consumers]
                _QUEUE_BEAT.queue(pipe, [queue.keys.consumers], [timeout_ms, *members])

        execute_pipeline(self.client, build, operation=f"heartbeat of worker {self.id}")

    def _retire(self, *, keep_consumers: bool) -> None:
        try:
            self._beat(retire=not keep_consumers)
        except CoordinationUnavailable as exc:
            log.error("worker %s: could not deregister: %s", self.id, exc)


def _log_job(message: Message, started: float, outcome: str, error: str) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    task = message.body.get("task", "") if isinstance(message.body, dict) else ""
    log.info(
        "job %s%s on %s: %s in %.1f ms%s",
        message.id, f" ({task})" if task else "", message.queue, outcome,
        (time.perf_counter() - started) * 1000, f": {error}" if error else "",
    )  # fmt: skip
