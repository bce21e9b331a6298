"""The long-running commands as deployed: ``manage.py run_worker`` on several queues and
``manage.py run_leader``, real processes, IDLE and BUSY, on one server, through
Sentinel and on a Cluster — not only ``--burst``.

Each topology's scenario: both commands start and idle for longer than their idle
waits (the worker's 1 s wake-list wait, the leader's retry period); tasks flow to
both queues (busy); a nemesis strikes while they idle again; then a task enqueued
after the fault on each queue must run, the periodic job must go on under a term
at least as high as before (the leader keeps or regains its term), neither process
may have exited, and SIGTERM stops each with exit 0.

The two queues ("default" and a hostile name) sit in different hash slots on a
Cluster: the worker's idle wait must span slots (issue 31, defect 25).
"""

from __future__ import annotations

import json
import os
import signal
import time
from types import SimpleNamespace

import pytest
import redis

from ...support.redis_servers import RestartableServer, fail_over_slot, kill_connections
from ..harness import TIER, Bench, assert_none, processes_alive_or_failed, wait_for
from ..names import HOSTILE_QUEUE
from ..oracle import RUNS_KEY, entries, now_us

QUEUES = ("default", HOSTILE_QUEUE)
#: idle longer than the worker's idle wait (1 s) and the leader's retry period (0.25 s)
IDLE = 2.5


def _pause_port(port: int, seconds: float) -> None:
    pid = int(redis.Redis(port=port, socket_timeout=5).info("server")["process_id"])
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)


def _ran(bench: Bench, sent_after: int) -> list[str]:
    """Tasks sent after ``sent_after`` (oracle µs) that have not run (yet)."""
    runs = {k.decode(): int(v) for k, v in bench.oracle.hgetall("runs").items()}
    return [
        e["id"]
        for e in entries(bench.oracle, "sent")
        if e["at"] >= sent_after and runs.get(e["id"], 0) < 1
    ]


def _produce(bench: Bench, count: int) -> None:
    producer = bench.spawn("producer", ["-m", "tests.faults.matrix.producer", str(count), *QUEUES])
    producer.terminated = True
    assert producer.proc.wait(60) == 0, producer.output()


def _scenario(bench: Bench, nemeses: list) -> None:
    if TIER == "smoke":
        nemeses = nemeses[:1]
    worker = bench.run_worker(*QUEUES)
    leader = bench.run_leader()
    wait_for(lambda: len(entries(bench.oracle, RUNS_KEY)) >= 2, 30, "the leader's first job runs")
    time.sleep(IDLE)  # idle: the worker waits on its wake lists, the leader renews
    assert_none(processes_alive_or_failed(bench), "processes after idling")
    assert worker.proc.poll() is None and leader.proc.poll() is None, (
        worker.output(),
        leader.output(),
    )
    started = now_us(bench.oracle)
    _produce(bench, 10)  # busy
    wait_for(lambda: not _ran(bench, started), 30, "the tasks sent while busy to run")
    for nemesis in nemeses:
        time.sleep(1.2)  # idle again
        before = entries(bench.oracle, RUNS_KEY)[-1]["term"]
        nemesis()
        healed = now_us(bench.oracle)
        time.sleep(1.2)  # past the fault, idle
        _produce(bench, 2)
        wait_for(
            lambda h=healed: not _ran(bench, h),
            30,
            f"a task enqueued after {nemesis.__name__} to run",
        )
        wait_for(
            lambda h=healed: any(r["start"] > h for r in entries(bench.oracle, RUNS_KEY)),
            20,
            f"the periodic job to run again after {nemesis.__name__}",
        )
        after = [r["term"] for r in entries(bench.oracle, RUNS_KEY) if r["start"] > healed]
        assert min(after) >= before, (
            f"the term went down after {nemesis.__name__}: {before} -> {after}"
        )
        assert_none(processes_alive_or_failed(bench), f"processes after {nemesis.__name__}")
        assert worker.proc.poll() is None, (
            f"run_worker exited after {nemesis.__name__}:\n{worker.output()}"
        )
        assert leader.proc.poll() is None, (
            f"run_leader exited after {nemesis.__name__}:\n{leader.output()}"
        )
    assert_none(bench.stop_all(), "SIGTERM")


def _bench(tmp_path, sut, oracle_server, topology: dict | None = None) -> Bench:
    bench = Bench(sut, oracle_server, tmp_path)
    env = bench.env

    def with_topology(**extra: str) -> dict[str, str]:
        return env(
            DJANGO_SETTINGS_MODULE="tests.faults.matrix.settings",
            FAULTS_TOPOLOGY=json.dumps(topology or {}),
            **extra,
        )

    bench.env = with_topology  # type: ignore[method-assign]
    return bench


@pytest.fixture
def oracle_server(matrix_servers):
    server = matrix_servers[
        2
    ].ensure_running()  # the third matrix server: no nemesis touches it here
    yield server


def test_one_server(tmp_path, matrix_servers, oracle_server):
    sut: RestartableServer = matrix_servers[0].ensure_running()
    bench = _bench(tmp_path, sut, oracle_server)

    def pause():
        _pause_port(sut.port, 2.0)

    def restart_with_data():
        sut.restart_keeping_data(down=0.5)

    def connection_kill():
        kill_connections(sut.port)

    try:
        _scenario(bench, [pause, restart_with_data, connection_kill])
    finally:
        bench.cleanup()


def test_sentinel(tmp_path, sentinel_topology, oracle_server):
    port = int(sentinel_topology.master_url.rsplit(":", 1)[1].split("/")[0])
    client = redis.Redis(port=port)
    client.flushall()
    client.close()
    sentinel = {k: v for k, v in sentinel_topology.config["SENTINEL"].items() if v is not None}
    sentinel["HOSTS"] = [list(h) for h in sentinel["HOSTS"]]
    bench = _bench(
        tmp_path,
        SimpleNamespace(url=sentinel_topology.master_url, port=port),
        oracle_server,
        {"SENTINEL": sentinel},
    )

    def pause():
        _pause_port(port, 2.0)

    def connection_kill():
        kill_connections(port)

    try:
        _scenario(bench, [pause, connection_kill])
    finally:
        bench.cleanup()


def test_cluster(tmp_path, cluster_topology, oracle_server):
    from django_redcoord.core.keys import KeyBuilder, key_slot

    cluster_topology.wait_ok()
    cluster_topology.flush()
    first = cluster_topology.nodes[0]
    bench = _bench(
        tmp_path,
        SimpleNamespace(url=first.url, port=first.port),
        oracle_server,
        {"CLUSTER": {"NODES": cluster_topology.urls[:2]}},
    )
    assert len({key_slot(KeyBuilder("faults").queue(q).wake) for q in QUEUES}) == 2, (
        "the queues share a slot"
    )

    def connection_kill():
        for node in cluster_topology.nodes:
            kill_connections(node.port)

    def failover():
        fail_over_slot(cluster_topology, key_slot(KeyBuilder("faults").queue(QUEUES[0]).wake))

    try:
        _scenario(bench, [connection_kill, failover])
    finally:
        bench.cleanup()
