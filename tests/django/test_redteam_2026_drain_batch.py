# ruff: noqa: F811 - the outbox fixtures are imported from tests/django/test_task_outbox.py
"""Red team: the batched outbox drain (9e6be0a, 1aeaeff), the runner's per-path cache and record-key
memo (54a4be6), and the Redlock guard's refusal window (b50864a).

Invariants: every committed task is in its queue exactly once, whatever the drain meets (another
drain, the commit-time send, a death between push and delete, an outage in the middle of a
pipeline, mixed queues); a row the drain cannot send stays with its error and holds up no other
row; counts add up (pushed + found over all drains = rows, pushed = distinct tasks).
"""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest
from django.db import transaction

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues import queue as queue_module
from django_redcoord.core.queues.messages import Message
from django_redcoord.core.queues.queue import Queue
from django_redcoord.outbox.drain import drain, pending
from django_redcoord.outbox.models import OutboxEntry
from django_redcoord.tasks import TaskRunner, task_backends_for
from django_redcoord.tasks.compat import utcnow
from django_redcoord.tasks.options import options_of
from tests.django.test_task_outbox import aof_server, outbox  # noqa: F401 - fixtures
from tests.support import unique_tasks

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

pytestmark = pytest.mark.django_db(transaction=True)


# -- tasks (module level: the runner imports them by path) -----------------------------------------


@task()
def rd_plain(n):
    return n * 2


@task(max_attempts=7)
def rd_seven(n):
    return n + 7


@task()
async def rd_async(n):
    return n + 100


# -- helpers ---------------------------------------------------------------------------------------


def _entries(backend, t, calls, *, age=10.0):
    """Rows as enqueue() writes them inside atomic() (the same code path), without the commit-time
    send: as if Redis was away at the commit. Returns their ids, oldest first."""
    ids = []
    for args in calls:
        result, encoded = backend._prepare(t, args, {})
        key = options_of(t).unique_key(result.args, result.kwargs)
        queue, push = backend._push(t, result, encoded, key)
        backend._to_outbox(t, result, queue, push, key)
        ids.append(result.id)
    now = utcnow()
    for i, rid in enumerate(ids):  # oldest first, in order, all older than MIN_AGE
        OutboxEntry.objects.filter(id=rid).update(
            created_at=now - timedelta(seconds=age) + timedelta(milliseconds=i)
        )
    return ids


def _queued(client, name="default"):
    """The ids waiting in queue ``name`` (ready and delayed), with repeats."""
    k = KeyBuilder("test").queue(name)
    raws = client.zrange(k.ready, 0, -1) + client.zrange(k.delayed, 0, -1)
    return [Message.parse(raw, name).id for raw in raws]


def _messages(client, name="default"):
    k = KeyBuilder("test").queue(name)
    return {
        m.id: m
        for m in (
            Message.parse(raw, name)
            for raw in client.zrange(k.ready, 0, -1) + client.zrange(k.delayed, 0, -1)
        )
    }


def _once(ids, queued):
    assert len(queued) == len(set(queued)), "a task was pushed twice"
    assert sorted(queued) == sorted(ids), (
        f"missing {set(ids) - set(queued)}, unexpected {set(queued) - set(ids)}"
    )


# -- two drains, a drain and the commit-time send ----------------------------------------------


def test_two_drains_interleaved_push_each_task_once_and_counts_add_up(outbox, monkeypatch):
    """Drain B runs entirely between drain A's first pipeline and the rest of A (two run_worker
    processes): every task is queued once, the pushes add up to the rows, and no row is left."""
    a = _entries(outbox, rd_plain, [(i,) for i in range(30)])
    b = _entries(outbox, rd_seven, [(i,) for i in range(20)], age=9)
    c = _entries(outbox, rd_plain.using(queue_name="receipts"), [(i,) for i in range(10)], age=8)
    u = _entries(outbox, unique_tasks.rebuild_report, [(i,) for i in range(3)], age=7)
    original = Queue.push_many_with_records
    inner, started = [], []

    def first_then_other_drain(self, pushes):
        done = original(self, pushes)
        if not started:
            started.append(1)
            inner.append(drain(outbox, min_age=0))  # B: sees every row, A's first batch landed
        return done

    monkeypatch.setattr(Queue, "push_many_with_records", first_then_other_drain)
    outer = drain(outbox, min_age=0)
    client = outbox.client
    _once(a + b + u, _queued(client))
    _once(c, _queued(client, "receipts"))
    total = len(a + b + c + u)
    (pushed_b, found_b), (pushed_a, found_a) = inner[0], outer
    assert pushed_a + pushed_b == total, (inner, outer)
    assert pushed_a + found_a == total and pushed_b + found_b == total, (inner, outer)
    assert pending(outbox) == 0


@pytest.mark.parametrize("kind", ["plain", "unique"])
def test_a_drain_that_runs_between_the_commit_and_its_send_sends_nothing_twice(outbox, kind):
    """A transaction open longer than MIN_AGE: its row is "old" the moment it commits, and a drain
    may take it before the commit's own send runs (here: an on_commit registered first)."""
    drained = []
    t = rd_plain if kind == "plain" else unique_tasks.rebuild_report
    with transaction.atomic():
        transaction.on_commit(lambda: drained.append(drain(outbox, min_age=0)))
        result = t.enqueue(41)
    assert drained == [(1, 0)]
    assert _queued(outbox.client) == [result.id]
    assert pending(outbox) == 0
    result.refresh()
    assert result.status == TaskResultStatus.READY


# -- deaths and outages -----------------------------------------------------------------------


def test_a_death_between_the_pushes_and_the_delete_of_a_mixed_batch_is_only_deleted(
    outbox, monkeypatch
):
    """Several queues, max_attempts, priorities, a due time and unique tasks in one drain; the
    process dies at the DELETE (its rows stay). The next drain finds every one sent: pushes none."""
    later = utcnow() + timedelta(hours=1)
    ids = _entries(outbox, rd_plain, [(i,) for i in range(12)])
    ids += _entries(outbox, rd_seven, [(i,) for i in range(5)], age=9)
    ids += _entries(outbox, rd_plain.using(priority=5), [(1,), (2,)], age=8.5)
    ids += _entries(outbox, rd_plain.using(run_after=later), [(3,)], age=8.2)
    uniq = _entries(outbox, unique_tasks.rebuild_report, [(i,) for i in range(3)], age=8)
    rec = _entries(outbox, rd_seven.using(queue_name="receipts"), [(i,) for i in range(4)], age=7)

    class Died(Exception):
        pass

    from django.db.models.query import QuerySet

    real_delete = QuerySet.delete

    def dies(self):
        if self.model is OutboxEntry:
            raise Died("killed between the push and the delete")
        return real_delete(self)

    monkeypatch.setattr(QuerySet, "delete", dies)
    with pytest.raises(Died):
        drain(outbox, min_age=0)
    monkeypatch.setattr(QuerySet, "delete", real_delete)
    assert pending(outbox) == len(ids + uniq + rec)
    assert drain(outbox, min_age=0) == (0, len(ids + uniq + rec))
    assert pending(outbox) == 0
    client = outbox.client
    _once(ids + uniq, _queued(client))
    _once(rec, _queued(client, "receipts"))
    got = {**_messages(client), **_messages(client, "receipts")}
    default_attempts = outbox.queue("default").max_attempts
    for rid in ids[:12]:
        assert got[rid].max_attempts == default_attempts and got[rid].priority == 0
    for rid in ids[12:17] + rec:
        assert got[rid].max_attempts == 7
    assert {got[r].priority for r in ids[17:19]} == {5}
    k = KeyBuilder("test").queue("default")
    due = client.zscore(k.delayed, next(r for r in client.zrange(k.delayed, 0, -1)))
    assert abs(due / 1000 - later.timestamp()) < 5 and len(client.zrange(k.delayed, 0, -1)) == 1


def test_an_outage_in_the_middle_of_a_pipeline_loses_nothing_and_sends_nothing_twice(
    outbox, monkeypatch
):
    """Half of a batch's pipeline lands, then the connection breaks: the batch's rows stay (one
    attempt counted), and the next drain pushes only the half that did not land."""
    ids = _entries(outbox, rd_plain, [(i,) for i in range(40)])
    real = queue_module.execute_pipeline

    def half_then_outage(client, build, *, operation):
        def first_half(pipe):
            build(pipe)
            del pipe.command_stack[20:]

        real(client, first_half, operation=operation)
        raise CoordinationUnavailable("connection lost mid-pipeline")

    monkeypatch.setattr(queue_module, "execute_pipeline", half_then_outage)
    assert drain(outbox, min_age=0) == (0, 0)
    assert len(_queued(outbox.client)) == 20
    assert set(OutboxEntry.objects.values_list("attempts", flat=True)) == {1}
    monkeypatch.setattr(queue_module, "execute_pipeline", real)
    assert drain(outbox, min_age=0) == (20, 20)
    _once(ids, _queued(outbox.client))
    assert pending(outbox) == 0


def test_redis_stopping_between_two_batches_leaves_the_rest_for_the_next_drain(
    outbox, aof_server, monkeypatch
):
    first = _entries(outbox, rd_plain, [(i,) for i in range(15)])
    second = _entries(outbox, rd_seven, [(i,) for i in range(15)], age=9)
    uniq = _entries(outbox, unique_tasks.rebuild_report, [(i,) for i in range(2)], age=8)
    original = Queue.push_many_with_records
    calls = []

    def stop_after_first(self, pushes):
        calls.append(len(pushes))
        done = original(self, pushes)
        if len(calls) == 1:
            aof_server.stop()
        return done

    monkeypatch.setattr(Queue, "push_many_with_records", stop_after_first)
    assert drain(outbox, min_age=0) == (15, 0)
    left = OutboxEntry.objects.all()
    assert sorted(e.id for e in left) == sorted(second + uniq)
    assert {e.attempts for e in left} == {1} and all(e.last_error for e in left)
    aof_server.start()
    monkeypatch.setattr(Queue, "push_many_with_records", original)
    assert drain(outbox, min_age=0) == (17, 0)
    _once(first + second + uniq, _queued(outbox.client))
    assert pending(outbox) == 0


def test_a_refused_row_keeps_its_own_error_when_a_later_batch_meets_an_outage(outbox, monkeypatch):
    """Was a defect (fixed: the drain leaves the rows it refused out of the outage's count): a row
    the queue refused in the first batch (kept, "cannot be read") was counted a second attempt and
    its error replaced by the outage's when a later batch of the same
    drain meets an outage: the operator reads "Redis cannot be reached" on a row that never will
    go."""
    good = _entries(outbox, rd_plain, [(i,) for i in range(3)])
    bad = OutboxEntry.objects.get(id=good[1])
    bad.payload = json.dumps({**json.loads(bad.payload), "priority": 500})
    bad.save()
    _entries(outbox, rd_seven, [(1,)], age=9)
    original = Queue.push_many_with_records

    def second_queue_away(self, pushes):
        if self.max_attempts == 7:
            raise CoordinationUnavailable("Redis away")
        return original(self, pushes)

    monkeypatch.setattr(Queue, "push_many_with_records", second_queue_away)
    drain(outbox, min_age=0)
    kept = OutboxEntry.objects.get(id=good[1])
    assert kept.attempts == 1, f"one drain counted {kept.attempts} attempts"
    assert "priority" in kept.last_error, kept.last_error


# -- what the drain cannot send must hold up nothing ------------------------------------------


def _with_bad_row(outbox, edit):
    """Good rows in two queues and a unique one, and one row (the oldest of its queue's batch)
    edited by ``edit(payload dict) -> new payload text``."""
    good = _entries(outbox, rd_plain, [(i,) for i in range(4)])
    bad = good.pop(0)
    row = OutboxEntry.objects.get(id=bad)
    row.payload = edit(json.loads(row.payload))
    row.save()
    good += _entries(outbox, rd_seven, [(i,) for i in range(3)], age=9)
    good += _entries(outbox, unique_tasks.rebuild_report, [(1,)], age=8)
    return bad, good


HOSTILE = {
    "a JSON list": lambda p: "[]",
    "JSON null": lambda p: "null",
    "a JSON string": lambda p: json.dumps("text"),
    "a unique spec that is a string": lambda p: json.dumps({**p, "unique": "report:1"}),
    "a TTL of 1e999 (JSON's Infinity)": lambda p: json.dumps({**p}).replace(
        f'"ttl": {p["ttl"]}', '"ttl": 1e999'
    ),
    "a record field of null": lambda p: json.dumps({**p, "record": {**p["record"], "x": None}}),
    "a record field of true": lambda p: json.dumps({**p, "record": {**p["record"], "x": True}}),
}


@pytest.mark.parametrize("what", list(HOSTILE))
def test_a_hostile_payload_is_kept_with_its_error_and_holds_up_no_other_row(outbox, what):
    """Was a defect (fixed: drain.UNREADABLE, and _read checks the payload's shape): docs/queues.md
    promises that a row the queue refuses "stays, with its error in last_error; the rows beside it
    go on". These payloads raised out of drain() instead (an
    AttributeError, OverflowError or redis DataError, none of ValueError/KeyError/TypeError):
    every drain fails the same way, and the other rows never go."""
    bad, good = _with_bad_row(outbox, HOSTILE[what])
    for _ in range(2):
        try:
            drain(outbox, min_age=0)
        except Exception as exc:  # noqa: BLE001 - run_worker's drain_until logs and goes on
            raised = exc
        else:
            raised = None
    queued = _queued(outbox.client)
    assert sorted(queued) == sorted(good), (
        f"{len(set(good) - set(queued))} of {len(good)} good rows never sent; drain raised "
        f"{raised!r}"
    )
    assert [e.id for e in OutboxEntry.objects.all()] == [bad]
    assert OutboxEntry.objects.get(id=bad).last_error


def test_500_refused_rows_at_the_head_stall_every_row_behind_them(outbox):
    """Was a defect (fixed: refused rows are read apart, ten per drain, after the others): a drain
    read the 500 oldest rows; rows the queue refuses stay where they are, oldest, forever. Once
    500 of them piled up (a release
    whose payloads the queue refuses, hand edits), no drain ever reaches a newer row: the outbox
    stops, silently (each drain only counts another attempt on the refused ones)."""
    refused = _entries(outbox, rd_plain, [(i,) for i in range(500)], age=30)
    OutboxEntry.objects.filter(id__in=refused).update(
        payload=json.dumps({"not": "a payload this version reads"})
    )
    good = _entries(outbox, rd_plain, [(1,)], age=10)
    for _ in range(3):
        drain(outbox)  # as run_worker's drain_until: the default limit
    assert _queued(outbox.client) == good, "a committed task never left the outbox"


def test_more_rows_than_one_delete_takes_are_all_sent_once_and_deleted(outbox):
    ids = _entries(outbox, rd_plain, [(i,) for i in range(1200)])
    assert drain(outbox, limit=1200, min_age=0) == (1200, 0)
    assert pending(outbox) == 0
    _once(ids, _queued(outbox.client))


# -- the runner's per-path cache, the record-key memo -------------------------------------------


def _claim_and_run(runner, backend, queue="default", n=10):
    consumer = backend.queue(queue).consumer(f"rd-worker.{time.monotonic_ns()}", timeout=5)
    messages, _ = consumer.claim(n)
    for message in messages:
        runner(message)
    runner.flush()
    runner.written()
    return messages


def test_one_runner_runs_sync_async_and_using_variants_by_the_same_paths(redis_client, settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "receipts"],
        },
    }
    backend = task_backends_for("default")
    runner = TaskRunner(backend, "rd-worker")
    results = [rd_plain.enqueue(1), rd_async.enqueue(2), rd_plain.using(priority=9).enqueue(3)]
    _claim_and_run(runner, backend)
    results += [rd_async.enqueue(4), rd_plain.enqueue(5)]  # cached paths now
    _claim_and_run(runner, backend)
    other = [rd_async.using(queue_name="receipts").enqueue(6), rd_seven.enqueue(7)]
    _claim_and_run(runner, backend, "receipts")
    _claim_and_run(runner, backend)
    for r in results + other:
        r.refresh()
    assert [r.status for r in results + other] == [TaskResultStatus.SUCCESSFUL] * 7
    assert [r.return_value for r in results + other] == [2, 102, 6, 104, 10, 106, 14]


def test_the_record_key_memo_follows_the_prefix_and_survives_its_reset(redis_client, settings):
    backend = task_backends_for("default")
    ids = [backend._new_id("default", f"{i:029d}") for i in range(5000)]
    assert [backend._result_key(i) for i in ids] == [f"test:task:{{{i}}}" for i in ids]
    assert backend._result_key(ids[0]) == f"test:task:{{{ids[0]}}}"  # after the 4096 reset
    settings.REDCOORD = {**settings.REDCOORD, "KEY_PREFIX": "other"}
    assert backend._result_key(ids[4999]) == f"other:task:{{{ids[4999]}}}"
    assert backend._result_key(ids[0]) == f"other:task:{{{ids[0]}}}"
    settings.REDCOORD = {**settings.REDCOORD, "KEY_PREFIX": "test"}
    assert backend._result_key(ids[0]) == f"test:task:{{{ids[0]}}}"


# -- the Redlock guard's refusal window ----------------------------------------------------------


@pytest.mark.parametrize("fraction", [0.05, 0.5, 0.93])
def test_a_restarted_master_refuses_one_max_ttl_from_its_start_and_at_most_a_second_more(fraction):
    """Started at any point of a wall-clock second, the master refuses until at least one max TTL
    after it started (never less: a forgotten grant could still live), and not for more than one
    max TTL and a second after the moment it was asked to start (the documented excess)."""
    from django_redcoord.core.exceptions import QuorumNotReached
    from django_redcoord.core.redlock import Redlock, trust_masters
    from django_redcoord.core.transport.clients import client_from_url
    from tests.support.redis_servers import RedisServer

    server = RedisServer().start()
    client = client_from_url(server.url, socket_timeout=0.5, connect_timeout=0.5)
    try:
        trust_masters([client], prefix="t")
        server.kill()
        while abs(time.time() % 1 - fraction) > 0.02:
            time.sleep(0.005)
        before = time.time()
        server.start()
        lock = Redlock("probe", clients=[client], prefix="t", wait=0, ttl=3, max_ttl=3)
        with pytest.raises(QuorumNotReached) as caught:
            lock.acquire()
        asked = time.time()
        (why,) = caught.value.errors.values()
        left = float(re.search(r"refuses quorum grants for (\d+\.\d+) s more", why).group(1))
        ends = asked + left  # (the message rounds to 0.1 s; asked is after the reply)
        assert ends >= before + 3 - 0.06, f"ends {ends - before:.2f} s after the start, < 3 s"
        assert ends <= before + 3 + 1.0 + 0.3, f"ends {ends - before:.2f} s after the start"
    finally:
        client.close()
        server.cleanup()
