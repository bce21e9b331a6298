"""What a failover benchmark keeps: fencing tokens, probes, pushes, leader terms, log records.

Used by bench_failover.py (Sentinel) and bench_cluster_failover.py (Cluster):
in each round some primary is SIGKILLed at ``t0``; probe threads, let go
right after, retry an operation until its first success (the time a user
waits); load threads keep a ledger of what Redis acknowledged, checked once
the topology has settled (what a failover loses).
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django_redcoord.core.transport.commands import command

if TYPE_CHECKING:
    from django_redcoord.core.leader import LeaderElection
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.queues import Queue

RETRY = 0.02  # seconds between a probe's attempts
PROBE_TIMEOUT = 30.0  # a probe not done this long after the kill gives up


class Fences:
    """Every grant of one fenced lock, in the order the grants returned: each token must be
    strictly greater than every earlier one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.grants: list[tuple[int, str, int]] = []  # (round, who, token)
        self.violations: list[str] = []
        self.top: int | None = None

    def add(self, round_no: int, who: str, token: int | None) -> None:
        with self._lock:
            if token is None or (self.top is not None and token <= self.top):
                self.violations.append(f"round {round_no} {who}: token {token} after {self.top}")
            self.grants.append((round_no, who, token or 0))
            if token is not None:
                self.top = token if self.top is None else max(self.top, token)

    def verdict(self) -> str:
        """``tokens not above every earlier one: 0`` (with the first five, if any)."""
        return f"tokens not above every earlier one: {len(self.violations)}" + (
            f" {self.violations[:5]}" if self.violations else ""
        )


@dataclass
class Probe:
    """One probe's outcome: seconds from the kill to its first success (None: gave up)."""

    elapsed: float | None = None
    attempts: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    note: str = ""


def probe(
    go: threading.Event, t0: list[float], attempt: Callable[[Probe], bool]
) -> tuple[threading.Thread, Probe]:
    """A thread calling ``attempt`` every RETRY s after ``go`` until it returns True, for up to
    PROBE_TIMEOUT s after ``t0[0]`` (the kill)."""
    result = Probe()

    def loop() -> None:
        go.wait()
        deadline = t0[0] + PROBE_TIMEOUT
        while time.monotonic() < deadline:
            result.attempts += 1
            try:
                if attempt(result):
                    result.elapsed = time.monotonic() - t0[0]
                    return
            except Exception as exc:  # an outage until the new primary is found
                result.errors[type(exc).__name__] += 1
            time.sleep(RETRY)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread, result


def lock_attempt(lock: Lock, round_no: int, fences: Fences) -> Callable[[Probe], bool]:
    """Acquire ``lock`` (wait=0) and release it; each grant goes into ``fences``."""

    def attempt(result: Probe) -> bool:
        if not lock.held:
            if not lock.acquire():
                result.errors["held by another"] += 1
                return False
            fences.add(round_no, "probe", lock.token)
        lock.release()
        return True

    return attempt


def task_attempt(
    queue: Queue, consumer_name: str, round_no: int, repush_after: int
) -> Callable[[Probe], bool]:
    """Push one message, claim it, ack it, flush the ack (a consumer, as a Worker thread does).
    After ``repush_after`` claims that found nothing, push again (the push's reply was lost and
    it did not land)."""
    consumer = queue.consumer(consumer_name)
    state = {"stage": "push", "empty": 0}

    def attempt(result: Probe) -> bool:
        if state["stage"] == "push":
            queue.push({"round": round_no})
            state["stage"] = "claim"
        if state["stage"] == "claim":
            messages, _ = consumer.claim(1)
            if not messages:
                state["empty"] += 1
                result.errors["claimed nothing"] += 1
                if state["empty"] >= repush_after:
                    state["stage"], state["empty"] = "push", 0
                return False
            consumer.ack(messages[0])
            state["stage"] = "flush"
        consumer.flush()  # the ack rides on this claim(0)
        return True

    return attempt


def elect(candidates: Sequence[LeaderElection], timeout: float = 10.0) -> int:
    """Campaign until some candidate leads; its term."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for candidate in candidates:
            try:
                candidate.campaign()
            except Exception:
                pass
        leading = [c.term for c in candidates if c.is_leader()]
        if leading:
            return int(leading[0] or 0)
        time.sleep(RETRY)
    raise RuntimeError("no candidate became leader")


def terms_not_rising(terms: Sequence[int]) -> list[str]:
    """Each leader term not above the one before it (must be none)."""
    return [f"{b} after {a}" for a, b in zip(terms, terms[1:], strict=False) if b <= a]


@dataclass
class Pushes:
    """One pusher's messages by outcome (ids), and how many were found afterwards."""

    # The push returned (and, with WAIT, a replica confirmed it):
    acked: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)  # WAIT returned 0
    unknown: list[str] = field(default_factory=list)  # the push or its WAIT failed: unknown outcome
    present: int = 0  # of the acknowledged, found on the new master
    stray: int = 0  # found on the new master though not acknowledged


def pusher(
    push: Callable[..., Any],
    tag: str,
    stop: threading.Event,
    out: Pushes,
    wait_client: Any = None,
    pause: float | None = None,
) -> threading.Thread:
    """A thread calling ``push(body, id=...)`` until ``stop`` or the first error; with
    ``pause``, until ``stop``, pausing between pushes. With ``wait_client`` (the push's own
    client), each push is followed by ``WAIT 1 100`` and counts only once a replica confirmed
    it."""

    def loop() -> None:
        n = 0
        while not stop.is_set():
            if pause is not None:
                time.sleep(pause)
            mid = f"{tag}-{n}"
            n += 1
            try:
                push({"n": n}, id=mid)
                if wait_client is not None:
                    # The push's client, used by this thread only: its pool hands
                    # back the same connection (last in, first out), and WAIT counts
                    # the writes of the connection it is sent on.
                    acks = int(command(wait_client, "WAIT", 1, 100, operation="WAIT 1 100"))
                    if acks < 1:
                        out.unconfirmed.append(mid)
                        continue
            except Exception:
                out.unknown.append(mid)
                if pause is None:
                    return
                continue
            out.acked.append(mid)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


# --- reporting -------------------------------------------------------------------------------


def seconds(value: float | None) -> str:
    """A probe's time; ``>30`` when it gave up."""
    return f">{PROBE_TIMEOUT:g}" if value is None else f"{value:.2f}"


def elapsed_row(name: str, values: list[float | None], notes: list[str] | None = None) -> list[str]:
    """A table row: the median and max over the rounds (none if any round gave up), and every
    sample with its note."""
    done = [v for v in values if v is not None]
    failed = len(values) - len(done)
    median = statistics.median(done) if done and not failed else None
    worst = max(done) if done and not failed else None
    samples = [
        seconds(v) + (f" ({n})" if n else "")
        for v, n in zip(values, notes or [""] * len(values), strict=True)
    ]
    return [name, seconds(median), seconds(worst), ", ".join(samples)]


ELAPSED_HEADERS = ["what", "median s", "max s", "all samples (s)"]


PROBES = ("lock", "task", "leader")


def probe_rows(rounds: Sequence[Any], leader: str) -> list[list[str]]:
    """The table rows of the three probes of every round (its ``lock``, ``task`` and ``leader``
    :class:`Probe`): lock and task, then ``leader``, each round's sample with its note."""
    return [
        elapsed_row("lock acquire+release", [r.lock.elapsed for r in rounds]),
        elapsed_row("task push+claim+ack", [r.task.elapsed for r in rounds]),
        elapsed_row(leader, [r.leader.elapsed for r in rounds], [r.leader.note for r in rounds]),
    ]


def probe_errors(rounds: Sequence[Any]) -> list[tuple[str, Counter[str]]]:
    """(probe, its failed attempts) of every round, for :func:`failed_attempts`."""
    return [(what, getattr(r, what).errors) for r in rounds for what in PROBES]


def failed_attempts(errors: Iterable[tuple[str, Counter[str]]]) -> str:
    """``failed attempts before the first success (all rounds): lock: ConnectionError x12, ...``
    from (what, error counts) pairs."""
    total: Counter[str] = Counter()
    for what, counts in errors:
        for kind, count in counts.items():
            total[f"{what}: {kind}"] += count
    return "failed attempts before the first success (all rounds): " + ", ".join(
        f"{k} x{v}" for k, v in sorted(total.items())
    )


class LogCounter(logging.Handler):
    """Keeps log records (WARNING and up) of the named loggers, which would go to stderr
    otherwise: counted, printed at the end."""

    def __init__(self, *names: str) -> None:
        super().__init__(logging.WARNING)
        self.seen: Counter[str] = Counter()
        for name in names:
            logger = logging.getLogger(name)
            logger.addHandler(self)
            logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        self.seen[f"{record.levelname} {record.name}: {record.msg}"] += 1

    def report(self) -> None:
        if self.seen:
            print(
                "\ndjango_redcoord log records (WARNING and up): "
                + "; ".join(f"{k} x{v}" for k, v in self.seen.most_common())
            )
