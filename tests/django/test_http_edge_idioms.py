"""The view decorators written the ways Django and DRF projects write them.

- ``method_decorator(with_lock("...{kwargs[slug]}"), name="dispatch")``, the
  stock idiom for class-based views: Django hands the decorator a partial of the
  bound ``dispatch`` that claims the unbound method's signature (with ``self``),
  and every request answered 500 ("missing a required argument: 'request'").
- ``@with_lock`` / ``@rate_limit`` on a DRF ``APIView`` method: the request is
  DRF's ``Request``, not an ``HttpRequest``, so a busy lock or an outage answered
  500 instead of 409 / 503, and ``@rate_limit`` failed every request.
- The middleware's 429 listed each policy twice in ``RateLimit-Policy``.
"""

from __future__ import annotations

import asyncio

import pytest
from django.http import HttpResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.views import View
from rest_framework.response import Response  # djangorestframework is in the dev extra
from rest_framework.views import APIView

from django_redcoord import (
    Lock,
    Semaphore,
    rate_limit,
    with_lock,
    with_read_lock,
    with_semaphore,
    with_write_lock,
)
from django_redcoord.core.rwlocks import ReadWriteLock

from ..support.redis_servers import free_port


@method_decorator(with_lock("md:{kwargs[slug]}", ttl=30, wait=0), name="dispatch")
class SlugView(View):
    def get(self, request, slug):
        return HttpResponse(slug)


@method_decorator(with_lock("md:{slug}", ttl=30, wait=0), name="dispatch")
class AsyncSlugView(View):
    async def get(self, request, slug):
        return HttpResponse(slug)


@method_decorator(with_semaphore("md-sem", permits=1, ttl=30, wait=0), name="dispatch")
class SemaphoreView(View):
    def get(self, request):
        return HttpResponse("sem")


@method_decorator(with_read_lock("md-rw", ttl=30, wait=0), name="dispatch")
class ReadView(View):
    def get(self, request):
        return HttpResponse("read")


@method_decorator(with_write_lock("md-rw", ttl=30, wait=0), name="get")
class WriteView(View):
    def get(self, request):
        return HttpResponse("write")


class DrfLocked(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    @with_lock("drf:{pk}", ttl=30, wait=0)
    def get(self, request, pk):
        return Response({"pk": pk})


class DrfLimited(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    @rate_limit("2/m", key="ip")
    def get(self, request):
        return Response({"ok": True})


def plain(request):
    return HttpResponse("plain")


urlpatterns = [
    path("md/<slug:slug>/", SlugView.as_view()),
    path("md-async/<slug:slug>/", AsyncSlugView.as_view()),
    path("md-sem/", SemaphoreView.as_view()),
    path("md-read/", ReadView.as_view()),
    path("md-write/", WriteView.as_view()),
    path("drf/<int:pk>/", DrfLocked.as_view()),
    path("drf-limited/", DrfLimited.as_view()),
    path("mw/one/", plain),
    path("mw/two/", plain),
]

pytestmark = pytest.mark.urls(__name__)


def test_method_decorator_on_dispatch_locks_per_url_argument(client):
    assert client.get("/md/a/").content == b"a"
    held = Lock("md:a", ttl=30)
    assert held.acquire(wait=0)
    try:
        busy = client.get("/md/a/")
        assert busy.status_code == 409 and 1 <= int(busy["Retry-After"]) <= 30
        assert client.get("/md/b/").status_code == 200  # another slug: another lock
    finally:
        held.release()
    assert client.get("/md/a/").status_code == 200


def test_method_decorator_on_an_async_views_dispatch(async_client):
    async def scenario():
        free = (await async_client.get("/md-async/a/")).status_code
        held = Lock("md:a", ttl=30)
        assert await held.aacquire(wait=0)
        try:
            busy = (await async_client.get("/md-async/a/")).status_code
        finally:
            await held.arelease()
        return free, busy, (await async_client.get("/md-async/a/")).status_code

    assert asyncio.run(scenario()) == (200, 409, 200)


def test_method_decorator_with_semaphores_and_read_write_locks(client):
    assert [client.get(url).status_code for url in ("/md-sem/", "/md-read/", "/md-write/")] == [
        200,
        200,
        200,
    ]
    with Semaphore("md-sem", permits=1, ttl=30):
        assert client.get("/md-sem/").status_code == 429
    writer = ReadWriteLock("md-rw", ttl=30).write()
    assert writer.acquire(wait=0)
    try:
        assert client.get("/md-read/").status_code == 409
        assert client.get("/md-write/").status_code == 409
    finally:
        writer.release()


def test_with_lock_on_a_drf_method_answers_409_when_busy_and_503_in_an_outage(client, settings):
    assert client.get("/drf/1/").json() == {"pk": 1}
    held = Lock("drf:1", ttl=30)
    assert held.acquire(wait=0)
    try:
        busy = client.get("/drf/1/")
        assert busy.status_code == 409 and 1 <= int(busy["Retry-After"]) <= 30
    finally:
        held.release()
    settings.REDCOORD = {
        **settings.REDCOORD,
        "URL": f"redis://127.0.0.1:{free_port()}/0",
        "CONNECT_TIMEOUT": 0.2,
    }
    down = client.get("/drf/2/")
    assert down.status_code == 503 and down["Retry-After"] == "5"


def test_rate_limit_on_a_drf_method_counts_and_refuses(client):
    answers = [client.get("/drf-limited/") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2]["RateLimit-Policy"] == '"2/m";q=2;w=60'


def test_the_middlewares_429_lists_each_policy_once(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django_redcoord.middleware.RateLimitMiddleware"]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [
            {"path": "/mw/", "policy": "5/m", "key": "ip", "name": "mw-all"},
            {"path": "/mw/one/", "policy": "1/m", "key": "ip", "name": "mw-one"},
        ],
    }
    assert client.get("/mw/one/").status_code == 200
    refused = client.get("/mw/one/")
    assert refused.status_code == 429
    policies = [p.strip() for p in refused["RateLimit-Policy"].split(", ")]
    assert sorted(policies) == ['"1/m";q=1;w=60', '"5/m";q=5;w=60'], policies
    states = [s.split(";")[0] for s in refused["RateLimit"].split(", ")]
    assert sorted(states) == ['"1/m"', '"5/m"'], refused["RateLimit"]
