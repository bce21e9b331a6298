"""Edge cases of the dead-man's switch (``job_health``, ``redcoord health``, the health view).

Each test drives a real Redis (tests/conftest.py) and a real ``LeaderElection``
and ``Scheduler`` ticked by hand, or the command and the view as an operator
and a monitoring system use them. The regressions: an allowed lateness that
did not follow a schedule edit, bad numbers on the command line that argparse
turned into a status-1 error (which monitoring reads as "unhealthy"), and a
broken jobs module that hid the Redis and leader checks.
"""

from __future__ import annotations

import io
import sys
import time

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import path

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic.control import pause_job
from django_redcoord.core.periodic.jobs import Job
from django_redcoord.core.periodic.overdue import job_health
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.periodic.schedules import edit_schedule
from django_redcoord.health import health_view

from ..support.health_probe import health
from ..support.redis_servers import free_port

PREFIX = "test"  # the KEY_PREFIX conftest configures
LEASE, RETRY = 15.0, 2.0
urlpatterns = [path("-/health", health_view)]


def noop():
    pass


@pytest.fixture
def leading(redis_client):
    """A campaigning election (lease 15 s, retry 2 s) of the test's Redis; resigned after."""
    election = LeaderElection(
        "default",
        lease=LEASE,
        renew_deadline=10,
        retry_period=RETRY,
        client=redis_client,
        prefix=PREFIX,
        identity="red-leader",
    )
    assert election.campaign()
    yield election
    election.resign()


# -- max_late follows a schedule edit -----------------------------------------------------------


def test_the_default_max_late_follows_a_schedule_edit_before_the_leader_claims_under_it(leading):
    # A daily job (default max_late: a day) edited to every 5 s. Until the leader claims a slot
    # under the edit, the awaited slot is the edit's first; its allowance must be the edit's
    # interval (5 s + retry, at least a failover), not the gap since the last daily slot (hours).
    job = Job("red.daily", noop, 86_400_000, None, None, 0.0, False, "coalesce")
    if time.time() % 5 > 3:  # both edits within one 5 s slot (the first edit's first slot
        time.sleep(5.1 - time.time() % 5)  # between them is awaited until the leader claims)
    Scheduler(leading, [job]).tick(time.time())  # a new job: the latest past slot recorded as done
    (before,) = job_health(leading, {job.name: job})
    assert (before.status, before.ok, before.max_late) == ("never_ran", True, 86_400 + RETRY)

    stored = edit_schedule(leading, job, every=5)  # the leader does not tick again: it is stuck
    (found,) = job_health(leading, {job.name: job}, now_ms=stored.since_ms)
    assert found.max_late == LEASE + RETRY, found  # max(5 + 2, 15 + 2, 1)
    first = (stored.since_ms // 5000 + 1) * 5000  # the edit's first slot
    assert found.due == first / 1000
    (late,) = job_health(leading, {job.name: job}, now_ms=first + int((LEASE + RETRY + 1) * 1000))
    assert (late.status, late.ok) == ("overdue", False), late
    assert "(allowed 17 s)" in late.reason

    # ... and to a weekly cron: a week's allowance, as the code's weekly job would have
    edit_schedule(leading, job, cron="0 3 * * 1")
    (weekly,) = job_health(leading, {job.name: job})
    assert weekly.max_late == 7 * 86_400 + RETRY, weekly
    assert weekly.ok


def test_a_job_max_late_of_its_own_stays_across_an_edit(leading):
    job = Job("red.own", noop, 86_400_000, None, None, 0.0, False, "coalesce", max_late=600.0)
    Scheduler(leading, [job]).tick(time.time())
    edit_schedule(leading, job, every=5)
    (found,) = job_health(leading, {job.name: job})
    assert found.max_late == 600.0


def test_a_paused_job_passes_even_with_no_leader(redis_client):
    election = LeaderElection("default", client=redis_client, prefix=PREFIX)
    job = Job("red.paused", noop, 1000, None, None, 0.0, False, "coalesce")
    pause_job(election, job.name)
    (found,) = job_health(election, {job.name: job})
    assert (found.status, found.ok, found.late) == ("paused", True, 0.0)
    assert "not checked for lateness until resumed" in found.reason


def test_a_new_job_under_a_stopped_leader_says_the_leader_stopped_not_that_its_code_lacks_the_job(
    redis_client,
):
    # A job never claimed, under a leader in office longer than max_late: "its code does not have
    # this
    # job" while the leader renews; but a leader that stopped renewing (SIGSTOP) claims nothing at
    # all.
    election = LeaderElection(
        "default",
        lease=2.0,
        renew_deadline=1.5,
        retry_period=0.2,
        client=redis_client,
        prefix=PREFIX,
        identity="red-new",
    )
    job = Job("red.brand_new", noop, 1000, None, None, 0.0, False, "coalesce")
    try:
        deadline = time.monotonic() + 2.5  # past its allowance (lease + retry: 2.2 s), renewing
        while time.monotonic() < deadline:
            assert election.campaign()
            time.sleep(0.1)
        (renewing,) = job_health(election, {job.name: job})
        assert (renewing.status, renewing.ok) == ("never_ran", False)
        assert "without claiming a slot of it: its code does not have this job" in renewing.reason
        time.sleep(0.6)  # no renewal for 3 retry periods, the lease (2 s) not over
        (stopped,) = job_health(election, {job.name: job})
        assert (stopped.status, stopped.ok) == ("never_ran", False)
        assert (
            "but last renewed its lease " in stopped.reason
            and "it is stopped or stuck (SIGSTOP" in stopped.reason
        )
    finally:
        election.resign()


# -- the command: usage errors exit 2, with what is allowed ------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--job", "x", "--max-late", "abc"],
            "--max-late must be a number of seconds (such as 30 or 2.5), not 'abc'",
        ),
        (
            ["--job", "x", "--max-late", "-1"],
            "max late (--max-late, view: max_late=) must be > 0 seconds, not -1.0",
        ),
        (["--job", "x", "--max-late", "inf"], "must be a finite number of seconds"),
        (
            ["--queue", "q", "--max-age", "soon"],
            "--max-age must be a number of seconds (such as 30 or 2.5), not 'soon'",
        ),
        (
            ["--leader", "--timeout", "x"],
            "--timeout must be a number of seconds (such as 30 or 2.5), not 'x'",
        ),
        (["--leader", "--timeout", "0"], "--timeout must be between 0 and 60 seconds, not 0"),
    ],
)
def test_bad_numbers_are_usage_errors_exit_2_saying_what_is_allowed(args, message):
    code, out, error = health(*args)
    assert (code, out) == (2, ""), (code, out, error)
    assert message in error


def test_an_unknown_job_fails_with_exit_1_naming_the_registered_ones(redis_client):
    code, out, error = health("--job", "red.typo")
    assert code == 1 and "job:red.typo failed" in error
    assert "FAIL job:red.typo: not registered in this process (registered: " in out


def test_a_broken_jobs_module_still_reports_redis_and_the_other_checks(
    settings, redis_url, leading
):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": PREFIX,
        "JOBS": ["tests.red_no_such_jobs_module"],
    }
    code, out, error = health("--jobs", "--leader")
    sys.modules.pop("tests.red_no_such_jobs_module", None)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("OK   redis: "), out
    assert any(line.startswith("OK   leader:default: red-leader leads") for line in lines), out
    assert lines[-1].startswith(
        "FAIL jobs: the periodic jobs could not be discovered: REDCOORD['JOBS'] names "
        "'tests.red_no_such_jobs_module', which cannot be imported: ModuleNotFoundError"
    ), out


# -- the view: status codes and JSON a monitoring system reads ---------------------------------


@pytest.mark.urls(__name__)
def test_the_view_answers_json_200_503_400_405_and_never_caches(client, settings, redis_url):
    settings.REDCOORD = {"URL": redis_url, "KEY_PREFIX": PREFIX, "JOBS": []}
    ok = client.get("/-/health")
    assert ok.status_code == 200 and ok["Content-Type"] == "application/json"
    assert "no-cache" in ok["Cache-Control"] and ok.json()["status"] == "ok"

    unknown = client.get(
        "/-/health", {"job": "red.gone"}
    )  # nothing schedules it: unhealthy, not an error
    assert unknown.status_code == 503 and unknown["Content-Type"] == "application/json"
    body = unknown.json()
    assert body["status"] == "fail" and set(body) == {"status", "checks"}
    assert body["checks"]["job:red.gone"]["ok"] is False
    assert set(body["checks"]["job:red.gone"]) == {"ok", "detail"}

    for query in ("job=x&max_late=abc", "job=x&max_late=-1", "jobs=maybe", "job=a%20b"):
        bad = client.get(f"/-/health?{query}")
        assert bad.status_code == 400 and bad["Content-Type"] == "application/json", query
        assert bad.json()["status"] == "error" and bad.json()["error"], query
    assert client.post("/-/health?jobs=1").status_code == 405
    # as deployed: CsrfViewMiddleware checks unsafe methods (the test client skips it by default)
    checked = Client(enforce_csrf_checks=True)
    for method in ("post", "put", "patch", "delete"):
        assert getattr(checked, method)("/-/health").status_code == 405, method  # was 403

    settings.REDCOORD = {
        "URL": f"redis://127.0.0.1:{free_port()}/0",
        "KEY_PREFIX": PREFIX,
        "JOBS": [],
    }
    down = client.get("/-/health", {"job": "red.gone"})
    assert down.status_code == 503
    checks = down.json()["checks"]
    assert checks["redis"]["ok"] is False and "could not be reached" in checks["redis"]["detail"]
    assert checks["job:red.gone"] == {"ok": False, "detail": "not checked: Redis did not answer"}


# -- the metrics: a registered job no leader ever claims -------------------------------------------


def test_the_metrics_show_a_registered_job_no_leader_claims_and_the_alert_fires(
    settings, redis_url, redis_client
):
    # A job deployed to the web processes but not to the run_leader ones has no state in Redis:
    # `redcoord health --jobs` failed for it, but the metrics had no series, so the alert never
    # fired.
    from prometheus_client import CollectorRegistry, generate_latest

    from django_redcoord.core.periodic.jobs import periodic, unregister
    from django_redcoord.metrics import RedcoordCollector

    timing = {
        "LEADER_LEASE": 1.0,
        "LEADER_RENEW_DEADLINE": 0.5,
        "LEADER_RETRY_PERIOD": 0.1,
    }  # allowance 1.1 s
    settings.REDCOORD = {"URL": redis_url, "KEY_PREFIX": PREFIX, **timing}
    periodic(every=1, name="red.unclaimed")(noop)
    election = LeaderElection(
        "default",
        lease=30,
        renew_deadline=20,
        retry_period=1,
        client=redis_client,
        prefix=PREFIX,
        identity="old-code",
    )
    registry = CollectorRegistry()
    registry.register(RedcoordCollector(client=redis_client, prefix=PREFIX))

    def series() -> dict[str, float]:
        lines = generate_latest(registry).decode().splitlines()
        return {
            line.split("{")[0]: float(line.rsplit(" ", 1)[1])
            for line in lines
            if 'job="red.unclaimed"' in line
        }

    assert series() == {}  # no leader at all: redcoord_leader_present says so, not a series per job
    try:
        assert election.campaign()  # a leader whose code lacks red.unclaimed: it never claims it
        fresh = series()  # just elected: within its allowance
        assert fresh == {
            "redcoord_periodic_job_overdue_seconds": 0.0,
            "redcoord_periodic_job_max_late_seconds": 1.1,
            "redcoord_periodic_job_healthy": 1.0,
            "redcoord_periodic_job_running": 0.0,
            "redcoord_periodic_job_runs_total": 0.0,
            "redcoord_periodic_job_failures_total": 0.0,
            "redcoord_periodic_job_missed_slots_total": 0.0,
        }, fresh  # its row: never run, nothing yet
        time.sleep(1.3)
        late = series()
        assert late["redcoord_periodic_job_healthy"] == 0.0
        assert (
            late["redcoord_periodic_job_overdue_seconds"]
            > late["redcoord_periodic_job_max_late_seconds"]
            == 1.1
        )
        assert election.campaign()  # renewing (not stopped), yet never claiming it
        code, out, _ = health("--job", "red.unclaimed")  # the probe agrees
        assert code == 1 and "has led for" in out and "its code does not have this job" in out

        # once claimed, the job's state gives its row: one series each, no double
        Scheduler(
            election, [Job("red.unclaimed", noop, 1000, None, None, 0.0, False, "coalesce")]
        ).tick(time.time())
        text = generate_latest(registry).decode()
        assert (
            text.count('redcoord_periodic_job_healthy{election="default",job="red.unclaimed"}') == 1
        )
        assert 'redcoord_periodic_job_runs_total{election="default",job="red.unclaimed"}' in text
    finally:
        election.resign()
        unregister("red.unclaimed")


# -- a real run_leader: an edit through the command, then the leader stopped ----------------------


def test_a_real_leader_edited_to_a_longer_interval_is_judged_by_it_and_overdue_once_stopped(
    settings, redis_url, redis_client, tmp_path
):
    import signal

    from django_redcoord.core.keys import KeyBuilder
    from django_redcoord.core.periodic.jobs import unregister

    from ..support.deadman_settings import NAMES, TIMING
    from .test_deadman import Leader, wait_for

    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": PREFIX,
        "JOBS": ["tests.support.deadman_jobs"],
        **TIMING,
    }
    lease, retry = TIMING["LEADER_LEASE"], TIMING["LEADER_RETRY_PERIOD"]
    leader = Leader(redis_url, tmp_path)
    key = KeyBuilder(PREFIX).leader("default").job("deadman.tick")
    try:
        wait_for(
            "the leader to run deadman.tick",
            lambda: int(redis_client.hget(key, "runs") or 0) >= 2,
            leader,
        )
        out = io.StringIO()
        call_command(
            "redcoord", "schedule", "deadman.tick", "--every", "4", stdout=out
        )  # 0.3 s -> 4 s
        assert out.getvalue().startswith("job deadman.tick: version 1: every 4s, in force from ")
        # judged by the edited schedule at once: 4 s + retry, not the 0.3 s slots' default (lease +
        # retry)
        code, text, _ = health("--job", "deadman.tick")
        assert code == 0 and f"(allowed lateness {4 + retry:g} s)" in text, text
        wait_for(
            "a claim under the edit",
            lambda: redis_client.hget(key, "schedule_version") == b"1",
            leader,
        )
        code, text, _ = health("--job", "deadman.tick")
        assert (
            code == 0
            and "OK   job:deadman.tick: ok: " in text
            and f"(allowed lateness {4 + retry:g} s)" in text
        )
        leader.signal(signal.SIGSTOP)
        code, text, _ = wait_for(
            "overdue once stopped",
            lambda: (r := health("--job", "deadman.tick"))[0] == 1 and r,
            leader,
            timeout=20,
        )
        assert (
            "FAIL job:deadman.tick: overdue: due " in text and f"(allowed {4 + retry:g} s)" in text
        ), text
        leader.signal(signal.SIGCONT)
        call_command("redcoord", "schedule", "deadman.tick", "--revert", stdout=io.StringIO())
        wait_for(
            "a claim under the revert",
            lambda: redis_client.hget(key, "schedule_version") == b"2",
            leader,
        )
        code, text, _ = wait_for(
            "healthy again", lambda: (r := health("--job", "deadman.tick"))[0] == 0 and r, leader
        )
        assert f"(allowed lateness {lease + retry:g} s)" in text, text
    finally:
        leader.stop()
        for name in NAMES:
            unregister(name)
        sys.modules.pop("tests.support.deadman_jobs", None)


@pytest.mark.urls(__name__)
def test_probes_beyond_what_the_pool_admits_still_answer_within_the_timeout(
    settings, redis_servers
):
    """Twelve probes at once on a pool of 4, Redis paused: each answers 503 within the 2 s timeout
    (its wait for a pooled connection counts in it). Before, the probes the pool could not admit
    at once waited 2 s for a connection and then 2 s for the PING."""
    import threading

    (server,) = redis_servers(1)
    settings.REDCOORD = {"URL": server.url, "KEY_PREFIX": PREFIX, "JOBS": [], "MAX_CONNECTIONS": 4}
    assert Client().get("/-/health").status_code == 200
    answers: list[tuple[float, int, bytes]] = []

    def probe() -> None:
        began = time.monotonic()
        answer = Client().get("/-/health")
        answers.append((time.monotonic() - began, answer.status_code, answer.content[:300]))

    server.pause()
    try:
        threads = [threading.Thread(target=probe) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        server.resume()
    assert len(answers) == 12 and {s for _, s, _ in answers} == {503}, answers
    assert max(d for d, _, _ in answers) < 2.8, sorted(answers)  # the timeout, and some slack
