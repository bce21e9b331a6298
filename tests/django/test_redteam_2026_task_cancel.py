"""Red team: cancelling a Django Task (tasks/cancel.py, tasks/cancel.lua, the claim's cancels
zset, the runner's polling and grace). Real worker processes (manage.py run_worker with
tests.support.cancel_settings) where a worker matters; in-process consumers and the real
TaskRunner where
a window must be hit deterministically.

Invariants checked: a task cancel() reported REMOVED never runs; a cancelled result stays FAILED
with a TaskCancelled error; no cancels entry is left once the message is acknowledged or dropped;
the queue's depths add up; nothing is lost of the tasks not cancelled."""

import json
import os
import signal
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.tasks import Cancel, TaskCancelled, cancel, task_backends_for
from django_redcoord.tasks.runner import TaskRunner
from tests.faults.names import HOSTILE_QUEUE
from tests.support import redteam_cancel_tasks as rt
from tests.support.task_workers import start_worker, stop, wait_for

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


# -- helpers ---------------------------------------------------------------------------------


def _backend():
    return task_backends_for("default")


def _queue(name="default"):
    return _backend().queue(name)


def _keys(name="default"):
    return KeyBuilder("test").queue(name)


def _is_cancelled(result):
    result.refresh()
    return (
        result.status == TaskResultStatus.FAILED
        and bool(result.errors)
        and result.errors[-1].exception_class is TaskCancelled
        and result.finished_at is not None
    )


def _stored(result_id, field):
    from django_redcoord.core.transport.clients import get_client

    rid = getattr(result_id, "id", result_id)
    return get_client().hget(_backend()._result_key(rid), field)


def _runs(client, label):
    return int(client.get(f"rt:runs:{label}") or 0)


_wait = wait_for


def _worker(redis_url, *, grace=30.0, threads=1, prefetch=1):
    return start_worker(
        redis_url,
        settings="tests.support.cancel_settings",
        concurrency=threads,
        prefetch=prefetch,
        verbosity=1,
        REDCOORD_CANCEL_GRACE=str(grace),
    )


_stop = stop


def _burst(*queues):
    call_command("run_worker", "--burst", *queues, verbosity=0)


def _settled(name="default"):
    """Depths once nothing waits or runs: (ready, delayed, processing, dead)."""
    d = _queue(name).depths()
    return d.ready, d.delayed, d.processing, d.dead


def _dead_letter(client, label):
    """A task result whose message is a dead letter, its record FAILED (max_attempts 1, a failure
    in a real run of the worker loop); the failure flag is then cleared, so a requeue succeeds."""
    client.set(f"rt:fail:{label}", 1)
    result = rt.fails_while_flagged.enqueue(label)
    _burst()
    result.refresh()
    assert result.status == TaskResultStatus.FAILED and _settled()[3] >= 1
    client.delete(f"rt:fail:{label}")
    return result


# -- waiting tasks of every shape: REMOVED, never run, the rest untouched ----------------------


def test_priorities_run_after_unicode_and_huge_arguments_only_the_cancelled_never_run(
    redis_client,
):
    blob = "é☃\U0001f600\\\"'\n\t\x00|{}" * 20000  # ~300 KB of unicode, escapes, a NUL
    later = timezone.now() + timedelta(hours=2)
    made = {}
    for i, prio in enumerate([-100, -1, 0, 1, 100]):
        made[f"p{i}"] = rt.counted.using(priority=prio).enqueue(f"p{i}", blob, k="ü")
        made[f"d{i}"] = rt.counted.using(priority=prio, run_after=later).enqueue(f"d{i}")
    made["huge"] = rt.counted.enqueue("huge", *([blob] * 10), **{f"k{j}": blob for j in range(5)})
    made["soon"] = rt.counted.using(run_after=timezone.now() + timedelta(milliseconds=200)).enqueue(
        "soon"
    )
    cancelled = {"p0", "p2", "p4", "d1", "d3", "huge", "soon"}
    for label in sorted(cancelled):
        assert cancel(made[label]) is Cancel.REMOVED, label
        assert _is_cancelled(made[label]) and made[label].attempts == 0
    assert made["huge"].args[1] == blob  # the arguments still read back from the envelope
    d = _queue().depths()
    assert (d.ready, d.delayed) == (2, 3)
    time.sleep(0.3)
    _burst()
    ran = {m.decode() for m in redis_client.smembers("rt:ran")}
    assert ran == {"p1", "p3"}  # the delayed ones are due in 2 hours
    assert _settled() == (0, 3, 0, 0)
    for label, result in made.items():
        result.refresh()
        if label in cancelled:
            assert _is_cancelled(result) and _stored(result, "return_value") is None
        elif label.startswith("p"):
            assert result.status == TaskResultStatus.SUCCESSFUL
            assert result.return_value == [label, 1, ["k"]]
        else:
            assert result.status == TaskResultStatus.READY
    assert redis_client.zcard(_keys().cancels) == 0


def test_a_hostile_queue_name_cancel_is_removed_and_others_run(redis_client, settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", HOSTILE_QUEUE],
        }
    }
    task = rt.counted.using(queue_name=HOSTILE_QUEUE)
    results = [task.enqueue(f"h{i}") for i in range(6)]
    assert [cancel(r) for r in results[::2]] == [Cancel.REMOVED] * 3
    consumer = _queue(HOSTILE_QUEUE).consumer("someone")
    messages, _ = consumer.claim(1)
    assert [m.id for m in messages] == [results[1].id]
    assert cancel(results[1]) is Cancel.REQUESTED
    consumer.release(messages)
    _burst()
    assert {m.decode() for m in redis_client.smembers("rt:ran")} == {"h3", "h5"}
    assert _settled(HOSTILE_QUEUE) == (0, 0, 0, 0)
    assert redis_client.zcard(_keys(HOSTILE_QUEUE).cancels) == 0
    assert all(_is_cancelled(r) for r in results[:3] + results[4:5])


def test_enqueue_many_then_cancel_half(redis_client):
    from django_redcoord.tasks import enqueue_many

    results = enqueue_many(rt.counted, [((f"m{i}",), {"x": i}) for i in range(40)])
    outcomes = [cancel(r) for r in results[::2]]
    assert outcomes == [Cancel.REMOVED] * 20
    _burst()
    assert {m.decode() for m in redis_client.smembers("rt:ran")} == {
        f"m{i}" for i in range(1, 40, 2)
    }
    assert _settled() == (0, 0, 0, 0) and redis_client.zcard(_keys().cancels) == 0


def test_traced_envelopes_are_found_and_taken_out(redis_client):
    from opentelemetry.sdk.trace import TracerProvider

    from django_redcoord.contrib import otel

    otel.enable(tracer_provider=TracerProvider())
    try:
        results = [rt.counted.enqueue(f"t{i}") for i in range(4)]
        envelope = _stored(results[0], "envelope")
        assert envelope is not None and int(envelope.split(b"|")[4]) & 4  # TRACED
        assert cancel(results[0]) is Cancel.REMOVED and cancel(results[2]) is Cancel.REMOVED
    finally:
        otel.disable()
    _burst()
    assert {m.decode() for m in redis_client.smembers("rt:ran")} == {"t1", "t3"}
    assert _settled() == (0, 0, 0, 0)


def test_a_retry_waiting_with_1000_attempts_and_a_big_argument_is_removed(redis_client):
    """max_attempts 1000: the script tries every failed-count; a retry waits at attempt 3."""
    blob = "x" * 200_000
    result = rt.counted_many_attempts.enqueue("many", blob)
    consumer = _queue().consumer("someone")
    for _ in range(3):
        messages, _ = consumer.claim(1)
        assert [m.id for m in messages] == [result.id]
        consumer.nack(messages[0], "boom", delay=0.001)
        time.sleep(0.01)
    # (nothing claims now: the retry waits in delayed or was promoted to ready)
    started = time.monotonic()
    # taken out; REQUESTED, not REMOVED: these raw nacks recorded no error.N, so to the script
    # the delivery before looks reaped (its worker may yet resume), as after a SIGSTOP
    assert cancel(result) is Cancel.REQUESTED
    assert time.monotonic() - started < 1.0
    assert _queue().depths().ready + _queue().depths().delayed == 0
    assert _is_cancelled(result) and result.errors[-1].exception_class is TaskCancelled
    _burst()
    assert _runs(redis_client, "many") == 0 and _settled() == (0, 0, 0, 0)


def test_a_claimed_task_with_1000_attempts_and_a_large_argument_cancels_quickly(
    redis_servers, settings
):
    """The claimed path of cancel.lua first tries 2 x max_attempts candidate envelopes, each a copy
    of the whole message, each ZREMed from ready and delayed: with max_attempts 1000 and a 300 KB
    argument that is ~600 MB copied and ~1.2 GB hashed inside one script, which blocks the whole
    Redis for seconds (1 MB: ~9 s, past the default SOCKET_TIMEOUT of every other client)."""
    (server,) = redis_servers(1)  # (its own server: the session's must not be left busy)
    settings.REDCOORD = {"URL": server.url, "KEY_PREFIX": "test", "SOCKET_TIMEOUT": 60.0}
    result = rt.counted_many_attempts.enqueue("big", "y" * 300_000)
    consumer = _queue().consumer("someone")
    messages, _ = consumer.claim(1)
    assert [m.id for m in messages] == [result.id]
    started = time.monotonic()
    assert cancel(result) is Cancel.REQUESTED
    took = time.monotonic() - started
    assert _is_cancelled(result)
    assert took < 0.5, f"one cancel kept Redis busy for {took:.1f} s"


# -- concurrency ------------------------------------------------------------------------------


def test_cancel_twice_concurrently_from_threads_exactly_one_removes(redis_client):
    for round_ in range(30):
        result = rt.counted.enqueue(f"c{round_}")
        barrier = threading.Barrier(4)
        outcomes = []

        def go(result=result, barrier=barrier, outcomes=outcomes):
            barrier.wait()
            outcomes.append(cancel(result))

        threads = [threading.Thread(target=go) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert outcomes == [Cancel.REMOVED] * 4  # one removes; the others answer the same
        assert _is_cancelled(result) and len(result.errors) == 1
    _burst()
    assert redis_client.scard("rt:ran") == 0 and _settled() == (0, 0, 0, 0)


def test_cancel_racing_claim_and_ack_many_iterations(redis_client):
    """A real Worker (in this process: 2 threads, prefetch 2, the real TaskRunner) drains quick
    tasks while the test cancels each at a random moment: REMOVED never runs, every result ends
    SUCCESSFUL or cancelled, every cancels entry leaves with its acknowledgement, the depths come
    back to zero."""
    import random

    from django_redcoord.core.queues import Worker

    rnd = random.Random(11)
    worker = Worker([_queue()], handler=None, concurrency=2, prefetch=2)
    worker.handler = worker.write_behind = TaskRunner(_backend(), worker.id)
    thread = threading.Thread(target=worker.run)
    thread.start()
    seen = {Cancel.REMOVED: set(), Cancel.REQUESTED: set(), Cancel.FINISHED: set()}
    results = []
    try:
        from django_redcoord.tasks import enqueue_many

        for round_ in range(20):
            batch = enqueue_many(rt.counted, [((f"r{round_ * 20 + j}",), {}) for j in range(20)])
            results.extend(batch)
            order = list(range(20))
            rnd.shuffle(order)
            for j in order:
                time.sleep(rnd.random() * 0.002)
                seen[cancel(batch[j])].add(f"r{round_ * 20 + j}")
        _wait("the queue to drain", lambda: _settled() == (0, 0, 0, 0), 30)
        time.sleep(0.3)
    finally:
        worker.stop()
        thread.join(30)
    ran = {m.decode() for m in redis_client.smembers("rt:ran")}
    assert seen[Cancel.REMOVED] and seen[Cancel.REQUESTED] | seen[Cancel.FINISHED]
    assert not (seen[Cancel.REMOVED] & ran)
    assert max(_runs(redis_client, f"r{i}") for i in range(400)) == 1 or not ran
    for i, result in enumerate(results):
        result.refresh()
        if f"r{i}" in seen[Cancel.FINISHED]:
            assert result.status == TaskResultStatus.SUCCESSFUL, (i, result.status)
        else:
            assert _is_cancelled(result), (i, result.status)
    assert _settled() == (0, 0, 0, 0)
    assert redis_client.zcard(_keys().cancels) == 0


# -- claimed tasks that come back ---------------------------------------------------------------


def test_a_second_cancel_after_a_hand_back_is_finished_and_leaves_no_entry(redis_client):
    """REQUESTED, then the worker hands the message back unstarted (it stops): a second cancel
    (an operator clicking again) finds it in ready and says REMOVED, writes a second TaskCancelled
    over the first, and leaves the cancels entry with no message to ever remove it."""
    result = rt.counted.enqueue("again")
    consumer = _queue().consumer("someone")
    messages, _ = consumer.claim(1)
    assert cancel(result) is Cancel.REQUESTED
    first_finished = _stored(result, "finished_at")
    consumer.release(messages)
    second = cancel(result)
    _burst()
    assert _runs(redis_client, "again") == 0
    assert _settled() == (0, 0, 0, 0)
    assert redis_client.zcard(_keys().cancels) == 0, "a cancels entry is left behind"
    assert second is Cancel.REQUESTED, f"the second cancel said {second}"  # the first's answer
    assert _stored(result, "finished_at") == first_finished


def test_a_requested_cancel_then_dead_lettered_leaves_no_cancels_entry(redis_client):
    """REQUESTED, then the delivery fails on its last attempt (or takes the grace path): the
    message is dead-lettered, never claimed nor acknowledged again; its cancels entry stays for
    CANCEL_KEEP_MS (7 days)."""
    result = rt.fails_while_flagged.enqueue("dl")
    consumer = _queue().consumer("someone")
    messages, _ = consumer.claim(1)
    assert cancel(result) is Cancel.REQUESTED
    consumer.nack(messages[0], "it failed", dead=True)
    assert _settled() == (0, 0, 0, 1)
    assert _is_cancelled(result)
    assert redis_client.zcard(_keys().cancels) == 0, "a cancels entry outlives its dead letter"


def test_a_requeued_dead_letter_cancelled_while_waiting_never_runs(redis_client):
    result = _dead_letter(redis_client, "rq-wait")
    assert _queue().requeue_dead_letter(result.id)
    assert cancel(result) is Cancel.REMOVED
    assert _is_cancelled(result)
    _burst()
    assert _runs(redis_client, "rq-wait") == 1  # the first (failed) run only
    assert _settled() == (0, 0, 0, 0) and _is_cancelled(result)


def test_a_requeued_dead_letter_cancelled_once_claimed_is_not_finished(redis_client):
    """A requeued dead letter claimed but not started yet (the rest of a prefetched batch, or
    between claim and start): its record still reads FAILED from its dead-lettering, so cancel.lua
    answers FINISHED ("nothing changed") and records nothing; the runner then reopens the record
    and runs the task to SUCCESSFUL."""
    result = _dead_letter(redis_client, "rq-claimed")
    assert _queue().requeue_dead_letter(result.id)
    consumer = _queue().consumer("someone")
    messages, _ = consumer.claim(1)
    runner = TaskRunner(_backend(), "inproc")
    runner.claimed(messages)
    assert [m.id for m in messages] == [result.id]
    outcome = cancel(result)
    try:
        runner(messages[0])
    except Exception as exc:  # noqa: BLE001 - Cancelled is the expected way out
        assert type(exc).__name__ == "Cancelled", exc
    runner.flush()
    consumer.ack(messages[0])
    consumer.flush()
    assert outcome is Cancel.REQUESTED, f"cancel of a claimed, requeued task said {outcome}"
    assert _is_cancelled(result), f"the result ended {result.status}"


def test_a_requeued_dead_letter_in_a_prefetched_batch_with_a_real_worker(redis_url, redis_client):
    """The same with a real worker (prefetch 2): while the first task of the batch runs, the
    requeued one waits on the worker's list; cancel() says FINISHED and the task runs."""
    result = _dead_letter(redis_client, "rq-batch")
    first = rt.sleeps.enqueue("first", 2.0)
    assert _queue().requeue_dead_letter(result.id)  # behind `first`
    worker = _worker(redis_url, prefetch=2)
    try:
        _wait(
            "the first task to start", lambda: redis_client.exists("rt:started:first"), proc=worker
        )
        assert _queue().depths().ready == 0  # both claimed in one batch
        outcome = cancel(result)
        _wait("the batch to finish", lambda: _queue().depths().processing == 0, 20, worker)
        time.sleep(0.3)
        runs = _runs(redis_client, "rq-batch")
        first.refresh()
        assert first.status == TaskResultStatus.SUCCESSFUL
        assert outcome is not Cancel.FINISHED, "cancel() said FINISHED for a task about to run"
        assert runs == 1 and _is_cancelled(result), (runs, result.status)
    finally:
        _stop(worker)


def test_a_successful_but_unacknowledged_task_redelivered_then_cancelled(redis_client):
    """The worker recorded SUCCESSFUL and died before its acknowledgement; the reaper put the
    message back. cancel() must not leave a FAILED record with a TaskCancelled error next to the
    return value of a run that succeeded: either FINISHED (nothing changed) or a clean cancel."""
    result = rt.counted.enqueue("done")
    consumer = _queue().consumer("dies", timeout=0.2)
    messages, _ = consumer.claim(1)
    runner = TaskRunner(_backend(), "dies")
    runner.claimed(messages)
    runner(messages[0])
    runner.flush()
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL
    time.sleep(0.4)
    assert _queue().reap()[0] == 1  # back in ready, attempt counted
    outcome = cancel(result)
    result.refresh()
    status, value = result.status, _stored(result, "return_value")
    assert not (status == TaskResultStatus.FAILED and value is not None), (
        f"cancel said {outcome}: the record is FAILED (TaskCancelled) and keeps return_value "
        f"{value!r}"
    )
    assert outcome is Cancel.FINISHED and status == TaskResultStatus.SUCCESSFUL


def test_removed_while_an_earlier_attempt_still_runs_on_a_stopped_worker(redis_url, redis_client):
    """A worker is SIGSTOPped mid-task, its heartbeat lapses and the reaper puts the message back
    in ready. cancel() then says REMOVED ("it never runs"), while the first attempt is still there
    and goes on running after SIGCONT. Its record had worker.1 and no outcome of delivery 1."""
    result = rt.polls_its_context.enqueue("stopped")
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("rt:started:stopped"), proc=worker)
        os.kill(worker.pid, signal.SIGSTOP)
        time.sleep(1.5)  # WORKER_TIMEOUT 1 s
        assert _queue().reap()[0] == 1
        outcome = cancel(result)
        os.kill(worker.pid, signal.SIGCONT)
        _wait(
            "the running attempt to be told",
            lambda: redis_client.exists("rt:saw-cancel:stopped"),
            10,
            worker,
        )
        _wait("its acknowledgement", lambda: _queue().depths().processing == 0, 10, worker)
        assert _is_cancelled(result) and _settled() == (0, 0, 0, 0)
        assert redis_client.zcard(_keys().cancels) == 0
        assert outcome is Cancel.REQUESTED, f"cancel said {outcome} while an attempt was running"
    finally:
        _stop(worker)


def test_no_successful_task_finished_signal_for_a_task_cancelled_before_its_outcome_landed(
    redis_client,
):
    """The task returned; its outcome waits (write-behind) for the next claim; cancel() lands
    first (REQUESTED) and the record's guard refuses the outcome. The worker must not then announce
    task_finished with a SUCCESSFUL result the store never holds."""
    from django_redcoord.tasks.compat import task_finished

    announced = []

    def receiver(sender, task_result, **kwargs):
        announced.append((task_result.id, task_result.status))

    task_finished.connect(receiver, weak=False)
    try:
        result = rt.counted.enqueue("late-signal")
        consumer = _queue().consumer("someone")
        messages, _ = consumer.claim(1)
        runner = TaskRunner(_backend(), "inproc")
        runner.claimed(messages)
        runner(messages[0])  # returns: its outcome is held back
        assert cancel(result) is Cancel.REQUESTED
        runner.flush()  # the guard refuses the outcome
        consumer.ack(messages[0])
        consumer.flush()
    finally:
        task_finished.disconnect(receiver)
    assert _is_cancelled(result) and _stored(result, "return_value") is None
    assert redis_client.zcard(_keys().cancels) == 0
    assert (result.id, TaskResultStatus.SUCCESSFUL) not in announced, announced


def test_a_task_on_a_paused_queue_is_removed_and_the_rest_runs_after_resume(redis_client):
    results = [rt.counted.enqueue(f"pz{i}") for i in range(3)]
    assert _queue().pause("red team")
    assert cancel(results[1]) is Cancel.REMOVED
    assert _queue().resume()
    _burst()
    assert {m.decode() for m in redis_client.smembers("rt:ran")} == {"pz0", "pz2"}
    assert _settled() == (0, 0, 0, 0) and _is_cancelled(results[1])


# -- running tasks ------------------------------------------------------------------------------


def test_cancel_while_the_worker_is_sigstopped_then_sigconted(redis_url, redis_client):
    result = rt.polls_its_context.enqueue("paused")
    kept = [rt.counted.enqueue(f"after{i}") for i in range(3)]
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("rt:started:paused"), proc=worker)
        os.kill(worker.pid, signal.SIGSTOP)
        assert cancel(result) is Cancel.REQUESTED and _is_cancelled(result)
        time.sleep(0.3)  # (within WORKER_TIMEOUT: nobody reaps it)
        os.kill(worker.pid, signal.SIGCONT)
        _wait(
            "the task to be told", lambda: redis_client.exists("rt:saw-cancel:paused"), 10, worker
        )
        _wait("the rest to run", lambda: redis_client.scard("rt:ran") == 4, 20, worker)
        _wait("the queue to settle", lambda: _settled() == (0, 0, 0, 0), 10, worker)
        assert _is_cancelled(result) and _stored(result, "return_value") is None
        assert redis_client.zcard(_keys().cancels) == 0
        for r in kept:
            r.refresh()
            assert r.status == TaskResultStatus.SUCCESSFUL
        assert worker.poll() is None
    finally:
        _stop(worker)


def test_an_async_task_that_catches_cancelled_error_and_awaits_again(redis_url, redis_client):
    result = rt.catches_and_awaits_again.enqueue("a")
    after = rt.counted.enqueue("after-async")
    worker = _worker(redis_url)
    try:
        _wait("the task to start", lambda: redis_client.exists("rt:started:a"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        _wait("the cleanup await to end", lambda: redis_client.exists("rt:cleaned:a"), 10, worker)
        _wait("the next task", lambda: redis_client.sismember("rt:ran", "after-async"), 10, worker)
        # (the task marks itself run before the worker settles its message: a busy CI machine
        # once looked in between and found it still processing)
        _wait("the queue to settle", lambda: _settled() == (0, 0, 0, 0), 10, worker)
        assert _is_cancelled(result) and _stored(result, "return_value") is None
        assert redis_client.zcard(_keys().cancels) == 0
        after.refresh()
        assert after.status == TaskResultStatus.SUCCESSFUL and worker.poll() is None
    finally:
        _stop(worker)


def test_the_grace_path_leaves_no_cancels_entry(redis_url, redis_client):
    """A sync task that never looks: past CANCEL_GRACE its message is dead-lettered and the worker
    exits. The dead-lettered message is never acknowledged nor claimed again: its cancels entry
    stays, and a later requeue of that dead letter is silently dropped by the claim."""
    result = rt.sleeps.enqueue("ignores", 6)
    worker = _worker(redis_url, grace=0.5)
    try:
        _wait("the task to start", lambda: redis_client.exists("rt:started:ignores"), proc=worker)
        assert cancel(result) is Cancel.REQUESTED
        out, _ = worker.communicate(timeout=20)
        assert worker.returncode not in (0, None), out
        assert _settled() == (0, 0, 0, 1) and _is_cancelled(result)
        assert redis_client.zcard(_keys().cancels) == 0, (
            "the dead-lettered task's cancels entry stays"
        )
    finally:
        _stop(worker)


# -- faults: restarts, lost replies -------------------------------------------------------------


def test_a_requested_cancel_survives_a_restart_with_aof_before_the_claim(settings, tmp_path):
    from tests.support.redis_servers import RestartableServer

    server = RestartableServer().start()
    try:
        settings.REDCOORD = {
            "URL": server.url,
            "KEY_PREFIX": "test",
            "SOCKET_TIMEOUT": 2.0,
            "CONNECT_TIMEOUT": 1.0,
            "WORKER_HEARTBEAT": 0.1,
            "WORKER_TIMEOUT": 0.3,
        }
        results = [rt.counted.enqueue(f"aof{i}") for i in range(3)]
        consumer = _queue().consumer("before-restart")
        messages, _ = consumer.claim(2)
        assert cancel(results[0]) is Cancel.REQUESTED
        assert cancel(results[2]) is Cancel.REMOVED
        server.restart_keeping_data()
        time.sleep(0.5)
        _queue().reap()  # the consumer died with the server's clients
        _burst()
        from django_redcoord.core.transport.clients import get_client

        client = get_client()
        assert {m.decode() for m in client.smembers("rt:ran")} == {"aof1"}
        assert _settled() == (0, 0, 0, 0) and client.zcard(_keys().cancels) == 0
        assert _is_cancelled(results[0]) and _is_cancelled(results[2])
        del messages
    finally:
        server.cleanup()


def test_a_cancel_whose_reply_is_lost_still_took_effect(redis_servers, settings):
    from django_redcoord.core.exceptions import CoordinationUnavailable

    (server,) = redis_servers(1)
    settings.REDCOORD = {
        "URL": server.url,
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 0.5,
        "CONNECT_TIMEOUT": 0.5,
    }
    result = rt.counted.enqueue("lost")
    kept = rt.counted.enqueue("kept")
    assert cancel(rt.counted.enqueue("loads-the-script")) is Cancel.REMOVED  # EVALSHA will find it
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable):
            cancel(result)
    finally:
        server.resume()
    time.sleep(0.2)
    again = cancel(result)  # the operator retries
    # the first call's script ran after the resume: the retry is told what it did
    assert again is Cancel.REMOVED
    assert _is_cancelled(result)
    _burst()
    from django_redcoord.core.transport.clients import get_client

    assert {m.decode() for m in get_client().smembers("rt:ran")} == {"kept"}
    kept.refresh()
    assert kept.status == TaskResultStatus.SUCCESSFUL
    assert _settled() == (0, 0, 0, 0)


# -- records from before the change; operators ---------------------------------------------------


def test_a_record_from_before_the_change_is_cancelled_and_never_runs(redis_client):
    """A record written before the envelope was kept (fields args/kwargs, no 'envelope')."""
    results = [rt.counted.enqueue(f"old{i}", i) for i in range(3)]
    for r in results:
        key = _backend()._result_key(r.id)
        env = redis_client.hget(key, "envelope")
        body = json.loads(env.split(b"\n", 1)[1])
        redis_client.hset(key, mapping={"args": json.dumps(body["args"]), "kwargs": "{}"})
        redis_client.hdel(key, "envelope")
    outcome = cancel(results[0])
    assert outcome in (Cancel.REMOVED, Cancel.REQUESTED)
    assert _is_cancelled(results[0]) and results[0].args == ["old0", 0]
    _burst()
    assert {m.decode() for m in redis_client.smembers("rt:ran")} == {"old1", "old2"}
    assert _settled() == (0, 0, 0, 0) and redis_client.zcard(_keys().cancels) == 0
    assert _is_cancelled(results[0])
    for r in results[1:]:
        r.refresh()
        assert r.status == TaskResultStatus.SUCCESSFUL


def test_the_command_with_odd_ids(capsys, redis_client):
    result = rt.counted.enqueue("cmd")
    for odd in ["x" * 201, "é", "a b", "{x}", "a\nb", "\x00", "%00", "../" + result.id]:
        with pytest.raises(CommandError, match="no task result"):
            call_command("redcoord", "task", "cancel", odd)
    assert _queue().depths().ready == 1
    call_command("redcoord", "task", "cancel", result.id)
    assert "it will not run" in capsys.readouterr().out


def test_the_admin_action_with_hostile_ids(client, staff, redis_client):
    result = rt.counted.enqueue("adm")
    client.force_login(staff("change_dashboard", "view_dashboard"))
    url = "/admin/django_redcoord/dashboard/action/cancel-task/"
    for bad in ["x" * 201, "a\nb", "<script>", "é", "{}", "a{b}c", result.id + "{x}", "\x00"]:
        for name in ["default", "nope", "<b>", "default{x}"]:
            answer = client.post(url, {"name": name, "id": bad}, follow=True)
            assert answer.status_code in (200, 404), (name, bad, answer.status_code)
            assert b"<script>" not in answer.content
            page = client.get(url, {"name": name, "id": bad})
            assert page.status_code in (200, 302, 404), (name, bad, page.status_code)
    assert _queue().depths().ready == 1
    done = client.post(url, {"name": "default", "id": result.id}, follow=True)
    assert b"taken out of its queue" in done.content and _is_cancelled(result)
