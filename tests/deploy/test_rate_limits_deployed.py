"""Rate limits as deployed: who the client is, behind each server and proxy, over IPv4 and IPv6.

Every test runs on every deployment (see ``servers.py``). The clients are
real peers (127.0.0.2, 127.0.0.3, ::1); behind nginx the server sees only
the proxy on its Unix socket and must find the client in X-Forwarded-For.
On ``asgi-tcp`` uvicorn listens dual-stack on ``::``: its IPv4 clients
arrive as ``::ffff:127.0.0.x``, which must stay one client each, not one
IPv6 /64 for every IPv4 client of the site.
"""

from __future__ import annotations

import pytest

from .servers import V4A, V4B, V6

pytestmark = pytest.mark.xdist_group("deploy")  # --dist loadgroup: one worker, servers started once


def statuses(site, path, n, **kwargs):
    return [site.get(path, **kwargs).status for _ in range(n)]


@pytest.mark.parametrize("path", ["/rl/ip/", "/rl/aip/"], ids=["sync", "async"])
def test_each_client_has_its_own_budget(site, path):
    """One client using up its budget (3/m) does not lock out another, IPv4 or IPv6."""
    assert statuses(site, path, 4, client=V4A) == [200, 200, 200, 429], site.logs()
    assert site.get(path, client=V4B).status == 200, f"{site.name}: {V4B} shares {V4A}'s budget"
    assert statuses(site, path, 4, client=V6) == [200, 200, 200, 429], (
        f"{site.name}: ::1 shares a budget"
    )
    assert site.get(path, client=V4B).status == 200


def test_a_forged_forwarded_header_does_not_change_the_key(site):
    """A client that names another address in X-Forwarded-For still counts as itself."""
    assert statuses(site, "/rl/ip/", 4, client=V4A) == [200, 200, 200, 429]
    forged = site.get("/rl/ip/", client=V4A, headers={"X-Forwarded-For": "198.51.100.7"})
    assert forged.status == 429, f"{site.name}: a forged X-Forwarded-For gave a fresh budget"
    forged = site.get(
        "/rl/ip/", client=V4A, headers={"X-Forwarded-For": "198.51.100.7, 198.51.100.8"}
    )
    assert forged.status == 429


@pytest.mark.parametrize("deployment", ["wsgi-uds", "asgi-uds"], indirect=True)
def test_ipv6_clients_of_one_64_share_a_budget(site):
    """Behind the proxy, clients anywhere: one /64 is one client; the next /64 is another."""
    assert [site.get_as("/rl/ip/", "2001:db8:1:2::a").status for _ in range(4)] == [
        200,
        200,
        200,
        429,
    ], site.logs()
    assert site.get_as("/rl/ip/", "2001:db8:1:2:ffff:ffff:ffff:fffe").status == 429, (
        "a /64 got 2^64 budgets"
    )
    assert site.get_as("/rl/ip/", "2001:db8:1:3::a").status == 200
    assert site.get_as("/rl/ip/", "203.0.113.9").status == 200


@pytest.mark.parametrize(
    "one, other",
    [("/rl/search/", "/rl/login/"), ("/rl/asearch/", "/rl/alogin/")],
    ids=["sync-cbv", "async-cbv"],
)
def test_class_based_views_have_their_own_limiters(site, one, other):
    """Two class-based views limited without ``name=``: searching does not use up the login's
    budget."""
    assert statuses(site, one, 3, client=V4A) == [200, 200, 429]
    assert site.get(other, client=V4A).status == 200, f"{site.name}: {other} shares {one}'s limiter"


@pytest.mark.parametrize(
    "path",
    ["/rl/user/", "/rl/auser/", "/mw/user/", "/drf/user/"],
    ids=["sync", "async", "middleware", "drf"],
)
def test_signed_in_users_and_anonymous_clients_count_apart(site, path):
    """``key="user"``: anonymous by IP, signed in by user, whatever address they come from."""
    alice, bob = site.sign_in("alice"), site.sign_in("bob")
    assert statuses(site, path, 3, client=V4A) == [200, 200, 429], site.logs()
    assert statuses(site, path, 3, client=V4A, cookie=alice) == [200, 200, 429], (
        "alice counted as her IP"
    )
    assert site.get(path, client=V4A, cookie=bob).status == 200
    assert site.get(path, client=V4B, cookie=alice).status == 429, (
        "alice got a new budget from a new address"
    )
    assert site.get(path, client=V6).status == 200


def test_middleware_counts_each_client_apart(site):
    assert statuses(site, "/mw/ip/", 3, client=V4A) == [200, 200, 429]
    assert site.get("/mw/ip/", client=V4B).status == 200
    assert site.get("/mw/ip/", client=V6).status == 200


def test_middleware_rules_for_one_path_keep_their_own_state(site):
    """POST 2/m and GET 20/m on one path: the POSTs running out leave the GETs alone."""
    assert statuses(site, "/mw/form/", 3, client=V4A, method="POST") == [200, 200, 429]
    assert site.get("/mw/form/", client=V4A).status == 200, (
        f"{site.name}: the GET rule shares the POST rule's state"
    )


def test_drf_concurrency_throttle_gives_its_slot_back(site):
    """``concurrency=1``: one request after another all pass (the slot ends with the request)."""
    assert statuses(site, "/drf/concurrency/?hold=0", 3, client=V4A) == [200, 200, 200], site.logs()


def test_drf_concurrency_throttle_refuses_a_second_request_in_flight(site):
    """The negative control of the test above: two at once, one is refused."""
    from .test_holds_deployed import together

    replies = together(site, ["/drf/concurrency/?hold=1.5"] * 2, clients=(V4A,))
    assert sorted(r.status for r in replies) == [200, 429]


def test_drf_throttle_defined_in_a_function_works(site):
    assert site.get("/drf/local/", client=V4A).status == 200, site.logs()
