"""Each checker of the fault suite catches a deliberately unsafe subject.

Without these, a checker that can never fail would pass every scenario.
"""

from __future__ import annotations

import signal
import time

from django_redcoord.core.keys import KeyBuilder

from ..support.redis_servers import blocked_clients
from .checks import task_outcomes
from .harness import (
    held_past_owner,
    leader_violations,
    pause_redis,
    processes_alive_or_failed,
    restart_redis,
    tokens_out_of_order,
    unaccounted_tasks,
    wait_for,
)
from .oracle import RUNS_KEY, entries, now_us
from .test_locks import contenders, lock_violations


def test_the_overlap_checker_catches_an_unsafe_lock(bench):
    subjects = contenders(bench, "naive", n=4, seconds=3.0, naive=True)
    for subject in subjects:
        assert subject.proc.wait(40) == 0, subject.output()
    found = lock_violations(entries(bench.oracle, "cs"), ttl=1e9)
    assert any("entered at" in v for v in found), "the overlap checker missed a GET-then-SET lock"


def _section(bench, client):
    enter = now_us(bench.oracle)
    token = int(client.incr("plain:counter"))
    return enter, now_us(bench.oracle), token


def test_the_fence_checker_catches_a_counter_that_restarts(bench):
    """Fencing tokens taken with a plain INCR (as most Redis locks do) start again
    at 1 after a restart that lost the data: a fenced system refuses every write."""
    sections = [_section(bench, bench.client()) for _ in range(3)]
    restart_redis(keep_data=False)(bench)
    sections += [_section(bench, bench.client()) for _ in range(3)]
    assert tokens_out_of_order(sections), "the fence checker missed tokens going backwards"


def test_the_task_checker_catches_a_worker_that_loses_messages(bench):
    producer = bench.spawn("producer", ["-m", "tests.faults.producer", "40", "0.5"])
    producer.terminated = True
    assert producer.proc.wait(60) == 0, producer.output()
    lossy = bench.spawn("lossy", ["-m", "tests.faults.unsafe", "lossy_worker"])
    ready = KeyBuilder(bench.prefix).queue("default").ready
    client = bench.client()
    # it holds ten popped messages (0.2 s of work each) as soon as the ready set shrank; a Python
    # slow to start on a loaded machine would otherwise be killed before it took any
    wait_for(lambda: client.zcard(ready) <= 30, 30, "the lossy worker to pop its first ten")
    lossy.killed = True
    lossy.signal(signal.SIGKILL)
    lossy.proc.wait(5)
    # a real worker drains what is left: it cannot recover what the lossy one took
    bench.run_worker()
    time.sleep(3.0)
    expected, runs, results, dead = task_outcomes(bench, ["default"])
    found = unaccounted_tasks(expected, runs, results, dead)
    assert any("never ran" in v for v in found), "the task checker missed lost tasks"


def test_the_process_checker_catches_a_loop_that_exits_0_on_an_outage(bench):
    naive = bench.spawn("naive_loop", ["-m", "tests.faults.unsafe", "naive_loop"])
    # paused before the loop reached Redis (a slow start on a loaded machine), it would see no
    # outage
    wait_for(lambda: blocked_clients(bench.sut.port) >= 1, 30, "the naive loop to block on Redis")
    pause_redis(1.5)(bench)
    wait_for(lambda: naive.proc.poll() is not None, 30, "the naive loop to give up")
    found = processes_alive_or_failed(bench)
    assert any("exited 0 unasked" in v for v in found), "the process checker missed an exit 0"


def test_the_leader_checker_catches_a_leader_without_a_fence(bench):
    first = bench.spawn("naive_leader", ["-m", "tests.faults.unsafe", "naive_leader"])
    wait_for(lambda: len(entries(bench.oracle, RUNS_KEY)) >= 2, 10, "the naive leader's first runs")
    bench.spawn("naive_leader", ["-m", "tests.faults.unsafe", "naive_leader"])
    first.signal(signal.SIGSTOP)  # a GC pause or a VM migration, past its 1.5 s lease
    time.sleep(2.5)
    first.signal(signal.SIGCONT)  # ... and it still believes it leads
    time.sleep(1.5)
    found = leader_violations(entries(bench.oracle, RUNS_KEY), slots_once=True)
    assert any("after term" in v for v in found), "the leader checker missed a stale leader acting"
    assert any("ran twice" in v for v in found), "the leader checker missed a slot run twice"


def test_the_held_past_owner_checker_catches_a_lock_without_expiry(bench):
    holder = bench.spawn("no_ttl_holder", ["-m", "tests.faults.unsafe", "no_ttl_holder"])
    wait_for(lambda: bench.client().exists("naive:held"), 10, "the naive lock to be taken")
    holder.killed = True
    holder.signal(signal.SIGKILL)
    holder.proc.wait(5)
    found = held_past_owner(lambda: bool(bench.client().exists("naive:held")), ttl=1.0)
    assert found, "the checker missed a lock that outlived its killed holder"
