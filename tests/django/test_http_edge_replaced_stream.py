"""A streamed response that a middleware replaces gives its lock or slot back when the request ends.

Django never closes a response a middleware swapped for another: ConditionalGetMiddleware's
304 for a view that sets an ``ETag`` (or a ``FileResponse``'s ``Last-Modified``), a middleware
that answers 500 from ``process_response``. The streamed body was never started, so nothing ran
its ``finally`` or its ``close()``, and ``@with_lock``'s lock or ``@rate_limit``'s
``concurrency`` slot stayed taken for its whole TTL or lease: every later request got 409 or 429.
The hold is now also given back when the request's final response is closed
(``request_finished``), under WSGI and ASGI alike.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import pytest
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import path

from django_redcoord import Lock, rate_limit, with_lock
from django_redcoord.core.ratelimit import RateLimiter

from ..support.http_edge_asgi import asgi_request

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]

CONDITIONAL = "django.middleware.http.ConditionalGetMiddleware"
REPLACING = f"{__name__}.ReplacingMiddleware"


def tagged(response):
    response["ETag"] = '"v1"'
    return response


async def achunks():
    for chunk in (b"a", b"b"):
        yield chunk


@with_lock("replaced:{pk}", ttl=30, wait=0)
def locked_stream(request, pk):
    return tagged(StreamingHttpResponse(iter([b"a", b"b"])))


@with_lock("areplaced:{pk}", ttl=30, wait=0)
async def async_locked_stream(request, pk):
    return tagged(StreamingHttpResponse(achunks()))


@rate_limit("concurrency=1;lease=60", key="ip", name="replaced-slot")
def slot_stream(request):
    return tagged(StreamingHttpResponse(iter([b"a", b"b"])))


class ReplacingMiddleware:
    """Answers its own response instead of the view's, as an error page or a cache would."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        self.get_response(request)
        return HttpResponse("replaced", status=503)


urlpatterns = [
    path("locked/<int:pk>/", locked_stream),
    path("alocked/<int:pk>/", async_locked_stream),
    path("slot/", slot_stream),
]


def released_soon(name: str, within: float = 2.0) -> bool:
    end = time.monotonic() + within
    while Lock(name).locked():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def slot_held() -> bool:
    return (
        RateLimiter("concurrency=1;lease=60", name="replaced-slot").peek("ip:127.0.0.1").remaining
        == 0
    )


@pytest.mark.parametrize("middleware", [CONDITIONAL, REPLACING])
@pytest.mark.parametrize(
    ("url", "name"), [("/locked/1/", "replaced:1"), ("/alocked/1/", "areplaced:1")]
)
def test_a_replaced_streamed_response_releases_its_lock_under_wsgi(
    client, settings, middleware, url, name
):
    settings.MIDDLEWARE = [middleware]
    answer = client.get(url, HTTP_IF_NONE_MATCH='"v1"')
    assert answer.status_code in (304, 503)
    answer.close()  # (the WSGI server closes the response it was given: request_finished)
    assert not Lock(name).locked()  # was held for its 30 s TTL
    again = client.get(url)
    assert again.status_code in (200, 503)
    again.close()


@pytest.mark.parametrize("middleware", [CONDITIONAL, REPLACING])
def test_a_replaced_streamed_response_gives_its_slot_back_under_wsgi(client, settings, middleware):
    settings.MIDDLEWARE = [middleware]
    client.get("/slot/", HTTP_IF_NONE_MATCH='"v1"').close()
    assert not slot_held()  # was taken for its 60 s lease
    second = client.get("/slot/")
    assert second.status_code in (200, 503)  # not 429
    second.close()


@pytest.mark.parametrize(
    ("url", "name"), [("/locked/1/", "replaced:1"), ("/alocked/1/", "areplaced:1")]
)
def test_a_replaced_streamed_response_releases_its_lock_under_asgi(settings, url, name):
    settings.MIDDLEWARE = [CONDITIONAL]
    # In a thread of its own, as a server's loop runs: a fresh context, nothing left in it by
    # the requests this thread served before (which hid that the view's task and the handler
    # that closes the response did not share the list).
    answers = []

    async def served() -> None:
        answers.append(await asgi_request(url, headers={"If-None-Match": '"v1"'}))
        await asyncio.sleep(1.0)  # (the server's loop goes on: what it runs later runs)

    runs = threading.Thread(target=lambda: asyncio.run(served()))
    runs.start()
    runs.join(30)
    assert answers[0].status == 304
    assert released_soon(name)  # was held for its 30 s TTL
    assert asyncio.run(asgi_request(url)).status == 200


def test_a_streamed_response_sent_in_full_still_holds_its_lock_until_its_body_ends(
    client, settings
):
    """Control: the request's end does not release early what a body still streams."""
    settings.MIDDLEWARE = [CONDITIONAL]
    answer = client.get("/locked/2/")
    assert answer.status_code == 200
    body = iter(answer.streaming_content)
    assert next(body) == b"a"
    assert Lock("replaced:2").locked()
    assert client.get("/locked/2/").status_code == 409  # another request ended meanwhile
    assert Lock("replaced:2").locked()
    assert list(body) == [b"b"]
    answer.close()
    assert not Lock("replaced:2").locked()


def test_a_streamed_response_made_outside_a_request_gives_back_when_it_is_dropped():
    """Without a request to wait for (a view called from code), the response object's end is
    the bound: dropped unsent and collected, what it held is given back (in a thread of its
    own)."""
    from django_redcoord.decorators.streaming import release_after_body

    given = threading.Event()

    async def arelease() -> None:
        given.set()

    response = StreamingHttpResponse(iter([b"a"]))
    assert release_after_body(response, given.set, arelease)
    assert not given.is_set()
    del response
    gc.collect()  # (the wrapped body and the response refer to each other)
    assert given.wait(2)
