"""A view's lock after an outage: the grant an acquire left behind is given back.

A request that comes while Redis is paused answers 503 once its socket timeout
passes, but its acquire was sent: Redis runs it when it resumes, and nobody
would release that grant. The view then answered 409 for the lock's whole TTL
(30 s here) after Redis came back. The decorator now gives such a grant back
from a thread of the process as soon as Redis answers again.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from django.http import HttpResponse
from django.urls import path

from django_redcoord import Lock, with_lock, with_semaphore

pytestmark = pytest.mark.urls(__name__)


@with_lock("lost:{pk}", ttl=30, wait=0)
def locked(request, pk):
    return HttpResponse("ok")


@with_lock("lost-async:{pk}", ttl=30, wait=0)
async def locked_async(request, pk):
    return HttpResponse("ok")


@with_semaphore("lost-sem", permits=1, ttl=30, wait=0)
def limited(request):
    return HttpResponse("ok")


@with_lock("short:{pk}", ttl=3, wait=0)
def short_ttl(request, pk):
    return HttpResponse("ok")


@with_lock("short-async:{pk}", ttl=3, wait=0)
async def short_ttl_async(request, pk):
    return HttpResponse("ok")


urlpatterns = [
    path("short/<int:pk>/", short_ttl),
    path("short-async/<int:pk>/", short_ttl_async),
    path("lost/<int:pk>/", locked),
    path("lost-async/<int:pk>/", locked_async),
    path("lost-sem/", limited),
]


@pytest.fixture
def paused_later(settings, redis_servers):
    (server,) = redis_servers(1)
    settings.REDCOORD = {
        **settings.REDCOORD,
        "URL": server.url,
        "SOCKET_TIMEOUT": 0.5,
        "CONNECT_TIMEOUT": 0.5,
    }
    return server


def first_ok_after(get, seconds: float) -> tuple[float, list[int]]:
    """Ask until a 200 (or ``seconds`` pass): when it came, and every status seen."""
    started, seen = time.monotonic(), []
    while time.monotonic() - started < seconds:
        seen.append(get())
        if seen[-1] == 200:
            return time.monotonic() - started, seen
        time.sleep(0.2)
    return float("inf"), seen


@pytest.mark.parametrize("url", ["/lost/1/", "/lost-sem/"])
def test_a_grant_sent_during_a_pause_is_given_back_once_redis_answers(client, paused_later, url):
    assert client.get(url).status_code == 200  # (connected)
    paused_later.pause()
    try:
        assert client.get(url).status_code == 503
    finally:
        paused_later.resume()
    spent, seen = first_ok_after(lambda: client.get(url).status_code, 8)
    assert spent < 8, seen  # not 409 for the lock's 30 s
    assert 200 in seen


def test_the_same_for_an_async_view(async_client, paused_later):
    async def ask() -> int:
        return (await async_client.get("/lost-async/1/")).status_code

    assert asyncio.run(ask()) == 200
    paused_later.pause()
    try:
        assert asyncio.run(ask()) == 503
    finally:
        paused_later.resume()
    spent, seen = first_ok_after(lambda: asyncio.run(ask()), 8)
    assert spent < 8, seen
    assert Lock("lost-async:1", ttl=5).acquire(wait=0)  # and nothing holds it now


def test_a_pause_longer_than_the_ttl_is_settled_too(client, paused_later):
    """The settling gave up a TTL after the acquire timed out, taking the grant for expired: but
    a paused server runs the acquire when it resumes, and its grant lasts a TTL from then (the
    view answered 409 for 3 s more). It now counts the TTL from the last time Redis was away."""
    assert client.get("/short/1/").status_code == 200
    paused_later.pause()
    try:
        assert client.get("/short/1/").status_code == 503
        time.sleep(3 + 1.5)  # the pause outlasts the TTL
    finally:
        paused_later.resume()
    spent, seen = first_ok_after(lambda: client.get("/short/1/").status_code, 3)
    assert spent < 2.5, seen


def test_the_same_for_an_async_view_and_a_pause_longer_than_the_ttl(async_client, paused_later):
    async def ask() -> int:
        return (await async_client.get("/short-async/1/")).status_code

    async def pause_through_the_ttl() -> int:
        assert await ask() == 200
        paused_later.pause()
        try:
            status = await ask()
            await asyncio.sleep(3 + 1.5)  # (the loop runs its settling task meanwhile)
        finally:
            paused_later.resume()
        started = time.monotonic()
        while time.monotonic() - started < 3:
            if await ask() == 200:
                return round(time.monotonic() - started, 1)
            await asyncio.sleep(0.2)
        return -status

    assert 0 <= asyncio.run(pause_through_the_ttl()) < 2.5


def test_a_server_that_never_answers_holds_no_other_settling_up(client, paused_later):
    """The settling thread asked its targets in turn and stopped its pass at the first outage: a
    grant in doubt on a server that never answers again (another Redis, one gone for good) kept
    the others from ever being asked. An outage now defers only the targets of that server."""
    from django_redcoord.core.holds.settling import settle_later
    from django_redcoord.core.transport.clients import client_from_url

    gone = Lock("gone", ttl=30, client=client_from_url("redis://127.0.0.1:1/0"))
    settle_later(gone, "nobody", 600.0, first=0.0)  # asked first, every pass, for 10 minutes
    test_a_pause_longer_than_the_ttl_is_settled_too(client, paused_later)
