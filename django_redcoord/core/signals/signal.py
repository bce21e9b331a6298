"""Signals on Redis: ``broadcast()`` to every waiter, or ``send()`` to exactly one, oldest first.

::

    jobs = Signal("thumbnails:ready")
    data = jobs.wait(timeout=30)              # a waiter: the data of the next signal (or None)
    jobs.send({"id": 7})                      # wakes exactly one waiter, the one waiting longest
    jobs.broadcast({"reload": True})          # wakes every waiter waiting now
    await jobs.await_(timeout=30)             # waiting on the event loop

A signal goes to the waiters waiting *now* (a waiter that comes later does
not see it: use an :class:`~.event.Event` for a state that stays, and a
:class:`~.topic.Topic` for messages that must not be lost). Delivery does not
ride on Pub/Sub: each waiter has a place in a FIFO and its own wake list in
Redis, and a signal is pushed onto that list, where it stays until the waiter
takes it — so a waiter whose connection drops (a failover, a proxy restart,
CLIENT KILL) finds it when it reconnects. Taking it moves it to the waiter's
in-flight list (``BLMOVE``), where it stays until the waiter's next call says
it arrived: a reply lost with a dropped connection is delivered again, not
lost. A waiter that dies stops renewing
its place and is skipped once the place lapses; a ``send()`` that reached a
waiter which then died is lost with it.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
import time
from typing import Any

from ..exceptions import CoordinationUnavailable
from ..holds.identity import host
from ..keys import SignalKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import Blocking, Run, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_wait, ms
from .event import GRACE, to_json

_COMMON = ("common/waiters", "common/broadcast")
WAIT = Script("signals/signal_wait", includes=_COMMON)
SEND = Script("signals/signal_send", includes=_COMMON)


class Signal(UsesClient):
    """A named signal: ``wait()``, ``send()``, ``broadcast()``; each with an ``a``-prefixed twin.

    One waiter per object at a time: threads and tasks that wait at once
    each use their own ``Signal`` object (a second concurrent ``wait()`` on
    one object raises RuntimeError). Signals that reached this object's wake
    list while it was not waiting are taken by its next ``wait()``.

    Args:
        name: letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        client, prefix: as for a lock.
    """

    def __init__(self, name: str, *, client: Any = None, prefix: str | None = None) -> None:
        self.name = validate_name(name, "signal name")
        self._client = client
        self.keys: SignalKeys = key_builder(prefix, client).signal(self.name)
        self._token = secrets.token_urlsafe(9)
        self._waiting = threading.Lock()
        self._settle = ""  # what our last move to the in-flight list left to settle: '', 'done' or 'recover'

    def __repr__(self) -> str:
        return f"<Signal {self.name!r}>"

    # -- sending ------------------------------------------------------------------------

    def send(self, data: Any = None) -> int:
        """Deliver ``data`` (JSON) to the one waiter that has waited longest; returns 1, or 0 if nobody waits."""
        return run(self.client, self._send_steps("one", data))

    async def asend(self, data: Any = None) -> int:
        """``send()`` on the event loop."""
        return await arun(self._async_client(), self._send_steps("one", data))

    def broadcast(self, data: Any = None) -> int:
        """Deliver ``data`` (JSON) to every waiter waiting now; returns how many."""
        return run(self.client, self._send_steps("all", data))

    async def abroadcast(self, data: Any = None) -> int:
        """``broadcast()`` on the event loop."""
        return await arun(self._async_client(), self._send_steps("all", data))

    def _send_steps(self, how: str, data: Any) -> Steps:
        sent = yield Run(SEND, [self.keys.waiters], [how, "m:" + to_json(data)], f"signal {self.name!r}")
        return int(sent)

    # -- waiting ------------------------------------------------------------------------

    def wait(self, timeout: float | None = None, default: Any = None) -> Any:
        """Block until a signal comes: its data; ``default`` when ``timeout`` seconds ran out.

        None waits forever. A dropped connection is ridden out once (the
        signal waits in Redis); a second failure in a row raises
        CoordinationUnavailable.
        """
        client = self.client
        return run(client, self._wait_steps(timeout, default, max_block(client)))

    async def await_(self, timeout: float | None = None, default: Any = None) -> Any:
        """``wait()`` on the event loop (``await`` is a keyword, hence the underscore)."""
        client = self._async_client()
        return await arun(client, self._wait_steps(timeout, default, max_block(client)))

    def _wait_steps(self, timeout: float | None, default: Any, chunk: float) -> Steps:
        timeout = check_wait(timeout)
        if not self._waiting.acquire(blocking=False):
            raise RuntimeError(f"{self!r} is already waiting: use one Signal object per waiting thread or task")
        try:
            return (yield from self._wait_loop(timeout, default, chunk))
        finally:
            self._waiting.release()

    def _wait_loop(self, timeout: float | None, default: Any, chunk: float) -> Steps:
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        k = self.keys
        wake = k.wake_prefix + self._token
        inflight = wake + ":inflight"
        keys = [k.waiters, wake, inflight, k.index]
        operation = f"wait for signal {self.name!r}"
        mode, failures = "queue", 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                block = min(remaining, chunk)
                try:
                    reply = yield Run(WAIT, keys, self._wait_args(mode, block), operation)
                except CoordinationUnavailable:
                    failures += 1  # a dropped connection: the state is in Redis; look again once
                    if failures > 1:
                        raise
                    continue
                self._settle = ""
                if reply[1]:  # the signal our last move took, whose reply was lost
                    self._settle = "done"
                    return _data(reply[1])
                mode = "wait"
                try:
                    # The signal moves to our in-flight list as we take it: a reply
                    # lost to a dropped connection leaves it there, not nowhere.
                    moved = yield Blocking(
                        "BLMOVE", wake, inflight, "LEFT", "RIGHT", f"{max(0.001, block):.3f}", operation=operation
                    )
                    failures = 0
                except CoordinationUnavailable:
                    failures += 1
                    self._settle = "recover"  # the next call returns what the lost reply carried, if anything
                    if failures > 1:
                        raise
                    continue
                if moved is not None:
                    self._settle = "done"
                    return _data(moved)
            # Time is up: leave the queue, and take a signal that came meanwhile
            # (moved in flight: if this reply is lost, the next wait gets it).
            self._settle = "recover"
            reply = yield Run(WAIT, keys, self._wait_args("cancel", 0), f"stop waiting for signal {self.name!r}")
            self._settle = ""
            if reply[1]:
                self._settle = "done"
                return _data(reply[1])
            return default
        except BaseException:
            # Interrupted or failed: leave the queue only; a signal that came
            # stays on our wake list for our next wait.
            try:
                yield Run(WAIT, keys, self._wait_args("leave", 0), f"stop waiting for signal {self.name!r}")
            except Exception:  # the original error matters more
                pass
            raise

    def _wait_args(self, mode: str, block: float) -> list[Any]:
        return [
            self._token, mode, ms(block + GRACE), self.name, host(), os.getpid(), threading.current_thread().name,
            self._settle,
        ]  # fmt: skip


def _data(payload: Any) -> Any:
    text = as_text(payload)
    return json.loads(text[2:]) if text.startswith("m:") else None
