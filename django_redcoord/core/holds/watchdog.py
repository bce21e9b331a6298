"""The watchdog of an ``auto_renew`` hold: a thread for ``acquire()``, an asyncio task for
``aacquire()``.

What one renewal does is written once (:func:`renew_once`, steps); the thread
runs it with the sync driver and the task with the asyncio driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..transport.drivers import Steps, arun, run

if TYPE_CHECKING:
    from .hold import Hold as Lock

log = logging.getLogger("django_redcoord.locks")

_LOST = "lost"


def renew_once(
    lock_ref: Any, owner: str, stopped: Callable[[], bool], holder_alive: Callable[[], bool]
) -> Steps:
    """One renewal of the hold ``owner``: returns the pause before the next one,
    None to stop, or ``_LOST`` (the hold is marked lost; ``on_lost`` is due)."""
    lock = lock_ref()
    if lock is None or lock._owner != owner or not lock._depth:
        return None
    if not holder_alive():
        log.warning(
            "%s %s: its reentrant holder ended without releasing it; no longer renewed, "
            "it expires after its TTL",
            lock.kind,
            lock.name,
        )
        return None
    interval = lock.ttl / 3.0
    try:
        if (yield from lock._extend_steps(owner, lock.ttl)):
            return interval
    except Exception as exc:  # Redis away, or anything else: retry while the TTL lasts
        if time.monotonic() < lock._valid_until:
            log.warning("%s %s: renewal failed, will retry: %s", lock.kind, lock.name, exc)
            return max(0.001, min(interval, lock.ttl / 10.0))
    if stopped() or lock._owner != owner:
        return None  # released meanwhile
    if not lock._lost:
        lock._observe_lost()
    lock._lost = True
    log.error("%s %s: lost (renewal found it expired or taken)", lock.kind, lock.name)
    return _LOST


class Renewer(threading.Thread):
    """Watchdog: extends one hold every ttl/3 until stopped or the lock is lost.

    Holds only a weak reference, so a forgotten Lock is collected and the
    thread ends (its lock then expires after the TTL); a reentrant hold (owned
    by the thread that took it) also stops being renewed once that thread has
    ended without releasing it, since no other thread can. It renews the hold it
    was started for (``owner``), never a later one of the same object. A
    failed renewal is retried every ttl/10 until the TTL has run out since the
    last confirmed one; then, as when Redis answers that the lock is gone, the
    hold is marked lost and ``on_lost`` is called. Nothing it meets ends it
    silently.
    """

    def __init__(self, lock: Lock, owner: str, holder: threading.Thread | None = None) -> None:
        super().__init__(name=f"redcoord-renew:{lock.name}", daemon=True)
        self._lock = weakref.ref(lock)
        self._client = lock.client
        self._owner = owner
        self._holder = holder
        self._stopped = threading.Event()
        self._pause: float | str | None = lock.ttl / 3.0

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        holder = self._holder
        alive = (lambda: True) if holder is None else holder.is_alive
        pause = self._pause
        while isinstance(pause, float) and not self._stopped.wait(pause):
            pause = run(
                self._client, renew_once(self._lock, self._owner, self._stopped.is_set, alive)
            )
        lock = self._lock()
        if pause == _LOST and lock is not None and lock.on_lost is not None:
            try:
                lock.on_lost(lock)
            except Exception:
                log.exception("%s %s: on_lost callback failed", lock.kind, lock.name)


class AsyncRenewer:
    """The watchdog of a hold taken with ``aacquire()``: an asyncio task on its loop.

    Same policy as the thread (see :class:`Renewer`); ``on_lost`` may be a
    coroutine function. A reentrant hold stops being renewed once its task is done.
    """

    def __init__(self, lock: Lock, owner: str, client: Any, holder: asyncio.Task | None) -> None:
        self._lock = weakref.ref(lock)
        self._owner = owner
        self._client = client
        self._holder = holder
        self._stopped = False
        self._task = asyncio.get_running_loop().create_task(
            self._run(lock.ttl / 3.0), name=f"redcoord-renew:{lock.name}"
        )

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(RuntimeError):  # its loop is closed: the task is gone with it
            self._task.get_loop().call_soon_threadsafe(self._task.cancel)

    async def _run(self, pause: float | str | None) -> None:
        holder = self._holder
        alive = (lambda: True) if holder is None else (lambda: not holder.done())
        while isinstance(pause, float):
            await asyncio.sleep(pause)
            if self._stopped:
                return
            pause = await arun(
                self._client, renew_once(self._lock, self._owner, lambda: self._stopped, alive)
            )
        lock = self._lock()
        if pause == _LOST and lock is not None and lock.on_lost is not None:
            try:
                outcome = lock.on_lost(lock)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                log.exception("%s %s: on_lost callback failed", lock.kind, lock.name)
