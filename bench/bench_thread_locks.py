"""Threads of one process contending on one lock name (a gthread worker's threads).

Against a throwaway redis-server (started here, no persistence), in
interleaved rounds (``--rounds``, default 3, of ``--seconds``, default 3,
each implementation once per round, alternating order; the median round is
shown). ``--threads`` (default 16) threads of this process share one plain
``redis.Redis`` (redis-py's default pool) and loop: acquire (blocking), hold
1 ms (``time.sleep``), release. Rows:

* ``ours``: ``with Lock(name, client=...)``, the default: a waiter behind a
  hold of its own process waits in-process and the release hands it the lock
  there (core/transport/nearby.py);
* ``ours, waiting in Redis``: the same with in-process hand-offs off, as
  behind holders of another process (every waiter blocks through the
  process's wake hub, every hand-off is pushed onto a wake list);
* ``redis-py Lock`` (its default: polls every 0.1 s) and ``python-redis-lock``
  (a ``BLPOP`` on one signal list per name).

Reported: acquisitions/s, fairness (min/max acquisitions per thread, 1.0 =
even), handoff p50/p99 (next acquire-return minus previous release-start,
between different threads), Redis commands per acquisition (INFO
commandstats, a script's own commands included), overlaps (anything but 0
means two holders at once) and errors. Left out: processes contending
(``bench_locks.py``), the GIL's share (every row runs under it alike).

Run from the repository root::

    .venv/bin/python bench/bench_thread_locks.py [--seconds N] [--rounds R] [--threads N] [--quick]
"""

from __future__ import annotations

import contextlib
import itertools
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis
from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer

from django_redcoord.core.locks import Lock
from django_redcoord.core.transport import nearby

try:
    import redis_lock
except ImportError:  # a peer that is not installed is a row saying so
    redis_lock = None


@contextlib.contextmanager
def _in_process(on: bool) -> Iterator[None]:
    saved, nearby.enabled = nearby.enabled, on
    try:
        yield
    finally:
        nearby.enabled = saved


def ours(client: redis.Redis, name: str) -> Any:
    return Lock(name, client=client, prefix="bench", ttl=10, wait=None)


def redis_py(client: redis.Redis, name: str) -> Any:
    return client.lock(name, timeout=10)


class _PythonRedisLock:
    def __init__(self, client: redis.Redis, name: str) -> None:
        if redis_lock is None:
            raise ModuleNotFoundError("not installed (python-redis-lock)")
        self.lock = redis_lock.Lock(client, name, expire=10)

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()


#: row -> (how one thread makes its lock, in-process hand-offs on)
IMPLEMENTATIONS: dict[str, tuple[Callable[[redis.Redis, str], Any], bool]] = {
    "ours": (ours, True),
    "ours, waiting in Redis": (ours, False),
    "redis-py Lock": (redis_py, True),
    "python-redis-lock": (_PythonRedisLock, True),
}


def _commands(client: redis.Redis) -> int:
    stats = client.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k != "cmdstat_info")


def contend(url: str, make: Callable[..., Any], name: str, threads: int, seconds: float) -> dict:
    client = redis.Redis.from_url(url, socket_timeout=15)
    admin = redis.Redis.from_url(url)
    counts = [0] * threads
    errors: list[str] = []
    events: list[tuple[float, float, int]] = []  # (acquired, release_start, who)
    inside = [0]
    guard = threading.Lock()
    before = _commands(admin)
    stop = time.monotonic() + seconds

    def party(i: int) -> None:
        try:
            lock = make(client, name)
        except Exception as exc:  # (a name the implementation refuses: an error, not a stall)
            errors.append(f"{type(exc).__name__}: {exc}")
            return
        while time.monotonic() < stop:
            try:
                with lock:
                    got = time.monotonic()
                    with guard:
                        inside[0] += 1
                        overlap = inside[0] > 1
                    time.sleep(0.001)
                    with guard:
                        inside[0] -= 1
                        events.append((got, time.monotonic(), i, overlap))
                    if got < stop:
                        counts[i] += 1
            except Exception as exc:  # counted, and the party goes on
                errors.append(type(exc).__name__)
                time.sleep(0.01)

    started = time.monotonic()
    workers = [threading.Thread(target=party, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = min(time.monotonic(), stop) - started
    commands = _commands(admin) - before
    admin.close()
    client.close()
    events.sort()
    handoffs = [(b[0] - a[1]) * 1e6 for a, b in itertools.pairwise(events) if a[2] != b[2]]
    quantiles = statistics.quantiles(handoffs, n=100) if len(handoffs) > 2 else [0.0] * 99
    return {
        "acq/s": sum(counts) / elapsed,
        "fairness": min(counts) / max(counts) if max(counts) else 0.0,
        "p50": quantiles[49],
        "p99": quantiles[98],
        "cmds/acq": commands / max(1, len(events)),
        "overlaps": sum(1 for e in events if e[3]),
        "errors": len(errors),
        "first errors": errors[:2],
    }


def main() -> None:
    cli = Options(__doc__, quick="smoke run: 1 round of 0.5 s, 4 threads")
    cli.number("--seconds", 3.0, 0.5, "per run", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.number("--threads", 16, 4, "threads", least=1)
    options = cli.parse()
    results: dict[str, list[dict]] = {name: [] for name in IMPLEMENTATIONS}
    missing: dict[str, str] = {}
    with RedisServer() as server:
        for r in range(int(options.rounds)):
            order = list(IMPLEMENTATIONS) if r % 2 == 0 else list(reversed(IMPLEMENTATIONS))
            for impl in order:
                make, on = IMPLEMENTATIONS[impl]
                try:
                    make(redis.Redis.from_url(server.url), "probe")
                except ModuleNotFoundError as exc:
                    missing[impl] = str(exc)
                    continue
                with _in_process(on):
                    name = f"threads:{list(IMPLEMENTATIONS).index(impl)}:{r}"
                    row = contend(server.url, make, name, int(options.threads), options.seconds)
                results[impl].append(row)
                print(f"round {r + 1} {impl}: {row['acq/s']:.0f} acq/s", file=sys.stderr)
    base_rows = results["redis-py Lock"]
    base = statistics.median(row["acq/s"] for row in base_rows) if base_rows else 1.0
    print(
        f"\n{int(options.threads)} threads of one process, one lock, hold 1 ms, redis-py's default "
        f"pool; median of {int(options.rounds)} rounds of {options.seconds:g} s\n"
    )
    print(
        "| | acq/s (vs redis-py Lock) | fairness | handoff p50 / p99 µs | cmds/acq | overlaps | "
        "errors |"
    )
    print("|---|---|---|---|---|---|---|")
    for impl, rows in results.items():
        if impl in missing:
            print(f"| {impl} | {missing[impl]} | | | | | |")
            continue
        mid = sorted(rows, key=lambda row: row["acq/s"])[len(rows) // 2]
        if not mid["acq/s"]:
            print(
                f"| {impl} | ERROR: no acquisition ({'; '.join(mid['first errors'])}) | | | | | |"
            )
            continue
        print(
            f"| {impl} | {mid['acq/s']:,.0f} ({mid['acq/s'] / base:.2f}×) | {mid['fairness']:.2f} "
            f"| {mid['p50']:,.0f} / {mid['p99']:,.0f} | {mid['cmds/acq']:.1f} | "
            f"{sum(r['overlaps'] for r in rows)} | {sum(r['errors'] for r in rows)} |"
        )


if __name__ == "__main__":
    run_main(main)
