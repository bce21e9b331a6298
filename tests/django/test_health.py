"""Health checks for probes (``redcoord health`` and ``health_view``), on real Redis servers.

Workers are real ``Worker`` objects (in a thread, or a forked process killed
with SIGKILL), the leader a real ``LeaderElection``, the queue real messages.
"""

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.urls import path

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.health import health_view

from ..support import multiproc
from ..support.health_probe import health
from ..support.redis_servers import free_port

PREFIX = "test"  # the KEY_PREFIX conftest configures
HOST = socket.gethostname()

urlpatterns = [path("-/health", health_view)]


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def registered(client, worker_id):
    return client.zscore(KeyBuilder(PREFIX).workers(worker_id), worker_id) is not None


# -- Redis ------------------------------------------------------------------------------------


def test_healthy_redis_exits_0_with_an_ok_line(redis_url):
    code, out, _ = health()
    assert code == 0
    assert out.startswith(f"OK   redis: {redis_url} answered PING in ")


def test_stopped_redis_exits_1_naming_the_server_with_its_password_masked(redis_servers, settings):
    server = redis_servers(1)[0]
    client = client_from_url(server.url)
    client.config_set("requirepass", "s3cret")
    client.close()
    settings.REDCOORD = {"URL": f"redis://:s3cret@127.0.0.1:{server.port}/0", "KEY_PREFIX": PREFIX}
    assert health("--leader")[1].startswith(
        f"OK   redis: redis://:***@127.0.0.1:{server.port}/0 answered PING"
    )

    server.stop()
    started = time.monotonic()
    code, out, error = health("--leader", "--timeout", "0.5")
    assert time.monotonic() - started < 2
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        f"FAIL redis: Redis at redis://:***@127.0.0.1:{server.port}/0 could not be reached"
    )
    assert "Connection refused" in lines[0]
    assert lines[1] == "FAIL leader:default: not checked: Redis did not answer"
    assert error == "unhealthy: redis, leader:default failed (2 of 2 checks)"
    assert "s3cret" not in out + error


def test_exit_codes_of_the_real_command(redis_url):
    """0 healthy, 1 unhealthy, 2 for options that make no sense — as a probe sees them."""

    def run(url, *args):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.support.worker_settings",
            "REDCOORD_REDIS_URL": url,
            "DEMO_DB_PATH": ":memory:",
        }
        return subprocess.run(
            [sys.executable, "manage.py", "redcoord", "--skip-checks", "health", *args],
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )

    healthy = run(redis_url)
    assert (healthy.returncode, healthy.stdout.split(":")[0]) == (0, "OK   redis"), healthy.stderr
    down = run(f"redis://127.0.0.1:{free_port()}/0", "--timeout", "0.5")
    assert down.returncode == 1
    assert down.stdout.startswith("FAIL redis: Redis at redis://127.0.0.1:")
    assert "CommandError: unhealthy: redis failed" in down.stderr
    nonsense = run(redis_url, "--max-age", "60")
    assert nonsense.returncode == 2
    assert "a max age needs a queue" in nonsense.stderr


# -- workers ----------------------------------------------------------------------------------


def test_a_live_worker_passes_and_one_that_stopped_fails(redis_client):
    worker = Worker(
        [Queue("default", client=redis_client, prefix=PREFIX)],
        lambda message: None,
        worker_id="probe-live",
        heartbeat=0.1,
        timeout=1.0,
        shutdown_timeout=2,
    )
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        wait_until(
            lambda: registered(redis_client, "probe-live"), 5, "the worker's first heartbeat"
        )
        code, out, _ = health("--worker", "probe-live")
        assert code == 0
        line = out.splitlines()[1]
        assert line.startswith(
            f"OK   worker:probe-live: alive on {HOST} (pid {os.getpid()}), heartbeat "
        )
        assert line.endswith(" s ago, serving default")

        code, out, _ = health("--worker")  # this host's workers
        assert code == 0
        assert f"OK   workers: 1 live worker(s) on host {HOST}: probe-live (heartbeat " in out

        code, out, _ = health("--worker", "--queue", "default", "--queue", "emails")
        assert code == 1
        assert "OK   workers:default: 1 live worker(s) serving default: probe-live" in out
        assert "FAIL workers:emails: no live worker serving emails" in out
    finally:
        worker.stop()
        thread.join(5)
    assert not thread.is_alive()
    code, out, _ = health("--worker", "probe-live")  # retired on stop: gone from the index
    assert code == 1
    assert "FAIL worker:probe-live: no heartbeat in the last 10 minutes" in out


def _serve(index, url, worker_id):
    client = client_from_url(url)
    Worker(
        [Queue("default", client=client, prefix=PREFIX)],
        lambda message: None,
        worker_id=worker_id,
        heartbeat=0.1,
        timeout=0.5,
    ).run()


def test_a_worker_killed_fails_once_its_heartbeat_is_stale(redis_url, redis_client):
    proc = multiproc.start(_serve, redis_url, "probe-killed")
    try:
        wait_until(
            lambda: registered(redis_client, "probe-killed"), 5, "the worker's first heartbeat"
        )
        assert health("--worker", "probe-killed")[0] == 0
        proc.kill()
        wait_until(
            lambda: health("--worker", "probe-killed")[0] == 1, 3, "the heartbeat to go stale"
        )
    finally:
        proc.stop()
    code, out, _ = health(
        "--worker", "probe-killed", "--worker", "--this-host", "--queue", "default"
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[1].startswith("FAIL worker:probe-killed: last heartbeat ")
    assert lines[1].endswith(
        " ago, past its timeout: the worker is dead or stuck (its messages are being requeued)"
    )
    assert lines[2].startswith(
        f"FAIL workers:default: no live worker on host {HOST} and serving default; "
        "dead or stuck: probe-killed (last heartbeat "
    )


# -- leader and queues ------------------------------------------------------------------------


def test_leader_present_passes_and_fails_once_its_lease_expired(redis_client):
    code, out, _ = health("--leader")
    assert code == 1
    assert "FAIL leader:default: no leader holds the lease" in out

    election = LeaderElection(
        "default",
        lease=1.0,
        renew_deadline=0.5,
        retry_period=0.1,
        identity="probe-leader",
        client=redis_client,
        prefix=PREFIX,
    )
    assert election.campaign()
    code, out, _ = health("--leader", "--leader", "reports")
    lines = out.splitlines()
    assert lines[1].startswith("OK   leader:default: probe-leader leads (term ")
    assert lines[2].startswith("FAIL leader:reports: no leader holds the lease")
    assert code == 1

    assert health("--leader")[0] == 0
    # no renewal: the lease runs out and the check fails with it
    wait_until(lambda: health("--leader")[0] == 1, 3, "the lease to expire")


def test_queue_fails_once_its_oldest_message_is_older_than_max_age(redis_client):
    queue = Queue("emails", client=redis_client, prefix=PREFIX)
    code, out, _ = health("--queue", "emails", "--max-age", "0.2")
    assert (code, out.splitlines()[1]) == (
        0,
        "OK   queue:emails: no message waiting; 0 ready, 0 delayed, 0 processing, 0 consumer(s)",
    )

    queue.push({"to": "a@example.com"})
    queue.push({"later": True}, delay=60)  # not due: not waiting yet
    code, out, _ = health("--queue", "emails", "--max-age", "60")
    assert code == 0
    assert "OK   queue:emails: oldest waiting message 0." in out

    time.sleep(0.3)
    code, out, error = health("--queue", "emails", "--max-age", "0.2")
    assert code == 1
    line = out.splitlines()[1]
    assert line.startswith("FAIL queue:emails: oldest waiting message 0.")
    assert line.endswith(
        "over the max of 0.2 s — nothing consumes it; 1 ready, 1 delayed, 0 processing, 0 "
        "consumer(s)"
    )
    assert error == "unhealthy: queue:emails failed (1 of 2 checks)"


def test_a_due_delayed_message_nobody_claims_counts_as_waiting(redis_client):
    Queue("later", client=redis_client, prefix=PREFIX).push({}, delay=0.05)
    assert health("--queue", "later", "--max-age", "0.2")[0] == 0
    time.sleep(0.4)
    code, out, _ = health("--queue", "later", "--max-age", "0.2")
    assert code == 1
    found = re.match(
        r"FAIL queue:later: oldest waiting message ([0-9.]+) s old, over the max of 0.2 s",
        out.splitlines()[1],
    )
    assert found and 0.3 <= float(found[1]) < 5  # waiting since it fell due, 0.35 s ago


# -- the view ---------------------------------------------------------------------------------


@pytest.mark.urls(__name__)
def test_view_answers_200_with_every_check_when_healthy(client, redis_client):
    Queue("emails", client=redis_client, prefix=PREFIX).push({})
    response = client.get("/-/health", {"queue": "emails", "max_age": "60"})
    assert response.status_code == 200
    data = response.json()
    assert data["status"] == "ok"
    assert set(data["checks"]) == {"redis", "queue:emails"}
    assert data["checks"]["queue:emails"]["ok"] is True
    assert "no-store" in response["Cache-Control"]


@pytest.mark.urls(__name__)
def test_view_answers_503_naming_the_failing_checks(client, redis_client):
    Queue("emails", client=redis_client, prefix=PREFIX).push({})
    time.sleep(0.3)
    response = client.get("/-/health?queue=emails&max_age=0.2&leader")
    assert response.status_code == 503
    data = response.json()
    assert data["status"] == "fail"
    assert data["checks"]["redis"]["ok"] is True
    assert data["checks"]["queue:emails"]["ok"] is False
    assert "over the max of 0.2 s" in data["checks"]["queue:emails"]["detail"]
    assert data["checks"]["leader:default"] == {
        "ok": False,
        "detail": "no leader holds the lease: no run_leader process is running, or none can reach "
        "this Redis",
    }


@pytest.mark.urls(__name__)
def test_view_answers_503_without_the_password_when_redis_is_down(client, settings):
    port = free_port()
    settings.REDCOORD = {"URL": f"redis://probe:s3cret@127.0.0.1:{port}/0", "KEY_PREFIX": PREFIX}
    response = client.get("/-/health")
    assert response.status_code == 503
    detail = response.json()["checks"]["redis"]["detail"]
    assert detail.startswith(f"Redis at redis://probe:***@127.0.0.1:{port}/0 could not be reached")
    assert b"s3cret" not in response.content


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(
    "query, message",
    [
        ("max_age=60", "a max age needs a queue"),
        ("queue=emails&max_age=soon", "max_age must be a number of seconds, not 'soon'"),
        ("queue=emails", "a queue needs --max-age SECONDS (view: max_age=)"),
        ("queue={x&max_age=1", "queue name '{x' has misplaced braces"),
    ],
)
def test_view_refuses_a_query_that_makes_no_sense_with_400(client, query, message):
    response = client.get(f"/-/health?{query}")
    assert response.status_code == 400
    assert message in response.json()["error"]
