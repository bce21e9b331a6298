"""The test harness itself: real servers, results from real processes, nothing left behind."""

import os
import subprocess
import sys
from pathlib import Path

from ..support.multiproc import run_in_processes
from ..support.redis_servers import pid_alive

ROOT = Path(__file__).resolve().parents[2]

INNER = """
from tests.support.multiproc import run_in_processes

def _pid(index):
    import os
    return os.getpid()

def test_one(redis_client):
    assert redis_client.ping()

def test_many(redis_servers):
    servers = redis_servers(3)
    assert len({s.port for s in servers}) == 3
    servers[0].pause()   # even a paused server must be stopped at the end

def test_procs():
    assert len(set(run_in_processes(_pid, 3))) == 3
"""


def _child_pid(index):
    return index, os.getpid()


def test_run_in_processes_uses_distinct_os_processes():
    results = run_in_processes(_child_pid, 4)
    assert [i for i, _ in results] == [0, 1, 2, 3]
    assert len({pid for _, pid in results}) == 4 and os.getpid() not in {p for _, p in results}


def test_a_pytest_session_leaves_no_redis_server_behind(tmp_path):
    test_file = ROOT / "tests" / f"test_zz_inner_{os.getpid()}.py"
    pidfile = tmp_path / "pids"
    test_file.write_text(INNER)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
            cwd=ROOT,
            env={**os.environ, "REDCOORD_TEST_PIDFILE": str(pidfile)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        test_file.unlink()
    assert "3 passed" in out.stdout, out.stdout + out.stderr
    pids = [int(line) for line in pidfile.read_text().split()]
    assert len(pids) == 4  # the session server and three per-test servers
    assert [pid for pid in pids if pid_alive(pid)] == []
