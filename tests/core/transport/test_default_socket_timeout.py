"""A client built without a socket timeout (``Redis.from_url(url)``) waits without a false outage.

redis-py 6+ gives such a client's connections a 5 s socket timeout while its pool's
connection kwargs name none. Blocking waits are chunked below the socket timeout the
connections really read with; chunked by "none" (10 s BLPOPs), a wait longer than 5 s
read as an outage of a healthy server.
"""

from __future__ import annotations

import asyncio
import threading
import time

import redis
import redis.asyncio

from django_redcoord.core.locks.lock import Lock
from django_redcoord.core.signals.event import Event
from django_redcoord.core.transport.commands import ablpop, blpop, max_block, socket_timeout


def test_the_connections_default_counts_when_the_pool_names_none(redis_url):
    plain = redis.Redis.from_url(redis_url)
    assert "socket_timeout" not in plain.connection_pool.connection_kwargs
    assert socket_timeout(plain) == plain.connection_pool.make_connection().socket_timeout
    assert max_block(plain) < plain.connection_pool.make_connection().socket_timeout
    forever = redis.Redis.from_url(redis_url, socket_timeout=None)
    assert socket_timeout(forever) is None  # said so: no timeout, BLPOPs in chunks of 10 s
    aio = redis.asyncio.Redis.from_url(redis_url)
    assert socket_timeout(aio) == aio.connection_pool.make_connection().socket_timeout
    plain.close()
    forever.close()


def test_a_lock_wait_longer_than_the_default_socket_timeout(redis_url):
    client = redis.Redis.from_url(redis_url)
    default = client.connection_pool.make_connection().socket_timeout or 5
    holder = Lock("long|wait", client=client, ttl=30)
    assert holder.acquire()
    releaser = threading.Timer(default + 1.0, holder.release)
    releaser.start()
    started = time.monotonic()
    waiter = Lock("long|wait", client=redis.Redis.from_url(redis_url), ttl=30, wait=default + 6)
    assert waiter.acquire()  # no CoordinationUnavailable at the first 5 s: the server was fine
    assert time.monotonic() - started >= default
    waiter.release()
    releaser.join()


def test_a_blocking_pop_longer_than_the_default_socket_timeout_is_a_wait_not_an_outage(redis_url):
    client = redis.Redis.from_url(redis_url)
    default = client.connection_pool.make_connection().socket_timeout or 5
    started = time.monotonic()
    assert (
        blpop(client, ["nothing|here"], default + 2.0, operation="test wait") is None
    )  # (it raised at 5 s)
    assert time.monotonic() - started < default + 2.5
    client.close()

    async def main():
        aclient = redis.asyncio.Redis.from_url(redis_url)
        try:
            return await ablpop(aclient, ["nothing|here"], default + 2.0, operation="test wait")
        finally:
            await aclient.aclose()

    assert asyncio.run(main()) is None


def test_an_async_event_wait_longer_than_the_default_socket_timeout(redis_url):
    async def main():
        client = redis.asyncio.Redis.from_url(redis_url)
        default = client.connection_pool.make_connection().socket_timeout or 5
        event = Event("late", client=client)
        started = time.monotonic()
        assert await event.await_(timeout=default + 1.0) is False  # timed out, not an outage
        assert time.monotonic() - started >= default
        await client.aclose()

    asyncio.run(main())
