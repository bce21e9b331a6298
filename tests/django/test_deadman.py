"""The dead-man's switch of periodic jobs against real ``manage.py run_leader`` processes.

One leader process per test (tests/support/deadman_settings.py: lease 3 s, renew
deadline 2 s, retry 0.25 s) runs tests/support/deadman_jobs.py every 0.3 s: a job
that succeeds (the control), one that takes a lock the test may hold, one
that always fails. The test process judges them as an operator would: with
``job_health``, ``manage.py redcoord health``, the health view, the admin
page and the metrics. Faults are real: SIGSTOP/SIGCONT of the leader, a lock
held by the test. Every check is seen to fail and to pass.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.urls import path

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.periodic.jobs import Job, unregister
from django_redcoord.core.periodic.overdue import job_health
from django_redcoord.health import health_view
from django_redcoord.metrics import metrics_view

from ..support.deadman_settings import EVERY, NAMES, RESOURCE, TIMING
from ..support.health_probe import health as redcoord_health

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "test"  # the KEY_PREFIX conftest configures
LEASE, RETRY = TIMING["LEADER_LEASE"], TIMING["LEADER_RETRY_PERIOD"]
DEFAULT_MAX_LATE = LEASE + RETRY  # the default rule: max(0.3 + 0.25, 3 + 0.25, 1)
DASHBOARD = "/admin/django_redcoord/dashboard/"

urlpatterns = [path("-/health", health_view), path("metrics/", metrics_view)]


@pytest.fixture(autouse=True)
def _settings(settings, redis_url):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": PREFIX,
        "JOBS": ["tests.support.deadman_jobs"],
        **TIMING,
    }
    yield
    # the command and the view discover the jobs into this process's registry: leave it as found
    for name in NAMES:
        unregister(name)
    sys.modules.pop("tests.support.deadman_jobs", None)


def jobs() -> dict[str, Job]:
    """The jobs of tests/support/deadman_jobs.py as the leader declares them (not registered
    here)."""
    return {
        name: Job(name, None, round(EVERY * 1000), None, None, 0.0, False, "coalesce")
        for name in NAMES
    }


class Leader:
    """One ``manage.py run_leader`` process on the test's Redis."""

    def __init__(self, url: str, logs: Path) -> None:
        self.log_path = logs / "leader.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.support.deadman_settings",
            "REDCOORD_REDIS_URL": url,
            "REDCOORD_KEY_PREFIX": PREFIX,
        }
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "manage.py", "run_leader", "--identity", "deadman-1"],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.log_path.read_text()[-3000:]

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def leader(redis_url, tmp_path):
    started = Leader(redis_url, tmp_path)
    yield started
    started.stop()


def election(redis_client) -> SimpleNamespace:
    return SimpleNamespace(
        client=redis_client,
        keys=KeyBuilder(PREFIX).leader("default"),
        lease=LEASE,
        retry_period=RETRY,
    )


def health_of(redis_client, name, **max_late):
    (found,) = job_health(election(redis_client), {name: jobs()[name]}, max_late=max_late or None)
    return found


def wait_for(what, predicate, leader: Leader, timeout: float = 30.0):
    """Poll ``predicate`` until it returns something true; return that (fail with the leader's
    log)."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout} s waiting for {what}\n--- leader log:\n{leader.log()}"
            )
        if leader.proc.poll() is not None:
            raise AssertionError(
                f"the leader exited ({leader.proc.returncode}) waiting for {what}:\n{leader.log()}"
            )
        time.sleep(0.05)


def runs_ok(redis_client, leader, name="deadman.tick", runs=2):
    """Wait until ``name`` has run ``runs`` times and is healthy; return its health."""
    key = KeyBuilder(PREFIX).leader("default").job(name)

    def healthy():
        found = health_of(redis_client, name)
        done = int(redis_client.hget(key, "runs") or 0)
        return found if found.status == "ok" and done >= runs else None

    return wait_for(f"{name} to run {runs} times", healthy, leader)


# -- (a) a stopped leader, (d) the healthy control ----------------------------------------------


def test_a_stopped_leader_makes_its_jobs_overdue_and_healthy_again_once_resumed(
    redis_client, leader
):
    found = runs_ok(redis_client, leader)
    assert found.ok and found.late < found.max_late == DEFAULT_MAX_LATE
    leader.signal(signal.SIGSTOP)
    stopped = time.monotonic()
    # the leader still holds its record: "alive but not claiming", with a max_late below the lease
    found = wait_for(
        "tick overdue (max_late 0.8 s)",
        lambda: (
            (h := health_of(redis_client, "deadman.tick", **{"deadman.tick": 0.8})).status
            == "overdue"
            and h
        ),
        leader,
    )
    assert not found.ok and found.late > 0.8
    assert "a leader is alive but not claiming: deadman-1 (term " in found.reason
    assert "it is stopped or stuck (SIGSTOP" in found.reason
    # with the default allowed lateness: reported within max_late + a slot + the retry period, not
    # before
    found = wait_for(
        "tick overdue (default max_late)",
        lambda: (h := health_of(redis_client, "deadman.tick")).status == "overdue" and h,
        leader,
    )
    elapsed = time.monotonic() - stopped
    assert DEFAULT_MAX_LATE - EVERY - 1.0 < elapsed < DEFAULT_MAX_LATE + EVERY + RETRY + 2.0, (
        elapsed
    )
    assert found.reason.endswith(
        "no leader is claiming (no run_leader process holds the lease, or none reaches this Redis)"
    ), found.reason  # the lease (3 s) ran out meanwhile
    leader.signal(signal.SIGCONT)
    resumed = runs_ok(redis_client, leader, runs=0)
    assert resumed.ok and resumed.late < resumed.max_late


def test_a_healthy_leader_and_job_are_not_reported(redis_client, leader):
    runs_ok(redis_client, leader, runs=4)
    for _ in range(10):  # sampled over 5 slots: never overdue, never failing
        found = health_of(redis_client, "deadman.tick")
        assert (found.status, found.ok, found.consecutive_failures) == ("ok", True, 0), found
        assert found.last_ok is not None and "last ok run ended" in found.reason
        time.sleep(EVERY / 2)


# -- (b) a run blocked by a lock held elsewhere, (c) a job failing every run ---------------------


def test_a_job_whose_lock_is_held_elsewhere_is_reported_blocked(redis_client, leader):
    runs_ok(redis_client, leader, "deadman.locked")
    holder = Lock(
        RESOURCE, ttl=60, wait=10, client=redis_client, prefix=PREFIX
    )  # the job holds it a moment per run
    assert holder.acquire()
    try:
        found = wait_for(
            "locked blocked",
            lambda: (h := health_of(redis_client, "deadman.locked")).status == "failing" and h,
            leader,
        )
        assert found.blocked and not found.ok and found.last_ok is not None
        assert found.reason.startswith("blocked: the last ")
        assert (
            f"LockNotAcquired: lock {RESOURCE!r} could not be acquired within 0 s" in found.reason
        )
    finally:
        holder.release()
    found = runs_ok(redis_client, leader, "deadman.locked", runs=0)
    assert not found.blocked and found.consecutive_failures == 0


def test_a_job_failing_every_run_is_reported_failing(redis_client, leader):
    found = wait_for(
        "fails to fail twice",
        lambda: (h := health_of(redis_client, "deadman.fails")).consecutive_failures >= 2 and h,
        leader,
    )
    assert (found.status, found.ok, found.blocked, found.last_ok) == ("failing", False, False, None)
    assert found.reason.startswith(
        f"the last {found.consecutive_failures} runs failed (ValueError: no rates today)"
    )
    assert found.reason.endswith("; last ok run: never")
    assert health_of(redis_client, "deadman.tick").ok  # the same leader's healthy job: not reported


# -- (e) the command, (f) the view ---------------------------------------------------------------


def test_redcoord_health_jobs_exits_1_naming_the_failing_jobs_and_0_for_healthy_ones(
    redis_client, leader
):
    runs_ok(redis_client, leader)
    wait_for("fails to fail", lambda: not health_of(redis_client, "deadman.fails").ok, leader)
    code, out, error = redcoord_health("--job", "deadman.tick")
    assert code == 0, out
    assert "OK   job:deadman.tick: ok: last ok run ended " in out
    code, out, error = redcoord_health("--jobs")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("OK   redis: ")
    ours = [
        line for line in lines[1:] if ":deadman." in line
    ]  # the test site's demo jobs are registered too
    assert [":".join(line.split(":")[:2]) for line in ours] == [
        "FAIL job:deadman.fails",
        "OK   job:deadman.locked",
        "OK   job:deadman.tick",
    ]
    assert "failing: the last " in ours[0] and "(ValueError: no rates today)" in ours[0]
    assert error.startswith("unhealthy: job:deadman.fails failed (1 of ")
    leader.signal(signal.SIGSTOP)
    code, out, error = wait_for(
        "the probe to fail",
        lambda: (r := redcoord_health("--job", "deadman.tick", "--max-late", "0.5"))[0] == 1 and r,
        leader,
    )
    assert (
        "FAIL job:deadman.tick: overdue: due " in out
        and "(allowed 0.5 s): a leader is alive but not claiming" in out
    )
    leader.signal(signal.SIGCONT)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-late", "5"], "a max late needs a job: add --job NAME (view: job=)"),
        (
            ["--job", "x", "--max-late", "-1"],
            "max late (--max-late, view: max_late=) must be > 0 seconds, not -1.0",
        ),
        (
            ["--job", "x", "--max-late", "nan"],
            "max late (--max-late, view: max_late=) must be a finite number",
        ),
        (["--job", "a{b"], "job name 'a{b'"),
    ],
)
def test_redcoord_health_refuses_bad_job_options_with_exit_2(args, message):
    code, _, error = redcoord_health(*args)
    assert code == 2 and message in error, error


def test_redcoord_health_names_a_job_nobody_registered(redis_client):
    code, out, _ = redcoord_health("--job", "nope")
    assert code == 1
    assert (
        "FAIL job:nope: not registered in this process (registered: " in out
        and "deadman.tick" in out
    )
    assert "never_ran: never scheduled: no leader is running" in out


@pytest.mark.urls(__name__)
def test_health_view_reports_jobs_as_json(client, redis_client, leader):
    runs_ok(redis_client, leader)
    wait_for("fails to fail", lambda: not health_of(redis_client, "deadman.fails").ok, leader)
    response = client.get("/-/health", {"job": "deadman.tick", "max_late": "30"})
    assert response.status_code == 200, response.content
    assert response.json()["checks"]["job:deadman.tick"]["detail"].startswith(
        "ok: last ok run ended "
    )
    assert "(allowed lateness 30 s)" in response.json()["checks"]["job:deadman.tick"]["detail"]
    response = client.get("/-/health?jobs=1")
    assert response.status_code == 503
    data = response.json()
    assert data["status"] == "fail"
    assert {"redis", "job:deadman.fails", "job:deadman.locked", "job:deadman.tick"} <= set(
        data["checks"]
    )
    assert data["checks"]["job:deadman.fails"]["ok"] is False
    assert "(ValueError: no rates today)" in data["checks"]["job:deadman.fails"]["detail"]
    assert data["checks"]["job:deadman.tick"]["ok"] is True


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("max_late=5", "a max late needs a job"),
        ("job=deadman.tick&max_late=soon", "max_late must be a number of seconds, not 'soon'"),
        ("job=deadman.tick&max_late=0", "must be > 0 seconds"),
        ("jobs=maybe", "jobs must be 1 or 0"),
        ("job=%7Bx", "job name '{x'"),
        # a misspelt probe answered 200 having checked only Redis; this_host took any word
        ("workers", "unknown query parameter(s) 'workers'; the parameters are worker, leader"),
        ("leaders=&queue=a", "unknown query parameter(s) 'leaders'"),
        ("worker&this-host=1", "unknown query parameter(s) 'this-host'"),
        ("worker&this_host=banana", "this_host must be 1 or 0"),
    ],
)
def test_health_view_refuses_bad_job_queries_with_400(client, query, message):
    response = client.get(f"/-/health?{query}")
    assert response.status_code == 400
    assert message in response.json()["error"]


# -- (g) the admin badge and the metrics ---------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.urls(__name__)
def test_admin_badge_and_metrics_show_the_failing_job_only(
    client, staff, redis_client, leader, settings
):
    runs_ok(redis_client, leader)
    wait_for("fails to fail", lambda: not health_of(redis_client, "deadman.fails").ok, leader)
    settings.ROOT_URLCONF = "testproject.urls"
    client.force_login(staff("view_dashboard"))
    rows = {j["name"]: j for j in client.get(DASHBOARD + "data.json").json()["leaders"][0]["jobs"]}
    assert (rows["deadman.fails"]["health"], rows["deadman.fails"]["overdue"]) == ("failing", True)
    assert "(ValueError: no rates today)" in rows["deadman.fails"]["health_reason"]
    assert (rows["deadman.tick"]["health"], rows["deadman.tick"]["overdue"]) == ("ok", False)
    assert 0 <= rows["deadman.tick"]["late"] < rows["deadman.tick"]["max_late"] == DEFAULT_MAX_LATE
    html = client.get(DASHBOARD).content.decode()
    fails_row = html[html.index('<tr data-name="deadman.fails"') :]
    fails_row = fails_row[: fails_row.index("</tr>")]
    assert '<span class="rc-dead rc-health"' in fails_row and ">failing</span>" in fails_row
    assert "no rates today" in fails_row
    tick_row = html[html.index('<tr data-name="deadman.tick"') :]
    assert "rc-health" not in tick_row[: tick_row.index("</tr>")]
    settings.ROOT_URLCONF = __name__
    body = client.get("/metrics/").content.decode()
    assert 'redcoord_periodic_job_healthy{election="default",job="deadman.fails"} 0.0' in body
    assert 'redcoord_periodic_job_healthy{election="default",job="deadman.tick"} 1.0' in body
    assert (
        f'redcoord_periodic_job_max_late_seconds{{election="default",job="deadman.tick"}} '
        f"{DEFAULT_MAX_LATE}" in body
    )
    assert 'redcoord_periodic_job_overdue_seconds{election="default",job="deadman.tick"}' in body
