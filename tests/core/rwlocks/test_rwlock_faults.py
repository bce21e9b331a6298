"""A read-write lock under real processes: a writer is never with anyone, and no
writer waits behind readers that asked after it.

Readers and writers in separate processes record every step they do under
their hold (CLOCK_MONOTONIC intervals, only while the hold's lease is valid by
their own clock) and, for every grant, when they asked and when they got it
(timed after a warm-up round trip, so a first script load is not counted).
The checker: no write interval overlaps any other interval; and for every
writer, no reader that asked more than a margin after it was let in before
it. One reader is SIGKILLed mid-hold (its lease must end, not wedge the
writers). The negative control runs the checkers on a read-write lock that
counts readers without looking at waiting writers (readers barge past them)
and lets a writer in on a racy check: both checkers must catch it.
"""

from __future__ import annotations

import random
import time

from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc

PREFIX = "rwfaults"
STEPS, GRANTS = "oracle:steps", "oracle:grants"
# Seconds: two requests asked closer than this may reach Redis in either order
# (a process can be descheduled between noting the time and sending).
MARGIN = 0.02


class UnfairRWLock:
    """Deliberately wrong: readers come in whenever no writer holds (even past a
    waiting writer); a writer checks "nobody inside" and then enters (racy)."""

    def __init__(self, client, kind):
        self.client, self.kind, self.lost = client, kind, False

    def acquire(self):
        while True:
            if self.kind == "r":
                if not int(self.client.get("naive:w") or 0):
                    self.client.incr("naive:r")
                    return True
            elif not int(self.client.get("naive:w") or 0) and not int(
                self.client.get("naive:r") or 0
            ):
                time.sleep(0.0005)
                self.client.set("naive:w", 1)
                return True
            time.sleep(0.0005)

    def release(self):
        if self.kind == "r":
            self.client.decr("naive:r")
        else:
            self.client.set("naive:w", 0)


def party(index, url, kind, seconds, unsafe):
    client = client_from_url(url)
    rw = ReadWriteLock("catalog|x", ttl=1.0, wait=None, client=client, prefix=PREFIX)
    rng = random.Random(index)
    rw.holders()  # warm up: connected, scripts read and loaded, before anything is timed
    end = time.monotonic() + seconds
    grants = 0
    while time.monotonic() < end:
        hold = UnfairRWLock(client, kind) if unsafe else (rw.read() if kind == "r" else rw.write())
        asked = time.monotonic()
        hold.acquire()
        got = time.monotonic()
        client.rpush(GRANTS, f"{kind} {index} {asked} {got}")
        grants += 1
        for _ in range(rng.randint(1, 3)):
            t0 = time.monotonic()
            time.sleep(0.002 if kind == "w" else 0.004)
            t1 = time.monotonic()
            if hold.lost:
                break
            client.rpush(STEPS, f"{kind} {index} {t0} {t1}")
        hold.release()
        time.sleep(rng.uniform(0, 0.01))
    return grants


def check(client):
    steps = [line.decode().split() for line in client.lrange(STEPS, 0, -1)]
    writes = [(float(a), float(b), i) for k, i, a, b in steps if k == "w"]
    mixed = 0
    for a, b, i in writes:
        for k, j, c, d in steps:
            if (k, j) != ("w", i) and float(c) < b and a < float(d):
                mixed += 1
    grants = [line.decode().split() for line in client.lrange(GRANTS, 0, -1)]
    writers = [(float(asked), float(got)) for k, _, asked, got in grants if k == "w"]
    readers = [(float(asked), float(got)) for k, _, asked, got in grants if k == "r"]
    overtaken = sum(
        1
        for w_asked, w_got in writers
        for r_asked, r_got in readers
        if r_asked > w_asked + MARGIN and r_got < w_got
    )
    # pairs that put the rule to the test: a reader asked while a writer waited
    tested = sum(
        1
        for w_asked, w_got in writers
        for r_asked, _ in readers
        if w_asked + MARGIN < r_asked < w_got
    )
    return mixed, overtaken, tested, len(steps), len(writers), len(readers)


def _run(redis_url, redis_client, unsafe, kill=False, seconds=3.0):
    kinds = ["r"] * 6 + ["w"] * 2
    procs = [
        multiproc.start(party, redis_url, kind, seconds, unsafe, index=i)
        for i, kind in enumerate(kinds)
    ]
    try:
        if kill:
            time.sleep(1.0)
            procs[0].kill()  # a reader, probably mid-hold: its lease must end
        results = [p.result(seconds + 60) for p in (procs[1:] if kill else procs)]
    finally:
        for p in procs:
            p.stop()
    return check(redis_client), results


def test_a_writer_is_never_with_anyone_and_never_overtaken_with_a_reader_killed(
    redis_url, redis_client
):
    (mixed, overtaken, tested, steps, writers, readers), _ = _run(
        redis_url, redis_client, unsafe=False, kill=True
    )
    assert steps > 100 and writers > 10 and readers > 50, (
        f"too little happened: {steps} steps, {writers} writer and {readers} reader grants"
    )
    assert tested > 20, (
        f"too few readers asked while a writer waited ({tested}): the fairness check tested nothing"
    )
    assert mixed == 0, f"{mixed} steps overlapped a write"
    assert overtaken == 0, f"{overtaken} times a reader that asked after a writer got in before it"


def test_negative_control_the_checkers_catch_an_unfair_unsafe_rwlock(redis_url, redis_client):
    (mixed, overtaken, _, steps, writers, readers), _ = _run(
        redis_url, redis_client, unsafe=True, seconds=2.0
    )
    assert steps > 50
    assert overtaken > 0, "the fairness checker missed readers barging past waiting writers"
    assert mixed > 0, "the overlap checker missed a writer let in with others"
