"""A wait whose server paused for a while, then answered again well before the wait ran out.

One round trip timed out during the pause; the wait rode it out. The drivers
kept counting the operation as stalled, so once its deadline passed its last
round trips (the final re-check, leaving the barrier or the waiters' set)
were not sent "because the server does not answer", though it had been
answering for seconds: Event, Signal and CountDownLatch waits raised
CoordinationUnavailable instead of timing out, and a Barrier's parties raised
it instead of breaking the barrier, so a third party later passed alone.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from django_redcoord.core.exceptions import BarrierBroken
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.signals import Event, Signal
from django_redcoord.core.transport.clients import client_from_url

SOCKET_TIMEOUT = 0.5
PAUSE = 1.5  # three socket timeouts, over long before the waits end
WAIT = 4.0


def pause_soon(server, after: float = 0.5) -> threading.Thread:
    def run() -> None:
        time.sleep(after)
        server.pause()
        try:
            time.sleep(PAUSE)
        finally:
            server.resume()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.fixture
def paused(redis_servers):
    (server,) = redis_servers(1)
    return server, client_from_url(server.url, socket_timeout=SOCKET_TIMEOUT)


def test_event_signal_and_latch_waits_time_out_instead_of_raising(paused):
    server, client = paused
    waits = {
        "event": lambda: Event("after-pause", client=client).wait(timeout=WAIT),
        "signal": lambda: Signal("after-pause", client=client).wait(timeout=WAIT),
        "latch": lambda: CountDownLatch("after-pause", count=1, client=client).wait(timeout=WAIT),
    }
    outcomes: dict[str, object] = {}

    def run(name: str) -> None:
        try:
            outcomes[name] = waits[name]()
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test checks
            outcomes[name] = exc

    threads = [threading.Thread(target=run, args=(name,)) for name in waits]
    for t in threads:
        t.start()
    pauser = pause_soon(server)
    for t in threads:
        t.join(WAIT + 10)
    pauser.join()
    assert outcomes == {"event": False, "signal": None, "latch": False}, outcomes


def test_the_same_on_the_event_loop(redis_servers):
    from redis.asyncio import Redis

    (server,) = redis_servers(1)

    async def scenario():
        client = Redis.from_url(server.url, socket_timeout=SOCKET_TIMEOUT)
        try:
            waits = [
                Event("after-pause-a", client=client).await_(timeout=WAIT),
                CountDownLatch("after-pause-a", count=1, client=client).await_(timeout=WAIT),
            ]
            return await asyncio.gather(*waits, return_exceptions=True)
        finally:
            await client.aclose()

    pauser = pause_soon(server)
    try:
        outcomes = asyncio.run(scenario())
    finally:
        pauser.join()
    assert outcomes == [False, False], outcomes


def test_a_barrier_whose_parties_time_out_after_a_pause_is_broken_for_the_next(paused):
    server, client = paused
    outcomes: list[object] = []

    def party() -> None:
        try:
            outcomes.append(Barrier("after-pause", parties=3, ttl=5, client=client).wait(WAIT))
        except Exception as exc:  # noqa: BLE001
            outcomes.append(exc)

    threads = [threading.Thread(target=party) for _ in range(2)]
    for t in threads:
        t.start()
    pauser = pause_soon(server)
    for t in threads:
        t.join(WAIT + 10)
    pauser.join()
    assert [type(o) for o in outcomes] == [BarrierBroken, BarrierBroken], outcomes
    with pytest.raises(BarrierBroken):  # never one party passing alone
        Barrier("after-pause", parties=3, ttl=5, client=client).wait(1.0)
