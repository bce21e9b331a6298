"""Distributed locks on one Redis: token-checked, expiring, fenced, fair.

How it works (every operation is one round trip, one Lua script):

* ``acquire`` runs ``locks/acquire.lua``: if the lock is free and nobody is
  queued, it writes one string, ``{token, fence, expiry, holder...}`` in
  MessagePack, with a ``PX`` TTL, and the name into its live-lock index
  bucket. Otherwise the caller appends its entry to a FIFO queue list in the
  same script and blocks with ``BLPOP`` on the wake list of whoever is just
  ahead of it (the holder, or the waiter queued before it; the script's reply
  names it). A live lock is one key and one small index entry.
* ``release`` runs ``locks/release.lua``: if the token matches it hands the
  lock straight to the oldest live waiter (new token, new fence) and pushes
  the fence onto the releaser's own wake list, where that waiter blocks; the
  waiter returns from ``BLPOP`` already owning the lock (a waiter of the
  releaser's own process is handed it in-process instead, from the script's
  reply: no push, no blocked connection; see ``transport/nearby.py``). Every
  key a script touches is in its KEYS (a Cluster node migrating the slot
  never aborts one half-way). No polling, no thundering herd, no barging: a process that
  releases and re-acquires at once queues behind the others. A waiter that
  gives up tells the one behind it (``moved``) to re-check.
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

from typing import Any

from ..holds.hold import Hold
from ..holds.identity import made_here, process_nonce
from ..keys import KeyBuilder, LockKeys
from ..transport import nearby
from ..transport.commands import as_text as _text
from ..transport.drivers import Run, Steps, arun, run
from ..transport.scripts import Script

_COMMON = ("common/waiters", "locks/common")
ACQUIRE = Script("locks/acquire", includes=_COMMON)
RELEASE = Script("locks/release", includes=_COMMON)
EXTEND = Script("locks/extend", includes=_COMMON)
FORCE_RELEASE = Script("locks/force_release", includes=_COMMON)
INSPECT = Script("locks/inspect", includes=_COMMON)

#: the word that makes the waiter behind look again (as locks/common.lua's leave_lock_queue)
MOVED = "moved"


class Lock(Hold):
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

    kind = "lock"
    reentrant_allowed = True
    _acquire_script = ACQUIRE
    _release_script = RELEASE
    _extend_script = EXTEND
    keys: LockKeys

    def _setup(self, keys: KeyBuilder) -> None:
        self.keys = k = keys.lock(self.name)
        # Built once: every acquire and release sends these.
        self._release_base = [k.lock, k.queue, k.index, k.waits, k.wait_index]
        self._extend_base = [k.lock, k.index]
        self._wake_prefix = k.wake_prefix

    # A queued waiter blocks on the wake list of whoever is just ahead of it
    # (the holder, or the waiter queued before it: the acquire script's reply
    # names it), so a release pushes the hand-off onto its own wake list, a
    # key it declares (see lua/locks/common.lua). Interruptions go to a list
    # of the waiter's own, which it blocks on too.

    def _release_keys_for(self, owner: str) -> list[str]:
        return [*self._release_base, self._wake_prefix + owner]

    def _wake_key(self, owner: str) -> str:
        return self.keys.interrupt(owner)

    def _wait_keys(self, owner: str, reply: Any) -> list[str]:
        ahead = _text(reply[2]) if len(reply) > 2 else owner
        return [self._wake_prefix + ahead, self.keys.interrupt(owner)]

    def _popped_fence(self, owner: str, popped: Any) -> int | None:
        fence, _, token = _text(popped[1]).partition(" ")
        return (
            int(fence) if token == owner and fence.isdigit() else None
        )  # 'moved', an interruption, another's grant

    # Between two holds of one process the word passes in-process (..transport.nearby): the
    # release script does not push a hand-off to a waiter whose queue entry names this process
    # (its nonce) and replies with it instead; the releaser hands it on here. A waiter whose
    # one ahead was made here blocks here alone ('quiet'): every word it waits for comes from
    # that one, which hands every ending of its own here (a release that handed on to someone
    # else, found the lock lost or got no reply: 'moved', look again; giving up its place too).

    def _quiet_wait(self, reply: Any) -> bool:
        return nearby.enabled and len(reply) > 2 and made_here(_text(reply[2]))

    def _extra_args(self) -> list[Any]:
        # (acquire: ARGV[10], release: ARGV[3]; extend ignores it)
        return [process_nonce()] if nearby.enabled else []

    def _released(self, owner: str, result: Any) -> int:
        wake = self._wake_prefix + owner
        if isinstance(result, list):  # handed to a waiter of this process: {2, element}
            self._woke_task = nearby.hand(wake, _text(result[1]))
            return int(result[0])
        if result in (None, 0, 1):  # no reply, lost, freed: the one behind us looks again
            nearby.hand(wake, MOVED, keep=False)  # (2: pushed in Redis; 3: still ours)
        return 0 if result is None else int(result)

    def _left_queue(self, owner: str) -> None:
        nearby.hand(self._wake_prefix + owner, MOVED)

    # -- inspection ------------------------------------------------------------

    def locked(self) -> bool:
        """True if anyone holds the lock now (one round trip)."""
        return run(self.client, self._inspect_steps()) is not None

    async def alocked(self) -> bool:
        """``locked()`` on the event loop."""
        return await arun(self._async_client(), self._inspect_steps()) is not None

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

    def _owned_steps(self) -> Steps:
        self._check_fork()
        owner = self._owner
        if owner is None or not self._depth:
            return False
        holder = yield from self._inspect_steps()
        return holder is not None and holder["token"] == owner

    def _inspect_steps(self) -> Steps:
        reply = yield Run(
            INSPECT, [self.keys.lock, self.keys.queue], [], f"inspect lock {self.name!r}"
        )
        return holder_from_reply(reply)


def holder_from_reply(reply: Any) -> dict[str, Any] | None:
    """The holder described by a ``locks/inspect.lua`` reply, or None when the lock is free."""
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
