# ruff: noqa: F811 - the outbox fixture is imported from tests/django/test_task_outbox.py
"""Red team: unique tasks and the task outbox, attacked as production would.

Invariants checked: a key never has two live tasks in skip mode with until='finished'; a key is
freed once its task is acknowledged, dead-lettered or cancelled; a replaced task never runs;
nothing committed is lost, nothing pushed twice; errors say what is allowed. Real worker
processes (manage.py run_worker, tests.support.worker_settings) where a worker is needed."""

import asyncio
import os
import random
import signal
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues.messages import Message
from django_redcoord.outbox.drain import drain, pending
from django_redcoord.outbox.models import OutboxEntry
from django_redcoord.tasks import Cancel, TaskCancelled, cancel, enqueue_many, task_backends_for
from django_redcoord.tasks.compat import utcnow
from django_redcoord.tasks.unique import TaskDuplicate
from tests.django.test_task_outbox import outbox  # noqa: F401 - the fixture
from tests.support import redteam_unique_tasks as rt
from tests.support.redis_servers import RedisServer
from tests.support.task_workers import start_worker, stop, wait_for, worker_env

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
PATH = "tests.support.redteam_unique_tasks"


# -- helpers ----------------------------------------------------------------------------------


def _queue(name="default"):
    return task_backends_for("default").queue(name)


def _keys(name="default"):
    return KeyBuilder("test").queue(name)


def _ready_ids(client, name="default"):
    return [Message.parse(raw, name).id for raw in client.zrange(_keys(name).ready, 0, -1)]


def _waiting_ids(client, name="default"):
    k = _keys(name)
    raws = client.zrange(k.ready, 0, -1) + client.zrange(k.delayed, 0, -1)
    return [Message.parse(raw, name).id for raw in raws]


def _ran(client, label):
    return [v.decode() for v in client.lrange(f"rt:ran:{label}", 0, -1)]


def _burst():
    call_command("run_worker", "--burst", verbosity=0)


_wait = wait_for


_env = worker_env


def _worker(redis_url, *, concurrency=1, prefetch=1):
    return start_worker(
        redis_url,
        concurrency=concurrency,
        prefetch=prefetch,
        output=False,
        args=("--shutdown-timeout", "20"),
    )


_stop = stop


def _replaced(result):
    result.refresh()
    return (
        result.status == TaskResultStatus.FAILED
        and bool(result.errors)
        and result.errors[-1].exception_class is TaskCancelled
        and "replaced by" in result.errors[-1].traceback
    )


@pytest.fixture
def aof_server(settings):
    """A server of our own, with AOF, which the test may stop, pause or restart (a shorter socket
    timeout than tests/django/test_task_outbox.py's: these tests pause it)."""
    server = RedisServer(extra=("--appendonly", "yes", "--appendfsync", "always")).start()
    settings.REDCOORD = {
        "URL": server.url,
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 0.5,
        "CONNECT_TIMEOUT": 0.5,
    }
    yield server
    server.cleanup()


def _client_of(server):
    from django_redcoord.core.transport.clients import client_from_url

    return client_from_url(server.url)


# -- keys: every character, errors, tasks and queues -------------------------------------------

ODD_KEYS = [
    "rapport:é✓🙂漢字",
    "a\nb",
    "a",
    "a\n",
    "nul\x00after",
    "pipe|x|1|2|3",
    "{braces}{tag}",
    "{",
    "}",
    "k\r\n\t\"'\\",
    "0|3|1700000000000|0|1|id\nbody",
    "x" * 1000,
    "é" * 1000,
    "🙂" * 1000,
    " ",
    "%d %s %%",
]


def test_keys_with_every_character_hold_and_are_freed(redis_client):
    firsts = {}
    for key in ODD_KEYS:
        first = rt.raw_key.enqueue(key, 1)
        again = rt.raw_key.enqueue(key, 2)
        assert again.id == first.id, f"key {key!r}: a duplicate was queued"
        assert again.args == [key, 1]
        firsts[key] = first.id
    assert len(set(firsts.values())) == len(ODD_KEYS), "two different keys collided"
    held = _queue().unique_keys()
    assert held == {f"{PATH}.raw_key:{k}": i for k, i in firsts.items()}
    backend = task_backends_for("default")
    for key, rid in firsts.items():
        assert backend.unique_of(rid) == (key, True)
    _burst()
    assert sorted(_ran(redis_client, "raw")) == ["1"] * len(ODD_KEYS)
    assert _queue().unique_keys() == {}
    for key, rid in firsts.items():
        assert backend.unique_of(rid) == (key, False)
        assert rt.raw_key.enqueue(key, 3).id != rid


def test_a_replace_with_odd_keys_marks_the_replaced_record(redis_client):
    for key in ("nul\x00after", "a\nb", "🙂" * 1000, "k\"'\\"):
        from django_redcoord.tasks.options import TaskOptions
        from django_redcoord.tasks.unique import unique_push

        # the replace path writes the key into JSON inside Lua (cjson): any character must do
        backend = task_backends_for("default")
        results = []
        for version in (1, 2):
            result, encoded = backend._prepare(rt.raw_key, [key, version], {})
            queue, push = backend._push(rt.raw_key, result, encoded, key)
            spec = unique_push(
                f"{PATH}.raw_key",
                key,
                TaskOptions(unique=key, while_running="replace"),
                deferred=False,
            )
            pushed, other, attempts = queue.push_unique_with_record(unique=spec, **push)
            if other:
                backend._replaced(other, result.id, key, attempts)
            results.append(result)
        assert _replaced(results[0]), key
        assert (
            key in results[0].errors[-1].traceback or repr(key) in results[0].errors[-1].traceback
        )
    assert _queue().depths().ready == 4
    _burst()
    assert _queue().unique_keys() == {}


def test_a_key_that_cannot_be_sent_is_refused_at_the_call_not_at_the_commit(redis_client):
    """A key with a lone surrogate is a Python str of 1 to 1000 characters, so the key check
    passes it; it cannot be sent to Redis (not UTF-8). enqueue() promises: everything that can
    be refused is refused at the call (with what is allowed), and inside a transaction nothing
    can fail at commit time but Redis itself. (The arguments here are clean: 1.)"""
    with pytest.raises((TypeError, ValueError)) as outside:
        rt.surrogate_keyed.enqueue(1)
    assert "unique" in str(outside.value), (
        f"the error does not say what is allowed: {outside.value!r}"
    )
    refused_at_call = None
    try:
        with transaction.atomic():
            try:
                rt.surrogate_keyed.enqueue(1)
            except (TypeError, ValueError) as exc:
                refused_at_call = exc
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"enqueue() accepted the key and the commit raised {exc!r}")
    assert refused_at_call is not None


def test_arguments_that_cannot_be_sent_are_refused_at_the_call_not_at_the_commit(redis_client):
    """The same for arguments: a lone surrogate passes to_json (ensure_ascii=False) and fails
    at the send: inside a transaction, at the commit, after the data was committed."""
    try:
        with transaction.atomic():
            try:
                rt.plain.enqueue("bad\ud800")
            except TypeError:
                pass
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"enqueue() accepted the arguments and the commit raised {exc!r}")


def test_a_key_function_that_raises_or_returns_a_non_string(redis_client):
    with pytest.raises(LookupError, match="no key for 1"):
        rt.raising_key.enqueue(1)
    with pytest.raises(LookupError), transaction.atomic():
        rt.raising_key.enqueue(2)  # raised at the call, inside the transaction
    for bad in (42, 4.5, True, "", "x" * 1001, ["a"], {"a": 1}):
        with pytest.raises(TypeError, match="must return None or a string of 1 to 1000") as info:
            rt.raw_key.enqueue(bad)
        assert repr(bad)[:50] in str(info.value)
    assert _queue().depths().ready == 0 and _queue().unique_keys() == {}
    a, b = rt.raw_key.enqueue(None), rt.raw_key.enqueue(None)  # None: that call is not unique
    assert a.id != b.id and _queue().depths().ready == 2 and _queue().unique_keys() == {}


def test_equal_keys_of_two_tasks_do_not_collide(redis_client):
    a1, b1 = rt.shared_a.enqueue(1), rt.shared_b.enqueue(1)
    assert a1.id != b1.id
    assert rt.shared_a.enqueue(2).id == a1.id and rt.shared_b.enqueue(2).id == b1.id
    assert _queue().unique_keys() == {
        f"{PATH}.shared_a:shared": a1.id,
        f"{PATH}.shared_b:shared": b1.id,
    }
    _burst()
    assert _ran(redis_client, "shared_a") == ["1"] and _ran(redis_client, "shared_b") == ["1"]
    assert _queue().unique_keys() == {}


def test_the_same_task_and_key_on_another_queue_is_another_key(redis_client):
    """Found by the red team against docs that said "per task": a key is per task *and queue*
    (its hash lives in the queue's own Cluster slot). The docs say so now; this holds it."""
    first = rt.until_finished.enqueue(1)
    other = rt.until_finished.using(queue_name="receipts").enqueue(2)
    assert other.id != first.id
    assert rt.until_finished.using(queue_name="receipts").enqueue(3).id == other.id
    assert rt.until_finished.enqueue(4).id == first.id


# -- transactions, enqueue_many, aenqueue --------------------------------------------------------


def test_a_unique_task_in_a_rolled_back_transaction_takes_no_key(redis_client):
    with pytest.raises(RuntimeError), transaction.atomic():
        inside = rt.until_finished.enqueue(1)
        raise RuntimeError("rolled back")
    assert _queue().unique_keys() == {} and _queue().depths().ready == 0
    with pytest.raises(RuntimeError), transaction.atomic():
        with transaction.atomic():  # a savepoint that commits, inside one that rolls back
            rt.until_finished.enqueue(2)
        raise RuntimeError("rolled back")
    assert _queue().unique_keys() == {} and _queue().depths().ready == 0
    after = rt.until_finished.enqueue(3)
    assert after.id != inside.id and _queue().unique_keys() == {
        f"{PATH}.until_finished:finished-key": after.id
    }


def test_enqueue_many_of_a_unique_task_sends_nothing_when_one_call_is_bad(redis_client):
    """docs: every call is checked and encoded first: one bad call and nothing is sent."""
    with pytest.raises(TypeError, match="JSON"):
        enqueue_many(rt.per_version, [((1,), {}), ((2,), {}), ((float("nan"),), {})])
    sent_before_bad_json = _queue().depths().ready
    with pytest.raises(TypeError, match=r"\(args, kwargs\) pairs"):
        enqueue_many(rt.per_version, [((3,), {}), ((4,), {}), ((5,),)])
    sent_before_bad_pair = _queue().depths().ready - sent_before_bad_json
    assert (sent_before_bad_json, sent_before_bad_pair) == (0, 0), (
        "enqueue_many() of a unique task sent the calls before the bad one"
    )


def test_enqueue_many_of_a_unique_task_inside_a_transaction(redis_client):
    with transaction.atomic():
        results = enqueue_many(rt.per_version, [((1,), {}), ((1,), {}), ((2,), {})])
        assert len({r.id for r in results}) == 3  # decided at the commit
    assert sorted(_ready_ids(redis_client)) == sorted([results[0].id, results[2].id])
    results[1].refresh()
    assert results[1].status == TaskResultStatus.FAILED
    assert results[1].errors[-1].exception_class is TaskDuplicate
    assert redis_client.hget(
        task_backends_for("default")._result_key(results[1].id), "duplicate_of"
    ) == (results[0].id.encode())
    _burst()
    assert sorted(_ran(redis_client, "per_version")) == ["1", "2"] and _queue().unique_keys() == {}


def test_aenqueue_on_the_event_loop_skip_replace_followup(redis_client):
    async def go():
        s1 = await rt.until_finished.aenqueue(1)
        s2 = await rt.until_finished.aenqueue(2)
        r1 = await rt.latest.aenqueue(1)
        r2 = await rt.latest.aenqueue(2)
        f1 = await rt.followup.aenqueue(1)
        f2 = await rt.followup.aenqueue(2)
        return s1, s2, r1, r2, f1, f2

    s1, s2, r1, r2, f1, f2 = asyncio.run(go())
    assert s1.id == s2.id and f1.id == f2.id and r1.id != r2.id
    assert _replaced(r1)
    assert r1.id not in _ready_ids(redis_client)
    _burst()
    assert _ran(redis_client, "latest") == ["2"]
    assert _ran(redis_client, "finished") == ["1"] and _ran(redis_client, "followup") == ["1"]
    assert _queue().unique_keys() == {}


# -- retries, priorities, run_after, cancel, dead letters ------------------------------------


def _fail_once(task):
    """Enqueue ``task`` and let a worker fail it once: it waits 60 s for its retry."""
    first = task.enqueue(1)
    _burst()
    k = _keys()
    assert _queue().depths().delayed == 1, "the failed attempt does not wait for a retry"
    return first, k


def test_skip_while_the_holder_waits_for_a_retry(redis_client):
    first, _ = _fail_once(rt.flaky_skip)
    assert rt.flaky_skip.enqueue(2).id == first.id
    assert _queue().unique_keys() == {f"{PATH}.flaky_skip:flaky-skip": first.id}
    assert cancel(first) is Cancel.REMOVED
    assert _queue().unique_keys() == {} and _queue().depths().delayed == 0
    second = rt.flaky_skip.enqueue(3)
    assert second.id != first.id


def test_replace_takes_out_a_holder_waiting_for_its_retry(redis_client):
    first, _ = _fail_once(rt.flaky_latest)
    second = rt.flaky_latest.enqueue(2)
    assert second.id != first.id
    assert _queue().depths().delayed == 0, "the replaced holder still waits for its retry"
    assert _waiting_ids(redis_client) == [second.id]
    assert _replaced(first)
    assert _queue().unique_keys() == {f"{PATH}.flaky_latest:flaky": second.id}


def test_replace_of_a_prioritised_holder_due_later(redis_client):
    later = utcnow() + timedelta(seconds=30)
    first = rt.latest.using(priority=50, run_after=later).enqueue(1)
    assert _queue().depths().delayed == 1
    second = rt.latest.using(priority=-20).enqueue(2)
    third = rt.latest.using(priority=100, run_after=later).enqueue(3)
    assert len({first.id, second.id, third.id}) == 3
    assert _waiting_ids(redis_client) == [third.id]
    assert _replaced(first) and _replaced(second)
    fourth = rt.latest.using(priority=-100).enqueue(4)
    assert _waiting_ids(redis_client) == [fourth.id] and _replaced(third)
    _burst()
    assert _ran(redis_client, "latest") == ["4"] and _queue().unique_keys() == {}


def test_run_after_beyond_unique_ttl_a_duplicate_is_queued_while_the_holder_still_waits(
    redis_client,
):
    """unique_ttl is "the safety net" for a stuck holder; a holder due later is not stuck, yet its
    key's TTL runs from the enqueue: past it, a second task of the key is queued while the
    first has not even come due (both will run)."""
    first = rt.later_ttl.using(run_after=utcnow() + timedelta(seconds=5)).enqueue(1)
    time.sleep(1.3)
    second = rt.later_ttl.enqueue(2)
    assert second.id == first.id, "the key expired while its holder waited to come due: two tasks"


def test_cancel_of_a_holder_then_a_new_enqueue(redis_client):
    first = rt.until_finished.enqueue(1)
    assert cancel(first) is Cancel.REMOVED and _queue().unique_keys() == {}
    second = rt.until_finished.enqueue(2)
    assert second.id != first.id and rt.until_finished.enqueue(3).id == second.id
    assert cancel(first) is Cancel.REMOVED  # again: changes nothing
    assert _queue().unique_keys() == {f"{PATH}.until_finished:finished-key": second.id}
    _burst()
    assert _ran(redis_client, "finished") == ["2"] and _queue().unique_keys() == {}


def test_a_requeued_dead_letter_runs_without_its_key(redis_client):
    """Found by the red team: a dead letter freed its key, and an operator's requeue puts it back
    without it, so a new task of the key is queued beside it. Kept, and documented ("Its limits"
    under Unique tasks): the requeue scripts cannot tell a message's key once it was freed."""
    first = rt.until_finished.enqueue(1)
    consumer = _queue().consumer("c1")
    (message,), _ = consumer.claim(1)
    assert consumer.nack(message, "boom", dead=True) == "dead"
    assert _queue().unique_keys() == {}
    assert _queue().requeue_dead_letter(first.id)
    second = rt.until_finished.enqueue(2)
    assert second.id != first.id and sorted(_waiting_ids(redis_client)) == sorted(
        [first.id, second.id]
    )


def test_a_stuck_holder_acknowledged_after_the_ttl_does_not_free_its_successors_key(redis_client):
    first = rt.short_ttl.enqueue(1)
    consumer = _queue().consumer("stuck")
    (message,), _ = consumer.claim(1)
    assert rt.short_ttl.enqueue(2).id == first.id
    time.sleep(0.6)
    second = rt.short_ttl.enqueue(3)
    assert second.id != first.id
    consumer.ack(message)
    consumer.flush()
    assert rt.short_ttl.enqueue(4).id == second.id
    assert _queue().unique_keys() == {f"{PATH}.short_ttl:short": second.id}
    _burst()
    assert _queue().unique_keys() == {}


def test_redis_restarted_with_aof_between_push_and_claim(aof_server):
    client = _client_of(aof_server)
    try:
        first = rt.until_finished.enqueue(1)
        r1 = rt.latest.enqueue(1)
        aof_server.stop()
        aof_server.start()
        assert rt.until_finished.enqueue(2).id == first.id
        r2 = rt.latest.enqueue(2)
        assert _replaced(r1) and _waiting_ids(client) == [first.id, r2.id]
        _burst()
        assert _ran(client, "finished") == ["1"] and _ran(client, "latest") == ["2"]
        assert _queue().unique_keys() == {}
    finally:
        client.close()


# -- the outbox ----------------------------------------------------------------------------------


def test_outbox_a_drain_racing_the_commits_own_send_pushes_once(outbox, redis_client):
    """The commit's send is not idempotent: if a drain (run_worker's, another process) takes the
    entry first, as it does for an entry older than 2 s (created_at is the enqueue, not the
    commit: a transaction that goes on 2 s after its enqueue), the task is pushed twice."""
    with transaction.atomic():
        transaction.on_commit(lambda: drain(outbox, min_age=0))  # runs just before the send
        result = rt.plain.enqueue(1)
    ids = _ready_ids(redis_client)
    assert ids.count(result.id) == 1, f"pushed {ids.count(result.id)} times"


def test_outbox_a_drain_racing_the_commits_own_send_of_a_unique_task(outbox, redis_client):
    with transaction.atomic():
        transaction.on_commit(lambda: drain(outbox, min_age=0))
        result = rt.outboxed.enqueue(1)
    assert _ready_ids(redis_client) == [result.id]
    result.refresh()
    dup = redis_client.hget(outbox._result_key(result.id), "duplicate_of")
    assert result.status == TaskResultStatus.READY, (
        f"its own record says {result.status}, duplicate_of {dup!r} (itself: {result.id})"
    )


def test_outbox_a_thousand_tasks_in_one_transaction(outbox, redis_client):
    started = time.monotonic()
    with transaction.atomic():
        results = [rt.plain.enqueue(i) for i in range(1000)]
        assert pending(outbox) == 1000
    took = time.monotonic() - started
    ids = _ready_ids(redis_client)
    assert len(ids) == 1000 and set(ids) == {r.id for r in results}
    assert pending(outbox) == 0
    assert drain(outbox, min_age=0) == (0, 0)
    assert took < 60


def test_outbox_a_unique_task_rolled_back_takes_no_key_and_leaves_no_entry(outbox, redis_client):
    with pytest.raises(RuntimeError), transaction.atomic():
        rt.outboxed.enqueue(1)
        assert pending(outbox) == 1
        raise RuntimeError("rolled back")
    assert pending(outbox) == 0 and _queue().unique_keys() == {} and _ready_ids(redis_client) == []


def test_outbox_drain_of_a_unique_task_while_redis_is_down_keeps_the_entry(outbox, aof_server):
    """drain(): "Stops at the first outage of Redis, leaving the rest for the next drain", and
    counts the entry's attempt; a unique entry's pre-check (a raw EXISTS) escapes as redis-py's
    own error instead."""
    aof_server.stop()
    with transaction.atomic():
        result = rt.outboxed.enqueue(1)
    assert pending(outbox) == 1
    try:
        outcome = drain(outbox, min_age=0)
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"drain() raised {type(exc).__module__}.{type(exc).__name__}: {exc}")
    assert outcome == (0, 0)
    assert OutboxEntry.objects.get(id=result.id).attempts == 1


def test_outbox_redis_paused_at_the_commit_an_unknown_outcome_is_pushed_once(outbox, aof_server):
    client = _client_of(aof_server)
    try:
        aof_server.pause()
        try:
            with transaction.atomic():
                plain = rt.plain.enqueue(1)
                unique = rt.outboxed.enqueue(1)
        finally:
            aof_server.resume()
        assert pending(outbox) == 2  # each send timed out: outcome unknown
        time.sleep(0.3)
        pushed, found = drain(outbox, min_age=0)
        assert pushed + found == 2 and pending(outbox) == 0
        ids = _ready_ids(client)
        assert sorted(ids) == sorted([plain.id, unique.id]), ids
        unique.refresh()
        assert unique.status == TaskResultStatus.READY
        _burst()
        assert _ran(client, "plain") == ["1"] and _ran(client, "outboxed") == ["1"]
        assert _queue().unique_keys() == {}
    finally:
        client.close()


def test_outbox_a_corrupt_entry_does_not_hold_up_the_others(outbox, aof_server):
    """One entry whose payload cannot be read (hand-edited, truncated, an older version's) and
    drain() raises on it at every turn: every entry after it is never sent."""
    OutboxEntry.objects.create(
        id="corrupt0000000000000000000000000",
        backend="default",
        queue="default",
        payload='{"body": ',
        created_at=utcnow() - timedelta(seconds=60),
    )
    aof_server.stop()
    with transaction.atomic():
        good = rt.plain.enqueue(1)
    aof_server.start()
    client = _client_of(aof_server)
    try:
        try:
            drain(outbox, min_age=0)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(
                f"drain() raised {type(exc).__name__}: {exc}; the good entry behind it waits "
                "forever"
            )
        assert _ready_ids(client) == [good.id]
        bad = OutboxEntry.objects.get(id="corrupt0000000000000000000000000")
        assert bad.last_error, "the corrupt entry says nothing of why it is not sent"
    finally:
        client.close()


def test_outbox_drain_of_a_task_whose_queue_is_no_longer_in_queues(outbox, aof_server, settings):
    aof_server.stop()
    with transaction.atomic():
        result = rt.plain.using(queue_name="receipts").enqueue(1)
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"OUTBOX": True},
        },
    }
    backend = task_backends_for("default")
    aof_server.start()
    client = _client_of(aof_server)
    try:
        drain(backend, min_age=0)
        entry = OutboxEntry.objects.filter(id=result.id).first()
        in_redis = result.id in _ready_ids(client, "receipts")
        assert in_redis or (entry is not None and "receipts" in entry.last_error), (
            "the committed task is neither in Redis nor kept with a reason"
        )
        assert not (in_redis and entry is not None)
    finally:
        client.close()


def test_outbox_replace_through_a_drain_never_runs_the_replaced(outbox, aof_server):
    client = _client_of(aof_server)
    try:
        first = rt.outboxed_replace.enqueue(1)  # outside a transaction: straight to Redis
        aof_server.stop()
        with transaction.atomic():
            second = rt.outboxed_replace.enqueue(2)
        aof_server.start()
        assert drain(outbox, min_age=0) == (1, 0)
        assert _waiting_ids(client) == [second.id]
        _burst()  # the worker settles the replaced record
        assert _ran(client, "outboxed-replace") == ["2"]
        assert _replaced(first)
        assert _queue().unique_keys() == {}
    finally:
        client.close()


# -- real workers --------------------------------------------------------------------------------


def test_until_started_frees_the_key_at_the_claim_even_when_prefetched(redis_url, redis_client):
    """Found by the red team: with prefetch > 1 a claimed task may wait behind another in the
    worker; until="started" frees the key when a worker claims it (the docs say so now: a
    prefetched task counts as started), so a duplicate is queued then, and after a SIGTERM
    hand-back both run."""
    rt.blocker.enqueue("b")
    first = rt.until_started.enqueue(1)
    worker = _worker(redis_url, prefetch=4)
    try:
        _wait("the blocker to run", lambda: _ran(redis_client, "blocker"), proc=worker)
        _wait("the unique task to be prefetched", lambda: _queue().depths().ready == 0, proc=worker)
        assert _ran(redis_client, "started") == []  # not started
        second = rt.until_started.enqueue(2)
        worker.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        redis_client.set("rt:release", 1)
        assert worker.wait(30) == 0
    finally:
        _stop(worker)
    _burst()
    ran = _ran(redis_client, "started")
    assert second.id != first.id and sorted(ran) == ["1", "2"]


def test_until_finished_survives_a_sigterm_hand_back(redis_url, redis_client):
    rt.blocker.enqueue("b")
    first = rt.until_finished.enqueue(1)
    worker = _worker(redis_url, prefetch=4)
    try:
        _wait("the blocker to run", lambda: _ran(redis_client, "blocker"), proc=worker)
        _wait("the unique task to be prefetched", lambda: _queue().depths().ready == 0, proc=worker)
        assert rt.until_finished.enqueue(2).id == first.id
        worker.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        redis_client.set("rt:release", 1)
        assert worker.wait(30) == 0
    finally:
        _stop(worker)
    assert _ready_ids(redis_client) == [first.id]  # handed back, still the holder
    assert rt.until_finished.enqueue(3).id == first.id
    _burst()
    assert _ran(redis_client, "finished") == ["1"] and _queue().unique_keys() == {}


def test_a_holder_dead_lettered_by_the_reaper_after_sigkills_frees_its_key(redis_url, redis_client):
    first = rt.slow_unique.enqueue(1)
    workers = []
    try:
        for n in (1, 2):
            worker = _worker(redis_url)
            workers.append(worker)
            _wait(f"run {n}", lambda n=n: len(_ran(redis_client, "slow")) == n, 45, worker)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(10)
            assert rt.slow_unique.enqueue(9).id == first.id  # still held
        reaper = _worker(redis_url)
        workers.append(reaper)
        _wait("the reaper to dead-letter it", lambda: _queue().depths().dead == 1, 30, reaper)
        _wait(  # (by a live worker's settle pass: kill them all first and nobody would)
            "its record to be settled",
            lambda: (first.refresh(), first.status)[1] == TaskResultStatus.FAILED,
            30,
            reaper,
        )
    finally:
        _stop(*workers)
    assert _queue().unique_keys() == {}
    assert rt.slow_unique.enqueue(10).id != first.id


def test_replace_racing_a_workers_claims_never_runs_a_replaced_task(redis_url, redis_client):
    worker = _worker(redis_url, concurrency=2, prefetch=1)
    results = []
    rng = random.Random(2026)
    try:
        rt.plain.enqueue("up")  # the worker is up and claiming before the race
        _wait("the worker to start", lambda: _ran(redis_client, "plain"), 60, worker)
        # 300 versions, then more in hundreds (up to 1,500) while the worker has claimed fewer
        # than 20: on a loaded machine a worker starved of CPU claims less of the race
        for version in range(1500):
            results.append(rt.latest.enqueue(version, 0.008))
            time.sleep(rng.uniform(0, 0.004))
            if version >= 299 and version % 100 == 99 and len(_ran(redis_client, "latest")) >= 20:
                break
        last = str(len(results) - 1)
        _wait(
            "the queue to drain",
            lambda: _queue().depths().ready + _queue().depths().processing == 0,
            60,
            worker,
        )
        _wait("the last version to run", lambda: last in _ran(redis_client, "latest"), 30, worker)
    finally:
        _stop(worker)
    ran = _ran(redis_client, "latest")
    assert len(ran) == len(set(ran)), "a version ran twice"
    replaced = [str(v) for v, r in enumerate(results) if _replaced(r)]
    assert len(replaced) >= 20, "few were replaced: the race proves little"
    assert len(ran) >= 20, "few were claimed: the race proves little"
    both = sorted(set(replaced) & set(ran), key=int)
    assert not both, f"replaced tasks that ran all the same: {both[:10]}"
    assert set(replaced) | set(ran) == {str(v) for v in range(len(results))}
    assert _queue().unique_keys() == {}


def test_one_followup_with_producer_threads_while_the_holder_runs(redis_url, redis_client):
    first = rt.followup.enqueue("first", -1)
    worker = _worker(redis_url)
    try:
        _wait("the holder to run", lambda: _ran(redis_client, "followup"), proc=worker)
        ids, errors = [], []

        def produce(n):
            try:
                for i in range(25):
                    ids.append(rt.followup.enqueue(f"{n}-{i}").id)
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=produce, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        assert len(ids) == 200 and first.id not in ids and len(set(ids)) == 1
        redis_client.set("rt:release", 1)
        _wait("both to run", lambda: len(_ran(redis_client, "followup")) == 2, 30, worker)
        _wait("the key to be freed", lambda: not _queue().unique_keys(), 10, worker)
    finally:
        _stop(worker)
    assert len(_ran(redis_client, "followup")) == 2
