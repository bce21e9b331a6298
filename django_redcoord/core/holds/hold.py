"""A hold on a named resource in Redis: the client side every held primitive shares.

:class:`Hold` is what a :class:`~django_redcoord.core.locks.Lock`, a
:class:`~django_redcoord.core.semaphores.Semaphore` permit and the read and
write holds of a :class:`~django_redcoord.core.rwlocks.ReadWriteLock` have in
common: ``acquire``/``aacquire`` with a wait (FIFO in Redis, no polling),
``release``/``arelease``, ``extend``/``aextend``, an owner token per hold and a
fencing token per grant, auto-renewal by a watchdog thread or asyncio task,
context managers, reentrancy (where the primitive allows it), fork safety,
and taking turns when threads or tasks share one object. A primitive
subclasses it with its scripts and keys (see :mod:`.steps` for the contract).

An object holds at most once at a time, like a ``threading.Lock``: threads
sharing one object take turns (a thread that finds the object taken by
another waits for it, within its own wait, before waiting in Redis);
``release()`` may come from any thread (a streamed response ends
elsewhere). A forked child holds nothing its parent held.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import CoordinationUnavailable, LockError, LockNotAcquired, RedcoordError
from ..keys import KeyBuilder, validate_name
from ..observe import observe, observers
from ..runtime import lock_defaults, runtime
from ..transport import nearby
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import MAX_BLOCK, ending_waits, execute_pipeline, max_block
from ..transport.drivers import Steps, arun, run, uncancellable
from ..values import DEFAULT, check_count, check_seconds, check_ttl, check_wait
from .identity import (
    fork_generation,
    hold_token,
    task_owner_token,
    thread_owner_token,
    watch_forks,
)
from .steps import (
    QUEUE_GRACE,
    HoldSteps,
    check_replica_timeout,
    default_replica_timeout,
    log,
)
from .watchdog import AsyncRenewer, Renewer


class Hold(HoldSteps, UsesClient):
    """Base of every held primitive (see the module docstring). Subclasses set
    ``kind``, the three scripts and the key hooks, and build their keys in
    :meth:`_setup`.

    Args (common to every held primitive):
        name: the resource: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``,
            at most 200 characters.
        ttl: seconds a hold lives unless released or extended (default:
            ``REDCOORD["LOCK_TTL"]``, 30 s). A holder that crashes loses it then.
        wait: seconds ``acquire()`` may block: 0 tries once, None waits
            forever (default: ``REDCOORD["LOCK_WAIT"]``, 10 s).
        auto_renew: renew every ttl/3 from a watchdog thread (or an asyncio
            task after ``aacquire()``) while held.
        client: a ``redis.Redis`` or ``redis.asyncio.Redis``; default: the one
            REDCOORD configures.
        prefix: key prefix; default: ``REDCOORD["KEY_PREFIX"]``.
        on_lost: called with the object by the watchdog when a renewal finds
            the hold gone (``auto_renew=True`` only); may be a coroutine
            function for holds taken with ``aacquire()``.
        replicas: confirm each grant on this many replicas of the master
            (``WAIT``) before using it, and each ``extend()`` and renewal;
            fewer within ``replica_timeout`` seconds (default
            ``REDCOORD["REPLICA_TIMEOUT"]``, 1 s; it must end within the
            client's socket timeout, or ``ValueError``) gives a grant back and
            raises ``ReplicasNotSynced``; an unconfirmed extend or renewal
            raises it too and does not count (``lost`` turns True when the
            last confirmed one runs out). 0 (the default) does not wait.
    """

    def __init__(
        self,
        name: str,
        ttl: float = DEFAULT,
        wait: float | None = DEFAULT,
        *,
        auto_renew: bool = False,
        reentrant: bool = False,
        client: Any = None,
        prefix: str | None = None,
        on_lost: Callable[[Any], Any] | None = None,
        replicas: int = 0,
        replica_timeout: float | None = DEFAULT,
    ) -> None:
        self.name = validate_name(name, f"{self.kind} name")
        self.replicas = check_count(replicas, "replicas", 0, 100)
        if replica_timeout is DEFAULT:
            replica_timeout = runtime.config.get("REPLICA_TIMEOUT")
        if replica_timeout is None:  # 1 s, or what the socket timeout leaves room for
            replica_timeout = default_replica_timeout(client)
        self.replica_timeout = check_seconds(replica_timeout, "replica_timeout")
        if self.replicas:
            check_replica_timeout(self.replica_timeout, client)
        default_ttl, default_wait = lock_defaults() if DEFAULT in (ttl, wait) else (0, 0)
        self.ttl = check_ttl(default_ttl if ttl is DEFAULT else ttl)
        self.wait = default_wait if wait is DEFAULT else check_wait(wait)
        if not isinstance(auto_renew, bool) or not isinstance(reentrant, bool):
            raise TypeError("auto_renew and reentrant must be True or False")
        if reentrant and not self.reentrant_allowed:
            raise TypeError(f"a {self.kind} cannot be reentrant")
        if on_lost is not None and not callable(on_lost):
            raise TypeError(f"on_lost must be a callable taking the {self.kind}, not {on_lost!r}")
        self.auto_renew = auto_renew
        self.reentrant = reentrant
        self.on_lost = on_lost
        self._client = client
        self._setup(key_builder(prefix, client))
        self._ops = (f"acquire {self.kind} {self.name!r}", f"release {self.kind} {self.name!r}")
        self._fence: int | None = None  # last token granted to this object (tokens only grow)
        self.retry_after: float | None = None
        watch_forks()
        self._reset()

    #: Whether the same owner may nest holds (``reentrant=True``).
    reentrant_allowed = False

    def _setup(self, keys: KeyBuilder) -> None:  # pragma: no cover - per primitive
        """Build the primitive's keys (called once, by ``__init__``)."""
        raise NotImplementedError

    def _owned_steps(self) -> Steps:  # pragma: no cover - per primitive
        """Whether this object's owner holds it now, according to Redis."""
        raise NotImplementedError

    def _reset(self) -> None:
        """Local state of "not held" (at creation, and in a forked child)."""
        self._generation = fork_generation()
        self._cond = threading.Condition(threading.Lock())
        self._taken = False  # a thread is acquiring or holding through this object
        self._holder: Any = None  # that thread's ident, or that asyncio task
        self._owner: str | None = None  # owner token of the hold in Redis
        self._depth = 0
        self._valid_until = 0.0
        self._lost = False
        self._granted_at: float | None = (
            None  # time.monotonic() of the grant, while observed (see ..observe)
        )
        self._interrupted = False
        self._renewer: Renewer | AsyncRenewer | None = None
        self._async_turns: list[
            tuple[asyncio.AbstractEventLoop, asyncio.Future]
        ] = []  # tasks waiting their turn
        self._retry_owner: str | None = (
            None  # owner of an acquire that failed with an unknown outcome
        )
        # its last release handed on to a task of this loop (see Lock._released)
        self._woke_task = False

    def _check_fork(self) -> None:
        if self._generation != fork_generation():
            self._reset()  # inherited across fork(): the child holds nothing

    def __repr__(self) -> str:
        state = f"held, token={self._fence}" if self._depth else "not held"
        return f"<{type(self).__name__} {self.name!r} ttl={self.ttl:g}s {state}>"

    @property
    def token(self) -> int | None:
        """The fencing token of the current hold (None when not held)."""
        self._check_fork()
        return self._fence if self._depth else None

    @property
    def held(self) -> bool:
        """True while this object believes it holds (no round trip)."""
        self._check_fork()
        return self._depth > 0

    @property
    def lost(self) -> bool:
        """True once the hold may have passed to someone else while held.

        Set by the watchdog when a renewal finds the hold gone, and also by the
        local monotonic clock alone once the TTL has run out since the last
        confirmed grant or renewal: a holder can check it before acting.
        """
        self._check_fork()
        return self._depth > 0 and (self._lost or time.monotonic() >= self._valid_until)

    # -- acquire --------------------------------------------------------------

    def acquire(self, wait: float | None = DEFAULT) -> bool:
        """Take the hold, waiting up to ``wait`` seconds (default: the object's).

        Returns True when held, False when the wait ran out. Raises
        CoordinationUnavailable when Redis cannot be reached; the outcome is
        then unknown and nothing is left held or queued (best effort: a grant
        whose reply was lost expires after the TTL). An interrupted acquire
        (KeyboardInterrupt, a cancelled request) gives back what it took.
        """
        wait = self.wait if wait is DEFAULT else check_wait(wait)
        client = self.client
        self._check_fork()
        deadline = math.inf if wait is None else time.monotonic() + wait
        me = threading.get_ident()
        with self._cond:
            while (mode := self._take(me, wait, thread_owner_token)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:  # another thread of ours holds this object
                    self.retry_after = None
                    if observers:
                        observe("hold.acquire", kind=self._event_kind, outcome="timeout", wait=wait)
                    return False
                self._cond.wait(None if remaining == math.inf else remaining)
        chunk = max_block(client)
        if mode == "wait":  # a retry after an unknown outcome
            granted = run(client, self._acquire_flow(mode, deadline, chunk))
        else:
            granted = self._first_look(client, mode, deadline, chunk)
        if granted and self._depth == 1 and self.auto_renew and self._renewer is None:
            self._renewer = Renewer(
                self, self._owner or "", threading.current_thread() if self.reentrant else None
            )
            self._renewer.start()
        return granted

    async def aacquire(self, wait: float | None = DEFAULT) -> bool:
        """``acquire()`` on the event loop (a ``redis.asyncio`` client; no thread).

        Cancelled at any await (the client went away, a timeout), it leaves
        nothing held or queued: a grant that arrives as it is cancelled is
        released before the cancellation propagates. With ``reentrant=True``
        the owner is the asyncio task.
        """
        wait = self.wait if wait is DEFAULT else check_wait(wait)
        client = self._async_client()
        self._check_fork()
        deadline = math.inf if wait is None else time.monotonic() + wait
        me = asyncio.current_task()
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                mode = self._take(me, wait, task_owner_token)
                if mode is None:
                    turn = loop.create_future()
                    self._async_turns.append((loop, turn))
            if mode is not None:
                break
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    self.retry_after = None
                    if observers:
                        observe("hold.acquire", kind=self._event_kind, outcome="timeout", wait=wait)
                    return False
                await asyncio.wait_for(turn, None if remaining == math.inf else remaining)
            except asyncio.TimeoutError:
                pass
            finally:
                with self._cond:
                    if (loop, turn) in self._async_turns:
                        self._async_turns.remove((loop, turn))
        granted = await arun(client, self._acquire_flow(mode, deadline, max_block(client)))
        if granted and self._depth == 1 and self.auto_renew and self._renewer is None:
            self._renewer = AsyncRenewer(
                self, self._owner or "", client, me if self.reentrant else None
            )
        return granted

    def _first_look(self, client: Any, mode: str, deadline: float, chunk: float) -> bool:
        """The acquire's first look, made here rather than through the steps: what the sync
        driver would do for it (see ..transport.drivers.run), without its per-step work. A plain
        grant, the usual uncontended case, ends the acquire here; anything else (queued, a grant
        with checks to make, an error) goes on through :meth:`_acquire_flow` from this reply."""
        sent = time.monotonic()
        try:
            keys, args = self._acquire_args(mode, min(max(deadline - sent, 0.0), chunk))
            reply = self._acquire_script(client, keys, args, operation=self._ops[0])
            plain = int(reply[0]) == 1 and self._plain_grant(int(reply[1]))
            if plain:
                self._note_grant(int(reply[1]), sent)
        except BaseException as exc:
            # Thrown in at the flow's first step, as the driver would, also when it came after
            # the reply (KeyboardInterrupt, a signal handler's exception): the flow gives back
            # what the look took.
            return run(client, self._acquire_flow(mode, deadline, chunk, (sent, None, exc)))
        if not plain:
            return run(client, self._acquire_flow(mode, deadline, chunk, (sent, reply, None)))
        self._interrupted = False
        self._acquired()
        if observers:
            self._observe_acquire("acquired", sent)
        return True

    def _take(self, me: Any, wait: float | None, owner_token: Callable[[], str]) -> str | None:
        """Under ``self._cond``: make ``me`` this object's user.

        Returns the first acquire mode, or None while another thread or task
        holds the object (``me`` waits its turn).
        """
        if self._taken and self._holder == me:
            if not (self.reentrant and self._depth):
                raise LockError(
                    f"{self.kind} {self.name!r} is already held by this {type(self).__name__} "
                    "object in this thread or task; "
                    + (
                        f"release it first, or create the {type(self).__name__} with reentrant=True"
                        if self.reentrant_allowed
                        else "release it first, or use another object"
                    ),
                    name=self.name,
                )
            # nesting: Redis counts the depth (every reentrant object of this owner shares the hold)
            return "try"
        if self._taken:
            return None
        self._taken, self._holder = True, me
        retry, self._retry_owner = self._retry_owner, None
        self._retrying = bool(retry) and not self.reentrant
        # 48 random bits and a tag that says it was made here (identity.hold_token): unique, and
        # short (it is stored with every grant).
        self._owner = owner_token() if self.reentrant else retry or hold_token()
        if wait == 0:
            return "try"
        # A retry after an unknown outcome may already have a place: 'wait' renews it.
        return "wait" if retry else "queue"

    def _interrupt(self) -> None:
        """From another thread: make a waiting ``acquire()`` give up soon.

        The waiter finds the flag at its next re-check; the marker pushed onto
        its wake list ends its current BLPOP at once. If the hold was granted
        meanwhile, the waiter gives it back (``acquire()`` returns False).
        """
        self._interrupted = True
        owner = self._owner
        if owner and not self._depth:
            wake = self._wake_key(owner)
            try:
                execute_pipeline(
                    self.client,
                    lambda pipe: pipe.lpush(wake, "interrupt").pexpire(wake, 10_000),
                    operation=f"interrupt a wait for {self.kind} {self.name!r}",
                )
            except CoordinationUnavailable as exc:
                log.warning("%s %s: could not interrupt a waiter: %s", self.kind, self.name, exc)
            nearby.hand(wake, "interrupt")  # (a wait blocked in-process: see ..transport.nearby)

    def _end_hold(self) -> None:
        """Forget the hold locally and let the next thread or task of ours take this object."""
        with self._cond:
            self._depth = 0
            self._owner = None
            self._taken, self._holder = False, None
            self._cond.notify()
            turns, self._async_turns = self._async_turns, []
        for loop, turn in turns:  # every waiting task re-tries; one wins, the others wait again
            with contextlib.suppress(
                RuntimeError
            ):  # that loop is closed: nobody waits there any more
                loop.call_soon_threadsafe(_wake, turn)

    # -- release / extend ------------------------------------------------------

    def release(self) -> None:
        """Release the hold (the waiter queued longest gets it).

        Raises LockLost if the hold expired or passed to another owner before
        this call (the other owner's hold is not touched), LockNotOwned if
        this object does not hold it, and CoordinationUnavailable if Redis
        could not be reached: the hold then ends here all the same (the
        watchdog is stopped first) and it expires after its TTL unless the
        release reached Redis.
        """
        self._check_fork()
        if not self._depth:
            run(None, self._release_flow())  # (raises LockNotOwned)
        client = self.client
        # The release's one round trip, made here as the sync driver would (see _first_look).
        owner, lost = self._release_begin()
        result: Any = _NO_REPLY
        try:
            with ending_waits():  # (a release may use the pool's reserve: see _release_call)
                result = self._release_script(
                    client,
                    self._release_keys_for(owner),
                    [owner, self.name, *self._extra_args()],
                    operation=self._ops[1],
                )
            released = self._released(owner, result)
        except BaseException as exc:  # also one that came after the reply: the level ends here
            if result is _NO_REPLY:
                self._released(owner, None)
            self._release_failed(exc)
            raise
        self._release_end(released, lost)

    @property
    def in_doubt(self) -> str | None:
        """The owner token of an acquire whose outcome an outage left unknown (it raised
        CoordinationUnavailable after sending: its grant may land when Redis answers again), or
        None. :meth:`settle` gives such a grant back."""
        return None if self.reentrant else self._retry_owner

    @property
    def doubt_lasts(self) -> float:
        """Seconds after Redis answers again during which a grant in doubt may still arrive: a
        queue place the lost acquire took may be handed it until the place lapses (0 for an
        acquire without a wait, which takes no place)."""
        return 0.0 if self.wait == 0 else MAX_BLOCK + QUEUE_GRACE

    def settle(self, owner: str) -> None:
        """Give back a grant that an acquire by ``owner`` (:attr:`in_doubt`) may have left behind.

        Asks again as ``owner`` without waiting: a grant that landed after its reply was lost
        comes back and is released, and so is the free lock taken just now; held by someone
        else, nothing changes. Raises CoordinationUnavailable while Redis still does not answer
        (ask again later).
        """
        if self._depth:
            return  # held by this object again: its own release ends it
        self._retry_owner = owner
        if self.acquire(wait=0):
            self.release()
        self._retry_owner = None

    async def asettle(self, owner: str) -> None:
        """:meth:`settle` on the event loop (a hold with only a ``redis.asyncio`` client)."""
        if self._depth:
            return
        self._retry_owner = owner
        if await self.aacquire(wait=0):
            await self.arelease()
        self._retry_owner = None

    async def arelease(self) -> None:
        """``release()`` on the event loop (see there).

        Cancelled meanwhile (``asyncio.timeout`` running out as the block ends), the release
        still runs to its end (within the socket timeout) before the cancellation goes on: a
        cancelled task never leaves its hold taken for the TTL by nobody.
        """
        self._check_fork()
        await uncancellable(
            arun(self._async_client() if self._depth else None, self._release_flow()),
            reraise=True,
        )
        if self._woke_task:  # handed to a task of this loop (see ..transport.nearby): it runs first
            self._woke_task = False
            await asyncio.sleep(0)

    def extend(self, ttl: float | None = None) -> None:
        """Reset the hold's time-to-live to ``ttl`` seconds from now (default: the object's ttl).

        Raises LockLost if the hold is no longer ours, LockNotOwned if never acquired.
        """
        run(self.client, self._extend_flow(ttl))

    async def aextend(self, ttl: float | None = None) -> None:
        """``extend()`` on the event loop (see there)."""
        await arun(self._async_client(), self._extend_flow(ttl))

    # -- inspection ------------------------------------------------------------

    def owned(self) -> bool:
        """True if this object's owner holds it now, according to Redis (one round trip)."""
        return run(self.client, self._owned_steps())

    async def aowned(self) -> bool:
        """``owned()`` on the event loop."""
        return await arun(self._async_client(), self._owned_steps())

    # -- context managers --------------------------------------------------------

    def __enter__(self) -> Any:
        if not self.acquire():
            raise self._not_acquired()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.release()
            return
        # The block's own error matters more than a failed release: log that one.
        try:
            self.release()
        except RedcoordError as release_error:
            log.error(
                "%s %s: release after an error in the block failed: %s",
                self.kind,
                self.name,
                release_error,
            )

    async def __aenter__(self) -> Any:
        if not await self.aacquire():
            raise self._not_acquired()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            await self.arelease()
            return
        try:
            await self.arelease()
        except RedcoordError as release_error:
            log.error(
                "%s %s: release after an error in the block failed: %s",
                self.kind,
                self.name,
                release_error,
            )

    def _not_acquired(self) -> LockNotAcquired:
        return LockNotAcquired(
            f"{self.kind} {self.name!r} could not be acquired within "
            f"{'forever' if self.wait is None else f'{self.wait:g} s'}",
            name=self.name,
            wait=self.wait,
        )


#: No reply came (yet) to a release script.
_NO_REPLY = object()


def _wake(turn: asyncio.Future) -> None:
    if not turn.done():
        turn.set_result(None)
