"""Views of the deployment matrix: each decorator of the HTTP layer on each kind of view.

The guarded views record who is inside in Redis (an overlap detector the
tests read): on entering, ``INCR live:<name>`` and push the count it returned
to ``seen:<name>``; on leaving, ``DECR``. Two requests inside at once push a
2. ``?hold=<seconds>`` is how long a request stays inside.

Streaming views send ``?chunks=`` chunks of ``CHUNK`` bytes, one every
``?every=`` seconds, and count the chunks they produced in ``sent:<name>``;
with ``?gate=1`` the body stops after its first chunk until the test sets
``go:<name>`` (so "the body is still being sent" is a state, not a race).
"""

from __future__ import annotations

import asyncio
import os
import time
from functools import lru_cache

import redis
from django.contrib.auth import get_user_model, login
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from rest_framework.response import Response
from rest_framework.views import APIView

from django_redcoord import (
    Lock,
    rate_limit,
    with_lock,
    with_read_lock,
    with_semaphore,
    with_write_lock,
)
from django_redcoord.contrib.drf import RedisThrottle

CHUNK = 16  # bytes per streamed chunk: b"chunk-000000000\n"


@lru_cache(maxsize=1)
def _redis() -> redis.Redis:
    return redis.Redis.from_url(os.environ["DEPLOY_REDIS_URL"])


def _hold(request) -> float:
    return float(request.GET.get("hold", "0.2"))


def _enter(name: str) -> int:
    count = _redis().incr(f"live:{name}")
    _redis().rpush(f"seen:{name}", count)
    return count


def _leave(name: str) -> None:
    _redis().decr(f"live:{name}")


def _inside(name: str, request) -> HttpResponse:
    _enter(name)
    try:
        time.sleep(_hold(request))
    finally:
        _leave(name)
    return HttpResponse(f"{name} ok\n")


async def _ainside(name: str, request) -> HttpResponse:
    _enter(name)  # a sub-millisecond loopback call: fine on the loop for a test site
    try:
        await asyncio.sleep(_hold(request))
    finally:
        _leave(name)
    return HttpResponse(f"{name} ok\n")


# -- plumbing ------------------------------------------------------------------------------


def ping(request):
    return HttpResponse(f"pong {os.getpid()}\n")


def whoami(request):
    """What the server saw: REMOTE_ADDR (absent, empty or an address) and the forwarded header."""
    return JsonResponse(
        {
            "remote_addr": request.META.get("REMOTE_ADDR"),
            "forwarded": request.META.get("HTTP_X_FORWARDED_FOR"),
            "user": request.user.username if request.user.is_authenticated else None,
            "pid": os.getpid(),
        }
    )


def sign_in(request, username):
    """Sign ``username`` in (a test site: no password); the answer sets the session cookie."""
    user, created = get_user_model().objects.get_or_create(username=username)
    if created and username.startswith("operator"):  # the dashboard's staff: every permission
        user.is_staff = user.is_superuser = True
        user.save()
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return HttpResponse(f"signed in {username}\n")


# -- exclusion: locks, semaphores, read-write locks -----------------------------------------


def unguarded(request):
    """The negative control: the same detector with nothing around it."""
    return _inside("unguarded", request)


@with_lock("deploy:lock:fn", wait=30)
def lock_fn(request):
    return _inside("lock_fn", request)


@with_lock("deploy:lock:cbv", wait=30)
class LockView(View):
    def get(self, request):
        return _inside("lock_cbv", request)


@with_lock("deploy:lock:acbv", wait=30)
class AsyncLockView(View):
    async def get(self, request):
        return await _ainside("lock_acbv", request)


class MethodLockView(View):
    @with_lock("deploy:lock:method:{request.method}", wait=30)
    def get(self, request):
        return _inside("lock_method", request)


@method_decorator(with_lock("deploy:lock:md:{kwargs[slug]}", wait=30), name="dispatch")
class MethodDecoratedLockView(View):  # Django's own idiom for class-based views
    def get(self, request, slug):
        return _inside("lock_md", request)


@method_decorator(with_lock("deploy:lock:amd:{slug}", wait=30), name="dispatch")
class AsyncMethodDecoratedLockView(View):
    async def get(self, request, slug):
        return await _ainside("lock_amd", request)


class DrfLockView(APIView):  # the request is DRF's Request
    authentication_classes: list = []
    permission_classes: list = []

    @with_lock("deploy:lock:drf:{pk}", wait=30)
    def get(self, request, pk):
        return _inside("lock_drf", request)


# the same three with wait=0: busy, they answer 409 at once
@method_decorator(with_lock("deploy:lock:md:{kwargs[slug]}", wait=0), name="dispatch")
class MethodDecoratedBusyView(View):
    def get(self, request, slug):
        return HttpResponse("free\n")


@method_decorator(with_lock("deploy:lock:amd:{slug}", wait=0), name="dispatch")
class AsyncMethodDecoratedBusyView(View):
    async def get(self, request, slug):
        return HttpResponse("free\n")


class DrfBusyView(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    @with_lock("deploy:lock:drf:{pk}", wait=0)
    def get(self, request, pk):
        return Response({"free": True})


@with_lock("deploy:lock:afn", wait=30)
async def lock_afn(request):
    return await _ainside("lock_afn", request)


@with_semaphore("deploy:sem", permits=2, wait=30)
def semaphore_fn(request):
    return _inside("sem_fn", request)


@with_semaphore("deploy:asem", permits=2, wait=30)
async def semaphore_afn(request):
    return await _ainside("sem_afn", request)


def _rw_enter(mine: str, other: str) -> None:
    """Push "<mine inside>,<other inside>" on entering: a writer must see 1,0; a reader x,0."""
    count = _redis().incr(f"live:rw:{mine}")
    others = int(_redis().get(f"live:rw:{other}") or 0)
    _redis().rpush(f"seen:rw:{mine}", f"{count},{others}")


@with_read_lock("deploy:rw", wait=30)
def rw_read(request):
    _rw_enter("r", "w")
    try:
        time.sleep(_hold(request))
    finally:
        _redis().decr("live:rw:r")
    return HttpResponse("read\n")


@with_write_lock("deploy:rw", wait=30)
def rw_write(request):
    _rw_enter("w", "r")
    try:
        time.sleep(_hold(request))
    finally:
        _redis().decr("live:rw:w")
    return HttpResponse("wrote\n")


@with_read_lock("deploy:arw", wait=30)
class AsyncReadView(View):
    async def get(self, request):
        _rw_enter("ar", "aw")
        try:
            await asyncio.sleep(_hold(request))
        finally:
            _redis().decr("live:rw:ar")
        return HttpResponse("read\n")


@with_write_lock("deploy:arw", wait=30)
class AsyncWriteView(View):
    async def get(self, request):
        _rw_enter("aw", "ar")
        try:
            await asyncio.sleep(_hold(request))
        finally:
            _redis().decr("live:rw:aw")
        return HttpResponse("wrote\n")


# -- streamed responses: the hold lasts until the body is sent ------------------------------


def _chunks(name: str, request):
    count, every = int(request.GET.get("chunks", "3")), float(request.GET.get("every", "0.3"))
    gate = request.GET.get("gate") == "1"

    def body():
        for i in range(count):
            _redis().incr(f"sent:{name}")
            yield f"chunk-{i:09d}\n".encode()
            if i == 0 and gate:
                deadline = time.monotonic() + 30
                while not _redis().exists(f"go:{name}") and time.monotonic() < deadline:
                    time.sleep(0.02)
            elif i + 1 < count:
                time.sleep(every)

    return body()


def _achunks(name: str, request):
    count, every = int(request.GET.get("chunks", "3")), float(request.GET.get("every", "0.3"))
    gate = request.GET.get("gate") == "1"

    async def body():
        for i in range(count):
            _redis().incr(f"sent:{name}")
            yield f"chunk-{i:09d}\n".encode()
            if i == 0 and gate:
                deadline = time.monotonic() + 30
                while not _redis().exists(f"go:{name}") and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
            elif i + 1 < count:
                await asyncio.sleep(every)

    return body()


def _streamed(name: str, request) -> StreamingHttpResponse:
    """A body the way the server streams: an async generator under ASGI, a plain one under WSGI
    (Django reads the other kind whole before sending it, and warns)."""
    body = _achunks(name, request) if isinstance(request, ASGIRequest) else _chunks(name, request)
    return StreamingHttpResponse(body, content_type="text/plain")


@with_lock("deploy:stream:lock", wait=0)
def stream_lock(request):
    return _streamed("lock", request)


@with_lock("deploy:stream:alock", wait=0)
async def stream_alock(request):
    return _streamed("alock", request)


@with_semaphore("deploy:stream:sem", permits=1, wait=0)
def stream_semaphore(request):
    return _streamed("sem", request)


@rate_limit("concurrency=1;lease=60", key="ip")
def stream_rate_limit(request):
    return _streamed("rl", request)


@rate_limit("concurrency=1;lease=60", key="ip")
async def stream_arate_limit(request):
    return _streamed("arl", request)


def stream_naive_lock(request):
    """The hang-up test's negative control: a lock given back only when the body runs to its end
    (not in a ``finally``): a client that hangs up leaves it held until its TTL."""
    lock = Lock("deploy:stream:naive", ttl=60, wait=0)
    if not lock.acquire():
        return HttpResponse("busy\n", status=409)
    if isinstance(request, ASGIRequest):

        async def abody():
            async for chunk in _achunks("naive", request):
                yield chunk
            lock.release()

        return StreamingHttpResponse(abody(), content_type="text/plain")

    def body():
        yield from _chunks("naive", request)
        lock.release()

    return StreamingHttpResponse(body(), content_type="text/plain")


def stream_middleware(request):
    """Under ``RATE_LIMITS``' ``/mw/stream/`` rule (concurrency=1 per client)."""
    return _streamed("mw", request)


# -- rate limits: who the client is ---------------------------------------------------------


@rate_limit("3/m", key="ip")
def limited_ip(request):
    return HttpResponse("ok\n")


@rate_limit("3/m", key="ip")
async def limited_aip(request):
    return HttpResponse("ok\n")


@rate_limit("2/m", key="user")
def limited_user(request):
    return HttpResponse("ok\n")


@rate_limit("2/m", key="user")
async def limited_auser(request):
    return HttpResponse("ok\n")


@rate_limit("2/m", key="ip")
class LoginView(View):
    def get(self, request):
        return HttpResponse("login\n")


@rate_limit("2/m", key="ip")
class SearchView(View):
    def get(self, request):
        return HttpResponse("search\n")


@rate_limit("2/m", key="ip")
class AsyncLoginView(View):
    async def get(self, request):
        return HttpResponse("login\n")


@rate_limit("2/m", key="ip")
class AsyncSearchView(View):
    async def get(self, request):
        return HttpResponse("search\n")


def middleware_limited(request):
    return HttpResponse(f"{request.method} ok\n")


# -- Django REST framework ------------------------------------------------------------------


class OneInFlight(RedisThrottle):
    policy = "concurrency=1;lease=60"
    key = "ip"


class TwoPerMinuteEach(RedisThrottle):
    policy = "2/m"
    key = "user"


def _local_throttle():
    class LocalThrottle(RedisThrottle):  # its qualname has <locals>
        policy = "5/m"
        key = "ip"

    return LocalThrottle


class DrfConcurrency(APIView):
    throttle_classes = [OneInFlight]

    def get(self, request):
        time.sleep(_hold(request))
        return Response({"ok": True})


class DrfUser(APIView):
    throttle_classes = [TwoPerMinuteEach]

    def get(self, request):
        return Response({"user": request.user.username or None})


class DrfLocal(APIView):
    throttle_classes = [_local_throttle()]

    def get(self, request):
        return Response({"ok": True})
