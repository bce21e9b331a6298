"""Queue semantics on a real Redis: order, delays, priorities, retries, dead letters."""

import time
from datetime import datetime, timedelta, timezone

import pytest

from django_redcoord.core.queues import Queue, depths
from django_redcoord.core.queues.messages import retry_delay


def q(client, name="jobs", **kwargs):
    return Queue(name, client=client, prefix="t", **kwargs)


def drain(consumer, n=100):
    messages, _ = consumer.claim(n)
    for m in messages:
        consumer.ack(m)
    consumer.flush()
    return [m.body for m in messages]


def test_fifo_delivers_oldest_first(redis_client):
    queue = q(redis_client)
    for i in range(5):
        queue.push(i)
    assert drain(queue.consumer("c")) == [0, 1, 2, 3, 4]


def test_lifo_delivers_newest_first(redis_client):
    queue = q(redis_client, lifo=True)
    queue.push_many(range(5))
    assert drain(queue.consumer("c")) == [4, 3, 2, 1, 0]


def test_priorities_come_first_then_arrival_order(redis_client):
    queue = q(redis_client)
    queue.push("low-1", priority=-5)
    queue.push("normal-1")
    queue.push("high-1", priority=10)
    queue.push("normal-2")
    queue.push("high-2", priority=10)
    assert drain(queue.consumer("c")) == ["high-1", "high-2", "normal-1", "normal-2", "low-1"]


def test_delay_and_eta_hold_messages_until_due(redis_client):
    queue = q(redis_client)
    queue.push("later", delay=0.4)
    queue.push("eta", eta=datetime.now(timezone.utc) + timedelta(seconds=0.2))
    queue.push("now")
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(10)
    assert [m.body for m in messages] == ["now"]
    consumer.ack(messages[0])
    messages, hint = consumer.claim(10)
    assert messages == [] and 0 < hint <= 0.2
    time.sleep(0.25)
    assert drain(consumer) == ["eta"]
    time.sleep(0.2)
    assert drain(consumer) == ["later"]


def test_bodies_survive_exactly(redis_client):
    queue = q(redis_client)
    body = {
        "big": 2**62 + 1,
        "empty_list": [],
        "empty_dict": {},
        "text": "é\n|x",
        "f": 0.1,
        "none": None,
    }
    queue.push(body)
    consumer = queue.consumer("c")
    [message], _ = consumer.claim(1)
    consumer.nack(message, "retry it", delay=0.001)  # through Lua and back
    time.sleep(0.01)
    [again], _ = consumer.claim(1)
    assert again.body == body and again.attempt == 1


def test_messages_that_are_not_json_are_refused_and_nothing_is_sent(redis_client):
    queue = q(redis_client)
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        queue.push({"when": datetime.now()})
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        queue.push_many([1, 2, {3}])
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        queue.push(float("nan"))
    assert queue.depths().ready == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"priority": 101}, "priority must be a whole number from -100 to 100"),
        ({"delay": -1}, "delay must be seconds >= 0"),
        ({"eta": datetime(2030, 1, 1)}, "eta must be a timezone-aware datetime"),
        ({"delay": 1, "eta": datetime(2030, 1, 1, tzinfo=timezone.utc)}, "either delay="),
    ],
)
def test_bad_push_arguments_say_what_is_allowed(redis_client, kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        q(redis_client).push(1, **kwargs)


def test_unacknowledged_messages_stay_in_processing_until_acked(redis_client):
    queue = q(redis_client)
    queue.push_many(range(3))
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(10)
    assert queue.depths().processing == 3
    for m in messages:
        consumer.ack(m)
    assert queue.depths().processing == 3  # acks ride on the next claim
    consumer.claim(10)
    assert queue.depths().processing == 0


def test_nack_retries_with_growing_backoff_then_dead_letters(redis_client):
    queue = q(redis_client, max_attempts=3)
    queue.push({"job": 1})
    consumer = queue.consumer("c")
    consumer.retry_base, consumer.retry_cap = 0.05, 10.0
    outcomes, due_gaps = [], []
    for _ in range(3):
        deadline = time.monotonic() + 5
        while True:
            messages, _ = consumer.claim(1)
            if messages:
                break
            assert time.monotonic() < deadline
            time.sleep(0.01)
        before = time.time()
        outcomes.append(consumer.nack(messages[0], f"failure {messages[0].attempt}"))
        after = time.time()
        score = redis_client.zrange(queue.keys.delayed, 0, 0, withscores=True)
        if score:  # (due - before, due - after): a stall after the nack shrinks neither
            due_gaps.append((score[0][1] / 1000 - before, score[0][1] / 1000 - after))
    assert outcomes == ["retry", "retry", "dead"]
    assert len(due_gaps) == 2 and 0 < due_gaps[0][0] and due_gaps[0][1] <= 0.06
    assert due_gaps[1][1] <= 0.11
    [(dead, error)] = queue.dead_letters()
    assert dead.body == {"job": 1} and dead.attempt == 3
    assert error["error"] == "failure 2" and error["attempts"] == 3
    assert queue.depths().dead == 1


def test_retry_delay_is_exponential_with_jitter_and_capped():
    for attempt in range(6):
        delays = [retry_delay(attempt, 1.0, 10.0) for _ in range(200)]
        high = min(10.0, 2**attempt)
        assert all(0.5 <= d <= high for d in delays)
        if attempt >= 2:
            assert max(delays) - min(delays) > 0.5  # jitter spreads retries out


def test_dead_now_skips_the_remaining_attempts(redis_client):
    queue = q(redis_client, max_attempts=5)
    queue.push(1)
    consumer = queue.consumer("c")
    [m], _ = consumer.claim(1)
    assert consumer.nack(m, "cannot ever work", dead=True) == "dead"
    assert queue.depths().dead == 1


def test_requeue_dead_resets_attempts_and_purges(redis_client):
    queue = q(redis_client, max_attempts=1)
    queue.push_many(["a", "b"])
    consumer = queue.consumer("c")
    for m in consumer.claim(10)[0]:
        consumer.nack(m, "nope")
    assert queue.depths().dead == 2
    assert queue.requeue_dead() == 2
    assert queue.depths().dead == 0 and redis_client.hlen(queue.keys.errors) == 0
    messages, _ = consumer.claim(10)
    assert [m.body for m in messages] == ["a", "b"] and all(m.attempt == 0 for m in messages)
    for m in messages:
        consumer.nack(m, "again")
    queue.purge_dead()
    queue.push("x", delay=60)
    queue.push("y")
    queue.purge()
    d = queue.depths()
    assert (d.ready, d.delayed, d.dead) == (0, 0, 0)


def test_reaper_returns_a_dead_consumers_messages_counting_the_attempt(redis_client):
    queue = q(redis_client, max_attempts=2)
    queue.push_many(["a", "b"])
    crashed = queue.consumer("crashed", timeout=0.2)
    crashed.claim(10)
    assert queue.reap() == (0, 0, 0)  # still within its heartbeat
    time.sleep(0.3)
    assert queue.reap() == (2, 0, 1)
    messages, _ = queue.consumer("other").claim(10)
    assert sorted(m.body for m in messages) == ["a", "b"] and all(m.attempt == 1 for m in messages)
    # the second crash uses the last attempt: dead-lettered with the reason
    other = queue.consumer("other2", timeout=0.1)
    queue.consumer("other").hand_back(messages)
    other.claim(10)
    time.sleep(0.2)
    assert queue.reap() == (0, 2, 1)
    [(_, error), _] = queue.dead_letters()
    assert "worker died" in error["error"]


def test_ack_after_the_reaper_took_the_message_does_nothing(redis_client):
    queue = q(redis_client)
    queue.push("a")
    slow = queue.consumer("slow", timeout=0.1)
    [m], _ = slow.claim(1)
    time.sleep(0.2)
    queue.reap()
    assert slow.nack(m, "late") == "gone"
    assert queue.depths().ready == 1


def test_hand_back_puts_unstarted_messages_first_without_counting(redis_client):
    queue = q(redis_client)
    queue.push_many(["a", "b", "c"])
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(3)
    consumer.ack(messages[0])
    assert consumer.hand_back(messages[1:], retire=True) == 2
    d = queue.depths()
    assert (d.ready, d.processing, d.consumers) == (2, 0, 0)
    again, _ = queue.consumer("d").claim(3)
    assert [m.body for m in again] == ["b", "c"] and all(m.attempt == 0 for m in again)


def test_depths_of_many_queues_in_one_round_trip(redis_client):
    queues = [q(redis_client, f"q{i}") for i in range(20)]
    for i, queue in enumerate(queues):
        queue.push_many(range(i))
    queues[3].push("later", delay=60)
    depths(queues[:1], client=redis_client)  # loads the script (an earlier test may flush them)
    before = redis_client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
    result = depths(queues, client=redis_client)
    after = redis_client.info("commandstats")["cmdstat_evalsha"]["calls"]
    assert [result[f"q{i}"].ready for i in range(20)] == list(range(20))
    assert (
        result["q3"].delayed == 1
        and result["q0"].oldest_age is None
        and result["q5"].oldest_age >= 0
    )
    assert after - before == 20  # one script per queue, all in one pipeline


def test_push_many_batches_large_inputs(redis_client):
    queue = q(redis_client)
    ids = queue.push_many({"n": i} for i in range(2500))
    assert len(set(ids)) == 2500 and queue.depths().ready == 2500
    got = []
    consumer = queue.consumer("c")
    while True:
        messages, _ = consumer.claim(1000)
        if not messages:
            break
        got.extend(m.body["n"] for m in messages)
        for m in messages:
            consumer.ack(m)
    assert got == list(range(2500))


def test_a_claim_with_an_unknown_outcome_is_delivered_by_the_next_claim(redis_servers):
    """A claim whose reply never came may still have run. Its messages must not
    sit under our live heartbeat: the same consumer's next claim delivers them
    (claiming is idempotent), without counting a failed attempt."""
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.transport.clients import client_from_url

    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.3)
    queue = q(client)
    queue.push_many(range(8))
    consumer = queue.consumer("c", timeout=5)
    first, _ = consumer.claim(2)
    consumer.ack(first[0])
    consumer.ack(first[1])
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable):
            consumer.claim(5)
    finally:
        server.resume()
    # Whether the resumed server ran that claim (it was in its socket buffer)
    # is a race. Either way the next claim delivers those five, once.
    messages, _ = consumer.claim(5)
    assert sorted(m.body for m in messages) == [2, 3, 4, 5, 6] and all(
        m.attempt == 0 for m in messages
    )
    assert client.llen(consumer.processing) == 5  # the acknowledgements went with this claim
    # While it holds them, a claim brings new messages, never the same ones again.
    more, _ = consumer.claim(5)
    assert [m.body for m in more] == [7]
    for m in messages + more:
        consumer.ack(m)
    consumer.flush()
    assert client.llen(consumer.processing) == 0


# -- hardening ---------------------------------------------------------------------------


def test_a_claim_whose_reply_was_lost_comes_back_with_the_next_claim(redis_client):
    """Deterministic form of the lost reply: the script ran for our consumer id
    (here through another object standing for the call that timed out)."""
    queue = q(redis_client)
    queue.push_many(range(3))
    consumer = queue.consumer("c")
    lost, _ = queue.consumer("c").claim(3)  # ran, but its reply never reached `consumer`
    assert len(lost) == 3
    messages, _ = consumer.claim(10)
    assert [m.body for m in messages] == [0, 1, 2] and all(m.attempt == 0 for m in messages)


def test_dead_letters_are_capped_and_the_oldest_go_first(redis_client):
    queue = q(redis_client, max_attempts=1, dead_letter_limit=3)
    ids = [queue.push(i) for i in range(5)]
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(5)
    for m in messages:
        assert consumer.nack(m, f"failed {m.body}") == "dead"
    letters = queue.dead_letters()
    assert [m.body for m, _ in letters] == [2, 3, 4]
    assert (
        redis_client.hlen(queue.keys.errors) == 3
        and redis_client.hget(queue.keys.errors, ids[0]) is None
    )


def test_dead_letter_limit_comes_from_settings_and_none_keeps_all(settings, redis_client):
    settings.REDCOORD = {**settings.REDCOORD, "QUEUE_DEAD_LETTER_LIMIT": 7}
    assert Queue("x", client=redis_client).dead_letter_limit == 7
    assert Queue("x", client=redis_client, dead_letter_limit=None).dead_letter_limit is None
    with pytest.raises(ValueError, match="dead_letter_limit must be a whole number from 1"):
        Queue("x", client=redis_client, dead_letter_limit=0)


def test_a_task_message_dead_lettered_by_a_nack_is_also_put_to_settle(redis_client):
    queue = q(redis_client, max_attempts=1)
    from django_redcoord.core.keys import in_slot, key_slot

    rid = in_slot(
        "with|record", key_slot(queue.keys.ready)
    )  # a record in the queue's slot, as the Tasks backend makes
    queue.push_with_record(
        {"t": 1}, id=rid, record_key=f"t:task:{{{rid}}}", record={"status": "READY"}, ttl=60
    )
    queue.push({"t": 2}, id="plain")
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(5)
    for m in messages:
        consumer.nack(m, "boom")
    [(mid, detail, entry)] = queue.unsettled()
    assert mid == rid and detail["error"] == "boom" and detail["attempts"] == 1
    queue.settled([entry])
    assert queue.unsettled() == []


def test_envelopes_of_the_first_format_are_still_read(redis_client):
    """Messages queued before the upgrade (id first) are claimed, retried and dead-lettered."""
    queue = q(redis_client, max_attempts=2)
    now = int(time.time() * 1000)
    redis_client.zadd(queue.keys.ready, {f"old-id|0|2|{now}|0\n" + '{"v":1}': 1})
    consumer = queue.consumer("c")
    [message], _ = consumer.claim(1)
    assert (message.id, message.body, message.attempt, message.max_attempts) == (
        "old-id",
        {"v": 1},
        0,
        2,
    )
    assert consumer.nack(message, "again", delay=0.001) == "retry"
    time.sleep(0.01)
    [retried], _ = consumer.claim(1)
    assert (retried.id, retried.attempt) == ("old-id", 1)
    assert consumer.nack(retried, "dead") == "dead"
    assert [m.id for m, _ in queue.dead_letters()] == ["old-id"]


@pytest.mark.parametrize("lifo", [False, True])
def test_oldest_age_is_the_oldest_ready_message_fifo_or_lifo(redis_client, lifo):
    queue = q(redis_client, lifo=lifo)
    queue.push("old")
    time.sleep(0.4)
    queue.push_many(["new", "newer"])
    age = queue.depths().oldest_age
    assert 0.35 <= age < 3  # the first pushed, whichever end of the delivery order it is at
    [first], _ = queue.consumer("c").claim(1)
    assert first.body == ("newer" if lifo else "old")


def test_a_worker_id_leaves_room_for_its_threads_consumer_ids(redis_client):
    from django_redcoord.core.queues.worker import Worker

    queue = Queue("ids", client=redis_client, prefix="ids")
    Worker([queue], lambda m: None, worker_id="w" * 198, concurrency=10)  # ".9": 200 in all
    for n, concurrency, room in ((199, 1, 198), (198, 11, 197)):
        with pytest.raises(ValueError, match=f"at most {room} are allowed with concurrency"):
            Worker([queue], lambda m: None, worker_id="w" * n, concurrency=concurrency)
