"""A hold's round trips, written once: what ``acquire``, ``release`` and ``extend``
send to Redis and how they read the replies, as steps.

Every primitive that is *held* — a lock, a semaphore permit, a read or a
write hold of a read-write lock — takes it the same way: one acquire script
that grants it or queues the caller FIFO, a ``BLPOP`` on a wake list onto
which a release pushes the new fencing token (a chain of wake lists, so that
every script names the keys it touches: see :mod:`.chain`), re-checks
within a lease so a dead waiter's place lapses, and one release script that
hands the hold to the oldest live waiter. :class:`HoldSteps` is that
protocol without I/O; each primitive gives it its scripts and keys
(:class:`~.hold.Hold`), and the sync or the asyncio driver runs it. The
drivers throw a failed round trip or a cancellation in at the ``yield``: the
``except BaseException`` clauses below give back what was taken by yielding
more steps (see :mod:`..transport.drivers`).

The scripts of every held primitive follow one contract:

* acquire: ``ARGV`` = owner token, ttl_ms, mode (``try`` | ``queue`` |
  ``wait`` | ``cancel``), lease_ms, name, reentrant (``0``/``1``), host, pid,
  thread, then the primitive's own; returns ``{1, fence, depth}`` when held,
  ``{0, retry_ms}`` when not (retry_ms: when a re-check may find it free).
* release: ``ARGV`` = owner token, name, ...; returns 0 not ours, 1 released,
  2 released and handed on, 3 a reentrant hold unwound by one level.
* extend: ``ARGV`` = owner token, ttl_ms, name, ...; returns 0 not ours, 1 extended.
* the wake list receives the grant's fencing token (digits), or
  ``interrupt`` (see :meth:`~.hold.Hold._interrupt`).

With ``replicas=n`` a grant is confirmed before it is used: the extend
script (a write through the hold, which also checks it is still ours) and
``WAIT n timeout`` go in one batch on one connection — ``WAIT`` counts the
replicas that acknowledged everything that connection wrote, so also the
grant written before it (by our acquire, or by the releaser that handed it
to us: one replication stream). Fewer acknowledgements: the grant is given
back and ``ReplicasNotSynced`` raised (fail closed); a check whose reply
does not come (it outlasted the socket timeout) gives the grant back too.
``extend()`` and the watchdog's renewals are confirmed the same way; an
unconfirmed one raises ``ReplicasNotSynced`` and does not move the hold's
validity (see :func:`check_replica_timeout` for the limit on the wait).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from ..exceptions import (
    CoordinationUnavailable,
    LockError,
    LockLost,
    LockNotOwned,
    PoolExhausted,
    ReplicasNotSynced,
)
from ..observe import observe, observers
from ..transport.commands import as_text as _text
from ..transport.commands import socket_timeout
from ..transport.drivers import Batch, Blpop, EndsWaits, Pause, Run, Step, Steps, Within
from ..transport.errors import unreachable
from ..transport.scripts import Script
from ..values import check_ttl, ms
from .identity import host
from .settling import asettle_later, settle_later

log = logging.getLogger("django_redcoord.locks")

# A queued waiter must re-check at least this often, and its place in the
# queue survives this much longer than its current wait.
QUEUE_GRACE = 1.0

# A wait whose server went away re-checks this often until one answers.
OUTAGE_RETRY = 0.2

#: At most one warning this often (s) per kind of wait fault (see :func:`warn_now_and_then`).
WARN_EVERY = 10.0
_warned: dict[str, tuple[float, int]] = {}
_warned_lock = threading.Lock()


def warn_now_and_then(logger: logging.Logger, message: str, *args: Any) -> None:
    """``logger.warning(message, *args)`` at most once per :data:`WARN_EVERY` seconds for one
    ``message`` (the others at DEBUG, counted in the next warning): one fault under thousands
    of waits of a process (a killed hub connection, a paused server) is a line, not a line per
    wait."""
    now = time.monotonic()
    with _warned_lock:
        last, quiet = _warned.get(message, (-math.inf, 0))
        loud = now - last >= WARN_EVERY
        _warned[message] = (now, 0) if loud else (last, quiet + 1)
    if not loud:
        logger.debug(message, *args)
    elif quiet:
        logger.warning(
            message + f" (and {quiet} more like it in the {now - last:.0f} s before)", *args
        )
    else:
        logger.warning(message, *args)


# A waiter told it is first in line blocks on for what is left of its block when at least this
# much is left; less, and it looks again (as cheap as the wait).
MIN_SWITCH_BLOCK = 0.005

#: An acquire call made before the steps began: (when it was sent, its reply, or its error).
First = tuple[float, Any, "BaseException | None"]

# The ``kind`` of a hold in events (see ..observe): one word, a label value.
_EVENT_KINDS = {"read lock": "read", "write lock": "write", "latch party": "latch"}


class HoldSteps:
    """The I/O-free half of :class:`~.hold.Hold`: its operations as generators of round trips.

    Works on the state the Hold keeps (``_owner``, ``_depth``, ``_fence``...)
    and the primitive's hooks (``_acquire_script``, ``_acquire_keys``...);
    mixed into it, never used alone.
    """

    #: What the primitive is called in messages ("lock", "semaphore"...).
    kind = "hold"
    _acquire_script: Script
    _release_script: Script
    _extend_script: Script
    name: str
    ttl: float
    reentrant: bool
    replicas: int
    replica_timeout: float
    _owner: str | None
    _depth: int
    _fence: int | None
    _lost: bool
    _interrupted: bool
    _valid_until: float
    _retry_owner: str | None
    _granted_at: float | None
    retry_after: float | None
    _ops: tuple[str, str]  # the acquire's and the release's names in errors
    #: A look of the acquire under way was answered (an unsent error after it gives back).
    _answered: bool = False
    #: The acquire under way uses a token kept from an earlier unknown outcome.
    _retrying: bool = False
    _cond: threading.Condition
    _renewer: Any  # its watchdog (a Renewer or an AsyncRenewer), while it renews

    def _end_hold(self) -> None:  # pragma: no cover - provided by Hold
        raise NotImplementedError

    @property
    def doubt_lasts(self) -> float:  # pragma: no cover - provided by Hold
        raise NotImplementedError

    _settles_in_thread: Callable[[], bool]  # (UsesClient's, through Hold)

    def _check_fork(self) -> None:  # pragma: no cover - provided by Hold
        raise NotImplementedError

    # -- the primitive's hooks: its keys and its own arguments ------------------------
    #
    # A primitive sets, in _setup(): ``_release_base`` (the KEYS of its release
    # script; its acquire script takes the same plus the caller's wake list,
    # last), ``_extend_base`` (the KEYS of its extend script) and
    # ``_wake_prefix`` (a waiter's wake list is that plus its owner token).

    _release_base: list[str]
    _extend_base: list[str]
    _wake_prefix: str
    keys: Any  # the primitive's keys (LockKeys...): its ``hub_prefix`` names the wake hub's

    def _acquire_keys(self, owner: str) -> list[str]:
        return [*self._release_base, self._wake_prefix + owner]

    def _release_keys(self) -> list[str]:
        return self._release_base

    def _extend_keys(self) -> list[str]:
        return self._extend_base

    def _wake_key(self, owner: str) -> str:
        return self._wake_prefix + owner

    def _release_keys_for(self, owner: str) -> list[str]:
        """The release script's KEYS for ``owner`` (a primitive whose release names the owner's
        keys overrides it)."""
        return self._release_keys()

    def _wait_keys(self, owner: str, reply: Any) -> list[str]:
        """What a queued waiter BLPOPs, given its acquire script's reply: its own wake list by
        default."""
        return [self._wake_key(owner)]

    def _popped_fence(self, owner: str, popped: Any) -> int | None:
        """The fencing token a BLPOP brought us (a hand-off), or None: re-check (anything else)."""
        value = _text(popped[1])
        return int(value) if value.isdigit() else None

    def _quiet_wait(self, reply: Any) -> bool:
        """Whether the wait the acquire script's ``reply`` asks for blocks in-process alone (only
        a hold of this process pushes onto its lists, and it hands what it pushes here: see
        ..transport.nearby). False by default: it blocks in Redis."""
        return False

    def _released(self, owner: str, result: Any) -> int:
        """The release script's ``result`` (None: no reply came), as 0-3; a primitive whose
        release may hand on in-process tells its waiter here."""
        return 0 if result is None else int(result)

    def _left_queue(self, owner: str) -> None:
        """A 'cancel' look found us not granted: we left the queue (the script told the waiter
        behind us in Redis; a primitive with quiet waits tells it in-process too)."""

    def _now_first(self, owner: str, reply: Any, popped: Any) -> list[str] | None:
        """What to block on next, without a look, when a BLPOP brought word that we are first in
        line now; None: look again (anything else)."""
        return None

    def _tell_next(self, owner: str) -> Step | None:
        """A step run after a hand-off popped from a shared list: tell the waiter behind us (or
        None)."""
        return None

    def _lease_left_enough(self, sent: float) -> bool:
        """A hand-off popped now, its lease counted from ``sent`` (the start of our last look),
        leaves at least half the TTL: else look again first."""
        return sent + self.ttl - time.monotonic() >= self.ttl / 2

    def _fence_floor(self, reply: Any) -> int:
        """A popped hand-off whose fence is not above this (from the look that queued us) is
        stale: re-check.

        0 by default: a wake list no hand-off made before our look can be left on.
        """
        return 0

    def _extra_args(self) -> list[Any]:
        """ARGV the primitive adds after the standard ones (acquire, release and extend)."""
        return []

    @property
    def _event_kind(self) -> str:
        return _EVENT_KINDS.get(self.kind, self.kind)

    def _observe_acquire(self, outcome: str, started: float | None) -> None:
        if started is not None:  # (None: nobody observed when the acquire began)
            observe(
                "hold.acquire",
                kind=self._event_kind,
                outcome=outcome,
                wait=time.monotonic() - started,
            )

    def _observe_lost(self) -> None:
        """Report a hold found lost (callers report each hold once: where ``_lost`` turns True)."""
        if observers:
            observe("hold.lost", kind=self._event_kind)

    def _acquire_flow(
        self, mode: str, deadline: float, chunk: float, first: First | None = None
    ) -> Steps:
        """An acquire's round trips, and what it gives back when it fails or is interrupted.

        ``first``: the first acquire call, already made outside the steps (see
        :meth:`~.hold.Hold.acquire`): the loop goes on from its reply, or its error.
        """
        started = (time.monotonic() if first is None else first[0]) if observers else None
        self._answered = False  # (a look of this acquire was answered: see below)
        if deadline != math.inf:
            # A paused server: the blocked wait, the last look and the give-back end by one bound
            # (the deadline and one socket timeout), not by a socket timeout each.
            yield Within(deadline)
        try:
            granted = yield from self._acquire_steps(mode, deadline, chunk, first)
            self._interrupted = (
                False  # an interruption applies to one acquire (even one not begun yet)
            )
        except (ReplicasNotSynced, LockLost):  # answered, and refused after the grant: give it back
            self._observe_acquire("unavailable", started)
            self._interrupted = False
            yield Within(None)  # (the server answers: the give-back goes however late)
            yield from self._give_back_steps()
            raise
        except CoordinationUnavailable as exc:
            self._observe_acquire("unavailable", started)
            self._interrupted = False
            if not exc.sent and self._answered:
                # Refused before it was sent (the pool's waiters are all waiting) after an
                # earlier look of this acquire took a place: a known outcome, given back.
                yield from self._give_back_steps()
                raise
            # Unknown outcome. The owner token is kept for this object's next
            # acquire(), which gets a grant whose reply was lost (or the queue
            # place) back; unused, the place lapses within one block and a second and
            # a grant expires after its TTL. Not sent at all (the first look, Redis
            # refusing the connection or the pool full): nothing to give back, nothing
            # in doubt but a token kept from an earlier unknown outcome, kept again.
            if not self._depth:
                if exc.sent or self._retrying:
                    self._retry_owner = self._owner
                self._end_hold()
            raise
        except BaseException:  # interrupted or cancelled: give back what we took
            self._interrupted = False
            yield from self._give_back_steps()
            raise
        if granted:
            self._acquired()
        elif not self._depth:
            self._end_hold()
        self._observe_acquire("acquired" if granted else "timeout", started)
        return granted

    def _acquired(self) -> None:
        """Called once an acquire is granted (a primitive with more to note overrides it)."""

    def _acquire_steps(
        self, mode: str, deadline: float, chunk: float, first: First | None = None
    ) -> Steps:
        """The waiting loop: queue in Redis, block on our wake list, re-check.

        A wait that loses its server (a failover, a restart) is issued again:
        the re-check takes a place (or finds the grant) on whatever server
        answers now, every ``OUTAGE_RETRY`` seconds while the wait lasts;
        the outage's error is raised when the wait runs out first.
        """
        owner = self._owner or ""
        outage: CoordinationUnavailable | None = None
        queued = False  # our place is in the queue: an outage is ridden out within the wait
        while True:
            remaining = deadline - time.monotonic()
            if mode == "wait" and (remaining <= 0 or self._interrupted):
                if outage is not None:
                    raise outage
                mode = "cancel"
            try:
                if first is None:
                    sent = time.monotonic()
                    reply = yield self._acquire_call(mode, min(max(remaining, 0.0), chunk))
                else:
                    (sent, reply, error), first = first, None
                    if error is not None:
                        raise error
                self._answered = True
            except CoordinationUnavailable as exc:
                if not (outage is not None or queued) or mode != "wait" or self._interrupted:
                    raise
                if isinstance(exc, PoolExhausted) or deadline - time.monotonic() <= 0:
                    raise
                if outage is None:
                    warn_now_and_then(
                        log,
                        "%s %s: a re-check lost its server (%s); looking again while the wait "
                        "lasts",
                        self.kind,
                        self.name,
                        exc,
                    )
                outage = exc
                yield Pause(min(OUTAGE_RETRY, max(0.0, deadline - time.monotonic())))
                continue
            outage = None
            if int(reply[0]) == 1:
                if mode == "cancel" and self._interrupted:
                    # Granted as we gave up (interrupted): give it back at once.
                    yield from self._release_steps(owner)
                    return False
                return (yield from self._grant_steps(int(reply[1]), sent))
            pttl = int(reply[1]) / 1000.0
            if mode in ("try", "cancel"):
                self.retry_after = pttl or None
                if mode == "cancel":
                    self._left_queue(owner)
                return False
            mode, queued = "wait", True
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._interrupted:
                continue
            # Block until a release hands the hold to us, a holder's TTL runs
            # out (then we re-check and the queue head takes it over), or the
            # wait ends. Anything else on the wake list is an interruption
            # (see Hold._interrupt): re-check in 'cancel' mode.
            block = min(remaining, chunk, pttl + 0.002 if pttl else chunk)
            # `sent` stays the start of the look that found us not granted: a hand-off we pop was
            # made after that look ran (its lease began later), but maybe long before we pop it (a
            # process paused between the look and the pop, or a hand-off left on the list): the
            # lease must not be counted from the pop.
            wait_keys, quiet = self._wait_keys(owner, reply), self._quiet_wait(reply)
            block_end = time.monotonic() + block
            while True:  # (each way out of it looks again)
                try:
                    popped = yield Blpop(
                        wait_keys,
                        block,
                        f"waiting for {self.kind} {self.name!r}",
                        self.keys.hub_prefix,
                        quiet,
                    )
                except CoordinationUnavailable as exc:
                    if (
                        isinstance(exc, PoolExhausted)
                        or self._interrupted
                        or deadline - time.monotonic() <= 0
                    ):
                        raise  # (a full pool is not an outage: waiting again would not help)
                    warn_now_and_then(
                        log,
                        "%s %s: the wait lost its server (%s); issuing it again",
                        self.kind,
                        self.name,
                        exc,
                    )
                    outage = exc
                    break
                if popped is None:
                    break  # timed out: re-check
                fence = self._popped_fence(owner, popped)
                if fence is not None and fence <= self._fence_floor(reply):
                    fence = (
                        None  # made before our look (a lease of ours that ran out since): re-check
                    )
                if fence is not None and not self._lease_left_enough(sent):
                    # Handed over long after our look (a wait chunk can outlast a short TTL):
                    # counted from the look, the lease would be mostly gone, or gone, though the
                    # server's began at the hand-off. Look again: the script finds it ours and
                    # renews it from the look's own start.
                    fence = None
                if fence is not None:
                    tell = self._tell_next(owner)
                    if tell is not None:
                        try:
                            yield tell
                        except CoordinationUnavailable as exc:  # it finds out at its next re-check
                            log.warning(
                                "%s %s: could not pass the turn on: %s", self.kind, self.name, exc
                            )
                    return (yield from self._grant_steps(fence, sent))
                # The waiter ahead, granted, says we are first in line now: wait for our hand-off
                # without a look, within the same block (our place, our floor and the bound of
                # the earliest lease are those of our last look).
                switched = self._now_first(owner, reply, popped)
                block = block_end - time.monotonic()
                if switched is None or block < MIN_SWITCH_BLOCK or self._interrupted:
                    break
                wait_keys, quiet = switched, False

    def _acquire_args(self, mode: str, lease: float) -> tuple[list[str], list[Any]]:
        """The acquire script's KEYS and ARGV."""
        owner = self._owner or ""
        return self._acquire_keys(owner), [
            owner,
            ms(self.ttl),
            mode,
            ms(lease + QUEUE_GRACE),
            self.name,
            "1" if self.reentrant else "0",
            host(),
            os.getpid(),
            threading.current_thread().name,
            *self._extra_args(),
        ]

    def _acquire_call(self, mode: str, lease: float) -> Step:
        call = Run(self._acquire_script, *self._acquire_args(mode, lease), self._ops[0])
        return (
            EndsWaits(call) if mode == "cancel" else call
        )  # giving up a place may use the pool's reserve

    def _plain_grant(self, fence: int) -> bool:
        """Whether a grant of ``fence`` is taken as it is: no replica check to make, and a fence
        above this object's last one (else :meth:`_grant_steps` has round trips to make)."""
        last = self._fence
        return not (
            (self.replicas and not self._depth)
            or (last is not None and (fence < last or (fence == last and not self._depth)))
        )

    def _grant_steps(self, fence: int, sent: float) -> Steps:
        last = self._fence
        if last is not None and (fence < last or (fence == last and not self._depth)):
            # Tokens are a hybrid logical clock and never go backwards unless
            # a Redis server's clock went back by more than the time since
            # our last grant: refuse the grant and give it back.
            yield from self._release_steps(self._owner or "")
            raise LockError(
                f"fencing token of {self.kind} {self.name!r} went backwards ({fence} after "
                f"{last}): the Redis server's clock is behind the one that issued the last token; "
                "the grant was refused",
                name=self.name,
            )
        if self.replicas and not self._depth:
            yield from self._sync_replicas_steps(self._owner or "")
        self._note_grant(fence, sent)
        return True

    def _note_grant(self, fence: int, sent: float) -> None:
        """A grant of ``fence`` (the look that got it was sent at ``sent``) is ours (the depth
        counts it last: an exception before leaves the grant to be given back)."""
        self.retry_after = None
        if not self._depth:
            self._lost = False
            self._valid_until = sent + self.ttl
            self._granted_at = time.monotonic() if observers else None
        self._fence = fence
        self._depth += 1

    def _sync_replicas_steps(self, owner: str) -> Steps:
        """Confirm a new grant on ``replicas`` replicas (see the module docstring), or raise
        ReplicasNotSynced."""
        operation = f"confirm {self.kind} {self.name!r} on {self.replicas} replica(s)"
        try:
            extended, acked = yield from self._confirmed_extend_steps(owner, self.ttl, operation)
        except ReplicasNotSynced:
            raise
        except CoordinationUnavailable as exc:
            # The grant's reply arrived, the check's did not (it outlasted the
            # socket timeout, or the connection broke): the grant is known and
            # unconfirmed, so it is given back (by _acquire_flow), not kept as
            # an unknown outcome that would hold the name for its TTL.
            raise ReplicasNotSynced(
                f"{self.kind} {self.name!r}: the replica check got no answer ({exc}), so the grant "
                "was given back (a failover now could lose it)",
                acked=0,
                needed=self.replicas,
                server=exc.server,
                operation=operation,
            ) from exc
        if not extended:
            raise LockLost(
                f"{self.kind} {self.name!r} was lost right after it was granted", name=self.name
            )
        if acked < self.replicas:
            raise ReplicasNotSynced(
                f"{self.kind} {self.name!r}: the grant reached {acked} of the {self.replicas} "
                f"replica(s) asked for within {self.replica_timeout:g} s, so it was given back (a "
                "failover now could lose it)",
                acked=acked,
                needed=self.replicas,
                operation=operation,
            )

    def _confirmed_extend_steps(self, owner: str, ttl: float, operation: str) -> Steps:
        """The extend script and ``WAIT replicas replica_timeout`` in one batch on one connection.

        Returns (1 extended or 0 not ours, replicas that acknowledged).
        """
        keys, args = self._extend_keys(), [owner, ms(ttl), self.name, *self._extra_args()]
        wait = ("WAIT", self.replicas, ms(self.replica_timeout))
        script = self._extend_script
        replies = yield Batch(
            ("EVALSHA", script.sha, len(keys), *keys, *args),
            wait,
            operation=operation,
            raise_errors=False,
            key=keys[0],
        )
        if isinstance(
            replies[0], redis.exceptions.NoScriptError
        ):  # first use on this server: load it
            replies = yield Batch(
                ("EVAL", script.source, len(keys), *keys, *args),
                wait,
                operation=operation,
                raise_errors=False,
                key=keys[0],
            )
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        extended, acked = replies
        return int(extended), int(acked)

    def _release_call(self, owner: str) -> Step:
        # a release hands the hold to the next waiter: it may use the pool's reserve (never the
        # waiters')
        return EndsWaits(
            Run(
                self._release_script,
                self._release_keys_for(owner),
                [owner, self.name, *self._extra_args()],
                self._ops[1],
            )
        )

    def _release_steps(self, owner: str) -> Steps:
        """The release script for ``owner``: 0 not ours, 1 released, 2 handed on, 3 a reentrant
        hold unwound by one level (see :meth:`_released`)."""
        try:
            result = yield self._release_call(owner)
        except BaseException:
            self._released(owner, None)
            raise
        return self._released(owner, result)

    def _give_back_steps(self) -> Steps:
        """An acquire was interrupted or failed: leave nothing held or queued (best effort)."""
        owner = self._owner
        try:
            if owner and not self._depth:
                reply = yield self._acquire_call("cancel", 0.0)
                if int(reply[0]) == 1:
                    yield from self._release_steps(owner)
                else:
                    self._left_queue(owner)
        except Exception as exc:  # the original error matters more
            log.warning(
                "%s %s: could not give back an interrupted acquire: %s", self.kind, self.name, exc
            )
            if owner and not self._depth and not self.reentrant:
                # A server that does not answer now (paused, overloaded) runs the acquire it
                # read once it answers, and nobody would release that grant before its TTL:
                # the settling thread gives it back then, or, with only an asyncio client, a
                # task of this event loop.
                if self._settles_in_thread():
                    settle_later(self, owner, self.ttl, self.doubt_lasts)
                else:
                    asettle_later(self, owner, self.ttl, self.doubt_lasts)
        finally:
            if not self._depth:
                self._end_hold()

    def _release_flow(self) -> Steps:
        owner, lost = self._release_begin()
        try:
            result = yield from self._release_steps(owner)
        except BaseException as exc:
            self._release_failed(exc)
            raise
        self._release_end(result, lost)

    def _release_begin(self) -> tuple[str, bool]:
        """A release starts: (owner, whether the hold was found lost before). Stops the
        watchdog of the outermost level; LockNotOwned when this object holds nothing."""
        with self._cond:
            if not self._depth:
                raise LockNotOwned(
                    f"{self.kind} {self.name!r} is not held by this {type(self).__name__} object",
                    name=self.name,
                )
            owner, outermost, lost = self._owner or "", self._depth == 1, self._lost
            renewer = self._renewer if outermost else None
            if outermost:
                self._renewer = None
        if renewer is not None:
            renewer.stop()  # first: a release that fails must not leave the lock renewed
        return owner, lost

    def _release_failed(self, exc: BaseException) -> None:
        """The release script raised ``exc``: the level ends here all the same, unless it was
        refused whole (an outage that sent nothing: still ours, try again). A server that could
        not be reached at all ends it too: its grant runs out by its TTL, and this object is free
        for its next user rather than held by one whose release cannot be made."""
        if isinstance(exc, CoordinationUnavailable) and not exc.sent and not unreachable(exc):
            return  # (a Cluster slot in migration, a full pool)
        self._depth -= 1
        if not self._depth:
            self._end_hold()

    def _release_end(self, result: int, lost: bool) -> None:
        """The release script answered ``result`` (see :meth:`_release_steps`)."""
        self._depth -= 1
        if result == 0 or not self._depth:
            if observers:
                self._observe_end(newly_lost=result == 0 and not lost)
            self._end_hold()
        if result == 0 or lost:
            raise LockLost(
                f"{self.kind} {self.name!r} was lost before release: it expired or passed to "
                f"another owner (our fencing token was {self._fence}); work done under it may have "
                "overlapped with the next holder",
                name=self.name,
            )

    def _observe_end(self, *, newly_lost: bool) -> None:
        """Report a hold that a release ended (Redis answered it)."""
        granted_at, self._granted_at = self._granted_at, None
        if newly_lost:  # passed on before the release, unnoticed until Redis said so
            observe("hold.lost", kind=self._event_kind)
        if granted_at is not None:
            observe("hold.release", kind=self._event_kind, held=time.monotonic() - granted_at)

    def _extend_flow(self, ttl: float | None) -> Steps:
        ttl = self.ttl if ttl is None else check_ttl(ttl)
        self._check_fork()
        owner = self._owner
        if not self._depth or owner is None:
            raise LockNotOwned(
                f"{self.kind} {self.name!r} is not held by this {type(self).__name__} object",
                name=self.name,
            )
        if not (yield from self._extend_steps(owner, ttl)):
            if not self._lost:
                self._observe_lost()
            self._lost = True
            raise LockLost(
                f"{self.kind} {self.name!r} could not be extended: it expired or passed to another "
                f"owner (our fencing token was {self._fence})",
                name=self.name,
            )

    def _extend_steps(self, owner: str, ttl: float) -> Steps:
        sent = time.monotonic()
        if self.replicas:
            # Confirmed like a grant: an extend the replicas never saw is lost in
            # a failover while the holder believes it holds. Unconfirmed, it does
            # not count: the hold stays valid only until the last confirmed grant
            # or renewal runs out (then ``lost`` is True; the watchdog retries and
            # reports it lost as for any failed renewal).
            operation = (
                f"extend {self.kind} {self.name!r} (confirmed on {self.replicas} replica(s))"
            )
            extended, acked = yield from self._confirmed_extend_steps(owner, ttl, operation)
            if extended and acked < self.replicas:
                raise ReplicasNotSynced(
                    f"{self.kind} {self.name!r}: the extend reached {acked} of the {self.replicas} "
                    f"replica(s) asked for within {self.replica_timeout:g} s, so it does not "
                    "count: the hold is certain only until its last confirmed grant or renewal "
                    "runs out",
                    acked=acked,
                    needed=self.replicas,
                    operation=operation,
                )
            ok = extended
        else:
            ok = yield Run(
                self._extend_script,
                self._extend_keys(),
                [owner, ms(ttl), self.name, *self._extra_args()],
                f"extend {self.kind} {self.name!r}",
            )
        if ok and self._owner == owner:
            self._valid_until = sent + ttl
        return bool(ok)


def replica_check_limit(socket_timeout: float | None) -> float | None:
    """Longest ``replica_timeout`` a client with this socket timeout can wait (None: no limit).

    The replica check's ``WAIT`` blocks on the server: its reply must come
    before the client's socket timeout, with room for the round trip, or it
    reads as an outage (the margin is the one blocking waits keep).
    """
    if not socket_timeout:
        return None
    return socket_timeout - min(0.5, socket_timeout / 2)


#: The replica check's wait when neither ``replica_timeout`` nor REPLICA_TIMEOUT says (seconds).
REPLICA_TIMEOUT = 1.0


def _socket_timeout(client: Any) -> tuple[float | None, str]:
    """(socket timeout, where it comes from) of ``client``, or of the configured client when
    None."""
    from ..runtime import runtime

    if client is None:
        return runtime.config["SOCKET_TIMEOUT"], "REDCOORD['SOCKET_TIMEOUT']"
    return socket_timeout(client), "the client's socket_timeout"


def default_replica_timeout(client: Any) -> float:
    """1 s, or less when ``client``'s socket timeout leaves less room (see
    :func:`replica_check_limit`)."""
    limit = replica_check_limit(_socket_timeout(client)[0])
    return REPLICA_TIMEOUT if limit is None else min(REPLICA_TIMEOUT, limit)


def check_replica_timeout(replica_timeout: float, client: Any) -> None:
    """ValueError unless ``replica_timeout`` fits within ``client``'s socket timeout
    (the configured ``SOCKET_TIMEOUT`` when ``client`` is None)."""
    socket_timeout, where = _socket_timeout(client)
    limit = replica_check_limit(socket_timeout)
    if limit is not None and replica_timeout > limit:
        raise ValueError(
            f"replica_timeout={replica_timeout:g} s does not fit within {where} "
            f"({socket_timeout:g} s): the replica check (WAIT) must answer before the socket times "
            f"out, so it may wait at most {limit:g} s; lower replica_timeout "
            "(REDCOORD['REPLICA_TIMEOUT']) or raise the socket timeout"
        )
