"""The outbox: a task enqueued inside atomic() is written to a table in the same transaction, so
a Redis that is down at the commit loses nothing, and a drain never pushes a task twice."""

import os
import threading
import time

import pytest
from django.db import transaction

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues.messages import Message
from django_redcoord.outbox.drain import drain, pending
from django_redcoord.outbox.models import OutboxEntry
from django_redcoord.tasks import task_backends_for
from tests.support import task_defs, unique_tasks
from tests.support.redis_servers import RedisServer

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def outbox(settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "receipts"],
            "OPTIONS": {"OUTBOX": True},
        },
    }
    return task_backends_for("default")


@pytest.fixture
def aof_server(settings):
    """A server of our own, with AOF (what a stop must not lose), for the outage tests."""
    server = RedisServer(extra=("--appendonly", "yes", "--appendfsync", "always")).start()
    settings.REDCOORD = {
        "URL": server.url,
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 2.0,
        "CONNECT_TIMEOUT": 0.5,
    }
    yield server
    server.cleanup()


def _ready_ids(backend):
    client = backend.client
    return [
        Message.parse(raw, "default").id
        for raw in client.zrange(KeyBuilder("test").queue("default").ready, 0, -1)
    ]


def test_the_entry_commits_with_the_transaction_and_goes_once_sent(outbox):
    with transaction.atomic():
        result = task_defs.add.enqueue(1, 2)
        assert OutboxEntry.objects.filter(id=result.id).exists()  # in the transaction
        assert _ready_ids(outbox) == []  # sent at the commit
    assert _ready_ids(outbox) == [result.id] and pending(outbox) == 0
    with pytest.raises(RuntimeError), transaction.atomic():
        task_defs.add.enqueue(3, 4)
        raise RuntimeError("rolled back")
    assert pending(outbox) == 0 and len(_ready_ids(outbox)) == 1
    outside = task_defs.add.enqueue(5, 6)  # no transaction: sent at once, no entry
    assert pending(outbox) == 0 and outside.id in _ready_ids(outbox)


def test_a_task_cancelled_in_its_transaction_leaves_no_entry_and_is_never_sent(outbox):
    from django_redcoord.tasks import Cancel, cancel

    with transaction.atomic():
        kept = task_defs.add.enqueue(1, 2)
        dropped = task_defs.add.enqueue(3, 4)
        assert cancel(dropped) is Cancel.REMOVED
        assert not OutboxEntry.objects.filter(id=dropped.id).exists()
    assert _ready_ids(outbox) == [kept.id] and pending(outbox) == 0
    assert drain(outbox, min_age=0) == (0, 0) and _ready_ids(outbox) == [kept.id]


def test_a_cancel_in_a_rolled_back_savepoint_still_stands_with_the_outbox(outbox):
    """The cancel's delete of the outbox row went with the savepoint, the cancel itself did
    not: the commit skipped the send but left the row, and the next drain sent the task."""
    from django_redcoord.tasks import Cancel, cancel

    with transaction.atomic():
        dropped = task_defs.add.enqueue(3, 4)
        with pytest.raises(RuntimeError), transaction.atomic():
            assert cancel(dropped) is Cancel.REMOVED
            raise RuntimeError("roll the savepoint back")
    assert pending(outbox) == 0 and _ready_ids(outbox) == []
    assert drain(outbox, min_age=0) == (0, 0) and _ready_ids(outbox) == []


def test_redis_down_at_the_commit_loses_nothing(outbox, aof_server, caplog):
    aof_server.stop()
    with transaction.atomic():  # the commit succeeds: the task waits in the outbox
        result = task_defs.add.enqueue(2, 2)
    assert "waits in the outbox" in caplog.text
    assert pending(outbox) == 1
    assert drain(outbox, min_age=0) == (0, 0)  # still away: the entry stays, its error noted
    entry = OutboxEntry.objects.get(id=result.id)
    assert entry.attempts == 1 and entry.last_error
    aof_server.start()
    assert drain(outbox, min_age=0) == (1, 0) and pending(outbox) == 0
    assert _ready_ids(outbox) == [result.id]
    from django.core.management import call_command

    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 4


def test_enqueue_many_inside_a_transaction_goes_through_the_outbox_too(outbox, aof_server):
    # enqueue_many() skipped the outbox: with Redis down at the commit, its tasks were lost
    # while enqueue()'s waited in the outbox.
    aof_server.stop()
    with transaction.atomic():
        one = task_defs.add.enqueue(1, 1)
        many = task_defs.add.get_backend().enqueue_many(task_defs.add, [((2, 2), {}), ((3, 3), {})])
    assert pending(outbox) == 3
    aof_server.start()
    assert drain(outbox, min_age=0) == (3, 0) and pending(outbox) == 0
    assert sorted(_ready_ids(outbox)) == sorted(r.id for r in (one, *many))


def test_an_entry_whose_push_landed_is_only_deleted(outbox):
    with transaction.atomic():
        result = task_defs.add.enqueue(1, 1)
        entry = OutboxEntry.objects.get(id=result.id)
    # the process died between the push and the delete: the entry is back, the push landed
    entry.save()
    assert drain(outbox, min_age=0) == (0, 1) and pending(outbox) == 0
    assert _ready_ids(outbox) == [result.id]  # once


def test_a_young_entry_is_left_to_its_own_commit(outbox):
    with transaction.atomic():
        task_defs.add.enqueue(1, 1)
        # a drain inside the transaction (another process) cannot see it; after: it is sent
    assert drain(outbox) == (0, 0)


def test_unique_tasks_through_the_outbox(outbox, aof_server):
    aof_server.stop()
    with transaction.atomic():
        first = unique_tasks.rebuild_index.enqueue(1)
    with transaction.atomic():
        second = unique_tasks.rebuild_index.enqueue(2)
    assert pending(outbox) == 2
    aof_server.start()
    assert drain(outbox, min_age=0) == (1, 1)  # the second found the key held: a duplicate
    assert _ready_ids(outbox) == [first.id]
    second.refresh()
    assert second.status == TaskResultStatus.FAILED  # (TaskDuplicate, naming the holder)


def test_a_drain_sends_a_queue_in_one_batch_and_keeps_an_entry_the_queue_refuses(
    outbox, aof_server
):
    """The plain entries of a queue go in one pipeline; one whose push the queue refuses (a
    priority out of range, as a hand-edited row could hold) is kept with its error, and the
    entries beside it in the same batch are sent once each, twice drained."""
    import json

    aof_server.stop()
    ids = []
    for i in range(5):
        with transaction.atomic():
            ids.append(task_defs.add.enqueue(i, 0).id)
    bad = OutboxEntry.objects.get(id=ids[2])
    bad.payload = json.dumps({**json.loads(bad.payload), "priority": 500})
    bad.save()
    worse = OutboxEntry.objects.get(id=ids[4])  # a queue name no queue can have: oldest-first
    worse.queue = "no spaces allowed here"  # must not hold up the rows behind it
    worse.save()
    aof_server.start()
    assert drain(outbox, min_age=0) == (3, 0)
    assert drain(outbox, min_age=0) == (0, 0)  # the kept ones are refused again, nothing twice
    assert sorted(_ready_ids(outbox)) == sorted(ids[:2] + ids[3:4])
    kept = OutboxEntry.objects.get(id=ids[2])
    assert pending(outbox) == 2 and kept.attempts >= 2 and "priority" in kept.last_error
    assert OutboxEntry.objects.get(id=ids[4]).last_error


def test_bad_outbox_options_are_reported(settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"OUTBOX": "nope"},
        }
    }
    assert any(
        "OUTBOX names database 'nope'" in e.msg for e in task_backends_for("default").check()
    )
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"OUTBOX": 3},
        }
    }
    assert any(
        "OUTBOX must be True, False or a database alias" in e.msg
        for e in task_backends_for("default").check()
    )


OUTAGE = float(os.environ.get("REDCOORD_OUTBOX_OUTAGE", "60"))


@pytest.mark.timeout(120 + 2 * OUTAGE)  # the outage itself is wall time
def test_ten_thousand_commits_around_a_redis_stopped_for_a_minute(outbox, aof_server):
    """10,000 transactions, one task each (every tenth rolled back); Redis is stopped at the
    2,000th and started again OUTAGE seconds later (60 by default), while the commits go on,
    with a drain every 100 commits (in this thread: SQLite's in-memory test database locks its
    tables against a second connection). In the end each committed task is in its queue exactly
    once, and no rolled-back one is."""
    committed, rolled_back = [], []
    restarted = threading.Event()

    def outage():
        aof_server.stop()
        time.sleep(OUTAGE)
        aof_server.start()
        restarted.set()

    stopper = threading.Thread(target=outage)
    try:
        for i in range(10_000):
            if i == 2_000:
                stopper.start()
            try:
                with transaction.atomic():
                    result = task_defs.add.enqueue(i, 0)
                    if i % 10 == 9:
                        raise ValueError("rolled back")
                committed.append(result.id)
            except ValueError:
                rolled_back.append(result.id)
            if i % 100 == 99:
                drain(outbox, min_age=0.5)
        assert restarted.wait(OUTAGE + 30), "Redis did not come back"
        deadline = time.monotonic() + 60
        while pending(outbox):
            assert time.monotonic() < deadline, f"{pending(outbox)} entries never drained"
            drain(outbox, min_age=0)
    finally:
        stopper.join(OUTAGE + 30)
    ids = _ready_ids(outbox)
    assert len(committed) == 9_000 and len(rolled_back) == 1_000
    assert len(ids) == len(set(ids)), "a task was pushed twice"
    assert set(ids) == set(committed), (
        len(set(committed) - set(ids)),
        len(set(ids) - set(committed)),
    )


def test_the_outbox_command(outbox, aof_server, capsys):
    from django.core.management import call_command

    aof_server.stop()
    with transaction.atomic():
        task_defs.add.enqueue(1, 1)
    call_command("redcoord", "outbox", "show")
    assert "1 task(s) waiting" in capsys.readouterr().out
    aof_server.start()
    call_command("redcoord", "outbox", "drain")
    assert "1 task(s) sent, 0 found sent already, 0 left" in capsys.readouterr().out


def test_run_workers_drainer_sends_what_waits(outbox, aof_server):
    from datetime import timedelta

    from django_redcoord.outbox.drain import drain_until

    aof_server.stop()
    with transaction.atomic():
        result = task_defs.add.enqueue(1, 1)
    OutboxEntry.objects.filter(id=result.id).update(
        created_at=result.enqueued_at - timedelta(seconds=5)
    )
    aof_server.start()
    turns = []
    drain_until(outbox, lambda: turns.append(1) or len(turns) > 1, interval=0.01)  # one turn
    assert pending(outbox) == 0 and _ready_ids(outbox) == [result.id]
