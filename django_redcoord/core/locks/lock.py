"""Distributed locks on one Redis: token-checked, expiring, fenced, fair.

How it works (every operation is one round trip, one Lua script):

* ``acquire`` runs ``lock_acquire.lua``: if the lock is free and nobody is
  queued, it writes one string, ``{token, fence, expiry, holder...}`` in
  MessagePack, with a ``PX`` TTL, and the name into its live-lock index
  bucket. Otherwise the caller appends its entry to a FIFO queue list in the
  same script and blocks with ``BLPOP`` on its own wake list. A live lock is
  one key and one small index entry; a contended acquisition runs 12 Redis
  commands in all (4 to queue, the BLPOP, 7 in the release that hands over).
* ``release`` runs ``lock_release.lua``: if the token matches it hands the
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
import inspect
import logging
import math
import os
import secrets
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..exceptions import (
    CoordinationUnavailable,
    LockError,
    LockLost,
    LockNotAcquired,
    LockNotOwned,
    RedcoordError,
)
from ..keys import KeyBuilder, LockKeys, validate_name
from ..runtime import default_prefix, lock_defaults
from ..transport.clients import UsesClient
from ..transport.clients import as_text as _text
from ..transport.drivers import Blpop, Run, Steps, arun, run
from ..transport.scripts import Script, execute_pipeline, max_block

log = logging.getLogger(__name__)

_COMMON = ("locks/common",)
_ACQUIRE = Script("locks/acquire", includes=_COMMON)
_RELEASE = Script("locks/release", includes=_COMMON)
_EXTEND = Script("locks/extend", includes=_COMMON)
_FORCE_RELEASE = Script("locks/force_release", includes=_COMMON)
_INSPECT = Script("locks/inspect", includes=_COMMON)

#: Marks "use the configured default" (None already means "wait forever").
DEFAULT: Any = type("Default", (), {"__repr__": lambda self: "DEFAULT"})()

# A queued waiter must re-check at least this often, and its place in the
# queue survives this much longer than its current wait.
_QUEUE_GRACE = 1.0
_MAX_TTL = 365 * 24 * 3600.0


def check_ttl(ttl: object) -> float:
    """Validate a TTL in seconds: a number > 0 (at least 1 ms), at most a year."""
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise TypeError(f"ttl must be a number of seconds > 0, not {ttl!r}")
    if not 0.001 <= ttl <= _MAX_TTL:
        raise ValueError(f"ttl must be between 0.001 and {_MAX_TTL:g} seconds, not {ttl!r}")
    return float(ttl)


def check_wait(wait: object) -> float | None:
    """Validate a wait in seconds: a number >= 0 (0: try once), or None (forever)."""
    if wait is None:
        return None
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or math.isnan(wait):
        raise TypeError(f"wait must be seconds >= 0 or None (wait forever), not {wait!r}")
    if wait < 0:
        raise ValueError(f"wait must be seconds >= 0 (0 tries once) or None (forever), not {wait!r}")
    return float(wait)


# --- owner identity -------------------------------------------------------------

_process_nonce: tuple[int, str] = (0, "")
_thread_ids = threading.local()
_hostname: str | None = None


def _nonce() -> str:
    """A random id for this process, renewed after fork (a child is another owner)."""
    global _process_nonce
    pid = os.getpid()
    if _process_nonce[0] != pid:
        _process_nonce = (pid, secrets.token_urlsafe(6))
    return _process_nonce[1]


def _thread_owner_token() -> str:
    """Token shared by every reentrant Lock of this thread in this process."""
    nonce = _nonce()
    mine = getattr(_thread_ids, "value", None)
    if mine is None or mine[0] != nonce:
        mine = (nonce, f"r:{nonce}:{secrets.token_urlsafe(6)}")
        _thread_ids.value = mine
    return mine[1]


def _host() -> str:
    global _hostname
    if _hostname is None:
        _hostname = socket.gethostname()
    return _hostname


# --- fork handling ------------------------------------------------------------------

_fork_generation = 0
_fork_hook = False


def _after_fork_in_child() -> None:
    global _fork_generation
    _fork_generation += 1


def _watch_forks() -> None:
    """Count forks (registered on first use, never at import): a forked child
    holds none of its parent's locks, whatever the Lock objects it inherited say."""
    global _fork_hook
    if not _fork_hook:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook = True


# --- the lock -------------------------------------------------------------------


class Lock(UsesClient):
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
        _watch_forks()
        self._reset()

    def _reset(self) -> None:
        """Local state of "not held" (at creation, and in a forked child)."""
        self._generation = _fork_generation
        self._cond = threading.Condition(threading.Lock())
        self._taken = False  # a thread is acquiring or holding through this object
        self._holder: Any = None  # that thread's ident, or that asyncio task
        self._owner: str | None = None  # owner token of the hold in Redis
        self._depth = 0
        self._valid_until = 0.0
        self._lost = False
        self._interrupted = False
        self._renewer: _Renewer | _AsyncRenewer | None = None
        self._async_turns: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []  # tasks waiting their turn
        self._retry_owner: str | None = None  # owner of an acquire that failed with an unknown outcome

    def _check_fork(self) -> None:
        if self._generation != _fork_generation:
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
            while (mode := self._take(me, wait, _thread_owner_token)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:  # another thread of ours holds this object
                    self.retry_after = None
                    return False
                self._cond.wait(None if remaining == math.inf else remaining)
        granted = run(client, self._acquire_flow(mode, deadline, max_block(client)))
        if granted and self._depth == 1 and self.auto_renew and self._renewer is None:
            self._renewer = _Renewer(self, self._owner or "", threading.current_thread() if self.reentrant else None)
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
                mode = self._take(me, wait, _task_owner_token)
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
            self._renewer = _AsyncRenewer(self, self._owner or "", client, me if self.reentrant else None)
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

    def _acquire_flow(self, mode: str, deadline: float, chunk: float) -> Steps:
        """An acquire's round trips, and what it gives back when it fails or is interrupted."""
        try:
            granted = yield from self._acquire_steps(mode, deadline, chunk)
            self._interrupted = False  # an interruption applies to one acquire (even one not begun yet)
        except CoordinationUnavailable:
            # Unknown outcome. The owner token is kept for this object's next
            # acquire(), which gets a grant whose reply was lost (or the queue
            # place) back; unused, the place lapses within a second or two and
            # a grant expires after its TTL.
            self._interrupted = False
            if not self._depth:
                self._retry_owner = self._owner
                self._end_hold()
            raise
        except BaseException:  # interrupted or cancelled: give back what we took
            self._interrupted = False
            yield from self._give_back_steps()
            raise
        if not granted and not self._depth:
            self._end_hold()
        return granted

    def _acquire_steps(self, mode: str, deadline: float, chunk: float) -> Steps:
        """The waiting loop: queue in Redis, block on our wake list, re-check."""
        owner = self._owner or ""
        while True:
            remaining = deadline - time.monotonic()
            if mode == "wait" and (remaining <= 0 or self._interrupted):
                mode = "cancel"
            sent = time.monotonic()
            reply = yield self._acquire_call(mode, min(max(remaining, 0.0), chunk))
            if int(reply[0]) == 1:
                if mode == "cancel" and self._interrupted:
                    # Granted as we gave up (interrupted): give it back at once.
                    yield self._release_call(owner)
                    return False
                return (yield from self._grant_steps(int(reply[1]), sent))
            pttl = int(reply[1]) / 1000.0
            if mode in ("try", "cancel"):
                self.retry_after = pttl or None
                return False
            mode = "wait"
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._interrupted:
                continue
            # Block until a release hands the lock to us, the holder's TTL runs
            # out (then we re-check and the queue head takes it over), or the
            # wait ends.
            block = min(remaining, chunk, pttl + 0.002 if pttl else chunk)
            sent = time.monotonic()
            popped = yield Blpop([self.keys.wake(owner)], block, f"waiting for lock {self.name!r}")
            if popped is not None:
                value = _text(popped[1])
                if value.isdigit():
                    return (yield from self._grant_steps(int(value), sent))
                # an interruption (see _interrupt): re-check in 'cancel' mode

    def _acquire_call(self, mode: str, lease: float) -> Run:
        owner = self._owner or ""
        return Run(
            _ACQUIRE,
            [*self._keys3, self.keys.wake_prefix + owner],
            [
                owner,
                _ms(self.ttl),
                mode,
                _ms(lease + _QUEUE_GRACE),
                self.name,
                "1" if self.reentrant else "0",
                _host(),
                os.getpid(),
                threading.current_thread().name,
            ],
            self._ops[0],
        )

    def _grant_steps(self, fence: int, sent: float) -> Steps:
        last = self._fence
        if last is not None and (fence < last or (fence == last and not self._depth)):
            # Tokens are a hybrid logical clock and never go backwards unless
            # a Redis server's clock went back by more than the time since
            # our last grant: refuse the grant and give it back.
            yield self._release_call(self._owner or "")
            raise LockError(
                f"fencing token of lock {self.name!r} went backwards ({fence} after {last}): the "
                "Redis server's clock is behind the one that issued the last token; the grant was refused",
                name=self.name,
            )
        self._fence = fence
        self._depth += 1
        self.retry_after = None
        if self._depth == 1:
            self._lost = False
            self._valid_until = sent + self.ttl
        return True

    def _release_call(self, owner: str) -> Run:
        return Run(_RELEASE, self._keys3, [owner, self.name], self._ops[1])

    def _give_back_steps(self) -> Steps:
        """An acquire was interrupted or failed: leave nothing held or queued (best effort)."""
        owner = self._owner
        try:
            if owner and not self._depth:
                reply = yield self._acquire_call("cancel", 0.0)
                if int(reply[0]) == 1:
                    yield self._release_call(owner)
        except Exception as exc:  # the original error matters more
            log.warning("lock %s: could not give back an interrupted acquire: %s", self.name, exc)
        finally:
            if not self._depth:
                self._end_hold()

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

    def _release_flow(self) -> Steps:
        with self._cond:
            if not self._depth:
                raise LockNotOwned(f"lock {self.name!r} is not held by this Lock object", name=self.name)
            owner, outermost, lost = self._owner or "", self._depth == 1, self._lost
            renewer = self._renewer if outermost else None
            if outermost:
                self._renewer = None
        if renewer is not None:
            renewer.stop()  # first: a release that fails must not leave the lock renewed
        try:
            result = yield self._release_call(owner)
        except BaseException:
            self._depth -= 1
            if not self._depth:
                self._end_hold()
            raise
        self._depth -= 1
        if result == 0 or not self._depth:
            self._end_hold()
        if result == 0 or lost:
            raise LockLost(
                f"lock {self.name!r} was lost before release: it expired or passed to another "
                f"owner (our fencing token was {self._fence}); work done under it may have "
                "overlapped with the next holder",
                name=self.name,
            )

    def extend(self, ttl: float | None = None) -> None:
        """Reset the lock's time-to-live to ``ttl`` seconds from now (default: the Lock's ttl).

        Raises LockLost if the lock is no longer ours, LockNotOwned if never acquired.
        """
        run(self.client, self._extend_flow(ttl))

    async def aextend(self, ttl: float | None = None) -> None:
        """``extend()`` on the event loop (see there)."""
        await arun(self._async_client(), self._extend_flow(ttl))

    def _extend_flow(self, ttl: float | None) -> Steps:
        ttl = self.ttl if ttl is None else check_ttl(ttl)
        self._check_fork()
        owner = self._owner
        if not self._depth or owner is None:
            raise LockNotOwned(f"lock {self.name!r} is not held by this Lock object", name=self.name)
        if not (yield from self._extend_steps(owner, ttl)):
            self._lost = True
            raise LockLost(
                f"lock {self.name!r} could not be extended: it expired or passed to another "
                f"owner (our fencing token was {self._fence})",
                name=self.name,
            )

    def _extend_steps(self, owner: str, ttl: float) -> Steps:
        sent = time.monotonic()
        ok = yield Run(
            _EXTEND,
            [self.keys.lock, self.keys.index],
            [owner, _ms(ttl), self.name],
            f"extend lock {self.name!r}",
        )
        if ok and self._owner == owner:
            self._valid_until = sent + ttl
        return bool(ok)

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

    def _owned_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if owner is None or not self._depth:
            return False
        holder = yield from self._inspect_steps()
        return holder is not None and holder["token"] == owner

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

    def _inspect_steps(self) -> Steps:
        reply = yield Run(_INSPECT, [self.keys.lock, self.keys.queue], [], f"inspect lock {self.name!r}")
        return holder_from_reply(reply)

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


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def force_release(name: str, fence: int, *, client: Any = None, prefix: str | None = None) -> str:
    """Free the grant ``fence`` of lock ``name`` whoever holds it (an operator's action).

    Only that grant is released: if the lock changed hands since, nothing
    happens. The oldest live waiter, if any, gets the lock. Returns
    "released", "handed-off" or "not-held".
    """
    if client is None:
        from ..transport.clients import get_client

        client = get_client()
    k = KeyBuilder(prefix or default_prefix()).lock(name)
    result = _FORCE_RELEASE(
        client,
        [k.lock, k.queue, k.index],
        [name, int(fence)],
        operation=f"force-release lock {name!r}",
    )
    return {0: "not-held", 1: "released", 2: "handed-off"}[int(result)]


# --- the watchdog ---------------------------------------------------------------------
#
# What a renewal does is written once (``_renew_once``); a thread runs it for
# holds taken with acquire(), an asyncio task for holds taken with aacquire().

_LOST = "lost"


def _renew_once(lock_ref: Any, owner: str, stopped: Callable[[], bool], holder_alive: Callable[[], bool]) -> Steps:
    """One renewal of the hold ``owner``: returns the pause before the next one,
    None to stop, or ``_LOST`` (the hold is marked lost; ``on_lost`` is due)."""
    lock = lock_ref()
    if lock is None or lock._owner != owner or not lock._depth:
        return None
    if not holder_alive():
        log.warning("lock %s: its reentrant holder ended without releasing it; no longer renewed, "
                    "it expires after its TTL", lock.name)  # fmt: skip
        return None
    interval = lock.ttl / 3.0
    try:
        if (yield from lock._extend_steps(owner, lock.ttl)):
            return interval
    except Exception as exc:  # Redis away, or anything else: retry while the TTL lasts
        if time.monotonic() < lock._valid_until:
            log.warning("lock %s: renewal failed, will retry: %s", lock.name, exc)
            return max(0.001, min(interval, lock.ttl / 10.0))
    if stopped() or lock._owner != owner:
        return None  # released meanwhile
    lock._lost = True
    log.error("lock %s: lost (renewal found it expired or taken)", lock.name)
    return _LOST


class _Renewer(threading.Thread):
    """Watchdog: extends one hold every ttl/3 until stopped or the lock is lost.

    Holds only a weak reference, so a forgotten Lock is collected and the
    thread ends (its lock then expires after the TTL); a reentrant hold (owned
    by the thread that took it) also stops being renewed once that thread has
    ended without releasing it, since no other thread can. It renews the hold it
    was started for (``owner``), never a later one of the same object. A
    failed renewal is retried every ttl/10 until the TTL has run out since the
    last confirmed one; then, as when Redis answers that the lock is gone, the
    hold is marked lost and ``on_lost`` is called. Nothing it meets ends it
    silently.
    """

    def __init__(self, lock: Lock, owner: str, holder: threading.Thread | None = None) -> None:
        super().__init__(name=f"redcoord-renew:{lock.name}", daemon=True)
        self._lock = weakref.ref(lock)
        self._client = lock.client
        self._owner = owner
        self._holder = holder
        self._stopped = threading.Event()
        self._pause: float | str | None = lock.ttl / 3.0

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        holder = self._holder
        alive = (lambda: True) if holder is None else holder.is_alive
        pause = self._pause
        while isinstance(pause, float) and not self._stopped.wait(pause):
            pause = run(self._client, _renew_once(self._lock, self._owner, self._stopped.is_set, alive))
        lock = self._lock()
        if pause == _LOST and lock is not None and lock.on_lost is not None:
            try:
                lock.on_lost(lock)
            except Exception:
                log.exception("lock %s: on_lost callback failed", lock.name)


class _AsyncRenewer:
    """The watchdog of a hold taken with ``aacquire()``: an asyncio task on its loop.

    Same policy as the thread (see :class:`_Renewer`); ``on_lost`` may be a
    coroutine function. A reentrant hold stops being renewed once its task is done.
    """

    def __init__(self, lock: Lock, owner: str, client: Any, holder: asyncio.Task | None) -> None:
        self._lock = weakref.ref(lock)
        self._owner = owner
        self._client = client
        self._holder = holder
        self._stopped = False
        self._task = asyncio.get_running_loop().create_task(self._run(lock.ttl / 3.0), name=f"redcoord-renew:{lock.name}")

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(RuntimeError):  # its loop is closed: the task is gone with it
            self._task.get_loop().call_soon_threadsafe(self._task.cancel)

    async def _run(self, pause: float | str | None) -> None:
        holder = self._holder
        alive = (lambda: True) if holder is None else (lambda: not holder.done())
        while isinstance(pause, float):
            await asyncio.sleep(pause)
            if self._stopped:
                return
            pause = await arun(self._client, _renew_once(self._lock, self._owner, lambda: self._stopped, alive))
        lock = self._lock()
        if pause == _LOST and lock is not None and lock.on_lost is not None:
            try:
                outcome = lock.on_lost(lock)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                log.exception("lock %s: on_lost callback failed", lock.name)


# --- owner identity of asyncio tasks (reentrant locks) --------------------------------

_task_ids: weakref.WeakKeyDictionary[Any, tuple[str, str]] = weakref.WeakKeyDictionary()


def _task_owner_token() -> str:
    """Token shared by every reentrant Lock acquired by this asyncio task."""
    task = asyncio.current_task()
    nonce = _nonce()
    mine = _task_ids.get(task)
    if mine is None or mine[0] != nonce:
        mine = (nonce, f"r:{nonce}:{secrets.token_urlsafe(6)}")
        _task_ids[task] = mine
    return mine[1]


def holder_from_reply(reply: Any) -> dict[str, Any] | None:
    """The holder described by a ``lock_inspect.lua`` reply, or None when the lock is free."""
    if not reply:
        return None
    token, fence, pttl, depth, host, pid, thread, queued, expires_ms = reply
    return {
        "token": _text(token),
        "fence": int(fence),
        "ttl": int(pttl) / 1000.0,
        "depth": int(depth),
        "host": _text(host),
        "pid": int(pid),
        "thread": _text(thread),
        "queued": int(queued),
        "expires_ms": int(expires_ms),
    }


def read_holders(client: Any, names: list[str], *, prefix: str | None = None) -> list[dict[str, Any] | None]:
    """The holders of several locks (see :meth:`Lock.holder`), in one pipelined round trip."""
    builder = KeyBuilder(prefix or default_prefix())
    lock_keys = [builder.lock(name) for name in names]

    def build(pipe: Any) -> None:
        for k in lock_keys:
            _INSPECT.queue(pipe, [k.lock, k.queue], [])

    replies = execute_pipeline(client, build, operation="inspect locks") if names else []
    return [holder_from_reply(reply) for reply in replies]
