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
ride on Pub/Sub: each waiter has a place in a FIFO in Redis; ``send()`` takes
the oldest live place and stores the signal for that waiter (in the signal's
``deliveries`` hash, by the waiter's token), where it stays until the waiter
says it got it — so a waiter whose connection drops (a failover, a proxy
restart, CLIENT KILL) finds it when it reconnects, and a reply lost with a
dropped connection is returned again, not lost, never twice. The sender then
adds one entry naming the recipient to the signal's wake stream, which every
blocked waiter reads (``XREAD BLOCK``): the recipient looks at once, the
others block again. Every script declares every key it touches (a Cluster
slot migration refuses it or runs it whole). A waiter that dies stops
renewing its place and is skipped once the place lapses; a ``send()`` that
reached a waiter which then died is lost with it (forgotten a minute later).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
import time
from typing import Any

from ..holds.identity import host
from ..holds.waits import BroadcastWait, Look, read_wake, wait_steps, wake_entries
from ..keys import SignalKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import EndsWaits, Run, Step, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_wait, ms
from .event import GRACE, to_json

_COMMON = ("common/waiters", "common/broadcast", "signals/signal_common")
WAIT = Script("signals/signal_wait", includes=_COMMON)
SEND = Script("signals/signal_send", includes=_COMMON)


class Signal(UsesClient):
    """A named signal: ``wait()``, ``send()``, ``broadcast()``; each with an ``a``-prefixed twin.

    One waiter per object at a time: threads and tasks that wait at once
    each use their own ``Signal`` object (a second concurrent ``wait()`` on
    one object raises RuntimeError). Signals sent to this object that it had
    not taken when its wait ended are taken by its next ``wait()``.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        client, prefix: as for a lock.
    """

    def __init__(self, name: str, *, client: Any = None, prefix: str | None = None) -> None:
        self.name = validate_name(name, "signal name")
        self._client = client
        self.keys: SignalKeys = key_builder(prefix, client).signal(self.name)
        self._token = secrets.token_urlsafe(9)
        self._waiting = threading.Lock()
        self._settle = (
            ""  # the id of the signal our last look returned (we got it: the next call forgets it)
        )

    def __repr__(self) -> str:
        return f"<Signal {self.name!r}>"

    # -- sending ------------------------------------------------------------------------

    def send(self, data: Any = None) -> int:
        """Deliver ``data`` (JSON) to the one waiter that has waited longest; returns 1, or 0 if
        nobody waits."""
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
        k = self.keys
        sent = yield Run(
            SEND,
            [k.waiters, k.deliveries, k.due, k.wake, k.probe],
            [how, "m:" + to_json(data)],
            f"signal {self.name!r}",
        )
        return int(sent)

    # -- waiting ------------------------------------------------------------------------

    def wait(self, timeout: float | None = None, default: Any = None) -> Any:
        """Block until a signal comes: its data; ``default`` when ``timeout`` seconds ran out.

        None waits forever. A dropped connection or an outage is ridden out
        while the wait lasts (the signal waits in Redis); CoordinationUnavailable
        is raised when the wait runs out during an outage.
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
            raise RuntimeError(
                f"{self!r} is already waiting: use one Signal object per waiting thread or task"
            )
        try:
            return (yield from self._wait_loop(timeout, default, chunk))
        finally:
            self._waiting.release()

    def _wait_loop(self, timeout: float | None, default: Any, chunk: float) -> Steps:
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        return (yield from wait_steps(_SignalWait(self, default), deadline, chunk))

    def _wait_args(self, mode: str, block: float) -> list[Any]:
        return [
            self._token,
            mode,
            ms(block + GRACE),
            self.name,
            host(),
            os.getpid(),
            threading.current_thread().name,
            self._settle,
        ]


class _SignalWait(BroadcastWait):
    """One ``wait()`` on a signal (the loop and its outage policy: :mod:`..holds.waits`).

    A look takes the oldest signal sent to this waiter (it stays stored until
    the next call names its id: a reply lost with a dropped connection is
    returned by the next look, never lost, never twice), or takes (or renews)
    the waiter's place. The blocked wait reads the signal's wake stream: an
    entry naming this waiter (or every waiter) ends it; one for another waiter
    blocks again.
    """

    def __init__(self, signal: Signal, default: Any) -> None:
        self.signal, self.default = signal, default
        k = signal.keys
        self.wake = k.wake
        self.mark = "0-0"  # the wake stream's last entry at our last look: we read what comes after
        self.keys = [k.waiters, k.deliveries, k.due, k.wake, k.index, k.probe]
        self.operation = f"wait for signal {signal.name!r}"
        self.mode = "queue"

    def _got(self, reply: Any) -> Any:
        """The look's reply: (True, data) when it returned a signal (settled by the next call)."""
        sig = self.signal
        sig._settle = ""  # (the reply came: what it settled is settled)
        if reply[1]:
            sig._settle = as_text(reply[0])
            return True, _data(reply[1])
        return False, None

    def check(self, final: bool, lease: float) -> Steps:
        sig = self.signal
        if not final:
            reply = yield Run(WAIT, self.keys, sig._wait_args(self.mode, lease), self.operation)
            got, data = self._got(reply)
            if got:
                return Look(True, data)
            self.mode = "wait"
            self.mark = as_text(reply[2])
            return Look(False)
        # Time is up: leave the queue, and take a signal that came meanwhile
        # (it stays stored until our next call: if this reply is lost, the next wait gets it).
        reply = yield EndsWaits(
            Run(
                WAIT,
                self.keys,
                sig._wait_args("cancel", 0),
                f"stop waiting for signal {sig.name!r}",
            )
        )
        got, data = self._got(reply)
        return Look(True, data if got else self.default)

    def block(self, seconds: float) -> Step:
        return read_wake(
            self.wake, self.mark, seconds, self.operation, hub_prefix=self.signal.keys.hub_prefix
        )

    def woken(self, reply: Any) -> Look | None:
        entries = wake_entries(reply)
        if not entries:
            return None  # the chunk ran out: look again
        self.mark = entries[-1][0]
        token = self.signal._token
        if len(entries) >= 32 or any(fields.get("t") in ("*", token) for _, fields in entries):
            # ours (or everyone's; or so many that ours may have been trimmed): the look takes it
            return None
        return Look(False)  # for another waiter: block again

    def leave(self) -> Steps:
        # Interrupted or failed: leave the queue only; a signal sent to us
        # stays stored for our next wait.
        yield EndsWaits(
            Run(
                WAIT,
                self.keys,
                self.signal._wait_args("leave", 0),
                f"stop waiting for signal {self.signal.name!r}",
            )
        )


def _data(payload: Any) -> Any:
    text = as_text(payload)
    return json.loads(text[2:]) if text.startswith("m:") else None
