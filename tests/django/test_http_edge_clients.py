"""Who the client is, as deployed: Unix-socket proxies, X-Forwarded-For, IPv6 networks, the user.

Issue 31, defects 2, 3 and 6: behind a proxy on a Unix socket ``REMOTE_ADDR`` is
empty (gunicorn ``--bind unix:``) or absent (uvicorn ``--uds``) and every
client was key ``ip:``; an IPv6 client was keyed by its full address (one /64
gave it 2^64 budgets); ``key="user"`` with no ``request.user`` (the middleware
placed before ``AuthenticationMiddleware``) silently counted by IP.
"""

from __future__ import annotations

import asyncio

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.http import JsonResponse
from django.urls import path

from django_redcoord import rate_limit
from django_redcoord.core.exceptions import ConfigurationError
from django_redcoord.http import client_ip, ip_key, rate_limit_key

from ..support.http_edge_asgi import asgi_request

pytestmark = pytest.mark.urls(__name__)


@rate_limit("1/m", key="ip", name="edge-ip")
def by_ip(request):
    return JsonResponse({"ok": True})


@rate_limit("1/m", key="ip", name="edge-aip")
async def async_by_ip(request):
    return JsonResponse({"ok": True})


@rate_limit("1/m", key="user", name="edge-user")
def by_user(request):
    return JsonResponse({"ok": True})


urlpatterns = [
    path("ip/", by_ip),
    path("aip/", async_by_ip),
    path("user/", by_user),
    path("mw/", by_ip),
]


def trust(settings, *proxies, **more):
    settings.REDCOORD = {**settings.REDCOORD, "TRUSTED_PROXIES": list(proxies), **more}


# -- a Unix socket: no client address -------------------------------------------------------


@pytest.mark.parametrize("remote", ["", "unix:/run/gunicorn.sock"])
def test_an_empty_remote_addr_is_refused_loudly_not_lumped_into_one_key(client, remote):
    with pytest.raises(ImproperlyConfigured, match=r"TRUSTED_PROXIES") as caught:
        client.get("/ip/", REMOTE_ADDR=remote)
    assert isinstance(caught.value, ConfigurationError)
    assert '"unix"' in str(caught.value) and "Unix socket" in str(caught.value)


def test_an_absent_client_under_asgi_is_refused_loudly(caplog):
    answer = asyncio.run(
        asgi_request("/aip/", client=None)
    )  # uvicorn --uds: no client in the scope
    assert answer.status == 500
    [record] = [r for r in caplog.records if r.exc_info]
    assert isinstance(record.exc_info[1], ImproperlyConfigured) and "REMOTE_ADDR is absent" in str(
        record.exc_info[1]
    )


def test_behind_a_trusted_unix_socket_proxy_each_client_counts_on_its_own(client, settings):
    trust(settings, "unix")
    assert client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 200
    assert client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 429
    assert client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.6").status_code == 200
    # a client that sends its own X-Forwarded-For is counted by the hop the proxy appended
    assert (
        client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.5").status_code
        == 429
    )
    assert (
        client.get(
            "/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.5, 203.0.113.7"
        ).status_code
        == 200
    )


def test_behind_a_trusted_unix_socket_proxy_asgi_without_a_client_counts_each_forwarded_client(
    settings,
):
    trust(settings, "unix")

    async def get(forwarded):
        return (
            await asgi_request("/aip/", client=None, headers={"X-Forwarded-For": forwarded})
        ).status

    async def scenario():
        return [await get("198.51.100.1"), await get("198.51.100.1"), await get("198.51.100.2")]

    assert asyncio.run(scenario()) == [200, 429, 200]


@pytest.mark.parametrize("forwarded", [None, "", "not-an-address"])
def test_a_trusted_unix_socket_proxy_that_sends_no_usable_forwarded_for_is_refused(
    client, settings, forwarded
):
    trust(settings, "unix")
    extra = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    with pytest.raises(ImproperlyConfigured, match="X-Forwarded-For"):
        client.get("/ip/", REMOTE_ADDR="", **extra)


def test_the_unix_entry_does_not_make_tcp_peers_trusted(rf, settings):
    trust(settings, "unix")
    request = rf.get("/", REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert client_ip(request) == "192.0.2.9"


def test_forwarded_hops_are_walked_right_to_left_past_trusted_proxies(rf, settings):
    trust(settings, "10.0.0.0/8", "unix")
    cases = {
        ("10.0.0.1", "198.51.100.9, 10.0.0.2, 10.0.0.3"): "198.51.100.9",
        (
            "10.0.0.1",
            "6.6.6.6, 198.51.100.9, 10.0.0.3",
        ): "198.51.100.9",  # a forged hop left of the client
        ("10.0.0.1", "10.0.0.7, 10.0.0.3"): "10.0.0.7",  # only proxies: the farthest one
        ("10.0.0.1", "garbage, 10.0.0.3"): "10.0.0.3",  # a broken hop: believe nothing left of it
        ("10.0.0.1", "[2001:db8::1]:443, 10.0.0.3"): "2001:db8::1",
        ("10.0.0.1", "198.51.100.9:5555"): "198.51.100.9",
        ("", "198.51.100.9, 10.0.0.3"): "198.51.100.9",
        (
            "::ffff:10.0.0.1",
            "198.51.100.9",
        ): "198.51.100.9",  # an IPv4 proxy seen on a dual-stack socket
    }
    for (remote, forwarded), expected in cases.items():
        request = rf.get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
        assert client_ip(request) == expected, (remote, forwarded)


def test_trusted_proxies_accept_unix_and_refuse_other_words():
    from django_redcoord.core.options import problems

    assert problems({"URL": "redis://x", "TRUSTED_PROXIES": ["unix", "10.0.0.0/8", "::1"]}) == []
    assert any(
        "'socket'" in p and "'unix'" in p
        for p in problems({"URL": "redis://x", "TRUSTED_PROXIES": ["socket"]})
    )


# -- IPv6 networks --------------------------------------------------------------------------


def test_ipv6_clients_are_counted_by_their_64_by_default(client):
    assert client.get("/ip/", REMOTE_ADDR="2001:db8:1:2::1").status_code == 200
    assert client.get("/ip/", REMOTE_ADDR="2001:db8:1:2:ffff::9").status_code == 429  # the same /64
    assert client.get("/ip/", REMOTE_ADDR="2001:db8:1:3::1").status_code == 200  # another /64


def test_ipv6_behind_a_proxy_is_masked_too(client, settings):
    trust(settings, "unix")
    assert (
        client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="2001:db8:7:7::1").status_code
        == 200
    )
    assert (
        client.get("/ip/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="2001:db8:7:7::2").status_code
        == 429
    )


def test_the_prefixes_are_settings(client, settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMIT_IPV6_PREFIX": 128,
        "RATE_LIMIT_IPV4_PREFIX": 24,
    }
    assert client.get("/ip/", REMOTE_ADDR="2001:db8:1:2::1").status_code == 200
    assert (
        client.get("/ip/", REMOTE_ADDR="2001:db8:1:2::2").status_code == 200
    )  # each address on its own
    assert client.get("/ip/", REMOTE_ADDR="192.0.2.1").status_code == 200
    assert client.get("/ip/", REMOTE_ADDR="192.0.2.77").status_code == 429  # the same /24
    assert client.get("/ip/", REMOTE_ADDR="192.0.3.1").status_code == 200


def test_ip_keys(settings):
    assert ip_key("192.0.2.1") == "ip:192.0.2.1"
    assert ip_key("2001:db8:1:2:3:4:5:6") == "ip:2001:db8:1:2::/64"
    assert ip_key("fe80::1%eth0") == "ip:fe80::/64"
    assert ip_key("::ffff:192.0.2.1") == "ip:192.0.2.1"
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMIT_IPV6_PREFIX": 48,
        "RATE_LIMIT_IPV4_PREFIX": 16,
    }
    assert ip_key("2001:db8:1:2::1") == "ip:2001:db8:1::/48"
    assert ip_key("192.0.2.1") == "ip:192.0.0.0/16"


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("RATE_LIMIT_IPV6_PREFIX", 0),
        ("RATE_LIMIT_IPV6_PREFIX", 129),
        ("RATE_LIMIT_IPV4_PREFIX", 33),
        ("RATE_LIMIT_IPV4_PREFIX", "32"),
        ("RATE_LIMIT_IPV4_PREFIX", True),
    ],
)
def test_prefix_settings_are_checked(setting, value):
    from django_redcoord.core.options import problems

    assert any(
        setting in p and "prefix length" in p
        for p in problems({"URL": "redis://x", setting: value})
    )


def test_the_user_key_of_an_anonymous_client_uses_the_masked_network(rf):
    from django.contrib.auth.models import AnonymousUser

    request = rf.get("/", REMOTE_ADDR="2001:db8:5:5::5")
    request.user = AnonymousUser()
    assert rate_limit_key(request, "user") == "ip:2001:db8:5:5::/64"
    assert rate_limit_key(request, "header:X-Api-Key") == "ip:2001:db8:5:5::/64"


# -- key="user" needs request.user -----------------------------------------------------------


def test_the_user_key_without_authentication_middleware_is_an_error_not_counting_by_ip(
    client, settings
):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if "AuthenticationMiddleware" not in m]
    with pytest.raises(ImproperlyConfigured, match="AuthenticationMiddleware"):
        client.get("/user/")


def test_the_middleware_placed_before_authentication_refuses_user_rules_at_runtime(
    client, settings
):
    settings.MIDDLEWARE = ["django_redcoord.middleware.RateLimitMiddleware", *settings.MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/mw/", "policy": "5/m", "key": "user"}],
    }
    with pytest.raises(ImproperlyConfigured, match="AuthenticationMiddleware"):
        client.get("/mw/")


def test_the_middleware_after_authentication_counts_by_user(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django_redcoord.middleware.RateLimitMiddleware"]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/mw/", "policy": "5/m", "key": "user"}],
    }
    assert client.get("/mw/").status_code == 200


def test_a_check_says_the_middleware_comes_before_authentication(settings):
    from django_redcoord.checks import check_rate_limit_middleware

    auth = "django.contrib.auth.middleware.AuthenticationMiddleware"
    ours = "django_redcoord.middleware.RateLimitMiddleware"
    rules = [{"path": "/api/", "policy": "5/m"}, {"path": "/me/", "policy": "5/m", "key": "user"}]
    settings.REDCOORD = {**settings.REDCOORD, "RATE_LIMITS": rules}
    base = [m for m in settings.MIDDLEWARE if m != auth]

    settings.MIDDLEWARE = [ours, *base, auth]
    [error] = check_rate_limit_middleware()
    assert error.id == "redcoord.E031"
    assert error.msg == (
        "REDCOORD['RATE_LIMITS'][1] key(s) the rate limit on 'user', but "
        "django_redcoord.middleware.RateLimitMiddleware comes before "
        "django.contrib.auth.middleware.AuthenticationMiddleware in MIDDLEWARE: it would find no "
        "request.user (every request is refused with ImproperlyConfigured rather than silently "
        "counted by IP)."
    )
    settings.MIDDLEWARE = [*base, ours]
    [error] = check_rate_limit_middleware()
    assert "has no django.contrib.auth.middleware.AuthenticationMiddleware before it" in error.msg

    settings.MIDDLEWARE = [*base, auth, ours]
    assert check_rate_limit_middleware() == []
    settings.MIDDLEWARE = [ours, *base, auth]
    settings.REDCOORD = {**settings.REDCOORD, "RATE_LIMITS": rules[:1]}  # no rule keys on the user
    assert check_rate_limit_middleware() == []


def test_the_check_is_registered(settings):
    from django.core import checks

    settings.MIDDLEWARE = ["django_redcoord.middleware.RateLimitMiddleware", *settings.MIDDLEWARE]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/me/", "policy": "5/m", "key": "user"}],
    }
    assert "redcoord.E031" in [m.id for m in checks.run_checks(tags=["redcoord"])]
