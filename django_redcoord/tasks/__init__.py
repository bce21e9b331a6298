"""A backend for Django's Tasks framework on the core's reliable queues.

``TASKS = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", ...}}``
"""

from .backend import RedisTaskBackend, task_backends_for
from .options import TaskOptions, TaskTimedOut, exponential, fixed, linear, task_options
from .runner import TaskRunner

__all__ = [
    "RedisTaskBackend", "TaskOptions", "TaskRunner", "TaskTimedOut", "exponential", "fixed", "linear",
    "task_backends_for", "task_options",
]  # fmt: skip
