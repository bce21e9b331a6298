"""``@with_lock(..., quorum=True)``: views and functions holding a quorum lock over
REDCOORD['REDLOCK']."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from django_redcoord import with_lock
from django_redcoord.core.exceptions import LockNotAcquired
from django_redcoord.core.redlock import Redlock, trust_masters


@pytest.fixture
def masters(settings, redis_servers, redis_url):
    servers = redis_servers(3)
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": "test",
        "REDLOCK": [s.url for s in servers],
    }
    trust_masters()  # brand-new servers: nothing to forget (else each refuses for REDLOCK_MAX_TTL)
    return servers


def test_a_view_holds_a_quorum_lock_and_answers_409_when_busy_and_503_without_a_majority(masters):
    seen = []

    @with_lock("invoice:{pk}", quorum=True, wait=0)
    def view(request, pk):
        lock = Redlock(f"invoice:{pk}", wait=0)
        seen.append(lock.acquire())  # held by the decorator on a majority
        return HttpResponse("ok")

    request = RequestFactory().post("/")
    assert view(request, pk=7).status_code == 200 and seen == [False]
    holder = Redlock("invoice:7", wait=0)
    assert holder.acquire()
    busy = view(request, pk=7)
    assert busy.status_code == 409 and int(busy["Retry-After"]) >= 1
    holder.release()
    masters[0].kill()
    masters[1].kill()
    down = view(request, pk=7)
    assert down.status_code == 503


def test_an_async_view_holds_a_quorum_lock_on_the_loop(masters):
    inside = []

    @with_lock("report:{name}", quorum=True, wait=5)
    async def view(request, name):
        inside.append(not await Redlock(f"report:{name}", wait=0).aacquire())
        return HttpResponse("ok")

    response = asyncio.run(view(RequestFactory().get("/"), name="monthly"))
    assert response.status_code == 200 and inside == [True]


def test_a_function_raises_lock_not_acquired_and_the_arguments_are_checked(masters):
    @with_lock("job", quorum=True, wait=0)
    def job():
        return "ran"

    assert job() == "ran"
    holder = Redlock("job", wait=0)
    assert holder.acquire()
    with pytest.raises(LockNotAcquired):
        job()
    holder.release()
    with pytest.raises(TypeError, match="quorum must be True"):
        with_lock("x", quorum="yes")
    with pytest.raises(TypeError, match="no auto_renew or reentrant"):
        with_lock("x", quorum=True, auto_renew=True)


def test_threads_in_a_decorated_function_never_overlap(masters):
    inside, overlaps = [0], [0]
    guard = threading.Lock()

    @with_lock("counter", quorum=True, wait=10, ttl=5)
    def critical():
        with guard:
            inside[0] += 1
            overlaps[0] += inside[0] > 1
        threading.Event().wait(0.002)
        with guard:
            inside[0] -= 1

    threads = [threading.Thread(target=lambda: [critical() for _ in range(10)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert overlaps[0] == 0
