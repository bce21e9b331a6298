"""Red team: enqueue_many() (96b0d92) and the claim-time attempt mark, TaskRunner.claimed (dd22c3b).

The defects found (non-string kwargs names; the marks of messages handed back unstarted) are
fixed; each test that showed one says "Before:". A third finding is kept and documented instead
(docs/verification.md, "Kept as counterexamples"): a requeued dead letter whose first
redelivery's worker dies keeps its old FAILED record.
"""

import logging
import os
import re
import signal
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import key_slot
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import TaskRunner, enqueue_many, task_backends_for

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

pytestmark = pytest.mark.django_db(transaction=True)


# -- tasks (module level: the worker imports them by path) ----------------------------------


@task()
def rt_adds(a, b=0):
    return a + b


#: the stop() of the in-process worker that runs rt_stops_its_worker
_STOPPERS = []


@task()
def rt_stops_its_worker():
    _STOPPERS[-1]()  # as SIGTERM does: run_worker's handler calls worker.stop()
    return "stopped"


def rt_no_retry(exc, result):
    return None


@task(max_attempts=3, backoff=rt_no_retry)
def rt_fails_while_flagged(label):
    if get_client().exists("rt-fail"):
        raise RuntimeError(f"flagged: {label}")
    return label


# -- helpers -----------------------------------------------------------------------------------


def _backend():
    return task_backends_for("default")


def _depths(name="default"):
    return _backend().queue(name).depths()


def _record(redis_client, result_id):
    return {
        k.decode(): v.decode()
        for k, v in redis_client.hgetall(f"test:task:{{{result_id}}}").items()
    }


def _ghost_claims(n, worker_id="ghost-worker"):
    """A worker that claims ``n`` messages, records them (Worker._one_round calls claimed() right
    after the claim), and dies before running any: its heartbeat lapses at once."""
    backend = _backend()
    consumer = backend.queue("default").consumer(f"{worker_id}.0", timeout=0.2)
    messages, _ = consumer.claim(n)
    runner = TaskRunner(backend, worker_id)
    runner.claimed(messages)
    return consumer, runner, messages


def _reap_ghosts():
    time.sleep(0.5)  # past the ghost's 0.2 s deadline
    return _backend().queue("default").reap()


# -- enqueue_many: inputs ------------------------------------------------------------------------


def test_enqueue_many_refuses_bad_shapes_and_sends_nothing(redis_client):
    bad = [
        {(1,): {}},  # a dict: iterating gives its keys
        [("12", {})],  # args as a string
        [((1,), [("b", 2)])],  # kwargs not a Mapping
        [((1,), {}), ((1,),)],  # a 1-tuple
        [((1,), {}), None],
    ]
    for calls in bad:
        with pytest.raises(TypeError, match=r"\(args, kwargs\) pairs"):
            enqueue_many(rt_adds, calls)

    def generator():
        yield (1,), {}
        raise RuntimeError("the caller's generator broke")

    with pytest.raises(RuntimeError):
        enqueue_many(rt_adds, generator())
    assert _depths().ready == 0 and not redis_client.keys("test:task:*")


def test_a_bad_value_in_the_middle_of_20000_sends_nothing_and_20000_good_ones_all_land(
    redis_client,
):
    calls = [((i,), {"b": 1}) for i in range(20_000)]
    calls[10_000] = ((1,), {"b": float("nan")})
    with pytest.raises(TypeError, match="JSON"):
        enqueue_many(rt_adds, calls)
    calls[10_000] = ((1,), {"b": {1, 2}})
    with pytest.raises(TypeError, match="JSON"):
        enqueue_many(rt_adds, calls)
    assert _depths().ready == 0 and not redis_client.keys("test:task:*")

    results = enqueue_many(rt_adds, (((i,), {"b": 1}) for i in range(20_000)))  # a generator
    assert len(results) == 20_000 and _depths().ready == 20_000
    ids = [r.id for r in results]
    assert len(set(ids)) == 20_000
    slot = key_slot(_backend().queue("default").keys.ready)
    assert all(re.fullmatch(r"[A-Za-z0-9]{32}", i) for i in ids)
    assert {key_slot(f"test:task:{{{i}}}") for i in ids[:500]} == {slot}
    assert all(r.enqueued_at is not None and r.status == TaskResultStatus.READY for r in results)
    assert _record(redis_client, ids[-1])["envelope"].endswith('"args":[19999],"kwargs":{"b":1}}')


def test_enqueue_many_kwargs_keys_must_be_strings(redis_client):
    """Before: enqueue_many() took kwargs whose keys are not strings ({1: 2}); json.dumps turns
    them into "1", so the task is stored as called with **{"1": 2}, which can never run (the
    worker's call raises TypeError and it is retried, then dead-lettered). enqueue() cannot get such
    kwargs (Python's ** refuses them), and the module promises arguments are refused at the call,
    never later. _call() checks only that kwargs is a Mapping. Fix:
    /tmp/redteam2/enqueue_many_kwargs.diff"""
    with pytest.raises(TypeError):
        enqueue_many(rt_adds, [((1,), {2: 3})])
    assert _depths().ready == 0


# -- enqueue_many: options -----------------------------------------------------------------------


def test_deferred_calls_land_in_delayed_with_records_that_outlive_run_after(redis_client):
    later = rt_adds.using(run_after=timezone.now() + timedelta(seconds=3600))
    results = enqueue_many(later, [((i,), {}) for i in range(5)])
    depths = _depths()
    assert depths.ready == 0 and depths.delayed == 5
    ttl = _backend().result_ttl
    for r in results:
        remaining = redis_client.ttl(f"test:task:{{{r.id}}}")
        assert ttl + 3590 <= remaining <= ttl + 3601, remaining
        assert _record(redis_client, r.id)["run_after"]
        assert r.task.run_after == later.run_after


def test_priorities_and_other_queues(redis_client):
    low = enqueue_many(rt_adds, [((1,), {})])
    high = enqueue_many(rt_adds.using(priority=50), [((2,), {}), ((3,), {})])
    receipts = enqueue_many(rt_adds.using(queue_name="receipts", priority=-5), [((4,), {})])
    assert _depths().ready == 3 and _depths("receipts").ready == 1
    assert _record(redis_client, high[0].id)["priority"] == "50"
    assert key_slot(f"test:task:{{{receipts[0].id}}}") == key_slot(
        _backend().queue("receipts").keys.ready
    )
    envelopes = redis_client.zrange(_backend().queue("default").keys.ready, 0, -1)
    order = [
        e.split(b"\n", 1)[0].rsplit(b"|", 1)[1].decode() for e in envelopes
    ]  # the ids, in delivery order
    assert order == [high[0].id, high[1].id, low[0].id]
    call_command("run_worker", "--burst", verbosity=0)
    for r, value in ((receipts[0], 4), (high[1], 3)):
        r.refresh()
        assert r.status == TaskResultStatus.SUCCESSFUL and r.return_value == value
        assert r.task.queue_name == ("receipts" if value == 4 else "default")


def test_inside_atomic_rollback_nothing_and_nested_savepoint_rollback_keeps_outer(redis_client):
    with transaction.atomic():
        enqueue_many(rt_adds, [((1,), {})])
        try:
            with transaction.atomic():
                enqueue_many(rt_adds, [((2,), {}), ((3,), {})])
                raise RuntimeError("inner")
        except RuntimeError:
            pass
        assert _depths().ready == 0
    assert _depths().ready == 1
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            enqueue_many(rt_adds, [((5,), {})])
            raise RuntimeError("outer")
    assert _depths().ready == 1


def test_a_task_of_another_backend_is_refused(redis_client, settings):
    settings.TASKS = {
        **settings.TASKS,
        "other": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"},
    }
    other = rt_adds.using(backend="other")
    with pytest.raises(TypeError, match="RedisTaskBackend"):
        enqueue_many(other, [((1,), {})])
    assert _depths().ready == 0


def test_a_prefix_change_between_calls_uses_the_new_prefix(redis_client, settings):
    first = enqueue_many(rt_adds, [((1,), {})])
    settings.REDCOORD = {**settings.REDCOORD, "KEY_PREFIX": "other"}
    second = enqueue_many(rt_adds, [((2,), {})])
    assert redis_client.exists(f"test:task:{{{first[0].id}}}")
    assert redis_client.exists(f"other:task:{{{second[0].id}}}")
    assert redis_client.zcard("other:queue:{default}:ready") == 1
    assert redis_client.zcard("test:queue:{default}:ready") == 1


def test_aenqueue_many_gives_async_callers_the_batch_too():
    # Noted by this red team as a gap (async callers had only aenqueue() one by one); since
    # filled: aenqueue_many() sends the batch in one pipeline
    # (tests/django/test_task_enqueue_many.py).
    import asyncio

    from django_redcoord.tasks import aenqueue_many

    results = asyncio.run(aenqueue_many(rt_adds, [((1,), {"b": 2}), ((3,), {})]))
    assert len({r.id for r in results}) == 2 and _depths().ready == 2


# -- the claim-time attempt mark -------------------------------------------------------------------


def test_unstarted_messages_handed_back_on_stop_record_no_attempt(redis_client):
    """Before: TaskRunner.claimed() wrote worker.N for every message of a claimed batch; a worker
    that stops (SIGTERM) after its first task hands the rest back (hand_back.lua: "the attempt not
    counted"), but nothing removed the worker.N it wrote for them (now: results.lua's 'unclaim').
    Their records then say attempts 1,
    worker_ids [the stopped worker] for tasks that never started, until (if ever) another worker
    claims them and overwrites worker.1. The same holds for the batch's rest released by the
    watchdog after a job timeout (consumer.release). Fix: /tmp/redteam2/claimed_hand_back.diff"""
    stopper = rt_stops_its_worker.enqueue()
    rest = enqueue_many(rt_adds, [((1,), {}), ((2,), {})])
    backend = _backend()
    worker = Worker(
        [backend.queue("default")], handler=None, prefetch=3, burst=True, shutdown_timeout=5
    )
    worker.handler = worker.write_behind = TaskRunner(backend, worker.id)
    _STOPPERS.append(worker.stop)
    try:
        stats = worker.run()
    finally:
        _STOPPERS.remove(worker.stop)
    assert stats.handed_back == 2 and _depths().ready == 2
    stopper.refresh()
    assert stopper.status == TaskResultStatus.SUCCESSFUL and stopper.worker_ids == [worker.id]
    for r in rest:
        r.refresh()
        assert r.status == TaskResultStatus.READY
        assert r.worker_ids == [] and r.attempts == 0, (
            f"never started, yet recorded: {r.worker_ids}"
        )


def test_prefetched_messages_of_a_killed_worker_count_as_deliveries(redis_client):
    """A worker claims a batch of 3 (WORKER_PREFETCH), claimed() records worker.1 for all 3, and the
    worker dies at once. The queue counts each reaped message as a delivery (toward max_attempts),
    and attempts (Django counts worker_ids) equals the deliveries, as docs/queues.md says: 2 each
    after the next worker runs them."""
    results = enqueue_many(rt_adds, [((i,), {}) for i in range(3)])
    _ghost_claims(3)
    assert _reap_ghosts()[0] == 3
    call_command("run_worker", "--burst", verbosity=0)
    for r in results:
        r.refresh()
        assert r.status == TaskResultStatus.SUCCESSFUL
    assert [r.attempts for r in results] == [2, 2, 2], [r.worker_ids for r in results]
    assert all(r.worker_ids[0] == "ghost-worker" for r in results)


def test_a_requeued_dead_letter_run_once_has_fresh_worker_ids(redis_client):
    redis_client.set("rt-fail", 1)
    result = rt_fails_while_flagged.enqueue("y")
    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    old = result.worker_ids
    assert result.status == TaskResultStatus.FAILED and len(old) == 1
    redis_client.delete("rt-fail")
    assert _backend().queue("default").requeue_dead() == 1
    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and not result.errors
    assert len(result.worker_ids) == 1 and result.worker_ids != old


def test_a_redelivered_message_whose_record_is_successful_is_left_alone(redis_client):
    # The task succeeded and its outcome landed, but the ack was lost (the worker died before its
    # next claim): the redelivery's claim-time mark, RUNNING mark and outcome must all be refused.
    result = rt_adds.enqueue(2, 3)
    consumer, runner, messages = _ghost_claims(1)
    runner(messages[0])
    runner.flush()
    before = _record(redis_client, result.id)
    assert before["status"] == "SUCCESSFUL" and before["worker.1"] == "ghost-worker"
    assert _reap_ghosts()[0] == 1
    call_command("run_worker", "--burst", verbosity=0)
    assert _record(redis_client, result.id) == before
    result.refresh()
    assert result.attempts == 1 and result.return_value == 5


def test_redis_down_during_the_mark_is_logged_and_the_worker_goes_on(
    redis_client, monkeypatch, caplog
):
    real = TaskRunner._send

    def flaky(self, writes, operation):
        if operation.startswith("record the attempts"):
            raise CoordinationUnavailable("Redis is away (test)")
        return real(self, writes, operation)

    monkeypatch.setattr(TaskRunner, "_send", flaky)
    results = enqueue_many(rt_adds, [((1,), {"b": 1}), ((2,), {})])
    with caplog.at_level(logging.WARNING, logger="django_redcoord.tasks"):
        call_command("run_worker", "--burst", verbosity=0)
    assert "could not record the attempts of claimed tasks (2)" in caplog.text
    for r, value in zip(results, (2, 2), strict=True):
        r.refresh()
        assert (
            r.status == TaskResultStatus.SUCCESSFUL and r.return_value == value and r.attempts == 1
        )


def test_attempts_equal_the_attempts_that_ran_on_retries(redis_client, settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }
    counter = "rt-count"

    result = rt_counts_and_fails_twice.enqueue(counter)
    deadline = time.monotonic() + 15
    while True:
        call_command("run_worker", "--burst", verbosity=0)
        result.refresh()
        if result.is_finished or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert int(redis_client.get(counter)) == 3 == result.attempts and len(result.errors) == 2


@task(max_attempts=5)
def rt_counts_and_fails_twice(counter):
    if get_client().incr(counter) < 3:
        raise RuntimeError("not yet")
    return os.getpid()


_ = signal  # (imported for readers: SIGTERM / SIGKILL are what the ghost and stop() stand for)
