"""Workflows of Django Tasks: chains, groups and chords through the real ``run_worker``, each
policy when a member fails, the callback once, cancel, and a sweep that finishes what a dead
worker left (tasks/workflows.py, core/lua/tasks/workflow.lua)."""

import pytest
from django.core.management import call_command

from django_redcoord.tasks import Cancel, Workflow, cancel, chain, chord, get_workflow, group, step
from tests.support import workflow_tasks as wt

try:
    from django.tasks import default_task_backend
    from django.tasks.exceptions import TaskResultDoesNotExist
except ImportError:
    from django_tasks import default_task_backend
    from django_tasks.exceptions import TaskResultDoesNotExist

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fast_retries(settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }


def _burst():
    call_command("run_worker", "--burst", verbosity=0)


def _runs(client):
    return [r.decode() for r in client.lrange("wt:runs", 0, -1)]


def _counts(client):
    return {k.decode(): int(v) for k, v in client.hgetall("wt:count").items()}


def test_a_chain_runs_its_steps_in_order_and_succeeds(redis_client):
    wf = chain(step(wt.record, "a"), step(wt.record, "b"), step(wt.record, "c")).enqueue()
    assert wf.refresh().status == "RUNNING"
    assert [m["state"] for m in wf.members] == ["started", "waiting", "waiting"]
    _burst()
    assert _runs(redis_client) == ["a", "b", "c"]
    assert wf.refresh().status == "SUCCESSFUL"
    assert [m["state"] for m in wf.members] == ["succeeded"] * 3


def test_a_chord_runs_its_callback_once_after_every_member(redis_client):
    wf = chord([step(wt.record, f"m{i}") for i in range(5)], then=step(wt.collect, "cb")).enqueue()
    _burst()
    assert wf.refresh().status == "SUCCESSFUL"
    runs = _runs(redis_client)
    assert sorted(runs[:5]) == [f"m{i}" for i in range(5)] and runs[5:] == ["cb"]
    assert redis_client.get("wt:seen:cb").decode().startswith("succeeded,succeeded")
    assert wf.callback["state"] == "succeeded"


@pytest.mark.parametrize(
    ("policy", "ran", "status", "callback"),
    [
        ("fail_fast", ["1", "2"], "FAILED", "skipped"),
        ("run_callback", ["1", "2", "cb"], "FAILED", "succeeded"),
        ("continue", ["1", "2", "3", "cb"], "FAILED", "succeeded"),
    ],
)
def test_a_chain_member_that_fails_under_each_policy(redis_client, policy, ran, status, callback):
    wf = chain(
        step(wt.record, "1"),
        step(wt.fail, "2"),
        step(wt.record, "3"),
        then=step(wt.record, "cb"),
        on_failure=policy,
    ).enqueue()
    _burst()
    assert _runs(redis_client) == ran
    wf.refresh()
    assert wf.status == status and wf.callback["state"] == callback
    assert wf.members[1]["state"] == "failed"
    assert wf.members[2]["state"] == ("succeeded" if policy == "continue" else "skipped")


def test_fail_fast_cancels_a_groups_members_still_waiting(redis_client):
    wf = group(
        [step(wt.fail, "bad"), *(step(wt.record, f"ok{i}") for i in range(3))],
        then=step(wt.record, "cb"),
    ).enqueue()
    _burst()
    wf.refresh()
    assert wf.status == "FAILED" and wf.callback["state"] == "skipped"
    assert _runs(redis_client)[0] == "bad" and "cb" not in _runs(redis_client)
    # the others were cancelled: their results are FAILED (TaskCancelled) whether they had
    # started (a worker prefetched them: they may run on, their outcome dropped) or not
    assert [m["state"] for m in wf.members] == ["failed"] * 4
    for result in wf.results()[1:]:
        assert result.status == "FAILED"
        assert result.errors[-1].exception_class_path.endswith("TaskCancelled")


def test_cancelling_a_member_counts_as_its_failure(redis_client):
    wf = chain(
        step(wt.record, "1"),
        step(wt.record, "2"),
        then=step(wt.record, "cb"),
        on_failure="continue",
    ).enqueue()
    first = wf.members[0]["id"]
    assert cancel(first) == Cancel.REMOVED
    _burst()
    wf.refresh()
    assert _runs(redis_client) in (["2", "cb"],)
    assert wf.status == "FAILED" and wf.members[0]["state"] == "failed"


def test_cancelling_a_workflow(redis_client):
    wf = chain(step(wt.record, "1"), step(wt.record, "2"), then=step(wt.record, "cb")).enqueue()
    assert wf.cancel() in ("RUNNING", "FAILED")
    _burst()
    assert get_workflow(wf.id).status == "FAILED" and _runs(redis_client) == []


def test_bad_workflows_are_refused_saying_what_is_allowed():
    with pytest.raises(ValueError, match="at least one step"):
        chain()
    with pytest.raises(TypeError, match="step"):
        chain(wt.record)
    with pytest.raises(ValueError, match="on_failure"):
        chain(step(wt.record, "x"), on_failure="retry")
    with pytest.raises(TypeError, match="JSON"):
        chain(step(wt.record, {1, 2})).enqueue()
    with pytest.raises(ValueError, match="not a workflow id"):
        get_workflow("a b")
    assert get_workflow("nosuchworkflow").status == "GONE"


def test_aenqueue_from_async_code(redis_client):
    import asyncio

    async def start():
        return await chain(step(wt.record, "async-1"), step(wt.record, "async-2")).aenqueue()

    wf = asyncio.run(start())
    _burst()
    assert wf.refresh().status == "SUCCESSFUL" and _runs(redis_client) == ["async-1", "async-2"]


def test_a_unique_task_or_run_after_is_refused_as_a_member():
    from datetime import timedelta

    from django.utils import timezone

    from tests.support import unique_tasks as ut

    with pytest.raises(ValueError, match="unique"):
        chain(step(ut.rebuild_report, 1)).enqueue()
    later = wt.record.using(run_after=timezone.now() + timedelta(minutes=1))
    with pytest.raises(ValueError, match="run_after"):
        chain(step(later, "x")).enqueue()


def test_a_callback_reads_its_members_results_as_the_docs_write_it(redis_client):
    # current_workflow() in a callback, then results() with no refresh() first
    wf = chord(
        [step(wt.record, f"r{i}") for i in range(3)], then=step(wt.summarize, "sum")
    ).enqueue()
    _burst()
    assert wf.refresh().status == "SUCCESSFUL"
    callback = default_task_backend.get_result(wf.callback["id"])
    assert sorted(callback.return_value) == ["r0", "r1", "r2"]


def test_results_of_a_workflow_never_read_and_of_an_expired_member(redis_client):
    wf = chain(step(wt.record, "x1"), step(wt.record, "x2")).enqueue()
    _burst()
    # a handle made from the id alone reads the workflow when asked for results
    assert [r.return_value for r in Workflow(wf.id).results()] == ["x1", "x2"]
    # a member whose result record expired (RESULT_TTL) is named, not a bare lookup error
    redis_client.delete(default_task_backend._result_key(wf.members[0]["id"]))
    with pytest.raises(TaskResultDoesNotExist, match=r"member 0 of workflow .*RESULT_TTL"):
        wf.results()
