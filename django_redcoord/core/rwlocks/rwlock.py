"""Read-write locks on Redis: many readers or one writer, fair in request order.

::

    catalog = ReadWriteLock("catalog")
    with catalog.read():                 # readers share
        ...
    with catalog.write() as w:           # a writer is alone
        save(fencing_token=w.token)
    async with catalog.read(): ...       # the same on the event loop

**Fair**: a request is granted only when nobody live waits before it, so a
waiting writer holds back every reader that asks after it (no writer
starves), and readers queued together enter together once the writer before
them is done. **Leased**: every read and write hold is a lease of ``ttl``
seconds (a crashed holder's hold ends when it runs out), renewable with
``auto_renew``. **Fenced**: every grant, read or write, gets a fencing token
larger than every earlier one of this lock.

**Upgrade is refused**: ``write()`` while this thread or task holds a read
of the same ``ReadWriteLock`` object raises :class:`LockError` at once —
two readers upgrading would each wait for the other forever. Release the
read hold and take a write hold (someone may write in between), or take the
write hold from the start. **Downgrade is atomic**: ``w.downgrade()`` turns a
write hold into a read hold with nobody writing in between, and lets the
readers queued behind it in.

Each operation is one script (``core/lua/rwlocks/``); read and write holds
are :class:`~django_redcoord.core.holds.Hold` objects, so their acquire,
release and extend run the steps every held primitive shares, sync or asyncio.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import LockError, LockLost, LockNotOwned
from ..holds.chain import FirstInLine
from ..holds.hold import Hold
from ..holds.watchdog import AsyncRenewer, Renewer
from ..keys import KeyBuilder, RWLockKeys, validate_name
from ..runtime import default_prefix
from ..transport.clients import key_builder
from ..transport.commands import as_text
from ..transport.drivers import Run, Steps, arun, run
from ..transport.scripts import Script
from ..values import DEFAULT

_COMMON = ("common/waiters", "rwlocks/common")
ACQUIRE = Script("rwlocks/acquire", includes=_COMMON)
RELEASE = Script("rwlocks/release", includes=_COMMON)
EXTEND = Script("rwlocks/extend", includes=_COMMON)
DOWNGRADE = Script("rwlocks/downgrade", includes=_COMMON)
INSPECT = Script("rwlocks/inspect", includes=_COMMON)


class _RWHold(FirstInLine, Hold):
    """A read or a write hold of a :class:`ReadWriteLock` (made by ``read()`` / ``write()``)."""

    _acquire_script = ACQUIRE
    _release_script = RELEASE
    _extend_script = EXTEND
    _mode = "r"
    keys: RWLockKeys

    def __init__(self, rwlock: ReadWriteLock, **options: Any) -> None:
        self.rwlock = rwlock
        super().__init__(rwlock.name, client=rwlock._client, prefix=rwlock.keys_prefix, **options)

    def _setup(self, keys: KeyBuilder) -> None:
        self.keys = k = keys.rwlock(self.name)
        self._release_base = [k.state, k.readers, k.queue, k.index, k.first()]
        self._extend_base = [k.state, k.readers, k.index]
        self._wake_prefix = k.wake_prefix

    def _extra_args(self) -> list[Any]:
        return [self._mode]

    def _owned_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if owner is None or not self._depth:
            return False
        state = yield from self.rwlock._inspect_steps()
        return any(h["token"] == owner and h["kind"] == self._mode for h in state["holders"])


class ReadHold(_RWHold):
    """A read hold: shared with other readers, never with a writer."""

    kind = "read lock"
    _mode = "r"
    #: made by a downgrade, held already: ``with w.downgrade() as r:`` enters without acquiring
    _adopted = False

    def __enter__(self) -> Any:
        if self._adopted and self.held:
            self._adopted = False
            return self
        return super().__enter__()

    async def __aenter__(self) -> Any:
        if self._adopted and self.held:
            self._adopted = False
            return self
        return await super().__aenter__()

    def _acquired(self) -> None:
        self.rwlock._reading(self, True)

    def _end_hold(self) -> None:
        self.rwlock._reading(self, False)
        super()._end_hold()


class WriteHold(_RWHold):
    """A write hold: alone, no reader and no other writer."""

    kind = "write lock"
    _mode = "w"
    #: after downgrade(): the read hold it returned (False if the downgrade failed);
    #: leaving a ``with`` block then ends that one instead (see __exit__)
    _after_downgrade: Any = None

    def _acquired(self) -> None:
        self._after_downgrade = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # After a downgrade the block ends what it holds then: the read hold
        # (unless it was released already), not the write hold it no longer has.
        read, self._after_downgrade = self._after_downgrade, None
        if read is None:
            return super().__exit__(exc_type, exc, tb)
        if read and read.held:
            return read.__exit__(exc_type, exc, tb)
        return None

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        read, self._after_downgrade = self._after_downgrade, None
        if read is None:
            return await super().__aexit__(exc_type, exc, tb)
        if read and read.held:
            return await read.__aexit__(exc_type, exc, tb)
        return None

    def _take(self, me: Any, wait: float | None, owner_token: Callable[[], str]) -> str | None:
        if self.rwlock._reads_in(me):
            raise LockError(
                f"read-write lock {self.name!r}: this thread or task holds a read of it and asks "
                "to write; upgrading is refused (two readers upgrading would wait for each other "
                "forever): release the read hold first, or take the write hold from the start",
                name=self.name,
            )
        return super()._take(me, wait, owner_token)

    def downgrade(self) -> ReadHold:
        """Turn this write hold into a read hold, with nobody writing in between.

        Returns the read hold (release that one); this object holds nothing
        afterwards. Raises LockLost if the write hold's lease ran out. In a
        ``with`` block of this write hold, leaving the block releases the read
        hold if it is still held (and does nothing if it was released, or if
        the downgrade failed).
        """
        read = run(self.client, self._downgrade_steps())
        if self.auto_renew:
            read._renewer = Renewer(read, read._owner or "")
            read._renewer.start()
        return read

    async def adowngrade(self) -> ReadHold:
        """``downgrade()`` on the event loop."""
        client = self._async_client()
        read = await arun(client, self._downgrade_steps())
        if self.auto_renew:
            read._renewer = AsyncRenewer(read, read._owner or "", client, None)
        return read

    def _downgrade_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if not self._depth or owner is None:
            raise LockNotOwned(
                f"write lock {self.name!r} is not held by this WriteHold object", name=self.name
            )
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.stop()
        sent = time.monotonic()
        reply = yield Run(
            DOWNGRADE, self._release_base, [owner, self.name], f"downgrade write lock {self.name!r}"
        )
        self._after_downgrade = False  # the write hold is gone (read hold or not)
        valid_until, holder = self._valid_until, self._holder
        self._depth = 0
        self._end_hold()
        if int(reply[0]) != 1:
            raise LockLost(
                f"write lock {self.name!r} was lost before the downgrade: its lease ran out "
                f"(our fencing token was {self._fence})",
                name=self.name,
            )
        read = ReadHold(
            self.rwlock, ttl=self.ttl, wait=0, auto_renew=self.auto_renew, on_lost=self.on_lost
        )
        # The read hold takes over the grant as it stands: same owner token, a new fence.
        read._taken, read._holder, read._owner = True, holder, owner
        read._fence, read._depth, read._adopted = int(reply[1]), 1, True
        read._valid_until = min(valid_until, sent + self.ttl)
        self.rwlock._reading(read, True)
        self._after_downgrade = read
        return read


class ReadWriteLock:
    """A named read-write lock: ``read()`` and ``write()`` make holds of it.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        ttl, wait, auto_renew, on_lost: the defaults of the holds it makes
            (as for :class:`~django_redcoord.core.locks.Lock`); ``read()`` and
            ``write()`` accept them too.
        client: a ``redis.Redis`` or ``redis.asyncio.Redis``; default: the one REDCOORD configures.
        prefix: key prefix; default ``REDCOORD["KEY_PREFIX"]``.

    A hold object holds once; ``read()``/``write()`` make a new one each
    call, so every thread or task takes its own. See the module docstring
    for fairness, leases, upgrade and downgrade.
    """

    def __init__(
        self,
        name: str,
        ttl: float = DEFAULT,
        wait: float | None = DEFAULT,
        *,
        auto_renew: bool = False,
        client: Any = None,
        prefix: str | None = None,
        on_lost: Callable[[Hold], Any] | None = None,
        replicas: int = 0,
        replica_timeout: float = DEFAULT,
    ) -> None:
        self.name = validate_name(name, "read-write lock name")
        self.keys_prefix = prefix or default_prefix()
        self.keys = key_builder(self.keys_prefix, client).rwlock(self.name)
        self._defaults = {
            "ttl": ttl,
            "wait": wait,
            "auto_renew": auto_renew,
            "on_lost": on_lost,
            "replicas": replicas,
            "replica_timeout": replica_timeout,
        }
        self._client = client
        self._readers: dict[int, Any] = {}  # id(read hold) -> its thread ident or task
        self._readers_lock = threading.Lock()
        self._probe = ReadHold(self, **self._defaults)  # checks the options now; carries the client

    def __repr__(self) -> str:
        return f"<ReadWriteLock {self.name!r}>"

    def read(self, **options: Any) -> ReadHold:
        """A new read hold (``acquire()`` it, or use it in ``with`` / ``async with``)."""
        return ReadHold(self, **{**self._defaults, **options})

    def write(self, **options: Any) -> WriteHold:
        """A new write hold (``acquire()`` it, or use it in ``with`` / ``async with``)."""
        return WriteHold(self, **{**self._defaults, **options})

    # -- inspection ---------------------------------------------------------------

    def holders(self) -> dict[str, Any]:
        """Who holds it now (one round trip): ``{"holders": [...], "queued",
        "writers_waiting", "readers_waiting"}``; each holder a dict with
        ``kind`` ("r" or "w"), ``token``, ``fence``, ``ttl``, ``host``, ``pid``, ``thread``."""
        return run(self._probe.client, self._inspect_steps())

    async def aholders(self) -> dict[str, Any]:
        """``holders()`` on the event loop."""
        return await arun(self._probe._async_client(), self._inspect_steps())

    def _inspect_steps(self) -> Steps:
        k = self.keys
        reply = yield Run(
            INSPECT, [k.state, k.readers, k.queue], [], f"inspect read-write lock {self.name!r}"
        )
        return state_from_reply(reply)

    # -- who reads, locally (to refuse an upgrade) ------------------------------------

    def _reading(self, hold: ReadHold, held: bool) -> None:
        with self._readers_lock:
            if held:
                self._readers[id(hold)] = hold._holder
            else:
                self._readers.pop(id(hold), None)

    def _reads_in(self, me: Any) -> bool:
        with self._readers_lock:
            return me in self._readers.values()


def state_from_reply(reply: Any) -> dict[str, Any]:
    """A ``rwlocks/inspect.lua`` reply as a dict (see :meth:`ReadWriteLock.holders`)."""
    queued, writers, readers, *flat = reply
    holders = [
        {
            "kind": as_text(flat[i]),
            "token": as_text(flat[i + 1]),
            "fence": int(flat[i + 2]),
            "ttl": int(flat[i + 3]) / 1000.0,
            "host": as_text(flat[i + 4]),
            "pid": int(flat[i + 5]),
            "thread": as_text(flat[i + 6]),
        }
        for i in range(0, len(flat), 7)
    ]
    return {
        "queued": int(queued),
        "writers_waiting": int(writers),
        "readers_waiting": int(readers),
        "holders": holders,
    }
