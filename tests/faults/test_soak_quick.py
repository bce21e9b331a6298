"""The soak (bench/soak.py, `make soak`) in its quick mode, so its harness cannot rot, and
negative controls for the soak's own checkers (bench/_soak_checks.py).

The quick mode runs every phase of the published soak at a small scale (about
2,000 tasks through `manage.py run_worker`, 3 worker SIGKILLs, a Redis SIGKILL
and restart from its AOF, a leader SIGKILL, a Sentinel failover, lock
contenders and a rate-limited client) and exits non-zero when an assertion
fails; the report it writes lists each one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench import _soak_checks as checks

from .harness import ROOT


@pytest.mark.timeout(600)
def test_the_quick_soak_holds_every_assertion(tmp_path):
    report = tmp_path / "chaos-report.md"
    done = subprocess.run(
        [sys.executable, "bench/soak.py", "--quick", "--report", str(report)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=560,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-4000:]
    text = report.read_text()
    assert "**Result: every assertion holds.**" in text
    for phase in ("calm", "chaos", "sentinel"):
        assert f"| {phase} | tasks lost (acknowledged enqueue, never ran) | 0 | 0 | yes |" in text
    assert "| worker SIGKILLs (workers restarted) | 18 | 3 |" in text
    assert "| Redis SIGKILLs (restarted from AOF) | – | 1 |" in text


# -- negative controls: each checker catches the fault it exists for ---------------------------


def _run(rid, pid, started, enqueued=0.0):
    return checks.Run(rid, pid, started, enqueued)


def test_a_duplicate_with_no_kill_in_between_is_reported():
    runs = {"a": [_run("a", 10, 1.0), _run("a", 11, 2.0)]}
    counts, found = checks.attribute_duplicates(runs, [], per_kill=32)
    assert counts == {} and len(found) == 1 and "no worker kill or server fault" in found[0]


def test_a_duplicate_is_attributed_to_the_kill_of_the_worker_that_ran_it_first():
    runs = {
        "a": [_run("a", 10, 1.0), _run("a", 11, 2.0)],
        "b": [_run("b", 11, 1.0), _run("b", 12, 3.0)],
    }
    kill = checks.Fault("SIGKILL worker pid 10", 1.5, 10)
    counts, found = checks.attribute_duplicates(runs, [kill], per_kill=32)
    assert counts == {"SIGKILL worker pid 10": 1}
    assert len(found) == 1 and "task b" in found[0]  # pid 11 was never killed
    late = checks.Fault("SIGKILL worker pid 10", 0.5, 10)  # killed before it ran "a": no excuse
    assert checks.attribute_duplicates({"a": runs["a"]}, [late], per_kill=32)[1]


def test_a_kill_explaining_more_duplicates_than_its_prefetch_is_reported():
    runs = {str(i): [_run(str(i), 10, 1.0), _run(str(i), 11, 2.0)] for i in range(3)}
    _, found = checks.attribute_duplicates(
        runs, [checks.Fault("SIGKILL worker pid 10", 1.5, 10)], per_kill=2
    )
    assert found == ["SIGKILL worker pid 10 explains 3 extra runs, more than its prefetch 2"]


def test_a_server_fault_explains_a_duplicate_across_it():
    runs = {"a": [_run("a", 10, 1.0), _run("a", 11, 2.0)]}
    counts, found = checks.attribute_duplicates(
        runs, [checks.Fault("SIGKILL redis #1", 1.5)], per_kill=32
    )
    assert counts == {"SIGKILL redis #1": 1} and found == []


def test_a_limiter_admitting_too_many_in_a_window_is_caught():
    # 20/s, burst 5: at most 5 + 20 in any second. A naive limiter lets 30 through in 0.5 s.
    naive = [(i * 0.0166, i * 0.0166 + 0.001) for i in range(30)]
    seen, found = checks.over_admitted(naive, limit=20, period=1.0, burst=5, windows=(1.0,))
    assert seen[1.0] == (30, 25) and found
    paced = [
        (i * 0.05, i * 0.05 + 0.001) for i in range(100)
    ]  # exactly the rate: never above the bound
    assert (
        checks.over_admitted(paced, limit=20, period=1.0, burst=5, windows=(0.1, 1.0, 10.0))[1]
        == []
    )


def test_the_gcra_bound_is_burst_plus_whole_emission_intervals():
    assert checks.gcra_bound(1.0, 20, 1.0, 5) == 25
    assert checks.gcra_bound(0.1, 20, 1.0, 5) == 7
    assert checks.gcra_bound(0.0, 20, 1.0, 5) == 5


def test_a_reclaim_past_its_bound_or_never_is_reported():
    reclaims = [
        {"pid": 1, "seconds": 3.0, "bound": 12.0},
        {"pid": 2, "seconds": 12.5, "bound": 12.0},
        {"pid": 3, "seconds": None, "bound": 12.0},
    ]
    found = checks.slow_reclaims(reclaims)
    assert len(found) == 2 and "pid 2" in found[0] and "pid 3" in found[1]


def test_a_kept_holder_whose_fenced_write_was_refused_is_reported():
    sections = [
        {"pid": 1, "token": 5, "lost": False, "accepted_in": True, "accepted_out": False},
        {"pid": 2, "token": 4, "lost": False, "accepted_in": False, "accepted_out": False},
        {"pid": 3, "token": 3, "lost": True, "accepted_in": False, "accepted_out": False},
    ]
    assert checks.refused_fenced_writes(sections) == [
        "pid 2 token 4 kept the lock but its fenced write was refused"
    ]


def test_percentiles_take_the_nearest_rank():
    values = list(range(1, 101))
    assert checks.percentile(values, 50) == 50 and checks.percentile(values, 99) == 99
    assert checks.percentile(values, 100) == 100 and checks.percentile([], 50) != checks.percentile(
        [], 50
    )
