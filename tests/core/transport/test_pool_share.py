"""The pool's shares hold for every checkout (issue 31, defect 14).

A pool of ``max_connections`` keeps a reserve for the calls that end waits
(a release, a hand-off, a waiter giving up its place); the waiters' own
calls (queueing, re-checks) and their blocking waits never take it. A call
the pool cannot admit waits for a connection; it never reads as an outage:
a pool that stays full is ``PoolExhausted`` (naming MAX_CONNECTIONS).

A lock waiter behind a hold of its own process waits in-process, on no
connection (core/transport/nearby.py, tests/core/locks/test_nearby.py): here
that is switched off, so these lock waiters wait in Redis, as behind a holder
of another process.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis
import redis.asyncio

from django_redcoord.core.exceptions import CoordinationUnavailable, PoolExhausted, RedcoordError
from django_redcoord.core.locks import Lock
from django_redcoord.core.transport import commands as transport
from django_redcoord.core.transport import hub, nearby
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.commands import blpop, command, reserve, waiting_limit


@pytest.fixture(autouse=True)
def _waits_in_redis(monkeypatch):
    monkeypatch.setattr(nearby, "enabled", False)


def _share_counts(pool):
    share = transport._shares.get(pool)
    return (
        (0, 0, 0, 0)
        if share is None
        else (share.total, share.ordinary, share.waits, len(share.sleepers))
    )


class Overlap:
    """An overlap detector: how many holders are inside at once (must never exceed 1)."""

    def __init__(self) -> None:
        self.inside = self.most = self.entered = 0

    def enter(self) -> None:
        self.inside += 1
        self.entered += 1
        self.most = max(self.most, self.inside)

    def leave(self) -> None:
        self.inside -= 1


def test_the_overlap_detector_sees_an_overlap_without_the_lock():
    """Negative control: the same tasks without the lock do overlap, and the detector says so."""

    async def scenario():
        overlap = Overlap()

        async def one():
            overlap.enter()
            await asyncio.sleep(0.001)
            overlap.leave()

        await asyncio.gather(*(one() for _ in range(20)))
        return overlap

    assert asyncio.run(scenario()).most > 1


def test_shares_of_a_pool():
    assert [reserve(n) for n in (4, 10, 100, 1000)] == [2, 2, 10, 16]
    assert (
        waiting_limit(4) == 1
        and waiting_limit(10) == 6
        and waiting_limit(100) == 80
        and waiting_limit(1000) == 968
    )


def test_three_hundred_asyncio_waiters_on_a_pool_of_a_hundred_all_get_the_lock(redis_url):
    """Before: the waiters' queueing scripts took every connection; 200 acquires failed with
    MaxConnectionsError reported as "Redis could not be reached"."""

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, max_connections=100, socket_timeout=5)
        overlap, errors, release_errors = Overlap(), [], []

        async def one(i):
            lock = Lock("pool|300", client=client, prefix="p", ttl=30)
            try:
                got = await lock.aacquire(wait=120)
            except RedcoordError as exc:
                errors.append(repr(exc))
                return
            if not got:
                errors.append("wait ran out")
                return
            overlap.enter()
            await asyncio.sleep(
                0.002 if i % 10 else 0.05
            )  # some hold long enough for every waiter to block
            overlap.leave()
            try:
                await lock.arelease()
            except RedcoordError as exc:
                release_errors.append(repr(exc))

        await asyncio.gather(*(one(i) for i in range(300)))
        pool = client.connection_pool
        left = (len(pool._in_use_connections), _share_counts(pool))
        await client.aclose()
        return overlap, errors, release_errors, left

    overlap, errors, release_errors, left = asyncio.run(scenario())
    assert release_errors == []
    assert errors == []
    assert overlap.entered == 300 and overlap.most == 1
    assert left == (0, (0, 0, 0, 0))


def test_many_threads_on_a_small_sync_pool_all_get_the_lock(redis_url):
    client = client_from_url(redis_url, max_connections=10)
    overlap, errors, release_errors, guard = Overlap(), [], [], threading.Lock()

    def one(i):
        lock = Lock(f"pool|threads{i % 2}", client=client, prefix="p", ttl=30)
        try:
            got = lock.acquire(wait=120)
        except RedcoordError as exc:
            errors.append(repr(exc))
            return
        if not got:
            errors.append("wait ran out")
            return
        if i % 2 == 0:
            with guard:
                overlap.enter()
            time.sleep(0.005)
            with guard:
                overlap.leave()
        try:
            lock.release()
        except RedcoordError as exc:
            release_errors.append(repr(exc))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not any(t.is_alive() for t in threads)
    assert release_errors == [] and errors == []
    assert overlap.entered == 30 and overlap.most == 1
    pool = client.connection_pool
    assert len(pool._in_use_connections) == 0 and _share_counts(pool) == (0, 0, 0, 0)
    assert pool._created_connections <= 10


def test_forty_waiters_on_a_pool_of_ten_block_on_four_connections_and_a_release_runs(redis_url):
    """A pool of 10 and 40 asyncio waiters: they block through the wake hub (at most four
    connections, core/transport/hub.py), so the waits' share never fills, the holder's release
    runs at once and every waiter is served in turn."""

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, max_connections=10, socket_timeout=5)
        pool = client.connection_pool
        holder = Lock("pool|x", client=client, prefix="p", ttl=30)
        assert await holder.aacquire()
        waiters = [Lock("pool|x", client=client, prefix="p", ttl=30, wait=60) for _ in range(40)]
        tasks = [asyncio.ensure_future(w.aacquire()) for w in waiters]
        deadline = time.monotonic() + 20
        while await client.llen(holder.keys.queue) < 40 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        busy = _share_counts(pool)
        started = time.monotonic()
        await holder.arelease()
        release_took = time.monotonic() - started
        served, deadline = 0, time.monotonic() + 60
        while served < 40 and time.monotonic() < deadline:
            for waiter in waiters:
                if waiter.held:
                    await waiter.arelease()
                    served += 1
            await asyncio.sleep(0.005)
        results = await asyncio.gather(*tasks)
        left = (len(pool._in_use_connections), _share_counts(pool))
        await client.aclose()
        return busy, release_took, results, left

    busy, release_took, results, left = asyncio.run(scenario())
    assert 1 <= busy[2] <= hub.LIST_READS, busy  # the wake hub's BLPOPs, not one per waiter
    assert release_took < 2.0
    assert results == [True] * 40
    assert left == (0, (0, 0, 0, 0))


def test_cancelled_waiters_leave_their_places_and_the_pool(redis_url):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, max_connections=10, socket_timeout=5)
        pool = client.connection_pool
        holder = Lock("pool|c", client=client, prefix="p", ttl=30)
        assert await holder.aacquire()
        waiters = [Lock("pool|c", client=client, prefix="p", ttl=30, wait=60) for _ in range(30)]
        tasks = [asyncio.ensure_future(w.aacquire()) for w in waiters]
        deadline = time.monotonic() + 20
        while await client.llen(holder.keys.queue) < 30 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        busy = _share_counts(pool)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        queued = await client.llen(holder.keys.queue)
        await holder.arelease()
        await asyncio.sleep(0.1)  # (the hub's read, poked, ends)
        left = (len(pool._in_use_connections), _share_counts(pool))
        await client.aclose()
        return busy, queued, left

    busy, queued, left = asyncio.run(scenario())
    assert 1 <= busy[2] <= hub.LIST_READS, busy  # the wake hub's reads
    assert queued == 0  # every cancelled waiter left its place
    assert left == (0, (0, 0, 0, 0))


def test_a_wait_with_no_connection_to_block_on_times_out_like_a_wait(redis_url):
    """A pool of 4 lets one call block: a second wait waits for it within its own timeout and
    returns None (a wait that timed out); before, it was refused as an outage at once."""
    client = client_from_url(redis_url, max_connections=4)
    results, errors = [], []

    def wait():
        try:
            results.append(blpop(client, ["pool|nothing"], 1.0, operation="test wait"))
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=wait) for _ in range(3)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == [] and results == [None, None, None]
    assert time.monotonic() - started < 6
    assert _share_counts(client.connection_pool) == (0, 0, 0, 0)


def test_a_pool_taken_around_us_is_pool_exhausted_not_an_outage(redis_url):
    """Connections taken outside our calls fill the pool: the call waits, then says the pool is
    too small."""
    pool = redis.ConnectionPool.from_url(redis_url, max_connections=4, socket_timeout=0.5)
    client = redis.Redis(connection_pool=pool)
    taken = [pool.get_connection() for _ in range(4)]
    try:
        with pytest.raises(PoolExhausted) as caught:
            command(client, "PING", operation="ping for the test")
        assert "MAX_CONNECTIONS" in str(caught.value) and "could not be reached" not in str(
            caught.value
        )
        assert caught.value.sent is False and caught.value.max_connections == 4
        assert isinstance(caught.value, CoordinationUnavailable)
        threading.Timer(
            0.2, pool.release, (taken.pop(),)
        ).start()  # one comes free during the wait: used
        assert command(client, "PING", operation="ping for the test") in (True, b"PONG")
    finally:
        for conn in taken:
            pool.release(conn)
    assert command(client, "PING", operation="ping for the test") in (True, b"PONG")


def test_our_own_calls_past_the_waiters_share_wait_then_raise_pool_exhausted(redis_url):
    """The waiters' share of a pool of 4 (2 connections) in use by our calls for longer than the
    socket timeout: a quick call waits that long, then raises PoolExhausted (never a raw
    MaxConnectionsError); a call that ends waits goes through the reserve at once."""
    client = client_from_url(redis_url, max_connections=4, socket_timeout=0.5)
    pool = client.connection_pool
    share = transport._share(pool)
    assert share.try_take(transport.ORDINARY) and share.try_take(
        transport.WAITING
    )  # two calls in flight
    assert not share.try_take(transport.ORDINARY)
    try:
        started = time.monotonic()
        with pytest.raises(PoolExhausted, match="MAX_CONNECTIONS"):
            command(client, "PING", operation="quick call")
        assert time.monotonic() - started >= 0.45
        assert (
            blpop(client, ["pool|none"], 0.3, operation="a wait") is None
        )  # a wait times out as a wait
        with transport.ending_waits():  # a call that ends waits may use the reserve
            assert command(client, "PING", operation="release") in (True, b"PONG")
    finally:
        share.give(transport.ORDINARY)
        share.give(transport.WAITING)
    assert command(client, "PING", operation="quick call") in (True, b"PONG")
    assert _share_counts(pool) == (0, 0, 0, 0)


# -- a hand-off on a small pool full of waiters is taken at once ------------------------------
#
# A pool of 10 lets 6 calls block at once. Six waiters of another lock wait; then ours. The
# holder's release hands the hold to ours: it must have it within a second. The waits block
# through the wake hub, so none sleeps for a connection. The negative control bypasses the hub:
# the six fill the waits' share, ours sleeps for a connection (SLEEPER_LOOK raised to 30 s) and
# still holds nothing a second after the hand-off.


def _hold_kinds():
    from django_redcoord.core.semaphores import Semaphore

    return {
        "lock": lambda name, client, **kw: Lock(name, client=client, prefix="n", ttl=30, **kw),
        "semaphore": lambda name, client, **kw: Semaphore(
            name, 1, client=client, prefix="n", ttl=30, **kw
        ),
    }


async def _handed_on_a_full_pool(redis_url, kind: str) -> bool:
    make = _hold_kinds()[kind]
    client = redis.asyncio.Redis.from_url(redis_url, max_connections=10, socket_timeout=5)
    tag = f"{kind}{time.monotonic_ns()}"
    other = make(f"other|{tag}", client)
    assert await other.aacquire()
    blockers = [make(f"other|{tag}", client, wait=60) for _ in range(6)]
    blocking = [asyncio.ensure_future(b.aacquire()) for b in blockers]
    holder = make(f"ours|{tag}", client)
    assert await holder.aacquire()
    await asyncio.sleep(0.3)
    waiter = make(f"ours|{tag}", client, wait=60)
    waiting = asyncio.ensure_future(waiter.aacquire())
    await asyncio.sleep(0.3)
    await holder.arelease()
    took = time.monotonic()
    while not waiter.held and time.monotonic() - took < 1.0:
        await asyncio.sleep(0.005)
    handed = waiter.held
    waiting.cancel()
    for task in blocking:
        task.cancel()
    await asyncio.gather(waiting, *blocking, return_exceptions=True)
    if waiter.held:
        await waiter.arelease()
    await other.arelease()
    await client.aclose()
    return handed


@pytest.mark.parametrize("kind", ["lock", "semaphore"])
def test_a_hand_off_on_a_pool_full_of_waiters_is_taken_at_once(redis_url, kind, monkeypatch):
    monkeypatch.setattr(transport, "SLEEPER_LOOK", 30.0)
    assert asyncio.run(_handed_on_a_full_pool(redis_url, kind))


@pytest.mark.parametrize("kind", ["lock", "semaphore"])
def test_negative_control_without_the_hub_the_sleeper_misses_its_hand_off(
    redis_url, kind, monkeypatch
):
    monkeypatch.setattr(transport, "SLEEPER_LOOK", 30.0)
    monkeypatch.setattr(hub, "_direct_async_pool", lambda client: None)  # each wait blocks alone
    assert not asyncio.run(_handed_on_a_full_pool(redis_url, kind))


def _sync_handed_on_a_full_pool(redis_url) -> bool:
    """The same with threads on a sync pool."""
    client = redis.Redis.from_url(redis_url, max_connections=10, socket_timeout=5)
    tag = f"sync{time.monotonic_ns()}"
    other = Lock(f"other|{tag}", client=client, prefix="n", ttl=30)
    assert other.acquire()
    blockers = [Lock(f"other|{tag}", client=client, prefix="n", ttl=30, wait=5) for _ in range(6)]
    threads = [threading.Thread(target=b.acquire, daemon=True) for b in blockers]
    for thread in threads:
        thread.start()
    holder = Lock(f"ours|{tag}", client=client, prefix="n", ttl=30)
    assert holder.acquire()
    time.sleep(0.3)
    waiter = Lock(f"ours|{tag}", client=client, prefix="n", ttl=30, wait=3)
    waiting = threading.Thread(target=waiter.acquire, daemon=True)
    waiting.start()
    time.sleep(0.3)
    holder.release()
    took = time.monotonic()
    while not waiter.held and time.monotonic() - took < 1.0:
        time.sleep(0.005)
    handed = waiter.held
    other.release()  # the blockers take it in turn and time out or finish within their wait
    for thread in [*threads, waiting]:
        thread.join(40)
    for lock in [waiter, *blockers]:
        if lock.held:
            lock.release()
    client.close()
    return handed


def test_a_sync_hand_off_on_a_pool_full_of_waiters_is_taken_at_once(redis_url, monkeypatch):
    monkeypatch.setattr(transport, "SLEEPER_LOOK", 30.0)
    assert _sync_handed_on_a_full_pool(redis_url)


def test_negative_control_without_the_hub_a_sync_sleeper_misses_its_hand_off(
    redis_url, monkeypatch
):
    monkeypatch.setattr(transport, "SLEEPER_LOOK", 30.0)
    monkeypatch.setattr(hub, "_direct_pool", lambda client: None)  # each wait blocks alone
    assert not _sync_handed_on_a_full_pool(redis_url)
