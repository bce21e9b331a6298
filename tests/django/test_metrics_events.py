"""Per-process metrics: the core's events (core/observe.py) counted by prometheus_client.

Each test does real work on a real Redis (a lock that waits, a lock lost, a
worker's deliveries, a leader's run, a refused rate limit) and checks that
the counters and histograms of ``process_metrics()`` moved by exactly that
much. They are process-wide, so every check is a difference (after - before).
"""

from __future__ import annotations

import threading
import time

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from django.urls import path
from prometheus_client.parser import text_string_to_metric_families

from django_redcoord.core import observe as hooks
from django_redcoord.core.exceptions import LockLost
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.periodic.jobs import Job
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.queues.worker import DeadLetter, Retry, WorkerCrashed
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.decorators import rate_limit, with_lock
from django_redcoord.metrics import metrics_view, process_metrics

urlpatterns = [path("metrics/", metrics_view)]


@pytest.fixture(autouse=True)
def _urls(settings):
    settings.ROOT_URLCONF = __name__


@pytest.fixture
def metrics():
    """Read a sample of this process's metrics: ``metrics(name, **labels)``, 0 when absent."""
    reg = process_metrics().registry
    return lambda name, **labels: reg.get_sample_value(name, labels) or 0.0


class Delta:
    """The change of some samples between now and ``changed()``."""

    def __init__(self, metrics, *samples: tuple[str, dict]) -> None:
        self.metrics, self.samples = metrics, samples
        self.before = [metrics(name, **labels) for name, labels in samples]

    def changed(self) -> list[float]:
        return [
            round(self.metrics(n, **labels) - b, 6)
            for (n, labels), b in zip(self.samples, self.before, strict=True)
        ]


def test_a_lock_that_waited_then_was_released_counts_its_acquisitions_wait_and_hold(
    metrics, redis_client
):
    lock, acquired, timeout = (
        {"kind": "lock"},
        {"kind": "lock", "outcome": "acquired"},
        {"kind": "lock", "outcome": "timeout"},
    )
    d = Delta(
        metrics,
        ("redcoord_hold_acquisitions_total", acquired),
        ("redcoord_hold_acquisitions_total", timeout),
        ("redcoord_hold_wait_seconds_count", acquired),
        ("redcoord_hold_wait_seconds_sum", acquired),
        ("redcoord_hold_wait_seconds_bucket", {**acquired, "le": "0.1"}),
        ("redcoord_hold_duration_seconds_count", lock),
        ("redcoord_hold_duration_seconds_sum", lock),
        ("redcoord_hold_acquisitions_total", {"kind": "semaphore", "outcome": "acquired"}),
    )
    first = Lock("ev:1", ttl=30, wait=0, client=redis_client, prefix="test")
    assert first.acquire()
    assert not Lock(
        "ev:1", ttl=30, wait=0, client=redis_client, prefix="test"
    ).acquire()  # busy: a timeout
    releaser = threading.Timer(0.4, first.release)
    releaser.start()
    second = Lock("ev:1", ttl=30, wait=5, client=redis_client, prefix="test")
    assert second.acquire()  # waits ~0.4 s for the first to be released
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    time.sleep(0.1)
    second.release()
    with Semaphore("ev-pool", 2, ttl=30, wait=0, client=redis_client, prefix="test"):
        pass
    acquisitions, timeouts, waits, wait_sum, quick, holds, held_sum, permits = d.changed()
    assert (acquisitions, timeouts, waits, holds, permits) == (2, 1, 2, 2, 1)
    assert quick == 1  # the uncontended acquire took less than 0.1 s; the waiter did not
    assert 0.35 <= wait_sum < 2.0
    assert 0.45 <= held_sum < 3.0  # first held ~0.4 s, second ~0.1 s


def test_a_lost_lock_is_counted_once_whether_a_release_or_an_extend_finds_out(
    metrics, redis_client
):
    d = Delta(metrics, ("redcoord_holds_lost_total", {"kind": "lock"}))
    expired = Lock("ev:lost", ttl=0.2, wait=0, client=redis_client, prefix="test")
    assert expired.acquire()
    time.sleep(0.3)
    assert Lock(
        "ev:lost", ttl=30, wait=0, client=redis_client, prefix="test"
    ).acquire()  # someone else now
    with pytest.raises(LockLost):
        expired.release()
    assert d.changed() == [1]

    stale = Lock("ev:lost2", ttl=0.2, wait=0, client=redis_client, prefix="test")
    assert stale.acquire()
    time.sleep(0.3)
    for _ in range(2):
        with pytest.raises(LockLost):
            stale.extend()
    with pytest.raises(LockLost):
        stale.release()  # already known lost: not counted again
    assert d.changed() == [2]

    renewed = Lock("ev:lost3", ttl=0.3, wait=0, auto_renew=True, client=redis_client, prefix="test")
    assert renewed.acquire()
    redis_client.delete(renewed.keys.lock)  # gone from under the watchdog
    deadline = time.monotonic() + 3
    while d.changed() != [3] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert d.changed() == [3]
    with pytest.raises(LockLost):
        renewed.release()
    assert d.changed() == [3]


def test_a_workers_deliveries_count_outcomes_durations_retries_and_dead_letters(
    metrics, redis_client
):
    q = Queue("ev-jobs", max_attempts=2, client=redis_client, prefix="test")
    ok = {"queue": "ev-jobs", "task": "app.tasks.ok"}
    bad = {"queue": "ev-jobs", "task": "app.tasks.bad"}
    d = Delta(
        metrics,
        ("redcoord_messages_processed_total", {**ok, "outcome": "ok"}),
        ("redcoord_messages_processed_total", {**bad, "outcome": "failed"}),
        ("redcoord_messages_processed_total", {**bad, "outcome": "dead"}),
        ("redcoord_message_retries_total", bad),
        ("redcoord_message_dead_letters_total", bad),
        ("redcoord_message_process_duration_seconds_count", {**ok, "outcome": "ok"}),
        ("redcoord_message_process_duration_seconds_sum", {**ok, "outcome": "ok"}),
        ("redcoord_messages_processed_total", {"queue": "ev-jobs", "task": "", "outcome": "ok"}),
        ("redcoord_message_retries_total", ok),
    )

    def handler(message):
        body = message.body
        if body.get("task") == "app.tasks.ok":
            time.sleep(0.05)
        elif body.get("dead"):
            raise DeadLetter("never")
        elif body.get("task") == "app.tasks.bad":
            raise Retry("not now", delay=0)

    for _ in range(3):
        q.push({"task": "app.tasks.ok"})
    q.push({"task": "app.tasks.bad"})  # fails, is retried, fails again: dead after 2 attempts
    q.push({"task": "app.tasks.bad", "dead": True})  # dead at once
    q.push({"plain": 1})  # no task: task=""
    worker = Worker([q], handler, heartbeat=0.2, timeout=1.0)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        expected = [3, 1, 2, 1, 2, 3, None, 1, 0]
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            got = d.changed()
            if [
                g if e is not None else None for g, e in zip(got, expected, strict=True)
            ] == expected:
                break
            time.sleep(0.05)
    finally:
        worker.stop()
        thread.join(10)
    got = d.changed()
    assert got[:6] + got[7:] == [3, 1, 2, 1, 2, 3, 1, 0]
    assert 0.15 <= got[6] < 3.0  # three ok jobs of 50 ms each


def test_a_job_past_its_timeout_counts_as_timeout_and_its_retry(metrics, redis_client):
    q = Queue("ev-slow", client=redis_client, prefix="test")
    labels = {"queue": "ev-slow", "task": ""}
    d = Delta(
        metrics,
        ("redcoord_messages_processed_total", {**labels, "outcome": "timeout"}),
        ("redcoord_message_retries_total", labels),
        ("redcoord_message_process_duration_seconds_sum", {**labels, "outcome": "timeout"}),
    )
    release = threading.Event()
    q.push({"n": 1})
    worker = Worker(
        [q], lambda message: release.wait(5), heartbeat=0.2, timeout=1.0, job_timeout=0.3
    )
    try:
        with pytest.raises(WorkerCrashed):
            worker.run()
    finally:
        release.set()
    timeouts, retries, seconds = d.changed()
    assert (timeouts, retries) == (1, 1)
    assert 0.3 <= seconds < 2.0


def test_a_leader_counts_its_election_its_runs_missed_slots_and_its_demotion(metrics, redis_client):
    job_labels = {"election": "ev", "job": "tick"}
    d = Delta(
        metrics,
        ("redcoord_leader_elected_total", {"election": "ev"}),
        ("redcoord_leader_demoted_total", {"election": "ev"}),
        ("redcoord_periodic_runs_total", {**job_labels, "outcome": "ok"}),
        ("redcoord_periodic_runs_total", {**job_labels, "outcome": "error"}),
        ("redcoord_periodic_missed_slots_total", job_labels),
        ("redcoord_periodic_run_duration_seconds_count", {**job_labels, "outcome": "ok"}),
    )
    election = LeaderElection(
        "ev", lease=30, renew_deadline=20, retry_period=1, client=redis_client, prefix="test"
    )
    assert election.campaign()
    job = Job("tick", lambda: None, 1000, None, None, 0.0, False, "coalesce")
    scheduler = Scheduler(election, [job])
    now = int(time.time()) + 0.1  # 0.1 s after a slot (one a second)
    scheduler.tick(now)  # first sight of the job: its past slot is recorded as done, nothing runs
    scheduler.tick(now + 5)  # five slots due: coalesced into one run, four missed
    assert scheduler.wait_idle(5) == []
    assert election.resign()
    assert d.changed() == [1, 1, 1, 0, 4, 1]


def test_rate_limit_decisions_and_busy_views_are_counted(metrics, redis_client, redis_url):
    d = Delta(
        metrics,
        ("redcoord_ratelimit_decisions_total", {"limiter": "ev-limiter", "outcome": "allowed"}),
        ("redcoord_ratelimit_decisions_total", {"limiter": "ev-limiter", "outcome": "refused"}),
        ("redcoord_view_busy_responses_total", {"kind": "ratelimit", "status": "429"}),
        ("redcoord_view_busy_responses_total", {"kind": "lock", "status": "409"}),
    )
    limiter = RateLimiter("1/m", name="ev-limiter", client=redis_client, prefix="test")
    assert limiter.hit("user:1").allowed
    assert not limiter.hit("user:1").allowed
    assert limiter.peek("user:1") is not None  # a peek decides nothing: not counted

    @rate_limit("1/m", key="ip", name="ev-limiter")
    def limited(request):
        return HttpResponse("ok")

    @with_lock("ev:view", wait=0)
    def locked(request):
        return HttpResponse("ok")

    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9")
    assert [limited(request).status_code for _ in range(2)] == [200, 429]
    holder = Lock("ev:view", ttl=30, wait=0, client=redis_client, prefix="test")
    assert holder.acquire()
    try:
        assert locked(request).status_code == 409
    finally:
        holder.release()
    assert d.changed() == [2, 2, 1, 1]


def test_the_view_serves_redis_state_and_this_process_metrics_together(client, redis_client):
    with Lock("ev:served", ttl=30, wait=0, client=redis_client, prefix="test"):
        pass
    response = client.get("/metrics/")
    assert response.status_code == 200
    names = {family.name for family in text_string_to_metric_families(response.content.decode())}
    assert {
        "redcoord_up",
        "redcoord_queue_messages",
        "redcoord_hold_acquisitions",
        "redcoord_hold_wait_seconds",
    } <= names


def test_without_an_observer_nothing_breaks_and_nothing_is_counted(metrics, redis_client):
    observer = process_metrics()
    d = Delta(
        metrics,
        ("redcoord_hold_acquisitions_total", {"kind": "lock", "outcome": "acquired"}),
        ("redcoord_ratelimit_decisions_total", {"limiter": "ev-quiet", "outcome": "allowed"}),
        ("redcoord_holds_lost_total", {"kind": "lock"}),
    )
    hooks.remove_observer(observer)
    try:
        assert hooks.observers == []
        with Lock("ev:quiet", ttl=30, wait=0, client=redis_client, prefix="test"):
            pass
        assert (
            RateLimiter("5/m", name="ev-quiet", client=redis_client, prefix="test").hit("k").allowed
        )
        election = LeaderElection(
            "ev-quiet",
            lease=30,
            renew_deadline=20,
            retry_period=1,
            client=redis_client,
            prefix="test",
        )
        assert election.campaign() and election.resign()
        lost = Lock("ev:quiet2", ttl=0.2, wait=0, client=redis_client, prefix="test")
        assert lost.acquire()
        hooks.add_observer(
            observer
        )  # added while held: the grant was not timed, the release is not reported
        time.sleep(0.3)
        with pytest.raises(LockLost):
            lost.release()
    finally:
        hooks.add_observer(observer)
    assert d.changed() == [0, 0, 1]


def test_an_observer_that_raises_is_logged_once_and_breaks_nothing(redis_client, caplog):
    calls = []

    def broken(event, fields):
        calls.append(event)
        raise RuntimeError("observer bug")

    hooks.add_observer(broken)
    try:
        for _ in range(2):
            with Lock("ev:broken", ttl=30, wait=0, client=redis_client, prefix="test"):
                pass
    finally:
        hooks.remove_observer(broken)
    assert calls.count("hold.acquire") == 2 and calls.count("hold.release") == 2
    failures = [
        r
        for r in caplog.records
        if "observer bug" in (r.exc_text or "") or "failed on event" in r.getMessage()
    ]
    assert len([r for r in failures if "hold.acquire" in r.getMessage()]) == 1
