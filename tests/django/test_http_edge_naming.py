"""Limiter names at the HTTP edge: every view counts on its own, every derived name is valid.

Issue 31, defects 1 and 8: a class-based view decorated without ``name=`` took
its limiter's name from the ``View.dispatch`` it inherits (every such view of
the project shared one limiter); a DRF throttle defined in a function
(``<locals>`` in its qualified name) failed every request with a ValueError.
"""

from __future__ import annotations

import asyncio
import string

import pytest
from django.http import JsonResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.views import View

from django_redcoord import rate_limit
from django_redcoord.core.keys import validate_name
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.decorators.ratelimits import limiter_name

pytestmark = pytest.mark.urls(__name__)


def ok(request, *args, **kwargs):
    return JsonResponse({"ok": True})


@rate_limit("1/m")
class LoginView(View):  # the README's example: three searches must not use up the login's budget
    def get(self, request):
        return ok(request)


@rate_limit("1/m")
class SearchView(View):
    def get(self, request):
        return ok(request)


@rate_limit("1/m")
class AsyncLoginView(View):
    async def get(self, request):
        return ok(request)


@rate_limit("1/m")
class AsyncSearchView(View):
    async def get(self, request):
        return ok(request)


@method_decorator(rate_limit("1/m"), name="dispatch")
class DecoratedDispatchA(View):
    def get(self, request):
        return ok(request)


@method_decorator(rate_limit("1/m"), name="dispatch")
class DecoratedDispatchB(View):
    def get(self, request):
        return ok(request)


@method_decorator(rate_limit("1/m"), name="dispatch")
class AsyncDecoratedDispatch(View):
    async def get(self, request):
        return ok(request)


class LimitedBase(View):
    @rate_limit("1/m")
    def get(self, request):
        return ok(request)


class OrdersView(LimitedBase):
    pass


class InvoicesView(LimitedBase):
    pass


urlpatterns = [
    path("login/", LoginView.as_view()),
    path("search/", SearchView.as_view()),
    path("alogin/", AsyncLoginView.as_view()),
    path("asearch/", AsyncSearchView.as_view()),
    path("dispatch-a/", DecoratedDispatchA.as_view()),
    path("dispatch-b/", DecoratedDispatchB.as_view()),
    path("adispatch/", AsyncDecoratedDispatch.as_view()),
    path("orders/", OrdersView.as_view()),
    path("invoices/", InvoicesView.as_view()),
]


def used(name: str, key: str = "ip:127.0.0.1") -> int:
    """How many of a 1/m limiter's one request ``key`` has used (0 or 1)."""
    return 1 - RateLimiter("1/m", name=name).peek(key).remaining


def test_two_class_based_views_without_a_name_count_apart(client):
    assert [client.get("/search/").status_code for _ in range(3)] == [200, 429, 429]
    assert (
        client.get("/login/").status_code == 200
    )  # was 429: both were "django.views.generic.base.View.dispatch"
    assert used(f"{__name__}.LoginView") == 1 and used(f"{__name__}.SearchView") == 1
    assert used("django.views.generic.base.View.dispatch") == 0


def test_two_async_class_based_views_without_a_name_count_apart(async_client):
    async def scenario():
        searches = [(await async_client.get("/asearch/")).status_code for _ in range(2)]
        return searches, (await async_client.get("/alogin/")).status_code

    assert asyncio.run(scenario()) == ([200, 429], 200)
    assert used(f"{__name__}.AsyncLoginView") == 1 and used(f"{__name__}.AsyncSearchView") == 1


def test_method_decorator_on_dispatch_is_named_after_the_view_being_dispatched(
    client, async_client
):
    assert [client.get("/dispatch-a/").status_code for _ in range(2)] == [200, 429]
    assert client.get("/dispatch-b/").status_code == 200
    assert (
        used(f"{__name__}.DecoratedDispatchA") == 1 and used(f"{__name__}.DecoratedDispatchB") == 1
    )

    # async handlers behind the inherited dispatch: decided around their coroutine
    async def gets():
        return [(await async_client.get("/adispatch/")).status_code for _ in range(2)]

    assert asyncio.run(gets()) == [200, 429]
    assert used(f"{__name__}.AsyncDecoratedDispatch") == 1


def test_a_decorated_method_inherited_by_two_views_counts_per_view(client):
    assert [client.get("/orders/").status_code for _ in range(2)] == [200, 429]
    assert client.get("/invoices/").status_code == 200
    assert used(f"{__name__}.OrdersView.get") == 1 and used(f"{__name__}.InvoicesView.get") == 1


def test_function_views_keep_their_module_and_qualified_name(rf):
    def make():
        @rate_limit("1/m")
        def local_view(request):
            return ok(request)

        return local_view

    view = make()
    assert [view(rf.get("/")).status_code for _ in range(2)] == [200, 429]
    raw = (
        f"{__name__}.test_function_views_keep_their_module_and_qualified_name"
        ".<locals>.make.<locals>.local_view"
    )
    assert used(limiter_name(raw)) == 1


@pytest.mark.parametrize(
    "raw",
    [
        "tests.views.make.<locals>.View",
        "app.views.über",
        "app.views._ber",
        "a b",
        "a_b",
        "{tag}",
        "x" * 500,
        "x" * 499 + "y",
        "",
        "\x00\x1b[31m",
        string.printable,
    ],
)
def test_a_name_derived_from_any_text_is_valid(raw):
    name = limiter_name(raw)
    assert validate_name(name, tag=False) == name
    RateLimiter("1/m", name=name)  # accepted as a limiter name


def test_derived_names_never_collide_where_the_text_differs():
    raws = [
        "a b",
        "a_b",
        "a.b",
        "über",
        "_ber",
        "<locals>",
        "_locals_",
        "x" * 300,
        "x" * 299 + "y",
        "a{b}",
        "a_b_",
    ]
    names = [limiter_name(raw) for raw in raws]
    assert len(set(names)) == len(raws)
    allowed = "abcXYZ019_-.:/@=+,#~|"
    assert all(
        limiter_name(f"view.{c}") == f"view.{c}" for c in allowed
    )  # valid names are kept as they are


def test_an_explicit_invalid_name_fails_at_decoration():
    with pytest.raises(ValueError, match="allowed characters"):
        rate_limit("1/m", name="login view")


def test_a_drf_throttle_defined_in_a_function_limits_instead_of_failing():
    pytest.importorskip("rest_framework")
    from rest_framework.response import Response
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    from django_redcoord.contrib.drf import RedisThrottle

    def make():
        class LocalThrottle(RedisThrottle):  # qualname: ...make.<locals>.LocalThrottle
            policy = "2/m"
            key = "ip"

        class Orders(APIView):
            authentication_classes: list = []
            permission_classes: list = []
            throttle_classes = [LocalThrottle]

            def get(self, request):
                return Response({"ok": True})

        return LocalThrottle, Orders.as_view()

    throttle, view = make()
    factory = APIRequestFactory()
    assert [view(factory.get("/orders/")).status_code for _ in range(3)] == [
        200,
        200,
        429,
    ]  # was 500, 500, 500
    name = throttle.limiter_name()
    assert validate_name(name, tag=False) == name and "_locals_" in name


def test_a_drf_throttle_with_an_invalid_name_fails_where_it_is_written():
    pytest.importorskip("rest_framework")
    from django_redcoord.contrib.drf import RedisThrottle

    with pytest.raises(ValueError, match="allowed characters"):

        class Bad(RedisThrottle):
            policy = "1/s"
            name = "my throttle"


def test_a_middleware_rule_name_that_no_key_can_hold_is_refused_by_the_settings_check():
    from django_redcoord.core.options import problems

    found = problems(
        {"URL": "redis://x", "RATE_LIMITS": [{"path": "/a/", "policy": "1/s", "name": "a{b}"}]}
    )
    assert found == [
        "REDCOORD['RATE_LIMITS'][0]['name'] 'a{b}' contains '{}'; allowed characters are ASCII "
        "letters, digits and _ - . : / @ = + , # ~ |"
    ]


def test_stacked_limits_on_one_view_keep_their_own_state(rf):
    @rate_limit("2/m")
    @rate_limit("5/m")
    def search(request):
        return ok(request)

    assert [search(rf.get("/")).status_code for _ in range(3)] == [200, 200, 429]
    base = limiter_name(
        f"{__name__}.test_stacked_limits_on_one_view_keep_their_own_state.<locals>.search"
    )
    assert (
        RateLimiter("5/m", name=base).peek("ip:127.0.0.1").remaining == 3
    )  # the inner one saw two
    assert RateLimiter("2/m", name=limiter_name(f"{base}#2")).peek("ip:127.0.0.1").remaining == 0


def test_stacked_limits_on_a_class_based_view_keep_their_own_state(rf):
    @rate_limit("2/m")
    @rate_limit("5/m")
    class Stacked(View):
        def get(self, request):
            return ok(request)

    view = Stacked.as_view()
    answers = [view(rf.get("/")).status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    base = limiter_name(
        f"{__name__}.test_stacked_limits_on_a_class_based_view_keep_their_own_state.<locals>.Stacked"
    )
    assert RateLimiter("5/m", name=base).peek("ip:127.0.0.1").remaining == 3
