"""Pausing a queue: its workers claim nothing new, in-flight work finishes, nothing is lost.

The counts must add up: every message pushed before, during and after a
pause runs exactly once after the resume, none while paused; the worker's
other queue is served throughout (the pause is per queue, in the claim
script, not a flag the worker reads).
"""

import threading
import time

import pytest

from django_redcoord.core.queues import Queue, Worker


def q(client, name="jobs"):
    return Queue(name, client=client, prefix="t")


def _worker(queues, handler, **kwargs):
    worker = Worker(
        queues, handler, prefetch=1, heartbeat=0.2, timeout=2.0, shutdown_timeout=5, **kwargs
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    return worker, thread


def _until(predicate, within=5.0):
    deadline = time.monotonic() + within
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def test_a_paused_queue_is_not_claimed_from_and_everything_runs_once_after_the_resume(redis_client):
    jobs, other = q(redis_client), q(redis_client, "other")
    ran, lock = [], threading.Lock()

    def handler(message):
        with lock:
            ran.append((message.queue, message.body))

    jobs.push_many(range(5))
    assert jobs.pause("deploying v2") is True
    worker, thread = _worker([jobs, other], handler)
    try:
        other.push("served")  # the worker's other queue goes on
        assert _until(lambda: ("other", "served") in ran)
        jobs.push_many(range(5, 10))  # pushes are taken while paused...
        time.sleep(1.5)  # ...longer than an idle worker's longest wait (1 s)
        assert [body for name, body in ran if name == "jobs"] == []
        d = jobs.depths()
        assert d.ready == 10 and d.paused["reason"] == "deploying v2" and d.paused["since_ms"] > 0
        assert jobs.resume() is True
        assert _until(lambda: len([b for n, b in ran if n == "jobs"]) == 10)
    finally:
        worker.stop()
        thread.join(10)
    assert sorted(b for n, b in ran if n == "jobs") == list(
        range(10)
    )  # each once: none lost, none twice
    assert jobs.depths().ready == 0 and jobs.depths().paused is None


def test_the_job_in_hand_finishes_when_its_queue_is_paused(redis_client):
    jobs = q(redis_client)
    started, release, done = threading.Event(), threading.Event(), []

    def handler(message):
        if message.body == "slow":
            started.set()
            release.wait(5)
        done.append(message.body)

    jobs.push("slow")
    worker, thread = _worker([jobs], handler)
    try:
        assert started.wait(5)
        jobs.pause()
        jobs.push_many(["a", "b"])
        release.set()
        assert _until(lambda: done == ["slow"])
        time.sleep(1.2)
        assert done == ["slow"] and jobs.depths().processing == 0 and jobs.depths().ready == 2
    finally:
        worker.stop()
        thread.join(10)


def test_a_burst_worker_finds_nothing_to_do_on_a_paused_queue_and_retries_still_land(redis_client):
    jobs = q(redis_client)
    jobs.push("x")
    consumer = jobs.consumer("c")
    [message], _ = consumer.claim(1)  # claimed before the pause
    jobs.pause()
    consumer.nack(message, "boom", delay=0)  # its retry goes back to ready, paused or not
    time.sleep(0.01)  # (due in 1 ms: a delay is whole milliseconds, at least 1)
    redis_client.delete(
        jobs.keys.wake
    )  # (the push's and the retry's wake-ups, taken by idle workers)
    messages, hint = consumer.claim(10)
    assert messages == [] and hint is None  # nothing claimed, no wake-up promised
    assert redis_client.llen(jobs.keys.wake) == 0  # and no idle consumer woken to spin on it
    ran = []
    Worker([jobs], lambda m: ran.append(m.body), burst=True, heartbeat=0.2, timeout=1.0).run()
    assert ran == [] and jobs.depths().ready == 1
    jobs.resume()
    assert redis_client.llen(jobs.keys.wake) == 1  # the resume wakes an idle consumer
    Worker([jobs], lambda m: ran.append(m.body), burst=True, heartbeat=0.2, timeout=1.0).run()
    assert ran == ["x"]


def test_pause_and_resume_say_whether_they_changed_anything_and_check_the_reason(redis_client):
    jobs = q(redis_client)
    assert jobs.paused() is None and jobs.resume() is False
    assert jobs.pause("first") is True and jobs.pause("second") is False
    assert jobs.paused()["reason"] == "first"  # a pause keeps its first reason and time
    assert jobs.resume() is True and jobs.paused() is None
    with pytest.raises(TypeError, match="reason must be a string"):
        jobs.pause(5)
    with pytest.raises(ValueError, match="at most 500 characters"):
        jobs.pause("x" * 501)
    assert jobs.paused() is None
    hostile = 'quotes " and \\ and unicode é 名前 and </script>'
    jobs.pause(hostile)
    assert jobs.paused()["reason"] == hostile
