"""Every benchmark keeps running (issue 28): each ``bench/bench_*.py`` in its quick mode.

One test per script, collected by glob, so a new script is covered without
touching this file. Each runs ``python bench/<script> --quick`` (plus, for a
few, smaller sizes: ``SMALLER`` below) as a subprocess and asserts that it
exits 0, printed a table (a markdown header row and its ``|---|`` rule), and
that no row reports an implementation without any result (``ERROR``: the
scripts catch an implementation's failure and print it in its row, exit
status 0: exactly how a benchmark rots unnoticed). No timing is asserted: the
numbers of a quick run on a shared machine mean nothing; speed lives in the
tables.

Every script starts its own throwaway redis-server processes on free ports
(``bench/support/servers.py``) and never touches the machine's Redis at
127.0.0.1:6379. ``bench/soak.py --quick`` runs in tests/faults/test_soak_quick.py.

``make bench-smoke`` runs this file alone; ``make test`` runs it with the rest.
One test per script and no ``xdist_group``: ``--dist loadgroup`` hands each to
whichever worker is free, the slowest first.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The slowest first (measured on 2 busy cores), so that xdist's workers finish together.
SLOWEST = [
    "bench_dashboard.py",
    "bench_locks.py",
    "bench_redlock.py",
    "bench_semaphores.py",
    "bench_async_views.py",
    "bench_queues.py",
    "bench_leader.py",
    "bench_failover.py",
]
SCRIPTS = sorted(
    (path.name for path in (ROOT / "bench").glob("bench_*.py")),
    key=lambda name: (SLOWEST.index(name) if name in SLOWEST else len(SLOWEST), name),
)

#: Arguments after ``--quick`` that shrink a run further for the smoke test (same code paths,
#: every row and peer, fewer and shorter runs). Not listed: ``--quick`` alone is small enough.
SMALLER: dict[str, list[str]] = {
    "bench_async_views.py": ["--clients", "10"],
    "bench_cluster.py": ["--seconds", "0.5", "--messages", "1000"],
    "bench_locks.py": ["--seconds", "0.5", "--locks", "200"],
    "bench_queues.py": ["--jobs", "100", "--enqueue-jobs", "100"],
    "bench_ratelimit.py": ["--rounds", "2", "--hammer-seconds", "0.5"],
    "bench_redlock.py": ["--seconds", "0.5"],
    "bench_semaphores.py": ["--seconds", "1"],
    "bench_signals.py": ["--rounds", "1", "--broadcasts", "20"],
}

#: Programs a script cannot run without (not Python peers: those are rows saying "not installed").
PROGRAMS: dict[str, list[str]] = {
    "bench_async_views.py": ["wrk"],  # the load generator (apt-get install wrk)
    "bench_cluster.py": ["redis-cli"],  # redis-cli --cluster create
    "bench_cluster_failover.py": ["redis-cli"],
}

TIMEOUT = 240  # seconds per script; a quick run takes 1-60 s alone, more on a loaded machine

TABLE = re.compile(r"^\|.*\|[ \t]*\n\|[-:| ]*-[-:| ]*\|[ \t]*$", re.MULTILINE)


def _run(args: list[str], timeout: float) -> tuple[int, str, str]:
    """Run a script in a session of its own; on timeout SIGTERM it (it stops its servers and
    children: run_main), then SIGKILL what is left of the session."""
    # as from a shell: pytest-django's DJANGO_SETTINGS_MODULE would make our objects in the scripts
    # load the test project's settings (not importable from bench/, and not what they measure)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        pytest.fail(
            f"no exit within {timeout} s\n--- stdout\n{out[-4000:]}\n--- stderr\n{err[-4000:]}"
        )
    return proc.returncode, out, err


def _failed_rows(text: str) -> list[str]:
    """Table rows of an implementation that produced no result at all (a cell reads ``ERROR``:
    the scripts catch its failure and report it there, exit status 0), and a ``Failures:``
    section (bench_queues.py). A peer that is not installed is a row saying so, not a failure;
    an error in one run of several (one contender of a contended run timing out on a loaded
    machine) leaves the row its results and is no failure either."""
    found = [line for line in text.splitlines() if line.startswith("Failures:")]
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and "ERROR" in cells and "not installed" not in line:
            found.append(line.strip())
    return found


def test_every_script_is_collected():
    """The glob finds the scripts (a moved bench/ would otherwise leave this file empty, green)."""
    assert "bench_locks.py" in SCRIPTS and len(SCRIPTS) >= 10
    assert set(SMALLER) | set(PROGRAMS) <= set(SCRIPTS)


def test_a_failed_row_is_found():
    """Negative control of the failure check."""
    text = (
        "| impl | pairs/s | error |\n|---|---|---|\n| ours | 10 | p1: Timeout |\n| peer | ERROR | "
        "Boom: no |\n| other | ERROR | ModuleNotFoundError: not installed (other) |\n"
    )
    assert _failed_rows(text) == ["| peer | ERROR | Boom: no |"]
    assert _failed_rows("Failures:\n* round 1: ours drained nothing\n") == ["Failures:"]
    assert TABLE.search(text) and not TABLE.search("| only a header |\nno rule\n")


@pytest.mark.timeout(TIMEOUT + 60)
@pytest.mark.parametrize("script", SCRIPTS)
def test_bench_script_runs_in_quick_mode(script):
    missing = [program for program in PROGRAMS.get(script, []) if shutil.which(program) is None]
    if missing:
        pytest.skip(f"{script} needs {', '.join(missing)} on PATH")
    started = time.monotonic()
    code, out, err = _run(
        [sys.executable, f"bench/{script}", "--quick", *SMALLER.get(script, [])], TIMEOUT
    )
    took = time.monotonic() - started
    report = f"{script} ({took:.0f} s)\n--- stdout\n{out[-6000:]}\n--- stderr\n{err[-6000:]}"
    assert code == 0, f"exit status {code}: {report}"
    assert TABLE.search(out), f"no table printed: {report}"
    assert not _failed_rows(out), f"failures reported: {_failed_rows(out)}\n{report}"
