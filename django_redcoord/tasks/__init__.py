"""A backend for Django's Tasks framework on the core's reliable queues.

``TASKS = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", ...}}``
"""

from .backend import RedisTaskBackend, enqueue_many, task_backends_for
from .options import RedisTask, TaskOptions, TaskTimedOut, exponential, fixed, linear, task_options
from .runner import TaskRunner

__all__ = [
    "RedisTask", "RedisTaskBackend", "TaskOptions", "TaskRunner", "TaskTimedOut", "exponential", "fixed", "linear",
    "enqueue_many", "task_backends_for", "task_options",
]  # fmt: skip
