"""A quorum lock master that restarted or lost its data refuses grants for one max TTL.

Real, independent redis-server processes, killed and restarted empty. The
double grant the restart guard prevents is reproduced first (the negative
control: the restarted masters are vouched for, as if nothing was lost), then
shown refused, then granted again once every grant the masters may have
forgotten has expired.
"""

from __future__ import annotations

import re
import time

import pytest

from django_redcoord.core.exceptions import LockLost, QuorumNotReached
from django_redcoord.core.redlock import Redlock, trust_masters
from django_redcoord.core.transport.clients import client_from_url

from ...support.redis_servers import RedisServer


@pytest.fixture
def three():
    servers = [RedisServer().start() for _ in range(3)]
    clients = [client_from_url(s.url, socket_timeout=0.5, connect_timeout=0.5) for s in servers]
    trust_masters(clients, prefix="t")  # brand new: nothing to forget
    yield servers, clients
    for c in clients:
        c.close()
    for s in servers:
        s.cleanup()


def make(clients, name="res", **kwargs):
    kwargs.setdefault("wait", 0)
    kwargs.setdefault("ttl", 30)
    return Redlock(name, clients=clients, prefix="t", **kwargs)


def owners(clients, lock) -> set[bytes]:
    """The owner tokens holding a live grant of ``lock``'s name, over every master that answers."""
    found = set()
    for c in clients:
        try:
            value = c.get(lock.keys.lock)
        except Exception:
            continue
        if (
            value is not None and value[1:2] != b"\xc2"
        ):  # (a released name leaves a tombstone: an array whose first field is false)
            found.add(value)
    return found


def _try(fn):
    try:
        return fn()
    except Exception as exc:
        return exc


def not_granted(lock) -> bool:
    """``lock.acquire()`` did not grant: busy (False: B still holds it) or QuorumNotReached
    (which of
    the two depends on which answers come first: the attempt decides on the first majority)."""
    outcome = _try(lock.acquire)
    assert outcome is False or isinstance(outcome, QuorumNotReached), outcome
    return not lock.held


def refusing(clients, **kwargs) -> dict[str, str]:
    """The masters that refuse a grant of a free name after a restart or a loss of data, and why:
    each master asked alone (a lock over all of them decides on the first refusal)."""
    found = {}
    for i, client in enumerate(clients):
        probe = make([client], name="probe", **kwargs)
        try:
            assert probe.acquire()
            probe.release()
        except QuorumNotReached as exc:
            (why,) = exc.errors.values()
            if "restarted or lost its data" in why:
                found[f"master {i}"] = why
    return found


def _grant_then_restart_a_granting_master_empty(servers, clients, **kwargs):
    """C is down at the grant (A and B grant); then A restarts empty and C comes back empty."""
    a, _, c = servers
    c.kill()
    holder = make(clients, **kwargs)
    assert holder.acquire()
    a.restart()  # empty: the grant on A is gone
    c.start()  # back, empty
    return holder


def test_negative_control_restarted_masters_vouched_for_grant_the_held_lock_again(three):
    servers, clients = three
    holder = _grant_then_restart_a_granting_master_empty(servers, clients)
    trust_masters([clients[0], clients[2]], prefix="t")  # wrongly: they forgot the grant
    contender = make(clients)
    assert contender.acquire(), "A and C (empty) form a majority without B"
    assert holder.held and holder.validity > 0 and contender.held  # two holders of one lock
    contender.release()
    with pytest.raises(LockLost):
        holder.release()


def test_a_master_restarted_empty_refuses_and_the_lock_is_not_granted_twice(three):
    servers, clients = three
    holder = _grant_then_restart_a_granting_master_empty(servers, clients)
    contender = make(clients)
    assert not_granted(contender), "the lock was granted twice"
    why = refusing(clients)
    assert sorted(why) == ["master 0", "master 2"], why  # A and C
    assert all("it refuses quorum grants for" in text for text in why.values())
    assert holder.held
    assert (
        len(owners(clients, holder)) == 1
    )  # only the holder's grant (on B), nothing left by the contender
    with pytest.raises(LockLost):  # its grant on A is gone: it held on B only
        holder.release()


def test_a_restarted_master_grants_again_after_one_max_ttl(three):
    servers, clients = three
    holder = _grant_then_restart_a_granting_master_empty(servers, clients, ttl=1, max_ttl=1.5)
    contender = make(clients, ttl=1, max_ttl=1.5, wait=6, retry_delay=0.1)
    assert not_granted(make(clients, ttl=1, max_ttl=1.5))
    started = time.monotonic()
    while True:  # QuorumNotReached while they refuse; granted once one max TTL passed
        try:
            granted = contender.acquire()
            break
        except QuorumNotReached:
            assert time.monotonic() - started < 6, "the restarted masters never granted again"
            time.sleep(0.1)
    assert granted and holder.validity == 0  # the holder's grant expired first: no overlap
    contender.release()


def test_the_refusal_lasts_one_max_ttl_from_the_real_start_whatever_the_clock_reads(three):
    """INFO's uptime is the difference of two whole-second clock readings: a server started at
    x.9 s reads uptime 1 at (x+1).0 s, 0.1 s after its start. Taken as the start, that would
    end the refusal up to a second early (a restarted master then grants while a grant it
    forgot still lives elsewhere). Started just before a second turns, the master must still
    refuse for one max TTL counted from before its start."""
    servers, clients = three
    a = servers[0]
    # (the case needs a start that lands late in a second and is quick: on a loaded machine a
    # start may take longer, and then it is set up again; the check itself is never retried)
    for _attempt in range(10):
        a.kill()
        while time.time() % 1 < 0.85:  # start it late in a wall-clock second
            time.sleep(0.01)
        before = time.monotonic()
        a.start()
        while int(clients[0].info("server")["uptime_in_seconds"]) < 1:  # the second turned
            time.sleep(0.01)
        if time.monotonic() - before < 0.9:
            break
    else:
        pytest.fail("the server took too long to start for this check, 10 times")
    (why,) = refusing([clients[0]], max_ttl=3, ttl=3).values()
    left = float(re.search(r"refuses quorum grants for (\d+\.\d+) s more", why).group(1))
    elapsed = time.monotonic() - before
    assert left + elapsed >= 3 - 0.05, (
        f"refuses {left} s more, {elapsed:.2f} s after its start: ends before one max TTL (3 s)"
    )


def test_a_restart_with_the_data_kept_and_a_flushed_master_refuse_too(three):
    servers, clients = three
    lock = make(clients, name="kept", quorum=3)
    assert lock.acquire()
    lock.release()
    clients[0].config_set(
        "save", "3600 1"
    )  # persistence: a clean stop saves what it has, the start loads it
    servers[0].restart()
    assert (
        clients[0].get(lock.keys.lock) is not None
    )  # the data was kept (the released name's tombstone)
    assert list(refusing(clients)) == ["master 0"]
    clients[1].flushall()
    assert list(refusing(clients)) == ["master 0", "master 1"]
    assert make(clients).max_ttl == 60.0  # REDLOCK_MAX_TTL's default


def test_a_master_seen_for_the_first_time_refuses_until_vouched_for():
    servers = [RedisServer().start() for _ in range(3)]
    clients = [client_from_url(s.url, socket_timeout=0.5) for s in servers]
    try:
        why = refusing(clients, max_ttl=5, ttl=5)
        # counted from each server's start (its uptime, whole seconds: up to a second already gone)
        assert len(why) == 3 and all(
            re.search(r"refuses quorum grants for [2-5]\.\d s more", text) for text in why.values()
        ), why
        assert trust_masters(clients, prefix="t")[0] == clients[0].info("server")["run_id"]
        lock = make(clients, max_ttl=5, ttl=5)
        assert lock.acquire()
        lock.release()
    finally:
        for c in clients:
            c.close()
        for s in servers:
            s.cleanup()


def test_no_ttl_longer_than_the_max_ttl(three):
    _, clients = three
    with pytest.raises(
        ValueError, match=r"ttl=61 s is longer than the longest a quorum lock may have \(60 s"
    ):
        make(clients, ttl=61)
    lock = make(clients, ttl=5, max_ttl=10)
    assert lock.acquire()
    with pytest.raises(ValueError, match="ttl=11 s is longer"):
        lock.extend(11)
    lock.extend(10)
    lock.release()


def test_a_master_up_for_longer_than_the_max_ttl_grants_at_first_contact():
    """Adding REDLOCK to servers that already run costs no wait: whatever such a master may have
    forgotten at its start expired long ago (its uptime says when it started); one that flushed
    since its start may have lost grants at any moment and refuses (the negative control)."""
    servers = [RedisServer().start() for _ in range(3)]
    clients = [client_from_url(s.url, socket_timeout=0.5) for s in servers]
    try:
        clients[
            2
        ].flushall()  # before first contact: nothing told of the flush but INFO commandstats
        time.sleep(3.1)  # uptime 3 at least: the start was at least 2 s ago (> max_ttl)
        why = refusing(clients, max_ttl=1.5, ttl=1)
        assert list(why) == ["master 2"], why
        lock = make(clients, max_ttl=1.5, ttl=1)
        assert lock.acquire()  # masters 0 and 1: a majority
        lock.release()
    finally:
        for c in clients:
            c.close()
        for s in servers:
            s.cleanup()


@pytest.mark.parametrize("how", ["swapdb", "resync"])
def test_a_master_that_lost_its_data_by_swapdb_or_a_resync_refuses_and_grants_once(how):
    """SWAPDB, or a full resync from another server (REPLICAOF it, then REPLICAOF NO ONE), takes
    the grants and the boot record away on a master up for longer than the max TTL: it refuses
    from then on, and the held lock is not granted twice (before: granted at once)."""
    servers = [RedisServer().start() for _ in range(3)]
    empty = RedisServer().start()
    clients = [client_from_url(s.url, socket_timeout=0.5) for s in servers]
    try:
        time.sleep(3.1)  # uptime 3 at least: the start was at least 2 s ago (> max_ttl)
        holder = make(clients, max_ttl=1.5, ttl=1.5)
        assert holder.acquire()
        for lost in clients[:2]:
            if how == "swapdb":
                lost.swapdb(0, 1)
            else:
                lost.replicaof("127.0.0.1", empty.port)
                end = time.monotonic() + 10
                while lost.info("replication").get("master_link_status") != "up":
                    assert time.monotonic() < end, "the resync did not happen"
                    time.sleep(0.05)
                lost.replicaof("NO", "ONE")
            assert lost.get(holder.keys.lock) is None  # the grant is gone there
        contender = make(clients, max_ttl=1.5, ttl=1.5)
        assert not_granted(contender), "the lock was granted twice"
        assert sorted(refusing(clients, max_ttl=1.5, ttl=1)) == ["master 0", "master 1"]
    finally:
        for c in clients:
            c.close()
        for s in [*servers, empty]:
            s.cleanup()
