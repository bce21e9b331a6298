"""A task's result record: the hash ``<prefix>:task:<id>`` its message carries the flag of.

The queue's scripts write it at the edges of a delivery — the push
(``queues/push*.lua``: ``READY``, the enqueue time, the attempt count), the
reaper and the dead-letter settle (``queues/reap.lua``, ``queues/nack.lua``) —
and ``tasks/results.lua`` writes what a worker learns in between (the worker of
each delivery, ``RUNNING``, the outcome, errors), each write under a guard so a
late writer never overwrites a newer state (the script's header lists the
guards). Times are ISO 8601 with their offset; values and errors are JSON.

Django's Tasks backend (:mod:`django_redcoord.tasks`) reads and writes records
through this module; it adds only what Django's API asks (the ``TaskResult``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ..keys import key_slot, validate_name
from ..transport.commands import execute_pipeline
from ..transport.scripts import Script

#: Guarded writes of result records' fields (see core/lua/tasks/results.lua).
RESULTS = Script("tasks/results")


def write_records(
    client: Any, writes: Sequence[tuple[int, Any, str, dict[str, Any]]], *, operation: str
) -> list[int]:
    """``writes`` — (ttl, guard, key, fields) each — in one round trip: ``tasks/results.lua``
    once per TTL and Cluster slot (a script's keys share one slot, so it runs on a Redis Cluster
    too; on one server the split costs a few bytes).

    Returns, for each write in order, 1 if it landed, 0 if its guard refused it (or the record
    no longer exists: it is never recreated in part).
    """
    groups: dict[tuple[int, int], tuple[list[str], list[Any], list[int]]] = {}
    for index, (ttl, guard, key, fields) in enumerate(writes):
        keys, args, order = groups.setdefault((ttl, key_slot(key)), ([], [ttl], []))
        keys.append(key)
        order.append(index)
        args.extend((guard, len(fields)))
        for item in fields.items():
            args.extend(item)
    if not groups:
        return []
    if len(groups) == 1:
        [(keys, args, _)] = groups.values()
        replies = [RESULTS(client, keys, args, operation=operation)]
    else:

        def queue_all(pipe: Any) -> None:
            for keys, args, _ in groups.values():
                RESULTS.queue(pipe, keys, args)

        replies = execute_pipeline(client, queue_all, operation=operation)
    landed = [0] * len(writes)
    for (_, _, order), reply in zip(groups.values(), replies, strict=True):
        for index, flag in zip(order, reply, strict=True):
            landed[index] = int(flag)
    return landed


def iso(value: datetime | None) -> str:
    """A record's time field (ISO 8601 with its offset; "" for none)."""
    return value.isoformat() if value else ""


def when(text: bytes | str | None) -> datetime | None:
    """A record's time field read back (None for "" or missing)."""
    if not text:
        return None
    return datetime.fromisoformat(text.decode() if isinstance(text, bytes) else text)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def until(moment: datetime | None, now: datetime) -> int:
    """Whole seconds from ``now`` to ``moment`` (0 when it is past or None): how much longer a
    result record must live for a task that is due then."""
    if moment is None:
        return 0
    return max(0, math.ceil((moment - now).total_seconds()))


def valid_id(result_id: object) -> bool:
    """True for an id that can name a result record: what a key may hold (no braces: the
    record's key wraps the id in its own hash tag). Anything else is no result of ours."""
    try:
        validate_name(result_id, tag=False)
    except (TypeError, ValueError):
        return False
    return True
