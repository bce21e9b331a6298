"""Cells of the "pause-then-timeout" column: a party waits with a timeout, the server is paused
past the socket timeout and resumed long before the timeout runs out, and nothing comes.

The wait must end as its own timeout (False, None, an empty list, the barrier broken by a
party that timed out), not as an outage: Redis has been answering for seconds by then. It
must also leave nothing behind (no queue place, no registration) that delays or misleads the
next party. A wait whose last round trips (the final re-check, leaving its place) were
refused "because the server does not answer" once one round trip had timed out during the
pause raised CoordinationUnavailable here, and a barrier stayed unbroken for a later party
to pass alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django_redcoord.core.exceptions import BarrierBroken
from django_redcoord.core.leader.election import LeaderElection

from .cells_holds import LOCK, REDLOCK, RWLOCK, SEMAPHORE, HoldKind
from .cells_latches import barrier, latch
from .cells_signals import event, signal, topic
from .context import PAUSE, SOCKET_TIMEOUT, Ctx, Party, describe
from .table import cell, not_applicable

NEMESIS = "pause-then-timeout"
#: How long each party waits: the pause (PAUSE, from PAUSE_AT) ends well before.
WAIT = 3.5
PAUSE_AT = 0.5


def _paused_meanwhile(ctx: Ctx) -> None:
    """Pause the server PAUSE_AT seconds from now for PAUSE seconds, and wait for the resume."""
    time.sleep(PAUSE_AT)
    ctx.pause(PAUSE).join()


def _ends(party: Party, want: Callable[[Any], bool], what: str, found: list[str]) -> None:
    kind, value = party.outcome(WAIT + 10)
    if kind == "ok" and want(value):
        return
    shown = describe(value) if kind == "error" else repr(value)
    found.append(f"{what} ended {kind}: {shown}; it should time out (Redis was answering again)")


def hold_times_out(ctx: Ctx, spec: HoldKind) -> list[str]:
    found: list[str] = []
    spec.prepare(ctx)
    holder = spec.make(ctx, "pt")
    if not holder.acquire():
        return ["the holder did not get a free hold"]
    waiter = spec.make(ctx, "pt", wait=WAIT)
    party = Party(waiter.acquire)
    _paused_meanwhile(ctx)
    _ends(party, lambda v: v is False, "the waiter's acquire", found)
    holder.release()
    after = spec.make(ctx, "pt", wait=0)  # nothing the waiter left may stand in its way
    if after.acquire():
        after.release()
    else:
        found.append("after the waiter timed out and the holder released, the hold was not free")
    return found


for _spec in (LOCK, SEMAPHORE, RWLOCK, REDLOCK):
    cell(
        _spec.kind,
        NEMESIS,
        "a waiter whose wait outlasts a pause returns False when its wait runs out (not "
        "CoordinationUnavailable); released, the hold is free at once (no place left behind)",
    )(lambda ctx, spec=_spec: hold_times_out(ctx, spec))


@cell(
    "latch",
    NEMESIS,
    "wait() returns False when its time runs out after the pause; the latch still counts: "
    "its last count_down() releases a new waiter at once",
)
def latch_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    party = Party(lambda: latch(ctx, "pt", 1).wait(WAIT))
    _paused_meanwhile(ctx)
    _ends(party, lambda v: v is False, "the latch wait", found)
    latch(ctx, "pt", 1).count_down()
    if latch(ctx, "pt", 1).wait(1.0) is not True:
        found.append("after the count-down, a new waiter did not pass")
    return found


@cell(
    "barrier",
    NEMESIS,
    "two of three parties whose wait runs out after the pause both raise BarrierBroken (a "
    "party timed out), and a third party arriving later raises BarrierBroken: never one alone",
)
def barrier_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    parties = [Party(lambda: barrier(ctx, "pt", 3).wait(WAIT)) for _ in range(2)]
    _paused_meanwhile(ctx)
    late = Party(lambda: [p.join(WAIT + 10) for p in parties] and barrier(ctx, "pt", 3).wait(1.0))
    for what, party in [*((f"party {i}", p) for i, p in enumerate(parties)), ("a third", late)]:
        kind, value = party.outcome(WAIT + 10)
        if not (kind == "error" and isinstance(value, BarrierBroken)):
            shown = describe(value) if kind == "error" else repr(value)
            found.append(f"{what} ended {kind}: {shown}; it should raise BarrierBroken")
    return found


@cell(
    "event",
    NEMESIS,
    "wait() returns False when its time runs out after the pause; set() then wakes a new waiter",
)
def event_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    party = Party(lambda: event(ctx, "pt").wait(WAIT))
    _paused_meanwhile(ctx)
    _ends(party, lambda v: v is False, "the event wait", found)
    event(ctx, "pt").set()
    if event(ctx, "pt").wait(1.0) is not True:
        found.append("after set(), a new waiter did not return True")
    return found


@cell(
    "signal",
    NEMESIS,
    "wait() returns None when its time runs out after the pause (no signal came)",
)
def signal_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    party = Party(lambda: signal(ctx, "pt").wait(WAIT))
    _paused_meanwhile(ctx)
    _ends(party, lambda v: v is None, "the signal wait", found)
    return found


@cell(
    "topic",
    NEMESIS,
    "receive() returns [] when its time runs out after the pause; a message published then is "
    "received by the same subscriber",
)
def topic_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    subscriber = topic(ctx, "pt").subscribe("g", "c1")
    subscriber.receive(timeout=0)  # (the group exists before the pause)
    party = Party(lambda: subscriber.receive(timeout=WAIT))
    _paused_meanwhile(ctx)
    _ends(party, lambda v: v == [], "the topic receive", found)
    topic(ctx, "pt").publish({"n": 1})
    got = subscriber.receive(timeout=1.0)
    if [m.data for m in got] != [{"n": 1}]:
        found.append(f"after the timeout, the subscriber received {got!r}, not the message")
    return found


@cell(
    "election",
    NEMESIS,
    "a standby's wait() for the next campaign returns once its time runs out after the pause, "
    "or raises CoordinationUnavailable only while the server is paused (within a socket "
    "timeout of the resume), never later",
)
def election_times_out(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    leader = LeaderElection("pt", 30.0, 20.0, 2.0, client=client, prefix=ctx.prefix, identity="a")
    standby = LeaderElection("pt", 30.0, 20.0, 2.0, client=client, prefix=ctx.prefix, identity="b")
    if not leader.campaign() or standby.campaign():
        return ["the first campaign did not make exactly one leader"]
    party = Party(lambda: standby.wait(WAIT))
    time.sleep(PAUSE_AT)
    resumed = ctx.pause(PAUSE)
    resumed.join()
    kind, value = party.outcome(WAIT + 10)
    if kind == "error" and party.ended_at is not None:
        late = party.ended_at - resumed.resumed_at  # type: ignore[attr-defined]
        if late > SOCKET_TIMEOUT + 0.5:
            found.append(
                f"the standby's wait raised {late:.1f} s after the resume: {describe(value)}"
            )
    elif kind != "ok":
        found.append(f"the standby's wait ended {kind}")
    if not leader.is_leader() or not leader.campaign():
        found.append("the leader lost its term across the pause (its lease is 30 s)")
    return found


for _primitive, _why in (
    ("ratelimiter", "a decision never waits: hit() and peek() are one round trip each"),
    ("queue", "a worker's wait for messages has no deadline (paused-server checks it goes on)"),
    ("group", "a grouped message waits in its queue: no wait with a timeout of its own"),
    ("task", "an enqueue and a result read are one round trip: nothing waits with a timeout"),
    ("workflow", "a workflow's members move with their tasks: nothing waits with a timeout"),
):
    not_applicable(_primitive, NEMESIS, _why)
