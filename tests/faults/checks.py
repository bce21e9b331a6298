"""What the checkers read from Redis after a scenario (no Django needed)."""

from __future__ import annotations

import json
from typing import Any

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.commands import as_text

from .oracle import entries


def task_outcomes(
    bench: Any, queues: list[str], *, sent_after: int = 0
) -> tuple[dict, dict, dict, set]:
    """(expected, runs, results, dead ids) of the tasks the producers sent after ``sent_after``
    (oracle µs)."""
    oracle, client = bench.oracle, bench.client()
    expected = {e["id"]: e["kind"] for e in entries(oracle, "sent") if e["at"] >= sent_after}
    runs = {as_text(k): int(v) for k, v in oracle.hgetall("runs").items()}
    keys = KeyBuilder(bench.prefix)
    results = {}
    for rid in expected:
        status = client.hget(keys.task_result(rid), "status")
        results[rid] = None if status is None else as_text(status)
    dead = set()
    for name in queues:
        for message, _ in Queue(
            name, client=client, prefix=bench.prefix, dead_letter_limit=None
        ).dead_letters(100_000):
            dead.add(message.id)
    return expected, runs, results, dead


def all_final(bench: Any, *, sent_after: int = 0) -> bool:
    """True once every task sent (after ``sent_after``) has a final result."""
    oracle, client = bench.oracle, bench.client()
    keys = KeyBuilder(bench.prefix)
    for e in entries(oracle, "sent"):
        if e["at"] < sent_after:
            continue
        status = client.hget(keys.task_result(e["id"]), "status")
        if status is None or as_text(status) not in ("SUCCESSFUL", "FAILED"):
            return False
    return True


def results_json(bench: Any) -> str:
    return json.dumps(entries(bench.oracle, "sent")[-5:])
