"""The Prometheus metrics: real state made in a real Redis, scraped through the view.

Each test builds state with the public API (queues, locks, a semaphore, an
election and a job run, a running worker), scrapes ``/metrics/`` and checks
the parsed values against that state.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from django.test import Client
from django.urls import path
from prometheus_client.parser import text_string_to_metric_families  # the dev extra installs it

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.periodic.jobs import Job
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.metrics import metrics_view, require_prometheus, start_metrics_server

from ..support.redis_servers import free_port

urlpatterns = [
    path("metrics/", metrics_view),
    path("metrics/reports/", metrics_view, {"elections": ["default", "reports"]}),
]


@pytest.fixture(autouse=True)
def _urls(settings):
    settings.ROOT_URLCONF = __name__


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(client, url: str = "/metrics/") -> dict[tuple[str, frozenset], float]:
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return parse(response.content.decode())


def value(samples, name: str, **labels):
    return samples.get((name, frozenset(labels.items())))


def names(samples, name: str, label: str) -> set[str]:
    return {dict(labels)[label] for n, labels in samples if n == name}


def scrape_until(client, check, timeout: float = 5.0):
    """Scrape until ``check(samples)`` holds; return those samples, or None after ``timeout``
    seconds."""
    deadline = time.monotonic() + timeout
    while True:
        samples = scrape(client)
        if check(samples):
            return samples
        if time.monotonic() > deadline:
            return None
        time.sleep(0.05)


def test_queue_depths_are_what_was_pushed_claimed_and_dead_lettered(client, redis_client):
    q = Queue("emails", client=redis_client, prefix="test")
    for i in range(4):
        q.push({"n": i})
    q.push({"n": "later"}, delay=60)
    Queue("idle", client=redis_client, prefix="test").push({"n": 0})
    Queue("idle", client=redis_client, prefix="test").purge()
    consumer = q.consumer("c1", timeout=10)
    claimed, _ = consumer.claim(2)
    assert len(claimed) == 2
    assert consumer.nack(claimed[0], "boom", dead=True) == "dead"
    time.sleep(0.3)

    m = scrape(client)
    assert value(m, "redcoord_up") == 1
    assert value(m, "redcoord_queue_messages", queue="emails") == 2
    assert value(m, "redcoord_queue_delayed_messages", queue="emails") == 1
    assert value(m, "redcoord_queue_in_flight_messages", queue="emails") == 1
    assert value(m, "redcoord_queue_dead_letters", queue="emails") == 1
    assert value(m, "redcoord_queue_consumers", queue="emails") == 1
    assert 0.25 <= value(m, "redcoord_queue_oldest_message_age_seconds", queue="emails") < 5
    # a known queue with nothing ready and nobody serving it
    assert value(m, "redcoord_queue_messages", queue="idle") == 0
    assert value(m, "redcoord_queue_oldest_message_age_seconds", queue="idle") == 0
    assert value(m, "redcoord_workers", queue="emails") == 0
    assert value(m, "redcoord_workers", queue="idle") == 0


def test_locks_held_and_waiting_and_semaphore_permits_are_counted(client, redis_client):
    assert value(scrape(client), "redcoord_locks_held") == 0
    first = Lock("invoice:1", ttl=30, wait=0, client=redis_client, prefix="test")
    second = Lock("invoice:2", ttl=30, wait=0, client=redis_client, prefix="test")
    assert first.acquire() and second.acquire()
    waiter = Lock("invoice:1", ttl=30, wait=10, client=redis_client, prefix="test")
    got = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire()))
    thread.start()
    try:
        m = scrape_until(client, lambda s: value(s, "redcoord_lock_waiters") == 1)
        assert m is not None, "the waiting thread never showed in redcoord_lock_waiters"
        assert value(m, "redcoord_locks_held") == 2
    finally:
        first.release()
        thread.join(10)
    assert got == [True]
    waiter.release()
    m = scrape(client)
    assert value(m, "redcoord_locks_held") == 1
    assert value(m, "redcoord_lock_waiters") == 0
    second.release()

    # a holder that crashed: its lock expired, its index entry outlives it by up to a TTL
    crashed = Lock("invoice:3", ttl=0.2, wait=0, client=redis_client, prefix="test")
    assert crashed.acquire()
    assert value(scrape(client), "redcoord_locks_held") == 1
    time.sleep(0.3)
    assert value(scrape(client), "redcoord_locks_held") == 0

    permits = [
        Semaphore("pool", 3, ttl=30, wait=0, client=redis_client, prefix="test") for _ in range(2)
    ]
    assert all(p.acquire() for p in permits)
    m = scrape(client)
    assert value(m, "redcoord_locks_held") == 0
    assert value(m, "redcoord_semaphore_permits", semaphore="pool") == 3
    assert value(m, "redcoord_semaphore_permits_held", semaphore="pool") == 2
    assert value(m, "redcoord_semaphore_waiters", semaphore="pool") == 0
    for p in permits:
        p.release()
    assert value(scrape(client), "redcoord_semaphore_permits_held", semaphore="pool") is None


def failing_job():
    raise ValueError("no rates today")


def test_leader_and_job_metrics_follow_a_campaign_a_run_and_a_resignation(client, redis_client):
    m = scrape(client, "/metrics/reports/")
    assert value(m, "redcoord_leader_present", election="default") == 0
    assert value(m, "redcoord_leader_term", election="default") is None

    election = LeaderElection(
        "default",
        lease=30,
        renew_deadline=20,
        retry_period=1,
        identity="box-1:42",
        client=redis_client,
        prefix="test",
    )
    assert election.campaign()
    job = Job("rates", failing_job, 60_000, None, None, 0.0, False, "coalesce")
    run = Scheduler(election, [job]).run_now(job, timeout=5)
    assert run is not None and run.outcome == "error"

    m = scrape(client, "/metrics/reports/")
    assert value(m, "redcoord_leader_present", election="default") == 1
    assert value(m, "redcoord_leader_term", election="default") == election.term
    assert value(m, "redcoord_leader_info", election="default", holder="box-1:42") == 1
    assert 25 < value(m, "redcoord_leader_lease_remaining_seconds", election="default") <= 30
    started = value(m, "redcoord_leader_term_start_timestamp_seconds", election="default")
    assert abs(started - time.time()) < 10
    assert value(m, "redcoord_leader_present", election="reports") == 0
    job_labels = {"election": "default", "job": "rates"}
    assert value(m, "redcoord_periodic_job_runs_total", **job_labels) == 1
    assert value(m, "redcoord_periodic_job_failures_total", **job_labels) == 1
    assert (
        value(m, "redcoord_periodic_job_missed_slots_total", **job_labels) == 0
    )  # an ad-hoc run misses none
    assert value(m, "redcoord_periodic_job_running", **job_labels) == 0
    assert value(m, "redcoord_periodic_job_last_outcome", outcome="error", **job_labels) == 1
    assert value(m, "redcoord_periodic_job_last_outcome", outcome="ok", **job_labels) == 0
    start = value(m, "redcoord_periodic_job_last_start_timestamp_seconds", **job_labels)
    end = value(m, "redcoord_periodic_job_last_end_timestamp_seconds", **job_labels)
    assert start <= end and abs(end - time.time()) < 10
    assert value(m, "redcoord_periodic_job_last_duration_seconds", **job_labels) == pytest.approx(
        run.duration, abs=0.002
    )

    release = threading.Event()
    slow = Job("slow", lambda: release.wait(5), 60_000, None, None, 0.0, False, "coalesce")
    slow_run = Scheduler(election, [slow]).run_now(slow, timeout=0)
    try:
        m = scrape(client)
        assert value(m, "redcoord_periodic_job_running", election="default", job="slow") == 1
        assert (
            value(
                m,
                "redcoord_periodic_job_last_outcome",
                election="default",
                job="slow",
                outcome="ok",
            )
            is None
        )
    finally:
        release.set()
        assert slow_run.done.wait(5)
    m = scrape(client)
    assert value(m, "redcoord_periodic_job_running", election="default", job="slow") == 0
    assert (
        value(m, "redcoord_periodic_job_last_outcome", election="default", job="slow", outcome="ok")
        == 1
    )
    assert value(m, "redcoord_periodic_job_runs_total", election="default", job="slow") == 1
    assert value(m, "redcoord_periodic_job_failures_total", election="default", job="slow") == 0

    assert election.resign()
    m = scrape(client)
    assert value(m, "redcoord_leader_present", election="default") == 0
    assert names(m, "redcoord_leader_info", "holder") == set()
    assert (
        value(m, "redcoord_periodic_job_runs_total", **job_labels) == 1
    )  # the job's record outlives the term


def test_a_running_worker_is_counted_with_its_heartbeat_and_its_work(client, redis_client):
    q = Queue("thumbs", client=redis_client, prefix="test")
    done = threading.Event()
    worker = Worker(
        [q],
        handler=lambda message: done.set(),
        concurrency=2,
        heartbeat=0.1,
        timeout=1.0,
        worker_id="w-metrics",
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        q.push({"image": 1})
        assert done.wait(5)
        labels = {"worker": "w-metrics", "outcome": "ok"}
        m = scrape_until(
            client, lambda s: value(s, "redcoord_worker_processed_messages_total", **labels) == 1
        )
        assert m is not None, "the processed message never showed in the worker's counter"
        assert value(m, "redcoord_workers", queue="thumbs") == 1
        assert value(m, "redcoord_worker_up", worker="w-metrics", host=socket.gethostname()) == 1
        assert value(m, "redcoord_worker_threads", worker="w-metrics") == 2
        assert value(m, "redcoord_worker_busy_threads", worker="w-metrics") == 0
        assert 0 <= value(m, "redcoord_worker_last_heartbeat_age_seconds", worker="w-metrics") < 1.0
        assert (
            value(m, "redcoord_worker_processed_messages_total", worker="w-metrics", outcome="dead")
            == 0
        )
        assert value(m, "redcoord_queue_consumers", queue="thumbs") == 2
    finally:
        worker.stop()
        thread.join(10)
    m = scrape(client)
    assert value(m, "redcoord_workers", queue="thumbs") == 0
    assert names(m, "redcoord_worker_up", "worker") == set()


def test_a_worker_that_died_without_retiring_is_listed_down_and_not_counted(client, redis_client):
    q = Queue("thumbs", client=redis_client, prefix="test")
    worker = Worker(
        [q], handler=lambda message: None, heartbeat=0.1, timeout=0.3, worker_id="w-gone"
    )
    worker._retire = lambda **kwargs: None  # as if SIGKILLed: it never says goodbye
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert scrape_until(client, lambda s: value(s, "redcoord_workers", queue="thumbs") == 1)
    finally:
        worker.stop()
        thread.join(10)
    m = scrape_until(
        client,
        lambda s: value(s, "redcoord_worker_up", worker="w-gone", host=socket.gethostname()) == 0,
    )
    assert m is not None, "the lapsed worker never showed as down"
    assert value(m, "redcoord_workers", queue="thumbs") == 0
    assert value(m, "redcoord_worker_last_heartbeat_age_seconds", worker="w-gone") >= 0.3


def test_redis_down_answers_200_with_redcoord_up_0_and_nothing_else(client, settings):
    settings.REDCOORD = {
        "URL": f"redis://127.0.0.1:{free_port()}/0",
        "KEY_PREFIX": "test",
        "CONNECT_TIMEOUT": 0.2,
    }
    m = scrape(client)
    assert value(m, "redcoord_up") == 0
    # besides this process's own counters (test_metrics_events.py), which need no Redis
    from django_redcoord.metrics import process_metrics

    own = {s.name for family in process_metrics().registry.collect() for s in family.samples}
    assert {name for name, _ in m} - own == {"redcoord_up", "redcoord_scrape_duration_seconds"}


def test_a_redis_stopped_between_scrapes_turns_redcoord_up_to_0(client, settings, redis_servers):
    (server,) = redis_servers(1)
    settings.REDCOORD = {"URL": server.url, "KEY_PREFIX": "test", "CONNECT_TIMEOUT": 0.2}
    assert value(scrape(client), "redcoord_up") == 1
    server.stop()
    assert value(scrape(client), "redcoord_up") == 0


def test_openmetrics_is_served_when_the_scraper_asks_for_it(client):
    response = client.get("/metrics/", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response.content.decode().rstrip().endswith("# EOF")


def test_the_view_refuses_post(client):
    assert client.post("/metrics/").status_code == 405
    # as deployed: CsrfViewMiddleware checks unsafe methods (the test client skips it by default)
    checked = Client(enforce_csrf_checks=True)
    for method in ("post", "put", "patch", "delete"):
        assert getattr(checked, method)("/metrics/").status_code == 405, method  # was 403


def test_start_metrics_server_serves_the_same_metrics(redis_client):
    Queue("served", client=redis_client, prefix="test").push({"n": 1})
    server, thread = start_metrics_server(0, "127.0.0.1")
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{server.server_port}/metrics", timeout=5
        ) as reply:
            m = parse(reply.read().decode())
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert value(m, "redcoord_up") == 1
    assert value(m, "redcoord_queue_messages", queue="served") == 1


@pytest.mark.parametrize(
    ("port", "error"),
    [("9100", TypeError), (True, TypeError), (70000, ValueError), (-1, ValueError)],
)
def test_start_metrics_server_refuses_a_bad_port(port, error):
    with pytest.raises(error, match="port must be"):
        start_metrics_server(port)


def test_without_prometheus_client_the_module_imports_and_use_says_what_to_install(monkeypatch):
    code = (
        "import sys; sys.modules['prometheus_client'] = None\n"
        "import django_redcoord.metrics as m\n"
        "try:\n    m.require_prometheus()\nexcept ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert (
        out.stdout.strip()
        == "django_redcoord.metrics needs prometheus_client: pip install 'django-redcoord[metrics]'"
    )
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    with pytest.raises(ImportError, match=r"pip install 'django-redcoord\[metrics\]'"):
        require_prometheus()


def test_run_leader_serves_metrics_on_its_metrics_port(redis_url):
    import os
    import signal
    from pathlib import Path

    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.log_settings",
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "metricsport",
        "LEADER_TEST_JOBS": "",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "run_leader",
            "--metrics-port",
            str(port),
            "--metrics-addr",
            "127.0.0.1",
        ],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body, deadline = "", time.monotonic() + 15
        while (
            time.monotonic() < deadline
            and 'redcoord_leader_present{election="default"} 1.0' not in body
        ):
            time.sleep(0.2)
            try:
                body = (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)
                    .read()
                    .decode()
                )
            except OSError:
                continue
        assert 'redcoord_leader_present{election="default"} 1.0' in body, body
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert f"metrics: serving on 127.0.0.1:{port}" in err
    finally:
        proc.kill()


# -- issue 31, defect 24: a scrape's cost is bounded; a token protects the view ------------


def _token_settings(settings, token):
    settings.REDCOORD = {**settings.REDCOORD, "METRICS_TOKEN": token}


def test_with_a_token_the_view_answers_401_without_it(client, settings):
    """Before: the view was open to anyone, and METRICS_TOKEN was an unknown setting."""
    token = "s3cret-token_0123456789"
    _token_settings(settings, token)
    for headers in (
        {},
        {"HTTP_AUTHORIZATION": "Bearer wrong"},
        {"HTTP_AUTHORIZATION": f"Basic {token}"},
        {"HTTP_AUTHORIZATION": f"Bearer {token}x"},
        {"HTTP_AUTHORIZATION": "Bearer"},
        {"HTTP_AUTHORIZATION": f"Bearer {token[:-1]}"},
        {"HTTP_AUTHORIZATION": "Bearer é\x00"},
    ):
        response = client.get("/metrics/", **headers)
        assert response.status_code == 401, headers
        assert (
            response["WWW-Authenticate"].startswith("Bearer")
            and b"redcoord_up" not in response.content
        )
    for header in (f"Bearer {token}", f"bearer {token}", f"  Bearer  {token} "):
        response = client.get("/metrics/", HTTP_AUTHORIZATION=header)
        assert response.status_code == 200, header
        assert value(parse(response.content.decode()), "redcoord_up") == 1


@pytest.mark.parametrize("token", ["", "a b", "tab\there", "é-unicode", 12345, b"bytes"])
def test_an_unusable_metrics_token_is_refused_without_echoing_it(token):
    from django_redcoord.core.options import problems

    [problem] = problems({"METRICS_TOKEN": token})
    assert "METRICS_TOKEN" in problem and "Bearer" in problem
    if isinstance(token, str) and token:
        assert token not in problem


def test_a_scrape_reads_at_most_lock_detail_locks_and_the_waiters_add_up_in_turn(
    redis_client, monkeypatch
):
    """30 live locks, one with a waiter, and a detail of 10: each scrape reads 10 lock records
    (before: all of them), the held count stays exact from the index, and within three scrapes
    (a full turn) the waiter is counted."""
    from django_redcoord import metrics

    read = []
    real = metrics.read_holders

    def counting(client, names, **kwargs):
        read.append(len(names))
        return real(client, names, **kwargs)

    monkeypatch.setattr(metrics, "read_holders", counting)
    locks = [
        Lock(f"many:{i:02d}", ttl=30, wait=0, client=redis_client, prefix="test") for i in range(30)
    ]
    assert all(lock.acquire() for lock in locks)
    waiter = Lock("many:17", ttl=30, wait=10, client=redis_client, prefix="test")
    got = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire()))
    thread.start()
    try:
        time.sleep(0.3)
        collector = metrics.RedcoordCollector(redis_client, prefix="test", lock_detail=10)
        snapshots = [collector.read()["locks"] for _ in range(4)]
        assert read == [10, 10, 10, 10]
        assert [s["held"] for s in snapshots] == [30] * 4 and [
            s["complete"] for s in snapshots
        ] == [0] * 4
        assert (
            snapshots[2]["waiters"] == snapshots[3]["waiters"] == 1
        )  # a full turn read every lock once
        read.clear()
        exact = metrics.RedcoordCollector(redis_client, prefix="test", lock_detail=30).read()[
            "locks"
        ]
        assert read == [30] and exact == {"held": 30, "waiters": 1, "complete": 1}
        read.clear()
        none = metrics.RedcoordCollector(redis_client, prefix="test", lock_detail=0).read()["locks"]
        assert read == [] and none["held"] == 30 and none["complete"] == 0
    finally:
        locks[17].release()
        thread.join(10)
    assert got == [True]
    waiter.release()
    for i, lock in enumerate(locks):
        if i != 17:
            lock.release()


def test_concurrent_scrapes_share_one_read(redis_client, monkeypatch):
    """However many scrape at once, the process reads Redis once at a time (anyone hammering an
    open endpoint costs Redis one read per read, not one per request)."""
    from django_redcoord import metrics

    reads, gate = [], threading.Event()
    collector = metrics.RedcoordCollector(redis_client, prefix="test")
    real = collector._read

    def slow_read():
        reads.append(1)
        gate.wait(5)
        return real()

    monkeypatch.setattr(collector, "_read", slow_read)
    threads = [threading.Thread(target=collector.read) for _ in range(20)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    gate.set()
    for t in threads:
        t.join(10)
    assert (
        1 <= len(reads) <= 2
    )  # the first read, and at most one more for those that came during it


def test_concurrent_scrapes_during_an_outage_share_the_failed_read(redis_servers, monkeypatch):
    """A paused Redis: scrapes that came while a read was timing out share its failure (each
    answers redcoord_up 0 after about one socket timeout), instead of each waiting for the ones
    ahead and then spending a socket timeout of its own (the tenth answered after ten)."""
    from django_redcoord import metrics
    from django_redcoord.core.transport.clients import client_from_url

    (server,) = redis_servers(1)
    client = client_from_url(server.url, socket_timeout=0.5)
    collector = metrics.RedcoordCollector(client, prefix="test")
    reads = []
    real = collector._read

    def counted():
        reads.append(1)
        return real()

    monkeypatch.setattr(collector, "_read", counted)
    assert next(iter(collector.collect())).samples[0].value == 1  # (connected before the pause)
    answered: list[tuple[float, float]] = []
    server.pause()
    try:
        started = time.monotonic()

        def scrape() -> None:
            up = next(iter(collector.collect())).samples[0].value
            answered.append((time.monotonic() - started, up))

        threads = [threading.Thread(target=scrape) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
    finally:
        server.resume()
    assert [up for _, up in answered] == [0.0] * 6
    # one read before the pause, the one that timed out, at most one more for late arrivals
    assert len(reads) <= 3, len(reads)
    assert max(spent for spent, _ in answered) < 1.6, answered  # not 6 x 0.5 s
