"""@rate_limit and the middleware through Django's test client: 429s, headers, keys, proxies,
outages."""

from __future__ import annotations

import json

import pytest

from django_redcoord.core.ratelimit import RateLimiter

pytestmark = pytest.mark.urls("tests.support.decorator_views")


def test_a_view_answers_429_with_retry_after_the_draft_headers_and_problem_json(client):
    answers = [client.get("/rl/search/") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.json()["remaining"] for a in answers[:3]] == [2, 1, 0]
    ok, refused = answers[0], answers[3]
    assert ok["RateLimit-Policy"] == '"3/m";q=3;w=60' and ok["RateLimit"].startswith('"3/m";r=2;t=')
    assert refused["Content-Type"] == "application/problem+json"
    body = json.loads(refused.content)
    assert (
        body["status"] == 429 and body["title"] == "Too Many Requests" and body["policy"] == "3/m"
    )
    assert 1 <= int(refused["Retry-After"]) <= 20 and body["retry_after"] == int(
        refused["Retry-After"]
    )
    assert refused["RateLimit"].startswith('"3/m";r=0;t=')


def test_the_same_answers_when_the_servers_cl_throttle_decides(client, settings, redis_cell_url):
    from django_redcoord.core.ratelimit import native
    from django_redcoord.core.transport.clients import client_from_url

    native.forget()
    settings.REDCOORD = {**settings.REDCOORD, "URL": redis_cell_url}
    answers = [client.get("/rl/search/") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.json()["remaining"] for a in answers[:3]] == [2, 1, 0]
    refused = answers[3]
    assert answers[0]["RateLimit-Policy"] == '"3/m";q=3;w=60' and refused["RateLimit"].startswith(
        '"3/m";r=0;t='
    )
    assert 1 <= int(refused["Retry-After"]) <= 21 and json.loads(refused.content)["policy"] == "3/m"
    redis = client_from_url(redis_cell_url)
    try:  # the command decided: its key holds the count, the script's does not exist
        assert [k.decode().rsplit(":", 1)[-1] for k in redis.scan_iter("test:rl:*")] == ["cell"]
    finally:
        redis.close()
    native.forget()


def test_x_forwarded_for_is_not_believed_unless_the_peer_is_a_trusted_proxy(client, settings):
    for forged in (
        "1.1.1.1",
        "2.2.2.2",
        "3.3.3.3",
    ):  # a client inventing addresses stays one client
        client.get("/rl/search/", HTTP_X_FORWARDED_FOR=forged)
    assert client.get("/rl/search/", HTTP_X_FORWARDED_FOR="4.4.4.4").status_code == 429
    settings.REDCOORD = {**settings.REDCOORD, "TRUSTED_PROXIES": ["127.0.0.0/8"]}
    # behind our proxy (the test client is 127.0.0.1) the forwarded address is the client
    assert client.get("/rl/search/", HTTP_X_FORWARDED_FOR="5.5.5.5").status_code == 200
    # a client that prepends a forged hop is still counted by the hop our proxy saw
    for _ in range(2):
        client.get("/rl/search/", HTTP_X_FORWARDED_FOR="9.9.9.9, 6.6.6.6")
    assert client.get("/rl/search/", HTTP_X_FORWARDED_FOR="7.7.7.7, 6.6.6.6").status_code == 200
    assert client.get("/rl/search/", HTTP_X_FORWARDED_FOR="8.8.8.8, 6.6.6.6").status_code == 429


def test_only_the_given_methods_count_and_async_views_are_limited_per_user(
    async_client, django_user_model
):
    import asyncio

    async def scenario():
        assert [(await async_client.get("/rl/post/")).status_code for _ in range(3)] == [
            200,
            200,
            200,
        ]
        return [(await async_client.post("/rl/post/")).status_code for _ in range(3)]

    assert asyncio.run(scenario()) == [200, 200, 429]


def test_block_false_lets_the_view_decide(client):
    assert [client.get("/rl/soft/").json()["allowed"] for _ in range(2)] == [True, False]


def test_a_concurrency_slot_is_given_back_when_the_view_returns(client):
    assert [client.get("/rl/one/").status_code for _ in range(3)] == [200, 200, 200]


def test_redis_down_is_fail_open_by_default_and_503_when_closed(client, settings):
    from tests.support.redis_servers import free_port

    settings.REDCOORD = {
        **settings.REDCOORD,
        "URL": f"redis://127.0.0.1:{free_port()}/0",
        "CONNECT_TIMEOUT": 0.2,
    }
    assert client.get("/rl/search/").status_code == 200  # open: let through, logged
    closed = client.get("/rl/closed/")
    assert closed.status_code == 503 and closed["Retry-After"] == "5"


def test_the_middleware_limits_by_path_prefix(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django_redcoord.middleware.RateLimitMiddleware"]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/rl/soft/", "policy": "2/m", "key": "ip", "name": "mw"}],
    }
    answers = [client.get("/rl/soft/") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert (
        '"2/m";q=2;w=60' in answers[0]["RateLimit-Policy"]
        and '"1/m"' in answers[0]["RateLimit-Policy"]
    )
    assert client.get("/rl/one/").status_code == 200  # another path: not limited by the rule
    assert RateLimiter("2/m", name="mw").peek("ip:127.0.0.1").remaining == 0


def test_a_middleware_rule_for_any_path_needs_no_name(client, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django_redcoord.middleware.RateLimitMiddleware"]
    settings.REDCOORD = {
        **settings.REDCOORD,
        "RATE_LIMITS": [{"path": "/rl/über uns/", "policy": "1/m"}],
    }
    assert [client.get("/rl/über uns/").status_code for _ in range(2)] == [
        404,
        429,
    ]  # no view there; limited all the same
    assert client.get("/rl/one/").status_code == 200


def test_bad_arguments_fail_at_decoration():
    from django_redcoord import rate_limit

    with pytest.raises(ValueError, match="not understood"):
        rate_limit("ten per second")
    with pytest.raises(ValueError, match="key must be 'ip', 'user'"):
        rate_limit("1/s", key="cookie")
    with pytest.raises(ValueError, match="on_unavailable must be"):
        rate_limit("1/s", on_unavailable="maybe")


@pytest.mark.django_db(transaction=True)
def test_an_async_view_counts_a_logged_in_user_by_user_without_touching_the_database_on_the_loop(
    async_client, django_user_model
):
    import asyncio

    alice = django_user_model.objects.create_user("alice", password="x")
    bob = django_user_model.objects.create_user("bob", password="x")

    async def posts(n):
        return [(await async_client.post("/rl/post/")).status_code for _ in range(n)]

    async_client.force_login(alice)  # a session in the database: reading request.user queries it
    assert asyncio.run(posts(3)) == [200, 200, 429]
    async_client.force_login(bob)  # another user, another budget
    assert asyncio.run(posts(2)) == [200, 200]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/rl/by-name/", "/rl/by-email/"])
def test_key_functions_of_async_views_may_read_the_user(async_client, django_user_model, path):
    import asyncio

    async def gets(n):
        return [(await async_client.get(path)).status_code for _ in range(n)]

    for name in ("carol", "dave"):
        async_client.force_login(
            django_user_model.objects.create_user(name, email=f"{name}@example.com")
        )
        assert asyncio.run(gets(2)) == [200, 429], name


def test_class_based_views_whole_or_one_method(client, async_client):
    import asyncio

    assert [client.get("/rl/cbv/").status_code for _ in range(2)] == [200, 429]
    assert [client.get("/rl/cbv-method/").status_code for _ in range(2)] == [
        200,
        200,
    ]  # only post() is limited
    assert [client.post("/rl/cbv-method/").status_code for _ in range(2)] == [200, 429]

    async def gets():
        return [(await async_client.get("/rl/async-cbv/")).status_code for _ in range(2)]

    assert asyncio.run(gets()) == [200, 429]
