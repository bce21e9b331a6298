"""A concurrency slot is given back however its request ends: cancelled at any await point, or
with Redis gone.

As for locks, the await points are found, not listed (``tests.support.drivers.cancel_at``):
the task is cancelled before each round trip is sent, while its reply is
awaited, or just after the reply was read (a slot granted, then lost to the
cancellation). Afterwards no slot of the cancelled request is left in flight.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio
from django.http import HttpResponse
from django.test import RequestFactory

from django_redcoord import rate_limit
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.transport.clients import client_from_url

from ...support.drivers import cancel_at

WHEN = ("before", "during", "after")


def _view(client, ran):
    @rate_limit("concurrency=2;lease=30", key="ip", name="cancelled", client=client)
    async def view(request):
        ran.append(True)
        await asyncio.sleep(0)
        return HttpResponse("ok")

    return view


@pytest.mark.parametrize("caller", ["aslot", "decorated view"])
@pytest.mark.parametrize("when", WHEN)
def test_cancelling_at_every_await_point_leaves_no_slot_taken(redis_url, monkeypatch, when, caller):
    async def case(at: int) -> bool:
        client = redis.asyncio.Redis.from_url(redis_url)
        pauser = client_from_url(redis_url)
        try:
            limiter = RateLimiter("concurrency=2;lease=30", name="cancelled", client=client)
            ran: list[bool] = []
            # replies are quick: hold the server up for 0.2 s, cancel 0.05 s into the wait
            target = {
                "at": at,
                "when": when,
                "stall": lambda: pauser.execute_command("CLIENT", "PAUSE", 200, "ALL"),
            }
            cancel_at(monkeypatch, target)

            async def in_slot():
                async with limiter.aslot("127.0.0.1"):
                    ran.append(True)
                    await asyncio.sleep(0)
                return True

            if caller == "aslot":
                task = asyncio.ensure_future(in_slot())
            else:
                task = asyncio.ensure_future(_view(client, ran)(RequestFactory().get("/")))
            target["task"] = task
            try:
                got = await task
            except asyncio.CancelledError:
                got = None
            monkeypatch.undo()
            if target.get("hit"):
                assert got is None and task.cancelled(), (
                    f"round trip {at} ({when}) was not cancelled"
                )
            else:
                assert got is True or got.status_code == 200
            # the view keys by "ip:<address>", aslot by the address: look at every slot set
            held = {k: await client.zcard(k) async for k in client.scan_iter("*:inflight")}
            assert not any(held.values()), (
                f"a slot outlived its request (round trip {at}, {when}): {held}"
            )
            # and both slots are there for the next requests
            assert [(await limiter.ahit("127.0.0.1")).allowed for _ in range(2)] == [True, True]
            return bool(target.get("hit"))
        finally:
            monkeypatch.undo()
            pauser.close()
            await client.flushall()
            await client.aclose()

    points = 0
    while asyncio.run(case(points)):
        points += 1
    # the deciding script; the release runs in a task of its own, which no
    # cancellation of the request reaches (the view's give-back is covered above)
    assert points == 1


def test_redis_gone_before_the_release_still_answers_and_the_lease_returns_the_slot(
    redis_servers, settings
):
    (server,) = redis_servers(1)
    client = client_from_url(server.url)

    @rate_limit("concurrency=1;lease=1", key="ip", name="gone", client=client)
    def view(request):
        server.pause()  # Redis stops answering while the view runs
        return HttpResponse("made")

    try:
        client.connection_pool.connection_kwargs["socket_timeout"] = 0.5
        client.connection_pool.disconnect()
        response = view(RequestFactory().get("/"))
        assert (
            response.status_code == 200 and response.content == b"made"
        )  # not a 500 from the release
    finally:
        server.resume()
    limiter = RateLimiter("concurrency=1;lease=1", name="gone", client=client)
    import time

    time.sleep(1.1)
    assert limiter.hit("127.0.0.1").allowed  # the lease gave the slot back
    client.close()
