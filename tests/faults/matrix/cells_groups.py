"""Cells of queue groups (``queue.push(body, group=...)``, core/queues/groups.py).

What they guarantee, on top of the queue's own cells: within a group, messages are delivered
in the order they were pushed; a group limited to one (``Group(name, concurrency=1)``) never
has two of its messages claimed and unacknowledged at once — a claimed message counts against
its group until it is acknowledged or the reaper takes it back from a dead consumer, and then
comes back first; the groups' counts (hash ``gstate``: in line, running) come back to zero
once everything settled, and never go negative. Redis restarted with its data keeps the counts
with the messages; restarted empty, it forgets both (documented) and a stale acknowledgement
frees nothing.

Bodies are ``[group, index]``: a cell checks each group's indexes arrive as pushed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable, RedcoordError
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.queues.consumer import Consumer
from django_redcoord.core.queues.groups import Group
from django_redcoord.core.queues.messages import Message
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.commands import as_text

from ..names import HOSTILE_QUEUE, hostile
from .context import (
    LEASE,
    PAUSE,
    SOCKET_TIMEOUT,
    Ctx,
    Party,
    describe,
    keys_tagged_by,
    outage_claim,
)
from .table import cell

#: The limits every cell's groups run under (a negative control passes ``Group`` without them).
ONE = {"concurrency": 1}


def gqueue(ctx: Ctx, name: str = "g", client: Any = None) -> Queue:
    return Queue(name, client=client or ctx.client(), prefix=ctx.prefix)


def push(
    q: Queue, group: str, indexes: range | list[int], limits: dict[str, Any] | None = None
) -> list[str]:
    """Push ``[group, i]`` for each index to ``group`` (one round trip); return the ids."""
    return q.push_many(
        [[group, i] for i in indexes], group=Group(group, **(ONE if limits is None else limits))
    )


# -- the shared checks -----------------------------------------------------------------------


def counts(q: Queue) -> dict[str, tuple[int, int]]:
    """The groups' counts, {group: (in_line, running)} (the rate's tat left out)."""
    out = {}
    for g, v in q.client.hgetall(q.keys.gstate).items():
        in_line, running, _ = as_text(v).split(" ")
        out[as_text(g)] = (int(in_line), int(running))
    return out


def never_negative(q: Queue, when: str) -> list[str]:
    return [
        f"group {g!r}'s counts went negative {when}: in line {a}, running {r}"
        for g, (a, r) in counts(q).items()
        if a < 0 or r < 0
    ]


def settled(q: Queue) -> list[str]:
    """Violations unless every group's counts came back to zero (its field gone, or "0 0")."""
    found = never_negative(q, "at the end")
    found += [
        f"group {g!r}'s counts did not come back to zero once all settled: in line {a}, running {r}"
        for g, (a, r) in counts(q).items()
        if (a, r) != (0, 0) and a >= 0 and r >= 0
    ]
    d = q.depths()
    if d.ready or d.processing or d.delayed:
        found.append(f"messages left over once all settled: {d}")
    return found


def in_order(order: dict[str, list[Any]], want: dict[str, list[Any]]) -> list[str]:
    """Violations unless each group's indexes arrived as ``want`` (push order, each once)."""
    return [
        f"group {g!r} delivered {order.get(g, [])} (want {want.get(g, [])}: each once, in the "
        "order pushed)"
        for g in sorted(set(order) | set(want))
        if order.get(g, []) != want.get(g, [])
    ]


def by_group(messages: list[Message]) -> dict[str, list[Any]]:
    order: dict[str, list[Any]] = defaultdict(list)
    for m in messages:
        order[m.group].append(m.body[1] if isinstance(m.body, list) else m.body)
    return dict(order)


def _take(
    consumer: Consumer, held: dict[str, str], found: list[str], keep: tuple = ()
) -> list[Message]:
    """One claim (the previous batch's acknowledgements go with it), every message but those
    whose body is in ``keep`` acknowledged. Violations: two of one group in one claim, a message
    of a group whose earlier message another party still holds (``held``: group -> what,
    counted until reaped), a message whose ``group`` is not the one it was pushed to."""
    messages, _ = consumer.claim(100)
    for g, n in Counter(m.group for m in messages).items():
        if n > 1:
            found.append(f"{n} messages of group {g!r} claimed at once (its concurrency is 1)")
    for m in messages:
        if m.group in held:
            found.append(
                f"{m.body} was delivered while {held[m.group]} of its group was still claimed by "
                "another consumer (before the reaper took it back)"
            )
        if not isinstance(m.body, list) or m.body[0] != m.group:
            found.append(f"message {m.body!r} came back with group {m.group!r}")
        if m.body not in keep:
            consumer.ack(m)
    return messages


def drain(
    q: Queue,
    consumer: Consumer,
    want: int,
    found: list[str],
    *,
    held: dict[str, str] | None = None,
    seconds: float = 5.0,
) -> list[Message]:
    """Reap, claim and acknowledge until ``want`` messages came or ``seconds`` passed (see
    :func:`_take`; ``held`` is forgotten once a reap took a dead consumer's messages back)."""
    held = dict(held or {})
    got: list[Message] = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        if q.reap()[0]:
            held.clear()
        messages = _take(consumer, held, found)
        got += messages
        if not messages:
            time.sleep(0.02)
    consumer.flush()
    return got


class Runs:
    """A worker's handler that records, per group, the order its messages ran in and any two
    of one group running at once (``hold`` seconds each, to give an overlap the time to show)."""

    def __init__(self, hold: float = 0.02) -> None:
        self.hold = hold
        self.lock = threading.Lock()
        self.order: dict[str, list[Any]] = defaultdict(list)
        self.running: Counter[str] = Counter()
        self.overlaps: list[str] = []

    def __call__(self, m: Message) -> None:
        g = m.group
        with self.lock:
            self.running[g] += 1
            if self.running[g] > 1:
                self.overlaps.append(
                    f"{m.body} of group {g!r} started while {self.running[g] - 1} other(s) of "
                    "its group ran (its concurrency is 1)"
                )
            self.order[g].append(m.body[1] if isinstance(m.body, list) else m.body)
        time.sleep(self.hold)
        with self.lock:
            self.running[g] -= 1

    def wait(self, want: dict[str, list[Any]], seconds: float) -> bool:
        """Until every index of ``want`` ran (and ended), or ``seconds`` passed."""

        def ran() -> bool:
            with self.lock:
                return not any(self.running.values()) and all(
                    set(v) <= set(self.order[g]) for g, v in want.items()
                )

        deadline = time.monotonic() + seconds
        while not ran() and time.monotonic() < deadline:
            time.sleep(0.01)
        return ran()


def _worker(ctx: Ctx, runs: Runs, client: Any = None, **kwargs: Any) -> tuple[Worker, Party]:
    worker = Worker(
        [gqueue(ctx, "g", client or ctx.client())],
        runs,
        heartbeat=0.2,
        timeout=LEASE,
        **kwargs,
    )
    return worker, Party(worker.run, "worker")


# -- one server ------------------------------------------------------------------------------


@cell(
    "group",
    "restart-with-data",
    "the groups' counts come back as they were: a message claimed before the restart still "
    "counts, so its group's next is not delivered until the reaper took it back; then every "
    "unacknowledged message is delivered, each group's in push order, never two of a group "
    "limited to one at once; the counts end at zero",
    smoke=True,
)
def group_restart_with_data(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    q = gqueue(ctx)
    for g in "ABC":
        push(q, g, range(4), limits)
    first = q.consumer("c1", timeout=LEASE)
    taken, _ = first.claim(2)
    if [m.body for m in taken] != [["A", 0], ["B", 0]]:
        return [f"the first claim took {[m.body for m in taken]} (want A's and B's heads)"]
    first.ack(taken[1])
    first.flush()
    before = counts(q)
    ctx.restart(keep_data=True)
    q = gqueue(ctx)
    if (after := counts(q)) != before:
        found.append(f"the groups' counts were {before} before the restart, {after} after it")
    got = drain(q, q.consumer("c2", timeout=LEASE), 11, found, held={"A": "A 0"}, seconds=LEASE + 5)
    found += in_order(by_group(got), {"A": [0, 1, 2, 3], "B": [1, 2, 3], "C": [0, 1, 2, 3]})
    return found + settled(q)


@cell(
    "group",
    "restart-without-data",
    "what Redis held is lost with the counts (documented); pushing, claiming and acknowledging "
    "grouped messages go on without an error; a stale acknowledgement raises nothing and frees "
    "nothing (the group's new delivery still counts); counts never go negative and end at zero",
)
def group_data_loss(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    q = gqueue(ctx)
    push(q, "A", range(3), limits)
    push(q, "B", range(2), limits)
    stale = q.consumer("c1", timeout=LEASE)
    taken, _ = stale.claim(2)
    ctx.restart(keep_data=False)
    q = gqueue(ctx)
    try:
        push(q, "A", range(10, 13), limits)
        live = q.consumer("c2", timeout=LEASE)
        held = _take(live, {}, found, keep=(["A", 10],))  # A's head, kept claimed
        if [m.body for m in held] != [["A", 10]]:
            found.append(f"the first claim after the data loss took {[m.body for m in held]}")
        for m in taken:
            stale.ack(m)
        stale.flush()
        found += never_negative(q, "after a stale acknowledgement")
        if meanwhile := [m.body for m in live.claim(10)[0]]:
            found.append(
                f"with A 10 still claimed, {meanwhile} was delivered: the stale "
                "acknowledgement freed its group's slot"
            )
        for m in held:
            live.ack(m)
        push(q, "B", range(10, 12), limits)
        got = held + drain(q, live, 4, found)
        found += in_order(by_group(got), {"A": [10, 11, 12], "B": [10, 11]})
    except Exception as exc:
        found.append(f"grouped messages after the data loss raised {describe(exc)}")
        return found
    return found + settled(q)


@cell(
    "group",
    "connection-kill",
    "a worker idle on its wake list when its connections are killed keeps working: grouped "
    "messages pushed afterwards are all handled within 2 s, each group's in push order, never "
    "two of one group at once; the worker does not stop",
)
def group_connection_kill(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    runs = Runs()
    worker, running = _worker(ctx, runs, concurrency=4, prefetch=1)
    try:
        ctx.wait_blocked(1)
        ctx.kill_connections()
        time.sleep(0.1)
        q = gqueue(ctx)
        for g in "AB":
            push(q, g, range(4), limits)
        if not runs.wait({"A": [0, 1, 2, 3], "B": [0, 1, 2, 3]}, 2.0):
            found.append("grouped messages pushed after the kill not all handled within 2 s")
        found += in_order(dict(runs.order), {"A": [0, 1, 2, 3], "B": [0, 1, 2, 3]}) + runs.overlaps
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(5)
    return found + settled(gqueue(ctx))


@cell(
    "group",
    "paused-server",
    "a grouped push during the pause raises CoordinationUnavailable; an idle worker rides out "
    "the pause and handles what is pushed after it, each group's in push order (the push of "
    "unknown outcome at most once, in its place)",
)
def group_paused(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    runs = Runs()
    worker, running = _worker(ctx, runs, concurrency=4, prefetch=1)
    try:
        ctx.wait_blocked(1)
        resume = ctx.pause(PAUSE)
        try:
            push(gqueue(ctx), "A", [-1], limits)
            found.append("a grouped push on a paused server succeeded")
        except CoordinationUnavailable:
            pass
        except Exception as exc:
            found.append(f"a grouped push on a paused server raised {describe(exc)}")
        resume.join()
        q = gqueue(ctx)
        for g in "AB":
            push(q, g, range(4), limits)
        if not runs.wait({"A": [0, 1, 2, 3], "B": [0, 1, 2, 3]}, 4.0):
            found.append("grouped messages pushed after the pause not all handled within 4 s")
        order = dict(runs.order)
        if order.get("A", [])[:1] == [-1]:  # sent before the pause ended: it may have landed
            order["A"] = order["A"][1:]
        found += in_order(order, {"A": [0, 1, 2, 3], "B": [0, 1, 2, 3]}) + runs.overlaps
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(5)
    return found + settled(gqueue(ctx))


def _group_consumer_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    q = Queue("k", client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT), prefix=prefix)
    consumer = q.consumer("struck", timeout=LEASE)
    taken, _ = consumer.claim(1)
    report.put([m.body for m in taken])
    go.wait(60)
    try:
        for m in taken:
            consumer.ack(m)
        consumer.flush()
        return "acked"
    except RedcoordError as exc:
        return describe(exc)


def group_holder(ctx: Ctx, *, stop: bool, limits: dict[str, Any] | None = None) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    q = gqueue(ctx, "k")
    push(q, "A", range(4), limits)
    push(q, "B", range(3), limits)
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_group_consumer_process, ctx.url, ctx.prefix, report, go)
    if report.get(timeout=15) != [["A", 0]]:
        return ["the consumer process did not claim A's head"]
    proc.signal(19 if stop else 9)
    live = q.consumer("live", timeout=LEASE)
    held = {"A": "A 0"}
    got: list[Message] = []
    reaped_at = None
    resumed = False
    deadline = time.monotonic() + LEASE + 4
    while len(got) < 7 and time.monotonic() < deadline:
        if held and q.reap()[0]:
            held.clear()
            reaped_at = len(got)
        # (SIGSTOP: the redelivery is kept claimed while the resumed consumer acknowledges)
        messages = _take(live, held, found, keep=(["A", 0],) if stop else ())
        got += messages
        if redelivered := [m for m in messages if stop and m.body == ["A", 0]]:
            # the resumed consumer's late acknowledgement, of its own delivery the reaper took
            # back, must free nothing: the redelivery still holds A's one place
            proc.signal(18)
            go.set()
            resumed = True
            if (late := proc.result(15)) != "acked":
                found.append(f"the resumed consumer's late acknowledgement gave {late}")
            found += never_negative(q, "after the late acknowledgement")
            got += _take(live, {"A": "the redelivered A 0"}, found)
            live.ack(redelivered[0])
        if not messages:
            time.sleep(0.02)
    live.flush()
    if stop and not resumed:
        found.append("the redelivery of A 0 never came: the struck consumer was not resumed")
    if reaped_at is None:
        found.append("the reaper never took the struck consumer's message back")
    elif sorted(m.body[1] for m in got[:reaped_at] if m.group == "B") != [0, 1, 2]:
        found.append(
            f"group B was held up by A's struck message: before the reap it delivered "
            f"{[m.body for m in got[:reaped_at]]}"
        )
    found += in_order(by_group(got), {"A": [0, 1, 2, 3], "B": [0, 1, 2]})
    return found + settled(q)


cell(
    "group",
    "holder-sigkill",
    "the message a SIGKILLed consumer claimed keeps counting against its group (limited to one): "
    "the group's next is not delivered until the reaper takes it back after its timeout, other "
    "groups flow meanwhile; then it comes back first and the rest follow in order; counts end "
    "at zero",
)(lambda ctx: group_holder(ctx, stop=False))
cell(
    "group",
    "holder-sigstop",
    "as for SIGKILL, and the consumer resumed past its timeout: its late acknowledgement raises "
    "nothing and frees nothing (the redelivery still holds the group's one place); counts end "
    "at zero",
)(lambda ctx: group_holder(ctx, stop=True))


@cell(
    "group",
    "pool-exhaustion",
    "a worker with 8 threads on a pool of 6, three groups limited to one: pushes from the same "
    "pool succeed, every message is handled, each group's in push order, never two of one "
    "group at once; no error reads as an outage",
)
def group_pool(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    shared = ctx.client(max_connections=6)
    runs = Runs(hold=0.01)
    worker, running = _worker(ctx, runs, shared, concurrency=8, prefetch=1)
    want: dict[str, list[int]] = defaultdict(list)
    try:
        time.sleep(0.3)
        q = gqueue(ctx, "g", shared)
        for i in range(10):
            for g in "ABC":
                try:
                    push(q, g, [i], limits)
                    want[g].append(i)
                except Exception as exc:
                    found.append(f"a push: {outage_claim(exc) or describe(exc)}")
        if not runs.wait(want, 8.0):
            found.append(f"pushed messages not all handled within 8 s: {dict(runs.order)}")
        found += in_order(dict(runs.order), dict(want)) + runs.overlaps
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(8)
    return found + settled(gqueue(ctx))


#: Group names: every character a group may hold (anything but a newline, 1 to 1,000), names
#: that share a prefix (a group's waiting line is a lexical range of ``<group>\n``) and the
#: hash-tag braces.
GROUP_NAMES = [
    hostile("group"),
    HOSTILE_QUEUE,
    "g",
    "g\t",
    "g\x0b",
    "g\x00x",
    "{tenant:42}",
    "ünï ✓ 中",
    "\t\r",
    " ",
    "|||",
    "a\\n",
    "\x7f",
    "ü" * 1000,
]


@cell(
    "group",
    "hostile-names",
    "a hostile queue name and groups with every allowed character (names sharing a prefix "
    "included): push, claim, ack; each message comes back with its group, each group's in "
    "push order, one at a time; counts end at zero; keys tagged by the queue's name",
)
def group_names(ctx: Ctx, limits: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    name = hostile("groups")
    q = gqueue(ctx, name)
    names = [n.replace("\n", "") for n in GROUP_NAMES]
    for k, g in enumerate(names):
        for i in range(2):
            q.push(
                [g, i],
                id=hostile(f"message-{k}-{i}"),
                group=Group(g, **(ONE if limits is None else limits)),
            )
    got = drain(q, q.consumer(hostile("consumer"), timeout=LEASE), 2 * len(names), found)
    found += in_order(by_group(got), {g: [0, 1] for g in names})
    ids = sorted(m.id for m in got)
    if ids != sorted(hostile(f"message-{k}-{i}") for k in range(len(names)) for i in range(2)):
        found.append(f"the messages came back with ids {ids[:4]}...")
    return found + settled(q) + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- the Cluster columns -----------------------------------------------------------------------


class GroupedQueues:
    """The Cluster adapter (see cells_cluster._run): two groups limited to one, A's head claimed
    and held across the nemesis; the act is one more grouped push to A. Then B drains while A
    waits for its held message, which is acknowledged, and A drains in order."""

    what = "a grouped push"

    def __init__(self, limits: dict[str, Any] | None = None) -> None:
        self.limits = limits

    def setup(self, ctx: Any) -> Any:
        q = Queue("m", client=ctx.client(), prefix=ctx.prefix)
        ids = push(q, "A", range(3), self.limits) + push(q, "B", range(3), self.limits)
        holder = q.consumer("holder", timeout=60.0)
        taken, _ = holder.claim(1)
        return {"queue": q, "holder": holder, "taken": taken, "ids": ids, "a": 3}

    def act(self, state: Any) -> None:
        # one push (one script call), as the queue's cell: push_many's pipeline meets a
        # half-moved slot with redis-py's raw "TTL exhausted" (a bug of its own, not of groups)
        a = state["a"]
        group = Group("A", **(ONE if self.limits is None else self.limits))
        state["ids"].append(state["queue"].push(["A", a], group=group))
        state["a"] += 1

    def verify(self, state: Any) -> list[str]:
        q, holder, taken = state["queue"], state["holder"], state["taken"]
        found: list[str] = []
        if [m.body for m in taken] != [["A", 0]]:
            return [f"the holder claimed {[m.body for m in taken]} (want A's head)"]
        if (now := counts(q)) != {"A": (0, 1), "B": (1, 0)}:
            found.append(f"the groups' counts after the nemesis: {now} (want A 0 1, B 1 0)")
        live = q.consumer("live", timeout=60.0)
        got: list[Message] = []
        deadline = time.monotonic() + 10.0
        while len(got) < 3 and time.monotonic() < deadline:
            messages = _take(live, {"A": "A 0"}, found)
            got += messages
            if not messages:
                time.sleep(0.02)
        live.flush()
        holder.ack(taken[0])
        holder.flush()
        got += drain(q, live, 3 + state["a"] - 1 - len(got), found, seconds=10.0)
        found += in_order(by_group(taken + got), {"A": list(range(state["a"])), "B": [0, 1, 2]})
        if lost := set(state["ids"]) - {m.id for m in taken + got}:
            found.append(f"acknowledged grouped pushes lost: {sorted(lost)}")
        return found + settled(q)


def _register_cluster_cells() -> None:
    from .cells_cluster import _run

    adapter = GroupedQueues()
    cell(
        "group",
        "cluster-slot-migration",
        f"{adapter.what} on the half-migrated slot succeeds or is refused with nothing sent and "
        "succeeds once the slot moved; the counts are kept (a message claimed before still "
        "holds its group's one place); no acknowledged grouped push is lost; each group's in "
        "push order; counts end at zero",
    )(lambda ctx: _run(ctx, adapter, "cluster-slot-migration"))
    cell(
        "group",
        "cluster-failover",
        f"after a coordinated failover of the queue's primary, {adapter.what} works; the counts "
        "are kept; no acknowledged grouped push is lost; each group's in push order; counts end "
        "at zero",
    )(lambda ctx: _run(ctx, adapter, "cluster-failover"))


_register_cluster_cells()
