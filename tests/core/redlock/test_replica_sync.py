"""``replicas=n``: a grant is confirmed on n replicas (WAIT on the grant's connection) or given
back.

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

from ...support.redis_servers import RedisServer


@pytest.fixture
def pair():
    master = RedisServer(
        extra=("--repl-diskless-sync-delay", "0")
    ).start()  # (default: 5 s before a full sync)
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
        with pytest.raises(
            ReplicasNotSynced, match=r"reached 0 of the 1 replica\(s\) asked for within 0.3 s"
        ) as caught:
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


# -- extends and renewals are confirmed too; a check must fit within the socket timeout ----------


def _cut_the_replica_off(pair) -> None:
    """The replica stops receiving anything from now on (paused, its link cut)."""
    _, replica, m, _ = pair
    replica.pause()
    m.execute_command("CLIENT", "KILL", "TYPE", "replica")


def _fail_over(pair) -> None:
    master, replica, _, r = pair
    master.kill()
    replica.resume()
    r.execute_command("REPLICAOF", "NO", "ONE")


def test_an_unconfirmed_extend_raises_and_does_not_count_so_a_failover_finds_the_holder_knowing(
    pair,
):
    _, _, m, r = pair
    first = make(m, replicas=1, replica_timeout=0.3, ttl=1)
    assert first.acquire()  # confirmed: the replica has the grant (1 s)
    _cut_the_replica_off(pair)
    try:
        with pytest.raises(
            ReplicasNotSynced, match=r"the extend reached 0 of the 1 replica\(s\)"
        ) as caught:
            first.extend(30)  # written on the master only
        assert caught.value.acked == 0 and caught.value.needed == 1
        assert first.held  # still held on the master, but only as long as it was confirmed
    finally:
        _fail_over(pair)
    second = make(r, wait=5)
    assert second.acquire()  # the promoted replica never saw the extend: the 1 s grant lapsed there
    # the first holder must not believe it holds while the second does
    assert first.lost, "an unconfirmed extend kept the first holder believing it holds"


def test_unconfirmed_renewals_do_not_keep_the_hold_and_report_it_lost(pair):
    _, replica, m, _ = pair
    lost = threading.Event()
    first = make(
        m,
        replicas=1,
        replica_timeout=0.2,
        ttl=1.5,
        auto_renew=True,
        on_lost=lambda lock: lost.set(),
    )
    assert first.acquire()
    _cut_the_replica_off(pair)
    try:
        assert lost.wait(8), "the watchdog kept renewing without the replica's confirmation"
        assert first.lost
    finally:
        replica.resume()
    from django_redcoord.core.exceptions import LockLost

    with pytest.raises(LockLost):
        first.release()


def test_confirmed_renewals_keep_the_hold(pair):
    _, _, m, _ = pair
    lost = threading.Event()
    lock = make(
        m, replicas=1, replica_timeout=0.5, ttl=0.6, auto_renew=True, on_lost=lambda _: lost.set()
    )
    assert lock.acquire()
    time.sleep(1.5)  # several renewals, each confirmed
    assert not lost.is_set() and not lock.lost
    lock.extend()
    lock.release()


def test_a_replica_timeout_that_does_not_fit_the_socket_timeout_is_refused_at_construction(pair):
    _, _, m, _ = pair
    short = client_from_url(
        f"redis://127.0.0.1:{m.connection_pool.connection_kwargs['port']}/0", socket_timeout=1.0
    )
    try:
        with pytest.raises(
            ValueError,
            match=r"replica_timeout=1 s does not fit within the client's socket_timeout \(1 s\)",
        ):
            make(short, replicas=1, replica_timeout=1.0)
        assert make(short, replicas=1).replica_timeout == 0.5  # the default leaves room
        make(short, replicas=0, replica_timeout=5)  # no check: nothing to fit
    finally:
        short.close()


def test_a_replica_check_that_outlasts_the_socket_timeout_gives_the_grant_back(pair):
    _, _, m, _ = pair
    port = m.connection_pool.connection_kwargs["port"]
    short = client_from_url(f"redis://127.0.0.1:{port}/0", socket_timeout=0.5)
    try:
        _cut_the_replica_off(pair)
        lock = make(short, replicas=1)
        lock.replica_timeout = (
            2.0  # past the construction check: WAIT outlasts the 0.5 s socket timeout
        )
        with pytest.raises(ReplicasNotSynced, match="the replica check got no answer"):
            lock.acquire()
        assert not lock.held
        assert not make(m).locked(), "the grant whose reply arrived was kept for its TTL"
    finally:
        pair[1].resume()
        short.close()
