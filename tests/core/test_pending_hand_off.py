"""A hand-off waiting on ``first`` for its owner is not taken by a newcomer (semaphores,
read-write locks; see tests/core/stale_grants.py ``pending_hand_off``).

The waiter told by the one ahead that it is first in line blocks on ``first`` without a look;
a newcomer that found nobody ahead of it in the queue used to block on ``first`` too, pop that
waiter's hand-off, and leave it waiting out its whole block (4.5 s) while its permit sat unused.
Now the newcomer blocks behind the hand-off's owner (``pending_ahead``). The negative control is
the acquire script without it: the check must catch the stall. An owner SIGKILLed before it pops
its hand-off keeps the newcomer behind it no longer than its lease (the newcomer's block is bounded
by the earliest lease, as every queued waiter's is); its negative control is an acquire script
that tells a queued waiter no lease bounds its wait.
"""

from __future__ import annotations

import pytest

from . import stale_grants


@pytest.mark.parametrize("family", ["semaphore", "rwlock"])
def test_a_newcomer_first_in_line_waits_behind_a_pending_hand_off(redis_url, family):
    r = stale_grants.pending_hand_off(family, redis_url)
    assert r["ok"] and r["newcomer"]
    assert r["took"] < 1.5, f"P got its hand-off {r['took']:.2f} s after it was resumed"


@pytest.mark.parametrize("family", ["semaphore", "rwlock"])
def test_negative_control_a_newcomer_blocking_on_first_makes_the_owner_wait_out_its_block(
    redis_url, family
):
    r = stale_grants.pending_hand_off(family, redis_url, "blind")
    assert r["ok"] and r["newcomer"]
    assert r["took"] > 2.0, r


@pytest.mark.parametrize("family", ["semaphore", "rwlock"])
def test_a_newcomer_behind_a_pending_owner_that_is_killed_waits_no_longer_than_its_lease(
    redis_url, family
):
    r = stale_grants.pending_hand_off(family, redis_url, fault="kill")
    assert r["newcomer"]
    assert r["after_kill"] < r["lease_left"] + 1.0, r


@pytest.mark.parametrize("family", ["semaphore", "rwlock"])
def test_negative_control_a_newcomer_told_no_lease_bounds_its_wait_blocks_a_whole_chunk(
    redis_url, family
):
    r = stale_grants.pending_hand_off(family, redis_url, "unbounded", fault="kill")
    assert r["newcomer"]
    assert r["after_kill"] > r["lease_left"] + 1.0, r
