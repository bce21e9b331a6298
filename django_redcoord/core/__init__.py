"""The core: coordination primitives in plain Python on redis-py.

It never imports Django (``tests/test_layering.py`` checks), so it serves
Celery tasks, scripts and other frameworks as well as the Django skin around
it. Give each object a ``client=`` (a ``redis.Redis`` or ``redis.asyncio.Redis``),
or configure the process once::

    from django_redcoord.core import configure
    configure({"URL": "redis://localhost:6379/0", "KEY_PREFIX": "myapp"})

Families: :mod:`.locks`, :mod:`.leader`, :mod:`.periodic`, :mod:`.queues`;
:mod:`.transport` (clients, scripts, the sync and asyncio drivers) carries
them all. Keys are built in :mod:`.keys`, options validated in :mod:`.options`.
"""

from .runtime import configure

__all__ = ["configure"]
