"""Events on Redis: set once, seen by every waiter — also by one that arrives later.

::

    ready = Event("catalog:imported")
    ready.set({"rows": 1200})              # in the import job
    if ready.wait(timeout=30):             # in a request: True at once if already set
        ...
    await ready.await_(timeout=30)         # the same on the event loop

Unlike Pub/Sub, an event *stays set* until ``clear()``: a waiter that comes
after ``set()`` still sees it, and nothing is lost when a connection drops.
Waiters block reading the event's wake stream (no polling); ``set()`` adds
one entry there, which wakes all of them at once, and each re-reads the
state before it returns (a wake-up is a hint, the state the truth). Every
script declares every key it touches (a Cluster slot migration refuses or
runs it whole).
"""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

from ..holds.waits import BroadcastWait, Look, read_wake, wait_for
from ..keys import SignalKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import Command, EndsWaits, Run, Step, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_seconds, ms

_COMMON = ("common/broadcast",)
SET = Script("signals/event_set", includes=_COMMON)
WAIT = Script("signals/event_wait", includes=_COMMON)

log = logging.getLogger("django_redcoord.signals")

#: A waiter re-checks at least this often; its registration outlives its current block by this.
GRACE = 1.0


def to_json(data: Any) -> str:
    """Strict JSON (no NaN, no pickle), or a TypeError that says what is allowed."""
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(
            f"data must be JSON (dict, list, str, int, finite float, bool, None): {exc}"
        ) from None


class Event(UsesClient):
    """A named event: ``set()``, ``clear()``, ``is_set()``, ``wait()``; each with an
    ``a``-prefixed twin.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        keep: seconds the event lives after its last set or clear (default a day).
        client, prefix: as for a lock.
    """

    def __init__(
        self, name: str, *, keep: float = 86400.0, client: Any = None, prefix: str | None = None
    ) -> None:
        self.name = validate_name(name, "event name")
        self.keep = check_seconds(keep, "keep")
        self._client = client
        self.keys: SignalKeys = key_builder(prefix, client).event(self.name)

    def __repr__(self) -> str:
        return f"<Event {self.name!r}>"

    def set(self, data: Any = None) -> int:
        """Set the event (with optional JSON ``data``) and wake every waiter; returns how many
        were woken."""
        return run(self.client, self._set_steps("set", to_json(data)))

    async def aset(self, data: Any = None) -> int:
        """``set()`` on the event loop."""
        return await arun(self._async_client(), self._set_steps("set", to_json(data)))

    def clear(self) -> None:
        """Clear the event: later waiters wait for the next ``set()``."""
        run(self.client, self._set_steps("clear", ""))

    async def aclear(self) -> None:
        """``clear()`` on the event loop."""
        await arun(self._async_client(), self._set_steps("clear", ""))

    def _set_steps(self, op: str, data: str) -> Steps:
        k = self.keys
        woken = yield EndsWaits(
            Run(
                SET,
                [k.state, k.waiters, k.index, k.wake, k.probe],
                [op, data, self.name, ms(self.keep)],
                f"{op} event {self.name!r}",
            )
        )
        return int(woken)

    def is_set(self) -> bool:
        """True while the event is set (one round trip)."""
        return run(self.client, self._get_steps())[0]

    async def ais_set(self) -> bool:
        """``is_set()`` on the event loop."""
        return (await arun(self._async_client(), self._get_steps()))[0]

    def get(self) -> Any:
        """The data the event was set with, or None while it is not set."""
        return run(self.client, self._get_steps())[1]

    async def aget(self) -> Any:
        """``get()`` on the event loop."""
        return (await arun(self._async_client(), self._get_steps()))[1]

    def _get_steps(self) -> Steps:
        flag, data = yield Command(
            "HMGET", self.keys.state, "set", "data", operation=f"read event {self.name!r}"
        )
        is_set = as_text(flag or "") == "1"
        return is_set, (json.loads(as_text(data)) if is_set and data else None)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the event is set: True (at once if it already is); False when ``timeout``
        ran out."""
        client = self.client
        return run(client, self._wait_steps(timeout, max_block(client)))

    async def await_(self, timeout: float | None = None) -> bool:
        """``wait()`` on the event loop (``await`` is a keyword, hence the underscore)."""
        client = self._async_client()
        return await arun(client, self._wait_steps(timeout, max_block(client)))

    def _wait_steps(self, timeout: float | None, chunk: float) -> Steps:
        return wait_for(_EventWait(self), timeout, chunk)


class _EventWait(BroadcastWait):
    """One ``wait()`` on an event (the loop and its outage policy: :mod:`..holds.waits`)."""

    def __init__(self, event: Event) -> None:
        self.event = event
        k = event.keys
        self.token = secrets.token_urlsafe(9)
        self.wake = k.wake
        self.mark = "0-0"  # the wake stream's last entry at our last look: we read what comes after
        self.keys = [k.state, k.waiters, self.wake, k.probe]
        self.operation = f"wait for event {event.name!r}"
        self.seen = (
            ""  # the generation at our first look: a set() after it counts, even if cleared since
        )
        self.registered = False
        self.lost = False

    def check(self, final: bool, lease: float) -> Steps:
        mode = "cancel" if final else "wait"
        self.registered = (
            self.registered or not final
        )  # (from the moment it is sent: its outcome may be unknown)
        reply = yield Run(
            WAIT, self.keys, [mode, ms(lease + GRACE), self.seen, self.token], self.operation
        )
        self.registered = mode == "wait"
        if int(reply[0]) == 1:
            self.registered = False
            return Look(True, True)
        if final:
            return Look(True, False)
        gen = int(reply[1])
        if self.seen and gen < int(self.seen) and not self.lost:
            # The generation went back: Redis lost the event's data while we
            # waited (a restart without persistence, a failover, eviction).
            self.lost = True
            log.warning(
                "%s: Redis lost the event's data while it waited; it now reads as not set and the "
                "wait goes on for the next set() (a set() whose wake-up was lost with the data is "
                "lost)",
                self.operation,
            )
        if not self.seen or gen < int(self.seen):
            self.seen = str(
                gen
            )  # (after a loss: a set() from the new start counts, even if cleared since)
        self.mark = as_text(reply[2])
        return Look(False)

    def block(self, seconds: float) -> Step:
        return read_wake(
            self.wake, self.mark, seconds, self.operation, hub_prefix=self.event.keys.hub_prefix
        )

    def leave(self) -> Steps:
        if self.registered:
            yield EndsWaits(
                Run(
                    WAIT,
                    self.keys,
                    ["cancel", 1, "", self.token],
                    f"stop waiting for event {self.event.name!r}",
                )
            )
