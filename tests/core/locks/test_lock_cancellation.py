"""Cancelling ``aacquire()`` or a decorated async view at every await point leaves nothing held
or queued.

The await points are found, not listed: every round trip the waiter makes
is intercepted, and the task is cancelled before it is sent, while its reply
is awaited, or just after its reply was read (a grant read and then lost to
the cancellation). After each case a waiter queued behind the cancelled one
is served as soon as the holder releases, and nothing of the cancelled
waiter is left in Redis.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio
from django.http import HttpResponse
from django.test import RequestFactory

from django_redcoord import with_lock
from django_redcoord.core.locks import Lock
from django_redcoord.core.transport.clients import client_from_url

from ...support.drivers import cancel_at

WHEN = ("before", "during", "after")


def _decorated_view(client, ran):
    """An async view holding the contended lock through ``@with_lock`` (on the event loop)."""

    @with_lock("k|x", ttl=10, wait=5, client=client)
    async def view(request):
        ran.append(True)
        return HttpResponse("ok")

    return view


@pytest.mark.parametrize("caller", ["aacquire", "decorated view"])
@pytest.mark.parametrize("when", WHEN)
def test_cancelling_at_every_await_point_gives_back_everything(
    redis_url, monkeypatch, when, caller
):
    async def case(at: int) -> bool:
        client = redis.asyncio.Redis.from_url(redis_url)
        pauser = client_from_url(redis_url)
        try:
            holder = Lock("k|x", client=client, ttl=10)
            assert await holder.aacquire()
            waiter = Lock("k|x", client=client, ttl=10, wait=5)
            behind = Lock("k|x", client=client, ttl=10, wait=5)
            ran: list[bool] = []
            # "during": hold the server up for 0.2 s so that the cancellation, 0.05 s
            # after sending, surely lands while this round trip's reply is awaited
            # (a quick reply would otherwise let it land on the next one, or on none
            # under load)
            target = {
                "at": at,
                "when": when,
                "stall": lambda: pauser.execute_command("CLIENT", "PAUSE", 200, "ALL"),
            }
            cancel_at(monkeypatch, target)
            if caller == "aacquire":
                task = asyncio.ensure_future(waiter.aacquire())
            else:
                task = asyncio.ensure_future(
                    _decorated_view(client, ran)(RequestFactory().get("/"))
                )
            target["task"] = task
            await asyncio.sleep(0.05)
            follower = asyncio.ensure_future(behind.aacquire())
            await asyncio.sleep(0.25)
            released_at = time.monotonic()
            await holder.arelease()
            try:
                got = await task
            except asyncio.CancelledError:
                got = None
            if not target.get("hit"):
                # past the last await point: an ordinary grant (the view ran and released)
                if caller == "aacquire":
                    assert got is True
                    await waiter.arelease()
                else:
                    assert got.status_code == 200 and ran == [True]
            else:
                assert got is None and task.cancelled(), (
                    f"round trip {at} ({when}) was not cancelled"
                )
                assert not waiter.held
            assert await asyncio.wait_for(follower, 3) is True
            # (woken through the chain of wake lists: well inside the seconds its own re-check
            # would take; a loaded machine once took 1.2 s)
            assert time.monotonic() - released_at < 2.0, "the waiter behind was not served at once"
            assert await behind.aowned()
            await behind.arelease()
            # Nothing of the cancelled waiter (or anyone) is left.
            k = waiter.keys
            assert await holder.aholder() is None
            assert await client.llen(k.queue) == 0
            # A wake list left behind is a hint in the chain of wake lists (a hand-off found by a
            # re-check, a 'moved' nobody popped): it expires on its own within a queue lease.
            left = [w async for w in client.scan_iter(k.wake_prefix + "*")]
            for w in left:
                assert 0 < await client.pttl(w) <= 15_000, left
            return bool(target.get("hit"))
        finally:
            monkeypatch.undo()
            pauser.execute_command("CLIENT", "UNPAUSE")
            await client.flushall()
            await client.aclose()

    points = 0
    while asyncio.run(case(points)):
        points += 1
    # the queue-joining script and the blocking wait at least (a view's release
    # runs in a task of its own that no cancellation reaches: see below)
    assert points >= 2


def test_a_decorated_view_cancelled_in_its_body_or_its_release_still_releases(redis_url):
    async def scenario(cancel_after: float):
        client = redis.asyncio.Redis.from_url(redis_url)
        entered = asyncio.Event()

        @with_lock("body|view", ttl=10, wait=1, client=client)
        async def view(request):
            entered.set()
            await asyncio.sleep(0.2)
            return HttpResponse("ok")

        task = asyncio.ensure_future(view(RequestFactory().get("/")))
        await entered.wait()
        await asyncio.sleep(cancel_after)
        # in the body (0.1 s), or once the body is done and the release in flight (0.2 s)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        locked = await Lock("body|view", client=client).alocked()
        await client.aclose()
        return locked

    for cancel_after in (0.1, 0.2, 0.2005):
        assert asyncio.run(scenario(cancel_after)) is False


def test_a_cancelled_async_with_body_releases(redis_url):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        lock = Lock("body", client=client, prefix="c", ttl=10)

        async def body():
            async with lock:
                await asyncio.sleep(10)

        task = asyncio.ensure_future(body())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not await lock.alocked()
        await client.aclose()

    asyncio.run(scenario())


def test_asyncio_timeout_around_a_wait_leaves_nothing_queued(redis_url):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        holder = Lock("t", client=client, prefix="c", ttl=10)
        assert await holder.aacquire()
        waiter = Lock("t", client=client, prefix="c", ttl=10, wait=None)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await waiter.aacquire()
        assert await client.llen(waiter.keys.queue) == 0
        await holder.arelease()
        assert not await holder.alocked()
        await client.aclose()

    asyncio.run(scenario())


def test_a_hold_taken_in_a_loop_that_has_closed_can_still_be_released():
    """aacquire() with auto_renew in asyncio.run(), release() later from sync code (Django
    settings)."""

    async def take():
        lock = Lock("closed-loop", ttl=5, wait=0, auto_renew=True)
        assert await lock.aacquire()
        return lock

    lock = asyncio.run(take())
    assert lock.locked()
    lock.release()  # stops a watchdog whose loop is gone, then releases with the sync client
    assert not lock.locked()


def _hold(kind: str, client):
    from django_redcoord.core.rwlocks import ReadWriteLock
    from django_redcoord.core.semaphores import Semaphore

    if kind == "semaphore":
        return Semaphore("k|rel", 1, ttl=30, client=client)
    if kind == "write lock":
        return ReadWriteLock("k|rel", ttl=30, client=client).write()
    return Lock("k|rel", ttl=30, client=client)


@pytest.mark.parametrize("kind", ["lock", "semaphore", "write lock"])
def test_a_release_cancelled_before_its_round_trip_still_releases(redis_url, monkeypatch, kind):
    """``asyncio.timeout`` running out as an ``async with`` block ends cancels the release: it
    used to stop before its script was sent, and the hold stayed taken by nobody for its TTL
    (a storm of cancelled semaphore blocks left one name unusable in every run)."""
    from django_redcoord.core.transport import drivers

    real = drivers.Run.arun

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            hold = _hold(kind, client)
            assert await hold.aacquire()
            outer: dict = {}

            async def cancelled_first(self, c):
                if self.script.name.endswith("/release") and not outer.get("hit"):
                    outer["hit"] = True
                    outer["task"].cancel()  # the block's task, as its release begins
                    await asyncio.sleep(0)
                return await real(self, c)

            monkeypatch.setattr(drivers.Run, "arun", cancelled_first)
            task = outer["task"] = asyncio.ensure_future(hold.arelease())
            try:
                await task
            except asyncio.CancelledError:
                pass
            monkeypatch.undo()
            assert outer.get("hit") and task.cancelled()  # the cancellation still went on
            other = _hold(kind, client)
            assert await other.aacquire(wait=0), f"the cancelled release left the {kind} taken"
            await other.arelease()
        finally:
            monkeypatch.undo()
            await client.flushall()
            await client.aclose()

    asyncio.run(scenario())
