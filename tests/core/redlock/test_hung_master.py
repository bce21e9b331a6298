"""A hung master (SIGSTOP) holds up no quorum grant: each attempt decides on the first majority.

Real redis-server processes; the clients' socket timeout (3 s) is longer than
the locks' TTL (2 s), the case where waiting for every master let each grant's
validity run out (and the failure read as a busy lock). The masters are given
a fifth of the TTL (0.4 s) to answer.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time

import pytest
import redis.asyncio

from django_redcoord.core.exceptions import QuorumNotReached
from django_redcoord.core.redlock import Redlock, trust_masters
from django_redcoord.core.transport.clients import client_from_url

from ...support.redis_servers import RedisServer


@pytest.fixture
def three():
    servers = [RedisServer().start() for _ in range(3)]
    clients = [client_from_url(s.url, socket_timeout=3.0, connect_timeout=3.0) for s in servers]
    trust_masters(clients, prefix="t")
    yield servers, clients
    for s in servers:
        s.resume() if s.proc is not None else None
    for c in clients:
        c.close()
    for s in servers:
        s.cleanup()


def make(clients, name="res", **kwargs):
    kwargs.setdefault("wait", 0)
    kwargs.setdefault("ttl", 2)
    return Redlock(name, clients=clients, prefix="t", **kwargs)


def test_one_hung_master_does_not_hold_up_a_grant(three):
    servers, clients = three
    servers[2].pause()
    lock = make(clients)
    started = time.monotonic()
    assert lock.acquire(), "a hung master made the grant fail (read as busy)"
    assert (
        time.monotonic() - started < 1.0
    )  # the first majority decided, not the 3 s socket timeout
    assert lock.validity > 1.0
    lock.release()


def test_a_majority_hung_is_quorum_not_reached_within_the_timeout_not_busy(three):
    servers, clients = three
    servers[1].pause()
    servers[2].pause()
    lock = make(clients)  # answers awaited for a fifth of the TTL (0.4 s)
    started = time.monotonic()
    with pytest.raises(QuorumNotReached, match="no answer within") as caught:
        lock.acquire()
    assert (
        time.monotonic() - started < 2.0
    )  # the masters' timeout (0.4 s) and the give-back's, not 3 s each
    assert caught.value.answered == 1 and caught.value.needed == 2
    assert not lock.held


def test_forty_threads_with_a_hung_master(three):
    """40 threads acquire and release their own quorum locks while one master is SIGSTOPped.

    The locks' TTL is 5 s, so the masters get 1 s to answer (a fifth of it, at most 1 s): in CI,
    beside the model checker and a compiler on 2 cores, 0.4 s (a 2 s TTL) was missed by a live
    master in up to 36 of 121 attempts, which read as quorum lost. The defect this guards against
    (every attempt waiting for the hung master's 3 s socket timeout) still shows: a median of
    about 3 s against a bound of 1.5 s."""
    servers, clients = three
    servers[2].pause()
    durations: list[float] = []
    failures: list[object] = []
    guard = threading.Lock()
    # 6 s: a 2-core machine stalled by other work (CI's parallel legs) once held every thread's
    # first attempt for ~3.4 s, which in a 3 s window was the whole sample; the defect (each
    # attempt waits out the hung master's 3 s socket timeout) still gives a median near 3 s.
    stop = time.monotonic() + 6.0

    def worker(n: int) -> None:
        attempt = 0
        while time.monotonic() < stop:
            # A fresh name each time: after a release that did not reach a majority
            # (QuorumNotReached,
            # honest under load) the lock stays on a master until its TTL, and the same name would
            # then
            # honestly read as busy. A busy fresh name is a finding.
            attempt += 1
            lock = make(clients, name=f"job-{n}-{attempt}", ttl=5)
            began = time.monotonic()
            try:
                if not lock.acquire():
                    with guard:
                        failures.append("busy")
                    continue
                lock.release()
            except Exception as exc:  # any failure is a finding
                with guard:
                    failures.append(exc)
                continue
            with guard:
                durations.append(time.monotonic() - began)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # On a machine loaded by other work a live master can also miss the per-master timeout (1 s)
    # now and then (QuorumNotReached: the honest answer); none did in ~1,300 acquire+release on a
    # quiet machine (median 63 ms); in CI under four test workers, once 400 of 1,624 (a stall of
    # about 2 s). Anything but QuorumNotReached, or one in three, is a finding;
    # so is a median near the 3 s socket timeout (the defect: every attempt waited for the hung
    # master).
    assert all(isinstance(f, QuorumNotReached) for f in failures), [
        f for f in failures if not isinstance(f, QuorumNotReached)
    ][:3]
    assert len(failures) <= (len(failures) + len(durations)) / 3, (
        len(failures),
        len(durations),
        failures[:3],
    )
    assert len(durations) >= 40
    median = statistics.median(durations)
    print(
        f"\n40 threads, one master SIGSTOPped: {len(durations)} acquire+release, median "
        f"{median * 1000:.1f} ms, p90 {statistics.quantiles(durations, n=10)[-1] * 1000:.1f} ms"
    )
    assert median < 1.5, f"median acquire+release took {median:.2f} s with one master hung"


def test_asyncio_one_hung_master_does_not_hold_up_a_grant(three):
    servers, _ = three
    servers[2].pause()

    async def main():
        clients = [redis.asyncio.Redis.from_url(s.url, socket_timeout=3.0) for s in servers]
        try:
            lock = Redlock("res", clients=clients, prefix="t", ttl=2, wait=0)
            started = time.monotonic()
            assert await lock.aacquire()
            assert time.monotonic() - started < 1.0
            await lock.arelease()
        finally:
            for c in clients:
                await c.aclose()

    asyncio.run(main())
