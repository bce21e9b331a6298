"""Cancelling a task: ``cancel(result_id)``, and how a running task learns of it.

One script (``core/lua/tasks/cancel.lua``) decides against the claim: a task
still waiting (ready, delayed, or waiting for a retry) is taken out of its
queue and never runs; one a worker already claimed is listed so that its
queue never delivers it again, and the worker is told. Either way the result
is final when ``cancel()`` returns: FAILED, with a :class:`TaskCancelled` error
(Django's statuses have no CANCELLED), and whatever the cancelled attempt
still reports (its return value, its error) is dropped.

A running task learns of it within ``CANCEL_POLL`` seconds (the worker polls
the records of the tasks it holds): an async task gets ``CancelledError`` at
its next ``await``; a sync task sees ``context.cancelled()`` (or
:func:`cancelled` without a context) turn True and should return. One still
running ``CANCEL_GRACE`` seconds later takes the timeout path: its message is
dead-lettered with that reason and the worker exits to be restarted (a Python
thread cannot be stopped).
"""

from __future__ import annotations

import contextvars
import json
import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..core import QUEUE_INCLUDES, Script
from .compat import TaskContext

CANCEL = Script("tasks/cancel", includes=QUEUE_INCLUDES)


class TaskCancelled(Exception):
    """The error of a cancelled task's result (``result.errors[-1].exception_class``)."""


class Cancel(str, Enum):
    """What :func:`cancel` did."""

    #: taken out of its queue while it waited: it is never delivered again
    REMOVED = "removed"
    #: a worker may be running it (it claimed it, or an earlier delivery's worker stopped
    #: heartbeating and may yet resume): the worker is told, its outcome dropped
    REQUESTED = "requested"
    #: it already had an outcome (SUCCESSFUL or FAILED): nothing changed
    FINISHED = "finished"


class Attempt:
    """One running attempt, as the runner's status thread and the task see it."""

    __slots__ = (
        "key",
        "delivery",
        "fields",
        "started",
        "marked",
        "message_id",
        "cancelled",
        "_wake",
        "_lock",
    )

    def __init__(self, key: str, delivery: int, fields: dict[str, Any], message_id: str) -> None:
        self.key, self.delivery, self.fields, self.message_id = key, delivery, fields, message_id
        self.started: float = 0.0
        self.marked = False
        self.cancelled = False
        self._wake: Any = None  # cancels the async task's asyncio.Task (set from its own loop)
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Mark it cancelled; an async task gets CancelledError at its next await (any thread)."""
        with self._lock:
            self.cancelled = True
            wake = self._wake
        if wake is not None:
            try:
                wake()
            except RuntimeError:  # its event loop is closed: the task ended already
                pass

    def on_cancel(self, wake: Any) -> None:
        """Register how to cancel the running coroutine; runs ``wake`` now if already cancelled."""
        with self._lock:
            self._wake = wake
            now = self.cancelled
        if now:
            wake()


_current: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "redcoord_task_attempt", default=None
)


def cancelled() -> bool:
    """True inside a task whose cancel was requested (see the module); False elsewhere."""
    attempt = _current.get()
    return attempt is not None and attempt.cancelled


@dataclass(frozen=True, slots=True, kw_only=True)
class RedisTaskContext(TaskContext):
    """Django's ``TaskContext`` with ``cancelled()``: True once this task's cancel was
    requested. A long sync task should look now and then and return when it is."""

    attempt_state: Attempt | None = field(default=None, repr=False, compare=False)

    def cancelled(self) -> bool:
        return self.attempt_state is not None and self.attempt_state.cancelled


def cancel_error(detail: str) -> str:
    """The JSON of the TaskCancelled error a cancelled result records."""
    return json.dumps(
        {
            "exception_class_path": f"{TaskCancelled.__module__}.{TaskCancelled.__qualname__}",
            "traceback": f"{TaskCancelled.__module__}.{TaskCancelled.__qualname__}: {detail}\n",
        }
    )
