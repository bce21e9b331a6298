"""A lock held on a majority of independent Redis masters (Redlock), fenced.

One Redis is a single point of failure for a lock; Sentinel's failover can
promote a replica that missed a grant. Redlock asks N independent masters
(no replication between them) and holds the lock when a majority granted it
within its validity::

    validity = ttl - elapsed - drift      drift = ttl * drift_factor + 2 ms

Each attempt runs ``locks/acquire.lua`` in ``try`` mode on every master at
once (one round trip each, concurrently), so a master that is down or paused
costs one socket timeout, not one per master. A grant on fewer than a
majority, or one whose validity ran out, is given back on every master —
also those that did not answer, whose grant may have been written and its
reply lost.

Fencing: each master's grant carries that master's fencing token (a hybrid
logical clock, see ``locks/common.lua``). The lock's token is the highest,
written back to every master that granted (``locks/raise_fence.lua``) before
``acquire()`` returns, on at least a majority. Any later grant's majority
shares a master with this one, whose record (or the tombstone its release
leaves for a minute) starts the next fence above it; a master restarted
empty starts above it from its clock. So tokens keep growing when a
minority of masters is lost or restarted empty (the clocks of the masters
must agree within that minute, as NTP keeps them).

Restarts: a master that restarts empty can grant a held lock again (it and
the masters that were down at the grant form a new majority). As the Redlock
design prescribes, a master that restarted (with or without its data) or
lost its data refuses quorum grants for one max TTL (``REDLOCK_MAX_TTL``;
no quorum lock may have a longer TTL), so every grant it may have forgotten
has expired first: the acquire script checks the master's ``run_id`` and a
boot record on every call (``lua/redlock/guard.lua``), no extra round trip.
A master seen for the first time refuses likewise (it cannot be told from
one that restarted empty) unless vouched for (:func:`trust_masters`).

Answers: each attempt decides on the first majority (granted, or refused
and failed so that a majority is out of reach) and waits for the masters
``timeout`` seconds at most, a fifth of the TTL by default: a hung master
neither holds up a grant nor reads as a busy lock (``QuorumNotReached``);
see :mod:`.fanout`.

Waiting: a quorum lock has no single queue to wait in (each master would
order waiters its own way and split grants), so a busy lock is retried after
a random pause of up to ``retry_delay`` (bounded by the wait left), as the
Redlock algorithm prescribes. Busy lock: ``acquire()`` returns False (views
answer 409). Fewer than a majority of masters answered: ``QuorumNotReached``
(views answer 503). A name is either a quorum lock or a single-server
``Lock``: do not mix the two on the same masters.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..exceptions import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotOwned,
    QuorumNotReached,
)
from ..holds.identity import host
from ..keys import KeyBuilder
from ..runtime import default_prefix, lock_defaults, runtime
from ..transport.clients import async_client_like, client_from_url, is_async_client
from ..transport.drivers import Run, Steps, arun, run, uncancellable
from ..transport.errors import describe, mask_url
from ..transport.scripts import Script
from ..values import DEFAULT, check_seconds, check_ttl, check_wait, ms
from .fanout import Fanout, NotNeeded, Pause

_COMMON = ("common/waiters", "locks/common")
#: locks/acquire.lua behind the restart guard (lua/redlock/guard.lua: KEYS[7], ARGV[10])
ACQUIRE = Script("locks/acquire", includes=(*_COMMON, "redlock/guard"))
TRUST = Script("redlock/trust")
RELEASE = Script("locks/release", includes=_COMMON)
EXTEND = Script("locks/extend", includes=_COMMON)
RAISE_FENCE = Script("locks/raise_fence", includes=_COMMON)

#: Default clock drift allowance, as a fraction of the TTL (plus 2 ms).
DRIFT_FACTOR = 0.01
#: Default longest pause between two attempts on a busy lock (seconds).
RETRY_DELAY = 0.2


def answer_timeout(ttl: float) -> float:
    """The default time the masters are given to answer: a fifth of the TTL, from 0.1 s to 1 s."""
    return min(1.0, max(0.1, ttl / 5))


class Redlock:
    """A named lock held on a majority of the ``REDCOORD["REDLOCK"]`` masters.

    Args:
        name: as for :class:`~django_redcoord.core.locks.Lock`.
        ttl: seconds the lock lives on each master unless released or
            extended (default ``LOCK_TTL``).
        wait: seconds ``acquire()`` may keep trying: 0 tries once, None
            forever (default ``LOCK_WAIT``).
        clients: the masters, as ``redis.Redis`` clients or as
            ``redis.asyncio.Redis`` ones (then use the a-prefixed methods);
            default: built from ``REDCOORD["REDLOCK"]`` (one URL per master).
        quorum: how many masters must grant (default: a majority,
            ``len(clients) // 2 + 1``; no fewer than that).
        drift_factor: clock drift allowance as a fraction of ``ttl``.
        retry_delay: longest random pause between two attempts on a busy lock.
        prefix: key prefix (default ``KEY_PREFIX``).
        max_ttl: the longest TTL any quorum lock on these masters has
            (default ``REDLOCK_MAX_TTL``, 60 s; every user of the masters must
            agree): ``ttl`` and ``extend()`` may not exceed it, and a master
            that restarted or lost its data refuses grants for this long.
        timeout: seconds each attempt waits for the masters' answers at
            most (default a fifth of ``ttl``, from 0.1 to 1 s); it decides
            on the first majority and never waits for a straggler it does
            not need.

    ``token`` is the fencing token after ``acquire()``; ``validity`` the
    seconds the grant is still certain to last on a majority.
    """

    kind = "lock"
    _event_kind = "lock"

    def __init__(
        self,
        name: str,
        *,
        ttl: float = DEFAULT,
        wait: float | None = DEFAULT,
        clients: Sequence[Any] | None = None,
        quorum: int | None = None,
        drift_factor: float = DRIFT_FACTOR,
        retry_delay: float = RETRY_DELAY,
        prefix: str | None = None,
        max_ttl: float = DEFAULT,
        timeout: float = DEFAULT,
    ) -> None:
        default_ttl, default_wait = lock_defaults()
        self.ttl = check_ttl(default_ttl if ttl is DEFAULT else ttl)
        self.wait = check_wait(default_wait if wait is DEFAULT else wait)
        self.name = name
        self.max_ttl = check_seconds(
            runtime.config.get("REDLOCK_MAX_TTL", 60.0) if max_ttl is DEFAULT else max_ttl,
            "max_ttl",
        )
        self._check_max_ttl(self.ttl)
        self.timeout = (
            answer_timeout(self.ttl) if timeout is DEFAULT else check_seconds(timeout, "timeout")
        )
        builder = KeyBuilder(prefix or default_prefix())
        self.keys = builder.lock(name)
        self._boot = builder.redlock_boot()
        if clients is not None:
            clients = list(clients)
            if not clients:
                raise ConfigurationError("Redlock needs at least one master client (clients=[...])")
            kinds = {is_async_client(c) for c in clients}
            if len(kinds) > 1:
                raise TypeError(
                    "Redlock clients must be all redis.Redis or all redis.asyncio.Redis, not a mix"
                )
        self._given = clients
        count = len(clients) if clients is not None else len(_configured_urls())
        majority = count // 2 + 1
        if quorum is None:
            quorum = majority
        if (
            isinstance(quorum, bool)
            or not isinstance(quorum, int)
            or not majority <= quorum <= count
        ):
            raise ValueError(
                f"quorum must be a whole number from a majority ({majority}) to all ({count}) of "
                f"the masters, not {quorum!r}"
            )
        self.quorum, self.masters = quorum, count
        self.drift_factor = check_seconds(drift_factor, "drift_factor", allow_zero=True)
        self.retry_delay = check_seconds(retry_delay, "retry_delay")
        self.token: int | None = None
        self.retry_after: float | None = None
        self._owner: str | None = None
        self._valid_until = 0.0
        self._interrupted = threading.Event()
        self._stragglers: dict[int, Any] = {}  # master -> a call of ours there still running

    def __repr__(self) -> str:
        return f"Redlock({self.name!r}, quorum={self.quorum} of {self.masters})"

    def _check_max_ttl(self, ttl: float) -> None:
        if ttl > self.max_ttl:
            raise ValueError(
                f"quorum lock {self.name!r}: ttl={ttl:g} s is longer than the longest a quorum "
                f"lock may have ({self.max_ttl:g} s, REDCOORD['REDLOCK_MAX_TTL'] or max_ttl=): a "
                "master that restarted refuses grants for that long, which protects only grants "
                "no longer than it. Raise REDLOCK_MAX_TTL (everywhere these masters are used), or "
                "use a shorter ttl and extend() or renew"
            )

    # -- clients ---------------------------------------------------------------------------

    @property
    def _client(self) -> Any:
        """What the view decorators look at: the first client given, or None (configured ones)."""
        return self._given[0] if self._given else None

    def _clients(self) -> list[Any]:
        if self._given is None:
            return masters()
        if is_async_client(self._given[0]):
            raise TypeError(f"{self!r} was given redis.asyncio clients: use the a-prefixed methods")
        return self._given

    def _async_clients(self) -> list[Any]:
        if self._given is None:
            return amasters()
        if not is_async_client(self._given[0]):
            raise TypeError(
                f"{self!r} was given synchronous clients: the a-prefixed methods need "
                "redis.asyncio ones"
            )
        return self._given

    # -- state -----------------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._owner is not None

    @property
    def validity(self) -> float:
        """Seconds the grant is still certain to last on a majority (0 when not held)."""
        return max(0.0, self._valid_until - time.monotonic()) if self._owner else 0.0

    # -- acquire -----------------------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the lock on a majority within ``wait``; False if it stayed busy.

        Raises ``QuorumNotReached`` when fewer than ``quorum`` masters answered.
        """
        return run(self._clients(), self._acquire_steps())

    async def aacquire(self) -> bool:
        """``acquire()`` on the event loop (cancelled, it gives back what it took)."""
        return await arun(self._async_clients(), self._acquire_steps())

    def _interrupt(self) -> None:
        """Stop a wait in progress (from another thread): it gives up at its next step."""
        self._interrupted.set()

    def _acquire_steps(self) -> Steps:
        if self._owner is not None:
            raise RuntimeError(f"{self!r} is already held by this object: release it first")
        self._interrupted.clear()
        deadline = None if self.wait is None else time.monotonic() + self.wait
        ttl_ms = ms(self.ttl)
        while True:
            owner = f"q:{secrets.token_urlsafe(12)}"
            started = time.monotonic()
            args = [
                owner,
                ttl_ms,
                "try",
                1000,
                self.name,
                "0",
                host(),
                os.getpid(),
                threading.current_thread().name,
                ms(self.max_ttl),
            ]
            keys = [
                self.keys.lock,
                self.keys.queue,
                self.keys.index,
                self.keys.waits,
                self.keys.wait_index,
                self.keys.wake(owner),
                self._boot,
            ]
            too_late = None
            try:
                replies = yield from self._ask(
                    Run(ACQUIRE, keys, args, f"acquire quorum lock {self.name!r}"), yes=_granted
                )
                granted = {i: int(r[1]) for i, r in enumerate(replies) if _granted(r)}
                if len(granted) >= self.quorum:
                    top = max(granted.values())
                    lift = [i for i, fence in granted.items() if fence < top]
                    if lift:
                        lifted = yield from self._ask(
                            Run(
                                RAISE_FENCE,
                                [self.keys.lock],
                                [owner, top],
                                f"fence quorum lock {self.name!r}",
                            ),
                            only=lift,
                            need=None,
                        )
                        for i in lift:
                            if not (_ok(lifted[i]) and int(lifted[i]) == 1):
                                del granted[i]
                    validity = self._validity(started)
                    if len(granted) >= self.quorum and validity > 0:
                        self._owner, self.token = owner, top
                        self._valid_until = time.monotonic() + validity
                        self.retry_after = None
                        return True
                    too_late = (
                        time.monotonic() - started
                    )  # a majority granted, but not in time to be trusted
            except BaseException:  # interrupted or cancelled mid-attempt: give back what it took
                yield from self._ask(
                    Run(
                        RELEASE, self._release_keys(), [owner, self.name], "give back a quorum lock"
                    ),
                    need=None,
                )
                raise
            # Not enough: give back every grant of this attempt (a master that did
            # not answer may have granted), then wait or report why.
            yield from self._ask(
                Run(
                    RELEASE,
                    self._release_keys(),
                    [owner, self.name],
                    f"give back quorum lock {self.name!r}",
                ),
                need=None,
            )
            failed = _failures(replies, self._describe())
            answered = self.masters - len(failed)
            if (
                too_late is not None
            ):  # the masters granted, but too slowly to be trusted: not a busy lock
                raise QuorumNotReached(
                    f"quorum lock {self.name!r}: {len(granted)} of {self.masters} masters granted "
                    f"it, but the answers took {too_late:.3f} s of its {self.ttl:g} s TTL: too "
                    "late to be trusted (given back)"
                    + "".join(f"; {where}: {why}" for where, why in failed.items()),
                    answered=answered,
                    needed=self.quorum,
                    errors=failed,
                    operation=f"acquire quorum lock {self.name!r}",
                )
            if answered < self.quorum:
                raise QuorumNotReached(
                    f"quorum lock {self.name!r}: only {answered} of {self.masters} masters "
                    f"answered, {self.quorum} needed; "
                    + "; ".join(f"{where}: {why}" for where, why in failed.items()),
                    answered=answered,
                    needed=self.quorum,
                    errors=failed,
                    operation=f"acquire quorum lock {self.name!r}",
                )
            busy = [int(r[1]) / 1000.0 for r in replies if _ok(r) and int(r[0]) == 0]
            self.retry_after = min(busy) if busy else None
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or self._interrupted.is_set():
                return False
            pause = random.uniform(0.0, self.retry_delay)
            yield Pause(pause if left is None else min(pause, left), self._interrupted)

    def _validity(self, started: float) -> float:
        drift = self.ttl * self.drift_factor + 0.002
        return self.ttl - (time.monotonic() - started) - drift

    # -- release and extend -------------------------------------------------------------------

    def release(self) -> None:
        """Release on every master. Raises ``LockLost`` if it no longer held a majority."""
        run(self._clients(), self._release_steps())

    async def arelease(self) -> None:
        """``release()`` on the event loop; cancelled meanwhile, it runs to its end first (as a
        lock's)."""
        await uncancellable(arun(self._async_clients(), self._release_steps()), reraise=True)

    def _release_steps(self) -> Steps:
        owner = self._owner
        if owner is None:
            raise LockNotOwned(
                f"quorum lock {self.name!r} is not held by this object", name=self.name
            )
        self._owner = None
        # every master's answer is awaited (within ``timeout``): a released lock is free everywhere
        replies = yield from self._ask(
            Run(
                RELEASE,
                self._release_keys(),
                [owner, self.name],
                f"release quorum lock {self.name!r}",
            ),
            need=None,
        )
        self._check_majority(replies, "release", "was lost before release")

    def extend(self, ttl: float | None = None) -> None:
        """Reset the TTL (default: the lock's own) on every master; ``LockLost`` without a
        majority."""
        run(self._clients(), self._extend_steps(ttl))

    async def aextend(self, ttl: float | None = None) -> None:
        """``extend()`` on the event loop."""
        await arun(self._async_clients(), self._extend_steps(ttl))

    def _extend_steps(self, ttl: float | None) -> Steps:
        owner = self._owner
        if owner is None:
            raise LockNotOwned(
                f"quorum lock {self.name!r} is not held by this object", name=self.name
            )
        new_ttl = self.ttl if ttl is None else check_ttl(ttl)
        self._check_max_ttl(new_ttl)
        started = time.monotonic()
        replies = yield from self._ask(
            Run(
                EXTEND,
                [self.keys.lock, self.keys.index],
                [owner, ms(new_ttl), self.name],
                f"extend quorum lock {self.name!r}",
            ),
            yes=_done,
        )
        try:
            self._check_majority(replies, "extend", "was lost before it could be extended")
        except LockLost:
            self._owner = None
            raise
        drift = new_ttl * self.drift_factor + 0.002
        self._valid_until = time.monotonic() + new_ttl - (time.monotonic() - started) - drift

    def _check_majority(self, replies: list[Any], what: str, lost: str) -> None:
        done = sum(1 for r in replies if _ok(r) and int(r) >= 1)
        if done >= self.quorum:
            return
        failed = _failures(replies, self._describe())
        refused = self.masters - done - len(failed)
        if done + len(failed) >= self.quorum:  # those that did not answer may still hold it
            raise QuorumNotReached(
                f"quorum lock {self.name!r}: {what} confirmed on {done} of {self.masters} masters, "
                f"{self.quorum} needed, the others did not answer: "
                + "; ".join(f"{where}: {why}" for where, why in failed.items()),
                answered=self.masters - len(failed),
                needed=self.quorum,
                errors=failed,
                operation=f"{what} quorum lock {self.name!r}",
            )
        raise LockLost(
            f"quorum lock {self.name!r} {lost}: held on only {done} of {self.masters} masters "
            f"({self.quorum} needed; it expired or was taken on {refused})",
            name=self.name,
        )

    # -- helpers ---------------------------------------------------------------------------------

    def _release_keys(self) -> list[str]:
        return [
            self.keys.lock,
            self.keys.queue,
            self.keys.index,
            self.keys.waits,
            self.keys.wait_index,
        ]

    def _ask(
        self,
        step: Run,
        only: list[int] | None = None,
        *,
        need: int | None = DEFAULT,
        yes: Any = None,
    ) -> Steps:
        """The same round trip on every master (or on those in ``only``), at once; the outcomes.

        It decides once ``need`` (default: the quorum) answers pass ``yes``, or
        can no longer; ``need=None`` waits for every answer. At most ``timeout``.
        A master's call waits for this object's call there that is still
        running (see :class:`.fanout.Fanout`, ``after``); an acquire's calls
        not sent yet when it decided are not sent.
        """
        steps: list[Any] = [
            step if only is None or i in only else None for i in range(self.masters)
        ]
        if need is DEFAULT:
            need = self.quorum
        fan = Fanout(
            steps,
            timeout=self.timeout,
            need=need,
            after=dict(self._stragglers),
            droppable=step.script is ACQUIRE,
            **({"yes": yes} if yes is not None else {}),
        )
        try:
            return (yield fan)
        finally:
            self._stragglers.update(fan.stragglers)
            for i in [i for i, call in self._stragglers.items() if call.done()]:
                del self._stragglers[i]

    def _describe(self) -> list[str]:
        if self._given is None:
            return [mask_url(u) for u in _configured_urls()]
        return [describe(c) for c in self._given]

    # -- context managers ----------------------------------------------------------------------

    def __enter__(self) -> Redlock:
        if not self.acquire():
            raise LockNotAcquired(
                f"quorum lock {self.name!r} could not be acquired within {self.wait} s",
                name=self.name,
                wait=self.wait,
            )
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    async def __aenter__(self) -> Redlock:
        if not await self.aacquire():
            raise LockNotAcquired(
                f"quorum lock {self.name!r} could not be acquired within {self.wait} s",
                name=self.name,
                wait=self.wait,
            )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.arelease()


def _ok(reply: Any) -> bool:
    return reply is not None and not isinstance(reply, BaseException)


def _granted(reply: Any) -> bool:
    """An acquire's reply that grants ({1, fence, depth})."""
    return _ok(reply) and int(reply[0]) == 1


def _done(reply: Any) -> bool:
    """A release's or extend's reply that did it (1 or more)."""
    return _ok(reply) and int(reply) >= 1


def _failures(replies: list[Any], where: list[str]) -> dict[str, str]:
    """``{"master <i> (<server>)": why}`` for each master whose round trip failed, or that refuses
    grants after a restart or a loss of its data (``{2, wait_ms}``, see
    ``lua/redlock/guard.lua``)."""
    found = {}
    for i, r in enumerate(replies):
        if isinstance(r, NotNeeded):  # decided without it: not a failure
            continue
        if isinstance(r, BaseException):
            found[f"master {i} ({where[i]})"] = f"{type(r).__name__}: {r}"
        elif _ok(r) and isinstance(r, list) and int(r[0]) == 2:
            found[f"master {i} ({where[i]})"] = (
                "it restarted or lost its data: it refuses quorum grants for "
                f"{int(r[1]) / 1000:.1f} s more (one REDLOCK_MAX_TTL, until every grant it may "
                "have forgotten has expired)"
            )
    return found


# -- the configured masters: one client each per process, one async client each per loop --------

_lock = threading.Lock()
_masters: tuple[int, tuple[str, ...], list[Any]] | None = None
_async_masters: dict[Any, list[Any]] = {}


def _configured_urls() -> tuple[str, ...]:
    urls = tuple(runtime.config.get("REDLOCK") or ())
    if not urls:
        raise ConfigurationError(
            "no Redlock masters configured: set REDCOORD['REDLOCK'] = ['redis://a:6379/0', "
            "'redis://b:6379/0', 'redis://c:6379/0'] (independent masters, an odd number, 3 or "
            "more), or pass clients=[...]"
        )
    return urls


def masters() -> list[Any]:
    """The process's clients of the ``REDLOCK`` masters (built on first use, again after a fork)."""
    global _masters
    urls = _configured_urls()
    with _lock:
        if _masters is None or _masters[0] != os.getpid() or _masters[1] != urls:
            config = runtime.config
            _masters = (
                os.getpid(),
                urls,
                [
                    client_from_url(
                        u,
                        socket_timeout=config["SOCKET_TIMEOUT"],
                        connect_timeout=config["CONNECT_TIMEOUT"],
                        max_connections=config["MAX_CONNECTIONS"],
                    )
                    for u in urls
                ],
            )
        return _masters[2]


def amasters() -> list[Any]:
    """The ``redis.asyncio`` clients of the ``REDLOCK`` masters on the running loop."""
    loop = asyncio.get_running_loop()
    sync = masters()
    with _lock:
        clients = _async_masters.get(loop)
        if clients is None or len(clients) != len(sync):
            for old in [other for other in _async_masters if other.is_closed()]:
                del _async_masters[old]
            clients = _async_masters[loop] = [async_client_like(c) for c in sync]
    return clients


def trust_masters(clients: Sequence[Any] | None = None, *, prefix: str | None = None) -> list[str]:
    """Vouch that each master has forgotten no quorum grant, so it grants at once.

    A master refuses quorum grants for one ``REDLOCK_MAX_TTL`` when it is
    first used, after a restart and after it lost its data (it cannot tell
    a brand-new server from one that restarted empty). Call this only for
    masters you know are brand new, or whose every write survived
    (``appendfsync always``): vouching for a master that forgot a grant
    lets that lock be granted twice. It holds for the running server
    process only (a restart is detected again). Returns each master's
    ``run_id``. Sync clients only (default: the ``REDLOCK`` masters);
    raises TypeError, vouching for none, if any is a ``redis.asyncio`` one.
    """
    boot = KeyBuilder(prefix or default_prefix()).redlock_boot()
    chosen = masters() if clients is None else list(clients)
    for client in chosen:  # all checked before any is vouched for
        if is_async_client(client):
            raise TypeError(
                f"trust_masters() takes sync clients (redis.Redis), not {type(client).__module__}."
                f"{type(client).__name__} ({describe(client)}): it is an operator's one-off step; "
                "pass redis.Redis clients of the same masters"
            )
    found = []
    for client in chosen:
        run_id = run(client, _trust_steps(boot))
        found.append(run_id.decode() if isinstance(run_id, bytes) else str(run_id))
    return found


def _trust_steps(boot: str) -> Steps:
    return (yield Run(TRUST, [boot], [], "vouch for a quorum lock master"))


def reset() -> None:
    """Forget the masters' clients (settings changed)."""
    global _masters
    with _lock:
        _masters = None
        _async_masters.clear()


runtime.when_reconfigured(reset)  # options changed: the cached clients go
