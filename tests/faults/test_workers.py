"""run_worker under faults: every task sent runs, results match dead letters,
no worker exits 0 unasked, and SIGTERM stops each with 0.

Two ``manage.py run_worker`` processes serve the default queue while a
producer process enqueues tasks (every 20th always fails, one calls
``sys.exit(3)``); the nemesis strikes a second into the run.
"""

from __future__ import annotations

import time

import pytest

from .checks import all_final, task_outcomes
from .harness import (
    FULL,
    assert_none,
    drop_connections,
    fill_redis,
    kill_subject,
    pause_redis,
    processes_alive_or_failed,
    restart_redis,
    stop_subject,
    tiered,
    unaccounted_tasks,
    wait_for,
)
from .oracle import now_us

TASKS = 240 if FULL else 120
SECONDS = 6.0 if FULL else 3.0


def _replace_worker(bench):
    bench.run_worker()


NEMESES = tiered(
    [
        pause_redis(3.0),
        drop_connections(),
        kill_subject("run_worker", replace=_replace_worker),
        stop_subject("run_worker", 2.5),
        fill_redis(2.0),
    ],
    smoke=[0, 2],
)


def _scenario(bench, nemesis, *, sent_after_heal=False):
    workers = [bench.run_worker() for _ in range(2)]
    producer = bench.spawn("producer", ["-m", "tests.faults.producer", str(TASKS), str(SECONDS)])
    producer.terminated = True  # it exits 0 by itself when done
    time.sleep(1.0)
    nemesis(bench)
    healed = now_us(bench.oracle)
    assert producer.proc.wait(60) == 0, producer.output()
    sent_after = healed if sent_after_heal else 0
    wait_for(lambda: all_final(bench, sent_after=sent_after), 60, "every task sent to end")
    expected, runs, results, dead = task_outcomes(bench, ["default"], sent_after=sent_after)
    assert len(expected) >= TASKS // 4, f"the producer sent only {len(expected)} tasks"
    assert_none(unaccounted_tasks(expected, runs, results, dead), f"tasks under {nemesis.name}")
    assert_none(processes_alive_or_failed(bench), f"processes under {nemesis.name}")
    assert all(w.proc.poll() is None for w in workers if not w.killed), "a worker stopped"
    assert_none(bench.stop_all(), "SIGTERM")


@pytest.mark.parametrize("nemesis", NEMESES, ids=lambda n: n.name)
def test_every_task_runs_and_its_result_matches(bench, nemesis):
    _scenario(bench, nemesis)


@pytest.mark.persistent
def test_a_redis_killed_and_restarted_with_its_data_loses_nothing(bench):
    _scenario(bench, restart_redis(keep_data=True))


def test_a_redis_restarted_empty_loses_what_it_held_but_the_workers_go_on(bench):
    """Without persistence the queue is gone; what is sent afterwards must run."""
    _scenario(bench, restart_redis(keep_data=False), sent_after_heal=True)
