"""Barriers on Redis: N parties meet, none goes on before all arrived, and none hangs when one dies.

::

    barrier = Barrier("reindex:shards", parties=4)
    index = barrier.wait(timeout=60)     # in each of four workers: returns 0..3 once all four
    arrived
    await barrier.await_(timeout=60)     # the same on the event loop

Like :class:`threading.Barrier`, across processes and machines, and cyclic:
once it trips, the next ``wait()`` calls meet again. A party that arrived
renews its arrival at every re-check while it waits; if it dies or is paused
past its lease, the barrier breaks and every waiting party raises
:class:`~django_redcoord.core.exceptions.BarrierBroken` within one lease —
instead of waiting for a party that will never come. As with
``threading.Barrier``, a party whose ``timeout`` runs out (or that is
cancelled) breaks the barrier too, and ``reset()`` breaks the current wait
and starts afresh. Waiting blocks reading the barrier's wake stream (no
polling; a trip, break or reset adds one entry, which wakes every party);
the state is re-read after every wake-up. A dropped connection or a short outage is
ridden out (:mod:`..holds.waits`); when Redis loses the barrier's data the
waiting parties see its epoch change and raise BarrierBroken saying so.
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
from ..holds.waits import BroadcastWait, Look, read_wake, wait_steps
from ..keys import LatchKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import EndsWaits, Run, Step, Steps, Within, arun, run
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
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        parties: how many must arrive to trip it (2 to 10,000). Every party
            should say the same.
        ttl: seconds of an arrived party's lease (default 10): a waiting
            party renews it every ttl/3; one that stops for ttl (it died, or
            was paused) breaks the barrier for the others.
        keep: seconds the barrier lives after its last use (default a day).
        client, prefix: as for a lock.
    """

    def __init__(
        self,
        name: str,
        parties: int,
        *,
        ttl: float = 10.0,
        keep: float = 86400.0,
        client: Any = None,
        prefix: str | None = None,
    ) -> None:
        self.name = validate_name(name, "barrier name")
        self.parties = check_count(parties, "parties", 2, 10_000)
        self.ttl = check_seconds(ttl, "ttl")
        self.keep = check_seconds(keep, "keep")
        self._client = client
        self.keys: LatchKeys = key_builder(prefix, client).barrier(self.name)

    def __repr__(self) -> str:
        return f"<Barrier {self.name!r} parties={self.parties}>"

    def wait(self, timeout: float | None = None) -> int:
        """Arrive and block until every party has: returns this party's arrival index (0 to
        parties - 1).

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
        wake = k.wake
        yield Within(
            deadline
        )  # the arrival, the wait and the leave end by deadline + one socket timeout
        try:
            reply = yield EndsWaits(
                Run(  # the last arrival trips it: the pool's reserve serves arrivals
                    ARRIVE,
                    [k.state, k.parties, k.index, wake, k.probe],
                    [
                        token,
                        self.parties,
                        ms(self.ttl),
                        host(),
                        os.getpid(),
                        threading.current_thread().name,
                        self.name,
                        ms(self.keep),
                    ],
                    f"arrive at barrier {self.name!r}",
                )
            )
        except (
            BaseException
        ):  # interrupted or failed: the arrival may be recorded; undo it if it is
            try:
                yield EndsWaits(
                    Run(
                        CHECK,
                        [k.state, k.parties, wake, k.probe, k.index],
                        [token, "", "cancel", 1, "", ms(self.keep), self.name],
                        f"leave barrier {self.name!r}",
                    )
                )
            except Exception:  # the original error matters more
                pass
            raise
        status = int(reply[0])
        if status == -1:
            raise self._broken(as_text(reply[1]))
        index, gen = int(reply[1]), int(reply[2])
        if status == 1:
            return index
        waiter = _BarrierWait(self, token, wake, gen, as_text(reply[4]))
        waiter.mark = as_text(reply[5])
        waiter.next_expiry = int(reply[3]) / 1000.0
        yield from wait_steps(waiter, deadline, chunk)
        return index

    def reset(self) -> None:
        """Back to empty and whole; the parties waiting now raise BarrierBroken."""
        run(self.client, self._reset_steps("reset", "the barrier was reset"))

    async def areset(self) -> None:
        """``reset()`` on the event loop."""
        await arun(self._async_client(), self._reset_steps("reset", "the barrier was reset"))

    def abort(self, reason: str = "aborted") -> None:
        """Break the barrier: the parties waiting now (and arriving, until ``reset()``) raise
        BarrierBroken."""
        run(self.client, self._reset_steps("abort", str(reason)[:500]))

    async def aabort(self, reason: str = "aborted") -> None:
        """``abort()`` on the event loop."""
        await arun(self._async_client(), self._reset_steps("abort", str(reason)[:500]))

    def _reset_steps(self, mode: str, why: str) -> Steps:
        k = self.keys
        yield EndsWaits(
            Run(
                RESET,
                [k.state, k.parties, k.wake, k.probe],
                [mode, why, ms(self.keep)],
                f"{mode} barrier {self.name!r}",
            )
        )

    def state(self) -> dict[str, Any]:
        """``{"generation", "broken", "waiting": [...]}`` now (one round trip)."""
        return run(self.client, self._inspect_steps())

    async def astate(self) -> dict[str, Any]:
        """``state()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps())

    def _inspect_steps(self) -> Steps:
        reply = yield Run(
            INSPECT, [self.keys.state, self.keys.parties], [], f"inspect barrier {self.name!r}"
        )
        return state_from_reply(reply)

    def _broken(self, reason: str) -> BarrierBroken:
        return BarrierBroken(
            f"barrier {self.name!r} is broken: {reason}", name=self.name, reason=reason
        )


class _BarrierWait(BroadcastWait):
    """An arrived party's wait (the loop and its outage policy: :mod:`..holds.waits`).

    Its look renews the party's arrival; a blocked wait that loses its
    connection is issued again (the arrival lives in Redis), so a connection
    blip breaks nothing. Time running out, or an interruption, breaks the
    barrier (as ``threading.Barrier``).
    """

    outcomes = (BarrierBroken,)

    def __init__(self, barrier: Barrier, token: str, wake: str, gen: int, epoch: str) -> None:
        self.barrier, self.token, self.wake, self.gen, self.epoch = barrier, token, wake, gen, epoch
        k = barrier.keys
        self.keys = [k.state, k.parties, wake, k.probe, k.index]
        self.operation = f"wait at barrier {barrier.name!r}"
        self.next_expiry: float | None = 0.0
        self.mark = "0-0"  # the wake stream's last entry at our last look: we read what comes after

    def _check(self, mode: str, lease_ms: int) -> Run:
        b = self.barrier
        return Run(
            CHECK,
            self.keys,
            [self.token, self.gen, mode, lease_ms, self.epoch, ms(b.keep), b.name],
            self.operation,
        )

    def check(self, final: bool, lease: float) -> Steps:
        if not final and lease > 0 and self.next_expiry is not None:
            # Just arrived: block first (the arrival's reply was the first look).
            expiry, self.next_expiry = self.next_expiry, None
            return Look(False, block=expiry + 0.002 if expiry else None)
        reply = yield self._check("timeout" if final else "wait", ms(self.barrier.ttl))
        status = int(reply[0])
        if status == 1:
            return Look(True)
        if status == -1:
            raise self.barrier._broken(as_text(reply[1]))
        if final:  # (a 'timeout' look always ends: tripped or broken)
            raise self.barrier._broken("a party timed out waiting")
        expiry = int(reply[1]) / 1000.0
        self.mark = as_text(reply[2])
        return Look(False, block=expiry + 0.002 if expiry else None)

    def block(self, seconds: float) -> Step:
        return read_wake(
            self.wake, self.mark, seconds, self.operation, hub_prefix=self.barrier.keys.hub_prefix
        )

    def leave(self) -> Steps:  # interrupted or cancelled: the others cannot trip it now
        yield EndsWaits(self._check("cancel", 1))


def state_from_reply(reply: Any) -> dict[str, Any]:
    """A ``latches/barrier_inspect.lua`` reply as a dict (see :meth:`Barrier.state`)."""
    gen, broken, *flat = reply
    waiting = [
        {
            "token": as_text(flat[i]),
            "ttl": int(flat[i + 1]) / 1000.0,
            "host": as_text(flat[i + 2]),
            "pid": int(flat[i + 3]),
            "thread": as_text(flat[i + 4]),
        }
        for i in range(0, len(flat), 5)
    ]
    return {"generation": int(gen), "broken": as_text(broken), "waiting": waiting}
