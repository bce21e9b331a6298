"""A backend for Django's Tasks framework on the core's reliable queues.

``TASKS = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", ...}}``
"""

from .backend import (
    RedisTaskBackend,
    acancel,
    aenqueue_many,
    cancel,
    enqueue_many,
    task_backends_for,
)
from .cancel import Cancel, RedisTaskContext, TaskCancelled, cancelled
from .options import (
    RedisTask,
    TaskOptions,
    TaskTimedOut,
    exponential,
    fixed,
    in_group,
    linear,
    task_options,
)
from .runner import TaskRunner
from .workflows import (
    Workflow,
    chain,
    chord,
    current_workflow,
    get_workflow,
    group,
    step,
)

__all__ = [
    "Cancel",
    "RedisTaskContext",
    "TaskCancelled",
    "acancel",
    "cancel",
    "cancelled",
    "RedisTask",
    "RedisTaskBackend",
    "TaskOptions",
    "TaskRunner",
    "TaskTimedOut",
    "exponential",
    "fixed",
    "in_group",
    "Workflow",
    "chain",
    "chord",
    "current_workflow",
    "get_workflow",
    "group",
    "step",
    "linear",
    "aenqueue_many",
    "enqueue_many",
    "task_backends_for",
    "task_options",
]
