"""Django, configured in a benchmark's process for the Tasks backend (``RedisTaskBackend``).

Used where a benchmark drives Django Tasks without a project: bench_task_features.py,
bench_task_parts.py, and bench_queues.py's ours-via-Django-Tasks rows (``_queue_tasks.py``,
also imported in its worker processes). Also the handler of the "Tasks API floor" rows and
the in-process ``run_worker --burst``.
"""

from __future__ import annotations

import os
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime, timezone
from typing import Any


def configure_tasks(url: str, prefix: str, secret_key: str) -> None:
    """``settings.configure`` and ``django.setup()`` (once per process): the apps
    ``django_tasks`` and ``django_redcoord``, an in-memory SQLite database, ``DEBUG=False``,
    the queue ``default`` of a ``RedisTaskBackend`` with its default options, on the Redis at
    ``url`` under the key prefix ``prefix``."""
    import django
    from django.conf import settings

    if settings.configured:
        return
    settings.configure(
        DEBUG=False,
        SECRET_KEY=secret_key,
        USE_TZ=True,
        INSTALLED_APPS=["django_tasks", "django_redcoord"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        TASKS={
            "default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": ["default"]}
        },
        REDCOORD={"URL": url, "KEY_PREFIX": prefix},
    )
    django.setup()


def floor_handler(task: Any, backend: Any) -> Any:
    """A core ``Worker`` handler making only the calls Django's Tasks API asks of any backend's
    worker per task: a ``TaskResult``, the ``task_started`` and ``task_finished`` signals (with
    the receivers the framework connects), ``close_old_connections()`` before and after, and
    ``task``'s call with the message's ``n``. No result record: a bound, not a row users run."""
    from django.db import close_old_connections

    try:  # Django >= 6.0
        from django.tasks import TaskResult, TaskResultStatus
        from django.tasks.signals import task_finished, task_started
    except ImportError:  # the django-tasks backport
        from django_tasks import TaskResult, TaskResultStatus
        from django_tasks.signals import task_finished, task_started
    sender = type(backend)

    def handler(message: Any) -> None:
        started = datetime.now(timezone.utc)
        n = message.body["n"]
        result = TaskResult(
            task=task,
            id=message.id,
            status=TaskResultStatus.RUNNING,
            enqueued_at=None,
            started_at=started,
            finished_at=None,
            last_attempted_at=started,
            args=[n],
            kwargs={},
            backend=backend.alias,
            errors=[],
            worker_ids=["w"],
        )
        task_started.send(sender, task_result=result)
        close_old_connections()
        try:
            task.call(n)
        finally:
            close_old_connections()
        object.__setattr__(result, "status", TaskResultStatus.SUCCESSFUL)
        object.__setattr__(result, "finished_at", datetime.now(timezone.utc))
        task_finished.send(sender, task_result=result)

    return handler


_SINK: list[Any] = []  # /dev/null, opened once: the command's console handler keeps the first


def run_worker_burst(verbosity: int = 1) -> None:
    """``manage.py run_worker --burst`` in this process (default verbosity 1: a line per task),
    its output written to /dev/null (a write per line, as to a pipe, and nothing kept)."""
    from django.core.management import call_command

    if not _SINK:
        _SINK.append(open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process
    with redirect_stdout(_SINK[0]), redirect_stderr(_SINK[0]):
        call_command("run_worker", "--burst", verbosity=verbosity)
