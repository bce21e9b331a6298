"""Quorum locks (Redlock) over 5 real, independent redis-server processes.

Safety is checked, not assumed: threads contend with an overlap detector (and
a deliberately unsafe variant, a quorum of one, must be caught by it); fencing
tokens must grow across masters killed and restarted empty (and a fence read
from one master must be caught going back); 2 of 5 masters down still grant,
3 down refuse with ``QuorumNotReached``.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis.asyncio

from django_redcoord.core.exceptions import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotOwned,
    QuorumNotReached,
)
from django_redcoord.core.redlock import Redlock, trust_masters
from django_redcoord.core.transport.clients import client_from_url

from ...support.redis_servers import RedisServer


@pytest.fixture
def five():
    servers = [RedisServer().start() for _ in range(5)]
    clients = [client_from_url(s.url, socket_timeout=0.5, connect_timeout=0.5) for s in servers]
    trust_masters(
        clients, prefix="t"
    )  # brand-new servers: nothing to forget (else they refuse for REDLOCK_MAX_TTL)
    yield servers, clients
    for c in clients:
        c.close()
    for s in servers:
        s.cleanup()


def make(clients, name="res", **kwargs):
    kwargs.setdefault("wait", 0)
    kwargs.setdefault("ttl", 10)
    return Redlock(name, clients=clients, prefix="t", **kwargs)


def holders(clients, lock):
    """How many masters hold a live grant of ``lock``'s name (any owner)."""
    return sum(
        1 for c in clients if c.pttl(lock.keys.lock) > 0 and c.get(lock.keys.lock)[1:2] != b"\xc2"
    )


def settled_holders(clients, lock, want=5, within=2.0):
    """:func:`holders`, once the attempt's stragglers landed: an acquire returns on the first
    majority, the other masters' grants may come a moment later (under load)."""
    deadline = time.monotonic() + within
    while (found := holders(clients, lock)) < want and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def test_a_grant_is_on_a_majority_with_one_fencing_token_and_release_frees_all(five):
    _, clients = five
    a, b = make(clients), make(clients)
    assert a.acquire() and a.held and a.token > 0 and 9 < a.validity <= 10
    assert settled_holders(clients, a) == 5
    assert not b.acquire() and 0 < b.retry_after <= 10
    a.release()
    assert holders(clients, a) == 0 and not a.held
    assert b.acquire() and b.token > a.token
    b.release()
    with pytest.raises(LockNotOwned):
        b.release()


def test_two_of_five_masters_down_still_grant_and_three_down_refuse_clearly(five):
    servers, clients = five
    servers[0].kill()
    servers[3].kill()
    lock = make(clients)
    assert lock.acquire() and lock.token
    lock.extend()
    lock.release()
    servers[4].kill()
    with pytest.raises(QuorumNotReached) as caught:
        lock.acquire()
    err = caught.value
    assert err.answered == 2 and err.needed == 3 and len(err.errors) == 3
    assert "only 2 of 5 masters answered, 3 needed" in str(err)
    assert all(f":{servers[i].port}" in str(err) for i in (0, 3, 4))
    assert not lock.held and holders(clients[1:3], lock) == 0  # the two grants were given back


def test_a_paused_minority_costs_one_socket_timeout_not_one_per_master(five):
    servers, clients = five
    servers[1].pause()
    servers[2].pause()
    try:
        lock = make(clients)
        started = time.monotonic()
        assert lock.acquire()
        assert time.monotonic() - started < 0.9  # both timeouts (0.5 s) ran at once
        lock.release()
    finally:
        servers[1].resume()
        servers[2].resume()


def test_a_grant_whose_validity_ran_out_is_given_back_and_is_not_reported_busy(five):
    servers, clients = five
    for s in servers[:3]:  # no majority without them: they answer after 0.35 s, longer than the TTL
        s.pause()
    timer = threading.Timer(0.35, lambda: [s.resume() for s in servers[:3]])
    timer.start()
    try:
        lock = make(clients, ttl=0.3, timeout=1.0)
        with pytest.raises(QuorumNotReached, match="too late to be trusted"):
            lock.acquire()  # 5 grants, but too late to be trusted: not a busy lock
        assert not lock.held
        assert holders(clients, lock) == 0
    finally:
        timer.join()


def test_extend_and_release_after_expiry_raise_lock_lost(five):
    _, clients = five
    lock = make(clients, ttl=0.2)
    assert lock.acquire()
    time.sleep(0.3)
    with pytest.raises(LockLost, match="held on only 0 of 5 masters"):
        lock.extend()
    assert not lock.held
    # (a 0.2 s TTL gives each master 0.1 s: under a loaded CI, 4 of 5 once answered later than
    # that, QuorumNotReached; what this checks is the release below, so the grant is asked again)
    for attempt in range(5):
        try:
            assert lock.acquire()
            break
        except QuorumNotReached:
            if attempt == 4:
                raise
            time.sleep(0.2)
    time.sleep(0.3)
    other = make(clients, ttl=5)
    assert other.acquire()
    granted = settled_holders(clients, other)  # 5, or fewer when a loaded master answered too late
    assert granted >= 3
    with pytest.raises(LockLost, match="was lost before release"):
        lock.release()
    assert (
        holders(clients, other) >= granted
    )  # the new holder untouched (a straggler may land late)
    other.release()


def test_waiting_retries_until_the_holder_releases(five):
    _, clients = five
    holder, waiter = make(clients), make(clients, wait=5, retry_delay=0.05)
    assert holder.acquire()
    releaser = threading.Timer(0.3, holder.release)
    releaser.start()
    started = time.monotonic()
    assert waiter.acquire()
    assert 0.25 < time.monotonic() - started < 2
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    waiter.release()
    with pytest.raises(LockNotAcquired):
        with make(clients):
            with make(clients):
                pass


def _contend(clients, quorum=None, threads=6, rounds=15):
    inside, overlaps, grants, stalls = [0], [0], [0], [0]
    guard = threading.Lock()

    def worker():
        for _ in range(rounds):
            lock = make(clients, wait=10, retry_delay=0.01)
            if quorum is not None:
                lock.quorum = quorum  # bypass validation: the unsafe variant
            while True:
                try:
                    assert lock.acquire()
                    break
                except QuorumNotReached:
                    # A loaded machine froze this process past the second the masters are
                    # given (seen in CI: 1.6 s): the attempt was given back; ask again.
                    with guard:
                        stalls[0] += 1
                        assert stalls[0] <= 20, "the masters stopped answering"
            with guard:
                inside[0] += 1
                overlaps[0] += inside[0] > 1
                grants[0] += 1
            time.sleep(0.002)
            with guard:
                inside[0] -= 1
            try:
                lock.release()
            except LockLost:
                pass

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(60)
    return grants[0], overlaps[0]


def test_contending_threads_never_overlap(five):
    _, clients = five
    grants, overlaps = _contend(clients)
    assert grants == 6 * 15 and overlaps == 0


def test_negative_control_a_quorum_of_one_is_caught_overlapping(five):
    _, clients = five
    grants, overlaps = _contend(clients, quorum=1, threads=8, rounds=20)
    assert grants == 8 * 20 and overlaps > 0, "the overlap detector must catch an unsafe quorum"


def test_fencing_tokens_grow_while_a_minority_is_restarted_empty(five):
    servers, clients = five
    tokens = []
    for i in range(12):
        lock = make(clients)
        assert lock.acquire()
        tokens.append(lock.token)
        lock.release()
        for s in (servers[i % 5], servers[(i + 2) % 5]):  # two masters lose everything
            s.restart()
            # vouched for again (wrongly: what is tested here is the fence, not the restart guard,
            # which would keep them refusing for REDLOCK_MAX_TTL; see test_restarts.py)
            trust_masters([clients[servers.index(s)]], prefix="t")
    assert all(b > a for a, b in zip(tokens, tokens[1:], strict=False)), tokens


def test_negative_control_one_masters_fence_goes_back_when_it_restarts_empty(five):
    # What the fencing check above guards against: a token taken from a
    # counter on one master (INCR) restarts from 1 when that master does.
    servers, clients = five
    tokens = [clients[0].incr("t:naive-fence") for _ in range(3)]
    servers[0].restart()
    tokens.append(clients[0].incr("t:naive-fence"))
    assert not all(b > a for a, b in zip(tokens, tokens[1:], strict=False))


def test_the_token_is_the_highest_fence_and_is_written_back_to_the_majority(five):
    _, clients = five
    # quorum=5: the grant waits for every master, so the one ahead is among them (with a majority,
    # the first three to answer decide, and on a loaded machine that master can be a late fourth)
    lock = make(clients, quorum=5)
    # one master's last fence far ahead (its tombstone), as after a restart with a clock ahead
    ahead = 10**16 // 2
    for c in clients[:1]:
        c.set(
            lock.keys.lock,
            b"\x92\xc2\xcb" + __import__("struct").pack(">d", float(ahead)),
            px=60_000,
        )
    assert lock.acquire()
    assert lock.token == ahead + 1
    lock.release()
    clients[0].flushall()  # the master that was ahead loses everything
    again = make(clients)
    assert again.acquire() and again.token > ahead  # the others carried it
    again.release()


def test_bad_arguments_and_configuration_are_refused_with_what_is_allowed(five):
    _, clients = five
    with pytest.raises(
        ValueError, match=r"quorum must be a whole number from a majority \(3\) to all \(5\)"
    ):
        make(clients, quorum=2)
    with pytest.raises(ConfigurationError, match="at least one master"):
        Redlock("x", clients=[])
    with pytest.raises(ValueError, match="name"):
        make(clients, name="a b")


def test_async_acquire_release_and_a_cancelled_attempt_gives_back_its_grants(five):
    servers, _ = five

    async def live(clients, key):
        """Masters holding a live grant of ``key`` (a released name leaves a tombstone, an array
        whose first field is false)."""
        values = [await c.get(key) for c in clients[3:]]  # (the first three get paused)
        return sum(1 for v in values if v is not None and v[1:2] != b"\xc2")

    async def main():
        clients = [redis.asyncio.Redis.from_url(s.url, socket_timeout=0.5) for s in servers]
        try:
            a = Redlock("res", clients=clients, prefix="t", ttl=10, wait=0)
            assert await a.aacquire() and a.token
            async with Redlock(
                "res", clients=clients, prefix="t", ttl=10, wait=0.3, retry_delay=0.05
            ):
                raise AssertionError("entered while held")  # pragma: no cover
        except LockNotAcquired:
            pass
        else:  # pragma: no cover
            raise AssertionError("a busy lock must not be entered")
        try:
            await a.arelease()
            # three masters paused: after the two others granted, an attempt needs one of them
            for s in servers[:3]:
                s.pause()
            waiter = Redlock("res", clients=clients, prefix="t", ttl=10, wait=5)
            task = asyncio.ensure_future(waiter.aacquire())
            await asyncio.sleep(0.2)
            assert (
                await live(clients, waiter.keys.lock) == 2
            )  # granted, replies awaited from the paused ones
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await live(clients, waiter.keys.lock) == 0 and not waiter.held  # given back
        finally:
            for s in servers[:3]:
                s.resume()
            for c in clients:
                await c.aclose()

    asyncio.run(main())
