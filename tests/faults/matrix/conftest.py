"""Fixtures of the fault matrix: three servers for the whole module, made whole again
(started, resumed, flushed) before each cell, so no cell pays for starting servers."""

from __future__ import annotations

import pytest

from ...support.redis_servers import RestartableServer
from .context import Ctx


@pytest.fixture(scope="module")
def matrix_servers():
    servers = [RestartableServer().start() for _ in range(3)]
    yield servers
    for server in servers:
        server.cleanup()


@pytest.fixture
def ctx(matrix_servers, request):
    for server in matrix_servers:
        server.ensure_running()
    made = Ctx(
        matrix_servers[0], matrix_servers[1:], prefix=f"m{abs(hash(request.node.nodeid)) % 10**6}"
    )
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def cluster_ctx(cluster_topology, request):
    from .cells_cluster import ClusterCtx

    cluster_topology.wait_ok()
    cluster_topology.flush()
    made = ClusterCtx(cluster_topology, prefix=f"c{abs(hash(request.node.nodeid)) % 10**6}")
    try:
        yield made
    finally:
        made.close()
