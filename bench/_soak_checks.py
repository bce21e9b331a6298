"""The soak's own checkers (bench/soak.py), beside the fault suite's (tests/faults/harness.py).

Each returns what it measured and a list of violations (empty: the property
holds); tests/faults/test_soak_quick.py gives each a negative control.
Times are seconds since the epoch on this host's clock (one machine: the
producers, the workers and the Redis servers share it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: the oracle's list of task runs (bench/_soak_tasks.py writes it)
RAN_KEY = "soak:ran"
#: after a fault, a delivery that ran before it may run again if it started this recently
FAULT_REACH = 120.0


@dataclass(frozen=True)
class Run:
    rid: str
    pid: int
    started: float
    enqueued: float


@dataclass(frozen=True)
class Fault:
    """Something that may make a delivery run again: a worker SIGKILL (``pid`` set) or a server
    fault."""

    what: str
    at: float
    pid: int | None = None


def parse_runs(lines: Iterable[bytes | str]) -> dict[str, list[Run]]:
    """The oracle's ``soak:ran`` lines, grouped by result id, each group in the order the runs
    started."""
    found: dict[str, list[Run]] = {}
    for line in lines:
        text = line.decode() if isinstance(line, bytes) else line
        rid, pid, started, enqueued = text.split()
        found.setdefault(rid, []).append(Run(rid, int(pid), float(started), float(enqueued)))
    for runs in found.values():
        runs.sort(key=lambda r: r.started)
    return found


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def latencies(runs: dict[str, list[Run]]) -> list[float]:
    """Seconds from just before ``enqueue()`` to the start of each task's first run."""
    return [group[0].started - group[0].enqueued for group in runs.values()]


def attribute_duplicates(
    runs: dict[str, list[Run]], faults: Sequence[Fault], *, per_kill: int
) -> tuple[dict[str, int], list[str]]:
    """Give every extra run of a task a cause, or report it.

    A run after the first is explained by a worker SIGKILL when an earlier run
    of the task was made by the killed process, before the kill, and this run
    started after it (the killed worker ran it but never acknowledged it: its
    acknowledgement rides on its next claim). Otherwise by a server fault
    (a Redis SIGKILL, a Sentinel failover) between an earlier run and this one.
    Returns (extra runs per cause, violations): an extra run with no cause, and
    a worker kill explaining more than ``per_kill`` (its prefetch: what it can
    hold unacknowledged).
    """
    kills = {f.pid: f for f in faults if f.pid is not None}
    others = sorted((f for f in faults if f.pid is None), key=lambda f: f.at)
    counts: dict[str, int] = {}
    found = []
    for rid, group in runs.items():
        for k in range(1, len(group)):
            later = group[k]
            cause = None
            for earlier in group[:k]:
                kill = kills.get(earlier.pid)
                if kill is not None and earlier.started < kill.at <= later.started:
                    cause = kill
                    break
            if cause is None:
                cause = next(
                    (
                        f
                        for f in others
                        if any(
                            e.started < f.at <= later.started and f.at - e.started < FAULT_REACH
                            for e in group[:k]
                        )
                    ),
                    None,
                )
            if cause is None:
                found.append(
                    f"task {rid} ran again at {later.started:.3f} (pid {later.pid}) after "
                    + ", ".join(f"pid {e.pid} at {e.started:.3f}" for e in group[:k])
                    + " with no worker kill or server fault in between"
                )
                continue
            counts[cause.what] = counts.get(cause.what, 0) + 1
    for fault in kills.values():
        if counts.get(fault.what, 0) > per_kill:
            found.append(
                f"{fault.what} explains {counts[fault.what]} extra runs, more than its prefetch "
                f"{per_kill}"
            )
    return counts, found


def gcra_bound(window: float, limit: int, period: float, burst: int) -> int:
    """The most a GCRA policy admits in any span of ``window`` seconds: ``burst + floor(window /
    T)``, T = period / limit."""
    return burst + math.floor(window * limit / period + 1e-9)


def over_admitted(
    admitted: Sequence[tuple[float, float]],
    *,
    limit: int,
    period: float,
    burst: int,
    windows: Sequence[float],
) -> tuple[dict[float, tuple[int, int]], list[str]]:
    """Admissions counted in every span of each length in ``windows``, against the GCRA bound.

    ``admitted``: (just before the call, just after its reply) per admitted
    hit; the decision was taken on the server in between. A span starting at
    some hit's ``before`` counts the hits certainly inside it (both ends in
    it), so a count above the bound proves the limiter admitted too many.
    Returns ({window: (most counted, bound)}, violations).
    """
    ordered = sorted(admitted)
    seen: dict[float, tuple[int, int]] = {}
    found = []
    for window in windows:
        bound = gcra_bound(window, limit, period, burst)
        most = 0
        for i, (start, _) in enumerate(ordered):
            end = start + window
            count = 0
            for before, after in ordered[i:]:
                if before > end:
                    break
                count += after <= end
            if count > most:
                most = count
            if count > bound:
                found.append(
                    f"{count} hits admitted within {window:g} s from {start:.3f} (the policy "
                    f"allows {bound})"
                )
        seen[window] = (most, bound)
    return seen, found[:20]


def slow_reclaims(reclaims: Sequence[dict]) -> list[str]:
    """Worker kills whose in-flight messages went back to the queue later than their bound."""
    return [
        f"the messages of killed worker pid {r['pid']} were "
        + ("never requeued" if r["seconds"] is None else f"requeued after {r['seconds']:.1f} s")
        + f" (bound {r['bound']:g} s)"
        for r in reclaims
        if r["seconds"] is None or r["seconds"] > r["bound"]
    ]


def refused_fenced_writes(sections: Sequence[dict]) -> list[str]:
    """A holder that kept its lock had its entry write refused by the fenced resource: its
    token was not above every token written before (a token did not grow). (Its exit
    write repeats its own token, which a strict ``>`` refuses by design.)"""
    return [
        f"pid {s['pid']} token {s['token']} kept the lock but its fenced write was refused"
        for s in sections
        if not s["lost"] and not s["accepted_in"]
    ]
