"""Input checks the red team found loose (policy text, waits, resize) and trust_masters() on
asyncio clients."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest
import redis.asyncio

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.rates import parse
from django_redcoord.core.redlock import trust_masters
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.values import check_wait

# -- policies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "٣/s",
        "1/٣s",
        "²/s",
        "10/s;burst=٣",
        "concurrency=٣",
        "concurrency=1;lease=٣",
        "concurrency=1;lease=1_0",
    ],
)
def test_a_policy_takes_ascii_digits_only(text):
    with pytest.raises(ValueError, match="policy"):
        parse(text)


@pytest.mark.parametrize(
    "text", ["1/999999999d", "1/366d", "1/8761h", "1/525601m", "1/31536001s", "5/400d;window"]
)
def test_a_period_longer_than_a_year_is_refused_saying_so(text):
    with pytest.raises(ValueError, match="at most 365 days"):
        parse(text)


def test_the_longest_period_and_the_largest_count_are_accepted():
    assert parse("1/365d")[0].period == 365 * 86400
    assert parse("1000000000/s")[0].limit == 10**9
    assert parse("concurrency=3;lease=0.5")[0].period == 0.5
    with pytest.raises(ValueError, match="from 1 to 1000000000"):
        parse("1000000001/s")


def test_a_limiter_with_a_huge_period_is_refused_before_it_counts(redis_client):
    with pytest.raises(ValueError, match="at most 365 days"):
        RateLimiter("1/999999999d", name="p", client=redis_client)


# -- waits --------------------------------------------------------------------------------


@pytest.mark.parametrize("wait", [1e12, 365 * 86400 + 1, float("inf")])
def test_a_wait_longer_than_a_year_is_refused_as_lock_wait_is(redis_client, wait):
    with pytest.raises(ValueError, match="a year"):
        Lock("z", wait=wait, client=redis_client)
    with pytest.raises(ValueError, match="a year"):
        Lock("z", client=redis_client).acquire(wait=wait)


def test_a_year_and_none_are_still_waits():
    assert check_wait(365 * 86400) == 365 * 86400
    assert check_wait(None) is None and check_wait(0) == 0


# -- resize -------------------------------------------------------------------------------


def test_resize_to_zero_is_refused_as_permits_zero_is(redis_client):
    with pytest.raises(ValueError, match="from 1 to 1000000"):
        Semaphore("rz", 0, client=redis_client)
    sem = Semaphore("rz", 2, client=redis_client)
    with pytest.raises(
        ValueError, match=r"resize\(\) permits must be a whole number from 1 to 1000000"
    ):
        sem.resize(0)
    assert not redis_client.exists(sem.keys.state)  # nothing was written
    assert sem.resize(1) == 0


def test_aresize_to_zero_is_refused(redis_url):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            with pytest.raises(ValueError, match="from 1 to"):
                await Semaphore("rz", 2, client=client).aresize(0)
        finally:
            await client.aclose()

    asyncio.run(scenario())


# -- trust_masters ------------------------------------------------------------------------


def test_trust_masters_refuses_asyncio_clients_and_vouches_for_none(redis_client, redis_url):
    boot = KeyBuilder("t").redlock_boot()
    aclient = redis.asyncio.Redis.from_url(redis_url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match="sync clients"):
            trust_masters([redis_client, aclient], prefix="t")
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert not redis_client.exists(boot)  # the sync one was not vouched for either
    asyncio.run(aclient.aclose())
    assert len(trust_masters([redis_client], prefix="t")) == 1  # sync clients: vouched
    assert redis_client.exists(boot)
