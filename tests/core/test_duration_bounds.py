"""Durations past what can be asked of Redis are refused at the call, with a clear error, and
nothing is written (core/values.py): a ``keep`` or ``lease`` of 1e300 passed the checks and then
failed inside Redis after part of the work was written (an event set with no TTL and no index
entry); a huge int ``wait`` raised OverflowError."""

from __future__ import annotations

import pytest

from django_redcoord.core import CountDownLatch, Event, Lock, Signal, Topic


@pytest.mark.parametrize(
    "make",
    [
        lambda c: Event("e", keep=1e300, client=c),
        lambda c: Event("e", keep=10**400, client=c),
        lambda c: CountDownLatch("l", 2, keep=1e300, client=c),
        lambda c: Topic("t", client=c).subscribe("g", lease=1e300),
    ],
)
def test_a_duration_past_a_year_is_refused_and_nothing_is_written(redis_client, make):
    with pytest.raises((ValueError, TypeError), match="at most 3.1536e\\+07 seconds|seconds"):
        make(redis_client)
    assert redis_client.dbsize() == 0


def test_a_year_is_still_taken(redis_client):
    event = Event("e", keep=365 * 24 * 3600, client=redis_client)
    event.set()
    assert event.is_set()


@pytest.mark.parametrize(
    "call",
    [
        lambda c: Lock("a", ttl=5, wait=10**400, client=c),
        lambda c: Event("e", client=c).wait(timeout=10**400),
        lambda c: Signal("s", client=c).wait(timeout=10**400),
    ],
)
def test_a_huge_int_wait_is_a_value_error_not_an_overflow(redis_client, call):
    with pytest.raises(ValueError, match="at most 3.1536e\\+07 seconds"):
        call(redis_client)
