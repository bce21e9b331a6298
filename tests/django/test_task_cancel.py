"""cancel(): a queued task never runs; a claimed one is told, its outcome dropped; the result is
final at once (FAILED, TaskCancelled). Real worker processes and real signals."""

import asyncio
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues import Queue
from django_redcoord.tasks import Cancel, TaskCancelled, acancel, cancel, task_backends_for
from tests.support import cancel_tasks
from tests.support.task_workers import start_worker, stop, wait_for

try:
    from django.tasks import TaskResultStatus
    from django.tasks.exceptions import TaskResultDoesNotExist
except ImportError:
    from django_tasks import TaskResultStatus
    from django_tasks.exceptions import TaskResultDoesNotExist

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def _backend():
    return task_backends_for("default")


def _keys():
    return KeyBuilder("test").queue("default")


def _is_cancelled(result):
    result.refresh()
    return (
        result.status == TaskResultStatus.FAILED
        and result.errors
        and result.errors[-1].exception_class is TaskCancelled
        and result.finished_at is not None
    )


def _stored(result, field):
    """A field of ``result``'s record as stored (None when absent)."""
    from django_redcoord.core.transport.clients import get_client

    return get_client().hget(_backend()._result_key(result.id), field)


_wait = wait_for


def _worker(redis_url, *, grace=30.0, threads=1):
    return start_worker(
        redis_url,
        settings="tests.support.cancel_settings",
        concurrency=threads,
        verbosity=1,
        REDCOORD_CANCEL_GRACE=str(grace),
    )


_stop = stop


# -- waiting tasks: taken out, never run ---------------------------------------------------


def test_a_ready_task_is_taken_out_and_never_runs(redis_client):
    result = cancel_tasks.counted.enqueue("a")
    kept = cancel_tasks.counted.enqueue("b")
    assert cancel(result) is Cancel.REMOVED
    assert (
        _is_cancelled(result) and result.attempts == 0 and _stored(result, "return_value") is None
    )
    assert _backend().queue("default").depths().ready == 1
    call_command("run_worker", "--burst", verbosity=0)
    assert redis_client.smembers("cancel:ran") == {b"b"}
    kept.refresh()
    assert kept.status == TaskResultStatus.SUCCESSFUL
    # cancelling again changes nothing and answers what the first cancel did (a lost reply
    # may be retried); a finished task is left as it is
    assert cancel(result) is Cancel.REMOVED and cancel(kept) is Cancel.FINISHED
    kept.refresh()
    assert kept.status == TaskResultStatus.SUCCESSFUL  # a finished task is left as it is


def test_a_delayed_task_and_a_task_waiting_for_its_retry_are_taken_out(redis_client, settings):
    from datetime import timedelta

    from django.utils import timezone

    later = cancel_tasks.counted.using(run_after=timezone.now() + timedelta(hours=1)).enqueue(
        "later"
    )
    assert _backend().queue("default").depths().delayed == 1
    assert cancel(later.id) is Cancel.REMOVED  # the id alone does too
    assert _backend().queue("default").depths().delayed == 0 and _is_cancelled(later)

    from tests.support import task_defs

    task_defs.TOLD["fail"] = True
    try:
        retried = task_defs.fails_while_told.enqueue("x")
        Queue("default", client=redis_client, prefix="test")  # (the queue exists)
        call_command("run_worker", "--burst", verbosity=0)  # the first attempt fails: a retry waits
        retried.refresh()
        assert retried.status == TaskResultStatus.READY and len(retried.errors) == 1
        assert redis_client.zcard(_keys().delayed) + redis_client.zcard(_keys().ready) == 1
        assert cancel(retried) is Cancel.REMOVED
        assert _is_cancelled(retried) and len(retried.errors) == 2  # its failure, then the cancel
        task_defs.TOLD["fail"] = False
        time.sleep(0.05)
        call_command("run_worker", "--burst", verbosity=0)
        retried.refresh()
        assert retried.status == TaskResultStatus.FAILED and retried.attempts == 1
    finally:
        task_defs.TOLD["fail"] = True


def test_unknown_and_odd_ids_do_not_exist_and_change_nothing(redis_client):
    for odd in ["", "nope", "x" * 32, "{tag}", "a\nb", "é" * 3]:
        with pytest.raises(TaskResultDoesNotExist):
            cancel(odd)
    assert redis_client.dbsize() == 0


def test_acancel_on_the_event_loop():
    result = cancel_tasks.counted.enqueue("async")

    async def go():
        return await acancel(result), await acancel(result)

    assert asyncio.run(go()) == (Cancel.REMOVED, Cancel.REMOVED)
    assert _is_cancelled(result)


# -- claimed tasks: told, dropped when they come back --------------------------------------


def test_a_claimed_task_handed_back_is_never_delivered_again(redis_client):
    result = cancel_tasks.counted.enqueue("claimed")
    consumer = _backend().queue("default").consumer("someone")
    messages, _ = consumer.claim(1)
    assert [m.id for m in messages] == [result.id]
    assert cancel(result) is Cancel.REQUESTED and _is_cancelled(result)
    assert redis_client.zscore(_keys().cancels, result.id) is not None
    consumer.release(messages)  # back to the front of the queue, as a stopping worker does
    assert redis_client.zcard(_keys().ready) == 1
    call_command("run_worker", "--burst", verbosity=0)
    assert redis_client.smembers("cancel:ran") == set()
    assert redis_client.zcard(_keys().ready) == 0 and redis_client.zcard(_keys().cancels) == 0
    assert _is_cancelled(result)


def test_an_acknowledged_cancelled_task_leaves_no_entry_behind(redis_client):
    result = cancel_tasks.counted.enqueue("acked")
    consumer = _backend().queue("default").consumer("someone")
    messages, _ = consumer.claim(1)
    assert cancel(result) is Cancel.REQUESTED
    consumer.ack(messages[0])
    consumer.flush()
    assert redis_client.zcard(_keys().cancels) == 0
    assert _is_cancelled(result)


def test_a_running_async_task_gets_cancelled_error_and_its_message_is_acknowledged(
    redis_url, redis_client
):
    result = cancel_tasks.waits_forever.enqueue("w")
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:w"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED and _is_cancelled(result)
        _wait(
            "CancelledError in the task",
            lambda: redis_client.get("cancel:saw-cancel:w"),
            10,
            worker,
        )
        assert redis_client.get("cancel:saw-cancel:w") == b"CancelledError"
        _wait("the acknowledgement", lambda: redis_client.zcard(_keys().cancels) == 0, 10, worker)
        depths = _backend().queue("default").depths()
        assert (depths.ready, depths.processing, depths.dead) == (0, 0, 0)
        assert _is_cancelled(result) and _stored(result, "return_value") is None
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=20)
        assert worker.returncode == 0, out
        assert "1 cancelled" in out
    finally:
        _stop(worker)


def test_a_task_that_swallows_the_cancel_has_its_return_value_dropped(redis_url, redis_client):
    result = cancel_tasks.swallows_the_cancel.enqueue("s")
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:s"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        _wait("the cancel to reach it", lambda: redis_client.get("cancel:saw-cancel:s"), 10, worker)
        _wait(
            "the acknowledgement",
            lambda: _backend().queue("default").depths().processing == 0,
            10,
            worker,
        )
        assert _is_cancelled(result) and _stored(result, "return_value") is None
    finally:
        _stop(worker)


def test_a_sync_task_sees_its_context_cancelled_and_its_outcome_is_dropped(redis_url, redis_client):
    result = cancel_tasks.looks_at_its_context.enqueue("c")
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:c"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        _wait("the task to see it", lambda: redis_client.get("cancel:saw-cancel:c"), 10, worker)
        assert redis_client.get("cancel:saw-cancel:c") == b"context True"  # and cancelled() too
        _wait(
            "the acknowledgement",
            lambda: _backend().queue("default").depths().processing == 0,
            10,
            worker,
        )
        assert _is_cancelled(result) and _stored(result, "return_value") is None
        assert worker.poll() is None  # the task returned within its grace: the worker goes on
    finally:
        _stop(worker)


def test_a_late_outcome_within_the_grace_is_dropped(redis_url, redis_client):
    result = cancel_tasks.ignores_the_cancel.enqueue("late", 1.5)
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:late"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        _wait("the task to finish", lambda: redis_client.exists("cancel:finished:late"), 10, worker)
        _wait(
            "the acknowledgement",
            lambda: _backend().queue("default").depths().processing == 0,
            10,
            worker,
        )
        time.sleep(0.2)  # (the outcome would be written before the next claim)
        assert _is_cancelled(result) and _stored(result, "return_value") is None
        assert worker.poll() is None
    finally:
        _stop(worker)


def test_a_sync_task_running_past_its_grace_takes_the_timeout_path(redis_url, redis_client):
    result = cancel_tasks.ignores_the_cancel.enqueue("stuck", 30)
    worker = _worker(redis_url, grace=1.0)
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:stuck"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        out, _ = worker.communicate(timeout=20)  # the worker exits to be restarted
        assert worker.returncode not in (0, None), out
        assert "was cancelled and still ran 1 s later" in out
        dead = _backend().queue("default").dead_letters()
        assert [m.id for m, _ in dead] == [result.id]
        assert "cancelled" in dead[0][1]["error"]
        assert _is_cancelled(result)
        assert not redis_client.exists("cancel:finished:stuck")
    finally:
        _stop(worker)


def test_a_cancelled_task_whose_worker_is_sigkilled_never_runs_again(redis_url, redis_client):
    result = cancel_tasks.ignores_the_cancel.enqueue("killed", 30)
    first = _worker(redis_url)
    second = None
    try:
        _wait("the task to start", lambda: redis_client.exists("cancel:started:killed"), proc=first)
        first_pid = redis_client.get("cancel:started:killed")
        assert cancel(result) is Cancel.REQUESTED
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        second = _worker(redis_url)
        # the reaper puts it back (WORKER_TIMEOUT 1 s); the claim drops it, and the zset entry with
        # it
        _wait("the claim to drop it", lambda: redis_client.zcard(_keys().cancels) == 0, 20, second)
        depths = _backend().queue("default").depths()
        assert (depths.ready, depths.processing, depths.dead) == (0, 0, 0)
        assert redis_client.get("cancel:started:killed") == first_pid  # it never started again
        assert _is_cancelled(result)
    finally:
        _stop(first, second)


# -- many workers, many cancels ------------------------------------------------------------


def _race(redis_url, redis_client, cancel_one, n=300, workers=8):
    """``n`` tasks drained by ``workers`` processes while each is cancelled with ``cancel_one``
    (in random order, as they run). Returns (ids cancel_one said were taken out, ids that ran,
    runs per id)."""
    results = [cancel_tasks.counted_slowly.enqueue(f"t{i}") for i in range(n)]
    label = {r.id: f"t{i}" for i, r in enumerate(results)}
    procs = [_worker(redis_url, threads=2) for _ in range(workers)]
    removed = set()
    try:
        _wait("a first task to run", lambda: redis_client.scard("cancel:ran") > 0, 60)
        order = results[:]
        random.Random(7).shuffle(order)
        for result in order[: n // 2]:
            if cancel_one(result) is Cancel.REMOVED:
                removed.add(label[result.id])
        _wait(
            "the queue to drain",
            lambda: (lambda d: d.ready + d.processing + d.delayed == 0)(
                _backend().queue("default").depths()
            ),
            60,
        )
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    ran = {m.decode() for m in redis_client.smembers("cancel:ran")}
    runs = {lbl: int(redis_client.get(f"cancel:runs:{lbl}") or 0) for lbl in label.values()}
    return removed, ran, runs, results


def test_under_eight_workers_no_task_taken_out_ever_runs(redis_url, redis_client):
    removed, ran, runs, results = _race(redis_url, redis_client, cancel)
    assert removed, "the race cancelled nothing while it was queued: it proves nothing"
    assert removed & ran == set()  # 0 of N
    assert max(runs.values()) <= 1  # and nothing ran twice (no worker died)
    statuses = {r.id: (r.refresh(), r.status)[1] for r in results}
    assert set(statuses.values()) <= {TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED}
    cancelled = {r.id for r in results if _is_cancelled(r)}
    assert len(cancelled) >= len(removed)
    assert redis_client.zcard(_keys().cancels) == 0  # every entry left with its claim or ack


def test_negative_control_a_cancel_that_only_marks_the_record_is_caught(redis_url, redis_client):
    """The same race with a cancel that only writes FAILED into the record (what a backend without
    the claim-time check does): the checker must see cancelled tasks run."""

    def mark_only(result):
        key = _backend()._result_key(result.id)
        if redis_client.hget(key, "status") in (b"READY", b"RUNNING"):
            redis_client.hset(key, mapping={"status": "FAILED"})
            return Cancel.REMOVED  # what it claims
        return Cancel.FINISHED

    removed, ran, _, _ = _race(redis_url, redis_client, mark_only)
    assert removed & ran, "the checker missed cancelled tasks that ran"


# -- operators: the command and the admin ---------------------------------------------------


def test_the_redcoord_task_command(capsys):
    result = cancel_tasks.counted.enqueue("cmd")
    call_command("redcoord", "task", "show", result.id)
    assert "READY" in capsys.readouterr().out
    call_command("redcoord", "task", "cancel", result.id)
    assert "taken out of its queue, it will not run" in capsys.readouterr().out
    call_command("redcoord", "task", "cancel", result.id)  # again: the same answer
    assert "taken out of its queue, it will not run" in capsys.readouterr().out
    done = cancel_tasks.counted.enqueue("done")
    call_command("run_worker", "--burst", verbosity=0)
    call_command("redcoord", "task", "cancel", done.id)
    assert "had finished already" in capsys.readouterr().out
    call_command("redcoord", "task", "show", result.id)
    assert "FAILED" in (out := capsys.readouterr().out) and "TaskCancelled" in out
    with pytest.raises(CommandError, match="no task result"):
        call_command("redcoord", "task", "cancel", "no-such-id\x1b[31m")
    with pytest.raises(CommandError, match="no TASKS backend"):
        call_command("redcoord", "task", "cancel", result.id, "--backend", "missing")


def test_the_admin_cancel_button(client, staff):
    result = cancel_tasks.counted.enqueue("admin")
    viewer = staff("view_dashboard")
    client.force_login(viewer)
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={result.id}")
    assert (
        page.status_code == 200 and b"rc-cancel-task" not in page.content
    )  # a viewer has no button
    assert (
        client.post(
            f"/admin/django_redcoord/dashboard/action/cancel-task/?name=default&id={result.id}",
            {"name": "default", "id": result.id},
        ).status_code
        == 403
    )
    editor = staff("change_dashboard")
    client.force_login(editor)
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={result.id}")
    assert b'id="rc-cancel-task"' in page.content
    confirm = client.get(
        f"/admin/django_redcoord/dashboard/action/cancel-task/?name=default&id={result.id}"
    )
    assert confirm.status_code == 200 and b"CANCEL_GRACE" in confirm.content
    assert _backend().queue("default").depths().ready == 1  # a GET only asks
    done = client.post(
        "/admin/django_redcoord/dashboard/action/cancel-task/",
        {"name": "default", "id": result.id},
        follow=True,
    )
    assert b"taken out of its queue" in done.content
    assert _is_cancelled(result)
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={result.id}")
    assert b"rc-cancel-task" not in page.content and b"TaskCancelled" in page.content
    for bad in ["", "x{y}", "nope"]:
        answer = client.post(
            "/admin/django_redcoord/dashboard/action/cancel-task/",
            {"name": "default", "id": bad},
            follow=True,
        )
        # back to the home page (a name refused), or to the result's page: 404, no such result
        assert answer.status_code in (200, 404) and b"Not done" in answer.content


# -- faults ---------------------------------------------------------------------------------


def test_cancel_against_a_redis_restarted_empty_is_does_not_exist(redis_servers, settings):
    from django_redcoord.core.exceptions import CoordinationUnavailable

    (server,) = redis_servers(1)
    settings.REDCOORD = {
        "URL": server.url,
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 1.0,
        "CONNECT_TIMEOUT": 0.5,
    }
    result = cancel_tasks.counted.enqueue("gone")
    server.stop()
    with pytest.raises(CoordinationUnavailable):
        cancel(result)
    server.start()
    with pytest.raises(TaskResultDoesNotExist):  # restarted without its data: the task is gone too
        cancel(result)
