"""Django settings and the no-op task for the "ours (Django Tasks)" rows of bench_queues.

Importing this module configures Django in the importing process (if it is
not configured yet): TASKS uses django_redcoord.tasks.RedisTaskBackend with
default options, REDCOORD points at the benchmark's private server (from
BENCH_QUEUES_REDIS_PORT) with KEY_PREFIX "benchtasks", and the database is
an in-memory SQLite (the task runner only closes old connections).
"""

from __future__ import annotations

from typing import Any

try:
    from bench._queue_jobs import mark, redis_url
    from bench.support.tasks import configure_tasks
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    from _queue_jobs import mark, redis_url
    from support.tasks import configure_tasks

configure_tasks(redis_url(), "benchtasks", "bench-queues-only")

try:  # Django >= 6.0
    from django.tasks import task, task_backends
except ImportError:  # the django-tasks backport
    from django_tasks import task, task_backends


@task()
def noop(n: int | None = None) -> None:
    mark()


def enqueue_many(task_: Any, calls: Any) -> Any:
    """``django_redcoord.tasks.enqueue_many`` (imported once Django is set up)."""
    from django_redcoord.tasks import enqueue_many as many

    return many(task_, calls)


def backend() -> Any:
    """The configured RedisTaskBackend."""
    return task_backends["default"]
