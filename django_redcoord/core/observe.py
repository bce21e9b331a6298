"""Events of this process for whoever counts them: a hook that costs nothing while nobody listens.

The primitives report what only the process itself sees (how long an
acquire waited, how a job ended, how long a periodic run took) by calling
:func:`observe` with an event name and a few fields. Observers added with
:func:`add_observer` are called with ``(event, fields)``; the Django skin's
Prometheus metrics (:mod:`django_redcoord.metrics`) add one. With no observer
added, a call site pays one truthiness test of :data:`observers`, and builds
no dict::

    from ..observe import observe, observers

    if observers:
        observe("hold.acquire", kind="lock", outcome="acquired", wait=0.002)

Observers run on the thread that reports the event (a worker thread, a
watchdog, the event loop) and must return quickly; one that raises is
logged (once per event name) and never breaks the primitive.

Events (times in seconds; ``kind`` is ``lock``, ``semaphore``, ``read``,
``write`` or ``latch``; no field holds a lock name or a rate-limit key, so an
observer may use every field as a label):

==================  ==============================================================
``hold.acquire``    ``kind``, ``outcome`` (``acquired`` | ``timeout`` |
                    ``unavailable``), ``wait``: one acquire (a reentrant
                    nesting counts too); ``wait`` is the time it took
``hold.release``    ``kind``, ``held``: the outermost release that reached
                    Redis; ``held`` is the time since the grant
``hold.lost``       ``kind``: a hold found lost (a renewal or an extend found
                    it gone, or a release found it passed on), once per hold
``view.busy``       ``kind`` (a hold's, or ``ratelimit``), ``status``: a
                    decorated view answered busy or refused (409, 429...)
``message.done``    ``queue``, ``task`` (the task's path, ``""`` for plain
                    messages), ``outcome`` (``ok`` | ``failed`` | ``dead`` |
                    ``timeout``), ``retried``, ``dead_lettered`` (bools: what
                    became of the message), ``duration``
``leader.elected``  ``election``, ``term``
``leader.demoted``  ``election``, ``term`` (the term that ended)
``periodic.run``    ``election``, ``job``, ``outcome`` (``ok`` | ``error`` |
                    ``timeout``), ``duration``: a run that ended
``periodic.missed`` ``election``, ``job``, ``slots``: slots skipped, folded into
                    a later run, or skipped while paused
``ratelimit.hit``   ``limiter``, ``allowed`` (bool): one decision of ``hit()``
==================  ==============================================================
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("django_redcoord.observe")

Observer = Callable[[str, dict[str, Any]], Any]

#: The observers added, in order. Read it (``if observers:``) before building
#: an event's fields; change it only through add_observer/remove_observer
#: (the list object stays the same, so ``from .observe import observers`` keeps working).
observers: list[Observer] = []

_lock = threading.Lock()
_failed: set[tuple[int, str]] = set()  # (observer id, event) already logged


def observe(event: str, **fields: Any) -> None:
    """Report ``event`` with ``fields`` to every observer (see the module for the events)."""
    for observer in tuple(observers):
        try:
            observer(event, fields)
        except Exception:  # an observer's bug must not fail a lock, a job or a request
            if (id(observer), event) not in _failed:
                _failed.add((id(observer), event))
                log.exception("observer %r failed on event %s (logged once)", observer, event)


def add_observer(observer: Observer) -> None:
    """Call ``observer(event, fields)`` for every event of this process (added once: again is a
    no-op)."""
    if not callable(observer):
        raise TypeError(f"an observer must be a callable (event, fields), not {observer!r}")
    with _lock:
        if observer not in observers:
            observers[:] = [
                *observers,
                observer,
            ]  # in place, in one step: readers see the old or the new list


def remove_observer(observer: Observer) -> None:
    """Stop calling ``observer`` (not added: a no-op)."""
    with _lock:
        observers[:] = [o for o in observers if o != observer]
