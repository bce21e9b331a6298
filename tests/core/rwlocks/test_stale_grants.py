"""A write hold handed to a paused waiter (SIGSTOP): its lease and its stale hand-off (see
tests/core/stale_grants.py)."""

from __future__ import annotations

from .. import stale_grants


def test_a_write_hold_found_ours_on_a_late_re_check_is_renewed_to_what_the_waiter_believes(
    redis_url,
):
    r = stale_grants.renewal("rwlock", redis_url)
    assert r["ok"]
    assert stale_grants.renewal_ok(r), (
        f"the waiter believes it holds for {r['left']:.3f} s more; the server's lease ends in "
        f"{r['server']} s"
    )


def test_negative_control_the_lease_check_catches_a_waiter_that_believes_too_long(redis_url):
    r = stale_grants.renewal("rwlock", redis_url, "overconfident")
    assert r["ok"] and not stale_grants.renewal_ok(r)


def test_a_waiter_paused_past_its_lease_does_not_take_its_old_hand_off(redis_url):
    r, y_held = stale_grants.stale_hand_off("rwlock", redis_url)
    assert y_held
    assert not (r["believes"] and r["server"] is None), (
        "two holders of a write lock: the paused waiter took its old hand-off"
    )
    assert not r["ok"]  # the write lock is Y's for 30 s: W's wait runs out


def test_negative_control_the_overlap_check_catches_a_waiter_that_takes_any_hand_off(redis_url):
    r, y_held = stale_grants.stale_hand_off("rwlock", redis_url, "unfenced")
    assert y_held
    assert r["believes"] and r["server"] is None


def test_negative_control_the_overlap_check_catches_a_waiter_told_first_that_trusts_its_hand_off(
    redis_url,
):
    r, y_held = stale_grants.stale_hand_off("rwlock", redis_url, "trusting")
    assert y_held
    assert r["believes"] and r["server"] is None
