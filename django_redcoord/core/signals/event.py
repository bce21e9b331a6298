"""Events on Redis: set once, seen by every waiter — also by one that arrives later.

::

    ready = Event("catalog:imported")
    ready.set({"rows": 1200})              # in the import job
    if ready.wait(timeout=30):             # in a request: True at once if already set
        ...
    await ready.await_(timeout=30)         # the same on the event loop

Unlike Pub/Sub, an event *stays set* until ``clear()``: a waiter that comes
after ``set()`` still sees it, and nothing is lost when a connection drops.
Waiters block on their own wake lists (no polling); ``set()`` wakes all of
them in one script, and each re-reads the state before it returns (a wake-up
is a hint, the state the truth).
"""

from __future__ import annotations

import json
import math
import secrets
import time
from typing import Any

from ..exceptions import CoordinationUnavailable
from ..keys import SignalKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import Blpop, Command, Run, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_seconds, check_wait, ms

_COMMON = ("common/broadcast",)
SET = Script("signals/event_set", includes=_COMMON)
WAIT = Script("signals/event_wait", includes=_COMMON)

#: A waiter re-checks at least this often; its registration outlives its current block by this.
GRACE = 1.0


def to_json(data: Any) -> str:
    """Strict JSON (no NaN, no pickle), or a TypeError that says what is allowed."""
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(f"data must be JSON (dict, list, str, int, finite float, bool, None): {exc}") from None


class Event(UsesClient):
    """A named event: ``set()``, ``clear()``, ``is_set()``, ``wait()``; each with an ``a``-prefixed twin.

    Args:
        name: letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        keep: seconds the event lives after its last set or clear (default a day).
        client, prefix: as for a lock.
    """

    def __init__(self, name: str, *, keep: float = 86400.0, client: Any = None, prefix: str | None = None) -> None:
        self.name = validate_name(name, "event name")
        self.keep = check_seconds(keep, "keep")
        self._client = client
        self.keys: SignalKeys = key_builder(prefix, client).event(self.name)

    def __repr__(self) -> str:
        return f"<Event {self.name!r}>"

    def set(self, data: Any = None) -> int:
        """Set the event (with optional JSON ``data``) and wake every waiter; returns how many were woken."""
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
        woken = yield Run(SET, [k.state, k.waiters, k.index], [op, data, self.name, ms(self.keep)], f"{op} event {self.name!r}")
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
        flag, data = yield Command("HMGET", self.keys.state, "set", "data", operation=f"read event {self.name!r}")
        is_set = as_text(flag or "") == "1"
        return is_set, (json.loads(as_text(data)) if is_set and data else None)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the event is set: True (at once if it already is); False when ``timeout`` ran out."""
        client = self.client
        return run(client, self._wait_steps(timeout, max_block(client)))

    async def await_(self, timeout: float | None = None) -> bool:
        """``wait()`` on the event loop (``await`` is a keyword, hence the underscore)."""
        client = self._async_client()
        return await arun(client, self._wait_steps(timeout, max_block(client)))

    def _wait_steps(self, timeout: float | None, chunk: float) -> Steps:
        timeout = check_wait(timeout)
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        k = self.keys
        wake = k.wake_prefix + secrets.token_urlsafe(9)
        keys = [k.state, k.waiters, wake]
        operation = f"wait for event {self.name!r}"
        registered, failures, seen = False, 0, ""
        try:
            while True:
                remaining = deadline - time.monotonic()
                mode = "wait" if remaining > 0 else "cancel"
                block = min(max(remaining, 0.0), chunk)
                try:
                    reply = yield Run(WAIT, keys, [mode, ms(block + GRACE), seen], operation)
                    registered = mode == "wait"
                    if int(reply[0]) == 1:
                        return True
                    if mode == "cancel":
                        return False
                    if not seen:
                        seen = str(int(reply[1]))  # a set() after this counts, even if cleared since
                    yield Blpop([wake], block, operation)
                    failures = 0
                except CoordinationUnavailable:
                    # A dropped connection (a failover, a proxy, CLIENT KILL): the
                    # state is in Redis, not in the connection; look again once.
                    failures += 1
                    if failures > 1 or deadline - time.monotonic() <= 0:
                        raise
        except BaseException:
            if registered:
                try:
                    yield Run(WAIT, keys, ["cancel", 1, ""], f"stop waiting for event {self.name!r}")
                except Exception:  # the original error matters more
                    pass
            raise
