"""The RateLimiter's public behaviour through both drivers (see tests/support/drivers.py)."""

from __future__ import annotations

import string
import time

import pytest

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.ratelimit import RateLimited, RateLimiter, parse, safe_key
from django_redcoord.core.ratelimit.records import busiest_keys

from ...support.drivers import KINDS
from ...support.drivers import Driver as BaseDriver


class Driver(BaseDriver):
    def limiter(self, policies, name="api", client=None, **kwargs):
        return RateLimiter(policies, name=name, client=client or self.client, prefix="rl", **kwargs)


@pytest.fixture(params=KINDS)
def driver(request, redis_url):
    return Driver.for_param(request, redis_url)


def test_gcra_lets_a_burst_through_then_one_per_interval(driver):
    async def scenario(d):
        # 2/s: the four hits must land within one interval (0.5 s); at 10/s (0.1 s) four round
        # trips through Sentinel on a loaded CI machine took longer, and the fourth passed.
        rl = d.limiter("2/s;burst=3")
        started = time.monotonic()
        decisions = [await d.call(rl, "hit", "u1") for _ in range(4)]
        spent = time.monotonic() - started  # (the first hit's interval ran this much meanwhile)
        assert [x.allowed for x in decisions] == [True, True, True, False]
        assert [x.remaining for x in decisions[:3]] == [2, 1, 0]
        refused = decisions[3]
        assert max(0, 0.49 - spent) < refused.retry_after <= 0.5, (refused.retry_after, spent)
        assert refused.denied_by.text == "2/s;burst=3"
        await d.sleep(refused.retry_after + 0.01)
        assert (await d.call(rl, "hit", "u1")).allowed and not (
            await d.call(rl, "hit", "u1")
        ).allowed
        assert (await d.call(rl, "hit", "u2")).allowed  # keys are counted apart

    driver.play(scenario)


def test_policies_are_all_or_nothing(driver):
    async def scenario(d):
        rl = d.limiter("2/s & 3/m")
        assert [(await d.call(rl, "hit", "k")).allowed for _ in range(3)] == [True, True, False]
        peek = await d.call(rl, "peek", "k")
        assert [s.remaining for s in peek.policies] == [
            0,
            1,
        ]  # the refused hit counted against neither
        await d.sleep(1.0)
        assert (await d.call(rl, "hit", "k")).allowed
        refused = await d.call(rl, "hit", "k")
        assert not refused.allowed and refused.denied_by.text == "3/m" and refused.retry_after > 10

    driver.play(scenario)


def test_a_sliding_window_counts_about_limit_per_window(driver):
    async def scenario(d):
        rl = d.limiter("4/s;window", name="win")
        assert [(await d.call(rl, "hit", "w")).allowed for _ in range(5)] == [True] * 4 + [False]
        refused = await d.call(rl, "hit", "w")
        assert 0 < refused.retry_after <= 2.0
        await d.sleep(2.05)  # two windows on: nothing weighs any more
        assert [(await d.call(rl, "hit", "w")).allowed for _ in range(4)] == [True] * 4

    driver.play(scenario)


def test_concurrency_slots_are_released_or_expire_with_their_lease(driver):
    async def scenario(d):
        rl = d.limiter("concurrency=2;lease=0.3", name="cc")
        a, b, c = [await d.call(rl, "hit", "k") for _ in range(3)]
        assert (
            (a.allowed, b.allowed, c.allowed) == (True, True, False) and a.token and c.token is None
        )
        assert 0 < c.retry_after <= 0.3
        assert await d.call(rl, "release", a) is True
        assert (await d.call(rl, "hit", "k")).allowed
        await d.sleep(0.35)  # leases of b and the last one ran out: as if their requests crashed
        assert [(await d.call(rl, "hit", "k")).allowed for _ in range(2)] == [True, True]

    driver.play(scenario)


def test_cost_reset_and_any_key_text(driver):
    async def scenario(d):
        rl = d.limiter("10/m")
        weird = "user name with spaces {and braces} " + string.punctuation
        assert (await d.call(rl, "hit", weird, 7)).remaining == 3
        assert not (await d.call(rl, "hit", weird, 4)).allowed
        assert safe_key(weird).startswith("#") and safe_key("ip:1.2.3.4") == "ip:1.2.3.4"
        assert await d.call(rl, "reset", weird) >= 1
        assert (await d.call(rl, "hit", weird, 10)).allowed
        with pytest.raises(ValueError, match="cost must be a whole number"):
            await d.call(rl, "hit", weird, 0)

    driver.play(scenario)


def test_a_slot_block_raises_rate_limited_and_releases(driver):
    async def scenario(d):
        rl = d.limiter("concurrency=1", name="slot")
        if d.kind == "async":
            async with rl.aslot("k"):
                with pytest.raises(RateLimited, match="concurrency=1"):
                    async with rl.aslot("k"):
                        pass
            async with rl.aslot("k"):
                pass
        else:
            with rl.slot("k"):
                with pytest.raises(RateLimited, match="concurrency=1"):
                    with rl.slot("k"):
                        pass
            with rl.slot("k"):
                pass

    driver.play(scenario)


def test_redis_down_raises_coordination_unavailable(driver, redis_servers):
    (server,) = redis_servers(1)

    async def scenario(d):
        rl = RateLimiter("1/s", name="down", client=d.open(server.url), prefix="rl")
        server.stop()
        with pytest.raises(CoordinationUnavailable, match="rate limit 'down'"):
            await d.call(rl, "hit", "k")

    driver.play(scenario)


def test_policy_text_is_checked():
    assert [p.kind for p in parse("10/s;burst=20 & 1000/h;window & concurrency=5")] == [
        "gcra",
        "window",
        "concurrency",
    ]
    for bad, message in [
        ("10/x", "unknown period"),
        ("5/s;window;burst=9", "unknown option|no burst"),
        ("concurrency=2 & concurrency=3", "at most one concurrency"),
    ]:
        with pytest.raises(ValueError, match=message):
            RateLimiter(bad)


def test_the_busiest_keys_turn_over_with_the_servers_minute(redis_client):
    rl = RateLimiter("100/s", name="turn", client=redis_client, prefix="turn", native=False)
    top, before = KeyBuilder("turn").rate_limit_top("turn")
    for _attempt in range(3):  # again if the server's minute turns meanwhile
        redis_client.delete(top, before)
        minute = redis_client.time()[0] // 60
        # the zset counted the minute before: this minute's first hit moves it aside
        redis_client.zadd(top, {"": -(minute - 1), "old": 5})
        rl.hit("new")
        (row,) = busiest_keys(redis_client, prefix="turn")
        if redis_client.time()[0] // 60 == minute:
            break
    assert redis_client.zscore(before, "old") == 5 and redis_client.zscore(top, "") == -minute
    assert {k["key"]: k["hits"] for k in row["keys"]} == {"old": 5, "new": 1}
    # older counts are dropped when the minute turns, never shown as this minute's
    redis_client.zadd(top, {"": -(minute - 3), "stale": 7})
    redis_client.zadd(before, {"": -(minute - 4), "staler": 9})
    assert [k["key"] for k in busiest_keys(redis_client, prefix="turn")[0]["keys"]] == []
    rl.hit("new")
    assert not redis_client.exists(before)
    assert redis_client.zrange(top, 0, -1, withscores=True) == [(b"", -minute), (b"new", 1.0)]


def test_a_limiter_made_per_request_costs_one_round_trip_a_decision_and_is_listed(
    redis_client, monkeypatch
):
    import redis

    RateLimiter("100/s", name="warm-up", client=redis_client, prefix="rt").hit(
        "k"
    )  # the script is loaded
    sends = []
    send = redis.connection.Connection.send_packed_command

    def counting(self, *args, **kwargs):
        sends.append(1)
        return send(self, *args, **kwargs)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counting)
    for _ in range(5):  # RateLimiter(...).hit() inside a view: a new object every request
        # (per minute: no token comes back while a loaded machine gets to the read below)
        assert (
            RateLimiter("100/m & 1000/h", name="per-request", client=redis_client, prefix="rt")
            .hit("k")
            .allowed
        )
    assert len(sends) == 5
    monkeypatch.undo()
    rows = {row["name"]: row for row in busiest_keys(redis_client, prefix="rt")}
    assert rows["per-request"]["policies"] == "100/m & 1000/h"
    assert rows["per-request"]["keys"] == [
        {"key": "k", "hits": 5, "remaining": 95, "retry_after": 0.0, "allowed": True}
    ]


def test_a_limiter_name_with_braces_is_refused_when_the_limiter_is_built(redis_client):
    # the name is part of composite keys (no {tag}): refused at construction, not at every hit()
    with pytest.raises(ValueError, match="rate limiter name"):
        RateLimiter("1/s", name="a{b}", client=redis_client)


def test_more_keys_than_a_limiter_remembers_are_each_counted_apart(driver, monkeypatch):
    # A limiter remembers the script keys of its last KEYS_KEPT keys; past that it forgets
    # them all and builds them again. Every key must still be counted on its own state.
    import django_redcoord.core.ratelimit.limiter as limiter_module

    monkeypatch.setattr(limiter_module, "KEYS_KEPT", 8)

    async def scenario(d):
        rl = d.limiter("2/h", name="many")
        keys = [f"k{i}" for i in range(21)]  # 21 keys: the cache is emptied twice a pass
        passes = [[(await d.call(rl, "hit", k)).allowed for k in keys] for _ in range(3)]
        assert passes == [[True] * 21, [True] * 21, [False] * 21]
        assert len(rl._keys_of) <= 8
        peeks = [await d.call(rl, "peek", k) for k in keys]
        assert {p.remaining for p in peeks} == {0}, [p.remaining for p in peeks]

    driver.play(scenario)
