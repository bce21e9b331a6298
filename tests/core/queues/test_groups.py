"""Groups on a real Redis: FIFO within a group, round-robin across groups, per-group
concurrency and rate checked at claim, and counts that add up after retries, dead letters,
hand-backs, a reaped worker, a cancel and a purge (queues/common.lua, Groups).

The overlap checker runs real worker processes (one SIGKILLed mid-run) and has a negative
control: the same run without the concurrency limit must be caught overlapping.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest
import redis

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.groups import Group


def q(client, name="jobs", **kwargs):
    return Queue(name, client=client, prefix="t", **kwargs)


def claim_all(consumer, n=100):
    messages, _ = consumer.claim(n)
    for m in messages:
        consumer.ack(m)
    consumer.flush()
    return messages


def state(queue):
    """gstate as {group: (in_line, running)}, the counts that must add up."""
    out = {}
    for g, v in queue.client.hgetall(queue.keys.gstate).items():
        in_line, running, _ = v.decode().split(" ")
        out[g.decode()] = (int(in_line), int(running))
    return out


def test_round_robin_serves_a_cold_group_before_a_hot_groups_backlog(redis_client):
    queue = q(redis_client)
    for i in range(50):
        queue.push(("hot", i), group="hot")
    for name in ("a", "b", "c"):
        queue.push((name, 0), group=name)
    queue.push(("plain", 0))
    order = [m.body for m in claim_all(queue.consumer("c"), 8)]
    # one message of each group in turn, in order of arrival in the line
    assert order[:5] == [["hot", 0], ["a", 0], ["b", 0], ["c", 0], ["plain", 0]]
    rest = [m.body for m in claim_all(queue.consumer("c"), 100)]
    assert [i for _, i in order[5:] + rest] == list(range(1, 50))  # the hot group, in order
    assert state(queue) == {} and queue.depths().ready == 0


def test_within_a_group_higher_priority_first_then_arrival(redis_client):
    queue = q(redis_client)
    consumer = queue.consumer("c")
    blocker = Group("g", concurrency=1)
    queue.push("first", group=blocker)  # in line at once
    queue.push("low", group=blocker, priority=-5)
    queue.push("normal-1", group=blocker)
    queue.push("high", group=blocker, priority=5)
    queue.push("normal-2", group=blocker)
    seen = []
    for _ in range(5):
        messages = claim_all(consumer, 10)
        assert len(messages) == 1, "a group limited to one runs one at a time"
        seen.append(messages[0].body)
    assert seen == ["first", "high", "normal-1", "normal-2", "low"]
    assert messages[0].group == "g"


def test_concurrency_one_holds_the_next_until_the_first_is_acknowledged(redis_client):
    queue = q(redis_client)
    one = Group("order:7", concurrency=1)
    queue.push_many(["a", "b", "c"], group=one)
    first, second = queue.consumer("c1"), queue.consumer("c2")
    got, _ = first.claim(10)
    assert [m.body for m in got] == ["a"]
    assert second.claim(10)[0] == [], "the group's next must wait for 'a'"
    assert state(queue) == {"order:7": (0, 1)}
    first.ack(got[0])
    first.flush()
    assert [m.body for m in second.claim(10)[0]] == ["b"]


def test_a_retry_keeps_its_place_so_a_group_of_one_runs_strictly_in_order(redis_client):
    queue = q(redis_client)
    one = Group("acct", concurrency=1)
    queue.push_many(["a", "b"], group=one)
    consumer = queue.consumer("c")
    (a,), _ = consumer.claim(10)
    assert consumer.nack(a, "boom", delay=0.2) == "retry"
    messages, hint = consumer.claim(10)
    assert messages == [] and 0 < hint <= 0.2, "b must not overtake a's retry"
    assert queue.depths().delayed == 1 and queue.depths().ready == 1
    time.sleep(0.25)
    (again,), _ = consumer.claim(10)
    assert again.body == "a" and again.attempt == 1
    consumer.ack(again)
    assert [m.body for m in claim_all(consumer)] == ["b"]
    assert state(queue) == {}


def test_a_rate_refused_claim_waits_in_line_and_spends_no_attempt(redis_client):
    queue = q(redis_client)
    slow = Group("api", rate="5/s;burst=1")
    queue.push_many(range(4), group=slow)
    queue.push("free")
    consumer = queue.consumer("c")
    started = time.monotonic()
    times, bodies = [], []
    while len(bodies) < 5 and time.monotonic() - started < 10:
        messages, hint = consumer.claim(10)
        for m in messages:
            times.append(time.monotonic() - started)
            bodies.append(m.body)
            assert m.attempt == 0, "a throttled claim spent an attempt"
            consumer.ack(m)
        if not messages:
            assert hint is not None and hint <= 0.25
            time.sleep(hint)
    consumer.flush()
    assert sorted(bodies, key=str) == sorted([0, 1, 2, 3, "free"], key=str)
    assert [b for b in bodies if b != "free"] == [0, 1, 2, 3]
    grouped = [t for t, b in zip(times, bodies, strict=True) if b != "free"]
    # 5/s with a burst of 1: the 4th starts at least 600 ms after the 1st on the server's clock
    # (measured from before the first claim, so a slow reply can only make it look later)
    assert grouped[-1] >= 0.55, grouped
    assert state(queue) == {} or all(v == (0, 0) for v in state(queue).values())


def test_counts_add_up_after_dead_letter_hand_back_reap_and_requeue(redis_client):
    queue = q(redis_client, max_attempts=1)
    two = Group("t", concurrency=2)
    queue.push_many(["a", "b", "c", "d"], group=two)
    dying = queue.consumer("dying", timeout=0.2)
    got, _ = dying.claim(10)
    assert [m.body for m in got] == ["a", "b"]
    assert state(queue) == {"t": (0, 2)}
    time.sleep(0.3)  # its heartbeat lapses: the reaper takes a and b back (max_attempts 1: dead)
    assert queue.reap() == (0, 2, 1)
    assert state(queue)["t"][1] == 0
    live = queue.consumer("live")
    got, _ = live.claim(10)
    assert [m.body for m in got] == ["c", "d"]
    assert live.hand_back(got[1:]) == 1  # d back in line, c still running
    assert state(queue) == {"t": (1, 1)}
    assert live.nack(got[0], "bad") == "dead"
    assert [m.body for m in claim_all(live)] == ["d"]
    assert queue.requeue_dead() == 3  # a, b, c rejoin their group in order
    assert state(queue) == {"t": (2, 0)} or state(queue) == {"t": (1, 0)}
    bodies = []
    while True:
        messages = claim_all(live)
        if not messages:
            break
        bodies += [m.body for m in messages]
    assert bodies == ["a", "b", "c"]
    assert state(queue) == {}
    assert queue.depths().ready == 0 and queue.depths().delayed == 0


def test_purge_drops_waiting_grouped_messages_and_keeps_the_running_count(redis_client):
    queue = q(redis_client)
    one = Group("p", concurrency=1)
    queue.push_many(range(5), group=one)
    consumer = queue.consumer("c")
    (running,), _ = consumer.claim(10)
    assert queue.depths().ready == 4
    assert queue.purge() == 4
    assert queue.depths().ready == 0
    queue.push("after", group=one)
    assert consumer.claim(10)[0] == [], "the running one still counts against the limit"
    consumer.ack(running)
    assert [m.body for m in claim_all(consumer)] == ["after"]
    assert state(queue) == {}


def test_a_delayed_grouped_message_joins_its_group_when_due(redis_client):
    queue = q(redis_client)
    one = Group("d", concurrency=1)
    queue.push("later", group=one, delay=0.2)
    queue.push("now", group=one)
    consumer = queue.consumer("c")
    (now,), _ = consumer.claim(10)
    assert now.body == "now"
    time.sleep(0.25)
    assert consumer.claim(10)[0] == [], "due, but its group runs one already"
    consumer.ack(now)
    assert [m.body for m in claim_all(consumer)] == ["later"]


@pytest.mark.parametrize(
    ("group", "error"),
    [
        ("", ValueError),
        ("a\nb", ValueError),
        ("x" * 1001, ValueError),
        ("\ud800", ValueError),
        (42, TypeError),
    ],
)
def test_a_bad_group_is_refused_and_nothing_is_pushed(redis_client, group, error):
    queue = q(redis_client)
    with pytest.raises(error, match="group"):
        queue.push("x", group=group)
    assert queue.depths().ready == 0


def test_bad_limits_and_a_lifo_queue_are_refused_saying_what_is_allowed(redis_client):
    with pytest.raises(ValueError, match="between 1 and"):
        Group("g", concurrency=0)
    with pytest.raises(TypeError, match="whole number"):
        Group("g", concurrency=1.5)
    with pytest.raises(ValueError, match="one GCRA rate"):
        Group("g", rate="concurrency=5")
    with pytest.raises(ValueError, match="one GCRA rate"):
        Group("g", rate="10/s & 100/m")
    with pytest.raises(ValueError, match="one GCRA rate"):
        Group("g", rate="ten a second")
    with pytest.raises(ValueError, match="LIFO"):
        q(redis_client, lifo=True).push("x", group="g")


def test_every_allowed_character_in_a_group(redis_client):
    queue = q(redis_client)
    names = ["a|b", "|", "tenant:{42}", "ünï ✓", "\t\r", " ", "x" * 1000, "a\\n"]
    for name in names:
        queue.push(name, group=Group(name, concurrency=1))
    seen = {m.group: m.body for m in claim_all(queue.consumer("c"))}
    assert seen == {name: name for name in names}
    assert state(queue) == {}


def test_the_asyncio_driver_pushes_grouped_messages(redis_url):
    import asyncio

    import redis.asyncio

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            queue = Queue("async-groups", client=client, prefix="t")
            for i in range(3):
                await queue.apush(i, group=Group("g", concurrency=1))
            await queue.apush("other", group="h")
        finally:
            await client.aclose()

    asyncio.run(scenario())
    sync = redis.Redis.from_url(redis_url)
    try:
        consumer = Queue("async-groups", client=sync, prefix="t").consumer("c")
        assert sorted(map(str, (m.body for m in claim_all(consumer)))) == ["0", "other"]
    finally:
        sync.close()


# -- the overlap checker: real processes, one SIGKILLed --------------------------------------

GROUPS = 3  # fewer groups than workers: without the limit, two workers share a group
WORKERS = 4
PER_GROUP = 30
LIMIT = 1


def _worker(url: str, name: str) -> None:
    client = redis.Redis.from_url(url)
    queue = Queue("overlap", client=client, prefix="t")
    consumer = queue.consumer(name, timeout=1.0)
    # start together: a worker spawned first (a loaded machine starts them seconds apart)
    # must not drain the queue alone, or the negative control could see no overlap
    client.incr("t:overlap:ready")
    deadline = time.monotonic() + 60
    while int(client.get("t:overlap:ready") or 0) < WORKERS and time.monotonic() < deadline:
        time.sleep(0.005)
    while not client.exists("t:overlap:stop"):
        messages, _ = consumer.claim(2)
        if not messages:
            time.sleep(0.005)
            continue
        for m in messages:
            client.rpush("t:overlap:log", f"S|{os.getpid()}|{m.group}|{m.id}|{time.time_ns()}")
            time.sleep(0.01)
            client.rpush("t:overlap:log", f"E|{os.getpid()}|{m.group}|{m.id}|{time.time_ns()}")
            consumer.ack(m)
        consumer.flush()


def _most_at_once(events: list[str], killed: dict[int, int]) -> tuple[dict[str, int], set[str]]:
    """The most jobs of each group running at once (a killed process's job ends at its kill),
    and the ids that ran."""
    spans: dict[tuple[int, str], list] = {}
    for line in events:
        kind, pid, group, mid, t = line.split("|")
        key = (int(pid), mid)
        if kind == "S":
            spans[key] = [group, int(t), None]
        else:
            spans[key][2] = int(t)
    points = []
    for (pid, _), (group, start, end) in spans.items():
        if end is None:
            end = killed.get(pid, start)
        points += [(start, 1, group), (end, -1, group)]
    most: dict[str, int] = {}
    now: dict[str, int] = {}
    for _, step, group in sorted(points, key=lambda p: (p[0], p[1])):
        now[group] = now.get(group, 0) + step
        most[group] = max(most.get(group, 0), now[group])
    return most, {mid for (_, mid) in spans}


def _overlap_run(
    redis_url: str, limited: bool, kill: bool
) -> tuple[dict[str, int], set, set, dict]:
    """Run the workers over GROUPS x PER_GROUP messages: the most at once per group, the ids
    pushed, the ids run, and the groups' counts left (none when they add up)."""
    client = redis.Redis.from_url(redis_url)
    client.delete("t:overlap:stop", "t:overlap:log", "t:overlap:ready")
    queue = Queue("overlap", client=client, prefix="t")
    queue.purge()
    ids = set()
    for i in range(PER_GROUP):
        for g in range(GROUPS):
            group = Group(f"g{g}", concurrency=LIMIT) if limited else Group(f"g{g}")
            ids.add(queue.push(i, group=group))
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_worker, args=(redis_url, f"w{n}")) for n in range(WORKERS)]
    for w in workers:
        w.start()
    killed: dict[int, int] = {}
    deadline = time.monotonic() + 60
    try:
        if kill:
            while client.llen("t:overlap:log") < 40 and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(workers[0].pid, signal.SIGKILL)
            killed[workers[0].pid] = time.time_ns()
        while time.monotonic() < deadline:
            queue.reap()
            d = queue.depths()
            done = {
                line.split(b"|")[3].decode()
                for line in client.lrange("t:overlap:log", 0, -1)
                if line.startswith(b"E")
            }
            if ids <= done and d.processing == 0:
                break
            time.sleep(0.05)
    finally:
        client.set("t:overlap:stop", 1)
        for w in workers:
            w.join(10)
            if w.is_alive():
                w.kill()
    events = [line.decode() for line in client.lrange("t:overlap:log", 0, -1)]
    most, ran = _most_at_once(events, killed)
    left = {g: v for g, v in state(queue).items() if v != (0, 0)}
    client.close()
    return most, ids, ran, left


def test_per_group_concurrency_is_never_exceeded_with_a_worker_sigkilled(redis_url):
    most, ids, ran, left = _overlap_run(redis_url, limited=True, kill=True)
    assert ran == ids, "every message ran (at least once), none unknown"
    assert len(most) == GROUPS and max(most.values()) <= LIMIT, most
    assert not left, f"groups whose counts did not come back to zero: {left}"


def test_negative_control_without_the_limit_the_checker_sees_overlaps(redis_url):
    most, ids, ran, left = _overlap_run(redis_url, limited=False, kill=False)
    assert ran == ids and not left
    assert max(most.values()) > LIMIT, (
        f"the checker missed the overlaps of an unlimited run: {most}"
    )


# -- faults: Redis restarted with and without its data, a claim whose reply was lost --------


@pytest.fixture
def restartable():
    from tests.support.redis_servers import RestartableServer

    server = RestartableServer().start()
    yield server
    server.cleanup()


def _drain_all(queue, consumer, rounds=200):
    bodies = []
    for _ in range(rounds):
        messages, hint = consumer.claim(4)
        bodies += [m.body for m in messages]
        for m in messages:
            consumer.ack(m)
        if not messages and hint is None:
            consumer.flush()
            if not queue.client.hgetall(queue.keys.gstate):
                break
        elif not messages:
            time.sleep(min(hint, 0.05))
    return bodies


def test_a_restart_with_data_keeps_every_groups_order_and_counts(restartable):
    client = redis.Redis(port=restartable.port, socket_timeout=2)
    queue = Queue("restart", client=client, prefix="t")
    one = Group("r", concurrency=1)
    queue.push_many(range(6), group=one)
    consumer = queue.consumer("c")
    (first,), _ = consumer.claim(4)
    restartable.restart_keeping_data()
    client.connection_pool.disconnect()
    consumer.ack(first)
    assert _drain_all(queue, consumer) == [1, 2, 3, 4, 5]
    assert state(queue) == {}
    client.close()


def test_a_restart_without_data_leaves_no_group_stuck(restartable):
    client = redis.Redis(port=restartable.port, socket_timeout=2)
    queue = Queue("restart", client=client, prefix="t")
    one = Group("r", concurrency=1)
    queue.push_many(range(3), group=one)
    consumer = queue.consumer("c")
    (first,), _ = consumer.claim(4)
    restartable.restart_losing_data()
    client.connection_pool.disconnect()
    consumer.ack(first)  # its acknowledgement finds nothing: no count goes below zero
    queue.push_many(["a", "b"], group=one)  # what was waiting is gone; new work runs
    assert _drain_all(queue, consumer) == ["a", "b"]
    assert state(queue) == {}
    client.close()


def test_a_claim_whose_reply_was_lost_is_delivered_again_without_counting_twice(redis_client):
    queue = q(redis_client)
    queue.push_many(range(3), group=Group("lost", concurrency=1))
    consumer = queue.consumer("c")
    from django_redcoord.core.queues.messages import CLAIM

    k = queue.keys
    keys = [
        k.ready,
        k.delayed,
        consumer.processing,
        k.consumers,
        k.wake,
        k.seq,
        k.paused,
        k.cancels,
        k.uniq,
        k.uniq_ids,
        *k.grouping(),
    ]
    CLAIM(redis_client, keys, [4, 30000, "0", "1"], operation="a claim whose reply is lost")
    assert state(queue) == {"lost": (0, 1)}
    (again,), _ = consumer.claim(4)  # holds nothing it knows of: recovers what the lost reply took
    assert again.body == 0 and state(queue) == {"lost": (0, 1)}
    consumer.ack(again)
    assert _drain_all(queue, consumer) == [1, 2]
    assert state(queue) == {}


# -- the hot tenant: 1,000 groups, one with 100 times the load of all others together ----------

COLD = 999
HOT = 100 * COLD


def _cold_positions(client, name: str, *, grouped: bool, hot: bool) -> list[int]:
    """How many messages were claimed before each cold one (one consumer, batches of 100): the
    hot tenant's backlog is pushed first, then one message per cold tenant."""
    queue = Queue(name, client=client, prefix="t")
    if hot:
        for start in range(0, HOT, 10_000):
            queue.push_many(
                [["hot", i] for i in range(start, min(HOT, start + 10_000))],
                group="hot" if grouped else None,
            )
    for g in range(COLD):
        queue.push(["cold", g], group=f"cold:{g}" if grouped else None)
    consumer = queue.consumer("c")
    seen, positions = 0, []
    while len(positions) < COLD:
        messages, _ = consumer.claim(100)
        assert messages, "the queue ran dry before every cold message was claimed"
        for m in messages:
            if m.body[0] == "cold":
                positions.append(seen)
            seen += 1
            consumer.ack(m)
    consumer.flush()
    return positions


def _p99(values: list[int]) -> int:
    return sorted(values)[int(len(values) * 0.99) - 1]


def test_a_hot_tenant_leaves_cold_tenants_wait_within_twice_an_unloaded_run(redis_client):
    unloaded = _p99(_cold_positions(redis_client, "unloaded", grouped=True, hot=False))
    loaded = _p99(_cold_positions(redis_client, "loaded", grouped=True, hot=True))
    assert loaded <= 2 * unloaded, (loaded, unloaded)
    # the negative control: the same load without groups is plain FIFO, and must be caught
    fifo = _p99(_cold_positions(redis_client, "fifo", grouped=False, hot=True))
    assert fifo > 2 * unloaded, f"the check missed a FIFO queue's unfairness: {fifo} {unloaded}"


def test_rated_groups_that_emptied_are_not_reported_and_a_workers_beat_drops_them(
    redis_client,
):
    from django_redcoord.core.queues.worker import Worker

    queue = q(redis_client, "rated")
    for i in range(30):
        queue.push(("t", i), group=Group(f"tenant:{i}", rate="12/m"))
    started = time.monotonic()
    Worker([queue], lambda m: None, burst=True, heartbeat=0.2, timeout=1.0).run()
    # each group's rate remembers its start for 5 s: the fields stay for now
    assert redis_client.hlen(queue.keys.gstate) > 0
    assert queue.groups() == [] and queue.depths().groups == 0  # but they have no messages
    time.sleep(max(0.0, started + 5.2 - time.monotonic()))  # every rate's next start has passed
    worker = Worker([queue], lambda m: None, heartbeat=0.2, timeout=1.0)
    runner = __import__("threading").Thread(target=worker.run)
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while redis_client.hlen(queue.keys.gstate) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        worker.stop()
        runner.join(10)
    assert redis_client.hlen(queue.keys.gstate) == 0  # an idle worker's beats dropped them
