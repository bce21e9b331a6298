"""Barriers on Redis: N parties meet, none goes on before all arrived, and none hangs when one dies.

::

    barrier = Barrier("reindex:shards", parties=4)
    index = barrier.wait(timeout=60)     # in each of four workers: returns 0..3 once all four arrived
    await barrier.await_(timeout=60)     # the same on the event loop

Like :class:`threading.Barrier`, across processes and machines, and cyclic:
once it trips, the next ``wait()`` calls meet again. A party that arrived
renews its arrival at every re-check while it waits; if it dies or is paused
past its lease, the barrier breaks and every waiting party raises
:class:`~django_redcoord.core.exceptions.BarrierBroken` within one lease —
instead of waiting for a party that will never come. As with
``threading.Barrier``, a party whose ``timeout`` runs out (or that is
cancelled) breaks the barrier too, and ``reset()`` breaks the current wait
and starts afresh. Waiting blocks on a wake list (no polling); the state is
re-read after every wake-up.
"""

from __future__ import annotations

import math
import os
import secrets
import threading
import time
from typing import Any

from ..exceptions import BarrierBroken
from ..holds.identity import host
from ..keys import LatchKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import Blpop, Run, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_count, check_seconds, check_wait, ms

_COMMON = ("common/broadcast", "latches/barrier_common")
ARRIVE = Script("latches/barrier_arrive", includes=_COMMON)
CHECK = Script("latches/barrier_check", includes=_COMMON)
RESET = Script("latches/barrier_reset", includes=_COMMON)
INSPECT = Script("latches/barrier_inspect", includes=_COMMON)


class Barrier(UsesClient):
    """``parties`` processes (or threads, or tasks) meet at ``name``.

    Args:
        name: letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        parties: how many must arrive to trip it (2 to 10,000). Every party
            should say the same.
        ttl: seconds of an arrived party's lease (default 10): a waiting
            party renews it every ttl/3; one that stops for ttl (it died, or
            was paused) breaks the barrier for the others.
        keep: seconds the barrier lives after its last use (default a day).
        client, prefix: as for a lock.
    """

    def __init__(
        self, name: str, parties: int, *, ttl: float = 10.0, keep: float = 86400.0, client: Any = None,
        prefix: str | None = None,
    ) -> None:  # fmt: skip
        self.name = validate_name(name, "barrier name")
        self.parties = check_count(parties, "parties", 2, 10_000)
        self.ttl = check_seconds(ttl, "ttl")
        self.keep = check_seconds(keep, "keep")
        self._client = client
        self.keys: LatchKeys = key_builder(prefix, client).barrier(self.name)

    def __repr__(self) -> str:
        return f"<Barrier {self.name!r} parties={self.parties}>"

    def wait(self, timeout: float | None = None) -> int:
        """Arrive and block until every party has: returns this party's arrival index (0 to parties - 1).

        Raises BarrierBroken when a party died, timed out or gave up, when
        the barrier was reset or aborted, or when ``timeout`` seconds ran out
        here (which breaks it for the others too). None waits forever.
        """
        client = self.client
        return run(client, self._wait_steps(timeout, min(max_block(client), self.ttl / 3)))

    async def await_(self, timeout: float | None = None) -> int:
        """``wait()`` on the event loop (``await`` is a keyword, hence the underscore)."""
        client = self._async_client()
        return await arun(client, self._wait_steps(timeout, min(max_block(client), self.ttl / 3)))

    def _wait_steps(self, timeout: float | None, chunk: float) -> Steps:
        timeout = check_wait(timeout)
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        k = self.keys
        token = secrets.token_urlsafe(9)
        wake = k.wake_prefix + token
        reply = yield Run(
            ARRIVE, [k.state, k.parties, k.index, wake],
            [token, self.parties, ms(self.ttl), host(), os.getpid(), threading.current_thread().name,
             self.name, ms(self.keep)],
            f"arrive at barrier {self.name!r}",
        )  # fmt: skip
        status = int(reply[0])
        if status == -1:
            raise self._broken(as_text(reply[1]))
        index, gen = int(reply[1]), int(reply[2])
        if status == 1:
            return index
        next_expiry = int(reply[3]) / 1000.0
        check = [k.state, k.parties, wake]
        try:
            while True:
                remaining = deadline - time.monotonic()
                block = min(max(remaining, 0.0), chunk)
                if remaining > 0:
                    # Until the last party trips it, a break, or an arrival's lease may have run out.
                    yield Blpop([wake], min(block, next_expiry + 0.002) if next_expiry else block, f"wait at barrier {self.name!r}")
                mode = "wait" if deadline - time.monotonic() > 0 else "timeout"
                reply = yield Run(
                    CHECK, check, [token, gen, mode, ms(self.ttl)], f"wait at barrier {self.name!r}"
                )
                status = int(reply[0])
                if status == 1:
                    return index
                if status == -1:
                    raise self._broken(as_text(reply[1]))
                next_expiry = int(reply[1]) / 1000.0
        except BarrierBroken:
            raise
        except BaseException:  # interrupted or cancelled: the others cannot trip it now
            try:
                yield Run(CHECK, check, [token, gen, "cancel", 1], f"leave barrier {self.name!r}")
            except Exception:  # the original error matters more
                pass
            raise

    def reset(self) -> None:
        """Back to empty and whole; the parties waiting now raise BarrierBroken."""
        run(self.client, self._reset_steps("reset", "the barrier was reset"))

    async def areset(self) -> None:
        """``reset()`` on the event loop."""
        await arun(self._async_client(), self._reset_steps("reset", "the barrier was reset"))

    def abort(self, reason: str = "aborted") -> None:
        """Break the barrier: the parties waiting now (and arriving, until ``reset()``) raise BarrierBroken."""
        run(self.client, self._reset_steps("abort", str(reason)[:500]))

    async def aabort(self, reason: str = "aborted") -> None:
        """``abort()`` on the event loop."""
        await arun(self._async_client(), self._reset_steps("abort", str(reason)[:500]))

    def _reset_steps(self, mode: str, why: str) -> Steps:
        yield Run(RESET, [self.keys.state, self.keys.parties], [mode, why], f"{mode} barrier {self.name!r}")

    def state(self) -> dict[str, Any]:
        """``{"generation", "broken", "waiting": [...]}`` now (one round trip)."""
        return run(self.client, self._inspect_steps())

    async def astate(self) -> dict[str, Any]:
        """``state()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps())

    def _inspect_steps(self) -> Steps:
        reply = yield Run(INSPECT, [self.keys.state, self.keys.parties], [], f"inspect barrier {self.name!r}")
        return state_from_reply(reply)

    def _broken(self, reason: str) -> BarrierBroken:
        return BarrierBroken(f"barrier {self.name!r} is broken: {reason}", name=self.name, reason=reason)


def state_from_reply(reply: Any) -> dict[str, Any]:
    """A ``latches/barrier_inspect.lua`` reply as a dict (see :meth:`Barrier.state`)."""
    gen, broken, *flat = reply
    waiting = [
        {"token": as_text(flat[i]), "ttl": int(flat[i + 1]) / 1000.0, "host": as_text(flat[i + 2]),
         "pid": int(flat[i + 3]), "thread": as_text(flat[i + 4])}
        for i in range(0, len(flat), 5)
    ]  # fmt: skip
    return {"generation": int(gen), "broken": as_text(broken), "waiting": waiting}
