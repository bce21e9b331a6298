"""A semaphore under real processes and real signals: never more than its permits.

Every holder does its work in small steps and records each step's interval
(CLOCK_MONOTONIC, shared by all processes on Linux) in an oracle list, but
only if its permit was still valid by its own clock when the step ended
(``sem.lost`` turns true once the lease may have run out: what a careful
holder checks before acting). The checker sweeps the intervals: at no instant
may more than ``permits`` of them overlap. Holders are SIGKILLed (their
permit must come back when the lease runs out) and SIGSTOPped past their
lease (they must notice, not keep working). The negative control runs the
same checker on a check-then-increment semaphore, which it must catch.
"""

from __future__ import annotations

import random
import signal
import time

from django_redcoord.core.exceptions import LockLost
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc

PREFIX = "semfaults"
ORACLE = "oracle:steps"


class NaiveSemaphore:
    """Deliberately unsafe: read the count, then write it plus one (two round trips)."""

    def __init__(self, permits, client):
        self.permits, self.client, self.key = permits, client, "naive:count"
        self.lost = False

    def acquire(self):
        while True:
            count = int(self.client.get(self.key) or 0)
            if count < self.permits:
                time.sleep(0.0005)  # the window between check and set
                self.client.set(self.key, count + 1)
                return True
            time.sleep(0.0005)

    def release(self):
        self.client.decr(self.key)


def work(index, url, permits, ttl, seconds, unsafe):
    client = client_from_url(url)
    sem = (
        NaiveSemaphore(permits, client)
        if unsafe
        else Semaphore("exports|x", permits, ttl=ttl, wait=None, client=client, prefix=PREFIX)
    )
    rng = random.Random(index)
    end = time.monotonic() + seconds
    grants = 0
    while time.monotonic() < end:
        sem.acquire()
        grants += 1
        for _ in range(rng.randint(1, 4)):
            t0 = time.monotonic()
            time.sleep(0.002)
            t1 = time.monotonic()
            if sem.lost:  # the lease may have run out during the step: it does not count
                break
            client.rpush(ORACLE, f"{t0} {t1} {index}")
        try:
            sem.release()
        except LockLost:
            pass  # paused past its lease: the permit went to someone else meanwhile
    return grants


def max_overlap(client):
    events = []
    for raw in client.lrange(ORACLE, 0, -1):
        t0, t1, _ = raw.decode().split()
        events.append((float(t0), 1))
        events.append((float(t1), -1))
    events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    inside = peak = 0
    for _, step in events:
        inside += step
        peak = max(peak, inside)
    return peak, len(events) // 2


def _contend_with_faults(redis_url, redis_client, *, unsafe, permits=3, ttl=0.5, seconds=4.0, n=16):
    procs = [
        multiproc.start(work, redis_url, permits, ttl, seconds, unsafe, index=i) for i in range(n)
    ]
    victims = random.Random(7).sample(range(n), 4)
    try:
        time.sleep(1.0)
        if not unsafe:
            procs[victims[0]].kill()
            procs[victims[1]].kill()
            for v in victims[2:]:
                procs[v].signal(signal.SIGSTOP)
            time.sleep(ttl * 3)  # well past their leases
            for v in victims[2:]:
                procs[v].signal(signal.SIGCONT)
        survivors = [p for i, p in enumerate(procs) if unsafe or i not in victims[:2]]
        grants = sum(p.result(seconds + 60) for p in survivors)
    finally:
        for p in procs:
            p.stop()
    peak, steps = max_overlap(redis_client)
    return peak, steps, grants


def test_sixteen_processes_never_exceed_the_permits_with_holders_killed_and_stopped(
    redis_url, redis_client
):
    peak, steps, grants = _contend_with_faults(redis_url, redis_client, unsafe=False)
    assert steps > 200 and grants > 100
    assert peak <= 3, f"{peak} holders worked at once with 3 permits"


def test_negative_control_the_checker_catches_an_unsafe_semaphore(redis_url, redis_client):
    peak, steps, _ = _contend_with_faults(redis_url, redis_client, unsafe=True, seconds=2.0)
    assert steps > 100
    assert peak > 3, "the checker failed to catch a semaphore that lets too many in"


def hold_until_killed(index, url, ttl, ready):
    sem = Semaphore("crash", 2, ttl=ttl, wait=0, client=client_from_url(url), prefix=PREFIX)
    assert sem.acquire()
    ready.put(index)
    time.sleep(120)


def wait_for_permit(index, url, queued):
    sem = Semaphore("crash", 2, ttl=5, wait=10, client=client_from_url(url), prefix=PREFIX)
    queued.put(index)
    ok = sem.acquire()
    return ok, time.monotonic()


def test_the_permits_of_killed_holders_return_within_their_lease_plus_one_second(redis_url):
    ttl = 1.5
    ready, queued = multiproc.queue(), multiproc.queue()
    holders = [multiproc.start(hold_until_killed, redis_url, ttl, ready, index=i) for i in range(2)]
    for _ in holders:
        ready.get(timeout=10)
    waiters = [multiproc.start(wait_for_permit, redis_url, queued, index=10 + i) for i in range(2)]
    for _ in waiters:
        queued.get(timeout=10)
    time.sleep(0.2)
    killed = time.monotonic()
    for h in holders:
        h.kill()
    results = [w.result(20) for w in waiters]
    assert all(ok for ok, _ in results)
    assert max(t for _, t in results) - killed <= ttl + 1.0
