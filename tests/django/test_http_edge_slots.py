"""Concurrency slots and limiter state at the HTTP edge, as requests really end.

Issue 31, defects 4, 5 and 7: a DRF throttle with a concurrency policy never
gave its slot back; middleware rules on one path with different methods
shared one limiter state; ``concurrency=n`` of ``@rate_limit`` and of the
middleware was released before a streamed body ran.
"""

from __future__ import annotations

import asyncio
import io
import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.http import FileResponse, JsonResponse, StreamingHttpResponse
from django.urls import path
from django.views import View

from django_redcoord import rate_limit
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.middleware import rule_names

from ..support.http_edge_asgi import asgi_request

pytestmark = pytest.mark.urls(__name__)

MIDDLEWARE = "django_redcoord.middleware.RateLimitMiddleware"


def lines(n):
    for i in range(n):
        yield f"{i}\n"


async def alines(n, pause=0.0):
    for i in range(n):
        yield f"{i}\n"
        await asyncio.sleep(pause)


@rate_limit("concurrency=1", key="ip", name="edge-stream")
def stream_view(request):
    return StreamingHttpResponse(lines(3))


@rate_limit("concurrency=1", key="ip", name="edge-astream")
async def async_stream_view(request):
    return StreamingHttpResponse(alines(40, 0.01))


@rate_limit("concurrency=1", key="ip", name="edge-file")
def file_view(request):
    return FileResponse(io.BytesIO(b"x" * 20000))


@rate_limit("concurrency=1", key="ip", name="edge-cbv-stream")
class AsyncStreamView(View):
    async def get(self, request):
        return StreamingHttpResponse(alines(40, 0.01))


def plain_stream(request):  # limited by the middleware's rules
    return StreamingHttpResponse(lines(3))


async def plain_astream(request):
    return StreamingHttpResponse(alines(40, 0.01))


def plain(request):
    return JsonResponse({"ok": True})


@rate_limit("2/m", key="ip", methods=["GET"], name="edge-get-fn")
def get_limited(request):
    return JsonResponse({"ok": True})


@rate_limit("2/m", key="ip", methods=["get"], name="edge-get-cbv")
class GetLimitedView(View):
    def get(self, request):
        return JsonResponse({"ok": True})


urlpatterns = [
    path("get-fn/", get_limited),
    path("get-cbv/", GetLimitedView.as_view()),
    path("stream/", stream_view),
    path("astream/", async_stream_view),
    path("file/", file_view),
    path("cbv-stream/", AsyncStreamView.as_view()),
    path("mw/stream/", plain_stream),
    path("mw/astream/", plain_astream),
    path("methods/", plain),
    path("keys/", plain),
]


def held(name: str, key: str = "ip:127.0.0.1") -> bool:
    """True while ``key`` holds the one slot of a ``concurrency=1`` limiter."""
    return RateLimiter("concurrency=1", name=name).peek(key).remaining == 0


def released_soon(name: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not held(name):
            return True
        time.sleep(0.02)
    return False


# -- @rate_limit: held until the body ends ---------------------------------------------------


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
def test_a_streamed_response_holds_its_slot_until_the_body_has_been_sent(client):
    first = client.get("/stream/")
    assert first.status_code == 200 and held("edge-stream")
    assert client.get("/stream/").status_code == 429  # was 200: released before the body ran
    assert b"".join(first.streaming_content) == b"0\n1\n2\n"
    assert not held("edge-stream")
    again = client.get("/stream/")
    assert again.status_code == 200
    again.close()


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
def test_a_streamed_response_closed_before_its_body_gives_the_slot_back(client):
    first = client.get("/stream/")
    assert held("edge-stream")
    first.close()  # the client left before the first chunk (a WSGI server calls close())
    assert not held("edge-stream")


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
def test_a_streamed_response_closed_mid_body_gives_the_slot_back(client):
    first = client.get("/stream/")
    body = iter(first.streaming_content)
    assert next(body) == b"0\n" and held("edge-stream")
    first.close()  # the client left mid-body: gunicorn closes the response
    assert not held("edge-stream")
    assert client.get("/stream/").status_code == 200


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
def test_a_file_response_holds_its_slot_until_sent(client):
    first = client.get("/file/")
    assert held("edge-file") and client.get("/file/").status_code == 429
    assert len(b"".join(first.streaming_content)) == 20000
    assert not held("edge-file")


@pytest.mark.parametrize(
    ("url", "name"), [("/astream/", "edge-astream"), ("/cbv-stream/", "edge-cbv-stream")]
)
def test_an_async_streamed_body_under_asgi_holds_its_slot_to_the_end(url, name):
    seen = {}

    async def mid_body(answer):
        if len(answer.chunks) == 2:
            seen["held"] = held(name)
            seen["second"] = (await asgi_request(url)).status

    answer = asyncio.run(asgi_request(url, on_chunk=mid_body))
    assert answer.status == 200 and answer.complete and answer.body.count(b"\n") == 40
    assert seen == {"held": True, "second": 429}
    assert not held(name)


@pytest.mark.parametrize(
    ("url", "name"), [("/astream/", "edge-astream"), ("/cbv-stream/", "edge-cbv-stream")]
)
def test_a_client_that_disconnects_mid_body_gives_the_slot_back(url, name):
    seen = []

    async def mid_body(answer):
        seen.append(held(name))

    answer = asyncio.run(asgi_request(url, disconnect_after_chunks=2, on_chunk=mid_body))
    assert answer.status == 200 and not answer.complete
    assert seen[:2] == [True, True]  # held while the body ran
    assert released_soon(name)  # and given back once the client left (the body is closed)


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")
def test_an_async_streamed_body_served_under_wsgi_holds_its_slot_to_the_end(client):
    first = client.get("/astream/")
    assert first.status_code == 200 and held("edge-astream")
    assert client.get("/astream/").status_code == 429
    assert b"".join(first).count(b"\n") == 40  # WSGI serves an async body through async_to_sync
    assert not held("edge-astream")


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")
def test_a_sync_streamed_body_served_under_asgi_gives_the_slot_back():
    answer = asyncio.run(asgi_request("/stream/"))
    assert answer.status == 200 and answer.body == b"0\n1\n2\n"
    assert not held("edge-stream")


# -- the middleware: held until the body ends ------------------------------------------------


def concurrency_rule(settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/mw/", "policy": "concurrency=1", "name": "edge-mw"}],
    }


@pytest.mark.django_db  # response.close() sends request_finished: Django closes old DB connections
def test_the_middleware_holds_a_streamed_responses_slot_until_the_body_has_been_sent(
    client, settings
):
    concurrency_rule(settings)
    first = client.get("/mw/stream/")
    assert first.status_code == 200 and held("edge-mw")
    assert client.get("/mw/stream/").status_code == 429  # was 200
    assert b"".join(first.streaming_content) == b"0\n1\n2\n"
    assert not held("edge-mw")
    closed = client.get("/mw/stream/")
    closed.close()
    assert not held("edge-mw")


def test_the_middleware_under_asgi_holds_an_async_bodys_slot_and_gives_it_back_on_disconnect(
    settings,
):
    concurrency_rule(settings)
    seen = {}

    async def mid_body(answer):
        if len(answer.chunks) == 2:
            seen["second"] = (await asgi_request("/mw/astream/")).status

    answer = asyncio.run(asgi_request("/mw/astream/", on_chunk=mid_body))
    assert answer.complete and seen == {"second": 429}
    assert not held("edge-mw")
    during = []

    async def record(answer):
        during.append(held("edge-mw"))

    cut = asyncio.run(asgi_request("/mw/astream/", disconnect_after_chunks=2, on_chunk=record))
    assert not cut.complete and during[:2] == [True, True] and released_soon("edge-mw")


# -- the middleware: each rule its own state -------------------------------------------------


def test_rules_on_one_path_with_different_methods_count_apart(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [
            {"path": "/methods/", "policy": "1/m", "methods": ["POST"]},
            {"path": "/methods/", "policy": "3/m", "methods": ["GET"]},
        ],
    }
    assert [client.get("/methods/").status_code for _ in range(3)] == [200, 200, 200]
    assert [client.post("/methods/").status_code for _ in range(2)] == [200, 429]  # was [429, 429]
    assert client.get("/methods/").status_code == 429


@pytest.mark.parametrize("url", ["/get-fn/", "/get-cbv/", "/methods/"])
def test_a_limit_on_get_counts_head_which_runs_the_same_view(client, settings, url):
    # Django answers HEAD with the GET view: a limit on GET that let HEAD by was a way around
    # it, with the view's work done every time.
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/methods/", "policy": "2/m", "methods": ["GET"]}],
    }
    assert [client.head(url).status_code for _ in range(3)] == [200, 200, 429]
    assert client.get(url).status_code == 429
    assert client.post(url).status_code in (200, 405)  # POST is not limited (a CBV has no post)


def test_rules_on_one_path_with_different_keys_count_apart(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [
            {"path": "/keys/", "policy": "2/m"},
            {
                "path": "/keys/",
                "policy": "2/m",
                "key": "header:X-Api-Key",
            },  # no header: by IP, its own count
        ],
    }
    assert [client.get("/keys/").status_code for _ in range(3)] == [
        200,
        200,
        429,
    ]  # was [200, 429, 429]


def test_rule_names_are_distinct_and_stable():
    rules = [
        {"path": "/api/", "policy": "10/s"},
        {"path": "/login/", "policy": "5/m", "methods": ["post"]},
        {"path": "/login/", "policy": "100/m", "methods": ["GET"]},
        {"path": "/x/", "policy": "1/s"},
        {"path": "/x/", "policy": "2/s"},
        {"path": "/x/", "policy": "2/s"},
        {"path": "/über uns/", "policy": "1/s"},
        {"path": "/shared/", "policy": "1/s", "name": "mine"},
        {
            "path": "/also-shared/",
            "policy": "1/s",
            "name": "mine",
        },  # the same name on purpose: shared
    ]
    names = rule_names(rules)
    assert names[:3] == ["path:api", "path:login:POST", "path:login:GET"]
    assert len(set(names[3:7])) == 4 and names[7:] == ["mine", "mine"]
    assert rule_names(rules) == names and rule_names(list(reversed(rules)))[::-1][:4] == names[:4]
    for name in names:
        RateLimiter("1/s", name=name)  # valid


# -- DRF: a concurrency throttle gives its slot back -----------------------------------------


def drf_views():
    pytest.importorskip("rest_framework")
    from rest_framework.exceptions import ValidationError
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from django_redcoord.contrib.drf import RedisThrottle

    class OneAtATime(RedisThrottle):
        policy = "concurrency=1"
        key = "ip"
        name = "edge-drf"

    class Export(APIView):
        authentication_classes: list = []
        permission_classes: list = []
        throttle_classes = [OneAtATime]

        def get(self, request):
            mode = request.query_params.get("mode")
            if mode == "crash":
                raise RuntimeError("the view failed")
            if mode == "invalid":
                raise ValidationError("bad input")
            if mode == "stream":
                return StreamingHttpResponse(lines(3))
            return Response({"held": held("edge-drf")})

    return OneAtATime, Export.as_view()


def test_a_drf_concurrency_throttle_gives_its_slot_back_at_the_end_of_each_request():
    from rest_framework.test import APIRequestFactory

    _, view = drf_views()
    factory = APIRequestFactory()
    answers = [view(factory.get("/export/")) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]  # was [200, 429, 429]
    assert [a.data for a in answers] == [{"held": True}] * 3  # held while the view ran
    assert not held("edge-drf")


def test_a_drf_concurrency_slot_comes_back_after_errors():
    from rest_framework.test import APIRequestFactory

    _, view = drf_views()
    factory = APIRequestFactory()
    assert view(factory.get("/export/", {"mode": "invalid"})).status_code == 400
    assert not held("edge-drf")
    with pytest.raises(RuntimeError, match="the view failed"):
        view(factory.get("/export/", {"mode": "crash"}))
    assert not held("edge-drf")
    assert view(factory.get("/export/")).status_code == 200


def test_a_drf_streamed_response_holds_the_slot_until_its_body_ends():
    from rest_framework.test import APIRequestFactory

    _, view = drf_views()
    factory = APIRequestFactory()
    streamed = view(factory.get("/export/", {"mode": "stream"}))
    assert streamed.status_code == 200 and held("edge-drf")
    assert view(factory.get("/export/")).status_code == 429
    assert b"".join(streamed.streaming_content) == b"0\n1\n2\n"
    assert not held("edge-drf")


def test_a_drf_concurrency_throttle_outside_an_api_view_says_so():
    from rest_framework.test import APIRequestFactory

    throttle, _ = drf_views()
    with pytest.raises(ImproperlyConfigured, match="needs a DRF APIView"):
        throttle().allow_request(APIRequestFactory().get("/"), None)


@pytest.mark.parametrize("methods", ["GET", ["GET", 1], [""]])
def test_methods_must_be_a_list_of_method_names(methods):
    # "GET" counted the letters G, E and T: the limit applied to no request at all
    with pytest.raises(TypeError, match=r"methods must be a list of HTTP methods such as"):
        rate_limit("1/m", methods=methods)
