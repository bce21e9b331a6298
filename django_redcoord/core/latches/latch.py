"""Count-down latches on Redis: wait until N things are done, and learn at once when one cannot be.

::

    latch = CountDownLatch("import:42", count=3)
    # in each of three workers:
    with latch.party():              # joins (a lease, renewed while it works)
        import_part(i)               # the block ends: counts down; it raised: the latch breaks
    # in the web request that waits:
    if latch.wait(timeout=60): ...   # True once open; LatchBroken if a party died or failed

**No hanging waiters.** A party that joins holds a lease (renewed by a
watchdog thread, or an asyncio task after ``ajoin``) until it counts down.
If it dies or is paused past its lease before counting down, the latch
breaks, and every waiter raises :class:`~django_redcoord.core.exceptions.LatchBroken`
within one lease — instead of waiting for a count-down that will never come.
Waiters block reading the latch's wake stream (no polling); a count-down
that opens the latch, or a break, adds one entry there, which wakes all of
them at once, and each re-reads the
state (the wake-up is a hint, the state the truth), so nothing is missed
across reconnects. ``count_down()`` without joining counts down anonymously
(no lease: nobody notices if such a party dies).

**Faults.** A wait rides out a dropped connection or an outage (see
:mod:`..holds.waits`). When Redis loses the latch's data (a restart without
persistence, a failover, eviction), its waiters see the latch's epoch
change and its parties find their entries gone: the latch breaks with a
reason that says so, instead of silently counting from the start again.
**Open stays open:** once open, a surplus party that fails or dies breaks
nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from ..exceptions import LatchBroken, LockNotOwned
from ..holds.hold import Hold
from ..holds.waits import BroadcastWait, Look, read_wake, wait_for
from ..keys import KeyBuilder, LatchKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import EndsWaits, Run, Step, Steps, arun, run
from ..transport.scripts import Script
from ..values import check_count, check_seconds, ms

_COMMON = ("common/broadcast", "latches/common")
JOIN = Script("latches/join", includes=_COMMON)
COUNT_DOWN = Script("latches/count_down", includes=_COMMON)
RENEW = Script("latches/renew", includes=_COMMON)
CHECK = Script("latches/check", includes=_COMMON)
ABORT = Script("latches/abort", includes=_COMMON)
INSPECT = Script("latches/inspect", includes=_COMMON)

# : A waiter re-checks at least this often and its registration outlives its current block by this
# much.
_GRACE = 1.0


class CountDownLatch(UsesClient):
    """A latch that opens once ``count`` count-downs have happened.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        count: the count-downs it waits for (1 to a million); used when the
            latch is first used (a latch keeps its count until it expires).
        ttl: seconds of a party's lease (default 30): a party that stops
            renewing it for that long breaks the latch.
        keep: seconds the latch lives after its last use (default a day):
            then it is forgotten (and a new one of that name starts afresh).
        client, prefix: as for a lock.
    """

    def __init__(
        self,
        name: str,
        count: int,
        *,
        ttl: float = 30.0,
        keep: float = 86400.0,
        client: Any = None,
        prefix: str | None = None,
    ) -> None:
        self.name = validate_name(name, "latch name")
        self.count = check_count(count, "count", 1, 1_000_000)
        self.ttl = check_seconds(ttl, "ttl")
        self.keep = check_seconds(keep, "keep")
        self._client = client
        self.keys: LatchKeys = key_builder(prefix, client).latch(self.name)
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"<CountDownLatch {self.name!r} count={self.count}>"

    def _args(self) -> list[Any]:
        return [self.count, ms(self.keep)]

    # -- parties ------------------------------------------------------------------

    def party(
        self,
        *,
        ttl: float | None = None,
        auto_renew: bool = True,
        on_lost: Callable[[Any], Any] | None = None,
    ) -> LatchParty:
        """A party of this latch: ``join()`` it (or use it in ``with`` / ``async with``), then
        ``count_down()``."""
        return LatchParty(
            self, ttl=self.ttl if ttl is None else ttl, auto_renew=auto_renew, on_lost=on_lost
        )

    def count_down(self) -> bool:
        """Count down once, without a party's lease. Returns True if this opened the latch.

        Raises LatchBroken if it is broken (nothing is counted).
        """
        return run(self.client, self._count_down_steps())

    async def acount_down(self) -> bool:
        """``count_down()`` on the event loop."""
        return await arun(self._async_client(), self._count_down_steps())

    def _count_down_steps(self) -> Steps:
        k = self.keys
        result = yield EndsWaits(
            Run(  # it may open the latch: the pool's reserve serves it
                COUNT_DOWN,
                [k.state, k.parties, k.waiters, k.index, k.wake, k.probe],
                ["", self.name, *self._args()],
                f"count down latch {self.name!r}",
            )
        )
        if int(result) == 4:
            state = yield from self._inspect_steps()
            raise self._broken(state["broken"])
        return int(result) == 2

    # -- waiting --------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the latch opens: True; False when ``timeout`` seconds ran out.

        ``timeout=None`` waits forever, 0 only looks. Raises LatchBroken as
        soon as the latch breaks (a party died or failed, or Redis lost its
        data). A dropped connection or an outage is ridden out while the wait
        lasts; CoordinationUnavailable when the wait ran out during one.
        """
        client = self.client
        return run(client, self._wait_steps(timeout, max_block(client)))

    async def await_(self, timeout: float | None = None) -> bool:
        """``wait()`` on the event loop (``await`` is a keyword, hence the underscore)."""
        client = self._async_client()
        return await arun(client, self._wait_steps(timeout, max_block(client)))

    def _wait_steps(self, timeout: float | None, chunk: float) -> Steps:
        return wait_for(_LatchWait(self), timeout, chunk)

    # -- inspection and operation -------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """``{"count", "initial", "broken", "waiters", "parties": [...]}`` now (one round trip)."""
        return run(self.client, self._inspect_steps())

    async def astate(self) -> dict[str, Any]:
        """``state()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps())

    def abort(self, reason: str = "aborted") -> None:
        """Break the latch on purpose: every waiter raises LatchBroken with ``reason``.

        An open latch stays open: aborting it does nothing."""
        run(self.client, self._abort_steps(reason, ""))

    async def aabort(self, reason: str = "aborted") -> None:
        """``abort()`` on the event loop."""
        await arun(self._async_client(), self._abort_steps(reason, ""))

    def _abort_steps(self, reason: str, token: str) -> Steps:
        k = self.keys
        yield EndsWaits(
            Run(
                ABORT,
                [k.state, k.parties, k.waiters, k.index, k.wake, k.probe],
                [str(reason)[:500], token, self.count, self.name, ms(self.keep)],
                f"abort latch {self.name!r}",
            )
        )

    def _inspect_steps(self) -> Steps:
        k = self.keys
        reply = yield Run(
            INSPECT, [k.state, k.parties, k.waiters], [], f"inspect latch {self.name!r}"
        )
        return state_from_reply(reply)

    def _broken(self, reason: str) -> LatchBroken:
        return LatchBroken(
            f"latch {self.name!r} is broken: {reason}", name=self.name, reason=reason
        )


class _LatchWait(BroadcastWait):
    """One ``wait()`` on a latch (the loop and its outage policy: :mod:`..holds.waits`)."""

    outcomes = (LatchBroken,)

    def __init__(self, latch: CountDownLatch) -> None:
        self.latch = latch
        k = latch.keys
        self.token = secrets.token_urlsafe(9)
        self.wake = k.wake
        self.mark = "0-0"  # the wake stream's last entry at our last look: we read what comes after
        self.keys = [k.state, k.parties, k.waiters, k.index, self.wake, k.probe]
        self.operation = f"wait for latch {latch.name!r}"
        self.epoch = (
            ""  # the latch's epoch at our first look: another one later means Redis lost its data
        )
        self.registered = False

    def _args(self, mode: str, lease: float) -> list[Any]:
        latch = self.latch
        return [
            latch.count,
            mode,
            ms(lease + _GRACE),
            latch.name,
            ms(latch.keep),
            self.epoch,
            self.token,
        ]

    def check(self, final: bool, lease: float) -> Steps:
        mode = "cancel" if final else "wait"
        self.registered = (
            self.registered or not final
        )  # (from the moment it is sent: its outcome may be unknown)
        reply = yield Run(CHECK, self.keys, self._args(mode, lease), self.operation)
        self.registered = mode == "wait"
        status = int(reply[0])
        if status == 1:
            return Look(True, True)
        if status == -1:
            self.registered = False
            raise self.latch._broken(as_text(reply[1]))
        if final:
            return Look(True, False)
        self.epoch = self.epoch or as_text(reply[3])
        self.mark = as_text(reply[4])
        next_expiry = int(reply[2]) / 1000.0
        # Block until a count-down opens it or a break, or until a party's
        # lease may have run out (then the check finds the latch broken).
        return Look(False, block=next_expiry + 0.002 if next_expiry else None)

    def block(self, seconds: float) -> Step:
        return read_wake(
            self.wake, self.mark, seconds, self.operation, hub_prefix=self.latch.keys.hub_prefix
        )

    def leave(self) -> Steps:
        if self.registered:
            yield EndsWaits(
                Run(
                    CHECK,
                    self.keys,
                    self._args("cancel", 0),
                    f"stop waiting for latch {self.latch.name!r}",
                )
            )


class LatchParty(Hold):
    """A party of a :class:`CountDownLatch`: joined, it holds a lease until it counts down.

    ``join()``/``ajoin()`` (or ``with`` / ``async with``) joins; a block that
    ends normally counts down, one that raises breaks the latch (its waiters
    learn at once that the count will not complete). ``count_down()`` /
    ``acount_down()`` count down explicitly. ``lost`` and ``on_lost`` as for a
    lock: a party paused past its lease broke the latch.
    """

    kind = "latch party"
    _acquire_script = JOIN
    _release_script = COUNT_DOWN
    _extend_script = RENEW
    keys: LatchKeys

    def __init__(
        self,
        latch: CountDownLatch,
        *,
        ttl: float,
        auto_renew: bool,
        on_lost: Callable[[Any], Any] | None,
    ) -> None:
        self.latch = latch
        super().__init__(
            latch.name,
            ttl,
            0,
            auto_renew=auto_renew,
            client=latch._client,
            prefix=latch.prefix,
            on_lost=on_lost,
        )

    def _setup(self, keys: KeyBuilder) -> None:
        self.keys = k = keys.latch(self.name)
        self._release_base = [k.state, k.parties, k.waiters, k.index, k.wake, k.probe]
        self._extend_base = [k.state, k.parties, k.index, k.waiters, k.wake, k.probe]
        self._wake_prefix = k.wake_prefix

    def _acquire_keys(self, owner: str) -> list[str]:
        return self._release_base  # (joining never waits: no wake list of its own)

    def _extra_args(self) -> list[Any]:
        return self.latch._args()

    def join(self) -> None:
        """Join the latch. Raises LatchBroken if it is broken, LockError if it is already open."""
        if not self.acquire(0):
            self._refused(run(self.client, self.latch._inspect_steps()))

    async def ajoin(self) -> None:
        """``join()`` on the event loop."""
        if not await self.aacquire(0):
            self._refused(await arun(self._async_client(), self.latch._inspect_steps()))

    def settle(self, owner: str) -> None:
        """Leave as ``owner``, a join that was interrupted or whose reply was lost (see
        :meth:`Hold.settle`), without counting down: a party counts down when its work is done,
        and this one never started it."""
        if not self._depth:
            run(self.client, self._leave_steps(owner))

    async def asettle(self, owner: str) -> None:
        """:meth:`settle` on the event loop."""
        if not self._depth:
            await arun(self._async_client(), self._leave_steps(owner))

    def _leave_steps(self, owner: str) -> Steps:
        keys, args = self._acquire_args("cancel", 0.0)
        args[0] = owner
        yield EndsWaits(Run(self._acquire_script, self._acquire_keys(owner), args, self._ops[0]))

    def _refused(self, state: dict[str, Any]) -> None:
        from ..exceptions import LockError

        if state["broken"]:
            raise self.latch._broken(state["broken"])
        raise LockError(
            f"latch {self.name!r} is already open: there is nothing left to count down",
            name=self.name,
        )

    def count_down(self) -> None:
        """Count down and leave (the lease ends). Raises LockLost if the lease had run out
        (the latch broke meanwhile), LockNotOwned if this party has not joined."""
        self.release()

    async def acount_down(self) -> None:
        """``count_down()`` on the event loop."""
        await self.arelease()

    def abort(self, reason: str) -> None:
        """Give up: break the latch with ``reason`` (its waiters raise LatchBroken) and leave."""
        run(self.client, self._abort_flow(reason))

    async def aabort(self, reason: str) -> None:
        """``abort()`` on the event loop."""
        await arun(self._async_client(), self._abort_flow(reason))

    def _abort_flow(self, reason: str) -> Steps:
        self._check_fork()
        if not self._depth:
            raise LockNotOwned(f"latch party {self.name!r} has not joined", name=self.name)
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.stop()
        try:
            yield from self.latch._abort_steps(reason, self._owner or "")
        finally:
            self._depth = 0
            self._end_hold()

    def __enter__(self) -> LatchParty:
        self.join()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.count_down()
        else:
            self.abort(f"a party failed: {exc_type.__name__}: {exc}")

    async def __aenter__(self) -> LatchParty:
        await self.ajoin()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            await self.acount_down()
        else:
            await self.aabort(f"a party failed: {exc_type.__name__}: {exc}")

    def _owned_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if owner is None or not self._depth:
            return False
        state = yield from self.latch._inspect_steps()
        return any(p["token"] == owner for p in state["parties"])


def state_from_reply(reply: Any) -> dict[str, Any]:
    """A ``latches/inspect.lua`` reply as a dict (see :meth:`CountDownLatch.state`)."""
    count, initial, broken, waiters, *flat = reply
    parties = [
        {
            "token": as_text(flat[i]),
            "fence": int(flat[i + 1]),
            "ttl": int(flat[i + 2]) / 1000.0,
            "host": as_text(flat[i + 3]),
            "pid": int(flat[i + 4]),
            "thread": as_text(flat[i + 5]),
        }
        for i in range(0, len(flat), 6)
    ]
    return {
        "count": None if int(count) < 0 else int(count),
        "initial": int(initial),
        "broken": as_text(broken),
        "waiters": int(waiters),
        "parties": parties,
    }
