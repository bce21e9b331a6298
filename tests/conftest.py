"""Fixtures: real redis-server processes, isolated per test.

* ``redis_server``: one server for the whole session; ``redis_url`` and
  ``redis_client`` flush it before each test (a throwaway server: FLUSHALL
  is fine here and nowhere else).
* ``redis_servers(n)``: n fresh servers for this test only, for topologies
  and for tests that kill, pause or restart a server.
* ``redis_cell_url``: a server with the redis-cell module loaded (its
  ``CL.THROTTLE``), built by ``make redis-cell``; skipped without it unless
  ``REDCOORD_REQUIRE_REDIS_CELL=1`` (CI), where a missing module fails.
* Django's ``REDCOORD`` setting points at the session server in every test.
"""

from __future__ import annotations

import inspect
import os
import re
import time
import types
from pathlib import Path

import pytest

from django_redcoord.core.transport.clients import client_from_url

from .support import key_slots
from .support.redis_servers import REDIS_CELL, STARTED_PIDS, RedisServer, pid_alive


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def redis_url(redis_server):
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()  # a previous test killed it
    client = client_from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture
def redis_client(redis_url):
    client = client_from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def redis_cell_server():
    if not REDIS_CELL.is_file():
        why = (
            f"no redis-cell module at {REDIS_CELL} (`make redis-cell` builds it; see "
            "third_party/README.md)"
        )
        if os.environ.get("REDCOORD_REQUIRE_REDIS_CELL") == "1":
            pytest.fail(why)
        pytest.skip(why)
    server = RedisServer(extra=("--loadmodule", str(REDIS_CELL.resolve()))).start()
    yield server
    server.cleanup()


@pytest.fixture
def redis_cell_url(redis_cell_server):
    if redis_cell_server.proc is None or redis_cell_server.proc.poll() is not None:
        redis_cell_server.start()
    client = client_from_url(redis_cell_server.url)
    client.flushall()
    client.close()
    return redis_cell_server.url


@pytest.fixture(scope="session")
def sentinel_topology():
    """A master, two replicas and a sentinel for the whole session (the contract suites' Sentinel
    run).

    ``master_url`` is where the data is; ``config`` is a validated REDCOORD with
    ``SENTINEL`` naming the sentinel, for ``sentinel_client``. Nothing here
    fails the master over: the failover tests build topologies of their own.
    """
    from types import SimpleNamespace

    from django_redcoord.core.options import validate

    from .support.redis_servers import SentinelServer

    master = RedisServer(extra=("--repl-diskless-sync-delay", "0")).start()
    replicas = [
        RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start() for _ in range(2)
    ]
    deadline = time.monotonic() + 15
    for replica in replicas:
        check = client_from_url(replica.url)
        while check.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the session's replicas did not sync"
            time.sleep(0.05)
        check.close()
    sentinel = SentinelServer(
        master.port, down_after_ms=60_000
    ).start()  # no failover on a slow moment
    config = validate(
        {
            "SENTINEL": {"HOSTS": [("127.0.0.1", sentinel.port)], "SERVICE": "mymaster"},
            "SOCKET_TIMEOUT": 5.0,
            "CONNECT_TIMEOUT": 2.0,
        }
    )
    yield SimpleNamespace(master_url=master.url, config=config)
    for server in (sentinel, *replicas, master):
        server.cleanup()


@pytest.fixture(scope="session")
def cluster_topology():
    """A Redis Cluster of 3 primaries with a replica each, for the whole session
    (the contract suites' Cluster runs; each flushes it first). Its ``config``
    is a validated REDCOORD whose ``CLUSTER`` names two of the nodes."""
    import shutil
    import subprocess

    from .support.redis_servers import ClusterTopology, server_binary

    version = subprocess.run([server_binary(), "--version"], capture_output=True, text=True).stdout
    major = int(version.split("v=", 1)[1].split(".", 1)[0]) if "v=" in version else 0
    if major < 7 or shutil.which("redis-cli") is None:
        pytest.fail(
            "the Cluster tests need redis-server 7.0+ and redis-cli on PATH (found: "
            f"{version.strip() or 'none'}; redis-cli "
            f"{'found' if shutil.which('redis-cli') else 'missing'}): apt-get install redis-server"
        )
    topology = ClusterTopology().start()
    yield topology
    topology.cleanup()


@pytest.fixture
def redis_servers():
    started: list[RedisServer] = []

    def start(n: int = 1) -> list[RedisServer]:
        servers = [RedisServer().start() for _ in range(n)]
        started.extend(servers)
        return servers

    yield start
    for server in started:
        server.cleanup()


@pytest.fixture(autouse=True)
def _redcoord_settings(settings, redis_url):
    settings.REDCOORD = {"URL": redis_url, "KEY_PREFIX": "test"}
    settings.CACHES = {
        "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url},
    }


def pytest_configure(config):
    key_slots.install()


TESTS = Path(__file__).parent


def _code_of(item) -> list[types.CodeType]:
    """The code of the test and of every fixture it uses, nested functions included."""
    funcs = [getattr(item, "function", None)]
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    if fixtureinfo is not None:
        funcs += [d.func for defs in fixtureinfo.name2fixturedefs.values() for d in defs]
    found, stack = [], [inspect.unwrap(f).__code__ for f in funcs if hasattr(f, "__code__")]
    while stack:
        code = stack.pop()
        found.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _words(text: str) -> set[str]:
    return set(re.split(r"[-_.\[\]]", text))


def _markers_of(item) -> set[str]:
    """The markers a test earns by what it needs (pyproject.toml says what each means).

    * ``cluster``/``sentinel``: a parametrisation naming the topology (the ``*-cluster`` and
      ``*-sentinel`` kinds of tests/support/drivers.py, a ``bench_cluster*.py`` script), or the
      test or
      a fixture it uses builds one (``ClusterTopology``, ``SentinelServer``: the session's
      ``cluster_topology`` and ``sentinel_topology`` do);
    * ``tls``: the test or a fixture starts a server on a ``--tls-port``;
    * ``async_api``: an ``async`` parametrisation, or ``async``/``asyncio`` in the test's or
      its module's name;
    * ``browser``: the ``browser`` fixture; ``deploy``, ``faults``: their folders;
    * ``negative_control``: named so (``test_negative_control_*``, ``test_negative_controls.py``).
    """
    callspec = getattr(item, "callspec", None)
    param_words = _words(callspec.id) if callspec is not None else set()
    name_words = _words(item.path.stem) | _words(getattr(item, "originalname", item.name))
    code = _code_of(item)
    names = {name for c in code for name in c.co_names}
    strings = {k for c in code for k in c.co_consts if isinstance(k, str)}
    marks = set()
    if "cluster" in param_words or "ClusterTopology" in names:
        marks.add("cluster")
    if "sentinel" in param_words or "SentinelServer" in names:
        marks.add("sentinel")
    if "--tls-port" in strings:
        marks.add("tls")
    if {"async", "asyncio"} & (param_words | name_words):
        marks.add("async_api")
    if "browser" in getattr(item, "fixturenames", ()):
        marks.add("browser")
    if TESTS / "deploy" in item.path.parents:
        marks.add("deploy")
    if TESTS / "faults" in item.path.parents:
        marks.add("faults")
    if item.path.stem == "test_negative_controls" or item.name.startswith("test_negative_control"):
        marks.add("negative_control")
    return marks


@pytest.hookimpl(tryfirst=True)  # before -m deselects by them
def pytest_collection_modifyitems(config, items):
    """Every marker is given here, from what the test needs; the Makefile's runs pick by them."""
    for item in items:
        for name in sorted(_markers_of(item)):
            item.add_marker(name)


def _end_of_run_problems() -> list[str]:
    """What the whole run must not leave: servers still running, scripts touching several slots."""
    found = []
    left = [pid for pid in STARTED_PIDS if pid_alive(pid)]
    if left:
        found.append(f"redis-server processes left running after the tests: {left}")
    found.extend(key_slots.problems())
    return found


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """Under pytest-xdist the controller gathers each worker's record (see
    ``pytest_sessionfinish``):
    the checks hold over the union of the workers' calls, as in one process."""
    record = getattr(node, "workeroutput", {}).get("redcoord_end_of_run")
    if record:
        STARTED_PIDS.extend(record["pids"])
        key_slots.merge(record["slots"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workeroutput"):
        return
    for problem in _end_of_run_problems():
        terminalreporter.write_line(f"FAILED (end of run): {problem}", red=True)


def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the record to the controller
        workeroutput["redcoord_end_of_run"] = {
            "pids": [p for p in STARTED_PIDS if pid_alive(p)],
            "slots": key_slots.export(),
        }
        return
    # after the summary above; the run fails (exit status 1) without hiding the tests' own report
    if os.environ.get("REDCOORD_SLOTS_REPORT"):
        with open(os.environ["REDCOORD_SLOTS_REPORT"], "w") as fh:
            for name in sorted(key_slots.CALLS):
                fh.write(
                    f"{name} {key_slots.CALLS[name]} {' '.join(key_slots.SEEN.get(name, []))}\n"
                )
    if _end_of_run_problems() and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def staff(django_user_model):
    """``staff("view_dashboard", ...)``: a new staff user with those permissions of
    django_redcoord."""
    from django.contrib.auth.models import Permission

    def make(*perms):
        user = django_user_model.objects.create_user(
            f"staff{len(perms)}{time.monotonic_ns()}", password="pw", is_staff=True
        )
        for codename in perms:
            user.user_permissions.add(Permission.objects.get(codename=codename))
        return user

    return make
