"""Many waiters in one process: in-process hand-offs, the wake hub, a connection per waiter.

N coroutines of one event loop wait on M held locks (N/M each), on a plain
``redis.asyncio.Redis`` with redis-py's default pool of 100 connections (as
the README's example builds it). Then the M holders release, and each
waiter, granted in its turn, holds its lock for one pass of the loop and
releases it. Against a throwaway redis-server (started here, no
persistence). Rows:

* ``in-process hand-offs``: the default: a lock waiter whose one ahead is a
  hold of this process waits in-process, and the release hands it the lock
  there (core/transport/nearby.py); the first waiter of each lock, behind a
  holder of this process too, as well. Events still wait through the hub;
* ``wake hub``: in-process hand-offs off (as behind holders of another
  process): every waiter of the loop blocks through the hub's ``BLPOP``
  (core/transport/hub.py);
* ``a connection per waiter``: both off, each waiter blocking on a
  connection of the pool's share for waits (80 of the 100); the others sleep
  for one and look again every 0.25 s (how every wait ran before the hub).

Reported: grants/s from the first release to the last grant, the most
connections the server saw blocked at once (``blocked_clients``, sampled
every 50 ms while all wait), the errors raised, and Redis commands per grant
(INFO commandstats: the scripts' own commands included). A broadcast row
does the same with events: N coroutines wait on M events, then each event is
set once; reported is the time from the first ``set()`` until every waiter
returned. Left out: other processes (a hub serves one process: see
bench_locks.py for processes contending), Cluster (no hub there).

Run from the repository root::

    .venv/bin/python bench/bench_wake_hub.py [--waiters N] [--names M] [--quick]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time

import redis
import redis.asyncio
from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer

from django_redcoord.core.locks import Lock
from django_redcoord.core.signals import Event


def _commands(admin: redis.Redis) -> int:
    stats = admin.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k not in ("cmdstat_info",))


class _Blocked:
    """The most connections the server saw blocked at once, sampled every 50 ms."""

    def __init__(self, admin: redis.Redis) -> None:
        self.admin, self.most, self.stop = admin, 0, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            self.most = max(self.most, int(self.admin.info("clients")["blocked_clients"]))

    def close(self) -> int:
        self.stop.set()
        self.thread.join(5)
        return self.most


async def locks(url: str, waiters: int, names: int, tag: str) -> dict:
    client = redis.asyncio.Redis.from_url(url)
    admin = redis.Redis.from_url(url)
    holders = [Lock(f"hub-{tag}-{i}", client=client, ttl=60) for i in range(names)]
    for holder in holders:
        await holder.aacquire()
    errors: list[str] = []
    granted = [0]

    async def one(i: int) -> None:
        try:
            async with Lock(f"hub-{tag}-{i % names}", client=client, ttl=60, wait=600):
                granted[0] += 1
                await asyncio.sleep(0)
        except Exception as exc:  # counted
            errors.append(type(exc).__name__)

    tasks = [asyncio.create_task(one(i)) for i in range(waiters)]
    while sum(admin.llen(h.keys.queue) for h in holders) + len(errors) < waiters:
        await asyncio.sleep(0.05)
    watch = _Blocked(admin)
    await asyncio.sleep(0.3)
    before, started = _commands(admin), time.monotonic()
    for holder in holders:
        await holder.arelease()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    commands = _commands(admin) - before
    blocked = watch.close()
    admin.close()
    await client.aclose()
    return {
        "rate": granted[0] / elapsed,
        "blocked": blocked,
        "errors": len(errors),
        "cmds": commands / max(1, granted[0]),
        "done": granted[0],
    }


async def events(url: str, waiters: int, names: int, tag: str) -> dict:
    client = redis.asyncio.Redis.from_url(url)
    admin = redis.Redis.from_url(url)
    # (a set event stays set: each run its own names)
    evs = [Event(f"hub-{tag}-{i}", client=client) for i in range(names)]
    errors: list[str] = []

    async def one(i: int) -> bool:
        try:
            return await evs[i % names].await_(timeout=600)
        except Exception as exc:  # counted
            errors.append(type(exc).__name__)
            return False

    tasks = [asyncio.create_task(one(i)) for i in range(waiters)]
    while sum(admin.zcard(e.keys.waiters) for e in evs) + len(errors) < waiters:
        await asyncio.sleep(0.05)
    watch = _Blocked(admin)
    await asyncio.sleep(0.3)
    started = time.monotonic()
    for e in evs:
        await e.aset()
    results = await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    blocked = watch.close()
    admin.close()
    await client.aclose()
    return {"seconds": elapsed, "blocked": blocked, "errors": len(errors), "done": sum(results)}


@contextlib.contextmanager
def _waits_in_redis():
    from django_redcoord.core.transport import nearby

    nearby.enabled = False
    try:
        yield
    finally:
        nearby.enabled = True


@contextlib.contextmanager
def _without_hub():
    from django_redcoord.core.transport import hub

    saved = hub._direct_async_pool
    hub._direct_async_pool = lambda client: None
    try:
        yield
    finally:
        hub._direct_async_pool = saved


def main() -> None:
    cli = Options(__doc__, quick="smoke run: 200 waiters on 10 names")
    cli.number("--waiters", 1000, 200, "coroutines waiting", least=1)
    cli.number("--names", 10, 10, "locks (and events) they wait on", least=1)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    options = cli.parse()
    waiters, names = int(options.waiters), int(options.names)
    runs: dict[str, list[tuple[dict, dict]]] = {
        "in-process hand-offs": [],
        "wake hub": [],
        "a connection per waiter": [],
    }
    with RedisServer() as server:
        for r in range(int(options.rounds)):
            order = list(runs) if r % 2 == 0 else list(reversed(runs))
            for label in order:
                kind = list(runs).index(label)
                tag = f"{r}-{kind}"
                with contextlib.ExitStack() as stack:
                    if kind >= 1:
                        stack.enter_context(_waits_in_redis())
                    if kind == 2:
                        stack.enter_context(_without_hub())
                    held = asyncio.run(locks(server.url, waiters, names, tag))
                    told = asyncio.run(events(server.url, waiters, names, tag))
                print(
                    f"round {r + 1} {label}: {held['rate']:.0f} grants/s, events "
                    f"{told['seconds']:.2f} s",
                    file=sys.stderr,
                )
                runs[label].append((held, told))
    rows = []
    for label, results in runs.items():
        held = sorted((h for h, _ in results), key=lambda h: h["rate"])[len(results) // 2]
        told = sorted((t for _, t in results), key=lambda t: t["seconds"])[len(results) // 2]
        rows.append((label, held, told))
    print(
        f"\n{waiters:,} coroutines of one loop on {names} locks, then on {names} events; "
        f"redis-py's default pool (100); median of {int(options.rounds)} interleaved rounds\n"
    )
    print(
        "| | lock grants/s | blocked conns | errors | cmds/grant | all events' waiters woken in "
        "| blocked conns | errors |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, held, told in rows:
        print(
            f"| {label} | {held['rate']:,.0f} | {held['blocked']} | {held['errors']} | "
            f"{held['cmds']:.1f} | {told['seconds']:.2f} s | {told['blocked']} | "
            f"{told['errors']} |"
        )
        if held["done"] != waiters or told["done"] != waiters:
            print(
                f"| {label}: ERROR | {held['done']} of {waiters} granted, {told['done']} woken |"
                " | | | | | |"
            )


if __name__ == "__main__":
    run_main(main)
