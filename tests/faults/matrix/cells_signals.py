"""Cells of the wake-up primitives: event, signal, topic.

What they guarantee: an event stays set while Redis keeps its data (and a set lost
with the data reads as not set — nothing raises); a signal is delivered to exactly
one waiter (``send``), kept in Redis across a dropped connection; a topic loses no
published message while Redis keeps its data, delivers each unacknowledged one
again after its subscriber's lease, and a group lost with the data is noticed —
never a raw redis error.
"""

from __future__ import annotations

import time
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable, RedcoordError
from django_redcoord.core.signals import Event, Signal, Topic
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
    no_ttl_keys,
    pool_exhaustion,
)
from .table import cell, not_applicable


def event(ctx: Ctx, name: str = "e", client: Any = None) -> Event:
    return Event(name, client=client or ctx.client(), prefix=ctx.prefix)


def signal(ctx: Ctx, name: str = "s", client: Any = None) -> Signal:
    return Signal(name, client=client or ctx.client(), prefix=ctx.prefix)


def topic(ctx: Ctx, name: str = "t", client: Any = None) -> Topic:
    return Topic(name, client=client or ctx.client(), prefix=ctx.prefix)


def _want(
    party: Party,
    want: Any,
    found: list[str],
    what: str,
    timeout: float = 6.0,
    *,
    outage_ok: bool = False,
) -> None:
    status, value = party.outcome(timeout)
    if status == "ok" and value == want:
        return
    if outage_ok and isinstance(value, CoordinationUnavailable):
        return
    shown = describe(value) if isinstance(value, BaseException) else repr(value)
    found.append(f"{what}: want {want!r}, got {status} {shown}")


def _during_pause(ctx: Ctx, call: Any, found: list[str], what: str) -> None:
    started = time.monotonic()
    try:
        call()
        found.append(f"{what} succeeded on a paused server")
    except CoordinationUnavailable:
        pass
    except Exception as exc:
        found.append(f"{what} on a paused server raised {describe(exc)}")
    if time.monotonic() - started > SOCKET_TIMEOUT + 1.0:
        found.append(f"{what} on a paused server took {time.monotonic() - started:.1f} s")


# -- event ------------------------------------------------------------------------------------


@cell(
    "event",
    "restart-with-data",
    "a set event stays set (with its data): waiters return True at once",
)
def event_restart_with_data(ctx: Ctx) -> list[str]:
    found: list[str] = []
    event(ctx).set({"n": 1})
    ctx.restart(keep_data=True)
    if not event(ctx).is_set() or event(ctx).get() != {"n": 1}:
        found.append("the event's set was lost across a restart with data")
    if event(ctx).wait(1.0) is not True:
        found.append("a waiter did not see the set event")
    return found


@cell(
    "event",
    "restart-without-data",
    "the set is lost with the data (documented): the event reads not set, "
    "nothing raises, a new set() wakes waiters",
    smoke=True,
)
def event_data_loss(ctx: Ctx) -> list[str]:
    found: list[str] = []
    event(ctx).set()
    ctx.restart(keep_data=False)
    try:
        if event(ctx).is_set():
            found.append("the event reads set after Redis lost it")
    except Exception as exc:
        found.append(f"is_set() after the data loss raised {describe(exc)}")
    waiter = Party(lambda: event(ctx).wait(5.0))
    time.sleep(0.2)
    event(ctx).set()
    _want(waiter, True, found, "a waiter after the data loss")
    return found


@cell(
    "event",
    "connection-kill",
    "a waiter whose connection is killed keeps waiting and returns True on set()",
)
def event_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: event(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.kill_connections()
    time.sleep(0.1)
    event(ctx).set()
    _want(waiter, True, found, "the waiter whose connection was killed")
    waiter = async_party(ctx, lambda c: event(ctx, "ea", client=c).await_(8.0))  # the asyncio API
    ctx.wait_blocked(1)
    ctx.kill_connections()
    time.sleep(0.1)
    event(ctx, "ea").set()
    _want(waiter, True, found, "(async) the waiter whose connection was killed")
    return found


@cell(
    "event",
    "paused-server",
    "set() during the pause raises CoordinationUnavailable; a waiter returns True "
    "after the resume and set() (or raises CoordinationUnavailable); never a raw error",
)
def event_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: event(ctx).wait(8.0))
    ctx.wait_blocked(1)
    resume = ctx.pause(PAUSE)
    _during_pause(ctx, lambda: event(ctx).set(), found, "set()")
    resume.join()
    event(ctx).set()
    _want(waiter, True, found, "the waiter across the pause", outage_ok=True)
    return found


for _n in ("holder-sigkill", "holder-sigstop"):
    not_applicable(
        "event",
        _n,
        "an event has no holder: a setter that dies has set it or not; waiters hold nothing",
    )


@cell(
    "event",
    "pool-exhaustion",
    "12 waiters on a pool of 6: set() on the same pool succeeds; waiters return True "
    "or are refused with an error naming the pool (not an outage)",
)
def event_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=6)
    found, outcomes = pool_exhaustion(
        ctx,
        [lambda: event(ctx, client=shared).wait(8.0)] * 12,
        lambda: event(ctx, client=shared).set(),
    )
    if not any(o == ("ok", True) for o in outcomes):
        found.append(f"no waiter saw the set: {outcomes}")
    return found


@cell(
    "event",
    "hostile-names",
    "a name with every allowed character: set, wait, clear; keys tagged by the name",
)
def event_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    name = hostile("event")
    waiter = Party(lambda: event(ctx, name).wait(5.0))
    time.sleep(0.1)
    event(ctx, name).set({"x": name})
    _want(waiter, True, found, "the waiter")
    if event(ctx, name).get() != {"x": name}:
        found.append("the event's data did not round-trip")
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- signal -----------------------------------------------------------------------------------


def _send_until(ctx: Ctx, data: Any, seconds: float = 4.0) -> int:
    """send() until a waiter takes it (its place may need a moment to come back)."""
    deadline = time.monotonic() + seconds
    while True:
        sent = signal(ctx).send(data)
        if sent or time.monotonic() > deadline:
            return sent
        time.sleep(0.05)


@cell(
    "signal",
    "restart-with-data",
    "a waiter's place survives: a send after the restart reaches the waiter",
)
def signal_restart_with_data(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: signal(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.restart(keep_data=True)
    if not _send_until(ctx, {"n": 1}):
        found.append("no waiter took a send after the restart")
    _want(waiter, {"n": 1}, found, "the waiter across the restart")
    return found


@cell(
    "signal",
    "restart-without-data",
    "signals in flight are lost with the data (documented); the waiter raises "
    "nothing, takes its place again and receives a signal sent afterwards",
    smoke=True,
)
def signal_data_loss(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: signal(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.restart(keep_data=False)
    if not _send_until(ctx, "after"):
        found.append("the waiter did not take its place again after the data loss")
    _want(waiter, "after", found, "the waiter after the data loss")
    return found


@cell(
    "signal",
    "connection-kill",
    "a waiter whose connection is killed receives the signal sent meanwhile "
    "(it waits in Redis), exactly once",
)
def signal_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: signal(ctx).wait(8.0))
    ctx.wait_blocked(1)
    ctx.kill_connections()
    if signal(ctx).send("x") != 1:
        found.append("the send right after the kill found no waiter (its place was lost)")
    _want(waiter, "x", found, "the waiter whose connection was killed")
    waiter = async_party(ctx, lambda c: signal(ctx, "sa", client=c).await_(8.0))  # the asyncio API
    ctx.wait_blocked(1)
    ctx.kill_connections()
    if signal(ctx, "sa").send("y") != 1:
        found.append("(async) the send right after the kill found no waiter")
    _want(waiter, "y", found, "(async) the waiter whose connection was killed")
    return found


@cell(
    "signal",
    "paused-server",
    "send() during the pause raises CoordinationUnavailable; the waiter receives a "
    "signal sent after the resume (or raises CoordinationUnavailable)",
)
def signal_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: signal(ctx).wait(8.0))
    ctx.wait_blocked(1)
    resume = ctx.pause(PAUSE)
    _during_pause(ctx, lambda: signal(ctx).send("during"), found, "send()")
    resume.join()
    _send_until(ctx, "after")
    _want(waiter, "after", found, "the waiter across the pause", outage_ok=True)
    return found


def _signal_waiter_process(index: int, url: str, prefix: str, report: Any, again: bool) -> Any:
    sig = Signal("k", client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT), prefix=prefix)
    report.put("waiting")
    report.put(("got", sig.wait(30)))
    if not again:
        time.sleep(60)  # received, and never waits again (then SIGKILLed)
    return sig.wait(2.5, default="nothing")  # SIGSTOPped in this wait, past its place


def signal_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report = multiproc.queue()
    proc = ctx.process(_signal_waiter_process, ctx.url, ctx.prefix, report, stop)
    report.get(timeout=15)
    ctx.wait_blocked(1)
    signal(ctx, "k").send("first")
    if report.get(timeout=10) != ("got", "first"):
        found.append("the waiter process did not receive the first signal")
    if stop:
        ctx.wait_blocked(1)  # in its second wait
    proc.signal(19 if stop else 9)
    time.sleep(LEASE + 0.5)  # its place lapses (one block plus the grace)
    live = Party(lambda: signal(ctx, "k").wait(6.0, default="timeout"))
    deadline = time.monotonic() + 4.0
    delivered = 0
    while time.monotonic() < deadline and not delivered:
        delivered = signal(ctx, "k").send("second")
        time.sleep(0.02)
    _want(live, "second", found, "the live waiter (the struck one's place had lapsed)")
    if stop:
        proc.signal(18)
        if (leftover := proc.result(15)) != "nothing":
            found.append(f"the resumed waiter received {leftover!r}: a signal delivered twice")
    else:
        found += no_ttl_keys(ctx.admin(), ctx.prefix, allowed=(":index",))
    return found


cell(
    "signal",
    "holder-sigkill",
    "a waiter that received a signal and was SIGKILLed leaves no key without a TTL; "
    "the next send reaches a live waiter",
)(lambda ctx: signal_holder(ctx, stop=False))
cell(
    "signal",
    "holder-sigstop",
    "a waiter SIGSTOPped past its place is skipped: the send reaches a live waiter, "
    "and the resumed one does not receive it too (exactly one)",
)(lambda ctx: signal_holder(ctx, stop=True))


@cell(
    "signal",
    "pool-exhaustion",
    "12 waiters on a pool of 6: broadcast() on the same pool succeeds; waiters "
    "receive it or are refused with an error naming the pool (not an outage)",
)
def signal_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=6)
    found, outcomes = pool_exhaustion(
        ctx,
        [lambda: signal(ctx, client=shared).wait(8.0)] * 12,
        lambda: signal(ctx, client=shared).broadcast("all"),
    )
    if not any(o == ("ok", "all") for o in outcomes):
        found.append(f"no waiter received the broadcast: {outcomes}")
    return found


@cell(
    "signal",
    "hostile-names",
    "a name with every allowed character: wait, send; keys tagged by the name",
)
def signal_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    name = hostile("signal")
    waiter = Party(lambda: signal(ctx, name).wait(5.0))
    ctx.wait_blocked(1)
    signal(ctx, name).send(name)
    _want(waiter, name, found, "the waiter")
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- topic ------------------------------------------------------------------------------------


def _receive_all(sub: Any, want: int, seconds: float = 5.0) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        got += sub.receive(count=100, timeout=0.5)
    return got


@cell(
    "topic",
    "restart-with-data",
    "no published message is lost: every unacknowledged message is delivered "
    "again after the subscriber's lease; acknowledged ones are not",
)
def topic_restart_with_data(ctx: Ctx) -> list[str]:
    found: list[str] = []
    t = topic(ctx)
    sub = t.subscribe("g", "c1", lease=LEASE)
    sub.receive(timeout=0)  # the group exists
    ids = [t.publish({"i": i}) for i in range(6)]
    got = _receive_all(sub, 6)
    sub.ack(*got[:2])
    ctx.restart(keep_data=True)
    time.sleep(LEASE)
    other = topic(ctx).subscribe("g", "c2", lease=LEASE)
    again = {m.id for m in _receive_all(other, 4)}
    if again != set(ids[2:]):
        found.append(f"after the restart the unacknowledged {ids[2:]} came back as {sorted(again)}")
    return found


def topic_data_loss(ctx: Ctx, make: Any = None) -> list[str]:
    make = make or topic
    found: list[str] = []
    sub = make(ctx).subscribe("g", "c1", lease=LEASE)
    sub.receive(timeout=0)
    make(ctx).publish("before")
    _receive_all(sub, 1)
    ctx.restart(keep_data=False)
    try:
        sub.receive(timeout=0.2)
    except RedcoordError:
        pass  # a documented error is allowed once (the README says what was lost)
    except Exception as exc:
        found.append(f"receive() after the group was lost raised {describe(exc)}")
    make(ctx).publish("after")
    try:
        got = [m.data for m in _receive_all(sub, 1)]
        if "after" not in got:
            found.append(f"a message published after the loss was not received (got {got})")
    except Exception as exc:
        found.append(f"receive() after the group was lost raised {describe(exc)} (every time)")
    return found


cell(
    "topic",
    "restart-without-data",
    "the group lost with the data is noticed: no raw redis error (NOGROUP); the "
    "subscriber gets the messages published after the loss",
    smoke=True,
)(topic_data_loss)


@cell(
    "topic",
    "connection-kill",
    "a receive() blocked when its connection is killed returns the message published "
    "meanwhile (it is ridden out)",
)
def topic_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    sub = topic(ctx).subscribe("g", "c1")
    sub.receive(timeout=0)
    waiter = Party(lambda: [m.data for m in sub.receive(timeout=8.0)])
    ctx.wait_blocked(1)
    ctx.kill_connections()
    topic(ctx).publish("x")
    _want(waiter, ["x"], found, "the receive whose connection was killed")

    async def receive(client: Any) -> list[Any]:
        sub = topic(ctx, "ta", client=client).subscribe("g", "c1")
        await sub.areceive(timeout=0)
        ready.set()
        return [m.data for m in await sub.areceive(timeout=8.0)]

    import threading

    ready = threading.Event()
    waiter = async_party(ctx, receive)  # the asyncio API
    ready.wait(5)
    ctx.wait_blocked(1)
    ctx.kill_connections()
    topic(ctx, "ta").publish("y")
    _want(waiter, ["y"], found, "(async) the receive whose connection was killed")
    return found


@cell(
    "topic",
    "paused-server",
    "publish() during the pause raises CoordinationUnavailable (or succeeds after it); "
    "a blocked receive returns the message published after the resume; nothing is lost",
)
def topic_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    sub = topic(ctx).subscribe("g", "c1")
    sub.receive(timeout=0)
    waiter = Party(lambda: [m.data for m in sub.receive(timeout=8.0)])
    ctx.wait_blocked(1)
    resume = ctx.pause(PAUSE)
    _during_pause(ctx, lambda: topic(ctx).publish("during"), found, "publish()")
    resume.join()
    topic(ctx).publish("after")
    status, value = waiter.outcome(6.0)
    if status == "ok":
        rest = [m.data for m in _receive_all(sub, 1, 2.0)] if value != ["after"] else []
        if "after" not in value + rest:
            found.append(f"the message published after the pause was not received: {value + rest}")
    elif not isinstance(value, CoordinationUnavailable):
        found.append(f"the receive across the pause: {status} {value!r}")
    return found


def _topic_consumer_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    sub = Topic(
        "k", client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT), prefix=prefix
    ).subscribe("g", "struck", lease=LEASE)
    sub.receive(timeout=0)
    report.put("subscribed")
    got = []
    while not got:
        got = sub.receive(timeout=1.0)
    report.put([m.id for m in got])
    go.wait(60)
    return str(sub.ack(*got))


def topic_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_topic_consumer_process, ctx.url, ctx.prefix, report, go)
    report.get(timeout=15)
    mid = topic(ctx, "k").publish("work")
    if report.get(timeout=10) != [mid]:
        found.append("the consumer process did not receive the message")
    proc.signal(19 if stop else 9)
    struck = time.monotonic()
    other = topic(ctx, "k").subscribe("g", "live", lease=LEASE)
    got = _receive_all(other, 1, LEASE + 4)
    if [(m.id, m.redelivered) for m in got] != [(mid, True)]:
        found.append(
            f"the struck consumer's message was not delivered again to the live one: {got}"
        )
    elif time.monotonic() - struck > LEASE + 1.5:
        found.append(
            f"the message came back {time.monotonic() - struck:.1f} s after (lease {LEASE:g} s)"
        )
    if stop:
        other.ack(*got)
        proc.signal(18)
        go.set()
        proc.result(15)  # its late ack is harmless; what matters is that the message was not lost
    return found


cell(
    "topic",
    "holder-sigkill",
    "a message received by a SIGKILLed subscriber is delivered again (redelivered=True) "
    "to the group's next receive within its lease (+0.5 s): at least once",
)(lambda ctx: topic_holder(ctx, stop=False))
cell(
    "topic",
    "holder-sigstop",
    "a message of a subscriber SIGSTOPped past its lease is delivered again to another "
    "subscriber; the late ack raises nothing",
)(lambda ctx: topic_holder(ctx, stop=True))


@cell(
    "topic",
    "pool-exhaustion",
    "12 blocked receives (different groups) on a pool of 6: publish() on the same pool succeeds; "
    "receivers get the message or are refused with an error naming the pool (not an outage)",
)
def topic_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=6)
    subs = [topic(ctx, client=shared).subscribe(f"g{i}", "c") for i in range(12)]
    for sub in subs:
        sub.receive(timeout=0)
    found, outcomes = pool_exhaustion(
        ctx,
        [lambda s=s: [m.data for m in s.receive(timeout=8.0)] for s in subs],
        lambda: topic(ctx, client=shared).publish("m"),
    )
    if not any(o == ("ok", ["m"]) for o in outcomes):
        found.append(f"no receiver got the message: {outcomes}")
    return found


@cell(
    "topic",
    "hostile-names",
    "topic, group and consumer names with every allowed character: publish, receive, "
    "ack; keys tagged by the name",
)
def topic_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    name = hostile("topic")
    sub = topic(ctx, name).subscribe(hostile("group"), hostile("consumer"))
    sub.receive(timeout=0)
    topic(ctx, name).publish(name)
    got = _receive_all(sub, 1)
    if [m.data for m in got] != [name] or sub.ack(*got) != 1:
        found.append(f"publish/receive/ack on hostile names: {got}")
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)
