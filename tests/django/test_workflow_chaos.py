"""Workflows under chaos: 1,000 workflows while worker processes are SIGKILLed every 0.7 s;
every workflow reaches its end, each callback started once. And the negative control of the
sweep: a worker that dies after a member's outcome landed, before it moved the workflow on,
leaves it running until a sweep moves it on (without the sweep it would hang)."""

import os
import random
import signal
import time

import pytest
from django.core.management import call_command

from django_redcoord.tasks import chain, chord, get_workflow, group, step, task_backends_for
from django_redcoord.tasks import workflows as wfs
from django_redcoord.tasks.runner import TaskRunner
from tests.support import workflow_tasks as wt
from tests.support.task_workers import start_worker, stop

pytestmark = pytest.mark.django_db(transaction=True)


def _spec(i):
    kind = i % 4
    if kind == 0:  # a chain that succeeds
        return "chain-ok", chain(*(step(wt.record, f"w{i}:{s}", 0.01) for s in range(3)))
    if kind == 1:  # a chord whose member fails: the callback runs all the same
        return "chord-run", chord(
            [
                step(wt.record, f"w{i}:a", 0.01),
                step(wt.fail, f"w{i}:b"),
                step(wt.record, f"w{i}:c", 0.01),
            ],
            then=step(wt.record, f"w{i}:cb"),
            on_failure="run_callback",
        )
    if kind == 2:  # a group that succeeds
        return "group-ok", group(
            [step(wt.record, f"w{i}:a", 0.01), step(wt.record, f"w{i}:b", 0.01)]
        )
    return "chain-continue", chain(  # a failure that changes nothing but the status
        step(wt.record, f"w{i}:1", 0.01),
        step(wt.fail, f"w{i}:2"),
        step(wt.record, f"w{i}:3", 0.01),
        then=step(wt.record, f"w{i}:cb"),
        on_failure="continue",
    )


def test_a_thousand_workflows_end_while_workers_are_sigkilled(redis_url, redis_client):
    started = [(kind, spec.enqueue()) for kind, spec in map(_spec, range(1000))]
    workers = [start_worker(redis_url, concurrency=2, prefetch=4, output=False) for _ in range(3)]
    kills = 0
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            time.sleep(0.7)
            victim = random.randrange(len(workers))
            os.killpg(workers[victim].pid, signal.SIGKILL)
            workers[victim].wait(10)
            kills += 1
            workers[victim] = start_worker(redis_url, concurrency=2, prefetch=4, output=False)
            running = [w for _, w in started if w.refresh().status == "RUNNING"]
            if not running and kills >= 5:  # (a fast machine still gets five kills)
                break
    finally:
        stop(*workers)
    left = [w.id for _, w in started if w.status not in ("SUCCESSFUL", "FAILED")]
    assert not left, f"{len(left)} workflows never ended after {kills} kills: {left[:5]}"
    assert kills >= 5, "the chaos was too short to mean anything"
    runs = {k.decode(): int(v) for k, v in redis_client.hgetall("wt:count").items()}
    wrong = []
    for i, (kind, w) in enumerate(started):
        states = [m["state"] for m in w.members]
        if kind in ("chord-run", "chain-continue"):
            # the callback started once (one record), and ran (at least once: a kill repeats it)
            if w.callback["state"] not in ("succeeded", "failed") or runs.get(f"w{i}:cb", 0) < 1:
                wrong.append((i, kind, w.status, states, w.callback))
            if w.status != "FAILED":
                wrong.append((i, kind, w.status, states, w.callback))
        elif w.status == "SUCCESSFUL" and states != ["succeeded"] * len(states):
            wrong.append((i, kind, w.status, states))
    assert not wrong, wrong[:5]


def test_the_sweep_moves_on_a_workflow_whose_worker_died_before_moving_it(
    redis_client, monkeypatch
):
    # the worker dies right after the outcome landed: it never moves the workflow on
    monkeypatch.setattr(TaskRunner, "_move_on", lambda self, trigger: None)
    monkeypatch.setattr(TaskRunner, "sweep", lambda self: None)
    w = chain(step(wt.record, "1"), step(wt.record, "2")).enqueue()
    call_command("run_worker", "--burst", verbosity=0)
    assert w.refresh().status == "RUNNING", "negative control: nothing moved it on"
    assert [m["state"] for m in w.members] == ["started", "waiting"]
    monkeypatch.setattr(wfs, "SWEEP_AFTER", 0.0)
    time.sleep(wfs.SWEEP_AFTER + 2.1)  # the workflow's sweep time (2 s after its last move)
    assert wfs.sweep(task_backends_for("default")) >= 1
    call_command("run_worker", "--burst", verbosity=0)
    wfs.sweep(task_backends_for("default"))
    assert get_workflow(w.id).status == "SUCCESSFUL"
    assert [r.decode() for r in redis_client.lrange("wt:runs", 0, -1)] == ["1", "2"]
