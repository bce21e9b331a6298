"""A Redis Cluster with one primary down: new clients, new workers and the deploy check.

The primary serving slot 0 is the node redis-py asks for ``COMMAND`` when it
builds a Cluster client: while it is down (paused here, as a hung host or the
seconds before its replica is promoted) a new process must still connect
through any node that answers and work on the other primaries' slots. That
needs ``cluster-require-full-coverage no`` (else every node refuses every call
while a slot has no primary): ``check --deploy`` says so (``redcoord.W015``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import key_slot
from django_redcoord.core.locks import Lock
from django_redcoord.core.options import validate
from django_redcoord.core.transport.clients import async_cluster_client, cluster_client

from ..support.redis_servers import ClusterTopology

ROOT = Path(__file__).resolve().parents[2]


def _set_coverage(topo: ClusterTopology, value: str) -> None:
    for node in topo.nodes:
        if node.proc is not None:
            client = redis.Redis(port=node.port, socket_timeout=2)
            try:
                client.config_set("cluster-require-full-coverage", value)
            finally:
                client.close()


@pytest.fixture
def slot0_paused():
    """3 primaries, no replicas, full coverage not required; the primary of slot 0 SIGSTOPped.
    Yields (topology, URLs of the live nodes, the paused node's slot range)."""
    topo = ClusterTopology(masters=3, replicas=0).start()
    try:
        _set_coverage(topo, "no")
        probe = redis.Redis(port=topo.nodes[0].port, socket_timeout=2)
        ranges = probe.execute_command("CLUSTER", "SLOTS")
        probe.close()
        first = next(r for r in ranges if int(r[0]) == 0)
        victim = next(n for n in topo.nodes if n.port == int(first[2][1]))
        live = [f"redis://127.0.0.1:{n.port}" for n in topo.nodes if n is not victim]
        victim.pause()
        yield topo, live, (int(first[0]), int(first[1]))
    finally:
        topo.cleanup()


def _names(paused: tuple[int, int], prefix: str = "lock") -> tuple[list[str], list[str]]:
    """Lock names on live primaries, and on the paused one."""
    live, dead = [], []
    for i in range(40):
        name = f"{prefix}-{i}"
        (dead if paused[0] <= key_slot("{" + name + "}") <= paused[1] else live).append(name)
    return live, dead


def test_a_new_client_connects_through_any_node_while_the_primary_of_slot_0_is_down(slot0_paused):
    topo, live_urls, paused = slot0_paused
    config = validate(
        {"CLUSTER": {"NODES": live_urls}, "SOCKET_TIMEOUT": 2.0, "CONNECT_TIMEOUT": 1.0}
    )
    started = time.monotonic()
    client = cluster_client(
        config
    )  # redis-py alone: TimeoutError asking the paused node for COMMAND
    assert time.monotonic() - started < 1.5, "building the client waited on the paused primary"
    live, dead = _names(paused)
    assert live and dead
    try:
        for name in live[:6]:
            lock = Lock(name, client=client, ttl=5, wait=0)
            assert lock.acquire()
            lock.release()
        with pytest.raises(CoordinationUnavailable):
            Lock(dead[0], client=client, ttl=5, wait=0).acquire()
    finally:
        client.close()

    async def on_the_loop():
        aclient = async_cluster_client(config)
        try:
            for name in live[:3]:
                lock = Lock(name, client=aclient, ttl=5, wait=0)
                assert await lock.aacquire()
                await lock.arelease()
        finally:
            await aclient.aclose()

    asyncio.run(asyncio.wait_for(on_the_loop(), 20))


def test_a_worker_started_while_the_primary_of_slot_0_is_down_serves_the_other_queues(
    slot0_paused, settings
):
    topo, live_urls, paused = slot0_paused
    from ..support import task_defs

    queues = ["q0", "q1", "q2"]  # q0's slot is on the paused primary, q1 and q2 on live ones
    assert paused[0] <= key_slot("{q0}") <= paused[1]
    assert not any(paused[0] <= key_slot("{" + q + "}") <= paused[1] for q in queues[1:])
    prefix = f"outage{time.monotonic_ns()}"
    settings.REDCOORD = {
        "CLUSTER": {"NODES": live_urls},
        "KEY_PREFIX": prefix,
        "SOCKET_TIMEOUT": 2.0,
    }
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", *queues],
        }
    }
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.cluster_settings",
        "DEMO_DB_PATH": ":memory:",
        "REDCOORD_CLUSTER_NODES": ",".join(live_urls),
        "REDCOORD_KEY_PREFIX": prefix,
        "REDCOORD_TEST_QUEUES": ",".join(queues),
    }
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", *queues, "--shutdown-timeout", "3"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(3.0)
        assert worker.poll() is None, (
            f"run_worker exited {worker.returncode}: {worker.communicate()[1][-3000:]}"
        )
        results = [
            task_defs.add.using(queue_name=q).enqueue(i, 1) for i, q in enumerate(queues[1:])
        ]
        for i, result in enumerate(results):
            deadline = time.monotonic() + 30
            while True:
                result.refresh()
                if result.is_finished:
                    break
                assert worker.poll() is None, f"run_worker died: {worker.communicate()[1][-3000:]}"
                assert time.monotonic() < deadline, f"the task on {queues[i + 1]} did not run"
                time.sleep(0.1)
            assert result.return_value == i + 1
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        try:
            _, err = worker.communicate(timeout=60)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait(5)
    assert worker.returncode == 0, err[-3000:]


def test_the_deploy_check_names_full_coverage_on_each_primary(settings, cluster_topology):
    from django_redcoord.checks import check_cluster_coverage

    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:2]}, "KEY_PREFIX": "cov"}
    try:
        _set_coverage(cluster_topology, "yes")  # Redis's default
        found = check_cluster_coverage()
        assert [m.id for m in found] == ["redcoord.W015"] * 3  # one per primary
        assert all(
            "cluster-require-full-coverage yes" in m.msg and "a Cluster primary" in m.msg
            for m in found
        )
        assert "cluster-require-full-coverage no" in found[0].hint
        _set_coverage(cluster_topology, "no")
        assert check_cluster_coverage() == []
        settings.REDCOORD = {"URL": "redis://127.0.0.1:1/0"}
        assert check_cluster_coverage() == []  # one server: nothing to say
    finally:
        _set_coverage(cluster_topology, "yes")
