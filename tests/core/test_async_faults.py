"""``redis.asyncio`` clients under connection faults and cancellations.

- A pooled connection that Redis closed while it sat idle (``CLIENT KILL``,
  the server's ``timeout``, a proxy) is replaced before the next call is sent
  on it: that call, a batch, a BLPOP wait, a queued waiter's re-check all
  succeed, as they do with a sync client. (redis-py's asyncio pool skips its
  own check on checkout by default.) The kill is made with a sync client, so
  the event loop has not read the close yet when the next call is made.
- A cancellation that lands inside redis-py's read (which turns it into a
  "Timeout reading" error) is a cancellation: ``aacquire()`` raises
  ``CancelledError`` and gives its place back, and no "ghost" waiter is
  granted the hold after the holder releases.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest
import redis
import redis.asyncio

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.commands import ablpop, acommand, acommands
from django_redcoord.core.transport.drivers import Blocking, Command, Within, arun, run


def _kill_normal_clients(url: str) -> int:
    """CLIENT KILL every normal client but this one (blocking the event loop meanwhile, on
    purpose)."""
    killer = redis.Redis.from_url(url)
    try:
        return killer.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    finally:
        killer.close()


async def _call(kind: str, client, n: int):
    if kind == "command":
        return await acommand(client, "SET", f"k{n}", "v", operation="set")
    if kind == "batch":
        return await acommands(client, (("SET", f"b{n}", "v"), ("GET", f"b{n}")), operation="batch")
    if kind == "blpop":
        return await ablpop(client, [f"q{n}"], 0.01, operation="blpop")
    if kind == "lock":
        lock = Lock(f"l{n}", client=client, ttl=5)
        assert await lock.aacquire(wait=0)
        return await lock.arelease()
    if kind == "semaphore":
        sem = Semaphore(f"s{n}", permits=2, client=client, ttl=5)
        assert await sem.aacquire(wait=0)
        return await sem.arelease()
    if kind == "rwlock":
        write = ReadWriteLock(f"rw{n}", client=client).write()
        assert await write.aacquire(wait=0)
        return await write.arelease()
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["command", "batch", "blpop", "lock", "semaphore", "rwlock"])
def test_a_call_after_its_idle_connection_was_killed_reconnects(redis_url, kind):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        try:
            await asyncio.gather(
                *(_call(kind, client, n) for n in range(3))
            )  # a few pooled connections
            for round_ in range(3):
                assert _kill_normal_clients(redis_url) >= 1
                await _call(
                    kind, client, round_
                )  # raised CoordinationUnavailable ("Connection closed by server")
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_call_after_the_server_closed_an_idle_connection_reconnects(redis_url, redis_client):
    """Redis ``timeout 1``: idle clients are closed by the server; the next call must not fail."""

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        try:
            assert await Lock("a", client=client).aacquire(wait=0)
            redis_client.config_set("timeout", 1)
            try:
                await asyncio.sleep(3)  # the server closes our idle connection meanwhile
                assert await Lock("b", client=client).aacquire(wait=0)
            finally:
                redis_client.config_set("timeout", 0)
        finally:
            await client.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("primitive", ["lock", "semaphore", "rwlock"])
def test_a_queued_waiter_keeps_its_place_through_client_kills(redis_url, primitive):
    """Kills while an async waiter is queued (its BLPOP, or its idle connection between two
    chunks) never make ``aacquire()`` raise: it is granted once the holder releases."""

    def make(client):
        if primitive == "lock":
            return Lock("x", client=client, ttl=20, wait=15)
        if primitive == "semaphore":
            return Semaphore("x", permits=1, client=client, ttl=20, wait=15)
        return ReadWriteLock("x", client=client, ttl=20, wait=15).write()

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=1, socket_connect_timeout=1)
        try:
            holder = make(client)
            assert await holder.aacquire()
            waiter = make(client)
            task = asyncio.ensure_future(waiter.aacquire())
            # the waiter blocks in 0.5 s chunks (below socket_timeout) and re-checks between two:
            # kills about when a chunk ends land on a connection the re-check is about to use
            for _ in range(6):
                await asyncio.sleep(0.5)
                _kill_normal_clients(redis_url)
                assert not task.done(), task.exception()
            await holder.arelease()
            started = time.monotonic()
            assert await asyncio.wait_for(task, 10) is True
            assert time.monotonic() - started < 5
            await waiter.arelease()
        finally:
            await client.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("primitive", ["lock", "semaphore", "rwlock"])
def test_cancelled_waits_raise_cancelled_error_and_leave_no_ghost(redis_url, primitive):
    """~300 cancellations at 0-20 ms of a queued ``aacquire()`` against a held hold: every one
    raises CancelledError (none an outage), and after the holder's release nobody holds it."""

    def make(client):
        if primitive == "lock":
            return Lock("g", client=client, ttl=60, wait=5)
        if primitive == "semaphore":
            return Semaphore("g", permits=1, client=client, ttl=60, wait=5)
        return ReadWriteLock("g", client=client, ttl=60)

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            holder = make(client)
            holder_hold = holder.write() if primitive == "rwlock" else holder
            assert await holder_hold.aacquire()
            rng = random.Random(11)
            outcomes: dict[str, int] = {}
            for _ in range(30):
                tasks = []
                for _ in range(10):
                    waiter = make(client)
                    hold = waiter.read() if primitive == "rwlock" else waiter
                    tasks.append(
                        (
                            asyncio.ensure_future(hold.aacquire(wait=5)),
                            rng.choice((0, 0.001, 0.002, 0.005, 0.01, 0.02)),
                        )
                    )
                await asyncio.gather(*(_cancel_after(task, delay) for task, delay in tasks))
                for task, _ in tasks:
                    try:
                        outcome = f"returned {task.result()!r}"
                    except asyncio.CancelledError:
                        outcome = "cancelled"
                    except Exception as exc:  # noqa: BLE001 - counted and reported below
                        outcome = f"{type(exc).__name__}: {exc}"
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
            assert outcomes == {"cancelled": 300}, outcomes
            await holder_hold.arelease()
            await asyncio.sleep(0.3)  # a ghost waiter would be handed the hold now
            if primitive == "lock":
                assert await make(client).aholder() is None
            elif primitive == "semaphore":
                assert await make(client).aholders() == []
            else:
                assert (await make(client).aholders())["holders"] == []
        finally:
            await client.aclose()

    asyncio.run(scenario())


async def _cancel_after(task: asyncio.Task, delay: float) -> None:
    await asyncio.sleep(delay)
    task.cancel()
    await asyncio.wait([task])


def _bounded_wait_steps(deadline: float, log: list):
    """What a broadcast wait does on a paused server: a blocked read, a last look, then
    unregistering."""
    yield Within(deadline)
    for step in (
        Blocking("XREAD", "BLOCK", 900, "STREAMS", "wake", "$", operation="blocked read"),
        Command("GET", "state", operation="last look"),
        Command("DEL", "place", operation="unregister"),
    ):
        started = time.monotonic()
        try:
            yield step
            log.append((step.operation, "answered"))
        except CoordinationUnavailable as exc:
            log.append((step.operation, round(time.monotonic() - started, 2), exc.sent))
    return log


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_wait_on_a_paused_server_ends_by_its_deadline_plus_one_socket_timeout(
    redis_servers, kind
):
    """Each round trip would wait out a whole socket timeout (2 s here: 6 s in all); bounded by
    ``Within``, the three end together by the deadline (1 s) plus one socket timeout."""
    (server,) = redis_servers(1)
    log: list = []
    took: list[float] = []

    def operation():
        started = time.monotonic()
        if kind == "sync":
            client = redis.Redis.from_url(server.url, socket_timeout=2)
            try:
                run(client, _bounded_wait_steps(started + 1, log))
            finally:
                client.close()
        else:

            async def main():
                client = redis.asyncio.Redis.from_url(server.url, socket_timeout=2)
                try:
                    await arun(client, _bounded_wait_steps(started + 1, log))
                finally:
                    await client.aclose()

            asyncio.run(main())
        took.append(time.monotonic() - started)

    thread = threading.Thread(target=operation)
    thread.start()
    time.sleep(0.3)  # the blocked read is sent
    server.pause()
    try:
        thread.join(15)
    finally:
        server.resume()
    assert took, "the wait did not end"
    assert took[0] < 1 + 2 + 0.8, (took, log)  # (was 6 s: three socket timeouts)
    assert [entry[0] for entry in log] == ["blocked read", "last look", "unregister"], log
    assert log[-1][2] is False  # nothing left for it: not sent


def test_a_cluster_call_after_its_idle_node_connections_were_killed_reconnects(cluster_topology):
    """The asyncio Cluster path (a node's own connections, ``_aon_node``): the same check."""
    from django_redcoord.core.transport.clients import async_cluster_client

    cluster_topology.flush()

    async def scenario():
        client = async_cluster_client(cluster_topology.config)
        try:
            names = [f"c{n}" for n in range(6)]  # spread over the primaries
            for name in names:
                lock = Lock(name, client=client, ttl=5)
                assert await lock.aacquire(wait=0)
                await lock.arelease()
            for round_ in range(2):
                for node in cluster_topology.primaries():
                    _kill_normal_clients(node.url)
                for name in names:
                    lock = Lock(name, client=client, ttl=5)
                    assert await lock.aacquire(wait=0), (round_, name)
                    await lock.arelease()
        finally:
            await client.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("primitive", ["lock", "semaphore", "rwlock"])
def test_a_storm_of_timed_out_async_with_blocks_leaves_nothing_held(redis_url, primitive):
    """600 ``async with`` blocks on 3 names under ``asyncio.timeout`` of 0-60 ms: the
    cancellation lands anywhere (queued, granted, in the body, in the release). Afterwards every
    name is free at once (a release cut off before its script was sent left one held by
    nobody for its TTL)."""

    def make(client, name):
        if primitive == "lock":
            return Lock(name, client=client, ttl=30, wait=5)
        if primitive == "semaphore":
            return Semaphore(name, permits=1, client=client, ttl=30, wait=5)
        return ReadWriteLock(name, client=client, ttl=30, wait=5).write()

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        rng = random.Random(7)
        inside: dict[str, int] = {}
        most = 0

        async def block(name: str, limit: float) -> None:
            nonlocal most
            try:
                async with asyncio.timeout(limit), make(client, name):
                    inside[name] = inside.get(name, 0) + 1
                    most = max(most, inside[name])
                    try:
                        await asyncio.sleep(rng.random() * 0.004)
                    finally:
                        inside[name] -= 1
            except TimeoutError:
                pass

        try:
            for _ in range(6):
                names = [f"storm{rng.randrange(3)}" for _ in range(100)]
                await asyncio.gather(*(block(n, rng.random() * 0.06) for n in names))
            await asyncio.sleep(0.2)
            for i in range(3):
                hold = make(client, f"storm{i}")
                assert await hold.aacquire(wait=0), f"storm{i} was left held after the storm"
                await hold.arelease()
        finally:
            await client.aclose()
        return most

    assert asyncio.run(scenario()) == 1  # never two blocks of one name at once


def _make_hold(primitive: str, client, name: str, wait: float):
    if primitive == "lock":
        return Lock(name, client=client, ttl=30, wait=wait)
    if primitive == "semaphore":
        return Semaphore(name, 1, client=client, ttl=30, wait=wait)
    return ReadWriteLock(name, client=client, ttl=30, wait=wait).write()


@pytest.mark.parametrize("clients", ["asyncio only", "from settings"])
@pytest.mark.parametrize("primitive", ["lock", "semaphore", "rwlock"])
def test_an_acquire_cancelled_on_a_paused_server_leaves_nothing_held_once_it_answers(
    redis_servers, settings, primitive, clients
):
    """``asyncio.timeout`` cancels an acquire while the server is paused; its give-back times out
    too. The server runs the acquire it had read once resumed: before, that grant stayed held by
    nobody for its whole TTL (30 s). It is given back once Redis answers: by the settling thread
    for a hold with the configured clients, by a task of the loop for one given an asyncio
    client only."""
    (server,) = redis_servers(1)
    settings.REDCOORD = {"URL": server.url, "SOCKET_TIMEOUT": 0.5, "KEY_PREFIX": "cancelpause"}

    async def scenario() -> None:
        aclient = redis.asyncio.Redis.from_url(server.url, socket_timeout=0.5)
        given = aclient if clients == "asyncio only" else None
        try:
            warm = _make_hold(primitive, given, "paused", 0)
            assert await warm.aacquire()
            await warm.arelease()
            server.pause()
            try:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.2):
                        async with _make_hold(primitive, given, "paused", 0):
                            pass
            finally:
                server.resume()
            deadline = time.monotonic() + 4.0
            while True:
                fresh = _make_hold(primitive, given, "paused", 0)
                if await fresh.aacquire():
                    await fresh.arelease()
                    return
                assert time.monotonic() < deadline, "the grant the paused server ran is held"
                await asyncio.sleep(0.1)
        finally:
            await aclient.aclose()

    asyncio.run(scenario())
