"""Cells of the held primitives: lock, semaphore, read-write lock (its write hold), Redlock.

What every hold guarantees: at most one holder (one permit here) at any time,
fencing tokens that grow with every grant — also across a Redis that lost its
data — a lost hold reported to its holder as LockLost (never a release of the
next holder's), and the lease of a crashed or paused holder running out.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable, LockLost
from django_redcoord.core.locks import Lock
from django_redcoord.core.redlock import Redlock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport import nearby
from django_redcoord.core.transport.clients import client_from_url

from ..names import hostile
from .context import (
    LEASE,
    PAUSE,
    SOCKET_TIMEOUT,
    Ctx,
    Party,
    async_party,
    describe,
    keys_tagged_by,
    outage_claim,
    pool_exhaustion,
    raw_error,
)
from .table import cell, not_applicable
from .table import cell as _cell


@dataclass(frozen=True)
class HoldKind:
    """How a cell makes a hold of one primitive: ``build(clients, prefix, name, ttl, wait)``."""

    kind: str
    build: Callable[..., Any]
    quorum: bool = False  # Redlock: ``clients`` is one client per master

    def urls(self, ctx: Ctx) -> list[str]:
        return [ctx.url, *(s.url for s in ctx.others)] if self.quorum else [ctx.url]

    def clients(self, ctx: Ctx, **kwargs: Any) -> Any:
        made = [ctx.client(u, **kwargs) for u in self.urls(ctx)]
        return made if self.quorum else made[0]

    def make(
        self, ctx: Ctx, name: str, *, ttl: float = 30.0, wait: float | None = 0, clients: Any = None
    ) -> Any:
        return self.build(
            clients if clients is not None else self.clients(ctx), ctx.prefix, name, ttl, wait
        )

    def prepare(self, ctx: Ctx) -> None:
        """Redlock: vouch for the (flushed, so brand-new) masters, as an operator does for new
        servers; else each would refuse grants for one REDLOCK_MAX_TTL (the restart remedy)."""
        from django_redcoord.core.redlock import redlock

        trust = getattr(redlock, "trust_masters", None)
        if self.quorum and trust is not None:
            trust(self.clients(ctx), prefix=ctx.prefix)

    def kill_connections(self, ctx: Ctx) -> None:
        for url in self.urls(ctx):
            ctx.kill_connections(int(url.rsplit(":", 1)[1].split("/")[0]))


LOCK = HoldKind("lock", lambda c, p, n, ttl, wait: Lock(n, ttl=ttl, wait=wait, client=c, prefix=p))
SEMAPHORE = HoldKind(
    "semaphore", lambda c, p, n, ttl, wait: Semaphore(n, 1, ttl=ttl, wait=wait, client=c, prefix=p)
)
RWLOCK = HoldKind(
    "rwlock",
    lambda c, p, n, ttl, wait: ReadWriteLock(n, ttl=ttl, wait=wait, client=c, prefix=p).write(),
)


def _redlock(clients: Any, prefix: str, name: str, ttl: float, wait: float | None) -> Redlock:
    extra = {"max_ttl": 30.0} if "max_ttl" in inspect.signature(Redlock).parameters else {}
    return Redlock(
        name, ttl=ttl, wait=wait, clients=clients, prefix=prefix, retry_delay=0.05, **extra
    )


REDLOCK = HoldKind("redlock", _redlock, quorum=True)


def _acquire(hold: Any, found: list[str], what: str) -> bool:
    try:
        granted = bool(hold.acquire())
    except Exception as exc:
        found.append(f"{what}: acquire raised {describe(exc)}")
        return False
    return granted


def _release(hold: Any, found: list[str], what: str) -> None:
    try:
        hold.release()
    except Exception as exc:
        found.append(f"{what}: release raised {describe(exc)}")


def _grows(found: list[str], new: int | None, old: int | None, what: str) -> None:
    if new is None or old is None or not new > old:
        found.append(f"{what}: fencing token {new} is not above the previous holder's {old}")


# -- the cells, written once for every hold kind ----------------------------------------------


def restart_with_data(ctx: Ctx, spec: HoldKind) -> list[str]:
    found: list[str] = []
    a = spec.make(ctx, "r")
    if not _acquire(a, found, "first holder"):
        return found + ["the first holder did not get a free hold"]
    first = a.token
    ctx.restart(keep_data=True)
    b = spec.make(ctx, "r")
    if _acquire(b, found, "second party, while the first holds"):
        found.append("a second holder was granted the hold the restarted server kept")
    _release(a, found, "the holder after the restart")
    if _acquire(b, found, "second party, after the release"):
        _grows(found, b.token, first, "after the restart")
        _release(b, found, "the second holder")
    else:
        found.append("the released hold was not granted")
    return found


def restart_without_data(
    ctx: Ctx, spec: HoldKind, *, make: Callable[..., Any] | None = None
) -> list[str]:
    make = make or spec.make
    found: list[str] = []
    a = make(ctx, "r")
    if not _acquire(a, found, "first holder"):
        return found + ["the first holder did not get a free hold"]
    first = a.token
    ctx.restart(keep_data=False)
    b = make(ctx, "r")
    if _acquire(b, found, "a new party after the data loss"):
        _grows(found, b.token, first, "after the data loss")
    else:
        found.append("a new party was not granted the hold Redis forgot")
    try:
        a.release()
        found.append(
            "the first holder's release succeeded although its hold was lost with the data (want "
            "LockLost)"
        )
    except LockLost:
        pass
    except Exception as exc:
        found.append(f"the first holder's release raised {describe(exc)} (want LockLost)")
    try:
        b.release()
    except Exception as exc:
        found.append(
            f"the new holder's release raised {describe(exc)}: the stale release touched its hold"
        )
    return found


def connection_kill(ctx: Ctx, spec: HoldKind) -> list[str]:
    if spec.kind != "lock":
        return _connection_kill(ctx, spec, "c")
    # A lock waiter behind a holder of its own process waits in-process (core/transport/nearby.py):
    # no connection of its own to kill, the holder's is. Then the same with the waiter blocked in
    # Redis, as behind a holder of another process.
    found = _connection_kill(ctx, spec, "c")
    nearby.enabled = False
    try:
        return found + [f"(waiting in Redis) {f}" for f in _connection_kill(ctx, spec, "r")]
    finally:
        nearby.enabled = True


def _waiting(ctx: Ctx, hold: Any) -> None:
    """Until ``hold``'s acquire waits: blocked in Redis, or, for a lock waiting in-process, its
    place taken."""
    if isinstance(hold, Lock) and nearby.enabled:
        admin = ctx.admin()
        deadline = time.monotonic() + 10.0
        while not admin.llen(hold.keys.queue):
            if time.monotonic() > deadline:
                raise AssertionError("the waiter did not queue within 10 s")
            time.sleep(0.01)
        time.sleep(0.1)  # (its look answered, it waits)
    else:
        ctx.wait_blocked(1)


def _connection_kill(ctx: Ctx, spec: HoldKind, tag: str) -> list[str]:
    found: list[str] = []
    a = spec.make(ctx, tag)
    if not _acquire(a, found, "holder"):
        return found + ["the holder did not get a free hold"]
    first = a.token
    b = spec.make(ctx, tag, wait=8.0)
    waiter = Party(b.acquire, "waiter")
    if spec.quorum:
        time.sleep(0.3)  # Redlock's wait is a retry loop: no blocked connection to see
    else:
        _waiting(ctx, b)
    spec.kill_connections(ctx)
    released = time.monotonic()
    _release(a, found, "the holder after its connection was killed")
    status, value = waiter.outcome(6.0)
    if status != "ok" or value is not True:
        found.append(
            f"the waiter whose connection was killed did not get the released hold: {status} "
            f"{describe(value) if isinstance(value, BaseException) else value}"
        )
    else:
        _grows(found, b.token, first, "after the connection kill")
        if waiter.ended_at - released > 3.0:
            found.append(
                f"the waiter took {waiter.ended_at - released:.1f} s to get the released hold"
            )
        _release(b, found, "the waiter")
    if not spec.quorum:  # the asyncio API under the same blip
        a = spec.make(ctx, tag + "a")
        if not _acquire(a, found, "holder (async run)"):
            return found + ["the holder did not get a free hold (async run)"]

        async def wait(client: Any) -> Any:
            hold = spec.make(ctx, tag + "a", wait=8.0, clients=client)
            got = await hold.aacquire()
            await hold.arelease()
            return got

        waiter = async_party(ctx, wait)
        _waiting(ctx, a)
        spec.kill_connections(ctx)
        _release(a, found, "the holder (async run)")
        status, value = waiter.outcome(6.0)
        if (status, value) != ("ok", True):
            found.append(
                f"(async) the waiter whose connection was killed: {status} "
                f"{describe(value) if isinstance(value, BaseException) else value}"
            )
    return found


def paused_server(ctx: Ctx, spec: HoldKind) -> list[str]:
    found: list[str] = []
    a = spec.make(ctx, "p")
    if not _acquire(a, found, "holder"):
        return found + ["the holder did not get a free hold"]
    first = a.token
    resume = ctx.pause(PAUSE)
    b = spec.make(ctx, "p")
    started = time.monotonic()
    try:
        if b.acquire():
            found.append("a second holder was granted the hold during the pause")
        elif not spec.quorum:
            found.append(
                "acquire on a paused server answered 'busy' instead of raising "
                "CoordinationUnavailable"
            )
    except CoordinationUnavailable:
        if spec.quorum:
            found.append("one paused master of three made Redlock report an outage")
    except Exception as exc:
        found.append(f"acquire on a paused server raised {describe(exc)}")
    took = time.monotonic() - started
    if took > SOCKET_TIMEOUT + 1.0:
        found.append(
            f"acquire on a paused server took {took:.1f} s (socket timeout {SOCKET_TIMEOUT} s)"
        )
    resume.join()
    _release(a, found, "the holder after the pause")
    if _acquire(b, found, "a party after the pause"):
        _grows(found, b.token, first, "after the pause")
        _release(b, found, "the second holder")
    else:
        found.append("the released hold was not granted after the pause")
    return found


def _holding_process(
    index: int, spec: HoldKind, urls: list[str], prefix: str, name: str, report: Any, go: Any
) -> str:
    clients = [client_from_url(u, socket_timeout=SOCKET_TIMEOUT) for u in urls]
    hold = spec.build(clients if spec.quorum else clients[0], prefix, name, LEASE, 0)
    assert hold.acquire()
    report.put(hold.token)
    go.wait(60)
    try:
        hold.release()
        return "released"
    except LockLost:
        return "lost"
    except Exception as exc:
        return describe(exc)


def holder_killed(ctx: Ctx, spec: HoldKind, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report, go = multiproc.queue(), multiproc.event()
    holder = ctx.process(_holding_process, spec, spec.urls(ctx), ctx.prefix, "k", report, go)
    theirs = report.get(timeout=15)
    holder.signal(19 if stop else 9)  # SIGSTOP / SIGKILL
    struck = time.monotonic()
    b = spec.make(ctx, "k", wait=LEASE + 3.0)
    if _acquire(b, found, "a party after the holder was struck"):
        took = time.monotonic() - struck
        if took > LEASE + 1.5:
            found.append(
                f"the hold of a {'stopped' if stop else 'killed'} holder was free only after "
                f"{took:.1f} s (lease {LEASE:g} s)"
            )
        _grows(found, b.token, theirs, "after the holder's lease ran out")
    else:
        found.append("the hold of a struck holder was never granted again")
        return found
    if stop:
        holder.signal(18)  # SIGCONT, then it tries to release the hold it lost
        go.set()
        outcome = holder.result(15)
        if outcome != "lost":
            found.append(f"the resumed holder's release gave {outcome!r} (want LockLost)")
    _release(b, found, "the new holder (after the stale holder's release)")
    return found


def pool_exhausted(ctx: Ctx, spec: HoldKind) -> list[str]:
    shared = spec.clients(ctx, max_connections=6)
    a = spec.make(ctx, "x", clients=shared)
    found: list[str] = []
    if not _acquire(a, found, "holder"):
        return found + ["the holder did not get a free hold"]
    inside, overlaps, granted = [0], [], [0]
    guard = threading.Lock()

    def party() -> None:
        b = spec.make(ctx, "x", wait=8.0, clients=shared)
        if b.acquire():
            with guard:
                inside[0] += 1
                granted[0] += 1
                if inside[0] > 1:
                    overlaps.append(inside[0])
            time.sleep(0.01)
            with guard:
                inside[0] -= 1
            b.release()

    problems, _ = pool_exhaustion(ctx, [party] * 12, a.release)
    found += problems
    if overlaps:
        found.append(f"{len(overlaps)} parties held at once with another")
    if not granted[0]:
        found.append("no waiting party got the hold after the release")
    if spec is LOCK:
        found += asyncio.run(_async_pool_exhausted(ctx, spec))
    return found


async def _async_pool_exhausted(
    ctx: Ctx, spec: HoldKind, waiters: int = 40, pool: int = 10
) -> list[str]:
    """The same on the event loop: many waiting tasks on one ``redis.asyncio`` pool."""
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(
        ctx.url, max_connections=pool, socket_timeout=2.0, socket_connect_timeout=2.0
    )
    found: list[str] = []
    try:
        a = spec.make(ctx, "ax", clients=client)
        if not await a.aacquire():
            return ["(async) the holder did not get a free hold"]

        async def party() -> None:
            b = spec.make(ctx, "ax", wait=8.0, clients=client)
            if await b.aacquire():
                await b.arelease()

        tasks = [asyncio.ensure_future(party()) for _ in range(waiters)]
        await asyncio.sleep(0.5)
        try:
            await a.arelease()
        except Exception as exc:
            found.append(
                f"(async) the holder's release failed while {waiters} tasks waited on a pool of "
                f"{pool}: {describe(exc)}"
            )
        done, pending = await asyncio.wait(tasks, timeout=15)
        for task in pending:
            task.cancel()
        if pending:
            found.append(
                f"(async) {len(pending)} waiting tasks still running 15 s after the release"
            )
        for task in done:
            if task.exception() is not None and (problem := outage_claim(task.exception())):
                found.append(f"(async) a waiting task: {problem}")
    finally:
        await client.aclose()
    return found


def hostile_names(ctx: Ctx, spec: HoldKind) -> list[str]:
    found: list[str] = []
    name = hostile(spec.kind)
    a = spec.make(ctx, name)
    if not _acquire(a, found, "holder"):
        return found + ["the holder did not get a free hold"]
    b = spec.make(ctx, name, wait=5.0)
    waiter = Party(b.acquire)
    time.sleep(0.2)
    _release(a, found, "holder")
    status, value = waiter.outcome(5.0)
    if (status, value) != ("ok", True):
        found.append(f"the waiter did not get the hold: {status} {value!r}")
    else:
        _grows(found, b.token, a.token if a.token else 0, "hostile name")
        found += keys_tagged_by(ctx.admin(), ctx.prefix, name)
        _release(b, found, "waiter")
    return found


def _register(spec: HoldKind, what: str) -> None:
    k = spec.kind

    def cell(primitive: str, nemesis: str, guarantee: str, **kwargs: Any) -> Callable[[Any], Any]:
        def register(func: Callable[[Ctx], list[str]]) -> Any:
            def run(ctx: Ctx) -> list[str]:
                spec.prepare(ctx)
                return func(ctx)

            return _cell(primitive, nemesis, guarantee, **kwargs)(run)

        return register

    if not spec.quorum:
        cell(
            k,
            "restart-with-data",
            f"the {what} stays held: nobody else gets it; the holder's release works; the "
            "next grant's token is larger",
        )(lambda ctx: restart_with_data(ctx, spec))
        cell(
            k,
            "restart-without-data",
            f"the holder's release raises LockLost; a new acquirer gets the {what} with "
            "a strictly larger fencing token; the stale release leaves the new hold alone",
            smoke=True,
        )(lambda ctx: restart_without_data(ctx, spec))
        cell(
            k,
            "paused-server",
            "acquire raises CoordinationUnavailable within the socket timeout (+1 s), never "
            "hangs or grants; afterwards the holder still holds, its release works, tokens grow",
        )(lambda ctx: paused_server(ctx, spec))
    cell(
        k,
        "connection-kill",
        f"a waiter whose connection is killed (CLIENT KILL) keeps waiting and gets the {what} "
        "when it is released (within 3 s), with a larger token",
    )(lambda ctx: connection_kill(ctx, spec))
    cell(
        k,
        "holder-sigkill",
        f"a SIGKILLed holder's {what} is free within its lease (+0.5 s); the next token is larger",
    )(lambda ctx: holder_killed(ctx, spec, stop=False))
    cell(
        k,
        "holder-sigstop",
        f"a holder SIGSTOPped past its lease loses the {what} to the next party (larger "
        "token); resumed, its release raises LockLost and leaves the new hold alone",
    )(lambda ctx: holder_killed(ctx, spec, stop=True))
    cell(
        k,
        "pool-exhaustion",
        "12 waiters on a pool of 6 (and, for the lock, 40 asyncio tasks on a pool of 10): the "
        "holder's release succeeds, waiters get the hold one at a time or are refused with an "
        "error that names the pool (not an outage, not a raw error)",
    )(lambda ctx: pool_exhausted(ctx, spec))
    cell(
        k,
        "hostile-names",
        "a name with every allowed character: acquire, hand-off to a waiter, release; every key "
        "carries the name as its hash tag",
    )(lambda ctx: hostile_names(ctx, spec))


_register(LOCK, "lock")
_register(SEMAPHORE, "permit")
_register(RWLOCK, "write hold")
_register(REDLOCK, "quorum lock")


# -- Redlock's own: one master of three restarts or hangs ------------------------------------


@cell(
    "redlock",
    "restart-with-data",
    "one master restarted with its AOF: the lock stays held on all three; "
    "nobody else gets it; the holder's release works; the next token is larger",
)
def redlock_restart_with_data(ctx: Ctx) -> list[str]:
    REDLOCK.prepare(ctx)
    return restart_with_data(ctx, REDLOCK)


@cell(
    "redlock",
    "restart-without-data",
    "a granting master restarts empty while another was down at the grant: no second grant while "
    "the first holder's lock is valid (the restarted master refuses grants for one max TTL); "
    "later grants have larger tokens",
    smoke=True,
)
def redlock_restart_without_data(ctx: Ctx) -> list[str]:
    REDLOCK.prepare(ctx)
    found: list[str] = []
    down = ctx.others[1]
    down.kill()  # the third master is down at the grant
    try:
        a = REDLOCK.make(ctx, "r", ttl=10.0)
        if not _acquire(a, found, "first holder (2 of 3 masters up)"):
            return found + ["the first holder did not get the lock from two masters of three"]
        ctx.restart(keep_data=False)  # a granting master forgets it
    finally:
        down.start()  # back, empty: with the restarted one, a majority that never saw the grant
    b = REDLOCK.make(ctx, "r", ttl=10.0)
    try:
        if b.acquire():
            found.append(
                f"granted twice: a second holder got the lock (token {b.token}) while the first "
                f"(token {a.token}) held it for {a.validity:.1f} s more"
            )
            b.release()
    except Exception as exc:
        if (problem := raw_error(exc)) is not None:
            found.append(problem)
    try:
        a.release()
    except Exception as exc:
        if (problem := raw_error(exc)) is not None:
            found.append(problem)
    return found


@cell(
    "redlock",
    "paused-server",
    "one master of three hung (SIGSTOP): a free lock (TTL 2 s, socket timeout 5 s) is granted by "
    "the other two within 1 s (not held up by the hung one), a held one is refused as busy, not "
    "QuorumNotReached; afterwards the holder's release works and tokens grow",
)
def redlock_paused_master(ctx: Ctx) -> list[str]:
    REDLOCK.prepare(ctx)
    found = paused_server(ctx, REDLOCK)
    resume = ctx.pause(PAUSE)
    try:  # clients with the default 5 s socket timeout, a TTL below it
        c = REDLOCK.make(ctx, "free", ttl=2.0, clients=REDLOCK.clients(ctx, socket_timeout=5.0))
        started = time.monotonic()
        if not _acquire(c, found, "a free lock, one master hung"):
            found.append("a free lock was not granted by the two masters that answer")
        elif time.monotonic() - started > 1.0:
            found.append(f"the grant took {time.monotonic() - started:.1f} s with one master hung")
    finally:
        resume.join()
    return found


for _nemesis in ("cluster-slot-migration", "cluster-failover"):
    not_applicable("redlock", _nemesis, "Redlock's masters are independent servers, not a Cluster")
