"""A stop request that a signal handler may make: it takes no lock.

A Python signal handler runs in the main thread, between two bytecodes of
whatever the main thread was doing. ``threading.Event.set()`` takes the
event's lock; had the main thread been holding that lock at that moment
(inside ``wait()`` or ``clear()`` of the same event: a serve loop's wait),
the handler would wait for itself forever. The process then hangs while its
other threads go on: a leader's renewals (no standby ever takes over, and its
jobs never run again), a worker's heartbeat (its messages are never reaped).

So :meth:`StopRelay.request` writes one byte to a pipe, and a thread of the
relay's own makes the call that takes locks, once per request (a second
SIGTERM still means "stop waiting").
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

_QUIT = ord("q")


class StopRelay:
    """Calls ``action`` on a thread of its own for each :meth:`request` the main thread makes
    between :meth:`start` and :meth:`end`; a request from another thread, or outside them,
    calls it directly."""

    def __init__(self, action: Callable[[], None], name: str) -> None:
        self._action, self._name = action, name
        self._w: int | None = None

    def start(self) -> None:
        r, w = os.pipe()
        os.set_blocking(w, False)
        self._w = w
        # (closed when the relay is collected, never while a request may still write to it: a
        # closed descriptor's number is soon another file's)
        weakref.finalize(self, os.close, w)
        threading.Thread(
            target=_relay, args=(r, self._action), name=self._name, daemon=True
        ).start()

    def request(self) -> None:
        """Have ``action`` called: safe from a signal handler while the relay runs. Handlers
        run in the main thread only: from any other thread (a job asking its worker to stop)
        ``action`` is called at once, as the caller expects."""
        w = self._w
        if w is not None and threading.current_thread() is threading.main_thread():
            try:
                os.write(w, b"s")
                return
            except OSError:  # (the relay ended meanwhile)
                pass
        self._action()

    def end(self) -> None:
        """The relay's thread ends; later requests call ``action`` directly."""
        w, self._w = self._w, None
        if w is not None:
            try:
                os.write(w, bytes([_QUIT]))
            except OSError:
                pass


def _relay(r: int, action: Callable[[], None]) -> None:
    try:
        while True:
            data = os.read(r, 64)
            if not data:
                return
            for byte in data:
                if byte == _QUIT:
                    return
                action()
    finally:
        os.close(r)
