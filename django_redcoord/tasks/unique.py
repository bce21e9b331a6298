"""Unique tasks: one task per key at a time (``@task(unique=...)``; see docs/queues.md).

The key is held in the queue's ``unique`` hash from the push (``queues/push_unique.lua``)
until the task starts (``until="started"``) or leaves for good (``until="finished"``, the
default: acknowledged, dead-lettered or cancelled): the scripts that claim, retry, reap,
hand back and cancel keep its state, so a SIGKILLed worker never strands it, and
``unique_ttl`` (default 3600 s) bounds how long any key is held.
"""

from __future__ import annotations

import json
from typing import Any

from ..core import Unique
from .compat import iso, utcnow
from .options import UNIQUE_TTL, TaskOptions

#: while_running as the script names it
MODES = {None: "skip", "skip": "skip", "replace": "replace", "one_followup": "followup"}


class TaskDuplicate(Exception):
    """The error of a task enqueued inside a transaction whose unique key another task held
    when the transaction committed: it was not sent (``duplicate_of`` in its record)."""


def unique_push(path: str, key: str, options: TaskOptions, *, deferred: bool) -> Unique:
    """What push_unique.lua takes for ``key`` of the task at ``path``. ``deferred``: sent at a
    commit, after enqueue() returned: a duplicate then gets a record of its own saying so."""
    error = ""
    if deferred:
        error = json.dumps(
            {
                "exception_class_path": f"{TaskDuplicate.__module__}.{TaskDuplicate.__qualname__}",
                "traceback": f"{TaskDuplicate.__module__}.{TaskDuplicate.__qualname__}: its unique "
                f"key {key!r} was held when its transaction committed; it was not "
                "sent\n",
            }
        )
    return Unique(
        key=f"{path}:{key}",
        until="s" if options.until == "started" else "f",
        mode=MODES[options.while_running],
        ttl_ms=int((options.unique_ttl or UNIQUE_TTL) * 1000),
        duplicate_error=error,
        finished_at=iso(utcnow()) if deferred else "",
    )


def replaced_fields(new_id: str, key: str, attempts: int) -> dict[str, Any]:
    """The fields a replaced task's record gets (FAILED, TaskCancelled)."""
    from .cancel import cancel_error

    now = iso(utcnow())
    return {
        "status": "FAILED",
        "finished_at": now,
        "cancelled": f"2 {now}",
        f"error.{attempts}": cancel_error(f"replaced by {new_id} (unique key {key!r})"),
    }
