"""The Django site that bench_async_views.py serves with uvicorn (one module: settings, views,
URLs).

Served as ``bench._asgi_site:application``; the Redis URL comes from the
environment variable ``BENCH_REDCOORD_URL`` (the benchmark's throwaway
redis-server). Settings are configured here with ``settings.configure``: the
app ``django_redcoord`` installed, no middleware, no database, ``DEBUG=False``,
Django's default logging plus view errors (500s) printed to stderr so the
benchmark can count them (nothing is logged while there are none).

Three views with the same body: take the lock ``item:<n>`` (``<n>`` from the
URL), hold it 1 ms with a sleep that blocks neither the event loop nor other
requests, answer the name in a small text response; and a reference view
without a lock.

* ``/plain/<n>``: ``async def``, the same 1 ms ``asyncio.sleep`` and answer,
  no lock (what Django and uvicorn cost on their own).
* ``/native/<n>``: ``async def`` with ``@with_lock`` (acquired and released on
  the event loop with the redis.asyncio client REDCOORD configures).
* ``/thread/<n>``: ``async def`` taking a sync ``Lock`` through
  ``sync_to_async(..., thread_sensitive=False)``: acquire and release each
  run in a thread of the event loop's default executor.
* ``/sync/<n>``: plain ``def`` with ``@with_lock``, which Django's ASGI
  handler runs through ``sync_to_async(thread_sensitive=True)``.
"""

from __future__ import annotations

import asyncio
import os
import time

import django
from django.conf import settings

TTL = 30.0  # REDCOORD's default LOCK_TTL
WAIT = 10.0  # REDCOORD's default LOCK_WAIT
HOLD = 0.001  # seconds each request holds its lock

settings.configure(
    DEBUG=False,
    SECRET_KEY="bench-only-not-secret",
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    INSTALLED_APPS=["django_redcoord"],
    MIDDLEWARE=[],
    ROOT_URLCONF=__name__,
    USE_TZ=True,
    REDCOORD={"URL": os.environ.get("BENCH_REDCOORD_URL", "redis://127.0.0.1:6379/0")},
    LOGGING={
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"stderr": {"class": "logging.StreamHandler", "level": "ERROR"}},
        "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
    },
)
django.setup(set_prefix=False)

from asgiref.sync import sync_to_async  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402

from django_redcoord import Lock, with_lock  # noqa: E402


def _answer(n: str) -> HttpResponse:
    return HttpResponse(n, content_type="text/plain")


async def plain(request, n: str) -> HttpResponse:
    await asyncio.sleep(HOLD)
    return _answer(n)


@with_lock("item:{n}", ttl=TTL, wait=WAIT)
async def native(request, n: str) -> HttpResponse:
    await asyncio.sleep(HOLD)
    return _answer(n)


async def thread(request, n: str) -> HttpResponse:
    lock = Lock(f"item:{n}", ttl=TTL, wait=WAIT)
    if not await sync_to_async(lock.acquire, thread_sensitive=False)():
        return HttpResponse("busy\n", status=409, content_type="text/plain")
    try:
        await asyncio.sleep(HOLD)
    finally:
        await sync_to_async(lock.release, thread_sensitive=False)()
    return _answer(n)


@with_lock("item:{n}", ttl=TTL, wait=WAIT)
def sync(request, n: str) -> HttpResponse:
    time.sleep(HOLD)  # in the request's own thread: the event loop is not blocked
    return _answer(n)


urlpatterns = [
    path("plain/<str:n>", plain),
    path("native/<str:n>", native),
    path("thread/<str:n>", thread),
    path("sync/<str:n>", sync),
]

application = get_asgi_application()
