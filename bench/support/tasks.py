"""Django, configured in a benchmark's process for the Tasks backend (``RedisTaskBackend``).

Used where a benchmark drives Django Tasks without a project: bench_task_features.py,
and bench_queues.py's ours-via-Django-Tasks rows (``_queue_tasks.py``, also imported
in its worker processes).
"""

from __future__ import annotations


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
