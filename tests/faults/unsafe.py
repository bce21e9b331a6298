"""Deliberately unsafe subjects, the negative controls of the checkers.

``python -m tests.faults.unsafe MODE``:

* ``lossy_worker``: takes task messages straight off the ready set (no
  processing list, nothing to recover), works 0.2 s on each, then records the
  run: a kill loses what it took.
* ``naive_loop``: a long-running loop that exits 0 when Redis goes away.
* ``naive_leader``: leads once it SETs a key with NX and believes it forever
  (no renewal check, no term fence), running the 0.5 s job like jobs.py.
* ``no_ttl_holder``: takes a lock with SET NX and no expiry, then sleeps.
"""

from __future__ import annotations

import json
import os
import sys
import time

import redis

from django_redcoord.core.keys import KeyBuilder

from .oracle import RUNS_KEY, now_us, oracle, record


def _client(**kwargs):
    return redis.Redis.from_url(os.environ["REDCOORD_REDIS_URL"], **kwargs)


def lossy_worker() -> int:
    client, keys = _client(), KeyBuilder(os.environ.get("REDCOORD_KEY_PREFIX", "faults"))
    ready = keys.queue("default").ready
    while True:
        popped = client.zpopmin(ready, 10)
        if not popped:
            time.sleep(0.05)
            continue
        for envelope, _ in popped:
            body = json.loads(envelope.split(b"\n", 1)[1])
            time.sleep(0.2)
            oracle().hincrby("runs", body["result"], 1)
            client.hset(keys.task_result(body["result"]), "status", "SUCCESSFUL")


def naive_loop() -> int:
    client = _client(socket_timeout=0.5, retry=None)
    while True:
        try:
            client.blpop(["nothing"], timeout=0.2)
        except redis.RedisError:
            return 0  # "Redis went away, so we are done": what a supervisor must never see


def naive_leader() -> int:
    client = _client(socket_timeout=0.5)
    while not client.set("naive:leader", os.getpid(), nx=True, px=1500):
        time.sleep(0.1)
    term = int(client.incr("naive:term"))
    print("leading", term, flush=True)
    while True:  # believes forever: never renews, never checks
        slot = int(time.time() * 2) * 500
        started = now_us()
        time.sleep(0.05)
        record(
            RUNS_KEY,
            slot=slot,
            term=term,
            pid=os.getpid(),
            start=started,
            end=now_us(),
            leader=True,
        )
        time.sleep(max(0.0, (slot + 500) / 1000 - time.time()))


def no_ttl_holder() -> int:
    client = _client()
    assert client.set("naive:held", os.getpid(), nx=True)
    print("holding", flush=True)
    time.sleep(600)
    return 0


if __name__ == "__main__":
    sys.exit(
        {
            "lossy_worker": lossy_worker,
            "naive_loop": naive_loop,
            "naive_leader": naive_leader,
            "no_ttl_holder": no_ttl_holder,
        }[sys.argv[1]]()
    )
