"""What the backend and the worker's task runner share: Django's Tasks API (``django.tasks``
on Django >= 6.0, the ``django-tasks`` backport before), and the result record's script and
time format, which the core keeps (:mod:`django_redcoord.core.queues.records`).
"""

from __future__ import annotations

from typing import Any

from ..core import RESULTS, iso, until, utcnow, valid_id, when

try:  # Django >= 6.0
    from django.tasks import TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import Task, TaskContext, TaskError, TaskResult
    from django.tasks.exceptions import InvalidTaskError, TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
except ImportError:  # the django-tasks backport on Django 4.2 / 5.2
    from django_tasks import TaskResultStatus
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import Task, TaskContext, TaskError, TaskResult
    from django_tasks.exceptions import InvalidTaskError, TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

try:  # tuples to lists, bytes to str: what Django's own backends store
    from django.utils.json import normalize_json
except ImportError:  # Django < 6 with the django-tasks backport
    try:
        from django_tasks.utils import normalize_json
    except ImportError:  # pragma: no cover - an older backport

        def normalize_json(obj: Any) -> Any:
            return obj


__all__ = [
    "RESULTS",
    "BaseTaskBackend",
    "InvalidTaskError",
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
