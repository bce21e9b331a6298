"""What a rate-limit decision leaves behind: state that outlives what it holds, every key but
the limiters' list with a TTL, and every hit counted for the admin, refused ones too."""

from __future__ import annotations

import time

import pytest

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.ratelimit.records import busiest_keys


def _same_minute(client, seconds_needed=5):
    """Wait, if need be, until the server's minute has `seconds_needed` left."""
    if 60 - client.time()[0] % 60 < seconds_needed:
        time.sleep(60 - client.time()[0] % 60 + 0.1)


@pytest.mark.parametrize("policies", ["20/s;burst=5", "5/s;window", "3/s;window & 10/s"])
def test_the_state_always_outlives_what_it_holds(redis_client, policies):
    rl = RateLimiter(policies, name="outlive", client=redis_client, prefix="outlive", native=False)
    state, _ = KeyBuilder("outlive").rate_limit("outlive", "k")
    allowed = 0
    for i in range(60):
        decision = rl.hit("k")
        allowed += decision.allowed
        pttl = redis_client.pttl(state)
        # what the policies need: each allowed hit's state lives its reset and 1 s more
        if decision.allowed:
            need = max(p.reset for p in decision.policies) * 1000 + 1000
            assert pttl >= need - 50, (i, pttl, need)
        assert pttl > 0 or (allowed == 0 and pttl == -2), (i, pttl)
        time.sleep(0.01)
    assert 0 < allowed < 60  # both kinds of decision were made


def test_no_key_is_left_without_a_ttl(redis_client):
    """Refused hits, a concurrency-only limiter, a state hash found without a TTL."""
    kb = KeyBuilder("nottl")
    limiters = [
        RateLimiter("2/m", name="g", client=redis_client, prefix="nottl", native=False),
        RateLimiter("2/m;window", name="w", client=redis_client, prefix="nottl", native=False),
        RateLimiter("concurrency=1", name="c", client=redis_client, prefix="nottl", native=False),
    ]
    old_state, _ = kb.rate_limit("g", "old")
    redis_client.hset(old_state, "g1", f"{redis_client.time()[0] * 1000:.3f}")  # no TTL
    for rl in limiters:
        for key in ("a", "b", "old"):
            for _ in range(4):
                rl.hit(key)  # the 3rd and 4th refused (concurrency: the 2nd on)
    without = []
    for name in redis_client.scan_iter(match="nottl:*"):
        if redis_client.pttl(name) == -1 and redis_client.type(name) != b"hash":
            without.append(name)
        elif redis_client.pttl(name) == -1:
            # the limiters' list (the admin's) is the one hash that lives on
            if not name.startswith(b"nottl:index:ratelimiters"):
                without.append(name)
    assert without == []
    assert redis_client.pttl(old_state) > 0


def test_a_refused_hit_is_counted_for_the_admin_too(redis_client):
    rl = RateLimiter("1/m", name="refused", client=redis_client, prefix="refused", native=False)
    _same_minute(redis_client)
    decisions = [rl.hit("k").allowed for _ in range(5)]
    assert decisions == [True, False, False, False, False]
    (row,) = busiest_keys(redis_client, prefix="refused")
    assert {k["key"]: k["hits"] for k in row["keys"]} == {"k": 5}
