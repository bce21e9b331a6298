"""Broadcast waits (events, latches) through a pause that fills the pool.

While the server is paused, every connection of the pool ends up in a call
Redis has not answered (the lock waiters' re-checks here), so a wait's next
look finds no connection free within the socket timeout. That look raised
PoolExhausted at once ("Redis itself is fine"), although the wait promises to
ride out a paused server: it is now tried again while the wait lasts, as an
outage's look is, and the waits end as their own timeouts.
"""

from __future__ import annotations

import asyncio
import time

import redis.asyncio

from django_redcoord.core.latches import CountDownLatch
from django_redcoord.core.locks import Lock
from django_redcoord.core.signals import Event
from django_redcoord.core.transport.clients import client_from_url

SOCKET_TIMEOUT = 0.5
WAIT = 5.0


def test_event_and_latch_waits_ride_out_a_pause_that_fills_the_pool(redis_servers):
    (server,) = redis_servers(1)
    holder = Lock("full-pool", ttl=60, client=client_from_url(server.url))
    assert holder.acquire()

    async def scenario() -> list[object]:
        client = redis.asyncio.Redis.from_url(
            server.url, socket_timeout=SOCKET_TIMEOUT, max_connections=24
        )

        async def outcome(awaitable) -> object:
            try:
                return await awaitable
            except Exception as exc:  # noqa: BLE001 - the outcome is what is checked
                return exc

        try:
            lockers = [
                asyncio.ensure_future(
                    outcome(Lock("full-pool", ttl=60, wait=WAIT, client=client).aacquire())
                )
                for _ in range(40)
            ]
            waits = [
                asyncio.ensure_future(outcome(Event(f"full-pool-{i}", client=client).await_(WAIT)))
                for i in range(20)
            ] + [
                asyncio.ensure_future(
                    outcome(CountDownLatch(f"full-pool-{i}", 1, client=client).await_(WAIT))
                )
                for i in range(20)
            ]
            await asyncio.sleep(0.5)
            server.pause()
            try:
                await asyncio.sleep(3 * SOCKET_TIMEOUT + 1.0)
            finally:
                server.resume()
            await asyncio.gather(*lockers)
            return await asyncio.gather(*waits)
        finally:
            await client.aclose()

    started = time.monotonic()
    try:
        outcomes = asyncio.run(scenario())
    finally:
        server.resume()
    assert outcomes == [False] * 40, [o for o in outcomes if o is not False][:3]
    assert time.monotonic() - started < WAIT + 10
