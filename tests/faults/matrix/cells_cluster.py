"""The Cluster columns: a slot migrating while in use, a primary failing over.

Each primitive's adapter sets up live state on a real 3-primary Cluster (with a
party waiting where the primitive has waits), then the nemesis strikes the slot
that state lives in:

* slot migration: ``CLUSTER SETSLOT IMPORTING/MIGRATING``, half the slot's keys
  ``MIGRATE``d, and the primitive's next operation (a release, a count-down, a
  set...) runs against the half-moved slot — it succeeds, or it is refused with our
  CoordinationUnavailable saying nothing was sent (then it is retried once the
  slot has moved); never a raw redis error, never an outage claim;
* failover: ``CLUSTER FAILOVER`` on the primary's replica (coordinated: no write is
  lost); the parties blocked on the old primary ride it out.

Afterwards the adapter checks its guarantee: nothing held or counted was lost,
waiting parties got what they waited for, and tokens and terms kept growing.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import key_slot
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.leader import LeaderElection
from django_redcoord.core.queues import Queue
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.signals import Event, Signal, Topic
from django_redcoord.core.transport.clients import cluster_client
from django_redcoord.core.transport.commands import as_text

from ...support.redis_servers import ClusterTopology, SlotMigration, fail_over_slot
from .cells_holds import LOCK, RWLOCK, SEMAPHORE
from .context import Party, describe, outage_claim
from .table import cell


@dataclass
class ClusterCtx:
    topology: ClusterTopology
    prefix: str
    clients: list[Any] = field(default_factory=list)

    def client(self) -> Any:
        made = cluster_client(self.topology.config)
        self.clients.append(made)
        return made

    def slot(self) -> int:
        """The slot the cell's keys live in (the busiest one, indexes aside), read from each
        primary."""
        import redis

        slots: Counter[int] = Counter()
        for node in self.topology.primaries():
            admin = redis.Redis(port=node.port, socket_timeout=5)
            try:
                slots.update(
                    key_slot(as_text(k))
                    for k in admin.scan_iter(f"{self.prefix}:*", count=1000)
                    if ":index:" not in as_text(k)
                )
            finally:
                admin.close()
        assert slots, "the adapter's setup wrote no key"
        return slots.most_common(1)[0][0]

    def close(self) -> None:
        for made in self.clients:
            made.close()


def _op(call: Any, found: list[str], what: str) -> bool:
    """Run ``call()`` on a half-moved slot: True if done, False if refused with nothing sent."""
    try:
        call()
        return True
    except CoordinationUnavailable as exc:
        if exc.sent:
            found.append(f"{what} during the migration read as an outage: {describe(exc)}")
        return False
    except Exception as exc:
        found.append(f"{what} during the migration: {outage_claim(exc) or describe(exc)}")
        return True


def _run(ctx: ClusterCtx, adapter: Any, nemesis: str) -> list[str]:
    found: list[str] = []
    state = adapter.setup(ctx)
    slot = ctx.slot()
    if nemesis == "cluster-slot-migration":
        migration = SlotMigration(ctx.topology, slot).begin()
        keys = migration.keys()
        migration.move_keys(keys[: len(keys) // 2])
        done = _op(lambda: adapter.act(state), found, adapter.what)
        migration.finish()
        if not done:
            try:
                adapter.act(state)
            except Exception as exc:
                found.append(f"{adapter.what} after the migration finished: {describe(exc)}")
    else:
        fail_over_slot(ctx.topology, slot)
        try:
            adapter.act(state)
        except Exception as exc:
            found.append(f"{adapter.what} after the failover: {describe(exc)}")
    return found + adapter.verify(state)


def _outcome(party: Party, want: Any, what: str, timeout: float = 10.0) -> list[str]:
    status, value = party.outcome(timeout)
    if status == "ok" and value == want:
        return []
    return [
        f"{what}: want {want!r}, got {status} "
        f"{describe(value) if isinstance(value, BaseException) else value!r}"
    ]


class Holds:
    what = "the holder's release"

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def setup(self, ctx: ClusterCtx) -> Any:
        a = self.spec.build(ctx.client(), ctx.prefix, "m", 30.0, 0)
        assert a.acquire()
        b = self.spec.build(ctx.client(), ctx.prefix, "m", 30.0, 20.0)
        return a, b, Party(b.acquire)

    def act(self, state: Any) -> None:
        state[0].release()

    def verify(self, state: Any) -> list[str]:
        a, b, waiter = state
        found = _outcome(waiter, True, "the waiter")
        if not found and not b.token > a._fence:
            found.append(f"token {b.token} is not above {a._fence}")
        return found


class Latches:
    what = "the last count-down"

    def setup(self, ctx: ClusterCtx) -> Any:
        make = lambda: CountDownLatch("m", 2, client=ctx.client(), prefix=ctx.prefix)  # noqa: E731
        make().count_down()
        return make, Party(lambda: make().wait(20.0))

    def act(self, state: Any) -> None:
        time.sleep(0.2)
        state[0]().count_down()

    def verify(self, state: Any) -> list[str]:
        return _outcome(state[1], True, "the latch's waiter")


class Barriers:
    what = "the last arrival"

    def setup(self, ctx: ClusterCtx) -> Any:
        make = lambda: Barrier("m", 3, client=ctx.client(), prefix=ctx.prefix)  # noqa: E731
        parties = [Party(lambda: make().wait(20.0)) for _ in range(2)]
        time.sleep(0.5)  # both arrived
        return make, parties, []

    def act(self, state: Any) -> None:
        time.sleep(0.2)
        state[2].append(Party(lambda: state[0]().wait(20.0)))

    def verify(self, state: Any) -> list[str]:
        outcomes = [p.outcome(10.0) for p in state[1] + state[2]]
        indexes = sorted(v for s, v in outcomes if s == "ok")
        return [] if indexes == [0, 1, 2] else [f"the barrier's parties: {outcomes}"]


class Events:
    what = "set()"

    def setup(self, ctx: ClusterCtx) -> Any:
        make = lambda: Event("m", client=ctx.client(), prefix=ctx.prefix)  # noqa: E731
        make().clear()
        return make, Party(lambda: make().wait(20.0))

    def act(self, state: Any) -> None:
        time.sleep(0.2)
        state[0]().set()

    def verify(self, state: Any) -> list[str]:
        return _outcome(state[1], True, "the event's waiter")


class Signals:
    what = "send()"

    def setup(self, ctx: ClusterCtx) -> Any:
        make = lambda: Signal("m", client=ctx.client(), prefix=ctx.prefix)  # noqa: E731
        waiter = Party(lambda: make().wait(20.0))
        time.sleep(0.3)
        return make, waiter

    def act(self, state: Any) -> None:
        deadline = time.monotonic() + 5.0
        while not state[0]().send("x") and time.monotonic() < deadline:
            time.sleep(0.05)

    def verify(self, state: Any) -> list[str]:
        return _outcome(state[1], "x", "the signal's waiter")


class Topics:
    what = "publish()"

    def setup(self, ctx: ClusterCtx) -> Any:
        topic = Topic("m", client=ctx.client(), prefix=ctx.prefix)
        sub = topic.subscribe("g", "c")
        sub.receive(timeout=0)
        ids = [topic.publish(i) for i in range(3)]
        return topic, sub, ids

    def act(self, state: Any) -> None:
        state[2].append(state[0].publish("x"))

    def verify(self, state: Any) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + 10.0
        while len(got) < len(state[2]) and time.monotonic() < deadline:
            got += [m.id for m in state[1].receive(count=10, timeout=1.0)]
        return (
            []
            if sorted(got) == sorted(state[2])
            else [f"the topic delivered {got}, published {state[2]}"]
        )


class Limiters:
    what = "a hit"

    def setup(self, ctx: ClusterCtx) -> Any:
        lim = RateLimiter("3/m", name="m", client=ctx.client(), prefix=ctx.prefix, native=False)
        return lim, [lim.hit("k").allowed for _ in range(3)]

    def act(self, state: Any) -> None:
        state[1].append(state[0].hit("k").allowed)

    def verify(self, state: Any) -> list[str]:
        got = state[1] + [state[0].hit("k").allowed]
        return (
            []
            if got == [True, True, True, False, False]
            else [f"the limiter's decisions: {got} (budget lost?)"]
        )


class Queues:
    what = "a push"

    def setup(self, ctx: ClusterCtx) -> Any:
        queue = Queue("m", client=ctx.client(), prefix=ctx.prefix)
        return queue, [queue.push(i) for i in range(5)]

    def act(self, state: Any) -> None:
        state[1].append(state[0].push("x"))

    def verify(self, state: Any) -> list[str]:
        consumer = state[0].consumer("c", timeout=5.0)
        got: list[str] = []
        deadline = time.monotonic() + 10.0
        while len(got) < len(state[1]) and time.monotonic() < deadline:
            messages, _ = consumer.claim(10)
            for m in messages:
                consumer.ack(m)
            got += [m.id for m in messages]
        consumer.flush()
        return (
            []
            if sorted(got) == sorted(state[1])
            else [f"the queue delivered {sorted(got)}, pushed {sorted(state[1])}"]
        )


class Elections:
    what = "the leader's renewal"

    def setup(self, ctx: ClusterCtx) -> Any:
        # A lease of a minute: on a loaded machine a slot migration or failover with its
        # checks took more than 10 s between the campaign and the renewal, and a record that
        # expired on its lease is then rightly a new term, not a lost record.
        make = lambda i: LeaderElection(  # noqa: E731
            "m", 60.0, 50.0, 1.0, client=ctx.client(), prefix=ctx.prefix, identity=i
        )
        a, b = make("a"), make("b")
        assert a.campaign()
        b.campaign()
        return a, b, a.term, []

    def act(self, state: Any) -> None:
        state[3].append(state[0].campaign())

    def verify(self, state: Any) -> list[str]:
        a, b, term, renewed = state
        found = (
            []
            if renewed == [True] and a.term == term
            else [
                f"the leader's renewal gave {renewed}, term {a.term} (it led term {term}): a new "
                "term after a coordinated failover means the record was lost"
            ]
        )
        if b.campaign():
            found.append("the standby was elected while the leader held its term")
        return found


ADAPTERS = {
    "lock": Holds(LOCK),
    "semaphore": Holds(SEMAPHORE),
    "rwlock": Holds(RWLOCK),
    "latch": Latches(),
    "barrier": Barriers(),
    "event": Events(),
    "signal": Signals(),
    "topic": Topics(),
    "ratelimiter": Limiters(),
    "queue": Queues(),
    "election": Elections(),
}

for _primitive, _adapter in ADAPTERS.items():
    cell(
        _primitive,
        "cluster-slot-migration",
        f"{_adapter.what} on the half-migrated slot succeeds or is refused with nothing sent and "
        "succeeds once the slot moved (never a raw error or an outage claim); nothing held, "
        "counted or queued is lost; waiting parties get what they wait for",
    )(lambda ctx, a=_adapter: _run(ctx, a, "cluster-slot-migration"))
    cell(
        _primitive,
        "cluster-failover",
        f"after a coordinated failover of the slot's primary, {_adapter.what} works; "
        "nothing held, counted or queued is lost; parties blocked on the old primary ride it out",
    )(lambda ctx, a=_adapter: _run(ctx, a, "cluster-failover"))
