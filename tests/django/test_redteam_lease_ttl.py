"""Every key a semaphore or read-write lock script writes has a TTL, after every hand-off path.

Red-team finding: a permit (or read hold) handed to a waiter re-created the lease
zset (``sem:{S}:holders``, ``rw:{RW}:readers``: Redis deletes a zset its last
release emptied) without a TTL, kept forever if that holder then crashed. Each
test below ends with a holder that never releases (a crash) and checks, with
SCAN + PTTL, that every key under the prefix expires, the shared admin index of
semaphores / read-write locks included (it lives as long as its longest entry).
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore, revoke_permit
from django_redcoord.core.semaphores.semaphore import ACQUIRE
from django_redcoord.core.transport.clients import client_from_url

PREFIX = "ttl"


def forever_keys(client) -> list[str]:
    found = []
    for key in client.scan_iter(f"{PREFIX}:*", count=1000):
        key = key.decode()
        if client.pttl(key) == -1:
            found.append(key)
    return found


def waiter(url, make, got):
    """In a thread with its own client: wait for a hold and keep it (a crash: never released)."""

    def run():
        client = client_from_url(url)
        hold = make(client)
        got["granted"] = hold.acquire(wait=10)
        got["hold"] = hold

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def queued(client, key, n=1, timeout=5.0):
    deadline = time.monotonic() + timeout
    while client.llen(key) < n:
        assert time.monotonic() < deadline, f"no waiter queued on {key}"
        time.sleep(0.02)


def sem(client, permits=1, ttl=30):
    return Semaphore("S", permits, ttl=ttl, client=client, prefix=PREFIX)


SEM_QUEUE = f"{PREFIX}:sem:{{S}}:queue"
RW_QUEUE = f"{PREFIX}:rw:{{RW}}:queue"


def _sem_release(client):
    first = sem(client)
    assert first.acquire()
    first.release()  # the holders zset is deleted; the index bound stays
    holder = sem(client)
    assert holder.acquire()
    return holder.release


def _sem_revoke(client):
    holder = sem(client)
    assert holder.acquire()
    return lambda: revoke_permit("S", holder.token, client=client, prefix=PREFIX)


def _sem_expiry(client):
    # Crashes: its lease runs out and the waiter's re-check takes the permit. The
    # index bound (2 x ttl) outlives the waiter's shorter lease, so the grant does
    # not push the bound (the path where the TTL was lost).
    holder = sem(client, ttl=3)
    assert holder.acquire()
    return lambda: None


@pytest.mark.parametrize(
    "path", [_sem_release, _sem_revoke, _sem_expiry], ids=["release", "revoke", "holder-expiry"]
)
def test_a_permit_handed_to_a_waiter_leaves_no_key_without_ttl(redis_url, redis_client, path):
    act = path(redis_client)
    got = {}
    thread = waiter(redis_url, lambda c: sem(c, ttl=2), got)
    queued(redis_client, SEM_QUEUE)
    act()
    thread.join(15)
    assert got.get("granted") is True
    assert forever_keys(redis_client) == []


def test_a_permit_handed_on_by_a_resize_leaves_no_key_without_ttl(redis_client):
    sem(redis_client).resize(1)
    holder = sem(redis_client, ttl=1)
    assert holder.acquire()  # crashes; its index bound is 2 s out
    # A waiter that does not re-check by itself (a paused process): its place is
    # taken by the acquire script, as the waiting loop does, and left alone.
    k = sem(redis_client).keys
    queued_reply = ACQUIRE(
        redis_client,
        [k.state, k.holders, k.queue, k.index, k.wake_prefix + "paused", k.first()],
        ["paused", 500, "queue", 15000, "S", "0", "host", 1, "thread", 1],
        operation="queue",
    )
    assert int(queued_reply[0]) == 0
    time.sleep(1.1)  # the holder's lease runs out: the zset is pruned empty by the resize
    assert sem(redis_client).resize(2) == 1  # the resize handed the waiter a permit
    assert redis_client.zscore(k.holders, "paused") is not None
    assert forever_keys(redis_client) == []


def test_the_index_outlives_its_longest_entry_and_no_longer(redis_client):
    short = sem(redis_client, ttl=1)
    assert short.acquire()
    index = f"{PREFIX}:index:semaphores"
    first = redis_client.pttl(index)
    assert 0 < first <= 63_000  # the bound (2 x ttl) + a minute
    longer = Semaphore("T", 1, ttl=30, client=redis_client, prefix=PREFIX)
    assert longer.acquire()
    assert redis_client.pttl(index) > first + 50_000  # pushed out for the longer entry
    short.extend(1)  # a shorter bound never shortens it
    assert redis_client.pttl(index) > first + 50_000


def test_a_permit_taken_again_after_the_last_release_has_a_ttl(redis_client):
    first = sem(redis_client)
    assert first.acquire()
    first.release()
    again = sem(redis_client)
    assert again.acquire()  # and crashes
    assert forever_keys(redis_client) == []


def rw(client, ttl=30):
    return ReadWriteLock("RW", ttl=ttl, client=client, prefix=PREFIX)


def _rw_write_release(client):
    reader = rw(client).read()
    assert reader.acquire()
    reader.release()  # the readers zset is deleted; the index bound stays
    writer = rw(client).write()
    assert writer.acquire()
    return writer.release


def _rw_writer_expiry(client):
    reader = rw(client).read()
    assert reader.acquire()
    reader.release()
    writer = rw(client, ttl=3).write()
    assert writer.acquire()  # crashes (see _sem_expiry)
    return lambda: None


def _rw_downgrade(client):
    reader = rw(client).read()
    assert reader.acquire()
    reader.release()
    writer = rw(client).write()
    assert writer.acquire()
    return writer.downgrade  # the queued reader enters with the downgraded one


@pytest.mark.parametrize(
    "path",
    [_rw_write_release, _rw_writer_expiry, _rw_downgrade],
    ids=["writer-release", "writer-expiry", "downgrade"],
)
def test_a_read_hold_handed_to_a_waiter_leaves_no_key_without_ttl(redis_url, redis_client, path):
    act = path(redis_client)
    got = {}
    thread = waiter(redis_url, lambda c: rw(c, ttl=2).read(), got)
    queued(redis_client, RW_QUEUE)
    act()
    thread.join(15)
    assert got.get("granted") is True
    assert forever_keys(redis_client) == []


def test_a_downgrade_alone_leaves_no_key_without_ttl(redis_client):
    reader = rw(redis_client).read()
    assert reader.acquire()
    reader.release()
    writer = rw(redis_client).write()
    assert writer.acquire()
    writer.downgrade()  # and crashes
    assert forever_keys(redis_client) == []


def test_the_checker_sees_a_key_without_ttl(redis_client):
    """Negative control: forever_keys() finds a key with no TTL under the prefix."""
    redis_client.zadd(f"{PREFIX}:sem:{{S}}:holders", {"x": 1})
    redis_client.hset(f"{PREFIX}:index:semaphores", "S", 1)
    assert sorted(forever_keys(redis_client)) == [
        f"{PREFIX}:index:semaphores",
        f"{PREFIX}:sem:{{S}}:holders",
    ]
