"""The outbox: a task enqueued inside ``atomic()`` survives a Redis that is down at the commit.

Opt in with ``"django_redcoord.outbox"`` in INSTALLED_APPS and ``"OUTBOX": True`` (or a
database alias) in the Tasks backend's OPTIONS. See :mod:`django_redcoord.outbox.drain`.
"""
