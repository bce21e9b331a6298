"""The long-running commands on a real Redis Cluster, idle and busy (not only ``--burst``).

``manage.py run_worker q1 q2 q3`` serves queues in three hash slots: its idle
wait cannot be one ``BLPOP`` over every queue's wake list there (``CROSSSLOT``),
so it must idle past its wait, then run what is pushed onto each queue
promptly, and exit 0 on SIGTERM. ``manage.py run_leader`` must keep its term
across several renewals while idle, and exit 0 on SIGTERM.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from django_redcoord.core.keys import KeyBuilder, key_slot

ROOT = Path(__file__).resolve().parents[2]


def _command(cluster_topology, prefix: str, *args: str, **extra_env: str) -> subprocess.Popen:
    env = {
        **os.environ,
        **extra_env,
        "DJANGO_SETTINGS_MODULE": "tests.support.cluster_settings",
        "DEMO_DB_PATH": ":memory:",
        "REDCOORD_CLUSTER_NODES": ",".join(cluster_topology.urls[:2]),
        "REDCOORD_KEY_PREFIX": prefix,
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    """SIGTERM, then (exit code, stderr)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    return proc.returncode, err


@pytest.fixture
def on_cluster(settings, cluster_topology):
    cluster_topology.flush()
    prefix = f"cmd{time.monotonic_ns()}"
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:2]}, "KEY_PREFIX": prefix}
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "q1", "q2", "q3"],
        }
    }
    return prefix


def test_run_worker_on_three_queues_idles_on_the_cluster_and_runs_what_is_pushed_onto_each(
    on_cluster, cluster_topology
):
    from ..support import task_defs

    keys = KeyBuilder(on_cluster, cluster=True)
    assert (
        len({key_slot(keys.queue(q).wake) for q in ("q1", "q2", "q3")}) == 3
    )  # one BLPOP over them: CROSSSLOT
    worker = _command(
        cluster_topology, on_cluster, "run_worker", "q1", "q2", "q3", "--concurrency", "2"
    )
    try:
        time.sleep(4.0)  # idle: several of its 1 s waits
        assert worker.poll() is None, (
            f"run_worker exited {worker.returncode} while idle: {_stop(worker)[1][-3000:]}"
        )
        for round_ in range(2):  # and once more after it went idle again
            sent = time.monotonic()
            results = [
                task_defs.add.using(queue_name=q).enqueue(i, 10 * round_)
                for i, q in enumerate(("q1", "q2", "q3"))
            ]
            for i, result in enumerate(results):
                deadline = sent + 15
                while True:
                    result.refresh()
                    if result.is_finished:
                        break
                    assert worker.poll() is None, f"run_worker died: {_stop(worker)[1][-3000:]}"
                    assert time.monotonic() < deadline, (
                        f"the task on q{i + 1} did not run within 15 s"
                    )
                    time.sleep(0.05)
                assert result.return_value == i + 10 * round_
            time.sleep(2.5)
    finally:
        code, err = _stop(worker)
    assert code == 0, err[-3000:]
    assert "CROSSSLOT" not in err and "Traceback" not in err, err[-3000:]


def test_run_leader_idles_on_the_cluster_keeping_its_term(on_cluster, cluster_topology):
    # Lease 3 s, renew deadline 2 s, renewed every 0.25 s: about 20 renewals in the 6 s. With the
    # settings' 1 s deadline, a CI machine loaded by four test workers, the model checker and a
    # compiler once stalled the renewals past it, an honest step-down the test read as the defect
    # it guards against (renewals failing on an idle Cluster), which would still step down here
    # within the 6 s.
    leader = _command(
        cluster_topology,
        on_cluster,
        "run_leader",
        LEADER_TEST_LEASE="3",
        LEADER_TEST_RENEW_DEADLINE="2",
    )
    try:
        # Elected first (a loaded machine once took over 6 s to start it: the SIGTERM came
        # before its handler, exit -15), then idle for 6 s.
        from django_redcoord.core import get_client

        record = KeyBuilder(on_cluster).leader("default").record
        end = time.monotonic() + 60
        while not get_client().exists(record):
            assert leader.poll() is None, f"run_leader exited: {_stop(leader)[1][-3000:]}"
            assert time.monotonic() < end, "run_leader was not elected within 60 s"
            time.sleep(0.1)
        time.sleep(6.0)
        assert leader.poll() is None, (
            f"run_leader exited {leader.returncode}: {_stop(leader)[1][-3000:]}"
        )
    finally:
        code, err = _stop(leader)
    assert code == 0, err[-3000:]
    terms = re.findall(r"elected, term (\d+)", err)
    assert len(terms) == 1, err[-3000:]  # elected once, never re-elected
    lost = [
        line
        for line in err.splitlines()
        if "stepped down" in line and not line.endswith("resigned")
    ]
    assert not lost and "campaign failed" not in err, err[
        -3000:
    ]  # the only step down: resigning on SIGTERM
