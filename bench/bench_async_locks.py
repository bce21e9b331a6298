"""Async locks: 100 coroutines of one event loop contending on one lock name.

Against a throwaway redis-server (started here, no persistence), in
interleaved rounds (``--rounds``, default 3, of ``--seconds``, default 3,
each implementation once per round, alternating order; the median round is
shown):

* ``ours``: ``async with django_redcoord.Lock(name, client=redis.asyncio.Redis)``
  (FIFO queue in Redis, handoff pushed onto the next waiter's list, which the
  process's wake hub pops: at most four BLPOPs for every waiter of the loop)
* ``redis-py asyncio Lock``: ``client.lock(name, timeout=10)``, its defaults
  (it polls every 0.1 s)
* ``redis-py asyncio Lock sleep=0.001``: the same polling every 1 ms
* two rows that are not Redis locks, the ceilings of this loop: an
  ``asyncio.Lock`` (no Redis at all), and an ``asyncio.Lock`` with one
  ``PING`` round trip in each acquire and each release (the least a lock
  that queues each acquisition in Redis and hands on in its release sends).
  Both hand on FIFO; every coroutine's 1 ms hold is an ``asyncio.sleep``,
  which the loop ends at its first turn after 1 ms (its ``epoll`` timeout is
  rounded up to a whole millisecond: a round trip's reply landing during a
  hold lengthens it).

Each coroutine loops: acquire (blocking), hold 1 ms (``asyncio.sleep``),
release. Reported: acquisitions/s, fairness (min/max acquisitions per
coroutine, 1.0 = even), handoff p50/p99 (next acquire-return minus previous
release-start, for consecutive grants to different coroutines), commands per
acquisition from INFO commandstats (Redis counts the commands a Lua script
runs, so this is server work), and overlaps (critical sections that
overlap: anything but 0 means the lock let two holders in), errors (an
acquire or release that raised) and the most connections seen blocked at once
(the server's ``blocked_clients``, sampled every 50 ms: our waiters block
through the process's wake hub, at most four connections). Every implementation shares
one plain ``redis.asyncio.Redis`` per loop with redis-py's default pool (as
the README's example does); ``--max-connections N`` sizes it instead.

Run from the repository root::

    .venv/bin/python bench/bench_async_locks.py [--seconds N] [--rounds R] [--tasks N] [--quick]
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import time

import redis.asyncio
from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer

from django_redcoord.core.locks import Lock


class _LocalLock:
    """An asyncio.Lock per name, with ``pings`` PING round trips (0 or 1) per acquire and per
    release: not a Redis lock, the floor a lock queued in Redis cannot go below here."""

    locks: dict[str, asyncio.Lock] = {}

    def __init__(self, client, name: str, pings: int) -> None:
        self.client, self.pings = client, pings
        self.lock = self.locks.setdefault(name, asyncio.Lock())

    async def __aenter__(self) -> None:
        for _ in range(self.pings):
            await self.client.execute_command("PING")
        await self.lock.acquire()

    async def __aexit__(self, *exc) -> None:
        for _ in range(self.pings):
            await self.client.execute_command("PING")
        self.lock.release()


def ours(client, name):
    return Lock(name, client=client, prefix="bench", ttl=10, wait=None)


def redis_py(client, name):
    return client.lock(name, timeout=10)


def redis_py_fast(client, name):
    return client.lock(name, timeout=10, sleep=0.001)


IMPLEMENTATIONS = {
    "ours": ours,
    "redis-py asyncio Lock": redis_py,
    "redis-py asyncio Lock sleep=0.001": redis_py_fast,
    "asyncio.Lock, no Redis (not a Redis lock)": lambda client, name: _LocalLock(client, name, 0),
    "asyncio.Lock + a PING per acquire and per release (not a Redis lock)": (
        lambda client, name: _LocalLock(client, name, 1)
    ),
}


async def _commands(client) -> int:
    stats = await client.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k != "cmdstat_info")


async def contend(
    url: str, make, name: str, tasks: int, seconds: float, max_connections: int | None
) -> dict:
    sized = {"max_connections": max_connections} if max_connections else {}
    client = redis.asyncio.Redis.from_url(url, socket_timeout=15, **sized)
    admin = redis.Redis.from_url(url)
    counts = [0] * tasks
    errors: list[str] = []
    blocked = [0]
    events: list[tuple[float, float, int]] = []  # (acquired, release_start, who)
    stop = time.monotonic() + seconds
    before = await _commands(client)

    async def party(i: int) -> None:
        lock = make(client, name)
        while time.monotonic() < stop:
            try:
                async with lock:
                    got = time.monotonic()
                    await asyncio.sleep(0.001)
                    events.append((got, time.monotonic(), i))
                    if got < stop:
                        counts[i] += 1
            except Exception as exc:  # counted, and the party goes on
                errors.append(type(exc).__name__)
                await asyncio.sleep(0.01)

    def watch() -> None:
        while time.monotonic() < stop:
            blocked[0] = max(blocked[0], int(admin.info("clients")["blocked_clients"]))
            time.sleep(0.05)

    watcher = asyncio.get_running_loop().run_in_executor(None, watch)
    started = time.monotonic()
    await asyncio.gather(*(party(i) for i in range(tasks)))
    elapsed = min(time.monotonic(), stop) - started
    await watcher
    admin.close()
    commands = await _commands(client) - before
    await client.aclose()
    events.sort()
    overlaps = sum(1 for a, b in itertools.pairwise(events) if b[0] < a[1])
    handoffs = [(b[0] - a[1]) * 1e6 for a, b in itertools.pairwise(events) if a[2] != b[2]]
    total = sum(counts)
    quantiles = statistics.quantiles(handoffs, n=100) if len(handoffs) > 2 else [0.0] * 99
    return {
        "acq/s": total / elapsed,
        "fairness": min(counts) / max(counts) if max(counts) else 0.0,
        "p50": quantiles[49],
        "p99": quantiles[98],
        "cmds/acq": commands / max(1, len(events)),
        "overlaps": overlaps,
        "starved": sum(1 for c in counts if c == 0),
        "errors": len(errors),
        "blocked": blocked[0],
    }


def main() -> None:
    cli = Options(__doc__, quick="smoke run: 1 round of 0.5 s, 20 coroutines")
    cli.number("--seconds", 3.0, 0.5, "per run", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.number("--tasks", 100, 20, "coroutines", least=1)
    cli.number("--max-connections", 0, 0, "pool size (0: redis-py's default)", least=0)
    options = cli.parse()
    results: dict[str, list[dict]] = {name: [] for name in IMPLEMENTATIONS}
    with RedisServer() as server:
        for r in range(options.rounds):
            order = list(IMPLEMENTATIONS) if r % 2 == 0 else list(reversed(IMPLEMENTATIONS))
            for impl in order:
                row = asyncio.run(
                    contend(
                        server.url,
                        IMPLEMENTATIONS[impl],
                        f"{impl}:{r}",
                        options.tasks,
                        options.seconds,
                        int(options.max_connections) or None,
                    )
                )
                results[impl].append(row)
                print(f"round {r + 1} {impl}: {row['acq/s']:.0f} acq/s", file=sys.stderr)
    base = statistics.median(row["acq/s"] for row in results["redis-py asyncio Lock"]) or 1.0
    pool = (
        f"a pool of {int(options.max_connections)}"
        if options.max_connections
        else ("redis-py's default pool")
    )
    print(
        f"\n{options.tasks} coroutines, one loop, one lock, hold 1 ms, {pool}; median of "
        f"{options.rounds} rounds of {options.seconds:g} s\n"
    )
    print(
        "| | acq/s (vs redis-py asyncio Lock) | fairness | handoff p50 / p99 µs | cmds/acq | "
        "starved | overlaps | errors | blocked conns |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for impl, rows in results.items():
        mid = sorted(rows, key=lambda row: row["acq/s"])[len(rows) // 2]
        print(
            f"| {impl} | {mid['acq/s']:,.0f} ({mid['acq/s'] / base:.2f}×) | {mid['fairness']:.2f} "
            f"| {mid['p50']:,.0f} / {mid['p99']:,.0f} | {mid['cmds/acq']:.1f} | "
            f"{max(r['starved'] for r in rows)} | {sum(r['overlaps'] for r in rows)} | "
            f"{sum(r['errors'] for r in rows)} | {max(r['blocked'] for r in rows)} |"
        )


if __name__ == "__main__":
    run_main(main)
