"""A latch party's join that is interrupted never counts the latch down.

A party counts down when its work is done; one whose ``join()`` / ``ajoin()`` was interrupted
(asyncio cancellation, KeyboardInterrupt or a signal handler's exception, a server that stopped
answering mid-call) never started its work. It leaves: no registration, no count. Before, the
give-back of an interrupted acquire ran the hold's release, which for a party is the count-down:
a latch of 1 opened with no work done.

Each test checks counts that must add up: the latch opens only after as many count-downs as its
count, however many joins were interrupted first.
"""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
import redis.asyncio

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.latches import CountDownLatch
from django_redcoord.core.transport.clients import client_from_url

PREFIX = "lij"


def _is_intact(latch: CountDownLatch, count: int) -> None:
    """The latch still waits for ``count`` count-downs, with no party registered, and opens at
    the last of them (the control: count-downs do count)."""
    state = latch.state()
    assert state["count"] in (None, count), state  # (None: never used, or left as it started)
    assert state["parties"] == [], state
    assert not latch.wait(0)
    for left in range(count, 0, -1):
        assert not latch.wait(0), f"open with {left} count-down(s) to go"
        with latch.party():
            pass
    assert latch.wait(0)


def test_many_cancelled_ajoins_leave_the_count_as_it_was(redis_client, redis_url):
    """The helper's statistical check: 60 joins cancelled at random points of their round trip,
    each counted if it completed; the latch's count is its initial count less those."""
    name = "cancelled|many"
    completed = 0

    async def scenario() -> None:
        nonlocal completed
        aclient = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        try:
            latch = CountDownLatch(name, 1000, client=aclient, prefix=PREFIX)
            for n in range(60):
                party = latch.party()
                try:
                    async with asyncio.timeout(0.0002 * (n % 10)):
                        await party.ajoin()
                except TimeoutError:
                    continue
                await party.acount_down()
                completed += 1
        finally:
            await aclient.aclose()

    asyncio.run(scenario())
    state = CountDownLatch(name, 1000, client=redis_client, prefix=PREFIX).state()
    assert state["parties"] == []
    assert (state["count"] if state["count"] is not None else 1000) == 1000 - completed


def test_an_interrupt_right_after_the_join_reply_does_not_count_down(redis_client):
    latch = CountDownLatch("interrupted|sync", 1, client=redis_client, prefix=PREFIX)
    party = latch.party()

    def tracer(frame, event, arg):  # as tests/core/locks/test_interrupt_after_reply.py
        if event == "call" and frame.f_code.co_name in {"_plain_grant", "_grant_steps"}:
            sys.settrace(None)
            raise KeyboardInterrupt("right after the reply")
        return None

    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            party.join()
    finally:
        sys.settrace(None)
    assert not party.held
    _is_intact(latch, 1)


def test_an_ajoin_cancelled_on_a_paused_server_is_not_counted_when_it_answers(redis_servers):
    """The join reaches a server that stops answering and is cancelled there: its give-back
    gets no answer either, the server runs the join when it resumes, and what settles it
    afterwards (a task of the loop) leaves the latch without counting down."""
    (server,) = redis_servers(1)
    latch = CountDownLatch("doubt|paused", 2, client=client_from_url(server.url), prefix=PREFIX)

    async def scenario() -> None:
        aclient = redis.asyncio.Redis.from_url(server.url, socket_timeout=0.5)
        try:
            async with CountDownLatch("doubt|warm", 1, client=aclient, prefix=PREFIX).party():
                pass  # (its connection is made and the script cached: the join gets no answer)
            party = CountDownLatch("doubt|paused", 2, client=aclient, prefix=PREFIX).party()
            server.pause()
            try:
                task = asyncio.ensure_future(party.ajoin())
                await asyncio.sleep(0.2)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await asyncio.sleep(0.8)  # the give-back timed out: left to a task of the loop
            finally:
                server.resume()
            end = time.monotonic() + 10  # which asks again within seconds
            while time.monotonic() < end and (
                latch.state()["parties"] or latch.state()["count"] is None
            ):
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.5)  # a count-down, had it come, would have come by now
        finally:
            await aclient.aclose()

    asyncio.run(scenario())
    _is_intact(latch, 2)


@pytest.mark.parametrize("then", ["settle", "join again"])
def test_a_join_in_doubt_is_settled_without_a_count_or_joined_again_once(redis_servers, then):
    """A join whose reply an outage lost (CoordinationUnavailable after sending) is in doubt:
    ``settle(in_doubt)`` leaves without counting down; joining again with the same object keeps
    one registration, and its count-down is the only one."""
    (server,) = redis_servers(1)
    latch = CountDownLatch("doubt|sync", 2, client=client_from_url(server.url), prefix=PREFIX)
    paused = client_from_url(server.url, socket_timeout=0.5)
    with CountDownLatch("doubt|warm", 1, client=paused, prefix=PREFIX).party():
        pass  # (its connection is made and the script cached: the join gets no answer)
    party = CountDownLatch("doubt|sync", 2, client=paused, prefix=PREFIX).party()
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable):
            party.join()
    finally:
        time.sleep(0.3)
        server.resume()
    assert party.in_doubt
    assert len(latch.state()["parties"]) == 1  # the server ran the join it had read
    if then == "settle":
        party.settle(party.in_doubt)
        _is_intact(latch, 2)
    else:
        party.join()
        assert len(latch.state()["parties"]) == 1
        party.count_down()
        _is_intact(latch, 1)
