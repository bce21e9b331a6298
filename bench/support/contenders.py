"""N forked processes contending for one resource, started together, and what their records say.

The parent forks the contenders (:func:`race`); each builds its client and
object and warms up, all meet at a barrier, and they start together at ``t0``
(CLOCK_MONOTONIC, shared by all processes on Linux), run for a window and put
``(proc_id, payload, error)`` on a queue (:func:`contend`). A lock or
semaphore contender records ``(t_request, t_acquired, t_release_start)`` per
acquisition (:func:`hold_loop`); the rest of the module reads those records.
"""

from __future__ import annotations

import itertools
import math
import queue
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import redis

from .processes import CTX, child_exit, child_setup, describe, stop_process
from .servers import command_calls

Record = tuple[float, float, float]  # (t_request, t_acquired, t_release_start)
T = TypeVar("T")


class Window:
    """The start line of ``n`` forked contenders (made before they fork)."""

    def __init__(self, n: int) -> None:
        self.ready = CTX.Barrier(n + 1)  # the n contenders built and warmed up, and the parent
        self.start = CTX.Event()  # t0 is set
        self.t0 = CTX.Value("d", 0.0)  # monotonic start of the window

    def wait(self, timeout: float) -> float:
        """In a contender: meet the others, wait for the start; ``t0``."""
        self.ready.wait(timeout=timeout)
        self.start.wait(timeout=timeout)
        return self.t0.value


def contend(
    proc_id: int,
    window: Window,
    out: Any,
    setup: Callable[[], T],
    run: Callable[[T, float], object],
    payload: Callable[[], Any],
    *,
    timeout: float = 30.0,
    report: Callable[[BaseException], str] = describe,
) -> None:
    """The body of one forked contender, which then leaves (:func:`processes.child_exit`).

    ``setup()`` builds and warms up; a failure is reported, and the start line
    still met so the others are not held up. Then ``run(built, t0)`` from the
    start, and ``(proc_id, payload(), error)`` goes on ``out``: the payload also
    when ``run`` failed half-way (what it recorded until then).

    Args:
        timeout: seconds to wait at the start line.
        report: how a failure reads (default ``Type: message``).
    """
    child_setup()
    built, error = None, None
    try:
        built = setup()
    except BaseException as exc:  # noqa: B036 - report everything, still meet the barrier
        error = report(exc)
    try:
        t0 = window.wait(timeout)
        if error is None:
            run(built, t0)  # type: ignore[arg-type]
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        error = error or report(exc)
    out.put((proc_id, payload(), error))
    child_exit(out)


@dataclass
class Race:
    """What the contenders of one run reported."""

    payloads: dict[int, Any]  # proc_id -> payload
    errors: list[str]  # "p<id>: <error>", and processes that never reported
    t0: float


def race(
    n: int,
    contender: Callable[[int, Window, Any], None],
    *,
    timeout: float,
    ready_timeout: float = 60.0,
    lead: float = 0.05,
    at_start: Callable[[], object] | None = None,
    at_end: Callable[[], object] | None = None,
) -> Race:
    """Fork ``n`` contenders ``contender(proc_id, window, out)`` (see :func:`contend`), start
    them together ``lead`` s after all are ready, and collect their reports.

    Args:
        timeout: seconds from the start until every report must be in.
        ready_timeout: seconds they may take to build and warm up.
        at_start: called once all are ready, right before ``t0`` is set (a snapshot of the
            server's counters).
        at_end: called once every report is in (or the time is up), before the contenders
            are stopped.
    """
    window, out = Window(n), CTX.Queue()
    procs = [CTX.Process(target=contender, args=(i, window, out), daemon=True) for i in range(n)]
    payloads: dict[int, Any] = {}
    errors: list[str] = []
    try:
        for proc in procs:
            proc.start()
        window.ready.wait(timeout=ready_timeout)
        if at_start is not None:
            at_start()
        window.t0.value = time.monotonic() + lead
        window.start.set()
        deadline = time.monotonic() + timeout
        while len(payloads) < n:
            try:
                proc_id, payload, error = out.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                errors.append(f"{n - len(payloads)} process(es) hung for {timeout:g} s")
                break
            payloads[proc_id] = payload
            if error:
                errors.append(f"p{proc_id}: {error}")
        if at_end is not None:
            at_end()
    finally:
        for proc in procs:
            stop_process(proc)
    return Race(payloads, errors, window.t0.value)


def race_on(
    client: redis.Redis,
    n: int,
    contender: Callable[[int, Window, Any], None],
    *,
    timeout: float,
    **options: Any,
) -> tuple[Race, Counter[str]]:
    """:func:`race`, and the commands the server behind ``client`` ran meanwhile: INFO
    commandstats once all are ready and once every report is in (INFO itself left out)."""
    snapshots: list[Counter[str]] = []
    run = race(
        n,
        contender,
        timeout=timeout,
        at_start=lambda: snapshots.append(command_calls(client)),
        at_end=lambda: snapshots.append(command_calls(client)),
        **options,
    )
    return run, snapshots[1] - snapshots[0]


def hold_loop(
    acquire: Callable[[], Any],
    release: Callable[[], Any],
    t0: float,
    seconds: float,
    records: list[Record],
    hold: float | Callable[[], object] = 0.0,
) -> None:
    """From ``t0`` until ``t0 + seconds``: acquire (blocking), hold, release; one record per
    acquisition. ``hold``: seconds to sleep, or a call that holds (and checks). An acquire that
    comes back without the resource raises RuntimeError."""
    time.sleep(max(0.0, t0 - time.monotonic()))
    deadline = t0 + seconds
    while (t_request := time.monotonic()) < deadline:
        if not (result := acquire()):
            raise RuntimeError(f"blocking acquire returned {result!r}")
        t_acquired = time.monotonic()
        if callable(hold):
            hold()
        elif hold:
            time.sleep(hold)
        t_release_start = time.monotonic()
        release()
        records.append((t_request, t_acquired, t_release_start))


# --- what the records say --------------------------------------------------------------------


@dataclass(frozen=True)
class Share:
    """How the acquisitions that returned inside one run's window were shared out."""

    acq_per_s: float
    fairness: float  # min/max acquisitions per process, 1.0 = perfectly even
    lowest: int
    highest: int


def share(counts: Sequence[int], seconds: float) -> Share:
    """``counts``: acquisitions per process inside a window of ``seconds``."""
    top = max(counts)
    return Share(sum(counts) / seconds, min(counts) / top if top else 0.0, min(counts), top)


def in_window(records: Iterable[Record], window_end: float) -> int:
    """Acquisitions that returned by ``window_end``."""
    return sum(1 for r in records if r[1] <= window_end)


def count_starved(
    per_proc: Sequence[Sequence[Record]], limit: float, counted: Sequence[int] | None = None
) -> int:
    """Processes with a single wait over ``limit`` s, or with no acquisition (none at all; with
    ``counted``, per process, none counted)."""
    starved = 0
    for i, records in enumerate(per_proc):
        none = not (counted[i] if counted is not None else records)
        if none or max(acq - req for req, acq, _ in records) > limit:
            starved += 1
    return starved


def count_overlaps(sections: Iterable[tuple[float, float]]) -> int:
    """Critical sections ``(start, end)``, sorted by start, that start before an earlier one
    ended: anything but 0 means the resource let two holders in."""
    overlaps, latest_end = 0, -math.inf
    for start, end in sections:
        if start < latest_end:
            overlaps += 1
        latest_end = max(latest_end, end)
    return overlaps


def rate_cell(shares: Iterable[Share]) -> str:
    """Acquisitions/s of the median round."""
    return f"{statistics.median(s.acq_per_s for s in shares):,.0f}"


def fairness_cell(shares: Sequence[Share]) -> str:
    """The median round's fairness, and the worst round's with its two counts:
    ``0.93 (0.88: 120/136)``."""
    worst = min(shares, key=lambda s: s.fairness)
    return (
        f"{statistics.median(s.fairness for s in shares):.2f} "
        f"({worst.fairness:.2f}: {worst.lowest}/{worst.highest})"
    )


def share_cells(shares: Sequence[Share], ratio: str) -> list[str]:
    """The first cells of a contended row after its label: acquisitions/s of the median round,
    ``ratio`` (to a reference, over the rounds), fairness (see :func:`fairness_cell`)."""
    return [rate_cell(shares), ratio, fairness_cell(shares)]


def rounds_of(per_round: Sequence[Mapping[str, T]], label: str) -> list[T]:
    """The rounds ``label`` has a result in."""
    return [r[label] for r in per_round if label in r]


class SendCounter:
    """Counts the sends this process makes through redis-py: its round trips.

    Commands run inside Lua scripts are not sent, so they are not counted here
    (INFO commandstats counts them). ``itertools.count``'s ``next`` is atomic
    under the GIL, so pool threads (Redlock's) count safely. Installed only in
    benchmark children.
    """

    _counter = itertools.count()

    @classmethod
    def install(cls, on: type = redis.connection.Connection, skip_port: int | None = None) -> None:
        """Count every ``send_packed_command`` of ``on`` (and its subclasses), except those
        to ``skip_port`` (an overlap checker's server)."""
        original = on.send_packed_command

        def counted(conn: Any, *args: Any, **kwargs: Any) -> Any:
            if skip_port is None or getattr(conn, "port", None) != skip_port:
                next(cls._counter)
            return original(conn, *args, **kwargs)

        on.send_packed_command = counted  # type: ignore[attr-defined]

    @classmethod
    def reset(cls) -> None:
        cls._counter = itertools.count()

    @classmethod
    def read(cls) -> int:
        """The sends since :meth:`reset`."""
        sends = next(cls._counter)
        cls._counter = itertools.count(sends)  # the read itself is no send
        return sends
