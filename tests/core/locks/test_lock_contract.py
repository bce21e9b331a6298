"""The Lock's public behaviour, run through both drivers: one suite, not two copies.

Each scenario is an ``async def`` taking a :class:`Driver`. The sync driver
calls ``lock.acquire()``, ``lock.release()``... directly (blocking: the
scenario's loop only hosts it) and runs concurrent parties in threads; the
async driver awaits ``lock.aacquire()``, ``lock.arelease()``... on a
``redis.asyncio`` client and runs concurrent parties as tasks of one loop.
"""

from __future__ import annotations

import asyncio
import string
import threading
import time

import pytest
import redis
import redis.asyncio

from django_redcoord.core.exceptions import (
    CoordinationUnavailable,
    LockLost,
    LockNotAcquired,
    LockNotOwned,
)
from django_redcoord.core.locks import Lock

from ...support.drivers import KINDS
from ...support.drivers import Driver as BaseDriver


class Driver(BaseDriver):
    def lock(self, name="res", client=None, **kwargs):
        kwargs.setdefault("wait", 0)
        return Lock(name, client=client or self.client, prefix="c", **kwargs)


@pytest.fixture(params=KINDS)
def driver(request, redis_url):
    return Driver.for_param(request, redis_url)


def test_acquire_release_and_inspect(driver):
    async def scenario(d):
        lock = d.lock(ttl=5)
        assert not await d.owned(lock) and not await d.locked(lock)
        assert await d.acquire(lock)
        assert lock.held and lock.token > 0
        assert await d.locked(lock) and await d.owned(lock)
        assert 4 < await d.ttl(lock) <= 5
        other = d.lock(ttl=5)
        assert not await d.acquire(other)
        assert 0 < other.retry_after <= 5
        await d.release(lock)
        assert not lock.held and lock.token is None
        assert not await d.locked(lock) and await d.ttl(lock) is None
        with pytest.raises(LockNotOwned):
            await d.release(lock)

    driver.play(scenario)


def test_tokens_grow_with_every_grant_even_after_redis_lost_its_data(driver):
    async def scenario(d):
        lock, tokens = d.lock(ttl=5), []
        for _ in range(3):
            assert await d.acquire(lock)
            tokens.append(lock.token)
            await d.release(lock)
        d.flushall()  # a restart without persistence
        assert await d.acquire(lock)
        tokens.append(lock.token)
        await d.release(lock)
        assert tokens == sorted(set(tokens))

    driver.play(scenario)


def test_a_waiter_gets_the_lock_handed_over_at_release(driver):
    async def scenario(d):
        holder = d.lock(ttl=10)
        assert await d.acquire(holder)
        got = {}

        async def wait_for_it():
            client = d.open()
            try:
                waiter = d.lock(client=client, ttl=10)
                started = time.monotonic()
                got["ok"] = await d.acquire(waiter, 5)
                got["after"] = time.monotonic() - started
                got["token"] = waiter.token
                await d.release(waiter)
            finally:
                await client.aclose() if d.kind == "async" else client.close()

        party = d.spawn(wait_for_it)
        await asyncio.sleep(0.3) if d.kind == "async" else time.sleep(0.3)
        first = holder.token
        await d.release(holder)
        await party
        assert got["ok"] and got["token"] > first
        assert got["after"] < 2.0  # handed over at release, not at the holder's TTL

    driver.play(scenario)


def test_a_lock_that_expired_raises_lock_lost_and_the_next_holder_is_untouched(driver):
    async def scenario(d):
        lock = d.lock(ttl=0.2)
        assert await d.acquire(lock)
        await d.sleep(0.35)
        assert lock.lost
        thief = d.lock(ttl=5)
        assert await d.acquire(thief)
        with pytest.raises(LockLost):
            await d.extend(lock)
        with pytest.raises(LockLost):
            await d.release(lock)
        assert await d.owned(thief)
        await d.release(thief)

    driver.play(scenario)


def test_extend_resets_the_ttl(driver):
    async def scenario(d):
        lock = d.lock(ttl=1)
        assert await d.acquire(lock)
        await d.extend(lock, 20)
        assert await d.ttl(lock) > 15
        await d.release(lock)
        with pytest.raises(LockNotOwned):
            await d.extend(lock)

    driver.play(scenario)


def test_the_context_manager_releases_and_says_when_busy(driver):
    async def scenario(d):
        async with d.holding(d.lock(ttl=5)) as held:
            assert held.held
            with pytest.raises(LockNotAcquired, match="could not be acquired within 0.1 s"):
                async with d.holding(d.lock(ttl=5, wait=0.1)):
                    pass
        assert not await d.locked(held)
        with pytest.raises(ZeroDivisionError):
            async with d.holding(d.lock(ttl=5)) as failing:
                raise ZeroDivisionError
        assert not await d.locked(failing)

    driver.play(scenario)


def test_reentrant_locks_nest_for_one_owner(driver):
    async def scenario(d):
        outer = d.lock(ttl=5, reentrant=True)
        inner = d.lock(ttl=5, reentrant=True)
        assert await d.acquire(outer) and await d.acquire(inner)
        assert outer.token == inner.token
        await d.release(inner)
        assert await d.locked(outer)
        await d.release(outer)
        assert not await d.locked(outer)

    driver.play(scenario)


def test_auto_renew_keeps_the_lock_and_reports_it_taken_away(driver):
    async def scenario(d):
        lock = d.lock(ttl=0.6, auto_renew=True)
        assert await d.acquire(lock)
        await d.sleep(1.5)
        assert await d.owned(lock) and not lock.lost
        await d.release(lock)
        seen = []
        lock = d.lock(ttl=0.6, auto_renew=True, on_lost=seen.append)
        assert await d.acquire(lock)
        plain = d.sync_client()
        plain.delete(lock.keys.lock)  # an operator force-released it
        plain.close()
        for _ in range(40):
            if seen:
                break
            await d.sleep(0.05)
        assert seen == [lock] and lock.lost

    driver.play(scenario)


def test_one_object_shared_by_several_parties_never_overlaps(driver):
    async def scenario(d):
        shared = d.lock(ttl=5, wait=5)
        inside, overlaps = [0], []
        guard = threading.Lock()

        async def party():
            for _ in range(5):
                async with d.holding(shared):
                    with guard:
                        inside[0] += 1
                        if inside[0] > 1:
                            overlaps.append(1)
                    await d.sleep(0.002)
                    with guard:
                        inside[0] -= 1

        await asyncio.gather(*(d.spawn(party) for _ in range(4)))
        assert not overlaps and not await d.locked(shared)

    driver.play(scenario)


def test_every_allowed_character_in_a_name_hands_over_at_once(driver):
    name = string.ascii_letters + string.digits + "_-.:/@=+,#~|"

    async def scenario(d):
        holder = d.lock(name, ttl=10)
        assert await d.acquire(holder)
        got = {}

        async def wait_for_it():
            client = d.open()
            try:
                waiter = d.lock(name, client=client, ttl=10)
                started = time.monotonic()
                got["ok"] = await d.acquire(waiter, 5)
                got["after"] = time.monotonic() - started
                await d.release(waiter)
            finally:
                await client.aclose() if d.kind == "async" else client.close()

        party = d.spawn(wait_for_it)
        await asyncio.sleep(0.3) if d.kind == "async" else time.sleep(0.3)
        await d.release(holder)
        await party
        assert got["ok"] and got["after"] < 1.5

    driver.play(scenario)


def test_redis_down_raises_coordination_unavailable_naming_the_server(driver):
    async def scenario(d):
        dead = d.open("redis://127.0.0.1:1/0")
        lock = d.lock(client=dead)
        with pytest.raises(CoordinationUnavailable, match="127.0.0.1:1"):
            await d.acquire(lock)
        assert not lock.held
        with pytest.raises(CoordinationUnavailable):
            await d.locked(lock)

    driver.play(scenario)


def test_the_wrong_kind_of_client_is_refused_with_what_to_use(redis_url):
    sync_lock = Lock("x", client=redis.Redis.from_url(redis_url))
    with pytest.raises(TypeError, match="need a redis.asyncio client"):
        asyncio.run(sync_lock.aacquire())

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        with pytest.raises(TypeError, match="use the a-prefixed methods"):
            Lock("x", client=client).acquire()
        await client.aclose()

    asyncio.run(scenario())
