"""The fault matrix: every primitive under every nemesis, each cell checking the
guarantee it states (see table.py, and README "What Redis must keep").

A cell returns violations; an empty list means the guarantee held. The smoke tier
(REDCOORD_FAULTS=smoke) runs one cell per primitive; the default tier all of them.
"""

from __future__ import annotations

import pytest

from ..harness import TIER, assert_none
from .table import CLUSTER_NEMESES, NEMESES, PRIMITIVES, load

CELLS = load()


def _cells(cluster: bool) -> list:
    chosen = [c for c in CELLS.values() if c.run is not None and c.cluster == cluster]
    if TIER == "smoke":
        chosen = [c for c in chosen if c.smoke]
    order = {p: i for i, p in enumerate(PRIMITIVES)}
    nemeses = {n: i for i, n in enumerate(NEMESES + CLUSTER_NEMESES)}
    return sorted(chosen, key=lambda c: (order[c.primitive], nemeses[c.nemesis]))


def test_the_table_has_a_cell_for_every_primitive_and_nemesis():
    missing = [(p, n) for p in PRIMITIVES for n in NEMESES + CLUSTER_NEMESES if (p, n) not in CELLS]
    assert not missing, f"cells missing from the fault matrix: {missing}"
    smoke = {c.primitive for c in CELLS.values() if c.smoke and c.run is not None}
    assert smoke == set(PRIMITIVES), f"primitives without a smoke cell: {set(PRIMITIVES) - smoke}"


@pytest.mark.parametrize("cell", _cells(cluster=False), ids=lambda c: c.id)
def test_one_server(cell, ctx):
    assert_none(
        cell.run(ctx), f"{cell.primitive} under {cell.nemesis} (guarantee: {cell.guarantee})"
    )


@pytest.mark.parametrize("cell", _cells(cluster=True), ids=lambda c: c.id)
def test_cluster(cell, cluster_ctx):
    assert_none(
        cell.run(cluster_ctx),
        f"{cell.primitive} under {cell.nemesis} (guarantee: {cell.guarantee})",
    )
