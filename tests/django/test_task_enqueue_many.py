"""enqueue_many() and aenqueue_many(): a task sent once per (args, kwargs) pair in one round trip,
all or nothing."""

import asyncio

import pytest
from django.core.management import call_command
from django.db import transaction

from django_redcoord.tasks import aenqueue_many, enqueue_many, task_backends_for

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

pytestmark = pytest.mark.django_db(transaction=True)


@task()
def adds(a, b=0):
    return a + b


def _ready():
    return task_backends_for("default").queue("default").depths().ready


def test_every_call_is_sent_in_one_round_trip_and_runs(redis_client, monkeypatch):
    from django_redcoord.core.queues import queue as queue_module

    pipelines = []
    real = queue_module.execute_pipeline
    monkeypatch.setattr(
        queue_module, "execute_pipeline", lambda *a, **k: pipelines.append(1) or real(*a, **k)
    )
    enqueue_many(adds, [((0,), {})])  # (the first use loads the script: NOSCRIPT, then again)
    pipelines.clear()
    redis_client.config_resetstat()
    results = enqueue_many(adds, [((i,), {"b": 1}) for i in range(50)] + [((), {"a": 100})])
    assert pipelines == [1]  # one pipeline: one round trip (two only if Redis lost the script)
    stats = redis_client.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] + stats.get("cmdstat_eval", {}).get("calls", 0) == 51
    assert _ready() == 52 and [r.status for r in results] == [TaskResultStatus.READY] * 51
    assert len({r.id for r in results}) == 51
    call_command("run_worker", "--burst", verbosity=0)
    for i, result in enumerate(results):
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL
        assert result.return_value == (i + 1 if i < 50 else 100) and result.args == (
            [i] if i < 50 else []
        )


def test_one_bad_call_and_nothing_is_sent():
    with pytest.raises(TypeError, match="JSON"):
        enqueue_many(adds, [((1,), {}), ((object(),), {})])
    with pytest.raises(TypeError, match=r"\(args, kwargs\) pairs"):
        enqueue_many(adds, [((1,), {}), (1, 2, 3)])
    with pytest.raises(TypeError, match=r"\(args, kwargs\) pairs"):
        enqueue_many(adds, [[1, 2]])
    assert _ready() == 0
    assert enqueue_many(adds, []) == []


def test_inside_a_transaction_they_are_sent_when_it_commits_and_not_if_it_rolls_back():
    with transaction.atomic():
        enqueue_many(adds, [((1,), {}), ((2,), {})])
        assert _ready() == 0
    assert _ready() == 2
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue_many(adds, [((3,), {})])
        raise RuntimeError("rolled back")
    assert _ready() == 2


def test_result_ids_are_random_letters_and_digits_in_the_queues_slot():
    from django_redcoord.core.keys import key_slot
    from django_redcoord.tasks.backend import _ALNUM, _random_alnum

    draws = [_random_alnum(29) for _ in range(3000)]
    assert all(len(d) == 29 and set(d) <= set(_ALNUM) for d in draws) and len(set(draws)) == 3000
    seen = {c for d in draws for c in d}
    assert seen == set(_ALNUM)  # every character comes up (87,000 draws of 62)
    counts = [sum(d.count(c) for d in draws) for c in _ALNUM]
    assert max(counts) < 2 * min(counts)  # no character far more likely than another
    backend = task_backends_for("default")
    ids = [backend._new_id("default", _random_alnum(29)) for _ in range(20)]
    slot = key_slot(backend._queue_key("default"))
    assert all(key_slot(backend._result_key(i)) == slot for i in ids)


def test_aenqueue_many_sends_every_call_in_one_round_trip_on_the_event_loop(redis_client):
    try:
        from django.tasks.signals import task_enqueued
    except ImportError:
        from django_tasks.signals import task_enqueued

    enqueued = []

    def on_enqueued(sender, task_result, **kwargs):
        enqueued.append(task_result.id)

    task_enqueued.connect(on_enqueued)
    try:
        asyncio.run(aenqueue_many(adds, [((0,), {})]))  # (the script is loaded: NOSCRIPT, again)
        redis_client.config_resetstat()
        results = asyncio.run(aenqueue_many(adds, [((i,), {"b": 2}) for i in range(30)]))
    finally:
        task_enqueued.disconnect(on_enqueued)
    stats = redis_client.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] + stats.get("cmdstat_eval", {}).get("calls", 0) == 30
    assert _ready() == 31 and len({r.id for r in results}) == 30
    assert enqueued[1:] == [r.id for r in results]  # the signal, once per task, in order
    call_command("run_worker", "--burst", verbosity=0)
    for i, result in enumerate(results):
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == i + 2


def test_aenqueue_many_refuses_a_bad_call_and_sends_nothing():
    async def go(calls):
        return await aenqueue_many(adds, calls)

    with pytest.raises(TypeError, match="JSON"):
        asyncio.run(go([((1,), {}), ((float("nan"),), {})]))
    with pytest.raises(TypeError, match=r"\(args, kwargs\) pairs"):
        asyncio.run(go([((1,), {}), ((1,), {2: 3})]))
    assert _ready() == 0
    assert asyncio.run(go([])) == []
