"""The fault matrix as a table: one cell per (primitive, nemesis), each naming the
guarantee it checks (or why the nemesis does not apply to the primitive).

A cell is registered next to its scenario with :func:`cell`::

    @cell("lock", "restart-without-data", "the holder's release raises LockLost; ...")
    def lock_after_data_loss(ctx): ...   # returns violations: [] means the guarantee held

``ctx`` is a :class:`~.context.Ctx` (one server that can be restarted, paused and
have its connections killed) or, for the Cluster columns, a :class:`~.context.ClusterCtx`.
README "What Redis must keep" states the same guarantees, cell by cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PRIMITIVES = (
    "lock",
    "semaphore",
    "rwlock",
    "latch",
    "barrier",
    "event",
    "signal",
    "topic",
    "ratelimiter",
    "queue",
    "group",
    "task",
    "workflow",
    "election",
    "redlock",
)

#: the nemeses on one server, then the Cluster's own
NEMESES = (
    "restart-with-data",  # kill -9, start again with the AOF (appendfsync always)
    "restart-without-data",  # kill -9, start again empty
    "connection-kill",  # CLIENT KILL of every connection while a party waits (each kind of wait)
    "paused-server",  # SIGSTOP the server past the socket timeout, then SIGCONT
    "holder-sigkill",  # the process holding (a lease, a message, a term) is SIGKILLed
    "holder-sigstop",  # ... is SIGSTOPped past its lease, then SIGCONT
    "pool-exhaustion",  # more parties than the client's pool has connections
    "hostile-names",  # every allowed character in the names
    # paused past the socket timeout and resumed long before a party's wait runs out: the wait
    # ends as a timeout, not an outage, and leaves nothing behind
    "pause-then-timeout",
    # maxmemory reached under noeviction: what keeps or gives up a hold runs, what takes
    # something new is refused whole (cells_full.py)
    "redis-full",
)
CLUSTER_NEMESES = (
    # the slot migrates (SETSLOT MIGRATING/IMPORTING, MIGRATE) while in use
    "cluster-slot-migration",
    "cluster-failover",  # CLUSTER FAILOVER on the replica of the primary serving the slot
)


@dataclass(frozen=True)
class Cell:
    primitive: str
    nemesis: str
    guarantee: str
    run: Callable[..., list[str]] | None  # None: not applicable (``guarantee`` says why)
    smoke: bool = False  # the one cell of its primitive the smoke tier runs

    @property
    def id(self) -> str:
        return f"{self.primitive}-{self.nemesis}"

    @property
    def cluster(self) -> bool:
        return self.nemesis in CLUSTER_NEMESES


CELLS: dict[tuple[str, str], Cell] = {}


def cell(
    primitive: str, nemesis: str, guarantee: str, *, smoke: bool = False
) -> Callable[[Any], Any]:
    assert primitive in PRIMITIVES and nemesis in NEMESES + CLUSTER_NEMESES, (primitive, nemesis)

    def register(func: Callable[..., list[str]]) -> Callable[..., list[str]]:
        assert (primitive, nemesis) not in CELLS, f"two cells for {primitive} x {nemesis}"
        CELLS[(primitive, nemesis)] = Cell(primitive, nemesis, guarantee, func, smoke)
        return func

    return register


def not_applicable(primitive: str, nemesis: str, why: str) -> None:
    assert (primitive, nemesis) not in CELLS
    CELLS[(primitive, nemesis)] = Cell(primitive, nemesis, f"not applicable: {why}", None)


def load() -> dict[tuple[str, str], Cell]:
    """Every cell (importing the modules that register them)."""
    from . import (  # noqa: F401
        cells_cluster,
        cells_full,
        cells_groups,
        cells_holds,
        cells_latches,
        cells_rest,
        cells_signals,
        cells_tasks,
        cells_timeouts,
        cells_workflows,
    )

    return CELLS


def render() -> str:
    """The matrix as a text table (``python -m tests.faults.matrix.table``)."""
    cells = load()
    lines = []
    for primitive in PRIMITIVES:
        lines.append(primitive)
        for nemesis in NEMESES + CLUSTER_NEMESES:
            found = cells.get((primitive, nemesis))
            lines.append(f"  {nemesis:24} {found.guarantee if found else 'MISSING'}")
    return "\n".join(lines)


if __name__ == "__main__":
    # run as a script this module is __main__, while the cells register into
    # tests.faults.matrix.table: render from that one
    from tests.faults.matrix.table import render as _render

    print(_render())
