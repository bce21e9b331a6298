"""Cells of the latches and barriers.

What they guarantee: a latch opens only after its count of count-downs and stays
open; a barrier trips only when every party arrived; a party that dies or hangs
past its lease breaks them (every waiter raises within a lease); a loss of their
data breaks them with a reason — never a silent reset to the initial count, never a
waiter left waiting forever; a dropped connection is ridden out within the wait.
"""

from __future__ import annotations

import time
from typing import Any

from django_redcoord.core.exceptions import (
    BarrierBroken,
    CoordinationUnavailable,
    LatchBroken,
    LockLost,
    RedcoordError,
)
from django_redcoord.core.latches import Barrier, CountDownLatch
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
    pool_exhaustion,
    raw_error,
)
from .table import cell


def latch(
    ctx: Ctx, name: str = "l", count: int = 2, *, client: Any = None, ttl: float = 10.0
) -> CountDownLatch:
    return CountDownLatch(name, count, ttl=ttl, client=client or ctx.client(), prefix=ctx.prefix)


def barrier(
    ctx: Ctx, name: str = "b", parties: int = 3, *, client: Any = None, ttl: float = 10.0
) -> Barrier:
    return Barrier(name, parties, ttl=ttl, client=client or ctx.client(), prefix=ctx.prefix)


def _expect(party: Party, want: Any, found: list[str], what: str, timeout: float = 6.0) -> None:
    status, value = party.outcome(timeout)
    if status == "ok" and (
        value == want if not isinstance(want, type) else isinstance(value, want)
    ):
        return
    if status == "error" and isinstance(want, type) and isinstance(value, want):
        return
    shown = describe(value) if isinstance(value, BaseException) else repr(value)
    found.append(
        f"{what}: want {want.__name__ if isinstance(want, type) else want!r}, got {status} {shown}"
    )


# -- latch ----------------------------------------------------------------------------------


@cell(
    "latch",
    "restart-with-data",
    "the count is kept: a waiter across the restart (re-issuing its wait) "
    "opens after the remaining count-down, not before, not broken",
)
def latch_restart_with_data(ctx: Ctx) -> list[str]:
    found: list[str] = []
    latch(ctx).count_down()
    waiter = Party(lambda: latch(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.restart(keep_data=True)
    time.sleep(0.3)
    if waiter.done():
        found.append(f"the waiter ended before the last count-down: {waiter.outcome(0)}")
    state = latch(ctx).state()
    if state.get("count") != 1:
        found.append(f"the count after the restart is {state.get('count')} (want 1)")
    latch(ctx).count_down()
    _expect(waiter, True, found, "the waiter across the restart")
    return found


def latch_data_loss(ctx: Ctx, make: Any = None) -> list[str]:
    make = make or latch
    found: list[str] = []
    # The joined party is what survives the loss: it renews its lease every ttl/3 and finds its
    # entry
    # gone. A waiter after the restart must hear of the loss from it within one renewal (1 s here).
    party = make(ctx).party(ttl=3.0)
    party.join()
    make(ctx).count_down()
    ctx.restart(keep_data=False)
    waiter = Party(lambda: make(ctx).wait(5.0))
    _expect(waiter, LatchBroken, found, "a waiter after the data loss", 8.0)
    try:
        opened = make(ctx).count_down()
        found.append(
            f"a count-down after the data loss was accepted (opened: {opened}): the latch started "
            "again silently at its initial count"
        )
    except LatchBroken:
        pass
    except Exception as exc:
        found.append(f"a count-down after the data loss raised {describe(exc)} (want LatchBroken)")
    try:
        party.count_down()
    except (LatchBroken, Exception) as exc:
        if (problem := raw_error(exc)) is not None:
            found.append(f"the joined party: {problem}")
    return found


cell(
    "latch",
    "restart-without-data",
    "the loss is detected: waiters raise LatchBroken with a reason (never wait "
    "forever), count-downs raise LatchBroken; never a silent restart at the initial count",
    smoke=True,
)(latch_data_loss)


@cell(
    "latch",
    "connection-kill",
    "a waiter whose connection is killed keeps waiting and opens on the last "
    "count-down (the blip is ridden out, no CoordinationUnavailable)",
)
def latch_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: latch(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.kill_connections()
    time.sleep(0.1)
    latch(ctx).count_down()
    latch(ctx).count_down()
    _expect(waiter, True, found, "the waiter whose connection was killed")
    waiter = async_party(ctx, lambda c: latch(ctx, "la", client=c).await_(8.0))  # the asyncio API
    ctx.wait_blocked(1)
    ctx.kill_connections()
    time.sleep(0.1)
    latch(ctx, "la").count_down()
    latch(ctx, "la").count_down()
    _expect(waiter, True, found, "(async) the waiter whose connection was killed")
    return found


@cell(
    "latch",
    "paused-server",
    "a count-down during the pause raises CoordinationUnavailable (nothing counted twice); a "
    "waiter opens after the resume or raises CoordinationUnavailable; the count is kept, not "
    "broken",
)
def latch_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: latch(ctx).wait(8.0))
    ctx.wait_blocked(1)
    resume = ctx.pause(PAUSE)
    try:
        latch(ctx).count_down()
        found.append("a count-down on a paused server succeeded")
    except CoordinationUnavailable:
        pass
    except Exception as exc:
        found.append(f"a count-down on a paused server raised {describe(exc)}")
    resume.join()
    state = latch(ctx).state()
    if state.get("count") != 2 or state.get("broken"):
        found.append(f"after the pause the latch is {state} (want count 2, not broken)")
    latch(ctx).count_down()
    latch(ctx).count_down()
    status, value = waiter.outcome(6.0)
    if not ((status, value) == ("ok", True) or isinstance(value, CoordinationUnavailable)):
        found.append(f"the waiter across the pause: {status} {value!r}")
    return found


def _latch_party_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    party = CountDownLatch(
        "k", 2, ttl=LEASE, client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT), prefix=prefix
    ).party()
    party.join()
    report.put("joined")
    go.wait(60)
    try:
        party.count_down()
        return "counted"
    except (
        LatchBroken,
        LockLost,
    ):  # the latch broke / its lease was lost: either way nothing counted
        return "broken"
    except Exception as exc:
        return describe(exc)


def latch_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_latch_party_process, ctx.url, ctx.prefix, report, go)
    report.get(timeout=15)
    proc.signal(19 if stop else 9)
    struck = time.monotonic()
    waiter = Party(lambda: latch(ctx, "k", ttl=LEASE).wait(LEASE + 5))
    _expect(waiter, LatchBroken, found, "a waiter after the party was struck", LEASE + 6)
    if waiter.ended_at and waiter.ended_at - struck > LEASE + 1.5:
        found.append(
            f"the waiter learnt of the struck party after {waiter.ended_at - struck:.1f} s (lease "
            f"{LEASE:g} s)"
        )
    if stop:
        proc.signal(18)
        go.set()
        if (outcome := proc.result(15)) != "broken":
            found.append(f"the resumed party's count-down gave {outcome!r} (want LatchBroken)")
    return found


cell(
    "latch",
    "holder-sigkill",
    "a SIGKILLed party (joined, not counted down) breaks the latch: every waiter raises "
    "LatchBroken within its lease (+0.5 s)",
)(lambda ctx: latch_holder(ctx, stop=False))
cell(
    "latch",
    "holder-sigstop",
    "a party SIGSTOPped past its lease breaks the latch within the lease; resumed, its "
    "count-down raises LatchBroken (or LockLost: its lease is gone), it never counts",
)(lambda ctx: latch_holder(ctx, stop=True))


@cell(
    "latch",
    "pool-exhaustion",
    "12 waiters on a pool of 6: the opening count-down on the same pool succeeds; "
    "waiters open or are refused with an error naming the pool (not an outage)",
)
def latch_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=6)
    found, outcomes = pool_exhaustion(
        ctx,
        [lambda: latch(ctx, count=1, client=shared).wait(8.0)] * 12,
        lambda: latch(ctx, count=1, client=shared).count_down(),
    )
    if not any(o == ("ok", True) for o in outcomes):
        found.append(f"no waiter opened: {outcomes}")
    return found


@cell(
    "latch",
    "hostile-names",
    "a name with every allowed character: join, count down, wait; the keys carry the "
    "name as their hash tag",
)
def latch_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    name = hostile("latch")
    waiter = Party(lambda: latch(ctx, name).wait(5.0))
    with latch(ctx, name).party():
        pass
    latch(ctx, name).count_down()
    _expect(waiter, True, found, "the waiter")
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- barrier --------------------------------------------------------------------------------


def _arrivals(
    ctx: Ctx, n: int, name: str = "b", timeout: float = 8.0, **kwargs: Any
) -> list[Party]:
    parties = [Party(lambda: barrier(ctx, name, **kwargs).wait(timeout)) for _ in range(n)]
    ctx.wait_blocked(n)
    return parties


def _tripped(parties: list[Party], found: list[str], what: str, timeout: float = 6.0) -> None:
    outcomes = [p.outcome(timeout) for p in parties]
    indexes = sorted(v for s, v in outcomes if s == "ok")
    if indexes != list(range(len(parties))):
        found.append(
            f"{what}: want every party through with indexes 0..{len(parties) - 1}, got {outcomes}"
        )


@cell(
    "barrier",
    "restart-with-data",
    "parties that arrived before the restart are kept: the last arrival trips it "
    "and every party returns its own index",
)
def barrier_restart_with_data(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiting = _arrivals(ctx, 2)
    ctx.restart(keep_data=True)
    time.sleep(0.2)
    last = Party(lambda: barrier(ctx).wait(8.0))
    _tripped([*waiting, last], found, "across a restart with data")
    return found


@cell(
    "barrier",
    "restart-without-data",
    "the loss is detected: the parties waiting raise BarrierBroken (never "
    "wait forever, never trip with a party missing)",
    smoke=True,
)
def barrier_data_loss(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiting = _arrivals(ctx, 2)
    ctx.restart(keep_data=False)
    for i, party in enumerate(waiting):
        _expect(party, BarrierBroken, found, f"waiting party {i} after the data loss", 9.0)
    return found


@cell(
    "barrier",
    "connection-kill",
    "parties whose connections are killed keep waiting; the last arrival trips "
    "it for all (the blip is ridden out, the barrier is not broken)",
)
def barrier_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiting = _arrivals(ctx, 2)
    ctx.kill_connections()
    time.sleep(0.1)
    last = Party(lambda: barrier(ctx).wait(8.0))
    _tripped([*waiting, last], found, "after a connection kill")
    waiting = [
        async_party(ctx, lambda c: barrier(ctx, "ba", client=c).await_(8.0)) for _ in range(2)
    ]
    ctx.wait_blocked(2)
    ctx.kill_connections()
    time.sleep(0.1)
    last = Party(lambda: barrier(ctx, "ba").wait(8.0))
    _tripped([*waiting, last], found, "(async) after a connection kill")
    return found


@cell(
    "barrier",
    "paused-server",
    "never trips with a party missing: either every party passes with its own index, "
    "or every party raises (BarrierBroken or CoordinationUnavailable)",
)
def barrier_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiting = _arrivals(ctx, 2)
    ctx.pause(PAUSE).join()
    last = Party(lambda: barrier(ctx).wait(8.0))
    outcomes = [p.outcome(10.0) for p in [*waiting, last]]
    passed = [v for s, v in outcomes if s == "ok"]
    errors = [v for s, v in outcomes if s == "error"]
    if any(s == "hung" for s, _ in outcomes):
        found.append(f"a party hangs after the pause: {outcomes}")
    elif passed and errors:
        found.append(f"some parties passed while others failed: {outcomes}")
    elif passed and sorted(passed) != [0, 1, 2]:
        found.append(f"the indexes are {sorted(passed)}")
    for error in errors:
        if not isinstance(error, (BarrierBroken, CoordinationUnavailable)):
            found.append(f"a party raised {describe(error)}")
    return found


def _arrive_process(index: int, url: str, prefix: str, report: Any) -> str:
    report.put("arriving")
    try:
        Barrier(
            "k",
            3,
            ttl=LEASE,
            client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT),
            prefix=prefix,
        ).wait(30)
        return "passed"
    except BarrierBroken:
        return "broken"
    except Exception as exc:
        return describe(exc)


def barrier_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report = multiproc.queue()
    proc = ctx.process(_arrive_process, ctx.url, ctx.prefix, report)
    report.get(timeout=15)
    ctx.wait_blocked(1)
    proc.signal(19 if stop else 9)
    struck = time.monotonic()
    waiter = Party(lambda: barrier(ctx, "k", ttl=LEASE).wait(LEASE + 5))
    _expect(waiter, BarrierBroken, found, "a party after another was struck", LEASE + 6)
    if waiter.ended_at and waiter.ended_at - struck > LEASE + 1.5:
        found.append(
            f"the party learnt of the struck one after {waiter.ended_at - struck:.1f} s (lease "
            f"{LEASE:g} s)"
        )
    if stop:
        proc.signal(18)
        if (outcome := proc.result(15)) != "broken":
            found.append(f"the resumed party's wait gave {outcome!r} (want BarrierBroken)")
    return found


cell(
    "barrier",
    "holder-sigkill",
    "a SIGKILLed party that arrived breaks the barrier: the others raise BarrierBroken "
    "within its lease (+0.5 s)",
)(lambda ctx: barrier_holder(ctx, stop=False))
cell(
    "barrier",
    "holder-sigstop",
    "a party SIGSTOPped past its lease breaks the barrier within the lease; resumed, "
    "it raises BarrierBroken too (it never passes alone)",
)(lambda ctx: barrier_holder(ctx, stop=True))


@cell(
    "barrier",
    "pool-exhaustion",
    "12 parties on a pool of 6: none passes with a party missing; each passes or raises our error "
    "(BarrierBroken, or a refusal naming the pool), never an outage or a raw error",
)
def barrier_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=6)
    found, outcomes = pool_exhaustion(
        ctx, [lambda: barrier(ctx, parties=12, client=shared).wait(5.0)] * 12, lambda: None
    )
    passed = [v for s, v in outcomes if s == "ok"]
    if passed and len(passed) != 12:
        found.append(
            f"{len(passed)} of 12 parties passed: the barrier tripped with parties missing"
        )
    for status, value in outcomes:
        if status == "error" and not isinstance(value, RedcoordError):
            found.append(f"a party raised {describe(value)}")
    return found


@cell(
    "barrier",
    "hostile-names",
    "a name with every allowed character: two parties meet; the keys carry the name "
    "as their hash tag",
)
def barrier_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    name = hostile("barrier")
    parties = [Party(lambda: barrier(ctx, name, parties=2).wait(5.0)) for _ in range(2)]
    _tripped(parties, found, "hostile name")
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)
