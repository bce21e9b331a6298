"""Cells of the "redis-full" column: Redis reaches ``maxmemory`` under ``noeviction`` (the
policy docs/production.md asks for), and refuses every write that may take memory.

Redis refuses a Lua script at its first such write and runs the rest of a script whose first
write took none. What keeps or gives up what a party holds (a renewal, a release, a heartbeat,
an acknowledgement) must therefore still run, or a full Redis takes holds from their holders
(a refused renewal) or leaves them held by nobody for their TTL (a refused release); what takes
something new is refused whole, as CoordinationUnavailable, and leaves nothing behind. Before,
a lock's release and every renewal (lock, semaphore, read-write lock, leader, latch party,
barrier party, queue consumer) were refused, while a fresh lock's acquire went through.

The server is made full deterministically: junk is written first, then ``maxmemory`` is set
below what is used, so every write that may take memory is refused until it is lifted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.tasks import Cancel, cancel

from ...support import cancel_tasks as ct
from .cells_groups import gqueue
from .cells_holds import LOCK, REDLOCK, RWLOCK, SEMAPHORE, HoldKind
from .cells_latches import barrier, latch
from .cells_rest import queue
from .cells_signals import event, signal, topic
from .cells_tasks import _burst, _counted, _runs, _until, tasks_on
from .context import LEASE, Ctx, Party, describe
from .table import cell

NEMESIS = "redis-full"
#: The TTL of what a party holds across the full period, which lasts longer than it.
SHORT = 1.5
FULL_FOR = 2.5


@contextmanager
def full(ctx: Ctx, ports: list[int] | None = None) -> Iterator[None]:
    """Redis (each of ``ports``) full while the block runs: writes that take memory refused."""
    admins = [ctx.admin(port) for port in ports or [ctx.server.port]]
    before = [a.config_get("maxmemory-policy")["maxmemory-policy"] for a in admins]
    for admin in admins:
        with admin.pipeline(transaction=False) as pipe:
            for i in range(200):
                pipe.set(f"{ctx.prefix}:junk:{i}", b"x" * 10_000)
            pipe.execute()
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", max(1, admin.info("memory")["used_memory"] - 500_000))
    try:
        if not refused(admins[0]):
            raise AssertionError("the server did not refuse a write once full")
        yield
    finally:
        for admin, policy in zip(admins, before, strict=True):
            admin.config_set("maxmemory", 0)
            admin.config_set("maxmemory-policy", policy)
            admin.delete(*(f"{ctx.prefix}:junk:{i}" for i in range(200)))


def refused(admin: Any) -> bool:
    try:
        admin.set("full:probe", "x")
    except Exception as exc:  # redis-py's OutOfMemoryError
        return "OutOfMemory" in type(exc).__name__
    return False


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """('ok', value), ('outage', exc) or ('raw', exc): anything but an outage is a defect."""
    try:
        return "ok", call()
    except CoordinationUnavailable as exc:
        return "outage", exc
    except Exception as exc:
        return "raw", exc


def _must_run(found: list[str], what: str, call: Callable[[], Any]) -> Any:
    kind, value = _outcome(call)
    if kind != "ok":
        found.append(f"{what} while Redis was full raised {describe(value)}; it must run")
    return value if kind == "ok" else None


def _refused_or_ran(found: list[str], what: str, call: Callable[[], Any]) -> tuple[str, Any]:
    kind, value = _outcome(call)
    if kind == "raw":
        found.append(f"{what} while Redis was full raised {describe(value)} (not an outage)")
    return kind, value


# -- holds ------------------------------------------------------------------------------------


def hold_when_full(ctx: Ctx, spec: HoldKind) -> list[str]:
    found: list[str] = []
    spec.prepare(ctx)
    kept = spec.make(ctx, "kept", ttl=SHORT)
    given = spec.make(ctx, "given", ttl=30.0)
    if not (kept.acquire() and given.acquire()):
        return ["the holds were not granted on a server with room"]
    ports = [ctx.server.port, *(s.port for s in ctx.others)] if spec.quorum else None
    with full(ctx, ports):
        _must_run(found, "the release of a hold", given.release)
        ends = time.monotonic() + FULL_FOR  # longer than the kept hold's TTL: renewed, or lost
        while time.monotonic() < ends:
            if _must_run(found, "renewing a hold", kept.extend) is None and found:
                break
            time.sleep(SHORT / 3)
        new = spec.make(ctx, "new", wait=0.5)
        kind, granted = _refused_or_ran(found, "a new acquire", new.acquire)
        if kind == "ok" and granted:
            _must_run(found, "the release of a hold granted while full", new.release)
        _must_run(found, "the release of the renewed hold", kept.release)
    for name in ("kept", "given", "new"):  # nothing is left held by nobody
        after = spec.make(ctx, name, wait=0)
        if after.acquire():
            after.release()
        else:
            found.append(f"{name!r} was still held once Redis had room again")
    return found


for _spec in (LOCK, SEMAPHORE, RWLOCK, REDLOCK):
    cell(
        _spec.kind,
        NEMESIS,
        "a hold taken before is renewed past its TTL and released while Redis is full; a new "
        "acquire is refused as CoordinationUnavailable (or granted and released); once Redis has "
        "room, every name is free at once",
    )(lambda ctx, spec=_spec: hold_when_full(ctx, spec))


@cell(
    "election",
    NEMESIS,
    "the leader renews its term past its lease while Redis is full and nobody else is elected; "
    "its resignation runs, and a standby is elected once Redis has room",
)
def election_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    leader = LeaderElection("f", SHORT, 1.0, 0.2, client=client, prefix=ctx.prefix, identity="a")
    standby = LeaderElection("f", SHORT, 1.0, 0.2, client=client, prefix=ctx.prefix, identity="b")
    if not leader.campaign() or standby.campaign():
        return ["the first campaign did not make exactly one leader"]
    with full(ctx):
        ends = time.monotonic() + FULL_FOR
        while time.monotonic() < ends:
            if _must_run(found, "the leader's renewal", leader.campaign) is False:
                found.append("the leader lost its term while Redis was full")
                break
            if _refused_or_ran(found, "a standby's campaign", standby.campaign) == ("ok", True):
                found.append("a standby was elected while the leader renewed")
                break
            time.sleep(0.3)
        _must_run(found, "the leader's resignation", leader.resign)
    if not standby.campaign():
        found.append("the standby was not elected once Redis had room")
    return found


# -- queues and tasks -----------------------------------------------------------------------


@cell(
    "queue",
    NEMESIS,
    "a worker's heartbeat keeps the message it handles past its timeout while Redis is full "
    "(another worker's reaper leaves it), its acknowledgement runs, and a push is refused as "
    "CoordinationUnavailable; every message is handled once, the refused one never",
)
def queue_when_full(ctx: Ctx) -> list[str]:
    return _queue_when_full(ctx, queue(ctx), lambda q, body: q.push(body))


@cell(
    "group",
    NEMESIS,
    "as for a queue, with grouped messages: a grouped message a worker handles is kept by its "
    "heartbeat past its timeout and acknowledged while Redis is full, a grouped push is refused "
    "as CoordinationUnavailable, and the group's next message is handled afterwards",
)
def group_when_full(ctx: Ctx) -> list[str]:
    from django_redcoord.core.queues.groups import Group

    return _queue_when_full(
        ctx, gqueue(ctx), lambda q, body: q.push(body, group=Group("g1", concurrency=1))
    )


def _queue_when_full(ctx: Ctx, q: Any, push: Callable[[Any, Any], Any]) -> list[str]:
    """A worker holds a message across the full period, longer than its timeout, while
    another worker reaps: the first one's heartbeat must keep it, or the message is handled
    twice."""
    from django_redcoord.core.queues import Worker

    found: list[str] = []
    go = threading.Event()
    handled: list[tuple[str, Any]] = []

    def slow(message: Any) -> None:
        handled.append(("slow", message.body))
        go.wait(30)

    def quick(message: Any) -> None:
        handled.append(("quick", message.body))

    workers = [
        Worker([q], handler, heartbeat=0.2, timeout=LEASE, prefetch=1) for handler in (slow, quick)
    ]
    push(q, "held")
    first = Party(workers[0].run, "worker")
    try:
        if not _until(lambda: handled, 5):
            return ["the first worker did not take the message"]
        second = Party(workers[1].run, "worker")
        try:
            with full(ctx):
                time.sleep(FULL_FOR)  # past the first worker's timeout: kept by its heartbeat
                kind, _ = _refused_or_ran(found, "a push", lambda: push(q, "refused"))
                if kind == "ok":
                    found.append("a push succeeded while Redis was full")
                go.set()  # the job ends while Redis is still full: its acknowledgement runs
                time.sleep(0.5)
            push(q, "after")
            _until(lambda: len(handled) >= 2, 5)
            time.sleep(0.5)
        finally:
            workers[1].stop()
            second.join(5)
    finally:
        go.set()
        workers[0].stop()
        first.join(5)
    if sorted(str(body) for _, body in handled) != ["after", "held"]:
        found.append(f"the workers handled {handled}: want 'held' once, then 'after'")
    depths = q.depths()
    if (depths.ready, depths.processing) != (0, 0):
        found.append(f"messages were left in the queue: {depths}")
    return found


@cell(
    "task",
    NEMESIS,
    "an enqueue while Redis is full raises CoordinationUnavailable and leaves nothing (no "
    "record, no message); a cancel, which only removes, runs (or is refused as "
    "CoordinationUnavailable and runs once Redis has room); the cancelled task never runs and "
    "the others run once",
)
def task_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        waiting = ct.counted.enqueue("waiting")
        with full(ctx):
            kind, _ = _refused_or_ran(found, "an enqueue", lambda: ct.counted.enqueue("refused"))
            if kind == "ok":
                found.append("an enqueue succeeded while Redis was full")
            kind, answer = _refused_or_ran(found, "a cancel", lambda: cancel(waiting))
        if kind == "ok" and answer != Cancel.REMOVED:
            found.append(f"the cancel while Redis was full answered {answer}, not REMOVED")
        if kind == "outage" and cancel(waiting) != Cancel.REMOVED:
            found.append("the cancel once Redis had room did not remove the waiting task")
        ct.counted.enqueue("after")
        found += filter(None, [_burst(backend)])
        found += _counted(client, ["waiting", "after"], {"waiting"})
        if _runs(client, "refused"):
            found.append("the enqueue refused while Redis was full ran")
        if backend.queue("default").depths().ready:
            found.append("messages were left in the queue")
    return found


@cell(
    "workflow",
    NEMESIS,
    "a workflow enqueued while Redis is full raises CoordinationUnavailable and none of its "
    "steps ever runs; enqueued once Redis has room, it runs to its end",
)
def workflow_when_full(ctx: Ctx) -> list[str]:
    from django_redcoord.tasks import chain, step

    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        with full(ctx):
            kind, _ = _refused_or_ran(
                found,
                "a workflow's enqueue",
                lambda: chain(step(ct.counted, "refused"), step(ct.counted, "refused")).enqueue(),
            )
            if kind == "ok":
                found.append("a workflow's enqueue succeeded while Redis was full")
        found += filter(None, [_burst(backend)])
        if _runs(client, "refused"):
            found.append("a step of the workflow refused while Redis was full ran")
    return found


# -- latches, barriers, signals ---------------------------------------------------------------


@cell(
    "latch",
    NEMESIS,
    "a party that joined before keeps its lease past its TTL and counts down while Redis is "
    "full; the waiter passes when the count reaches zero",
)
def latch_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    made = latch(ctx, "f", 1, ttl=SHORT)
    party = made.party(ttl=SHORT, auto_renew=True)
    party.join()
    waiter = Party(lambda: latch(ctx, "f", 1, ttl=SHORT).wait(FULL_FOR + 5))
    with full(ctx):
        time.sleep(FULL_FOR)  # the party's lease is renewed by its watchdog, or lost
        _must_run(found, "the party's count-down", party.count_down)
    kind, value = waiter.outcome(10)
    if (kind, value) != ("ok", True):
        found.append(f"the waiter ended {kind}: {describe(value) if kind == 'error' else value}")
    return found


@cell(
    "barrier",
    NEMESIS,
    "two parties waiting keep their arrivals past their lease while Redis is full; a third "
    "arriving then either trips the barrier or is refused as CoordinationUnavailable (and one "
    "arriving once Redis has room trips it): all three pass, never some alone",
)
def barrier_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiting = [Party(lambda: barrier(ctx, "f", 3, ttl=SHORT).wait(FULL_FOR + 6)) for _ in range(2)]
    time.sleep(0.3)
    with full(ctx):
        time.sleep(FULL_FOR)
        kind, value = _refused_or_ran(
            found, "a third arrival", lambda: barrier(ctx, "f", 3, ttl=SHORT).wait(0.5)
        )
    if kind == "outage":
        last = barrier(ctx, "f", 3, ttl=SHORT)
        kind, value = _outcome(lambda: last.wait(5))
        if kind != "ok":
            shown = describe(value)
            found.append(f"the third party, arriving once Redis had room, raised {shown}")
    for i, party in enumerate(waiting):
        kind, value = party.outcome(10)
        if kind != "ok":
            shown = describe(value) if kind == "error" else value
            found.append(f"waiting party {i} ended {kind}: {shown}")
    return found


@cell(
    "event",
    NEMESIS,
    "set() while Redis is full raises CoordinationUnavailable and a waiter's wait ends False "
    "at its timeout; once Redis has room, set() wakes a waiter",
)
def event_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: event(ctx, "f").wait(1.5))
    time.sleep(0.2)
    with full(ctx):
        kind, _ = _refused_or_ran(found, "set()", lambda: event(ctx, "f").set())
        if kind == "ok":
            found.append("set() succeeded while Redis was full")
        kind, value = waiter.outcome(5)
        if (kind, value) != ("ok", False):
            found.append(f"the waiter ended {kind}: {value!r}; it should time out (False)")
    later = Party(lambda: event(ctx, "f").wait(5))
    time.sleep(0.2)
    event(ctx, "f").set()
    if later.outcome(6) != ("ok", True):
        found.append("set() once Redis had room did not wake a waiter")
    return found


@cell(
    "signal",
    NEMESIS,
    "send() while Redis is full either reaches the waiting receiver or raises "
    "CoordinationUnavailable; once Redis has room, a send reaches a new receiver",
)
def signal_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    waiter = Party(lambda: signal(ctx, "f").wait(2.0))
    ctx.wait_blocked(1)
    with full(ctx):
        kind, _ = _refused_or_ran(found, "send()", lambda: signal(ctx, "f").send({"n": 1}))
        got = waiter.outcome(5)
        if kind == "ok" and got != ("ok", {"n": 1}):
            found.append(f"send() returned while Redis was full, and the receiver got {got}")
        if kind == "outage" and got[0] != "ok":
            found.append(f"after a refused send() the receiver ended {got}")
    later = Party(lambda: signal(ctx, "f").wait(5))
    ctx.wait_blocked(1)
    signal(ctx, "f").send({"n": 2})
    if later.outcome(6) != ("ok", {"n": 2}):
        found.append("a send once Redis had room did not reach the receiver")
    return found


@cell(
    "topic",
    NEMESIS,
    "while Redis is full, a subscriber acknowledges what it received and a publish is refused as "
    "CoordinationUnavailable; once Redis has room, what is published is received, and the "
    "acknowledged message never again",
)
def topic_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    sub = topic(ctx, "f").subscribe("g", "c1")
    sub.receive(timeout=0)
    topic(ctx, "f").publish({"n": 1})
    got = sub.receive(timeout=1.0)
    if [m.data for m in got] != [{"n": 1}]:
        return [f"the subscriber received {got!r} before the full period"]
    with full(ctx):
        _must_run(found, "the acknowledgement", lambda: sub.ack(*got))
        kind, _ = _refused_or_ran(found, "a publish", lambda: topic(ctx, "f").publish({"n": 0}))
        if kind == "ok":
            found.append("a publish succeeded while Redis was full")
    topic(ctx, "f").publish({"n": 2})
    after = [m.data for m in sub.receive(timeout=1.0)]
    if after != [{"n": 2}]:
        found.append(f"once Redis had room the subscriber received {after}, not the new message")
    return found


@cell(
    "ratelimiter",
    NEMESIS,
    "a decision while Redis is full raises CoordinationUnavailable (the views' on_unavailable "
    "applies) and counts nothing; a concurrency slot taken before is given back; once Redis "
    "has room, the counts are as before",
)
def ratelimiter_when_full(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    rate = RateLimiter("3/m", name="f", client=client, prefix=ctx.prefix)
    slots = RateLimiter("concurrency=1", name="fc", client=client, prefix=ctx.prefix)
    first = rate.hit("k").allowed
    slot = slots.hit("k")
    if not (first and slot.allowed):
        return ["the first decisions were not allowed"]
    with full(ctx):
        kind, _ = _refused_or_ran(found, "a decision", lambda: rate.hit("k"))
        if kind == "ok":
            found.append("a decision that counts succeeded while Redis was full")
        _must_run(found, "giving a concurrency slot back", lambda: slots.release(slot))
    got = [rate.hit("k").allowed for _ in range(3)]
    if got != [True, True, False]:
        found.append(f"after the full period the next hits gave {got}: the refused one counted")
    if not slots.hit("k").allowed:
        found.append("the concurrency slot given back while Redis was full was still taken")
    return found
