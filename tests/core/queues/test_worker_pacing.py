"""Prefetch paced by job durations (queues/worker.py, BATCH_BUDGET): slow jobs claimed together
by one thread go back to the queue once the batch has run past the budget, and later claims take
only what runs within it, so the worker's other threads (and other workers) run them side by
side; a finished grouped job frees its group's slot at once. Fast jobs keep the whole prefetch.

Each check counts jobs running at once (an overlap counter, not a timing), and has a negative
control: with the pacing turned off (an infinite budget) one thread runs every job alone.
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues import worker as worker_module
from django_redcoord.core.queues.consumer import Consumer
from django_redcoord.core.queues.groups import Group
from django_redcoord.core.queues.worker import Worker


class Overlaps:
    """Jobs running at once, at most, and by which threads."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.lock = threading.Lock()
        self.now = self.most = 0
        self.threads: set[str] = set()
        self.bodies: list = []

    def __call__(self, message) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.threads.add(threading.current_thread().name)
            self.bodies.append(message.body)
        time.sleep(self.seconds)
        with self.lock:
            self.now -= 1


def _drain(queue, handler, **kwargs):
    Worker([queue], handler, burst=True, heartbeat=0.2, timeout=2.0, **kwargs).run()


@pytest.fixture
def no_pacing(monkeypatch):
    monkeypatch.setattr(worker_module, "BATCH_BUDGET", 1e9)  # never reached


def test_slow_jobs_claimed_by_one_thread_reach_the_idle_thread(redis_client):
    queue = Queue("slow", client=redis_client, prefix="pace")
    queue.push_many([("job", i) for i in range(8)])
    seen = Overlaps(0.3)
    _drain(queue, seen, concurrency=2)
    assert sorted(b[1] for b in seen.bodies) == list(range(8))
    assert seen.most == 2 and len(seen.threads) == 2
    assert queue.depths().ready == 0 and queue.depths().processing == 0


def test_negative_control_without_pacing_one_thread_runs_every_slow_job(redis_client, no_pacing):
    queue = Queue("slow", client=redis_client, prefix="pace")
    queue.push_many([("job", i) for i in range(8)])
    seen = Overlaps(0.3)
    _drain(queue, seen, concurrency=2)
    assert sorted(b[1] for b in seen.bodies) == list(range(8))
    assert seen.most == 1  # the first claim took all eight: the other thread never ran one


def _grouped(redis_client):
    queue = Queue("tenants", client=redis_client, prefix="pace")
    for i in range(4):
        for tenant in ("a", "b"):
            queue.push((tenant, i), group=Group(tenant, concurrency=1))
    return queue


def test_two_groups_of_concurrency_one_run_side_by_side_in_two_threads(redis_client):
    queue = _grouped(redis_client)
    seen = Overlaps(0.3)
    _drain(queue, seen, concurrency=2)
    assert seen.most == 2
    for tenant in ("a", "b"):  # each group still in order, one at a time
        assert [i for t, i in seen.bodies if t == tenant] == [0, 1, 2, 3]
    assert not redis_client.hlen(queue.keys.gstate)


def test_negative_control_two_groups_without_pacing_run_one_at_a_time(redis_client, no_pacing):
    queue = _grouped(redis_client)
    seen = Overlaps(0.3)
    _drain(queue, seen, concurrency=2)
    assert seen.most == 1


def test_fast_jobs_keep_the_whole_prefetch_per_claim(redis_client, monkeypatch):
    asked, given_back = [], []
    claim, hand_back = Consumer.claim, Consumer.hand_back
    monkeypatch.setattr(Consumer, "claim", lambda self, n: asked.append(n) or claim(self, n))
    monkeypatch.setattr(
        Consumer,
        "hand_back",
        lambda self, messages, **kw: (
            given_back.append(len(messages)) or hand_back(self, messages, **kw)
        ),
    )
    queue = Queue("fast", client=redis_client, prefix="pace")
    queue.push_many([("job", i) for i in range(200)])
    _drain(queue, lambda m: None, prefetch=50)
    assert set(asked) - {0} == {50}  # (0: a claim that only acknowledges)
    assert given_back == [0]  # only the retiring hand-back of nothing, on the way out
    assert queue.depths().ready == 0 and queue.depths().processing == 0
