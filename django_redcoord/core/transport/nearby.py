"""Hand-offs within one process: a lock passed between two waiters of this process skips Redis's
wake list.

A lock waiter blocks on the wake list of whoever is just ahead of it in the
queue (the holder, or the waiter queued before it): only that one pushes onto
it (its release hands the lock on, its giving up says ``moved``). When that
one is a hold of this same process (its owner token was made here:
``holds.identity.made_here``), the push need not go through Redis:

* the release script hands the lock to a waiter whose queue entry names this
  process (its random id, ``identity.process_nonce``, which the releaser
  passes too; a host name and pid can repeat across containers) without
  pushing, and
  replies with the element it would have pushed; the releaser then
  :func:`hand`\\ s it here, to the wait of this process blocked on that list
  (a thread, or a task of any event loop), as ``BLPOP`` would have;
* every other ending of the one ahead (a release that found the lock lost,
  an unknown outcome, giving up its place) :func:`hand`\\ s ``moved`` here
  too, so the wait behind it looks again at once;
* ``Hold._interrupt`` hands ``interrupt`` to the wait's own interrupt list.

So such a wait (``quiet``) blocks here alone: no connection, no read of the
wake hub, no poke. Nothing it needs can arrive only through Redis, and what
would arrive there anyway (a hand-off to a waiter of another process, which
is not ours to take) is left for that waiter. Every wait still ends by its
own time (the next look: within the wait chunk and the holder's lease), so a
word that misses its wait (a release with no reply, or one that found the
lock lost, while the waiter was between its look and its wait) costs a wait
of that bound, as a crashed holder's does.

An element handed while nobody here waits on its list (a waiter between its
look and its wait) is kept for the next wait on that list (``KEEP``), as the
list would have kept it. Only the wait blocked on a list gets its element:
the fence floor and the lease checks of the waiting loop apply unchanged.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

#: Off: every lock wait blocks in Redis (the wake hub's tests, and comparisons), and no release
#: hands on in-process.
enabled = True
#: How long an element handed while nobody here waited on its list is kept (seconds): a
#: 'moved' word's life in Redis (MOVED_TTL_MS), and the longest queue lease.
KEEP = 15.0
#: What telling a wait returns when it is a task of the running loop (see :func:`hand`).
LOOP = "loop"
#: The kept elements are swept of expired ones when there are more than this many.
SWEEP_ABOVE = 256


class _Nearby:
    """The quiet waits of this process by the lists they block on, and the elements kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waits: dict[str, Any] = {}  # list -> how to tell its wait (`tell`, in wait and await_)
        self.kept: dict[str, tuple[float, str]] = {}  # list -> (kept until, element)

    def enter(self, keys: tuple[str, ...], tell: Any) -> list[str] | None:
        """Register a wait on ``keys``; the ``[key, element]`` kept for one of them instead (it
        is then not registered)."""
        now = time.monotonic()
        with self.lock:
            for key in keys:
                kept = self.kept.pop(key, None)
                if kept is not None and kept[0] > now:
                    return [key, kept[1]]
            for key in keys:
                self.waits[key] = tell
        return None

    def leave(self, keys: tuple[str, ...], tell: Any) -> None:
        with self.lock:
            for key in keys:
                if self.waits.get(key) is tell:
                    del self.waits[key]

    def hand(self, key: str, element: str, keep: bool) -> bool:
        with self.lock:
            tell = self.waits.get(key)
            told = tell([key, element]) if tell is not None else False
            if told:
                return told == LOOP  # (its keys are dropped as it leaves)
            if not keep:
                return False
            now = time.monotonic()
            if len(self.kept) > SWEEP_ABOVE:
                for stale in [k for k, (until, _) in self.kept.items() if until <= now]:
                    del self.kept[stale]
            self.kept[key] = (now + KEEP, element)
            return False


#: The registry of each process by pid (a forked child makes its own: its parent's waits are not
#: its own). Made by whichever thread comes first: ``dict.setdefault`` is atomic, so threads
#: racing for it share one (each with its own would hand to waits the other registered).
_registries: dict[int, _Nearby] = {}


def _registry() -> _Nearby:
    pid = os.getpid()
    registry = _registries.get(pid)
    if registry is None:
        registry = _registries.setdefault(pid, _Nearby())
        for other in [p for p in _registries if p != pid]:  # (an ancestor's, inherited by fork)
            _registries.pop(other, None)
    return registry


def hand(key: str, element: str, *, keep: bool = True) -> bool:
    """Give ``element`` to the quiet wait of this process blocked on list ``key``, as a push
    onto it would have; kept for the next wait on it when none is blocked (``keep``), else
    dropped (a word that only hurries a look along). True when the wait told is a task of the
    running event loop (the caller may let it run first: ``await asyncio.sleep(0)``)."""
    return _registry().hand(key, element, keep)


def wait(keys: list[str], seconds: float) -> list[str] | None:
    """Block the calling thread until an element is handed onto one of ``keys`` (``[key,
    element]``, as BLPOP replies) or ``seconds`` pass (None)."""
    registry = _registry()
    box: list[list[str]] = []
    event = threading.Event()

    def tell(reply: list[str]) -> bool:  # (under the registry's lock)
        if box:
            return False
        box.append(reply)
        event.set()
        return True

    found = registry.enter(tuple(keys), tell)
    if found is not None:
        return found
    try:
        event.wait(seconds)
    finally:
        registry.leave(tuple(keys), tell)
    with registry.lock:  # (a hand that came after the wait ran out, before it left, is ours)
        return box[0] if box else None


async def await_(keys: list[str], seconds: float) -> list[str] | None:
    """:func:`wait` for a task of an event loop (handed from any thread or loop)."""
    registry = _registry()
    loop = asyncio.get_running_loop()
    future: asyncio.Future[list[str] | None] = loop.create_future()
    loop_thread = threading.get_ident()

    def settle(reply: list[str] | None) -> None:
        if not future.done():
            future.set_result(reply)

    def tell(reply: list[str]) -> bool | str:  # (under the registry's lock)
        if future.done():
            return False  # its time ran out or it was cancelled: kept for the next wait
        if threading.get_ident() == loop_thread:
            future.set_result(reply)  # (the task resumes at the loop's next turn)
            return LOOP
        try:
            loop.call_soon_threadsafe(settle, reply)
        except RuntimeError:  # that loop is closed: nobody waits there any more
            return False
        return True

    found = registry.enter(tuple(keys), tell)
    if found is not None:
        return found
    # (a timer, not asyncio.wait_for: its inner future would resume the task a turn later)
    timer = loop.call_later(seconds, settle, None)
    try:
        return await future
    finally:
        timer.cancel()
        registry.leave(tuple(keys), tell)
