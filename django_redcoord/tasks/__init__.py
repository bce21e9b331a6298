"""A backend for Django's Tasks framework on the core's reliable queues.

``TASKS = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", ...}}``
"""

from .backend import RedisTaskBackend, task_backends_for
from .runner import TaskRunner

__all__ = ["RedisTaskBackend", "TaskRunner", "task_backends_for"]
