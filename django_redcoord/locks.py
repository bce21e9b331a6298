"""Distributed locks on one Redis: token-checked, expiring, fenced, fair.

How it works (every operation is one round trip, one Lua script):

* ``acquire`` runs ``lock_acquire.lua``: if the lock is free and nobody is
  queued, it writes ``{token, fence, holder...}`` into the lock hash with a
  ``PEXPIRE`` TTL, increments the per-name fencing counter and updates the
  live-locks index. Otherwise the caller joins a FIFO queue in the same
  script and blocks with ``BLPOP`` on its own wake list.
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

Fairness: waiters are served strictly in the order their first acquire
attempt reached Redis. A waiter keeps its place by re-checking within its
lease (at most ``chunk + 1 s``); one that stops (killed, paused) loses its
place after that and is skipped. A waiter killed inside its lease can still be
handed the lock, which then expires after its TTL like a crashed holder's.
"""

from __future__ import annotations

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

from . import conf
from .connection import UsesClient, unavailable_as_ours
from .exceptions import LockError, LockLost, LockNotAcquired, LockNotOwned
from .keys import KeyBuilder, LockKeys, validate_name
from .scripting import PinnedLane, Script, command

log = logging.getLogger(__name__)

_ACQUIRE = Script("lock_acquire", includes=("lock_common.lua",))
_RELEASE = Script("lock_release", includes=("lock_common.lua",))
_EXTEND = Script("lock_extend", includes=("lock_common.lua",))
_FORCE_RELEASE = Script("lock_force_release", includes=("lock_common.lua",))

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
        _process_nonce = (pid, secrets.token_hex(8))
    return _process_nonce[1]


def _thread_owner_token() -> str:
    """Token shared by every reentrant Lock of this thread in this process."""
    nonce = _nonce()
    mine = getattr(_thread_ids, "value", None)
    if mine is None or mine[0] != nonce:
        mine = (nonce, f"r:{nonce}:{secrets.token_hex(6)}")
        _thread_ids.value = mine
    return mine[1]


def _host() -> str:
    global _hostname
    if _hostname is None:
        _hostname = socket.gethostname()
    return _hostname


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

    A Lock object belongs to one thread at a time. After ``acquire()``,
    ``lock.token`` is the fencing token: an integer that grows with every
    grant of this name, to be checked (strictly ``>``) by whatever the
    critical section writes to.
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
        default_ttl, default_wait = conf.lock_defaults() if DEFAULT in (ttl, wait) else (0, 0)
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
        self.keys: LockKeys = KeyBuilder(prefix or conf.default_prefix()).lock(self.name)
        k = self.keys
        # Built once: every acquire and release sends these.
        self._keys5 = [k.lock, k.fence, k.queue, k.waiters, k.index]
        self._ops = (f"acquire lock {self.name!r}", f"release lock {self.name!r}")
        self._owner: str | None = None
        self._fence: int | None = None
        self._depth = 0
        self._valid_until = 0.0
        self._lost = False
        self._renewer: _Renewer | None = None
        self._max_block: float | None = None
        self._release_packed: bytes | None = None
        self._pin = PinnedLane()
        self.retry_after: float | None = None

    def __repr__(self) -> str:
        state = f"held, token={self._fence}" if self._depth else "not held"
        return f"<Lock {self.name!r} ttl={self.ttl:g}s {state}>"

    @property
    def token(self) -> int | None:
        """The fencing token of the current hold (None when not held)."""
        return self._fence if self._depth else None

    @property
    def held(self) -> bool:
        """True while this object believes it holds the lock (no round trip)."""
        return self._depth > 0

    @property
    def lost(self) -> bool:
        """True once the lock may have passed to someone else while held.

        Set by the watchdog when a renewal finds the lock gone, and also by the
        local monotonic clock alone once the TTL has run out since the last
        confirmed grant or renewal: a holder can check it before acting.
        """
        return self._depth > 0 and (self._lost or time.monotonic() >= self._valid_until)

    # -- acquire --------------------------------------------------------------

    def acquire(self, wait: float | None = DEFAULT) -> bool:
        """Take the lock, waiting up to ``wait`` seconds (default: the Lock's).

        Returns True when held, False when the wait ran out. Raises
        CoordinationUnavailable when Redis cannot be reached; the outcome is
        then unknown, and calling ``acquire()`` again on the same object is
        safe (the same owner token gets the same grant back).
        """
        wait = self.wait if wait is DEFAULT else check_wait(wait)
        if self._depth and not self.reentrant:
            raise LockError(
                f"lock {self.name!r} is already held by this Lock object; release it first, "
                "or create the Lock with reentrant=True",
                name=self.name,
            )
        if self._owner is None:
            self._owner = _thread_owner_token() if self.reentrant else secrets.token_hex(16)
            # Packed now, so that a release (the start of a handoff) only writes it.
            self._release_packed = _RELEASE.packed(self._keys5, [self._owner, self.name])
        started = time.monotonic()
        deadline = math.inf if wait is None else started + wait
        chunk = self._chunk()
        mode = "try" if wait == 0 else "queue"
        while True:
            remaining = deadline - time.monotonic()
            if mode == "wait" and remaining <= 0:
                mode = "cancel"
            sent = time.monotonic()
            reply = self._run_acquire(mode, min(max(remaining, 0.0), chunk))
            if reply[0] == 1:
                return self._granted(int(reply[1]), sent)
            pttl = int(reply[1]) / 1000.0
            if mode in ("try", "cancel"):
                self.retry_after = pttl or None
                if not self._depth:
                    self._owner = None
                return False
            mode = "wait"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                continue
            # Block until a release hands the lock to us, the holder's TTL runs
            # out (then we re-check and the queue head takes it over), or the
            # wait ends. BLPOP's timeout 0 means "forever": never send it.
            block = max(0.001, min(remaining, chunk, pttl + 0.002 if pttl else chunk))
            sent = time.monotonic()
            popped = command(
                self.client, "BLPOP", self.keys.wake(self._owner), f"{block:.3f}",
                operation=f"waiting for lock {self.name!r}", pin=self._pin,
            )  # fmt: skip
            if popped is not None:
                return self._granted(int(popped[1]), sent)

    def _run_acquire(self, mode: str, lease: float) -> list[Any]:
        owner = self._owner or ""
        return _ACQUIRE(
            self.client,
            [*self._keys5, self.keys.wake_prefix + owner],
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
            operation=self._ops[0],
        )

    def _granted(self, fence: int, sent: float) -> bool:
        last = self._fence
        if last is not None and (fence < last or (fence == last and not self._depth)):
            # The per-name counter restarted: Redis lost its data (a restart
            # without persistence, a failover to an empty replica). Tokens
            # must never go backwards; refuse the grant and give it back.
            self._depth, self._fence = 1, fence
            try:
                self.release()
            finally:
                self._depth, self._fence = 0, last
            raise LockError(
                f"fencing token of lock {self.name!r} went backwards ({fence} after {last}): the Redis "
                "server lost its data (restarted without persistence?); the grant was refused",
                name=self.name,
            )
        self._fence = fence
        self._depth += 1
        self.retry_after = None
        if self._depth == 1:
            self._lost = False
            self._valid_until = sent + self.ttl
            if self.auto_renew:
                self._renewer = _Renewer(self)
                self._renewer.start()
        return True

    def _chunk(self) -> float:
        """Longest single BLPOP: below the client's socket timeout, at most 10 s."""
        if self._max_block is None:
            kwargs = getattr(getattr(self.client, "connection_pool", None), "connection_kwargs", {})
            timeout = kwargs.get("socket_timeout")
            if not timeout:
                self._max_block = 10.0
            else:
                self._max_block = max(0.05, min(10.0, timeout - 0.5 if timeout > 1.0 else timeout / 2))
        return self._max_block

    # -- release / extend ------------------------------------------------------

    def release(self) -> None:
        """Release one hold of the lock (the waiter queued longest gets it).

        Raises LockLost if the lock expired or passed to another owner before
        this call (the other owner's lock is not touched), and LockNotOwned if
        this object does not hold it.
        """
        if not self._depth:
            raise LockNotOwned(f"lock {self.name!r} is not held by this Lock object", name=self.name)
        result = _RELEASE(
            self.client,
            self._keys5,
            [self._owner, self.name],
            operation=self._ops[1],
            packed=self._release_packed,
            pin=self._pin,
        )
        lost = self._lost
        self._depth -= 1
        if result == 0:
            self._depth = 0
        if not self._depth:
            self._stop_renewer()
            self._owner = None if not self.reentrant else self._owner
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
        ttl = self.ttl if ttl is None else check_ttl(ttl)
        if not self._depth:
            raise LockNotOwned(f"lock {self.name!r} is not held by this Lock object", name=self.name)
        if not self._extend(ttl):
            self._lost = True
            raise LockLost(
                f"lock {self.name!r} could not be extended: it expired or passed to another "
                f"owner (our fencing token was {self._fence})",
                name=self.name,
            )

    def _extend(self, ttl: float) -> bool:
        sent = time.monotonic()
        ok = _EXTEND(
            self.client,
            [self.keys.lock, self.keys.index],
            [self._owner, _ms(ttl), self.name],
            operation=f"extend lock {self.name!r}",
        )
        if ok:
            self._valid_until = sent + ttl
        return bool(ok)

    def _stop_renewer(self) -> None:
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.stop()

    # -- inspection ------------------------------------------------------------

    def locked(self) -> bool:
        """True if anyone holds the lock now (one round trip)."""
        with unavailable_as_ours(self.client, f"inspect lock {self.name!r}"):
            return bool(self.client.exists(self.keys.lock))

    def owned(self) -> bool:
        """True if this object's owner holds the lock now, according to Redis."""
        if self._owner is None:
            return False
        with unavailable_as_ours(self.client, f"inspect lock {self.name!r}"):
            current = self.client.hget(self.keys.lock, "token")
        return current is not None and current.decode() == self._owner

    def ttl_remaining(self) -> float | None:
        """Seconds until the lock expires, or None if nobody holds it."""
        with unavailable_as_ours(self.client, f"inspect lock {self.name!r}"):
            pttl = self.client.pttl(self.keys.lock)
        return None if pttl < 0 else pttl / 1000.0

    # -- context manager -------------------------------------------------------

    def __enter__(self) -> Lock:
        if not self.acquire():
            raise LockNotAcquired(
                f"lock {self.name!r} could not be acquired within "
                f"{'forever' if self.wait is None else f'{self.wait:g} s'}",
                name=self.name,
                wait=self.wait,
            )
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.release()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def force_release(name: str, fence: int, *, client: Any = None, prefix: str | None = None) -> str:
    """Free the grant ``fence`` of lock ``name`` whoever holds it (an operator's action).

    Only that grant is released: if the lock changed hands since, nothing
    happens. The oldest live waiter, if any, gets the lock. Returns
    "released", "handed-off" or "not-held".
    """
    if client is None:
        from .connection import get_client

        client = get_client()
    k = KeyBuilder(prefix or conf.default_prefix()).lock(name)
    result = _FORCE_RELEASE(
        client,
        [k.lock, k.fence, k.queue, k.waiters, k.index],
        [name, int(fence)],
        operation=f"force-release lock {name!r}",
    )
    return {0: "not-held", 1: "released", 2: "handed-off"}[int(result)]


class _Renewer(threading.Thread):
    """Watchdog: extends the lock every ttl/3 until stopped or the lock is lost.

    Holds only a weak reference, so a forgotten Lock is collected and the
    thread ends (its lock then expires after the TTL).
    """

    def __init__(self, lock: Lock) -> None:
        super().__init__(name=f"redcoord-renew:{lock.name}", daemon=True)
        self._lock = weakref.ref(lock)
        self._stopped = threading.Event()
        self._interval = lock.ttl / 3.0

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        from .exceptions import CoordinationUnavailable

        while not self._stopped.wait(self._interval):
            lock = self._lock()
            if lock is None or not lock.held:
                return
            try:
                if lock._extend(lock.ttl):
                    continue
            except CoordinationUnavailable as exc:
                if time.monotonic() < lock._valid_until:
                    log.warning("lock %s: renewal failed, will retry: %s", lock.name, exc)
                    continue
            if self._stopped.is_set():
                return
            lock._lost = True
            log.error("lock %s: lost (renewal found it expired or taken)", lock.name)
            if lock.on_lost is not None:
                try:
                    lock.on_lost(lock)
                except Exception:
                    log.exception("lock %s: on_lost callback failed", lock.name)
            return
