"""Bounded barging against strict FIFO hand-off: a measured design (issue 28, item 2).

N processes (4, then 16) loop on one lock name: acquire (blocking), hold
1 ms, release, as ``bench_locks.py`` part B does (same harness, same
throwaway redis-server). Rows:

* ``ours, FIFO``: ``Lock`` as shipped: every release hands the lock to the
  waiter queued longest;
* ``ours, barging < B ms``: the same scripts with Go's rule (``_barging.py``,
  not shipped): while the oldest waiter has waited less than B ms, a release
  leaves the lock free (and tells that waiter to look again) and any caller
  may take it; past B the hand-off is strict;
* ``redis-py Lock`` and ``python-redis-lock``, the peers the target is set
  against (redis-py's polls every 0.1 s; python-redis-lock blocks on a list).

Reported per row (``--rounds`` interleaved rounds of ``--seconds``, median
round; ratios within each round): acquisitions/s and the ratio to the faster
of the two peers in that round, fairness (min/max acquisitions per process,
the worst round), acquire-wait p50/p99 (request to grant, every acquisition
of the median round), re-acquisitions (grants to the process that held just
before), Redis commands per acquisition and overlaps (0 or the lock failed).
The target (issue 28): at least 1.15x the faster peer at 4 and 16
processes with fairness >= 0.9 and an acquire-wait p99 within 2x FIFO's.

Run from the repository root::

    .venv/bin/python bench/bench_barging.py [--seconds N] [--rounds R] [--quick]
"""

from __future__ import annotations

import statistics
import sys
from itertools import pairwise
from typing import Any

import bench_locks
from _barging import barging_lock_class
from bench_locks import Contender, Impl, run_contended
from support.cli import Options
from support.processes import run_main
from support.servers import HOST, RedisServer
from support.tables import percentile

from django_redcoord.core.transport.clients import client_from_url

BOUNDS_MS = (1, 5, 20)
PEERS = ("redis-py Lock", "python-redis-lock")


def _barging_builder(bound_ms: int) -> Any:
    cls = barging_lock_class(bound_ms)

    def build(port: int, name: str, **_: Any) -> Contender:
        client = client_from_url(f"redis://{HOST}:{port}/0")
        lock = cls(name, ttl=bench_locks.TTL, wait=None, client=client, prefix="bench")
        return Contender(client, lock.acquire, lock.release)

    return build


IMPLS = (
    Impl("ours, FIFO", bench_locks._build_ours),
    *(Impl(f"ours, barging < {b} ms", _barging_builder(b)) for b in BOUNDS_MS),
    Impl("redis-py Lock", bench_locks._redis_py_builder(0.1)),
    Impl("python-redis-lock", bench_locks._build_python_redis_lock),
)


def _stats(run: Any, commands: Any, n: int, seconds: float) -> dict[str, Any]:
    per_proc = [run.payloads.get(i, ([], 0))[0] for i in range(n)]
    window = run.t0 + seconds
    counts = [sum(1 for r in records if r[1] <= window) for records in per_proc]
    merged = sorted(
        (r[1], r[2], r[0], pid) for pid, records in enumerate(per_proc) for r in records
    )
    waits = sorted(r[0] - r[2] for r in merged)
    again = sum(1 for a, b in pairwise(merged) if a[3] == b[3])
    overlaps = sum(1 for a, b in pairwise(merged) if b[0] < a[1])
    return {
        "acq/s": sum(counts) / seconds,
        "fairness": min(counts) / max(counts) if max(counts) else 0.0,
        "wait p50": percentile(waits, 50) * 1e3 if waits else 0.0,
        "wait p99": percentile(waits, 99) * 1e3 if waits else 0.0,
        "again": again / max(1, len(merged) - 1),
        "cmds/acq": sum(commands.values()) / max(1, len(merged)),
        "overlaps": overlaps,
    }


def table(port: int, n: int, seconds: float, rounds: int) -> None:
    results: dict[str, list[dict[str, Any]]] = {impl.label: [] for impl in IMPLS}
    errors: dict[str, list[str]] = {impl.label: [] for impl in IMPLS}
    for r in range(rounds):
        for impl in IMPLS if r % 2 == 0 else IMPLS[::-1]:
            try:
                run, commands = run_contended(impl, port, n, seconds)
                results[impl.label].append(_stats(run, commands, n, seconds))
                errors[impl.label].extend(run.errors)
            except Exception as exc:
                errors[impl.label].append(f"{type(exc).__name__}: {exc}")
            print(f"N={n} round {r + 1} {impl.label} done", file=sys.stderr)
    best = [
        max(results[p][i]["acq/s"] for p in PEERS if len(results[p]) > i)
        for i in range(min((len(results[p]) for p in PEERS), default=0))
    ]
    print(f"\n## {n} processes, one lock, hold 1 ms, {rounds} rounds x {seconds:g} s\n")
    print(
        "| | acq/s (vs faster peer) | fairness (worst) | acquire wait p50 / p99 ms | "
        "re-acquired | cmds/acq | overlaps |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, rows in results.items():
        if not rows:
            print(f"| {label} | ERROR: {'; '.join(errors[label])[:200]} | | | | | |")
            continue
        ratios = [row["acq/s"] / b for row, b in zip(rows, best, strict=False) if b]
        mid = sorted(rows, key=lambda row: row["acq/s"])[len(rows) // 2]
        ratio = f"{statistics.median(ratios):.2f}×" if ratios else "n/a"
        print(
            f"| {label} | {mid['acq/s']:,.0f} ({ratio}) | "
            f"{min(row['fairness'] for row in rows):.2f} | "
            f"{mid['wait p50']:.1f} / {mid['wait p99']:.1f} | {mid['again']:.0%} | "
            f"{mid['cmds/acq']:.1f} | {sum(row['overlaps'] for row in rows)} |"
        )


def main() -> None:
    cli = Options(__doc__, quick="smoke run: 1 round of 0.5 s at 4 processes")
    cli.number("--seconds", 3.0, 0.5, "per run", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    options = cli.parse()
    with RedisServer() as server:
        for n in (4,) if options.quick else (4, 16):
            table(server.port, n, options.seconds, int(options.rounds))


if __name__ == "__main__":
    run_main(main)
