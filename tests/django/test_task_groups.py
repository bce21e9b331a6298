"""Grouped Django Tasks: the ``group`` options of ``@task`` (RedisTask) and ``task_options``,
``in_group``, FIFO within a tenant through the real ``run_worker``, cancel of a grouped task
waiting behind its group or in line, ``enqueue_many`` and the outbox (queues/common.lua, Groups).
"""

import json

import pytest
from django.core.management import call_command
from django.db import transaction

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.outbox.drain import drain
from django_redcoord.tasks import Cancel, cancel, enqueue_many, in_group, task_backends_for
from django_redcoord.tasks.options import RedisTask, task_options
from tests.support import group_tasks as gt

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

pytestmark = pytest.mark.django_db(transaction=True)


def _keys():
    return KeyBuilder("test").queue("default")


def _state(client):
    return {
        k.decode(): tuple(int(x) for x in v.decode().split(" ")[:2])
        for k, v in client.hgetall(_keys().gstate).items()
    }


def _record(client, result):
    backend = task_backends_for("default")
    return {
        k.decode(): v.decode() for k, v in client.hgetall(backend._result_key(result.id)).items()
    }


def _runs(client, tenant):
    return [int(x) for x in client.lrange(f"gt:runs:{tenant}", 0, -1)]


def test_a_tenants_tasks_run_in_order_and_each_tenant_gets_its_turn(redis_client):
    results = [gt.tenant_step.enqueue(t, s) for s in range(5) for t in (1, 2, 3)]
    assert _record(redis_client, results[0])["group"] == "tenant:1"
    assert isinstance(gt.tenant_step, RedisTask) and gt.tenant_step.group_concurrency == 1
    assert _state(redis_client) == {"tenant:1": (1, 0), "tenant:2": (1, 0), "tenant:3": (1, 0)}
    call_command("run_worker", "--burst", verbosity=0)
    for r in results:
        r.refresh()
        assert r.status == TaskResultStatus.SUCCESSFUL
    for t in (1, 2, 3):
        assert _runs(redis_client, t) == [0, 1, 2, 3, 4]
    assert _state(redis_client) == {}


def test_in_group_puts_one_call_in_a_group_and_leaves_the_task_as_it_was(redis_client):
    result = in_group(gt.shared_step, "vip").enqueue(1)
    assert _record(redis_client, result)["group"] == "vip"
    assert gt.shared_step.group == "shared"
    plain = gt.shared_step.enqueue(2)
    assert _record(redis_client, plain)["group"] == "shared"
    with pytest.raises(ValueError, match="newline"):
        in_group(gt.shared_step, "a\nb")
    # the call's group wins over the task's group function
    assert _record(redis_client, in_group(gt.maybe_grouped, "vip").enqueue(0, 1))["group"] == "vip"
    with pytest.raises(TypeError, match="RedisTask"):
        in_group(len, "vip")


def test_a_group_function_may_answer_none_and_a_bad_answer_is_refused(redis_client):
    plain = gt.maybe_grouped.enqueue(0, 1)
    assert "group" not in _record(redis_client, plain)
    grouped = gt.maybe_grouped.enqueue(5, 1)
    assert _record(redis_client, grouped)["group"] == "t5"
    depth = task_backends_for("default").queue("default").depths().ready
    with pytest.raises(TypeError, match="group function"):
        gt.maybe_grouped.enqueue(-1, 1)
    assert task_backends_for("default").queue("default").depths().ready == depth


def test_bad_group_options_are_refused_at_declaration():
    with pytest.raises(TypeError, match="module-level"):
        task_options(group=lambda x: "g")
    with pytest.raises(TypeError, match="give group"):
        task_options(group_concurrency=2)
    with pytest.raises(ValueError, match="one GCRA rate"):
        task_options(group="g", group_rate="concurrency=3")
    with pytest.raises(ValueError, match="between 1 and"):

        @task(group="g", group_concurrency=0)
        def never():
            return None


def test_cancel_a_grouped_task_behind_its_group_and_one_in_line(redis_client):
    first, waiting, last = (gt.tenant_step.enqueue(9, s) for s in range(3))
    assert _state(redis_client) == {"tenant:9": (1, 0)}
    assert cancel(waiting.id) == Cancel.REMOVED  # behind its group (gpend)
    assert cancel(first.id) == Cancel.REMOVED  # in line: the group's next takes its place
    assert _state(redis_client) == {"tenant:9": (1, 0)}
    call_command("run_worker", "--burst", verbosity=0)
    assert _runs(redis_client, 9) == [2]
    last.refresh()
    assert last.status == TaskResultStatus.SUCCESSFUL
    assert _state(redis_client) == {}


def test_enqueue_many_keeps_each_calls_group(redis_client):
    results = enqueue_many(gt.tenant_step, [((4, s), {}) for s in range(3)] + [((5, 0), {})])
    assert {_record(redis_client, r)["group"] for r in results} == {"tenant:4", "tenant:5"}
    call_command("run_worker", "--burst", verbosity=0)
    assert _runs(redis_client, 4) == [0, 1, 2] and _runs(redis_client, 5) == [0]


def test_the_outbox_keeps_a_tasks_group(settings, redis_client):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"OUTBOX": True},
        },
    }
    backend = task_backends_for("default")
    from django_redcoord.outbox.models import OutboxEntry

    with transaction.atomic():
        result = gt.tenant_step.enqueue(6, 0)
        entry = OutboxEntry.objects.get(id=result.id)
        assert json.loads(entry.payload)["group"] == {
            "name": "tenant:6",
            "concurrency": 1,
            "rate": None,
        }
    # as if the commit's own send was lost: the entry is back, and a drain sends it
    redis_client.delete(backend._result_key(result.id), _keys().ready, _keys().gstate)
    entry.save()
    assert drain(backend, min_age=0) == (1, 0)
    assert _record(redis_client, result)["group"] == "tenant:6"
    assert _state(redis_client) == {"tenant:6": (1, 0)}


def _most_at_once(redis_client):
    return max(int(x) for x in redis_client.lrange("gt:seen", 0, -1))


def test_slow_tasks_run_side_by_side_in_the_workers_threads(redis_client):
    # one thread's first claim takes all six; once its batch runs past the budget the rest goes
    # back, and the other thread runs them (queues/worker.py, BATCH_BUDGET)
    results = [gt.slow_step.enqueue(f"s{i}", 0.3) for i in range(6)]
    call_command("run_worker", "--burst", "--concurrency", "2", verbosity=0)
    assert _most_at_once(redis_client) == 2
    for result in results:
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL
        assert len(result.worker_ids) == 1  # a message given back unstarted spent no attempt


def test_two_tenants_of_concurrency_one_run_side_by_side(redis_client):
    for step in range(3):
        for tenant in (1, 2):
            gt.slow_tenant_step.enqueue(tenant, step, 0.3)
    call_command("run_worker", "--burst", "--concurrency", "2", verbosity=0)
    assert _most_at_once(redis_client) == 2
    for tenant in (1, 2):  # each tenant still one at a time, in order
        assert [int(x) for x in redis_client.lrange(f"gt:runs:{tenant}", 0, -1)] == [0, 1, 2]
