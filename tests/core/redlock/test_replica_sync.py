"""``replicas=n``: a grant is confirmed on n replicas (WAIT on the grant's connection) or given back.

Real master and replica processes; the replica is paused with SIGSTOP to make
it miss writes, and promoted by ``REPLICAOF NO ONE`` after the master is
killed, as a failover would. The negative control shows the double grant the
check prevents; the fencing check shows the token the promoted replica issues
is still above the lost grant's.
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.exceptions import ReplicasNotSynced
from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.clients import client_from_url

from ...redis_servers import RedisServer


@pytest.fixture
def pair():
    master = RedisServer(extra=("--repl-diskless-sync-delay", "0")).start()  # (default: 5 s before a full sync)
    replica = RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start()
    m, r = client_from_url(master.url), client_from_url(replica.url)
    deadline = time.monotonic() + 10
    while r.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica did not sync"
        time.sleep(0.05)
    caught_up(m)
    yield master, replica, m, r
    for c in (m, r):
        c.close()
    for s in (master, replica):
        s.cleanup()


def caught_up(master_client) -> None:
    """Until the master counts the replica for WAIT: after a (diskless) sync it does so only
    from the replica's first REPLCONF ACK, sent once a second, and after SIGCONT the replica
    first works through what it missed. Without this, a check 0.3 s long can find it absent."""
    master_client.set("t:caught-up", "1")
    assert master_client.execute_command("WAIT", 1, 5000) == 1, "the replica never acknowledged"


def make(client, name="res", **kwargs):
    kwargs.setdefault("wait", 0)
    kwargs.setdefault("ttl", 30)
    return Lock(name, client=client, prefix="t", **kwargs)


def test_a_grant_confirmed_by_the_replica_is_on_it_before_acquire_returns(pair):
    _, _, m, r = pair
    lock = make(m, replicas=1)
    assert lock.acquire()
    assert r.get(lock.keys.lock) == m.get(lock.keys.lock)  # already on the replica
    lock.release()


def test_an_unconfirmed_grant_is_given_back_and_raises(pair):
    _, replica, m, _ = pair
    replica.pause()
    try:
        lock = make(m, replicas=1, replica_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(ReplicasNotSynced, match=r"reached 0 of the 1 replica\(s\) asked for within 0.3 s") as caught:
            lock.acquire()
        assert caught.value.acked == 0 and caught.value.needed == 1
        assert 0.25 < time.monotonic() - started < 3
        assert not lock.held and not make(m).locked()  # given back
        assert make(m, replicas=0).acquire()  # without the check: granted at once
    finally:
        replica.resume()


def test_a_grant_handed_over_by_a_release_is_confirmed_too(pair):
    _, replica, m, _ = pair
    holder = make(m)
    assert holder.acquire()
    waiter = make(m, replicas=1, replica_timeout=0.3, wait=5)
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(_try(waiter.acquire)))
    thread.start()
    time.sleep(0.2)
    replica.pause()
    try:
        holder.release()  # handed to the waiter, whose WAIT finds the replica silent
        thread.join(10)
        assert isinstance(outcome[0], ReplicasNotSynced)
        assert not make(m).locked()  # the waiter gave the handed-over grant back
    finally:
        replica.resume()
    caught_up(m)
    # and with the replica up, the same hand-over is confirmed
    assert holder.acquire()
    thread = threading.Thread(target=lambda: outcome.append(_try(waiter.acquire)))
    thread.start()
    time.sleep(0.2)
    holder.release()
    thread.join(10)
    assert outcome[1] is True and waiter.held
    waiter.release()


def test_other_held_primitives_take_replicas_too(pair):
    _, replica, m, _ = pair
    sem = Semaphore("pool", 2, client=m, prefix="t", wait=0, replicas=1, replica_timeout=0.3)
    assert sem.acquire()
    sem.release()
    rw = ReadWriteLock("doc", client=m, prefix="t", wait=0, replicas=1, replica_timeout=0.3)
    with rw.write():
        pass
    replica.pause()
    try:
        with pytest.raises(ReplicasNotSynced):
            sem.acquire()
        with pytest.raises(ReplicasNotSynced):
            rw.read().acquire()
        assert Semaphore("pool", 2, client=m, prefix="t", wait=0).holders() == []
    finally:
        replica.resume()


def _try(fn):
    try:
        return fn()
    except Exception as exc:
        return exc


def _failover_after_a_missed_grant(pair, replicas):
    """Grant on the master while the replica is paused, kill the master, promote the replica,
    and grant again there. Returns (first grant's token or the error, second grant's token)."""
    master, replica, m, r = pair
    replica.pause()
    # the link is cut while the replica cannot read: nothing written from now on
    # reaches it (bytes already sent would still be in its socket buffer)
    m.execute_command("CLIENT", "KILL", "TYPE", "replica")
    first = make(m, replicas=replicas, replica_timeout=0.3)
    try:
        got = _try(first.acquire)
        token = first.token if got is True else got
    finally:
        master.kill()
        replica.resume()
    r.execute_command("REPLICAOF", "NO", "ONE")
    second = make(r)
    assert second.acquire()
    return token, second.token


def test_negative_control_without_the_check_the_promoted_replica_grants_the_lock_again(pair):
    token, second = _failover_after_a_missed_grant(pair, replicas=0)
    assert isinstance(token, int), "the grant was made and the replica never saw it"
    # two holders of one lock: the double grant the replica check exists for.
    # Fencing still orders them: the promoted replica's token is above the lost one,
    # so a fenced resource refuses the first holder once the second wrote.
    assert second > token


def test_with_the_check_the_missed_grant_never_happened(pair):
    token, second = _failover_after_a_missed_grant(pair, replicas=1)
    assert isinstance(token, ReplicasNotSynced)  # refused: only the promoted replica's grant exists
    assert second > 0
