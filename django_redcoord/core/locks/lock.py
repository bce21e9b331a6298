"""Distributed locks on one Redis: token-checked, expiring, fenced, fair.

How it works (every operation is one round trip, one Lua script):

* ``acquire`` runs ``locks/acquire.lua``: if the lock is free and nobody is
  queued, it writes one string, ``{token, fence, expiry, holder...}`` in
  MessagePack, with a ``PX`` TTL, and the name into its live-lock index
  bucket. Otherwise the caller appends its entry to a FIFO queue list in the
  same script and blocks with ``BLPOP`` on its own wake list. A live lock is
  one key and one small index entry; a contended acquisition runs 12 Redis
  commands in all (4 to queue, the BLPOP, 7 in the release that hands over).
* ``release`` runs ``locks/release.lua``: if the token matches it hands the
  lock straight to the oldest live waiter (new token, new fence) and pushes
  the fence onto that waiter's wake list; the waiter returns from ``BLPOP``
  already owning the lock. No polling, no thundering herd, no barging: a
  process that releases and re-acquires at once queues behind the others.
* A holder that crashed never releases. Its lock expires after its TTL and
  the waiters' ``BLPOP`` timeouts are bounded by that TTL, so the oldest
  live waiter takes it over right after expiry (the first re-check hands it
  to the head of the queue).

Timeline of the race the token check prevents::

    A acquires (ttl 5 s) ... A stalls 6 s ... lock expires
    B acquires, token b, fence 8
    A wakes, releases: token a != b -> LockLost; B's lock untouched

Fencing tokens are a hybrid logical clock per name: ``max(last + 1, server
time in µs)``. They keep growing when Redis loses its data (a restart without
persistence, a failover to a replica that missed writes, eviction), and the
last one is kept in the lock record (and for a minute in the tombstone a
release leaves), so a name no longer used leaves nothing behind. The one
assumption: a Redis server's clock never goes back by
more than the time between two grants of a name (servers that take over from
each other keep their clocks in sync, e.g. NTP).

Fairness: waiters are served strictly in the order their first acquire
attempt reached Redis. A waiter keeps its place by re-checking within its
lease (at most ``chunk + 1 s``); one that stops (killed, paused) loses its
place after that and is skipped. A waiter killed inside its lease can still be
handed the lock, which then expires after its TTL like a crashed holder's.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import CoordinationUnavailable, LockError, LockNotAcquired, RedcoordError
from ..keys import KeyBuilder, LockKeys, validate_name
from ..runtime import default_prefix, lock_defaults
from ..transport.clients import UsesClient
from ..transport.commands import execute_pipeline, max_block
from ..transport.drivers import arun, run
from ..values import DEFAULT, check_ttl, check_wait
from .identity import fork_generation, task_owner_token, thread_owner_token, watch_forks
from .steps import LockSteps, log
from .watchdog import AsyncRenewer, Renewer


class Lock(LockSteps, UsesClient):
    """A named distributed lock with expiry, fencing tokens and FIFO waiting.

    Args:
        name: the resource, e.g. ``"invoice:42"``: letters, digits and
            ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        ttl: seconds the lock lives unless released or extended (default:
            ``REDCOORD["LOCK_TTL"]``, 30 s). A holder that crashes loses it then.
        wait: seconds ``acquire()`` may block: 0 tries once, None waits
            forever (default: ``REDCOORD["LOCK_WAIT"]``, 10 s).
        auto_renew: renew every ttl/3 from a watchdog thread while held.
        reentrant: the same owner acquiring again nests instead of blocking.
            The owner is the thread (of this process): every reentrant Lock
            of the same name in the same thread shares one hold, which is
            freed when the outermost hold is released. A forked child is a
            different owner.
        client: a redis-py client; default: the one REDCOORD configures.
        prefix: key prefix; default: ``REDCOORD["KEY_PREFIX"]`` (``"redcoord"``).
        on_lost: called with the lock from the watchdog thread when a renewal
            finds the lock gone (``auto_renew=True`` only).

    A Lock object holds the lock at most once at a time, like a
    ``threading.Lock``: threads sharing one object take turns (a thread
    that finds the object taken by another waits for it, within its own
    wait, before waiting in Redis); ``release()`` may come from any thread
    (a streamed response ends elsewhere). A forked child holds nothing its
    parent held. After ``acquire()``, ``lock.token`` is the fencing token:
    an integer that grows with every grant of this name, even across a
    Redis restart that lost the data, to be checked (strictly ``>``) by
    whatever the critical section writes to.
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
        on_lost: Callable[[Lock], Any] | None = None,
    ) -> None:
        self.name = validate_name(name, "lock name")
        default_ttl, default_wait = lock_defaults() if DEFAULT in (ttl, wait) else (0, 0)
        self.ttl = check_ttl(default_ttl if ttl is DEFAULT else ttl)
        self.wait = default_wait if wait is DEFAULT else check_wait(wait)
        if not isinstance(auto_renew, bool) or not isinstance(reentrant, bool):
            raise TypeError("auto_renew and reentrant must be True or False")
        if on_lost is not None and not callable(on_lost):
            raise TypeError(f"on_lost must be a callable taking the lock, not {on_lost!r}")
        self.auto_renew = auto_renew
        self.reentrant = reentrant
        self.on_lost = on_lost
        self._client = client
        self.keys: LockKeys = KeyBuilder(prefix or default_prefix()).lock(self.name)
        k = self.keys
        # Built once: every acquire and release sends these.
        self._keys3 = [k.lock, k.queue, k.index]
        self._ops = (f"acquire lock {self.name!r}", f"release lock {self.name!r}")
        self._fence: int | None = None  # last token granted to this object (tokens only grow)
        self.retry_after: float | None = None
        watch_forks()
        self._reset()

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
        self._interrupted = False
        self._renewer: Renewer | AsyncRenewer | None = None
        self._async_turns: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []  # tasks waiting their turn
        self._retry_owner: str | None = None  # owner of an acquire that failed with an unknown outcome

    def _check_fork(self) -> None:
        if self._generation != fork_generation():
            self._reset()  # inherited across fork(): the child holds nothing

    def __repr__(self) -> str:
        state = f"held, token={self._fence}" if self._depth else "not held"
        return f"<Lock {self.name!r} ttl={self.ttl:g}s {state}>"

    @property
    def token(self) -> int | None:
        """The fencing token of the current hold (None when not held)."""
        self._check_fork()
        return self._fence if self._depth else None

    @property
    def held(self) -> bool:
        """True while this object believes it holds the lock (no round trip)."""
        self._check_fork()
        return self._depth > 0

    @property
    def lost(self) -> bool:
        """True once the lock may have passed to someone else while held.

        Set by the watchdog when a renewal finds the lock gone, and also by the
        local monotonic clock alone once the TTL has run out since the last
        confirmed grant or renewal: a holder can check it before acting.
        """
        self._check_fork()
        return self._depth > 0 and (self._lost or time.monotonic() >= self._valid_until)

    # -- acquire --------------------------------------------------------------

    def acquire(self, wait: float | None = DEFAULT) -> bool:
        """Take the lock, waiting up to ``wait`` seconds (default: the Lock's).

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
                    return False
                self._cond.wait(None if remaining == math.inf else remaining)
        granted = run(client, self._acquire_flow(mode, deadline, max_block(client)))
        if granted and self._depth == 1 and self.auto_renew and self._renewer is None:
            self._renewer = Renewer(self, self._owner or "", threading.current_thread() if self.reentrant else None)
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
            self._renewer = AsyncRenewer(self, self._owner or "", client, me if self.reentrant else None)
        return granted

    def _take(self, me: Any, wait: float | None, owner_token: Callable[[], str]) -> str | None:
        """Under ``self._cond``: make ``me`` this object's user.

        Returns the first acquire mode, or None while another thread or task
        holds the object (``me`` waits its turn).
        """
        if self._taken and self._holder == me:
            if not (self.reentrant and self._depth):
                raise LockError(
                    f"lock {self.name!r} is already held by this Lock object in this thread or task; "
                    "release it first, or create the Lock with reentrant=True",
                    name=self.name,
                )
            return "try"  # nesting: Redis counts the depth (every reentrant Lock of this owner shares the hold)
        if self._taken:
            return None
        self._taken, self._holder = True, me
        retry, self._retry_owner = self._retry_owner, None
        # 72 random bits: unique, and short (it is stored with every grant).
        self._owner = owner_token() if self.reentrant else retry or secrets.token_urlsafe(9)
        if wait == 0:
            return "try"
        # A retry after an unknown outcome may already have a place: 'wait' renews it.
        return "wait" if retry else "queue"


                # an interruption (see _interrupt): re-check in 'cancel' mode


    def _interrupt(self) -> None:
        """From another thread: make a waiting ``acquire()`` give up soon.

        The waiter finds the flag at its next re-check; the marker pushed onto
        its wake list ends its current BLPOP at once. If the lock was granted
        meanwhile, the waiter gives it back (``acquire()`` returns False).
        """
        self._interrupted = True
        owner = self._owner
        if owner and not self._depth:
            wake = self.keys.wake(owner)
            try:
                execute_pipeline(
                    self.client,
                    lambda pipe: pipe.lpush(wake, "interrupt").pexpire(wake, 10_000),
                    operation=f"interrupt a wait for lock {self.name!r}",
                )
            except CoordinationUnavailable as exc:
                log.warning("lock %s: could not interrupt a waiter: %s", self.name, exc)

    def _end_hold(self) -> None:
        """Forget the hold locally and let the next thread or task of ours take this object."""
        with self._cond:
            self._depth = 0
            self._owner = None
            self._taken, self._holder = False, None
            self._cond.notify()
            turns, self._async_turns = self._async_turns, []
        for loop, turn in turns:  # every waiting task re-tries; one wins, the others wait again
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits there any more
                loop.call_soon_threadsafe(_wake, turn)

    # -- release / extend ------------------------------------------------------

    def release(self) -> None:
        """Release one hold of the lock (the waiter queued longest gets it).

        Raises LockLost if the lock expired or passed to another owner before
        this call (the other owner's lock is not touched), LockNotOwned if
        this object does not hold it, and CoordinationUnavailable if Redis
        could not be reached: the hold then ends here all the same (the
        watchdog is stopped first) and the lock expires after its TTL unless
        the release reached Redis.
        """
        self._check_fork()
        run(self.client if self._depth else None, self._release_flow())

    async def arelease(self) -> None:
        """``release()`` on the event loop (see there)."""
        self._check_fork()
        await arun(self._async_client() if self._depth else None, self._release_flow())


    def extend(self, ttl: float | None = None) -> None:
        """Reset the lock's time-to-live to ``ttl`` seconds from now (default: the Lock's ttl).

        Raises LockLost if the lock is no longer ours, LockNotOwned if never acquired.
        """
        run(self.client, self._extend_flow(ttl))

    async def aextend(self, ttl: float | None = None) -> None:
        """``extend()`` on the event loop (see there)."""
        await arun(self._async_client(), self._extend_flow(ttl))


    # -- inspection ------------------------------------------------------------

    def locked(self) -> bool:
        """True if anyone holds the lock now (one round trip)."""
        return run(self.client, self._inspect_steps()) is not None

    async def alocked(self) -> bool:
        """``locked()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps()) is not None

    def owned(self) -> bool:
        """True if this object's owner holds the lock now, according to Redis."""
        return run(self.client, self._owned_steps())

    async def aowned(self) -> bool:
        """``owned()`` on the event loop."""
        return await arun(self._async_client(), self._owned_steps())


    def ttl_remaining(self) -> float | None:
        """Seconds until the lock expires, or None if nobody holds it."""
        holder = run(self.client, self._inspect_steps())
        return None if holder is None else holder["ttl"]

    async def attl_remaining(self) -> float | None:
        """``ttl_remaining()`` on the event loop."""
        holder = await arun(self._async_client(), self._inspect_steps())
        return None if holder is None else holder["ttl"]

    def holder(self) -> dict[str, Any] | None:
        """Who holds the lock now (one round trip), or None if nobody does.

        A dict: ``token`` (the holder's owner token), ``fence``, ``ttl``
        (seconds left), ``depth`` (reentrant nesting), ``host``, ``pid``,
        ``thread``, ``queued`` (places in its queue) and ``expires_ms`` (the
        Redis server's time when the grant ends, ms since the epoch).
        """
        return run(self.client, self._inspect_steps())

    async def aholder(self) -> dict[str, Any] | None:
        """``holder()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps())


    # -- context managers --------------------------------------------------------

    def __enter__(self) -> Lock:
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
            log.error("lock %s: release after an error in the block failed: %s", self.name, release_error)

    async def __aenter__(self) -> Lock:
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
            log.error("lock %s: release after an error in the block failed: %s", self.name, release_error)

    def _not_acquired(self) -> LockNotAcquired:
        return LockNotAcquired(
            f"lock {self.name!r} could not be acquired within "
            f"{'forever' if self.wait is None else f'{self.wait:g} s'}",
            name=self.name,
            wait=self.wait,
        )


def _wake(turn: asyncio.Future) -> None:
    if not turn.done():
        turn.set_result(None)


#
# What a renewal does is written once (``_renew_once``); a thread runs it for
# holds taken with acquire(), an asyncio task for holds taken with aacquire().


