"""The admin's name indexes stay about the size of what is live: an entry whose name's keys are
gone (used once, a holder that crashed, a lease left to run out) is dropped by later writes,
and an index nobody writes any more expires. Before, every latch, barrier, event and signal
name ever used stayed in its index for good, and so did every crashed lock, semaphore or
read-write lock holder's name while other names were in use."""

from __future__ import annotations

import time

import pytest

from django_redcoord.core.exceptions import BarrierBroken
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.signals import Event

PREFIX = "ib"


def _entries(client, kind):
    return sum(client.hlen(k) for k in KeyBuilder(PREFIX).index_keys(kind))


def _use(kind, client, name, keep):
    if kind == "latches":
        CountDownLatch(name, 1, keep=keep, client=client, prefix=PREFIX).count_down()
    elif kind == "barriers":
        try:  # (an arrival that times out is a use too)
            Barrier(name, 2, keep=keep, client=client, prefix=PREFIX).wait(0.001)
        except BarrierBroken:
            pass
    else:
        Event(name, keep=keep, client=client, prefix=PREFIX).set()


@pytest.mark.parametrize("kind", ["latches", "barriers", "events"])
def test_names_used_once_leave_their_index_once_their_keep_passed(redis_client, kind):
    for i in range(200):
        _use(kind, redis_client, f"once:{i}", keep=1.0)
    assert _entries(redis_client, kind) == 200
    (index,) = KeyBuilder(PREFIX).index_keys(kind)
    assert 0 < redis_client.pttl(index) <= 3000  # the index goes with its latest entry
    time.sleep(2.2)
    for _ in range(150):  # one name in use: its writes drop the dead entries they meet
        _use(kind, redis_client, "busy", keep=60.0)
    assert _entries(redis_client, kind) <= 20  # (was 201: every name, for good)
    assert redis_client.pttl(index) > 55_000


def test_an_index_nobody_writes_any_more_expires(redis_client):
    for i in range(50):
        _use("events", redis_client, f"gone:{i}", keep=1.0)
    (index,) = KeyBuilder(PREFIX).index_keys("events")
    time.sleep(3.2)  # (an entry's bound is in whole seconds, rounded up; then a second more)
    assert not redis_client.exists(index)


def test_lock_holders_that_never_release_leave_a_bounded_index(redis_client):
    """Every grant left to run out (a crashed holder's, or code that never releases) leaves
    its entry; later fresh grants drop the dead ones they look at: two per grant on average
    (16 in one grant in eight), where one grant in eight looked at one before, so the index
    settles at about twice its live entries rather than growing by 7/8 of an entry a grant."""

    def crashed(phase):
        for i in range(3000):
            name = f"crashed:{phase}:{i}"
            assert Lock(name, ttl=0.05, client=redis_client, prefix=PREFIX).acquire(wait=0)

    def left(phase):
        return sum(
            1
            for k in KeyBuilder(PREFIX).index_keys("locks")
            for name in redis_client.hkeys(k)
            if name.startswith(f"crashed:{phase}:".encode())
        )

    crashed(0)
    time.sleep(2.2)  # every entry of phase 0 is dead now (its bound: whole seconds, rounded up)
    crashed(1)  # 3,000 fresh grants look at about 6,000 entries
    # (was at least 2,625 of phase 0's 3,000: one entry looked at in 8 grants)
    remaining = left(0)
    assert remaining <= 2000, remaining


@pytest.mark.parametrize("kind", ["semaphores", "rwlocks"])
def test_crashed_holders_entries_are_dropped_by_other_names_grants(redis_client, kind):
    def hold(name, ttl):
        if kind == "semaphores":
            return Semaphore(name, permits=1, ttl=ttl, client=redis_client, prefix=PREFIX)
        return ReadWriteLock(name, ttl=ttl, client=redis_client, prefix=PREFIX).write()

    for i in range(200):
        assert hold(f"crashed:{i}", 0.3).acquire(wait=0)
    assert _entries(redis_client, kind) == 200
    time.sleep(2.0)  # (an entry's bound: its lease, a TTL more, in whole seconds rounded up)
    for i in range(300):
        h = hold(f"fine:{i}", 5)
        assert h.acquire(wait=0)
        h.release()
    assert _entries(redis_client, kind) <= 20  # (was 200: only their own names' use dropped them)


def test_subscribers_that_are_gone_leave_the_topics_group(redis_client, monkeypatch):
    """Each subscribe() without a consumer name is a consumer of the group; Redis keeps one
    until it is deleted, so per-request subscribers grew the group for good."""
    from django_redcoord.core.signals import Topic
    from django_redcoord.core.signals import topic as topic_module

    orders = Topic("orders", client=redis_client, prefix=PREFIX)
    for i in range(200):  # subscribers that come and go, each taking a message
        orders.publish({"n": i})
        sub = orders.subscribe("mailer", start="all")
        got = sub.receive(count=1, timeout=0)
        assert len(got) == 1 and sub.ack(*got) == 1
    orders.publish({"n": "held"})
    holder = orders.subscribe("mailer", "holder")
    assert len(holder.receive(count=1, timeout=0)) == 1  # not acknowledged: it holds it
    group = ("XINFO", "CONSUMERS", KeyBuilder(PREFIX).topic("orders"), "mailer")
    assert len(redis_client.execute_command(*group)) == 201
    monkeypatch.setattr(topic_module, "CONSUMER_IDLE", 0.2, raising=False)
    time.sleep(0.3)
    busy = orders.subscribe("mailer", "busy")
    for _ in range(200):  # one receive in 16 deletes the idle consumers holding nothing
        busy.receive(timeout=0)
    left = {c[b"name"] for c in redis_client.execute_command(*group)}
    assert b"holder" in left and len(left) <= 3  # (was 202; one holding a message stays)
