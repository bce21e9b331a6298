"""run_leader under faults: one leader acts at a time, terms only grow (also
when Redis loses its data), each slot runs at most once while Redis keeps its
data, no leader exits 0 unasked, and SIGTERM stops each with 0.

Three ``manage.py run_leader`` processes run tests/faults/jobs.py's ``tick``
every 0.5 s; each run records its slot, term, process and oracle times.
"""

from __future__ import annotations

import signal
import time

import pytest

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.leader.election import DEFAULT_ELECTION
from django_redcoord.core.transport.commands import as_text

from .harness import (
    assert_none,
    leader_violations,
    nemesis,
    pause_redis,
    processes_alive_or_failed,
    restart_redis,
    tiered,
    wait_for,
)
from .oracle import RUNS_KEY, entries


def _leader_pid(bench):
    record = bench.client().hgetall(KeyBuilder(bench.prefix).leader(DEFAULT_ELECTION).record)
    identity = as_text(record.get(b"identity", b"")) if record else ""
    return int(identity.rsplit(":", 1)[1]) if ":" in identity else None


def kill_the_leader(bench):
    pid = _leader_pid(bench)
    victim = next(s for s in bench.live("run_leader") if s.pid == pid)
    victim.killed = True
    victim.signal(signal.SIGKILL)
    victim.proc.wait(5)


kill_the_leader = nemesis("sigkill-leader")(kill_the_leader)


@nemesis("sigstop-leader-past-lease")
def stop_the_leader(bench):
    pid = _leader_pid(bench)
    victim = next(s for s in bench.live("run_leader") if s.pid == pid)
    victim.signal(signal.SIGSTOP)
    time.sleep(3.0)  # lease 1.5 s: a standby takes over meanwhile
    victim.signal(signal.SIGCONT)


@pytest.mark.parametrize(
    "nemesis_, slots_once",
    tiered(
        [
            (kill_the_leader, True),
            (stop_the_leader, True),
            (pause_redis(2.5), True),
            (restart_redis(keep_data=False), False),
        ],
        smoke=[0, 3],
    ),
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_one_leader_acts_at_a_time_whatever_happens(bench, nemesis_, slots_once):
    for _ in range(3):
        bench.run_leader()
    wait_for(lambda: len(entries(bench.oracle, RUNS_KEY)) >= 3, 20, "the first runs of the job")
    before = entries(bench.oracle, RUNS_KEY)[-1]["term"]
    nemesis_(bench)
    wait_for(
        lambda: any(r["term"] > before for r in entries(bench.oracle, RUNS_KEY)),
        20,
        "a run under a newer term after the fault",
    )
    count = len(entries(bench.oracle, RUNS_KEY))
    wait_for(lambda: len(entries(bench.oracle, RUNS_KEY)) >= count + 3, 10, "runs to go on")
    runs = entries(bench.oracle, RUNS_KEY)
    assert_none(leader_violations(runs, slots_once=slots_once), f"leaders under {nemesis_.name}")
    assert_none(processes_alive_or_failed(bench), f"processes under {nemesis_.name}")
    assert_none(bench.stop_all(), "SIGTERM")
