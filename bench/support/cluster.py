"""A Redis Cluster of throwaway redis-servers, joined by ``redis-cli --cluster create``.

Two ways to place its nodes: on free ports, each with a free bus port of its
own (``--cluster-port``, Redis 7+: the port need not leave port+10000 free),
or on consecutive fixed ports whose bus ports (+10000) are free too, so a
killed node restarts on its port with its ``nodes.conf`` and rejoins as the
same node (bench_cluster_failover.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import NamedTuple

import redis

from django_redcoord.core.keys import key_slot

from .servers import HOST, RedisServer, Topology, free_port, pick_ports, wait_stable

BAD_FLAGS = {"fail", "fail?", "handshake", "noaddr"}


class Seen(NamedTuple):
    """One line of CLUSTER NODES, as one node sees one node."""

    id: str
    port: int
    flags: frozenset[str]
    master: str  # the primary's id for a replica, else "-"
    slots: tuple[tuple[int, int], ...]


def parse_nodes(text: str) -> dict[str, Seen]:
    view = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        addr = parts[1].split("@", 1)[0]
        slots = []
        for token in parts[8:]:
            if token.startswith("["):  # a slot being migrated
                continue
            lo, _, hi = token.partition("-")
            slots.append((int(lo), int(hi or lo)))
        port = int(addr.rsplit(":", 1)[1]) if ":" in addr and addr.rsplit(":", 1)[1] else 0
        view[parts[0]] = Seen(
            parts[0], port, frozenset(parts[2].split(",")), parts[3], tuple(slots)
        )
    return view


def owner(view: dict[str, Seen], slot: int) -> Seen | None:
    """The primary serving ``slot`` in ``view``."""
    for seen in view.values():
        if "master" in seen.flags and any(lo <= slot <= hi for lo, hi in seen.slots):
            return seen
    return None


class ClusterNode(RedisServer):
    """A cluster-enabled redis-server: on a free port with a free bus port of its own (each
    start attempt picks both), or on a fixed ``port`` whose directory (and nodes.conf) outlives
    a kill, so that a restart rejoins the cluster as the same node."""

    def __init__(self, node_timeout: int, extra: Sequence[str] = (), port: int | None = None):
        super().__init__(
            extra=extra, port=port, keep_dir=port is not None, ready_timeout=10.0 if port else 5.0
        )
        self.node_timeout = node_timeout

    def args(self) -> list[str]:
        cluster = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(self.node_timeout),
        ]
        if self.fixed_port is None:
            bus = free_port()
            while bus == self.port:
                bus = free_port()
            cluster += ["--cluster-port", str(bus)]
        return [*super().args(), *cluster]

    def view(self) -> dict[str, Seen]:
        return parse_nodes(self.client.execute_command("CLUSTER", "NODES"))

    def myself(self, view: dict[str, Seen]) -> Seen:
        return next(seen for seen in view.values() if "myself" in seen.flags)


class Cluster(Topology):
    """``primaries`` primaries with ``replicas`` replicas each; stopped on leaving the ``with``
    block, which returns once the cluster is whole (see :meth:`problem`).

    Args:
        node_timeout: cluster-node-timeout, ms (Redis's default: 15000).
        extra: more arguments for every node.
        span: fixed consecutive ports from this range (restartable nodes); default free ones.
        slot: a slot every node must agree on the owner of before the cluster counts as whole.
        stable: seconds the cluster must stay whole before :meth:`wait_settled` returns.
        settle_timeout: seconds it may take to become whole.
    """

    def __init__(
        self,
        primaries: int = 3,
        replicas: int = 1,
        *,
        node_timeout: int = 1000,
        extra: Sequence[str] = (),
        span: tuple[int, int] | None = None,
        slot: int | None = None,
        stable: float = 0.5,
        settle_timeout: float = 60.0,
    ) -> None:
        self.primaries, self.replicas = primaries, replicas
        self.size = primaries * (1 + replicas)
        ports = pick_ports(self.size, span, bus=True) if span else [None] * self.size
        self._nodes = [ClusterNode(node_timeout, extra, port) for port in ports]
        self.nodes: dict[int, ClusterNode] = {}  # by port, once started
        self.owners: list[tuple[int, int, int]] = []  # (first slot, last slot, primary port)
        self.slot, self.stable, self.settle_timeout = slot, stable, settle_timeout

    @property
    def urls(self) -> list[str]:
        return [f"redis://{HOST}:{port}" for port in self.nodes]

    def start(self) -> Cluster:
        for node in self._nodes:
            node.start()
            self.nodes[node.port] = node
        create = subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"{HOST}:{p}" for p in self.nodes),
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if create.returncode != 0:
            raise RuntimeError(
                f"redis-cli --cluster create failed:\n{create.stdout}{create.stderr}"
            )
        self.wait_settled()
        slots = self._nodes[0].client.execute_command("CLUSTER", "SLOTS")
        self.owners = sorted((int(s[0]), int(s[1]), int(s[2][1])) for s in slots)
        return self

    def stop(self) -> None:
        for node in self._nodes:
            node.stop()

    def version(self) -> str:
        return self._nodes[0].version()

    @property
    def primary_ports(self) -> list[int]:
        """The primaries' ports, in slot order (as the cluster was created)."""
        return [port for _, _, port in self.owners]

    def owner_index(self, slot: int) -> int:
        """The index (0, 1, 2...) in :attr:`primary_ports` of the primary that served ``slot``
        when the cluster was created."""
        for i, (first, last, _) in enumerate(self.owners):
            if first <= slot <= last:
                return i
        raise ValueError(f"slot {slot} has no owner")

    def spread(self, stem: str, count: int) -> list[str]:
        """``count`` names whose hash slots fall on primaries 0, 1, 2, 0, ... in turn."""
        names: list[str] = []
        for k in range(100_000):
            name = f"{stem}-{k}"
            if self.owner_index(key_slot(name)) == len(names) % len(self.owners):
                names.append(name)
                if len(names) == count:
                    return names
        raise RuntimeError("could not spread names over the primaries")

    def problem(self) -> str:
        """What keeps the cluster from being whole ('' when nothing does): every node up,
        reporting ``cluster_state:ok``, knowing every node with no ``fail``, ``fail?``,
        ``handshake`` or ``noaddr`` flag, seeing the primaries with their replicas, its own
        replication link up, and the same owner of ``slot``."""
        owners = set()
        for port, node in self.nodes.items():
            if not node.alive:
                return f":{port} is down"
            try:
                info = node.client.execute_command("CLUSTER", "INFO")
                view = node.view()
                repl = node.client.info("replication")
            except redis.RedisError as exc:
                return f":{port} does not answer ({exc})"
            if "cluster_state:ok" not in info:
                return f":{port} reports a cluster_state other than ok"
            if len(view) != self.size:
                return f":{port} knows {len(view)} nodes"
            bad = [
                f":{s.port} {','.join(sorted(s.flags))}"
                for s in view.values()
                if s.flags & BAD_FLAGS
            ]
            if bad:
                return f":{port} sees {bad}"
            primaries = {s.id for s in view.values() if "master" in s.flags and s.slots}
            replicas = sorted(s.master for s in view.values() if "slave" in s.flags)
            if len(primaries) != self.primaries or replicas != sorted(
                list(primaries) * self.replicas
            ):
                return (
                    f":{port} does not see {self.primaries} primaries with {self.replicas} "
                    "replica(s) each"
                )
            if repl["role"] != "master" and repl.get("master_link_status") != "up":
                return f":{port} is a replica whose link is {repl.get('master_link_status')}"
            if self.slot is not None:
                serving = owner(view, self.slot)
                owners.add(serving.port if serving else None)
        if len(owners) > 1:
            return f"the nodes disagree on who serves slot {self.slot}: {sorted(map(str, owners))}"
        return ""

    def wait_settled(self) -> float:
        """Wait until the cluster has been whole for ``stable`` s; the seconds until it was."""
        return wait_stable(
            self.problem,
            stable=self.stable,
            timeout=self.settle_timeout,
            what="the cluster",
            describe=self.describe,
        )

    def describe(self) -> str:
        lines = []
        for port, node in self.nodes.items():
            try:
                nodes = node.client.execute_command("CLUSTER", "NODES") if node.alive else "(down)"
            except redis.RedisError as exc:
                nodes = f"({exc})"
            lines.append(f"--- :{port} CLUSTER NODES:\n{nodes}\n--- log:\n{node.log_tail(1500)}")
        return "\n".join(lines)
