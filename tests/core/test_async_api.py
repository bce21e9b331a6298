"""Queue.push/apush and LeaderElection.current/acurrent: the same steps through both drivers."""

from __future__ import annotations

import asyncio
import string

import pytest
import redis.asyncio

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.queues import Queue

FAST = {"lease": 2.0, "renew_deadline": 1.5, "retry_period": 0.2}


def _with_client(kind, url, scenario):
    """Run ``scenario(client, call)``: ``await call(obj.push, obj.apush, ...)`` picks the kind."""

    async def call(sync_method, async_method, *args, **kwargs):
        if kind == "async":
            return await async_method(*args, **kwargs)
        return sync_method(*args, **kwargs)

    async def main():
        if kind == "async":
            client = redis.asyncio.Redis.from_url(url)
            try:
                return await scenario(client, call)
            finally:
                await client.aclose()
        return await scenario(None, call)

    return asyncio.run(main())


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_push_and_apush_deliver_the_same_messages(kind, redis_url, redis_client):
    hostile = string.ascii_letters + string.digits + "_-.:/@=+,#~|"

    async def scenario(aclient, call):
        queue = Queue("jobs|x", client=aclient or redis_client, prefix="t")
        ids = [await call(queue.push, queue.apush, {"n": i}) for i in range(3)]
        ids.append(await call(queue.push, queue.apush, {"n": 3}, id=hostile, priority=5))
        ids.append(await call(queue.push, queue.apush, {"n": 4}, delay=30))
        with pytest.raises(TypeError, match="JSON"):
            await call(queue.push, queue.apush, {"bad": {1, 2}})
        return ids

    ids = _with_client(kind, redis_url, scenario)
    assert ids[3] == string.ascii_letters + string.digits + "_-.:/@=+,#~|"
    reader = Queue("jobs|x", client=redis_client, prefix="t")
    consumer = reader.consumer("c")
    messages, _ = consumer.claim(10)
    assert [m.body["n"] for m in messages] == [3, 0, 1, 2]  # priority first, then arrival
    assert [m.id for m in messages] == [ids[3], *ids[:3]]
    assert reader.depths().delayed == 1


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_current_and_acurrent_read_the_same_leader(kind, redis_url, redis_client):
    leader = LeaderElection("e|1", **FAST, identity="host-a", client=redis_client, prefix="t")
    assert leader.campaign()
    term = leader.term

    async def scenario(aclient, call):
        observer = LeaderElection(
            "e|1", **FAST, identity="obs", client=aclient or redis_client, prefix="t"
        )
        seen = await call(observer.current, observer.acurrent)
        leader.resign()
        gone = await call(observer.current, observer.acurrent)
        return seen, gone

    seen, gone = _with_client(kind, redis_url, scenario)
    assert seen.identity == "host-a" and seen.term == term and 0 < seen.expires_in <= 2.0
    assert gone is None


def test_apush_uses_the_settings_when_no_client_is_given(redis_client):
    async def scenario():
        return await Queue("from-settings").apush({"ok": True})

    mid = asyncio.run(scenario())
    messages, _ = Queue("from-settings").consumer("c").claim(1)
    assert [m.id for m in messages] == [mid]


def test_an_async_holder_is_renewed_by_a_task_and_may_have_a_coroutine_on_lost(
    redis_url, redis_client
):
    from django_redcoord.core.locks import Lock

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        seen = []

        async def on_lost(lock):
            await asyncio.sleep(0)
            seen.append(lock.name)

        lock = Lock(
            "renewed", client=client, prefix="t", ttl=0.6, wait=0, auto_renew=True, on_lost=on_lost
        )
        assert await lock.aacquire()
        await asyncio.sleep(1.5)  # 2.5 TTLs: renewed by the task
        assert await lock.aowned() and not lock.lost
        await client.delete(lock.keys.lock)  # force-released by an operator
        for _ in range(40):
            if seen:
                break
            await asyncio.sleep(0.05)
        await client.aclose()
        return seen, lock.lost

    assert asyncio.run(scenario()) == (["renewed"], True)
