"""Cells of the rate limiter, the queue and the leader election.

What they guarantee: a rate limiter decides from what Redis keeps (restarted empty,
it starts fresh, without an error) and never blocks; a queue loses no acknowledged
push while Redis keeps its data and delivers a crashed consumer's messages again
(at least once); an election's terms only grow — also when Redis loses its data —
and never two candidates lead in one term.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django_redcoord.core.exceptions import CoordinationUnavailable, RedcoordError
from django_redcoord.core.leader import LeaderElection
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.transport.clients import client_from_url

from ..names import hostile
from .context import (
    LEASE,
    PAUSE,
    SOCKET_TIMEOUT,
    Ctx,
    Party,
    describe,
    keys_tagged_by,
    outage_claim,
    pool_exhaustion,
)
from .table import cell


def limiter(ctx: Ctx, policy: str = "3/m", name: str = "r", client: Any = None) -> RateLimiter:
    return RateLimiter(
        policy, name=name, client=client or ctx.client(), prefix=ctx.prefix, native=False
    )


def _allowed(ctx: Ctx, n: int, key: str = "k", **kwargs: Any) -> list[bool]:
    lim = limiter(ctx, **kwargs)
    return [lim.hit(key).allowed for _ in range(n)]


# -- rate limiter ------------------------------------------------------------------------------


@cell(
    "ratelimiter",
    "restart-with-data",
    "the budget used is kept: a key that ran out is still refused",
)
def ratelimiter_restart_with_data(ctx: Ctx) -> list[str]:
    if _allowed(ctx, 3) != [True] * 3:
        return ["the first three hits were not all allowed"]
    ctx.restart(keep_data=True)
    return (
        []
        if _allowed(ctx, 1) == [False]
        else ["a key that ran out was allowed again after a restart with data"]
    )


@cell(
    "ratelimiter",
    "restart-without-data",
    "starts fresh (the budget is forgotten, documented), without an error",
    smoke=True,
)
def ratelimiter_data_loss(ctx: Ctx) -> list[str]:
    _allowed(ctx, 4)
    ctx.restart(keep_data=False)
    try:
        got = _allowed(ctx, 4)
    except Exception as exc:
        return [f"a hit after the data loss raised {describe(exc)}"]
    return (
        []
        if got == [True, True, True, False]
        else [f"after the data loss the hits gave {got} (want a fresh budget)"]
    )


@cell(
    "ratelimiter",
    "connection-kill",
    "a hit after its connection was killed is decided normally (a limiter never "
    "blocks: nothing to ride out), counted once",
)
def ratelimiter_connection_kill(ctx: Ctx) -> list[str]:
    lim = limiter(ctx)
    first = lim.hit("k").allowed
    ctx.kill_connections()
    try:
        rest = [lim.hit("k").allowed for _ in range(3)]
    except Exception as exc:
        return [f"a hit after the connection kill raised {describe(exc)}"]
    got = [first, *rest]
    return [] if got == [True, True, True, False] else [f"the hits around the kill gave {got}"]


@cell(
    "ratelimiter",
    "paused-server",
    "a hit during the pause raises CoordinationUnavailable within the socket timeout (+1 s; the "
    "caller fails open or closed); afterwards hits are decided and nothing was counted twice; a "
    "concurrency slot the paused hit took when Redis resumed is given back within a second",
)
def ratelimiter_paused(ctx: Ctx) -> list[str]:
    return _gcra_paused(ctx) + _slot_paused(ctx)


def _slot_paused(ctx: Ctx) -> list[str]:
    # The hit times out during the pause and the server runs it once resumed: a slot nobody
    # holds, which before was given back only when its lease ran out (60 s), every later hit of
    # the key refused meanwhile.
    found: list[str] = []
    slots = RateLimiter("concurrency=1;lease=60", name="ps", client=ctx.client(), prefix=ctx.prefix)
    # Connections already open, as in a served process (a give-back then goes out on one the
    # server already watches, and may run before the hit): two threads each leave one.
    gate = threading.Barrier(2)
    both = [
        threading.Thread(target=lambda: (gate.wait(), slots.peek("warm"), gate.wait()))
        for _ in range(2)
    ]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    resume = ctx.pause(PAUSE)
    started = time.monotonic()
    try:
        slots.hit("k")
        found.append("a concurrency hit on a paused server was decided")
    except CoordinationUnavailable:
        pass
    if time.monotonic() - started > SOCKET_TIMEOUT + 1.0:
        found.append(
            f"a concurrency hit on a paused server took {time.monotonic() - started:.1f} s"
        )
    resume.join()
    deadline = time.monotonic() + 1.5
    while True:
        decision = slots.hit("k")
        if decision.allowed:
            slots.release(decision)
            break
        if time.monotonic() > deadline:
            found.append("the slot the paused hit took was still taken 1.5 s after the resume")
            break
        time.sleep(0.05)
    return found


def _gcra_paused(ctx: Ctx) -> list[str]:
    lim = limiter(ctx)
    for attempt in range(3):
        found: list[str] = []
        key = f"k{attempt}"
        lim.hit(key)
        resume = ctx.pause(PAUSE)
        started = time.monotonic()
        try:
            lim.hit(key)
            found.append("a hit on a paused server was decided")
        except CoordinationUnavailable:
            pass
        except Exception as exc:
            found.append(f"a hit on a paused server raised {describe(exc)}")
        if time.monotonic() - started > SOCKET_TIMEOUT + 1.0:
            found.append(f"a hit on a paused server took {time.monotonic() - started:.1f} s")
        resume.join()
        if resume.resumed_at is None or resume.resumed_at > started:
            break
        # this machine stalled the caller past the whole pause: its hit met no pause; again
    got = [lim.hit(key).allowed for _ in range(3)]
    # the hit sent during the pause may have counted (its outcome is unknown): 1 or 2 more pass
    if got not in ([True, True, False], [True, False, False]):
        found.append(f"after the pause the hits gave {got}")
    return found


def _slot_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    lim = RateLimiter(
        f"concurrency=1;lease={LEASE:g}",
        name="c",
        client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT),
        prefix=prefix,
    )
    decision = lim.hit("k")
    report.put(decision.allowed)
    go.wait(60)
    return str(lim.release(decision))


def ratelimiter_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_slot_process, ctx.url, ctx.prefix, report, go)
    if report.get(timeout=15) is not True:
        return ["the process did not get the free concurrency slot"]
    proc.signal(19 if stop else 9)
    lim = limiter(ctx, f"concurrency=1;lease={LEASE:g}", name="c")
    deadline = time.monotonic() + LEASE + 1.5
    decision = lim.hit("k")
    while not decision.allowed and time.monotonic() < deadline:
        time.sleep(0.05)
        decision = lim.hit("k")
    if not decision.allowed:
        found.append("the slot of a struck holder did not come back within its lease (+0.5 s)")
        return found
    if stop:
        proc.signal(18)
        go.set()
        if (late := proc.result(15)) != "False":
            found.append(
                f"the resumed holder's late release gave {late} (want False: its lease had run out)"
            )
        if lim.hit("k").allowed:
            found.append("the late release freed the new holder's slot: two in flight at once")
    lim.release(decision)
    return found


cell(
    "ratelimiter",
    "holder-sigkill",
    "the concurrency slot of a SIGKILLed holder comes back within its lease (+0.5 s)",
)(lambda ctx: ratelimiter_holder(ctx, stop=False))
cell(
    "ratelimiter",
    "holder-sigstop",
    "the slot of a holder SIGSTOPped past its lease goes to the next request; the "
    "resumed holder's release returns False and does not free the new holder's slot",
)(lambda ctx: ratelimiter_holder(ctx, stop=True))


@cell(
    "ratelimiter",
    "pool-exhaustion",
    "24 concurrent hits on a pool of 4: each is decided or refused with an error "
    "naming the pool, never an outage or a raw error; no more pass than the policy allows",
)
def ratelimiter_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=4)
    lim = limiter(ctx, "10/m", client=shared)
    found, outcomes = pool_exhaustion(
        ctx, [lambda: lim.hit("k").allowed] * 24, lambda: None, settle=0.0
    )
    if sum(1 for o in outcomes if o == ("ok", True)) > 10:
        found.append(f"more than 10 hits of '10/m' passed: {outcomes}")
    return found


@cell(
    "ratelimiter",
    "hostile-names",
    "limiter names and keys with every allowed character: counted per key; keys tagged by the name",
)
def ratelimiter_names(ctx: Ctx) -> list[str]:
    name = hostile("limiter")
    got = _allowed(ctx, 4, key=hostile("key"), name=name)
    found = [] if got == [True, True, True, False] else [f"hits on hostile names gave {got}"]
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- queue -------------------------------------------------------------------------------------


def queue(ctx: Ctx, name: str = "q", client: Any = None) -> Queue:
    return Queue(name, client=client or ctx.client(), prefix=ctx.prefix)


def _drain(
    q: Queue, consumer_id: str, want: int, seconds: float = 5.0, timeout: float = LEASE
) -> list[Any]:
    consumer = q.consumer(consumer_id, timeout=timeout)
    got: list[Any] = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        q.reap()
        messages, _ = consumer.claim(50)
        for m in messages:
            consumer.ack(m)
        got += messages
        if not messages:
            time.sleep(0.05)
    consumer.flush()
    return got


@cell(
    "queue",
    "restart-with-data",
    "no acknowledged push is lost: every message pushed and not acknowledged is "
    "delivered after the restart (claimed ones once their consumer's timeout lapsed)",
)
def queue_restart_with_data(ctx: Ctx) -> list[str]:
    q = queue(ctx)
    ids = [q.push({"i": i}) for i in range(20)]
    first = q.consumer("c1", timeout=LEASE)
    taken, _ = first.claim(5)
    for m in taken[:3]:
        first.ack(m)
    first.flush()
    ctx.restart(keep_data=True)
    time.sleep(LEASE)
    got = {m.id for m in _drain(queue(ctx), "c2", 17)}
    lost = set(ids) - {m.id for m in taken[:3]} - got
    return (
        [f"{len(lost)} pushed messages lost across a restart with data: {sorted(lost)[:5]}"]
        if lost
        else []
    )


@cell(
    "queue",
    "restart-without-data",
    "what Redis held is lost (documented); pushing, claiming and acknowledging "
    "go on without an error, and a stale acknowledgement raises nothing",
    smoke=True,
)
def queue_data_loss(ctx: Ctx) -> list[str]:
    found: list[str] = []
    q = queue(ctx)
    q.push("before")
    consumer = q.consumer("c1", timeout=LEASE)
    taken, _ = consumer.claim(1)
    ctx.restart(keep_data=False)
    try:
        for m in taken:
            consumer.ack(m)
        consumer.flush()
        mid = queue(ctx).push("after")
        got = [m.id for m in _drain(queue(ctx), "c2", 1)]
        if got != [mid]:
            found.append(f"a push after the data loss was delivered as {got}")
    except Exception as exc:
        found.append(f"the queue after the data loss raised {describe(exc)}")
    return found


def _worker(
    ctx: Ctx, names: list[str], handled: list[Any], client: Any = None
) -> tuple[Worker, Party]:
    client = client or ctx.client()
    worker = Worker(
        [queue(ctx, n, client) for n in names],
        lambda m: handled.append(m.body),
        heartbeat=0.2,
        timeout=LEASE,
    )
    return worker, Party(worker.run, "worker")


@cell(
    "queue",
    "connection-kill",
    "a worker idle on its wake list when its connections are killed keeps working: a "
    "message pushed afterwards is handled within 2 s; the worker does not stop",
)
def queue_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    handled: list[Any] = []
    worker, running = _worker(ctx, ["q"], handled)
    try:
        ctx.wait_blocked(1)
        ctx.kill_connections()
        time.sleep(0.1)
        queue(ctx).push("after")
        deadline = time.monotonic() + 2.0
        while "after" not in handled and time.monotonic() < deadline:
            time.sleep(0.02)
        if "after" not in handled:
            found.append("a message pushed after the connection kill was not handled within 2 s")
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(5)
    return found


@cell(
    "queue",
    "paused-server",
    "a push during the pause raises CoordinationUnavailable (nothing half-done); an idle "
    "worker rides out the pause and handles what is pushed after it",
)
def queue_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    handled: list[Any] = []
    worker, running = _worker(ctx, ["q"], handled)
    try:
        ctx.wait_blocked(1)
        resume = ctx.pause(PAUSE)
        try:
            queue(ctx).push("during")
            found.append("a push on a paused server succeeded")
        except CoordinationUnavailable:
            pass
        except Exception as exc:
            found.append(f"a push on a paused server raised {describe(exc)}")
        resume.join()
        queue(ctx).push("after")
        deadline = time.monotonic() + 4.0
        while "after" not in handled and time.monotonic() < deadline:
            time.sleep(0.02)
        if "after" not in handled:
            found.append("a message pushed after the pause was not handled within 4 s")
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(5)
    return found


def _consumer_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    q = Queue("k", client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT), prefix=prefix)
    consumer = q.consumer("struck", timeout=LEASE)
    taken, _ = consumer.claim(3)
    report.put([m.id for m in taken])
    go.wait(60)
    try:
        for m in taken:
            consumer.ack(m)
        consumer.flush()
        return "acked"
    except RedcoordError as exc:
        return describe(exc)


def queue_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    ids = [queue(ctx, "k").push(i) for i in range(3)]
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_consumer_process, ctx.url, ctx.prefix, report, go)
    if sorted(report.get(timeout=15)) != sorted(ids):
        return ["the consumer process did not claim the three messages"]
    proc.signal(19 if stop else 9)
    got = {m.id for m in _drain(queue(ctx, "k"), "live", 3, LEASE + 4)}
    if got != set(ids):
        found.append(
            f"the struck consumer's messages came back as {sorted(got)} (want {sorted(ids)})"
        )
    if stop:
        proc.signal(18)
        go.set()
        if (late := proc.result(15)) != "acked":
            found.append(f"the resumed consumer's late acknowledgement gave {late}")
    return found


cell(
    "queue",
    "holder-sigkill",
    "the messages a SIGKILLed consumer had claimed are delivered again once its "
    "timeout lapses (at least once)",
)(lambda ctx: queue_holder(ctx, stop=False))
cell(
    "queue",
    "holder-sigstop",
    "the messages of a consumer SIGSTOPped past its timeout are delivered again; its "
    "late acknowledgement raises nothing (a message may run twice, never zero times)",
)(lambda ctx: queue_holder(ctx, stop=True))


@cell(
    "queue",
    "pool-exhaustion",
    "a worker with 8 threads on 3 queues on a pool of 6: pushes from the same pool "
    "succeed and every message is handled; no error reads as an outage",
)
def queue_pool(ctx: Ctx) -> list[str]:
    found: list[str] = []
    shared = ctx.client(max_connections=6)
    handled: list[Any] = []
    worker = Worker(
        [queue(ctx, n, shared) for n in ("q1", "q2", "q3")],
        lambda m: handled.append(m.body),
        concurrency=8,
        heartbeat=0.2,
        timeout=LEASE,
    )
    running = Party(worker.run, "worker")
    try:
        time.sleep(0.3)
        errors = []
        for i in range(30):
            try:
                queue(ctx, f"q{1 + i % 3}", shared).push(i)
            except Exception as exc:
                errors.append(exc)
        for exc in errors:
            found.append(f"a push: {outage_claim(exc) or describe(exc)}")
        deadline = time.monotonic() + 8.0
        while len(handled) < 30 - len(errors) and time.monotonic() < deadline:
            time.sleep(0.05)
        if len(set(handled)) < 30 - len(errors):
            found.append(f"{30 - len(errors) - len(set(handled))} pushed messages were not handled")
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(8)
    return found


@cell(
    "queue",
    "hostile-names",
    "queue names and message ids with every allowed character: push, claim, ack, dead "
    "letters; keys tagged by the name",
)
def queue_names(ctx: Ctx) -> list[str]:
    name = hostile("queue")
    q = queue(ctx, name)
    mid = q.push({"x": name}, id=hostile("message"))
    got = _drain(q, hostile("consumer"), 1)
    found = (
        []
        if [(m.id, m.body) for m in got] == [(mid, {"x": name})]
        else [f"hostile names delivered {got}"]
    )
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)


# -- election ----------------------------------------------------------------------------------


def election(
    ctx: Ctx, name: str = "e", client: Any = None, identity: str | None = None
) -> LeaderElection:
    return LeaderElection(
        name, 1.5, 1.0, 0.25, client=client or ctx.client(), prefix=ctx.prefix, identity=identity
    )


def _campaign(e: LeaderElection) -> bool | None:
    try:
        return e.campaign()
    except CoordinationUnavailable:
        return None


def _lead_within(e: LeaderElection, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _campaign(e):
            return True
        try:
            e.wait(0.25)
        except CoordinationUnavailable:
            time.sleep(0.05)
    return False


@cell(
    "election",
    "restart-with-data",
    "the leader keeps its term: its next renewal succeeds; a standby stays standby",
)
def election_restart_with_data(ctx: Ctx) -> list[str]:
    a, b = election(ctx, identity="a"), election(ctx, identity="b")
    if not a.campaign():
        return ["the first candidate was not elected"]
    term = a.term
    b.campaign()
    ctx.restart(keep_data=True)
    found = []
    if not _campaign(a) or a.term != term:
        found.append(
            f"the leader lost its term across a restart with data (term {a.term}, was {term})"
        )
    if _campaign(b):
        found.append("a standby was elected while the leader's record was kept")
    return found


def election_data_loss(ctx: Ctx, make: Any = None) -> list[str]:
    make = make or election
    a, b = make(ctx, identity="a"), make(ctx, identity="b")
    if not a.campaign():
        return ["the first candidate was not elected"]
    term = a.term
    ctx.restart(keep_data=False)
    found = []
    if _lead_within(b, 3.0):
        if not b.term > term:
            found.append(f"the term went backwards after the data loss: {b.term} after {term}")
        if _campaign(a):
            found.append(
                f"two leaders after the data loss: a (term {a.term}) and b (term {b.term})"
            )
    else:
        found.append("no candidate was elected after the data loss")
    return found


cell(
    "election",
    "restart-without-data",
    "terms only grow: the next leader's term is above the last one's; the old "
    "leader's renewal fails (never two leaders)",
    smoke=True,
)(election_data_loss)


@cell(
    "election",
    "connection-kill",
    "a standby waiting (BLPOP) when its connection is killed rides it out and is "
    "elected at once when the leader resigns, with a larger term",
)
def election_connection_kill(ctx: Ctx) -> list[str]:
    a, b = election(ctx, identity="a"), election(ctx, identity="b")
    a.campaign()
    term = a.term
    b.campaign()
    standby = Party(lambda: _lead_within(b, 5.0))
    ctx.wait_blocked(1)
    ctx.kill_connections()
    resigned = time.monotonic()
    a.resign()
    status, value = standby.outcome(6.0)
    if (status, value) != ("ok", True):
        return [f"the standby was not elected after the resignation: {status} {value!r}"]
    found = [] if b.term > term else [f"the new term {b.term} is not above {term}"]
    if standby.ended_at - resigned > 1.0:
        found.append(f"the standby took {standby.ended_at - resigned:.1f} s after the resignation")
    return found


@cell(
    "election",
    "paused-server",
    "the leader stops believing it leads by its renew deadline (before its lease can expire): "
    "never two leaders at once; after the resume exactly one leads and terms never go down",
)
def election_paused(ctx: Ctx) -> list[str]:
    a, b = election(ctx, identity="a"), election(ctx, identity="b")
    a.campaign()
    term = a.term
    resume = ctx.pause(2.0)
    time.sleep(1.2)  # past a's renew deadline (1.0 s) while Redis is stopped
    _campaign(a)
    found = (
        []
        if not a.is_leader()
        else ["the leader still believed it led past its renew deadline during the pause"]
    )
    resume.join()
    leaders, settled = [], 0
    for _ in range(12):
        for e in (a, b):
            _campaign(e)
        leaders = [e for e in (a, b) if e.is_leader()]
        if len(leaders) > 1:
            found.append(f"two leaders after the pause: terms {[e.term for e in leaders]}")
            break
        settled = settled + 1 if leaders else 0
        if settled == 2:
            break
        time.sleep(0.25)
    if not leaders:
        found.append("nobody leads after the pause")
    elif leaders[0].term < term:
        found.append(f"the term went down: {leaders[0].term} after {term}")
    return found


def _leader_process(index: int, url: str, prefix: str, report: Any, go: Any) -> Any:
    e = LeaderElection(
        "k",
        1.5,
        1.0,
        0.25,
        client=client_from_url(url, socket_timeout=SOCKET_TIMEOUT),
        prefix=prefix,
        identity="struck",
    )
    assert e.campaign()
    report.put(e.term)
    go.wait(60)
    return e.is_leader()  # resumed: what it believes before any round trip


def election_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    from ...support import multiproc

    found: list[str] = []
    report, go = multiproc.queue(), multiproc.event()
    proc = ctx.process(_leader_process, ctx.url, ctx.prefix, report, go)
    term = report.get(timeout=15)
    proc.signal(19 if stop else 9)
    struck = time.monotonic()
    b = election(ctx, "k", identity="b")
    if not _lead_within(b, 1.5 + 2.0):
        return ["no standby took over from the struck leader"]
    if time.monotonic() - struck > 1.5 + 1.0:
        found.append(f"the standby took over {time.monotonic() - struck:.1f} s after (lease 1.5 s)")
    if not b.term > term:
        found.append(f"the new term {b.term} is not above the struck leader's {term}")
    if stop:
        proc.signal(18)
        go.set()
        if proc.result(15) is not False:
            found.append("the resumed leader still believed it led: two leaders in the same moment")
    return found


cell(
    "election",
    "holder-sigkill",
    "a standby takes over within the lease (+1 s) of a SIGKILLed leader, with a larger term",
)(lambda ctx: election_holder(ctx, stop=False))
cell(
    "election",
    "holder-sigstop",
    "a leader SIGSTOPped past its lease is replaced (larger term); resumed, it no "
    "longer believes it leads before any round trip (never two leaders acting in one term)",
)(lambda ctx: election_holder(ctx, stop=True))


@cell(
    "election",
    "pool-exhaustion",
    "10 candidates waiting on a pool of 4: one leads, the others stand by; no "
    "error reads as an outage",
)
def election_pool(ctx: Ctx) -> list[str]:
    shared = ctx.client(max_connections=4)
    leader = election(ctx, client=shared, identity="leader")
    leader.campaign()
    candidates = [election(ctx, client=shared, identity=f"c{i}") for i in range(10)]
    guard = threading.Lock()
    leading: list[str] = []

    def stand_by(e: LeaderElection) -> None:
        for _ in range(4):
            if e.campaign():
                with guard:
                    leading.append(e.identity)
            e.wait(0.2)

    found, _ = pool_exhaustion(
        ctx, [lambda e=e: stand_by(e) for e in candidates], lambda: leader.campaign(), settle=0.2
    )
    if leading:
        found.append(f"standbys were elected while the leader renewed: {leading}")
    return found


@cell(
    "election",
    "hostile-names",
    "an election and identity with every allowed character: elected, read back, "
    "resigned; keys tagged by the name",
)
def election_names(ctx: Ctx) -> list[str]:
    name = hostile("election")
    e = election(ctx, name, identity=hostile("identity"))
    found = [] if e.campaign() else ["not elected"]
    current = e.current()
    if current is None or current.identity != hostile("identity"):
        found.append(f"current() read back {current}")
    e.resign()
    return found + keys_tagged_by(ctx.admin(), ctx.prefix, name)
