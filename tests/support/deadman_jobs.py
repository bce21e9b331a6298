"""Jobs of the dead-man's switch tests (tests/django/test_deadman.py): REDCOORD["JOBS"] of
tests/support/deadman_settings.py.

Every job runs every ``EVERY`` seconds (0.3, tests/support/deadman_settings.py):

* ``deadman.tick`` does nothing and succeeds: the healthy control;
* ``deadman.locked`` takes the lock ``deadman:resource`` without waiting, as a
  job that must not run twice at once would: while the test holds that lock,
  each run ends in ``LockNotAcquired``;
* ``deadman.fails`` raises on every run.

Registration only at import; nothing runs until a leader runs them.
"""

from django_redcoord.core.locks import Lock
from django_redcoord.core.periodic.jobs import periodic

from .deadman_settings import EVERY, RESOURCE


@periodic(every=EVERY, name="deadman.tick")
def tick():
    pass


@periodic(every=EVERY, name="deadman.locked")
def locked():
    with Lock(RESOURCE, ttl=5, wait=0):
        pass


@periodic(every=EVERY, name="deadman.fails")
def fails():
    raise ValueError("no rates today")
