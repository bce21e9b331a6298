"""The Tasks layer's own scripts (unique enqueue, cancel, the result records) through the sync and
the asyncio API, on one server, through Sentinel and on a Redis Cluster
(tests/support/drivers.py KINDS):
a duplicate returns the holder, a cancelled task never runs and a repeated cancel answers the
same, the worker frees every key, and the results read what happened."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from django.core.management import call_command
from django.test import override_settings

from django_redcoord.core.transport.clients import client_from_url, get_client
from django_redcoord.tasks import (
    Cancel,
    acancel,
    aenqueue_many,
    cancel,
    enqueue_many,
    task_backends_for,
)
from tests.support import cancel_tasks as ct
from tests.support import unique_tasks as ut
from tests.support.drivers import KINDS

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

TASKS = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": ["default"]}}


@pytest.fixture(params=KINDS)
def topology(request, settings, redis_url):
    """(kind, the REDCOORD of that topology, with a prefix of the test's own)."""
    kind = request.param
    if kind.endswith("-sentinel"):
        found = request.getfixturevalue("sentinel_topology")
        admin = client_from_url(found.master_url)
        admin.flushall()
        admin.close()
        config = {k: v for k, v in found.config.items() if k != "URL"}
    elif kind.endswith("-cluster"):
        found = request.getfixturevalue("cluster_topology")
        found.wait_ok()
        found.flush()
        config = {k: v for k, v in found.config.items() if k != "URL"}
    else:
        config = {"URL": redis_url}
    options = {
        **settings.REDCOORD,
        "URL": None,
        **config,
        "KEY_PREFIX": f"tc{secrets.token_hex(3)}",
    }
    with override_settings(REDCOORD=options, TASKS=TASKS):
        yield kind.split("-")[0]


def _burst() -> None:
    call_command("run_worker", "--burst", verbosity=0)


def _runs(label: str) -> int:
    return int(get_client().get(f"cancel:runs:{label}") or 0)


def test_unique_cancel_and_results_through_each_api_and_topology(topology):
    backend = task_backends_for("default")
    report = secrets.token_hex(4)

    if topology == "sync":
        first = ut.rebuild_report.enqueue(report)
        again = ut.rebuild_report.enqueue(report)
        plain = [ct.counted.enqueue(f"p{i}") for i in range(3)]
        cancels = [cancel(plain[1]), cancel(plain[1])]
    else:

        async def scenario():
            first = await ut.rebuild_report.aenqueue(report)
            again = await ut.rebuild_report.aenqueue(report)
            plain = [await ct.counted.aenqueue(f"p{i}") for i in range(3)]
            return first, again, plain, [await acancel(plain[1]), await acancel(plain[1])]

        first, again, plain, cancels = asyncio.run(scenario())
    assert again.id == first.id, "a duplicate got a task of its own"
    assert cancels == [Cancel.REMOVED, Cancel.REMOVED]
    assert backend.queue("default").unique_keys() == {
        f"tests.support.unique_tasks.rebuild_report:report:{report}": first.id
    }
    _burst()
    assert [_runs(f"p{i}") for i in range(3)] == [1, 0, 1]
    assert get_client().llen(f"uq:runs:report:{report}") == 1
    assert backend.queue("default").unique_keys() == {}, "a key stranded after its task ran"
    if topology == "sync":
        done, cancelled = backend.get_result(first.id), backend.get_result(plain[1].id)
        finished = cancel(first)
    else:

        async def read():
            return (
                await ut.rebuild_report.aget_result(first.id),
                await ct.counted.aget_result(plain[1].id),
                await acancel(first),
            )

        done, cancelled, finished = asyncio.run(read())
    assert done.status == TaskResultStatus.SUCCESSFUL and done.attempts == 1
    assert finished == Cancel.FINISHED
    assert cancelled.status == TaskResultStatus.FAILED
    assert cancelled.errors[-1].exception_class_path.endswith("TaskCancelled")


def test_a_batch_is_sent_whole_through_each_api_and_topology(topology):
    """enqueue_many()/aenqueue_many(): one pipeline of scripts (on a Cluster, routed per slot),
    each task once (the scripts gone from the server first), every result read back."""
    labels = [f"b{secrets.token_hex(3)}-{i}" for i in range(20)]
    calls = [((label,), {}) for label in labels]
    # as after a restart: the pipeline meets NOSCRIPT, loads, sends again
    get_client().script_flush()
    if topology == "sync":
        results = enqueue_many(ct.counted, calls)
    else:
        results = asyncio.run(aenqueue_many(ct.counted, calls))
    assert len({r.id for r in results}) == 20
    assert task_backends_for("default").queue("default").depths().ready == 20
    _burst()
    assert [_runs(label) for label in labels] == [1] * 20
    for result in results:
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL and result.attempts == 1
