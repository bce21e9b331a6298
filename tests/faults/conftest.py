"""Fixtures of the fault suite: a bench (system under test + oracle) per test."""

from __future__ import annotations

import pytest

from ..support.redis_servers import RedisServer
from .harness import TIER, Bench, PersistentRedis


@pytest.fixture
def bench(tmp_path, request):
    persistent = request.node.get_closest_marker("persistent") is not None
    sut = (PersistentRedis() if persistent else RedisServer()).start()
    oracle_server = RedisServer().start()
    made = Bench(sut, oracle_server, tmp_path)
    try:
        yield made
    finally:
        made.cleanup()
        sut.cleanup()
        oracle_server.cleanup()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "persistent: the system under test keeps its data across restarts (AOF)"
    )


def pytest_collection_modifyitems(config, items):
    """The smoke tier leaves out the checkers' negative controls (they test the
    checkers, not the Redis version): deselected, and counted as such."""
    if TIER != "smoke":
        return
    left_out = [item for item in items if "test_negative_controls" in item.nodeid]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]
