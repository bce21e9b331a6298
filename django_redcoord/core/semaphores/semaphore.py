"""Counting semaphores on Redis: at most ``permits`` holders at once, FIFO, leased, fenced.

``Semaphore("exports", permits=5)`` lets five holders in at a time; the
sixth waits (no polling: it blocks on a wake list, and the release that
frees a permit hands it over directly, oldest waiter first; see
:mod:`..holds.chain`). Every
permit is a lease: a holder that is killed or paused past its TTL loses its
permit, and the waiter at the head of the queue takes it as soon as the
lease runs out (its wait is bounded by the earliest lease). With
``auto_renew=True`` a watchdog (a thread, or an asyncio task after
``aacquire()``) renews the lease every ttl/3 and calls ``on_lost`` if the
permit was taken away. Every grant gets a fencing token, larger than every
earlier one of the semaphore, even after Redis lost its data (the same
hybrid logical clock as the locks'). ``resize()`` changes the limit while
permits are held.

Each operation is one script (``core/lua/semaphores/``); the acquire,
release and extend protocol is the one every held primitive shares
(:mod:`django_redcoord.core.holds`), so ``acquire()`` and ``await
aacquire()`` run the same steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..holds.chain import FirstInLine
from ..holds.hold import Hold
from ..keys import KeyBuilder, SemaphoreKeys
from ..transport.commands import as_text
from ..transport.drivers import Run, Steps, arun, run
from ..transport.scripts import Script
from ..values import DEFAULT, check_count

_COMMON = ("common/waiters", "semaphores/common")
ACQUIRE = Script("semaphores/acquire", includes=_COMMON)
RELEASE = Script("semaphores/release", includes=_COMMON)
EXTEND = Script("semaphores/extend", includes=_COMMON)
RESIZE = Script("semaphores/resize", includes=_COMMON)
INSPECT = Script("semaphores/inspect", includes=_COMMON)
REVOKE = Script("semaphores/revoke", includes=_COMMON)

MAX_PERMITS = 1_000_000


def check_permits(permits: object, what: str = "permits") -> int:
    """Validate a number of permits: a whole number from 1 to a million (for the
    constructor and resize() alike: a limit of 0 would make every waiter wait for nothing)."""
    return check_count(permits, what, 1, MAX_PERMITS)


class Semaphore(FirstInLine, Hold):
    """At most ``permits`` holders of ``name`` at once; one object holds one permit.

    Args:
        name: the resource: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``,
            at most 200 characters.
        permits: how many may hold at once (1 to a million). Every object of
            the same name should say the same; a limit set with
            :meth:`resize` wins over it until the semaphore has been unused
            for a minute.
        ttl: seconds a permit's lease lasts unless released or extended
            (default ``REDCOORD["LOCK_TTL"]``, 30 s): a holder that crashes
            gives its permit back then.
        wait: seconds ``acquire()`` may block: 0 tries once, None waits
            forever (default ``REDCOORD["LOCK_WAIT"]``, 10 s).
        auto_renew, client, prefix, on_lost: as for :class:`~django_redcoord.core.locks.Lock`.

    ``acquire``/``aacquire``, ``release``/``arelease``, ``extend``/``aextend``,
    ``owned``/``aowned``, ``token`` (the fencing token of this object's
    grant), ``held``, ``lost`` and the context managers (``with``, ``async
    with``) work as for a lock. Permits do not nest: an object holds one at a
    time; use one object per concurrent holder (threads sharing one object
    take turns).
    """

    kind = "semaphore"
    _acquire_script = ACQUIRE
    _release_script = RELEASE
    _extend_script = EXTEND
    keys: SemaphoreKeys

    def __init__(
        self,
        name: str,
        permits: int,
        ttl: float = DEFAULT,
        wait: float | None = DEFAULT,
        *,
        auto_renew: bool = False,
        client: Any = None,
        prefix: str | None = None,
        on_lost: Callable[[Semaphore], Any] | None = None,
        replicas: int = 0,
        replica_timeout: float = DEFAULT,
    ) -> None:
        self.permits = check_permits(permits)
        super().__init__(
            name,
            ttl,
            wait,
            auto_renew=auto_renew,
            client=client,
            prefix=prefix,
            on_lost=on_lost,
            replicas=replicas,
            replica_timeout=replica_timeout,
        )

    def _setup(self, keys: KeyBuilder) -> None:
        self.keys = k = keys.semaphore(self.name)
        self._release_base = [k.state, k.holders, k.queue, k.index, k.first()]
        self._extend_base = [k.state, k.holders, k.index]
        self._wake_prefix = k.wake_prefix

    def _extra_args(self) -> list[Any]:
        return [self.permits]

    def __repr__(self) -> str:
        state = f"holding a permit, token={self._fence}" if self._depth else "not holding"
        return f"<Semaphore {self.name!r} permits={self.permits} ttl={self.ttl:g}s {state}>"

    # -- inspection and operation ---------------------------------------------------

    def holders(self) -> list[dict[str, Any]]:
        """Who holds a permit now (one round trip): dicts with ``token``,
        ``fence``, ``ttl`` (seconds left on the lease), ``host``, ``pid`` and
        ``thread``, the lease running out first first."""
        return run(self.client, self._inspect_steps())["holders"]

    async def aholders(self) -> list[dict[str, Any]]:
        """``holders()`` on the event loop."""
        return (await arun(self._async_client(), self._inspect_steps()))["holders"]

    def available(self) -> int:
        """Permits free now (the limit in force minus live holders; 0 when over a lowered limit)."""
        return _available(run(self.client, self._inspect_steps()))

    async def aavailable(self) -> int:
        """``available()`` on the event loop."""
        return _available(await arun(self._async_client(), self._inspect_steps()))

    def resize(self, permits: int) -> int:
        """Set the limit for every holder of this name (1 to a million); returns the holders now.

        A higher limit hands the new permits to waiters at once. With a lower
        one, holders above it keep their permits until they release them
        (none is taken away); new grants wait until the count is below it.
        The limit holds until the semaphore has been unused for a minute;
        then each caller's ``permits`` applies again.
        """
        return run(self.client, self._resize_steps(permits))

    async def aresize(self, permits: int) -> int:
        """``resize()`` on the event loop."""
        return await arun(self._async_client(), self._resize_steps(permits))

    def _resize_steps(self, permits: int) -> Steps:
        permits = check_permits(permits, "resize() permits")
        held, _handed = yield Run(
            RESIZE, self._release_base, [permits, self.name], f"resize semaphore {self.name!r}"
        )
        return int(held)

    def _inspect_steps(self) -> Steps:
        reply = yield Run(
            INSPECT,
            [self.keys.state, self.keys.holders, self.keys.queue],
            [self.permits],
            f"inspect semaphore {self.name!r}",
        )
        return state_from_reply(reply)

    def _owned_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if owner is None or not self._depth:
            return False
        state = yield from self._inspect_steps()
        return any(h["token"] == owner for h in state["holders"])


def _available(state: dict[str, Any]) -> int:
    return max(0, state["limit"] - len(state["holders"]))


def state_from_reply(reply: Any) -> dict[str, Any]:
    """A ``semaphores/inspect.lua`` reply as ``{"limit", "queued", "holders": [...]}``."""
    limit, queued, *flat = reply
    holders = [
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
    return {"limit": int(limit), "queued": int(queued), "holders": holders}
