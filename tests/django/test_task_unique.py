"""Unique tasks: one task per key at a time, atomic with the enqueue; the key freed by the scripts
that settle, dead-letter, reap or cancel the message; a TTL safety net. Real worker processes."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.tasks import Cancel, TaskCancelled, cancel, enqueue_many, task_backends_for
from django_redcoord.tasks.options import RedisTask
from django_redcoord.tasks.unique import TaskDuplicate
from tests.support import unique_tasks as ut
from tests.support.task_workers import start_worker, stop, wait_for, worker_env

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fast_retries(settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }


def _queue():
    return task_backends_for("default").queue("default")


def _keys():
    return KeyBuilder("test").queue("default")


def _runs(client, label):
    return [tuple(map(float, r.split())) for r in client.lrange(f"uq:runs:{label}", 0, -1)]


def _burst():
    call_command("run_worker", "--burst", verbosity=0)


_wait = wait_for


def _worker(redis_url, *, concurrency=1):
    return start_worker(redis_url, concurrency=concurrency, output=False)


_stop = stop


# -- skip (the default) ----------------------------------------------------------------------


def test_a_duplicate_gets_the_holders_result_and_the_key_is_free_once_it_finished(redis_client):
    first = ut.rebuild_report.enqueue(7)
    again = ut.rebuild_report.enqueue(7)
    other = ut.rebuild_report.enqueue(8)
    assert again.id == first.id and other.id != first.id
    assert again.status == TaskResultStatus.READY and again.args == [7]
    assert _queue().depths().ready == 2
    assert _queue().unique_keys() == {
        "tests.support.unique_tasks.rebuild_report:report:7": first.id,
        "tests.support.unique_tasks.rebuild_report:report:8": other.id,
    }
    _burst()
    assert len(_runs(redis_client, "report:7")) == 1
    assert _queue().unique_keys() == {}  # both finished: acknowledged, keys freed
    third = ut.rebuild_report.enqueue(7)
    assert third.id != first.id
    _burst()
    assert len(_runs(redis_client, "report:7")) == 2


def test_a_running_holder_makes_a_duplicate_skip(redis_url, redis_client):
    first = ut.rebuild_index.enqueue(1, 1.0)
    worker = _worker(redis_url)
    try:
        _wait("the holder to run", lambda: redis_client.exists("uq:running:index"), proc=worker)
        assert ut.rebuild_index.enqueue(2).id == first.id  # running: skipped
        _wait("the holder to finish", lambda: _runs(redis_client, "index"), proc=worker)
        _wait("its key to be freed", lambda: not _queue().unique_keys(), 10, worker)
        assert ut.rebuild_index.enqueue(3).id != first.id
    finally:
        _stop(worker)
    versions = redis_client.lrange("uq:index-versions", 0, -1)
    assert versions[0] == b"1" and b"2" not in versions  # the skipped one never ran (3 may have)


def test_until_started_frees_the_key_when_a_worker_claims_it(redis_url, redis_client):
    first = ut.rebuild_index_until_started.enqueue(1, 1.0)
    assert ut.rebuild_index_until_started.enqueue(2).id == first.id  # still waiting
    worker = _worker(redis_url)
    try:
        _wait(
            "the holder to run",
            lambda: redis_client.exists("uq:running:index-started"),
            proc=worker,
        )
        second = ut.rebuild_index_until_started.enqueue(3)
        assert second.id != first.id  # it started: the key was free
        _wait("both to run", lambda: len(_runs(redis_client, "index-started")) == 2, proc=worker)
    finally:
        _stop(worker)
    assert redis_client.lrange("uq:index-versions", 0, -1) == [b"1", b"3"]


# -- replace and one_followup ----------------------------------------------------------------


def test_replace_takes_the_waiting_holder_out_and_queues_the_newest(redis_client):
    first = ut.rebuild_index_latest.enqueue(1)
    second = ut.rebuild_index_latest.enqueue(2)
    third = ut.rebuild_index_latest.enqueue(3)
    assert len({first.id, second.id, third.id}) == 3
    assert _queue().depths().ready == 1
    for replaced in (first, second):
        replaced.refresh()
        assert replaced.status == TaskResultStatus.FAILED
        assert replaced.errors[-1].exception_class is TaskCancelled
        assert "replaced by" in replaced.errors[-1].traceback
    _burst()
    assert redis_client.lrange("uq:index-versions", 0, -1) == [b"3"]
    third.refresh()
    assert third.status == TaskResultStatus.SUCCESSFUL
    assert _queue().unique_keys() == {}
    assert redis_client.llen(_keys().settle) in (0, 2)  # the settle entries: marked already


def test_one_followup_queues_one_behind_a_running_holder(redis_url, redis_client):
    first = ut.rebuild_index_followup.enqueue(1, 1.0)
    worker = _worker(redis_url)
    try:
        _wait(
            "the holder to run",
            lambda: redis_client.exists("uq:running:index-followup"),
            proc=worker,
        )
        followup = ut.rebuild_index_followup.enqueue(2)
        assert followup.id != first.id
        assert (
            ut.rebuild_index_followup.enqueue(3).id == followup.id
        )  # the follow-up waits: it answers
        assert ut.rebuild_index_followup.enqueue(4).id == followup.id
        _wait("both to run", lambda: len(_runs(redis_client, "index-followup")) == 2, proc=worker)
        _wait("the key to be freed", lambda: not _queue().unique_keys(), 10, worker)
    finally:
        _stop(worker)
    assert redis_client.lrange("uq:index-versions", 0, -1) == [b"1", b"2"]
    (s1, e1), (s2, e2) = _runs(redis_client, "index-followup")
    assert e1 <= s2  # one at a time


# -- the key always comes free ---------------------------------------------------------------


def test_the_ttl_frees_a_key_whose_holder_is_stuck(redis_client):
    first = ut.short_lived_key.enqueue(1)
    _queue().consumer("stuck-forever").claim(1)  # claimed, never acknowledged, heartbeat alive
    assert ut.short_lived_key.enqueue(2).id == first.id
    time.sleep(0.35)
    assert ut.short_lived_key.enqueue(3).id != first.id


def test_a_dead_lettered_holder_frees_its_key(redis_client):
    first = ut.always_fails_uniquely.enqueue(1)
    for _ in range(4):
        _burst()
        time.sleep(0.05)
    first.refresh()
    assert first.status == TaskResultStatus.FAILED and _queue().depths().dead == 1
    assert _queue().unique_keys() == {}
    assert ut.always_fails_uniquely.enqueue(2).id != first.id


def test_a_cancelled_holder_frees_its_key(redis_client):
    first = ut.rebuild_index.enqueue(1)
    assert cancel(first) is Cancel.REMOVED
    assert _queue().unique_keys() == {}
    second = ut.rebuild_index.enqueue(2)
    assert second.id != first.id
    consumer = _queue().consumer("holds-it")
    consumer.claim(1)
    assert cancel(second) is Cancel.REQUESTED
    assert _queue().unique_keys() == {}


def test_a_sigkilled_workers_holder_runs_again_and_strands_no_key(redis_url, redis_client):
    first = ut.rebuild_index.enqueue(1, 2.0)
    worker = _worker(redis_url)
    second = None
    try:
        _wait("the holder to run", lambda: redis_client.exists("uq:running:index"), proc=worker)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        assert ut.rebuild_index.enqueue(2).id == first.id  # still held: it will run again
        second = _worker(redis_url)
        _wait(
            "the holder's second delivery to finish",
            lambda: _runs(redis_client, "index"),
            30,
            second,
        )
        _wait("the key to be freed", lambda: not _queue().unique_keys(), 10, second)
    finally:
        _stop(worker, second)
    assert redis_client.lrange("uq:index-versions", 0, -1) == [b"1", b"1"]  # killed once, run once


# -- many producers ----------------------------------------------------------------------------


_PRODUCER = """
import sys, django
django.setup()
from tests.support import unique_tasks as ut
task = getattr(ut, sys.argv[1])
for i in range(int(sys.argv[2])):
    r = task.enqueue(f"{sys.argv[3]}-{i}", 0.0)
    print(r.id, flush=True)
"""


def _producers(redis_url, task, n, per):
    env = worker_env(redis_url)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PRODUCER, task, str(per), f"p{i}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    ids = set()
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        ids.update(out.split())
    return ids


def test_sixteen_producers_at_once_queue_exactly_one(redis_url, redis_client):
    ids = _producers(redis_url, "rebuild_index", 16, 20)  # 320 enqueues, one key, no worker yet
    assert len(ids) == 1 and _queue().depths().ready == 1
    _burst()
    assert len(_runs(redis_client, "index")) == 1


def test_sixteen_producers_against_a_running_holder_make_one_followup(redis_url, redis_client):
    first = ut.rebuild_index_followup.enqueue("first", -1)  # runs until uq:release
    worker = _worker(redis_url)
    try:
        _wait(
            "the holder to run",
            lambda: redis_client.exists("uq:running:index-followup"),
            proc=worker,
        )
        ids = _producers(redis_url, "rebuild_index_followup", 16, 10)
        assert first.id not in ids and len(ids) == 1  # exactly one follow-up, whoever came first
        redis_client.set("uq:release", 1)
        _wait("both to run", lambda: len(_runs(redis_client, "index-followup")) == 2, 30, worker)
    finally:
        _stop(worker)


def _overlaps(runs):
    runs = sorted(runs)
    return sum(1 for (s1, e1), (s2, e2) in zip(runs, runs[1:], strict=False) if s2 < e1)


def test_under_producers_and_four_workers_runs_of_a_key_never_overlap(redis_url, redis_client):
    workers = [_worker(redis_url, concurrency=2) for _ in range(2)]
    try:
        env = worker_env(redis_url)
        code = """
import sys, time, django
django.setup()
from tests.support import unique_tasks as ut
from django_redcoord.core.transport.clients import get_client
# 40 enqueues at least, and on until the key has run three times (workers that start slowly on a
# loaded machine would otherwise see every duplicate refused behind one waiting task), at most 60 s
deadline, i = time.monotonic() + 60, 0
while i < 40 or (get_client().llen("uq:runs:report:1") < 3 and time.monotonic() < deadline):
    ut.rebuild_report.enqueue(1, 0.02)
    time.sleep(0.005)
    i += 1
"""
        procs = [
            subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env) for _ in range(8)
        ]
        for proc in procs:
            assert proc.wait(120) == 0
        _wait(
            "the queue to drain",
            lambda: _queue().depths().ready + _queue().depths().processing == 0,
            60,
        )
    finally:
        for w in workers:
            _stop(w)
    runs = _runs(redis_client, "report:1")
    assert len(runs) >= 2, "the race ran the key once only: it proves little"
    assert _overlaps(runs) == 0


def test_negative_control_the_same_race_without_a_key_overlaps(redis_url, redis_client):
    workers = [_worker(redis_url, concurrency=2) for _ in range(2)]
    try:
        for _ in range(40):
            ut.not_unique.enqueue("plain", 0.05)
        _wait(
            "the queue to drain",
            lambda: _queue().depths().ready + _queue().depths().processing == 0,
            60,
        )
    finally:
        for w in workers:
            _stop(w)
    assert _overlaps(_runs(redis_client, "plain")) > 0, (
        "the overlap checker missed overlapping runs"
    )


# -- the API's edges ---------------------------------------------------------------------------


def test_inside_a_transaction_a_duplicate_at_commit_says_so():
    first = ut.rebuild_index.enqueue(1)
    with transaction.atomic():
        late = ut.rebuild_index.enqueue(2)
        assert late.id != first.id  # decided when it commits
    late.refresh()
    assert (
        late.status == TaskResultStatus.FAILED and late.errors[-1].exception_class is TaskDuplicate
    )
    assert _queue().depths().ready == 1


def test_aenqueue_and_enqueue_many():
    import asyncio

    from django_redcoord.tasks import aenqueue_many

    async def go():
        a = await ut.rebuild_report.aenqueue(5)
        b = await ut.rebuild_report.aenqueue(5)
        return a, b

    a, b = asyncio.run(go())
    assert a.id == b.id
    results = enqueue_many(ut.rebuild_report, [((5,), {}), ((6,), {}), ((6,), {})])
    assert [r.id == a.id for r in results] == [True, False, False] and results[1].id == results[
        2
    ].id
    later = asyncio.run(aenqueue_many(ut.rebuild_report, [((6,), {}), ((7,), {}), ((7,), {})]))
    assert later[0].id == results[1].id and later[1].id == later[2].id != later[0].id


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"unique": lambda x: x}, TypeError, "module-level function"),
        ({"unique": ""}, ValueError, "1 to 1000"),
        ({"unique": 3}, TypeError, "a key"),
        ({"unique": "k", "until": "done"}, ValueError, "'finished', 'started'"),
        ({"unique": "k", "while_running": "queue"}, ValueError, "'one_followup'"),
        ({"until": "started"}, TypeError, "give unique"),
        ({"unique": "k", "unique_ttl": 0}, ValueError, "> 0"),
    ],
)
def test_bad_unique_options_say_what_is_allowed(options, error, says):
    def plain():
        return None

    plain.__qualname__ = plain.__name__ = "plain"
    plain.__module__ = __name__
    with pytest.raises(error, match=says):
        RedisTask(
            priority=0,
            func=plain,
            backend="default",
            queue_name="default",
            run_after=None,
            takes_context=False,
            **options,
        )


def test_a_key_function_returning_a_bad_key_is_refused_at_enqueue(monkeypatch):
    from django_redcoord.tasks import options

    monkeypatch.setattr(ut, "by_report", lambda *a, **k: 42)
    opts = options.TaskOptions(unique=ut.by_report)
    with pytest.raises(TypeError, match="must return None or a string"):
        opts.unique_key([1], {})


def test_the_admin_and_the_command_show_who_holds_a_key(client, staff, capsys):
    first = ut.rebuild_report.enqueue(9)
    client.force_login(staff("view_dashboard"))
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={first.id}")
    assert b"report:9 (holds it)" in page.content
    call_command("redcoord", "queue", "show", "default")
    out = capsys.readouterr().out
    assert (
        "unique keys held: 1" in out
        and f"tests.support.unique_tasks.rebuild_report:report:9 held by task {first.id}" in out
    )
    _burst()
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={first.id}")
    assert b"report:9 (freed)" in page.content
    plain = ut.not_unique.enqueue("x")
    page = client.get(f"/admin/django_redcoord/dashboard/task-result/?id={plain.id}")
    assert page.status_code == 200 and b"rc-unique" not in page.content


def test_a_duplicates_record_cannot_be_cancelled_into_a_stale_entry(redis_client):
    ut.rebuild_index.enqueue(1)
    with transaction.atomic():
        late = ut.rebuild_index.enqueue(2)
    assert cancel(late) is Cancel.FINISHED
    assert redis_client.zcard(_keys().cancels) == 0
