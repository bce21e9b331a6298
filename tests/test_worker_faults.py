"""Workers in real OS processes, killed with real signals: nothing is lost.

Each job records its completion with HINCRBY completions <n> 1, so the test
can count jobs done zero times (lost), once, or more (duplicates).
"""

import os
import signal
import time

from django_redcoord.connection import client_from_url
from django_redcoord.queues import Queue
from django_redcoord.worker import Worker

from . import multiproc

PREFIX = "wf"


def work(index, url, name, prefetch, slow):
    client = client_from_url(url)
    queue = Queue(name, client=client, prefix=PREFIX, max_attempts=1000)

    def handler(message):
        body = message.body
        client.set(f"started:{body['n']}", message.attempt)
        if slow:
            time.sleep(slow)
        client.hincrby("completions", body["n"], 1)

    worker = Worker([queue], handler, prefetch=prefetch, heartbeat=0.2, timeout=1.0, shutdown_timeout=5)
    signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    stats = worker.run()
    return stats.ok, stats.handed_back


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_worker_killed_mid_job_the_job_is_redelivered_and_completed(redis_url, redis_client):
    Queue("slow", client=redis_client, prefix=PREFIX).push({"n": 1})
    first = multiproc.start(work, redis_url, "slow", 1, 3.0)
    second = None
    try:
        wait_until(lambda: redis_client.exists("started:1"), 10, "the job to start")
        first.kill()
        second = multiproc.start(work, redis_url, "slow", 1, 0.01)
        wait_until(lambda: redis_client.hget("completions", 1), 15, "the redelivered job to complete")
        assert redis_client.hget("completions", 1) == b"1"
        assert redis_client.get("started:1") == b"1"  # second delivery, attempt counted
    finally:
        first.stop()
        if second:
            second.stop()


def test_twenty_thousand_jobs_survive_a_worker_killed_every_second(redis_url, redis_client):
    total, prefetch = 20_000, 32
    # Each kill counts a failed delivery for the messages the victim held; a
    # message caught in several kills must not run out of attempts here.
    queue = Queue("bulk", client=redis_client, prefix=PREFIX, max_attempts=1000)
    queue.push_many({"n": i} for i in range(total))
    # half a millisecond of work per job keeps the run several seconds long,
    # so the victim is killed several times mid-stream
    stable = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=0)
    victim = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=1)
    kills = 0
    try:
        deadline = time.monotonic() + 100  # below pytest-timeout, for a clear message
        while redis_client.hlen("completions") < total:
            assert time.monotonic() < deadline, f"only {redis_client.hlen('completions')} of {total} jobs done"
            time.sleep(1.0)
            if redis_client.hlen("completions") < total:
                victim.kill()
                kills += 1
                victim = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=1)
    finally:
        stable.stop()
        victim.stop()
    counts = [int(v) for v in redis_client.hvals("completions")]
    duplicates = sum(counts) - total
    assert len(counts) == total and min(counts) >= 1, "a job was lost"
    assert queue.depths().dead == 0
    assert kills >= 3
    assert duplicates <= kills * prefetch, f"{duplicates} duplicates for {kills} kills x prefetch {prefetch}"
    print(f"\n20k jobs: {kills} kills, {duplicates} duplicate runs (bound {kills * prefetch})")


def test_sigterm_finishes_the_job_in_hand_and_hands_back_the_rest(redis_url, redis_client):
    queue = Queue("graceful", client=redis_client, prefix=PREFIX)
    queue.push_many({"n": i} for i in range(10))
    proc = multiproc.start(work, redis_url, "graceful", 10, 0.5)
    try:
        wait_until(lambda: redis_client.exists("started:0"), 10, "the first job")
        proc.signal(signal.SIGTERM)
        done, handed_back = proc.result(timeout=10)
        assert proc.process.exitcode == 0
    finally:
        proc.stop()
    d = queue.depths()
    assert done == 1 and handed_back == 9
    assert (d.ready, d.processing, d.consumers) == (9, 0, 0)
    assert redis_client.hlen("completions") == 1
    assert os.getpid()  # the test process itself was never signalled
