"""The unstarted rest of a batch does not wait behind a long job (queues/worker.py,
``Worker._give_back_waiting``).

A thread runs its claimed batch in turn. While one job of it runs long, the rest goes back to
the front of the queue from the worker's main thread, not only between jobs:

* idle threads (and other workers) run it meanwhile: quick jobs claimed behind a slow one end
  before the slow one does;
* a stop whose job outlasts the shutdown timeout hands it back at once, its attempt not counted,
  rather than leaving it to the reaper (whose redelivery counts an attempt: a task with one
  attempt was dead-lettered without ever running).

Each has a negative control: the same run with the main thread's give-back turned off.
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.consumer import Consumer
from django_redcoord.core.queues.messages import HAND_BACK
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import client_from_url


@pytest.fixture
def only_between_jobs(monkeypatch):
    """The worker as it was: a batch's rest goes back only between its jobs."""
    monkeypatch.setattr(Worker, "_give_back_waiting", lambda self, after: None)


class Jobs:
    """Runs ("slow", s) for s seconds (or until ``free``) and ("quick", i) at once; records when
    each ended."""

    def __init__(self) -> None:
        self.ended: dict[str, float] = {}
        self.slow_started = threading.Event()
        self.free = threading.Event()
        self.runs: list[str] = []

    def __call__(self, message) -> None:
        kind, n = message.body
        self.runs.append(f"{kind}{n}")
        if kind == "slow":
            self.slow_started.set()
            self.free.wait(n)
        self.ended[f"{kind}{n}"] = time.monotonic()


def _push(queue: Queue, quick: int, slow: float) -> None:
    queue.push_many([("slow", slow), *(("quick", i) for i in range(quick))])


def _quick_before_slow(redis_client) -> tuple[Jobs, Queue]:
    queue = Queue("behind", client=redis_client, prefix="giveback")
    _push(queue, quick=5, slow=1.5)
    jobs = Jobs()
    # One claim takes all six (no pace known yet: the whole prefetch); the other thread is idle.
    Worker([queue], jobs, burst=True, concurrency=2, heartbeat=0.2, timeout=5.0).run()
    assert sorted(jobs.runs) == sorted(["slow1.5", *(f"quick{i}" for i in range(5))])
    assert queue.depths().ready == 0 and queue.depths().processing == 0
    return jobs, queue


def test_quick_jobs_claimed_behind_a_slow_one_run_in_the_idle_thread_meanwhile(redis_client):
    jobs, _ = _quick_before_slow(redis_client)
    assert max(jobs.ended[f"quick{i}"] for i in range(5)) < jobs.ended["slow1.5"]


def test_negative_control_only_between_jobs_they_wait_for_the_slow_one(
    redis_client, only_between_jobs
):
    jobs, _ = _quick_before_slow(redis_client)
    assert min(jobs.ended[f"quick{i}"] for i in range(5)) > jobs.ended["slow1.5"]


def _stop_during_the_slow_job(redis_client) -> tuple[list, Jobs]:
    """What another consumer can claim once the worker returned from a stop whose slow job
    outlasted the shutdown timeout (the job still running)."""
    queue = Queue("stopping", client=redis_client, prefix="giveback")
    _push(queue, quick=3, slow=30)
    jobs = Jobs()
    worker = Worker([queue], jobs, concurrency=1, heartbeat=0.2, timeout=30.0, shutdown_timeout=0.3)
    runner = threading.Thread(target=worker.run)
    runner.start()
    try:
        assert jobs.slow_started.wait(10)
        worker.stop()  # SIGTERM: the slow job outlasts the shutdown timeout
        runner.join(10)
        assert not runner.is_alive()
        messages, _ = Consumer(queue, "checker").claim(10)
        return messages, jobs
    finally:
        jobs.free.set()  # (the abandoned thread ends its job now; the worker has returned)


def test_a_stop_whose_job_outlasts_the_timeout_hands_the_rest_back_uncounted(redis_client):
    messages, jobs = _stop_during_the_slow_job(redis_client)
    assert jobs.runs == ["slow30"]  # none of the rest started
    assert sorted(m.body[1] for m in messages) == [0, 1, 2]
    assert all(m.attempt == 0 for m in messages)  # handed back: no attempt counted


def test_negative_control_only_between_jobs_the_rest_stays_for_the_reaper(
    redis_client, only_between_jobs
):
    messages, _ = _stop_during_the_slow_job(redis_client)
    assert messages == []  # still on the stopped worker's list, until its heartbeat lapses


def _warm_the_give_back_script(client) -> None:
    """A server that ran a give-back before (any worker's) has its script cached: a give-back
    sent while it is paused then runs when it resumes (else it would answer NOSCRIPT)."""
    HAND_BACK(client, [f"giveback:warm:{{w}}:{i}" for i in range(10)], ["0"], operation="warm")


def _paused_during_the_give_back(server, *, concurrency: int) -> tuple[Worker, dict]:
    """A batch of one 1 s job and 5 quick ones; Redis pauses just before the main thread's
    give-back (about 0.2 s into the batch) and for longer than the socket timeout."""
    client = client_from_url(server.url, socket_timeout=0.5)
    queue = Queue("paused", client=client, prefix="giveback")
    queue.push_many([("slow", 0), *(("quick", i) for i in range(5))])
    _warm_the_give_back_script(client)
    runs: dict[str, int] = {}
    lock = threading.Lock()
    slow = threading.Event()

    def handler(message) -> None:
        kind, n = message.body
        with lock:
            runs[f"{kind}{n}"] = runs.get(f"{kind}{n}", 0) + 1
        if kind == "slow":
            slow.set()
            time.sleep(1.0)
        else:
            time.sleep(0.3)

    worker = Worker([queue], handler, concurrency=concurrency, heartbeat=0.5, timeout=10.0)
    runner = threading.Thread(target=worker.run, daemon=True)
    runner.start()
    assert slow.wait(5)
    time.sleep(0.1)
    server.pause()
    try:
        time.sleep(1.7)  # the give-back's reply times out (0.5 s); Redis runs it on resuming
    finally:
        server.resume()
    time.sleep(4.0)
    worker.stop()
    runner.join(10)
    return worker, runs


def test_a_give_back_whose_reply_is_lost_runs_nothing_twice(redis_servers):
    """The give-back was sent and got no reply: Redis may still move the messages back, so the
    job's thread must not run them (it did, and Redis ran the give-back on resuming: quick0
    twice); the worker gives back again before it claims, and each runs once."""
    worker, runs = _paused_during_the_give_back(redis_servers(1)[0], concurrency=2)
    assert runs == {"slow0": 1, **{f"quick{i}": 1 for i in range(5)}}, runs
    assert worker.stats.ok == 6


def test_a_stop_with_redis_away_keeps_its_bound(redis_servers):
    """Each job's rest given back one after another, each waiting a socket timeout, made a stop
    of 4 threads take 6 s against the documented shutdown timeout + 2 s + one call (4 s here).
    A pass now ends at its first outage."""
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=1.0)
    queue = Queue("bound", client=client, prefix="giveback")
    # each of the 4 threads claims [slow, quick, quick, quick] (the first claims take the whole
    # prefetch)
    queue.push_many([m for i in range(4) for m in [("slow", i), *(("quick", i),) * 3]])
    _warm_the_give_back_script(client)
    started = threading.Semaphore(0)

    def handler(message) -> None:
        if message.body[0] == "slow":
            started.release()
            time.sleep(30)

    worker = Worker(
        [queue],
        handler,
        concurrency=4,
        prefetch=4,
        heartbeat=0.5,
        timeout=30.0,
        shutdown_timeout=1.0,
    )
    runner = threading.Thread(target=worker.run, daemon=True)
    runner.start()
    for _ in range(4):
        assert started.acquire(timeout=10)
    server.pause()  # before the rests are given back (0.2 s into the batches)
    try:
        began = time.monotonic()
        worker.stop()
        runner.join(15)
        took = time.monotonic() - began
    finally:
        server.resume()
    assert not runner.is_alive()
    assert took < 1.0 + 2.0 + 1.0 + 0.5, took  # shutdown timeout + heartbeat join + one call
