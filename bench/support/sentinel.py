"""Sentinel topologies: a master with replicas, watched by sentinels.

* ``SentinelSet``: a master, one replica and one sentinel that never fails
  over during a benchmark (bench_cluster.py's Sentinel rows);
* ``SentinelTopology``: a master, two replicas and three sentinels on fixed
  ports, tuned to fail over within seconds (bench_failover.py), with what it
  takes to tell when a failover has settled.
"""

from __future__ import annotations

import time
from typing import Any

import redis

from .servers import (
    HOST,
    SERVICE,
    RedisServer,
    SentinelServer,
    Topology,
    pick_ports,
    wait_stable,
)

DIRECT_SYNC = ["--repl-diskless-sync-delay", "0"]  # Redis 7 waits 5 s for more replicas by default


class SentinelSet(Topology):
    """A master, one replica (``--replicaof``) and one sentinel (quorum 1); ``with SentinelSet()
    as s``. The runs may start once the replica has synced and the sentinel sees the master up
    with its replica.

    Args:
        down_after: the sentinel's down-after-milliseconds (long: no failover meanwhile).
        ready: seconds for the replica to sync and the sentinel to see both.
    """

    def __init__(self, down_after: int = 60_000, ready: float = 30.0) -> None:
        self.master = RedisServer(extra=DIRECT_SYNC)
        self.replica: RedisServer | None = None
        self.sentinel: SentinelServer | None = None
        self.down_after, self.ready = down_after, ready

    def start(self) -> SentinelSet:
        self.master.start()
        self.replica = RedisServer(replicaof=self.master.port)
        self.replica.start()
        deadline = time.monotonic() + self.ready
        while not self._synced():  # before the sentinel: its first INFO then lists the replica
            if time.monotonic() > deadline:
                raise RuntimeError("the replica did not sync with the master")
            time.sleep(0.05)
        self.sentinel = SentinelServer(self.master.port, quorum=1, down_after=self.down_after)
        self.sentinel.start()
        while not self._monitored():
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the sentinel did not report {SERVICE} as a master with one replica"
                )
            time.sleep(0.05)
        return self

    def _synced(self) -> bool:
        assert self.replica is not None
        try:
            return self.replica.client.info("replication").get("master_link_status") == "up"
        except redis.RedisError:
            return False

    def _monitored(self) -> bool:
        """The sentinel names our master, sees it up as a master, and knows its replica."""
        assert self.sentinel is not None
        try:
            state = self.sentinel.client.sentinel_master(SERVICE)
        except redis.RedisError:
            return False
        return (
            int(state["port"]) == self.master.port
            and state["is_master"]
            and not state["is_sdown"]
            and not state["is_odown"]
            and int(state["num-slaves"]) >= 1
        )

    def stop(self) -> None:
        for server in (self.sentinel, self.replica, self.master):
            if server is not None:
                server.stop()


def pairs(reply: Any) -> dict[str, Any]:
    """A SENTINEL MASTER/REPLICAS entry as a dict (redis-py may or may not have made it one)."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2], strict=True))


class SentinelTopology(Topology):
    """A master, two replicas and three sentinels on six consecutive ports of ``span``;
    stopped on leaving the ``with`` block.

    Args:
        down_after: the sentinels' down-after-milliseconds (Sentinel's default: 30000).
        quorum: sentinels that must agree the master is down.
        failover_timeout: ms (Sentinel's default: 180000).
        stable: seconds the topology must stay settled before :meth:`wait_settled` returns.
        settle_timeout: seconds it may take to settle.
        span: the ports to pick from (fixed ports: a killed node restarts on its own).
    """

    def __init__(
        self,
        down_after: int,
        *,
        quorum: int = 2,
        failover_timeout: int = 3000,
        stable: float = 3.0,
        settle_timeout: float = 60.0,
        span: tuple[int, int] = (20000, 32000),
    ) -> None:
        ports = pick_ports(6, span)
        self.data = {
            port: RedisServer(extra=DIRECT_SYNC, port=port, ready_timeout=10.0)
            for port in ports[:3]
        }
        self.sentinels = [
            SentinelServer(
                ports[0],
                quorum=quorum,
                down_after=down_after,
                failover_timeout=failover_timeout,
                parallel_syncs=1,
                port=port,
                ready_timeout=10.0,
            )
            for port in ports[3:]
        ]
        self.master = ports[0]
        self.stable, self.settle_timeout = stable, settle_timeout

    def start(self) -> SentinelTopology:
        self.data[self.master].start()
        for port in self.data:
            if port != self.master:
                self.rejoin(port, self.master)
        for sentinel in self.sentinels:
            sentinel.start()
        self.wait_settled()
        return self

    def stop(self) -> None:
        for node in [*self.sentinels, *self.data.values()]:
            node.stop()

    def rejoin(self, port: int, master: int) -> None:
        """(Re)start the data node on ``port``, empty, as a replica of ``master``."""
        node = self.data[port]
        node.replicaof = master
        node.start()

    @property
    def sentinel_hosts(self) -> list[tuple[str, int]]:
        return [(HOST, s.port) for s in self.sentinels]

    def version(self) -> str:
        return self.data[self.master].version()

    def named_masters(self) -> list[int | None]:
        """The master each sentinel names now (None: no answer)."""
        out: list[int | None] = []
        for sentinel in self.sentinels:
            try:
                addr = sentinel.client.execute_command(
                    "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE
                )
                out.append(int(addr[1]) if addr else None)
            except redis.RedisError:
                out.append(None)
        return out

    def unsettled(self, master: int) -> str:
        """What is not yet as it should be with ``master`` as the master ('' when settled): it
        has 2 synced replicas online, and every sentinel names it, sees it as a master with no
        failover in progress, two healthy replicas (link ok) and two other sentinels."""
        try:
            info = self.data[master].client.info("replication")
            if info.get("role") != "master":
                return f"{master} is not a master"
            online = [
                info.get(f"slave{i}", {}).get("state")
                for i in range(int(info.get("connected_slaves", 0)))
            ]
            if online.count("online") != 2:
                return f"master {master} sees replicas {online}"
            for port, node in self.data.items():
                if port == master:
                    continue
                rinfo = node.client.info("replication")
                if (
                    rinfo.get("role") != "slave"
                    or int(rinfo.get("master_port", 0)) != master
                    or rinfo.get("master_link_status") != "up"
                    or int(rinfo.get("master_sync_in_progress", 1))
                ):
                    return f"replica {port} not synced with {master}"
            for sentinel in self.sentinels:
                s = sentinel.client
                addr = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
                if not addr or int(addr[1]) != master:
                    return f"sentinel {sentinel.port} names {addr}"
                state = pairs(s.execute_command("SENTINEL", "MASTER", SERVICE))
                if state["flags"] != "master" or int(state["num-other-sentinels"]) != 2:
                    return (
                        f"sentinel {sentinel.port}: master flags {state['flags']}, "
                        f"{state['num-other-sentinels']} other sentinels"
                    )
                replicas = [pairs(r) for r in s.execute_command("SENTINEL", "REPLICAS", SERVICE)]
                healthy = [
                    r
                    for r in replicas
                    if r["flags"] == "slave"
                    and r["master-link-status"] == "ok"
                    and int(r["master-port"]) == master
                ]
                if len(healthy) != 2:
                    seen = [(r["port"], r["flags"], r["master-link-status"]) for r in replicas]
                    return f"sentinel {sentinel.port} sees replicas {seen}"
        except (redis.RedisError, KeyError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return ""

    def describe(self) -> str:
        """Every node's role and the end of every sentinel's log (for error messages)."""
        lines = []
        for port, node in self.data.items():
            try:
                info = node.client.info("replication")
                lines.append(
                    f"{port}: role {info.get('role')}, master_port {info.get('master_port')}, link "
                    f"{info.get('master_link_status')}, replicas {info.get('connected_slaves')}"
                )
            except redis.RedisError as exc:
                lines.append(f"{port}: {exc}")
        for sentinel in self.sentinels:
            lines.append(f"--- sentinel {sentinel.port}:\n{sentinel.log_tail(3000)}")
        return "\n".join(lines)

    def wait_settled(self) -> float:
        """Wait until the master all sentinels name has stayed settled (see :meth:`unsettled`)
        for ``stable`` seconds; it becomes ``self.master``. Returns the seconds until it
        settled."""

        def check() -> str | None:
            named = self.named_masters()
            if named[0] is None or len(set(named)) != 1:
                return f"the sentinels name {named}"
            moved, self.master = named[0] != self.master, named[0]
            return self.unsettled(self.master) or (None if moved else "")

        return wait_stable(
            check,
            stable=self.stable,
            timeout=self.settle_timeout,
            what="the topology",
            describe=self.describe,
        )

    def failovers_ended(self) -> int:
        """Failovers completed so far (``+failover-end`` lines in the sentinels' logs)."""
        return sum(s.log_text().count("# +failover-end master ") for s in self.sentinels)
