"""Names and ids with every allowed character, end to end through real processes.

A lock, a queue, message ids and an election name made of every allowed
punctuation character (``_ - . : / @ = + , # ~ |``): tasks on such a queue
run under run_worker, a lock on such a name passes between processes at
once, ``manage.py redcoord status`` and the dashboard data show them
verbatim, and every key carries its resource's name as its hash tag (one
Cluster slot per resource; nothing written outside it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.commands import as_text
from django_redcoord.dashboard import overview

from .checks import all_final, task_outcomes
from .harness import ROOT, assert_none, unaccounted_tasks, wait_for
from .names import HOSTILE_QUEUE, hostile


def keys_outside_their_tag(client, prefix, names):
    """Keys whose hash tag is not one of ``names`` (the shared indexes and task results aside)."""
    found = []
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        key = as_text(key)
        if key.startswith(f"{prefix}:index:"):
            continue
        match = re.match(rf"^{re.escape(prefix)}:[a-z]+:\{{([^}}]*)\}}", key)
        if not match:
            found.append(f"{key}: no hash tag right after the kind")
        elif (
            match.group(1) not in names
            and not key.startswith(f"{prefix}:task:{{")
            and not key.startswith(f"{prefix}:worker:{{")
        ):
            found.append(f"{key}: hash tag {match.group(1)!r} is not a resource name")
    return found


def test_every_allowed_character_in_names_and_ids_end_to_end(bench):
    lock_name = hostile("lock")
    worker = bench.run_worker("default", HOSTILE_QUEUE)
    producer = bench.spawn("producer", ["-m", "tests.faults.producer", "30", "1", HOSTILE_QUEUE])
    producer.terminated = True
    assert producer.proc.wait(60) == 0, producer.output()
    wait_for(lambda: all_final(bench), 30, "the tasks on the hostile queue")
    expected, runs, results, dead = task_outcomes(bench, [HOSTILE_QUEUE])
    assert_none(unaccounted_tasks(expected, runs, results, dead), "tasks on a hostile queue")

    client = bench.client()
    queue = Queue(hostile("queue"), client=client, prefix=bench.prefix)
    queue.push({"x": 1}, id=hostile("message"))
    queue.push({"x": 2}, id=hostile("delayed"), delay=60)
    holder = Lock(lock_name, ttl=30, wait=0, client=client, prefix=bench.prefix)
    assert holder.acquire()
    # the waiter holds 300 s: the two `redcoord status` processes below start Django, slowly on a
    # loaded machine
    waiter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import os, sys, time\nfrom django_redcoord.core.transport.clients import "
                "client_from_url\nfrom django_redcoord.core.locks import Lock\nlock = "
                f"Lock({lock_name!r}, ttl=300, wait=10, "
                "client=client_from_url(os.environ['REDCOORD_REDIS_URL']), "
                f"prefix={bench.prefix!r})\nprint('waiting', flush=True)\nassert "
                "lock.acquire()\nprint(time.monotonic(), flush=True)\ntime.sleep(300)\n"
            ),
        ],
        cwd=ROOT,
        env=bench.env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert waiter.stdout.readline().strip() == "waiting"
        wait_for(lambda: client.llen(holder.keys.queue) == 1, 10, "the waiter to queue")
        released = time.monotonic()
        holder.release()
        granted = float(waiter.stdout.readline())
        assert granted - released < 0.5, f"the handoff took {granted - released:.2f} s"

        status = subprocess.run(
            [sys.executable, "manage.py", "redcoord", "status"],
            cwd=ROOT,
            env=bench.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert status.returncode == 0, status.stderr
        assert (
            lock_name in status.stdout
            and hostile("queue") in status.stdout
            and HOSTILE_QUEUE in status.stdout
        )
        as_json = subprocess.run(
            [sys.executable, "manage.py", "redcoord", "status", "--json"],
            cwd=ROOT,
            env=bench.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        data = json.loads(as_json.stdout)
        [held] = data["locks"]["items"]
        assert held["name"] == lock_name and held["pid"] == waiter.pid
        assert overview(client, bench.prefix)["locks"]["items"][0]["name"] == lock_name
        workers = data["workers"]
        assert workers and workers[0]["queues"] == ["default", HOSTILE_QUEUE]
        names = {lock_name, hostile("queue"), HOSTILE_QUEUE, "default"}
        assert_none(keys_outside_their_tag(client, bench.prefix, names), "keys")
    finally:
        waiter.kill()
        waiter.wait(5)
    assert_none(bench.stop_all(), "SIGTERM")
    assert worker.proc.returncode == 0
