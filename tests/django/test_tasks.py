"""The Django Tasks API through our Redis backend (and manage.py run_worker)."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from django.utils import timezone

from django_redcoord.core.queues import Queue

from ..support import task_defs

try:
    from django.tasks import TaskResultStatus
    from django.tasks.exceptions import TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
except ImportError:
    from django_tasks import TaskResultStatus
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fast_retries(settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }


def work(*queues):
    call_command("run_worker", *queues, "--burst", verbosity=0)


def work_until_finished(result, rounds=50):
    """Run burst workers until ``result`` is final (retries wait a few ms)."""
    for _ in range(rounds):
        work()
        result.refresh()
        if result.is_finished:
            return
        time.sleep(0.03)


def test_enqueue_then_run_then_get_the_result():
    result = task_defs.add.enqueue(2, b=3)
    assert result.status == TaskResultStatus.READY and result.enqueued_at is not None
    fetched = task_defs.add.get_result(result.id)
    assert (
        fetched.status == TaskResultStatus.READY
        and fetched.args == [2]
        and fetched.kwargs == {"b": 3}
    )
    work()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 5
    assert (
        result.started_at <= result.finished_at
        and len(result.worker_ids) == 1
        and result.errors == []
    )


def test_aenqueue_and_aget_result_run_on_the_event_loop(monkeypatch):
    """The async API sends the same command and reads the same record itself: it
    never falls back to the sync methods in a thread (Django's default)."""
    import asyncio

    from django_redcoord.tasks import RedisTaskBackend

    def refuse(*args, **kwargs):
        raise AssertionError("the sync method was called from the async API")

    monkeypatch.setattr(RedisTaskBackend, "enqueue", refuse)
    monkeypatch.setattr(RedisTaskBackend, "get_result", refuse)

    async def send_and_read():
        result = await task_defs.add.aenqueue(2, b=3)
        fetched = await task_defs.add.aget_result(result.id)
        with pytest.raises(TaskResultDoesNotExist):
            await task_defs.add.aget_result("no-such-result")
        return result, fetched

    result, fetched = asyncio.run(send_and_read())
    assert (
        fetched.status == TaskResultStatus.READY
        and fetched.args == [2]
        and fetched.kwargs == {"b": 3}
    )
    assert fetched.enqueued_at == result.enqueued_at
    monkeypatch.undo()
    work()

    async def read_done():
        await result.arefresh()
        return result

    done = asyncio.run(read_done())
    assert done.status == TaskResultStatus.SUCCESSFUL and done.return_value == 5


def test_unknown_result_id_raises_does_not_exist():
    with pytest.raises(TaskResultDoesNotExist):
        task_defs.add.get_result("no-such-result")


def test_run_after_defers_the_task():
    result = task_defs.add.using(run_after=timezone.now() + timedelta(seconds=0.6)).enqueue(1, 1)
    work()
    result.refresh()
    assert result.status == TaskResultStatus.READY
    time.sleep(0.7)
    work()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL


def test_priority_orders_the_queue(redis_client):
    task_defs.record_low.enqueue("low")
    task_defs.record.enqueue("normal")
    task_defs.record_high.enqueue("high")
    task_defs.record.using(priority=50).enqueue("urgent")
    work()
    assert redis_client.lrange("ran", 0, -1) == [b"urgent", b"high", b"normal", b"low"]


def test_status_transitions_and_signals():
    seen = []

    def on(name):
        def receiver(sender, task_result, **kwargs):
            seen.append((name, str(task_result.status)))

        return receiver

    receivers = [
        (task_enqueued, on("enqueued")),
        (task_started, on("started")),
        (task_finished, on("finished")),
    ]
    for signal_, receiver in receivers:
        signal_.connect(receiver)
    try:
        task_defs.add.enqueue(1, 2)
        work()
    finally:
        for signal_, receiver in receivers:
            signal_.disconnect(receiver)
    assert seen == [("enqueued", "READY"), ("started", "RUNNING"), ("finished", "SUCCESSFUL")]


def test_failing_task_is_retried_then_failed_and_dead_lettered():
    result = task_defs.always_fails.enqueue("broken")
    work_until_finished(result)
    assert result.status == TaskResultStatus.FAILED
    assert len(result.errors) == 3 and len(result.worker_ids) == 3
    assert (
        result.errors[-1].exception_class is RuntimeError
        and "broken" in result.errors[-1].traceback
    )
    [(message, error)] = Queue("default").dead_letters()
    assert message.id == result.id and "RuntimeError: broken" in error["error"]


def test_context_sees_the_attempt_and_a_retry_succeeds():
    result = task_defs.knows_its_attempt.enqueue(fail_first=True)
    work_until_finished(result)
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert result.return_value == {"attempt": 2, "id": result.id}  # the delivery that succeeded
    assert len(result.errors) == 1 and len(result.worker_ids) == 2


def test_async_task_runs():
    result = task_defs.async_add.enqueue(4, 5)
    work()
    result.refresh()
    assert result.return_value == 9


def test_arguments_that_are_not_json_are_refused_at_enqueue():
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        task_defs.add.enqueue({1, 2}, 3)
    assert Queue("default").depths().ready == 0


def test_a_return_value_that_is_not_json_fails_the_task():
    result = task_defs.returns_a_set.enqueue()
    work_until_finished(result)
    assert (
        result.status == TaskResultStatus.FAILED and result.errors[0].exception_class is TypeError
    )


@pytest.mark.django_db(transaction=True)
def test_enqueue_inside_a_transaction_is_sent_only_on_commit():
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            rolled_back = task_defs.add.enqueue(1, 1)
            raise RuntimeError("rollback")
    assert Queue("default").depths().ready == 0
    with pytest.raises(TaskResultDoesNotExist):
        task_defs.add.get_result(rolled_back.id)
    with transaction.atomic():
        committed = task_defs.add.enqueue(2, 2)
        assert Queue("default").depths().ready == 0
    assert Queue("default").depths().ready == 1
    work()
    committed.refresh()
    assert committed.return_value == 4


@pytest.mark.django_db(transaction=True)
def test_a_task_not_sent_yet_can_be_read_and_cancelled_inside_its_transaction():
    from django_redcoord.tasks import Cancel, cancel

    with transaction.atomic():
        kept = task_defs.add.enqueue(1, 1)
        dropped = task_defs.add.enqueue(2, 2)
        many = task_defs.add.get_backend().enqueue_many(task_defs.add, [((3, 3), {}), ((4, 4), {})])
        # not sent yet: read as enqueue() returned it, not "does not exist"
        assert task_defs.add.get_result(kept.id).status == TaskResultStatus.READY
        assert cancel(dropped) is Cancel.REMOVED
        assert cancel(many[1]) is Cancel.REMOVED
        with pytest.raises(TaskResultDoesNotExist, match="never sent"):
            task_defs.add.get_result(dropped.id)
        assert Queue("default").depths().ready == 0
    assert Queue("default").depths().ready == 2  # the cancelled ones were never sent
    work()
    kept.refresh()
    assert kept.return_value == 2 and task_defs.add.get_result(many[0].id).return_value == 6
    for gone in (dropped, many[1]):
        with pytest.raises(TaskResultDoesNotExist):
            task_defs.add.get_result(gone.id)


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_task_is_forgotten_by_the_thread_that_enqueued_it():
    with pytest.raises(RuntimeError), transaction.atomic():
        rolled_back = task_defs.add.enqueue(1, 1)
        raise RuntimeError("rollback")
    with pytest.raises(TaskResultDoesNotExist):
        task_defs.add.get_result(rolled_back.id)
    with transaction.atomic():
        with pytest.raises(RuntimeError), transaction.atomic():  # a savepoint
            inner = task_defs.add.enqueue(5, 5)
            raise RuntimeError("rollback to the savepoint")
        with pytest.raises(TaskResultDoesNotExist):
            task_defs.add.get_result(inner.id)


def test_a_priority_of_true_is_an_invalid_task():
    try:
        from django.tasks.exceptions import InvalidTaskError
    except ImportError:
        from django_tasks.exceptions import InvalidTaskError
    with pytest.raises(InvalidTaskError, match="whole number"):
        task_defs.add.using(priority=True).enqueue(1, 1)
    assert Queue("default").depths().ready == 0


def test_unknown_task_path_is_dead_lettered_and_the_worker_keeps_going():
    Queue("default").push(
        {
            "task": "tests.support.task_defs.removed_long_ago",
            "result": "gone1",
            "args": [],
            "kwargs": {},
        }
    )
    ok = task_defs.add.enqueue(1, 2)
    work()
    ok.refresh()
    assert ok.return_value == 3
    [(message, error)] = Queue("default").dead_letters()
    assert "task 'tests.support.task_defs.removed_long_ago' cannot be imported" in error["error"]


def test_run_worker_rejects_unknown_queues_and_backends():
    with pytest.raises(CommandError, match="unknown queue"):
        call_command("run_worker", "nope", "--burst")
    with pytest.raises(CommandError, match="no TASKS backend"):
        call_command("run_worker", "--backend", "missing", "--burst")
    for bad in ("nan", "inf"):  # a usage error, not a traceback
        with pytest.raises(CommandError, match=f"'{bad}' is not a finite number of seconds"):
            call_command("run_worker", "--burst", "--shutdown-timeout", bad)


def _worker_process(redis_url):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.worker_settings",
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "test",
        "DEMO_DB_PATH": ":memory:",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "-v", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill_left(*procs):
    """SIGKILL and reap the worker processes a test left running (it failed half-way)."""
    for proc in procs:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_run_worker_killed_mid_task_the_task_completes_elsewhere(redis_url, redis_client):
    result = task_defs.sleepy.enqueue(2.0)
    first = _worker_process(redis_url)
    second = None
    try:
        deadline = time.monotonic() + 20
        while not redis_client.exists(f"sleepy-started:{first.pid}"):
            assert time.monotonic() < deadline and first.poll() is None, "task did not start"
            time.sleep(0.05)
        deadline = time.monotonic() + 10
        while task_defs.sleepy.get_result(result.id).status != TaskResultStatus.RUNNING:
            assert time.monotonic() < deadline, "a task running this long must be marked RUNNING"
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(5)
        second = _worker_process(redis_url)
        deadline = time.monotonic() + 30
        while True:
            result.refresh()
            if result.is_finished:
                break
            assert time.monotonic() < deadline, f"task not redelivered: {result.status}"
            time.sleep(0.1)
        assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == second.pid
        assert len(result.worker_ids) == 2
        os.kill(second.pid, signal.SIGTERM)
        assert second.wait(15) == 0
    finally:
        _kill_left(first, second)


def test_an_attempt_whose_worker_was_killed_at_once_is_counted(redis_url, redis_client):
    # The task SIGKILLs its own worker the moment it starts, before the runner writes anything of
    # its own; the worker was recorded when the batch was claimed, so attempts counts both.
    result = task_defs.dies_at_once_the_first_time.enqueue()
    first = _worker_process(redis_url)
    second = None
    try:
        assert first.wait(30) == -signal.SIGKILL
        second = _worker_process(redis_url)
        deadline = time.monotonic() + 30
        while not result.is_finished:
            assert time.monotonic() < deadline and second.poll() is None, (
                f"not redelivered: {result.status}"
            )
            time.sleep(0.1)
            result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == second.pid
        assert (
            result.attempts == 2 and len(set(result.worker_ids)) == 2
        )  # each attempt, each worker
        os.kill(second.pid, signal.SIGTERM)
        assert second.wait(15) == 0
    finally:
        _kill_left(first, second)


def test_task_finished_is_sent_once_the_outcome_is_in_redis():
    seen = []

    def receiver(sender, task_result, **kwargs):
        seen.append(str(task_defs.add.get_result(task_result.id).status))

    task_finished.connect(receiver)
    try:
        results = [task_defs.add.enqueue(i, i) for i in range(3)]
        work()
    finally:
        task_finished.disconnect(receiver)
    assert seen == ["SUCCESSFUL"] * 3
    assert [r.id for r in results] and Queue("default").depths().processing == 0


def test_a_periodic_task_is_enqueued_by_the_leader_and_run_by_a_worker(redis_client):
    from django_redcoord.core.leader.election import LeaderElection
    from django_redcoord.core.periodic.jobs import get_jobs, periodic, unregister
    from django_redcoord.core.periodic.scheduler import Scheduler

    periodic(every=60, name="test_tasks.periodic_tick")(
        task_defs.periodic_tick
    )  # a name no other test uses
    job = get_jobs()["test_tasks.periodic_tick"]
    unregister("test_tasks.periodic_tick")
    election = LeaderElection(
        "default", lease=3, renew_deadline=2, retry_period=0.5, client=redis_client, prefix="test"
    )
    assert election.campaign()
    run = Scheduler(election, [job]).run_now(job, timeout=5)
    assert run is not None and run.outcome == "ok"
    assert (
        Queue("default").depths().ready == 1 and redis_client.llen("ran") == 0
    )  # enqueued, not run
    work()
    assert redis_client.lrange("ran", 0, -1) == [b"periodic"]


def test_a_late_running_mark_never_overwrites_an_outcome(redis_client):
    from django_redcoord.tasks.compat import RESULTS as _RESULTS

    result = task_defs.add.enqueue(1, 1)
    work()
    key = task_defs.add.get_backend()._result_key(result.id)
    mark = ["1", 1, "status", "RUNNING"]
    assert _RESULTS(redis_client, [key], [60, *mark], operation="test") == [0]
    assert task_defs.add.get_result(result.id).status == TaskResultStatus.SUCCESSFUL
    redis_client.hset(
        key, mapping={"status": "READY", "error.1": "{}"}
    )  # delivery 1 failed, retry pending
    assert _RESULTS(redis_client, [key], [60, *mark], operation="test") == [0]
    redis_client.hdel(key, "error.1")
    assert _RESULTS(redis_client, [key], [60, *mark], operation="test") == [
        1
    ]  # still running: marked


@pytest.mark.django_db(
    transaction=True
)  # the runner closes old database connections, as run_worker does
def test_a_stalled_retry_never_reopens_a_record_its_dead_letter_settled(redis_client):
    """A retry claimed, then stalled past WORKER_TIMEOUT before its RUNNING mark: the
    reaper dead-lettered it and the settle pass wrote FAILED. The late mark must not
    turn the record back to RUNNING (SPIN's counterexample in core/lua/queues/delivery.pml)."""
    from django_redcoord.tasks import TaskRunner, task_backends_for

    backend = task_backends_for("default")
    result = task_defs.add.enqueue(1, 1)
    consumer = backend.queue("default").consumer("stalled.0", timeout=5)
    [first], _ = consumer.claim(1)
    consumer.nack(first, "boom", delay=0)  # delivery 1 failed: a retry is due at once
    time.sleep(0.01)  # (at once is 1 ms: a delay is whole ms, at least 1)
    key = backend._result_key(result.id)
    redis_client.hset(key, mapping={"status": "READY", "error.1": "{}"})
    [retry], _ = consumer.claim(1)
    assert retry.attempt + 1 == 2
    # meanwhile the reaper dead-lettered it and the settle pass recorded the failure
    redis_client.hset(key, mapping={"status": "FAILED", "error.2": "{}"})
    runner = TaskRunner(backend, "stalled")
    runner(retry)  # the stalled worker resumes: its mark, its run, its outcome
    runner.flush()
    assert redis_client.hget(key, "status") == b"FAILED"


@pytest.mark.django_db(transaction=True)  # (the runner closes old database connections)
def test_a_redelivery_of_a_task_that_ended_meanwhile_is_not_run_again(redis_client):
    """A worker stalled (SIGSTOP, a GC pause) past WORKER_TIMEOUT mid-task: the reaper requeued
    the message, then the worker resumed and finished it (SUCCESSFUL). The redelivery finds the
    outcome and is acknowledged without running the task a second time, so the record's
    attempts still count the runs (before, it ran again and its run went unrecorded)."""
    from django_redcoord.tasks import TaskRunner, task_backends_for

    backend = task_backends_for("default")
    result = task_defs.record.enqueue("once")
    consumer = backend.queue("default").consumer("stalled.0", timeout=5)
    [first], _ = consumer.claim(1)
    consumer.nack(first, "its worker stopped heartbeating", delay=0)  # the reaper's requeue
    time.sleep(0.01)
    runner = TaskRunner(backend, "stalled")
    runner(first)  # the stalled worker resumes and finishes it
    runner.flush()
    assert task_defs.record.get_result(result.id).status == TaskResultStatus.SUCCESSFUL
    [again], _ = consumer.claim(1)
    assert again.id == first.id and again.attempt + 1 == 2
    TaskRunner(backend, "other")(again)
    assert redis_client.lrange("ran", 0, -1) == [b"once"]  # was run twice
    final = task_defs.record.get_result(result.id)
    assert final.status == TaskResultStatus.SUCCESSFUL and final.attempts == 1


@pytest.mark.django_db(transaction=True)  # (the runner closes old database connections)
def test_a_requeued_dead_letter_whose_first_delivery_was_reaped_still_runs(redis_client):
    """A requeued dead letter's record holds its old FAILED until its first delivery reopens
    it; that delivery's worker died before (the reaper requeued the message): the redelivery
    reopens the record and runs the task, and its success is recorded. (The check that skips a
    redelivery of a task that ended meanwhile took that old FAILED for an outcome: the task was
    acknowledged and lost.)"""
    from django_redcoord.tasks import TaskRunner, task_backends_for

    backend = task_backends_for("default")
    queue = backend.queue("default")
    task_defs.TOLD["fail"] = True
    try:
        result = task_defs.fails_while_told.enqueue("requeued")
        work_until_finished(result)  # every attempt fails: a dead letter
        assert queue.depths().dead == 1
        assert task_defs.fails_while_told.get_result(result.id).status == TaskResultStatus.FAILED
        task_defs.TOLD["fail"] = False
        assert queue.requeue_dead() == 1
        consumer = queue.consumer("died.0", timeout=5)
        [first], _ = consumer.claim(1)
        consumer.nack(first, "its worker died before starting it", delay=0)  # the reaper
        time.sleep(0.01)
        [again], _ = consumer.claim(1)
        assert again.attempt + 1 == 2
        runner = TaskRunner(backend, "alive")
        runner(again)
        runner.flush()
    finally:
        task_defs.TOLD["fail"] = True
    final = task_defs.fails_while_told.get_result(result.id)
    assert final.status == TaskResultStatus.SUCCESSFUL and final.return_value == "requeued"


def test_a_server_that_forgot_our_scripts_strands_nothing(redis_client):
    """Held-back results are written before the claim, never in one pipeline with
    it: a NOSCRIPT retry of such a pipeline would run the claim twice."""
    results = [task_defs.add.enqueue(i, 1) for i in range(100)]  # several batches of 32
    redis_client.script_flush()
    work()
    assert Queue("default").depths().processing == 0
    for result in results:
        result.refresh()
    assert all(r.status == TaskResultStatus.SUCCESSFUL for r in results)


# -- hardening ----------------------------------------------------------------------------


def test_a_task_calling_sys_exit_fails_and_the_worker_runs_the_rest_of_its_batch():
    """SystemExit (any BaseException) from a task is that task's failure, as in
    Django's reference backend: the worker thread and its claimed batch go on."""
    doomed = task_defs.exits.enqueue(3)
    others = [task_defs.add.enqueue(i, 1) for i in range(5)]
    work_until_finished(doomed)
    assert doomed.status == TaskResultStatus.FAILED
    assert doomed.errors[-1].exception_class is SystemExit
    for result in others:
        result.refresh()
    assert [r.return_value for r in others] == [1, 2, 3, 4, 5]
    assert Queue("default").depths().processing == 0


@pytest.mark.parametrize("kind", ["set", "nan", "object"])
def test_a_return_value_that_is_not_json_fails_once_without_running_again(redis_client, kind):
    result = task_defs.counted_then_returns.enqueue(kind, kind)
    work_until_finished(result)
    assert result.status == TaskResultStatus.FAILED
    assert redis_client.hget("runs", kind) == b"1"  # its side effects happened once
    [(message, error)] = Queue("default").dead_letters()
    assert message.id == result.id and "return value" in error["error"]
    raw = redis_client.hgetall(task_defs.add.get_backend()._result_key(result.id))
    assert b"NaN" not in b"".join(raw.values())


def test_a_tuple_return_value_is_stored_as_a_list():
    result = task_defs.returns_a_tuple.enqueue()
    work()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == [1, 2]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {"nested": float("-inf")}])
def test_non_json_numbers_are_refused_at_enqueue(bad):
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        task_defs.add.enqueue(bad, 1)
    assert Queue("default").depths().ready == 0


def test_a_deeply_nested_argument_is_a_type_error_not_a_recursion_error():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(TypeError, match="nested too deeply"):
        task_defs.add.enqueue(deep, 1)
    with pytest.raises(TypeError, match="nested too deeply"):
        Queue("default").push(deep)


@pytest.mark.django_db(transaction=True)
def test_a_bad_argument_inside_a_transaction_is_refused_at_enqueue_not_at_commit():
    later = []
    with transaction.atomic():
        with pytest.raises(TypeError, match="JSON"):
            task_defs.add.enqueue(float("nan"), 1)
        good = task_defs.add.enqueue(1, 1)
        transaction.on_commit(lambda: later.append("ran"))
    assert later == ["ran"]  # the commit's other callbacks still run
    assert Queue("default").depths().ready == 1
    work()
    good.refresh()
    assert good.return_value == 2


@pytest.mark.django_db(transaction=True)
def test_a_group_function_is_called_at_enqueue_inside_a_transaction_not_at_commit():
    # maybe_grouped's group function answers "" for tenant -1: refused. Inside atomic() it ran
    # at commit time: enqueue() returned a result, the commit went through, then the error
    # came out of atomic() and the task (and every later one of the commit) was never sent.
    from tests.support import group_tasks

    later = []
    with transaction.atomic():
        with pytest.raises(TypeError, match="must return None or a group name"):
            group_tasks.maybe_grouped.enqueue(-1, 0)
        good = group_tasks.maybe_grouped.enqueue(2, 1)
        many = group_tasks.maybe_grouped.get_backend().enqueue_many(
            group_tasks.maybe_grouped, [((3, 1), {})]
        )
        with pytest.raises(TypeError, match="must return None or a group name"):
            group_tasks.maybe_grouped.get_backend().enqueue_many(
                group_tasks.maybe_grouped, [((3, 2), {}), ((-1, 0), {})]
            )
        transaction.on_commit(lambda: later.append("ran"))
    assert later == ["ran"]
    assert Queue("default").depths().ready == 2
    work()
    for result in (good, *many):
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL


def test_get_result_keeps_the_queue_priority_and_run_after_it_was_enqueued_with(settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "other"],
        }
    }
    when = timezone.now() + timedelta(hours=1)
    result = task_defs.add.using(queue_name="other", priority=-20, run_after=when).enqueue(1, 2)
    fetched = task_defs.add.get_result(result.id)
    assert (fetched.task.queue_name, fetched.task.priority, fetched.task.run_after) == (
        "other",
        -20,
        when,
    )


def test_an_empty_queues_list_is_refused(settings):
    from django.core.checks import run_checks

    settings.TASKS = {
        "default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": []}
    }
    errors = [e for e in run_checks() if e.id == "redcoord.E004"]
    assert errors and "QUEUES is empty" in errors[0].msg
    with pytest.raises(ValueError, match="QUEUES is empty"):
        task_defs.add.enqueue(1, 1)


DUMMY = (
    "django.tasks.backends.dummy.DummyBackend"
    if TaskResultStatus.__module__.startswith("django.")
    else "django_tasks.backends.dummy.DummyBackend"
)


def test_two_aliases_of_ours_sharing_a_queue_name_are_warned_about(settings):
    """Both aliases' tasks go to one Redis queue: a worker of either runs the other's (W041).
    Negative control: distinct queue names, and a shared name with a backend not ours, are
    quiet."""
    from django_redcoord.tasks import RedisTaskBackend

    def warnings(tasks):
        settings.TASKS = tasks
        return sorted(
            e.msg
            for alias, params in tasks.items()
            if params["BACKEND"] == ours
            for e in RedisTaskBackend(alias, params).check()
            if e.id == "redcoord.W041"
        )

    ours = "django_redcoord.tasks.RedisTaskBackend"
    found = warnings(
        {
            "default": {"BACKEND": ours, "QUEUES": ["default", "mail"]},
            "other": {"BACKEND": ours, "QUEUES": ["mail"]},
            "dummy": {"BACKEND": DUMMY, "QUEUES": ["default"]},
        }
    )
    assert len(found) == 2, found  # one from each alias
    assert found[0].startswith("TASKS['default'] and TASKS['other'] share the queue(s) 'mail'")
    assert "run_worker --backend default` also runs the tasks sent through 'other'" in found[0]
    quiet = {
        "default": {"BACKEND": ours, "QUEUES": ["default"]},
        "other": {"BACKEND": ours, "QUEUES": ["mail"]},
        "dummy": {"BACKEND": DUMMY, "QUEUES": ["default"]},
    }
    assert warnings(quiet) == []


def test_the_app_says_its_auto_field_so_projects_without_one_get_no_w042(settings):
    from django.apps import apps
    from django.core.checks import run_checks

    assert apps.get_app_config("django_redcoord").default_auto_field == "django.db.models.AutoField"
    if hasattr(settings, "DEFAULT_AUTO_FIELD"):
        del settings.DEFAULT_AUTO_FIELD
    assert not [
        e
        for e in run_checks()
        if e.id == "models.W042"
        and getattr(e.obj, "_meta", None)
        and e.obj._meta.app_label.startswith("django_redcoord")
    ]


def test_a_message_dead_lettered_by_the_reaper_fails_its_result(settings):
    """The worker running the last attempt died: the reaper dead-letters the
    message, and the result must say FAILED (not RUNNING until it expires)."""
    import threading

    from django_redcoord.core.queues.worker import Worker
    from django_redcoord.tasks import TaskRunner, task_backends_for

    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"MAX_ATTEMPTS": 1},
        },
    }
    backend = task_backends_for("default")
    result = task_defs.add.enqueue(1, 1)
    dead_worker = backend.queue("default").consumer("gone.0", timeout=0.2)
    [message], _ = dead_worker.claim(1)  # ... and the process dies here
    time.sleep(0.3)
    worker = Worker([backend.queue("default")], handler=None, heartbeat=0.1, timeout=0.5)
    worker.handler = worker.write_behind = TaskRunner(backend, worker.id)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not result.is_finished and time.monotonic() < deadline:
            time.sleep(0.05)
            result.refresh()
    finally:
        worker.stop()
        thread.join(10)
    assert result.status == TaskResultStatus.FAILED
    assert result.errors[-1].exception_class.__name__ == "DeliveryFailed"
    assert "died or stopped heartbeating" in result.errors[-1].traceback
    [(dead, _)] = Queue("default").dead_letters()
    assert dead.id == result.id
    assert Queue("default").unsettled() == []


# -- issue 31: results outlive a task's wait; odd ids ----------------------------------


def _tasks_with(settings, **options):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "receipts"],
            "OPTIONS": options,
        },
    }


def test_a_task_due_after_result_ttl_keeps_its_record_and_records_its_outcome(
    settings, redis_client
):
    """Before: the record expired RESULT_TTL after enqueue, before the task ran; its outcome was
    never recorded."""
    from django_redcoord.tasks import task_backends_for

    _tasks_with(settings, RESULT_TTL=1)
    result = task_defs.add.using(run_after=timezone.now() + timedelta(seconds=3)).enqueue(2, 3)
    key = task_backends_for("default")._result_key(result.id)
    assert redis_client.ttl(key) >= 3  # RESULT_TTL past the time it is due
    time.sleep(3.3)  # past RESULT_TTL since enqueue, and due now
    assert task_defs.add.get_result(result.id).status == TaskResultStatus.READY
    work()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 5
    assert 0 < redis_client.ttl(key) <= 1  # the result's life counts from when it finished


def test_a_retry_due_after_result_ttl_keeps_its_record(settings, redis_client):
    from django_redcoord.tasks import task_backends_for

    _tasks_with(settings, RESULT_TTL=1, BACKOFF=lambda exc, result: 5.0)
    result = task_defs.knows_its_attempt.enqueue(fail_first=True)
    work()
    key = task_backends_for("default")._result_key(result.id)
    assert (
        redis_client.ttl(key) >= 5
    )  # the retry is due in 5 s: the record lives RESULT_TTL past that
    result.refresh()
    assert result.status == TaskResultStatus.READY and len(result.errors) == 1


ODD_IDS = [
    "{x}",
    "{",
    "}",
    "a{b}c",
    "{}",
    "x y",
    " ",
    "%",
    "%7Bx%7D",
    "a*b",
    "a?b",
    "[a]",
    "\\",
    "'",
    '"',
    "\x00",
    "\n",
    "\r\n",
    "\x1b[31m",
    "é",
    "😀",
    "a" * 201,
    "a" * 5000,
    "",
    "..",
    "../x",
    "a|b",
    "<script>",
]


@pytest.mark.parametrize("odd", ODD_IDS)
def test_get_result_of_any_odd_id_is_does_not_exist(odd):
    import asyncio

    with pytest.raises(TaskResultDoesNotExist):
        task_defs.add.get_result(odd)

    async def aget():
        with pytest.raises(TaskResultDoesNotExist):
            await task_defs.add.aget_result(odd)

    asyncio.run(aget())


@pytest.mark.parametrize("odd", [None, 7, b"abc", ["x"]])
def test_get_result_of_an_id_that_is_not_a_string_is_does_not_exist(odd):
    from django_redcoord.tasks import task_backends_for

    with pytest.raises(TaskResultDoesNotExist):
        task_backends_for("default").get_result(odd)


def test_get_result_of_an_unreadable_record_is_does_not_exist(redis_client):
    from django_redcoord.tasks import task_backends_for

    result = task_defs.add.enqueue(1, 2)
    key = task_backends_for("default")._result_key(result.id)
    for field, value in (
        ("envelope", "0|3|1|0|1|x\n{not json"),  # the arguments are read from the envelope
        ("envelope", '0|3|1|0|1|x\n{"args": 1, "kwargs": {}}'),
        ("status", "EXPLODED"),
        ("enqueued_at", "yesterday"),
    ):
        good = redis_client.hget(key, field)
        redis_client.hset(key, field, value)
        with pytest.raises(TaskResultDoesNotExist, match="cannot be read"):
            task_defs.add.get_result(result.id)
        redis_client.hset(key, field, good)
    assert task_defs.add.get_result(result.id).args == [1, 2]
    # a record written before the envelope was kept in it still reads
    redis_client.hdel(key, "envelope")
    redis_client.hset(key, mapping={"args": "[5, 6]", "kwargs": "{}"})
    assert task_defs.add.get_result(result.id).args == [5, 6]


def test_a_task_message_naming_an_odd_result_id_is_dead_lettered_at_once_and_the_worker_goes_on(
    redis_client,
):
    queue = Queue("default")
    queue.push(
        {"task": "tests.support.task_defs.add", "result": "{x}", "args": [1, 2], "kwargs": {}}
    )
    result = task_defs.add.enqueue(2, 2)
    work()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 4
    [(message, error)] = queue.dead_letters()
    assert (
        message.body["result"] == "{x}"
        and "is not one of ours" in error["error"]
        and message.attempt <= 1
    )
