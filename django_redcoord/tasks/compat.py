"""What the backend and the worker's task runner share: Django's Tasks API (``django.tasks``
on Django >= 6.0, the ``django-tasks`` backport before), the result-record
script and its time format.

A result record is a hash ``<prefix>:task:<id>`` (see ``core/lua/tasks/results.lua``):
times are ISO 8601 with their offset, values and errors JSON.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from ..core import Script, validate_name

try:  # Django >= 6.0
    from django.tasks import TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import Task, TaskContext, TaskError, TaskResult
    from django.tasks.exceptions import TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
except ImportError:  # the django-tasks backport on Django 4.2 / 5.2
    from django_tasks import TaskResultStatus
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import Task, TaskContext, TaskError, TaskResult
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

try:  # tuples to lists, bytes to str: what Django's own backends store
    from django.utils.json import normalize_json
except ImportError:  # Django < 6 with the django-tasks backport
    try:
        from django_tasks.utils import normalize_json
    except ImportError:  # pragma: no cover - an older backport

        def normalize_json(obj: Any) -> Any:
            return obj


RESULTS = Script("tasks/results")


def iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def when(text: bytes | str | None) -> datetime | None:
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


__all__ = [
    "RESULTS",
    "BaseTaskBackend",
    "Task",
    "TaskContext",
    "TaskError",
    "TaskResult",
    "TaskResultDoesNotExist",
    "TaskResultStatus",
    "iso",
    "normalize_json",
    "task_enqueued",
    "task_finished",
    "task_started",
    "until",
    "utcnow",
    "valid_id",
    "when",
]
