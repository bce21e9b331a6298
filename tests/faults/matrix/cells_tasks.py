"""Cells of the Tasks layer's own scripts: unique tasks (queues/push_unique.lua, the key freed by
claim, nack, reap and cancel), cancel (tasks/cancel.lua) and the result records.

What they guarantee: a cancelled task never runs, and a cancel answers the same when sent again;
a unique key is held by exactly one live task and freed by whatever ends it (its run, its
dead letter, the reaper after a SIGKILL, a cancel), so no key is stranded; a duplicate enqueue
returns the holder's result; every task that was not cancelled runs (at least once), and a
task's record counts every delivery, the killed ones included. Each cell runs a real Tasks
worker (the worker and runner ``manage.py run_worker`` builds), in a thread or a forked process.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.test import override_settings

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.queues.worker import Worker
from django_redcoord.tasks import Cancel, TaskRunner, cancel, task_backends_for
from django_redcoord.tasks.compat import utcnow

from ...support import cancel_tasks as ct
from ...support import unique_tasks as ut
from ..names import hostile
from .context import LEASE, PAUSE, SOCKET_TIMEOUT, Ctx, Party, describe, outage_claim
from .table import cell

try:
    from django.tasks import TaskResultStatus
    from django.tasks.exceptions import TaskResultDoesNotExist
except ImportError:
    from django_tasks import TaskResultStatus
    from django_tasks.exceptions import TaskResultDoesNotExist


@contextmanager
def tasks_on(ctx: Ctx, **redcoord: Any) -> Iterator[Any]:
    """Django settings pointing the Tasks backend (and get_client(), which the tasks use to
    count their runs) at the cell's server, with the cell's prefix and short leases."""
    options = {
        **settings.REDCOORD,
        "URL": ctx.url,
        "KEY_PREFIX": ctx.prefix,
        "SOCKET_TIMEOUT": SOCKET_TIMEOUT,
        "CONNECT_TIMEOUT": SOCKET_TIMEOUT,
        "WORKER_HEARTBEAT": 0.2,
        "WORKER_TIMEOUT": LEASE,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
        **redcoord,
    }
    tasks = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "receipts"],
        }
    }
    with override_settings(REDCOORD=options, TASKS=tasks):
        yield task_backends_for("default")


def _worker(backend: Any, *, concurrency: int = 1, burst: bool = False) -> tuple[Worker, Party]:
    """The worker ``run_worker`` builds (its runner as handler and write-behind), in a thread."""
    worker = Worker(
        [backend.queue(n) for n in sorted(backend.queues)],
        handler=None,
        heartbeat=0.2,
        timeout=LEASE,
        concurrency=concurrency,
        burst=burst,
    )
    worker.handler = worker.write_behind = TaskRunner(backend, worker.id)
    return worker, Party(worker.run, "task-worker")


@contextmanager
def _serving(backend: Any, found: list[str], *, concurrency: int = 1) -> Iterator[Any]:
    """A Tasks worker in a thread while the block runs; it must still run at the block's end."""
    worker, running = _worker(backend, concurrency=concurrency)
    try:
        yield worker
        if running.done():
            found.append(f"the worker stopped: {running.outcome(0)}")
    finally:
        worker.stop()
        running.join(8)


def _burst(backend: Any, seconds: float = 10.0) -> str | None:
    worker, running = _worker(backend, burst=True)
    kind, value = running.outcome(seconds)
    if kind != "ok":
        worker.stop()
        running.join(5)
        return f"a burst worker ended {kind}: {describe(value) if value else ''}"
    return None


def _runs(client: Any, label: str) -> int:
    return int(client.get(f"cancel:runs:{label}") or 0)


def _until(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _stranded(backend: Any) -> list[str]:
    keys = backend.queue("default").unique_keys()
    return [f"unique keys stranded after every task ended: {keys}"] if keys else []


def _counted(client: Any, labels: list[str], cancelled: set[str]) -> list[str]:
    """Each label ran once, the cancelled ones never."""
    found = []
    for label in labels:
        runs = _runs(client, label)
        if label in cancelled and runs:
            found.append(f"cancelled task {label} ran {runs} time(s)")
        elif label not in cancelled and runs != 1:
            found.append(f"task {label} ran {runs} time(s), not once")
    return found


def _common_setup(backend: Any, cancel_with: Any = cancel) -> tuple[list[Any], Any, Any]:
    """Five counted tasks (the second cancelled while it waits) and one unique task."""
    plain = [ct.counted.enqueue(f"p{i}") for i in range(5)]
    unique = ut.rebuild_report.enqueue(1)
    return plain, unique, cancel_with(plain[1])


@cell(
    "task",
    "restart-with-data",
    "a cancel and a unique key survive the restart: the cancelled task never runs and a repeated "
    "cancel answers the same; a duplicate enqueue still returns the holder; every other task runs "
    "once and frees its key",
)
def task_restart_with_data(ctx: Ctx, cancel_with: Any = cancel) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        plain, unique, first = _common_setup(backend, cancel_with)
        ctx.restart(keep_data=True)
        again = cancel_with(plain[1])
        if (first, again) != (Cancel.REMOVED, Cancel.REMOVED):
            found.append(f"cancel answered {first}, then {again} after the restart")
        duplicate = ut.rebuild_report.enqueue(1)
        if duplicate.id != unique.id:
            found.append("a duplicate enqueued after the restart got a task of its own")
        found += filter(None, [_burst(backend)])
        found += _counted(client, [f"p{i}" for i in range(5)], {"p1"})
        if len(client.lrange("uq:runs:report:1", 0, -1)) != 1:
            found.append("the unique task did not run once")
        found += _stranded(backend)
        status = backend.get_result(plain[1].id).status
        if status != TaskResultStatus.FAILED:
            found.append(f"the cancelled task's result reads {status}, not FAILED")
    return found


@cell(
    "task",
    "restart-without-data",
    "what Redis held is lost (documented): a lost task's result and cancel raise "
    "TaskResultDoesNotExist, the unique key is free again, and tasks enqueued afterwards run once",
    smoke=True,
)
def task_data_loss(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        plain, unique, _ = _common_setup(backend)
        ctx.restart(keep_data=False)
        for what, call in (
            ("get_result", lambda: backend.get_result(unique.id)),
            ("cancel", lambda: cancel(unique)),
        ):
            try:
                call()
                found.append(f"{what} of a task lost with the data did not raise")
            except TaskResultDoesNotExist:
                pass
            except Exception as exc:
                found.append(f"{what} of a task lost with the data raised {describe(exc)}")
        after = ut.rebuild_report.enqueue(1)
        if after.id == unique.id:
            found.append("the unique key of a lost task still held after the data loss")
        ct.counted.enqueue("after")
        found += filter(None, [_burst(backend)])
        found += _counted(client, ["after"], set())
        found += _stranded(backend)
    return found


@cell(
    "task",
    "connection-kill",
    "a Tasks worker idle on its wake list when its connections are killed goes on: unique and "
    "plain tasks enqueued afterwards run once within 3 s, a delayed one cancelled never runs, and "
    "no key is stranded",
)
def task_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend, _serving(backend, found):
        ctx.wait_blocked(1)
        ctx.kill_connections()
        time.sleep(0.1)
        later = ct.counted.using(run_after=utcnow() + timedelta(seconds=2)).enqueue("later")
        ct.counted.enqueue("now")
        ut.rebuild_report.enqueue(2)
        if cancel(later) != Cancel.REMOVED:
            found.append("a delayed task was not removed by its cancel")
        if not _until(lambda: _runs(client, "now") and client.llen("uq:runs:report:2"), 3.0):
            found.append("tasks enqueued after the connection kill did not run within 3 s")
        time.sleep(2.2)  # past the cancelled task's due time
        found += _counted(client, ["now", "later"], {"later"})
        if not _until(lambda: not backend.queue("default").unique_keys(), 2.0):
            found += _stranded(backend)
    return found


@cell(
    "task",
    "paused-server",
    "an enqueue and a cancel during the pause raise CoordinationUnavailable (nothing half-done: "
    "no record, no key, no message); after it, the same calls succeed and the tasks run once",
)
def task_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        waiting = ct.counted.enqueue("waiting")
        resume = ctx.pause(PAUSE)
        for what, call in (
            ("a unique enqueue", lambda: ut.rebuild_report.enqueue(3)),
            ("a cancel", lambda: cancel(waiting)),
        ):
            try:
                call()
                found.append(f"{what} on a paused server succeeded")
            except CoordinationUnavailable:
                pass
            except Exception as exc:
                found.append(f"{what} on a paused server raised {describe(exc)}")
        resume.join()
        held = backend.queue("default").unique_keys()
        if held:
            found.append(f"the refused unique enqueue left its key held: {held}")
        ut.rebuild_report.enqueue(3)
        if cancel(waiting) != Cancel.REMOVED:
            found.append("the cancel after the pause did not remove the waiting task")
        found += filter(None, [_burst(backend)])
        found += _counted(client, ["waiting"], {"waiting"})
        if client.llen("uq:runs:report:3") != 1:
            found.append("the unique task enqueued after the pause did not run once")
        found += _stranded(backend)
    return found


def _worker_process(index: int, url: str, prefix: str, report: Any, go: Any) -> str:
    """A Tasks worker in a forked process (the parent's settings, inherited)."""
    worker, running = _worker(task_backends_for("default"))
    report.put("up")
    go.wait(60)
    worker.stop()
    return running.outcome(10)[0]


def task_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    """A worker process runs a unique task (it blocks until told) and is struck: the task runs
    again elsewhere, its record counts both deliveries, its key is freed once it ends; with
    SIGSTOP, a cancel sent while it is stopped makes the resumed worker's outcome dropped."""
    from ...support import multiproc

    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx) as backend:
        result = ut.rebuild_index.enqueue(1, seconds=-1)  # runs until uq:release is set
        report, go = multiproc.queue(), multiproc.event()
        proc = ctx.process(_worker_process, ctx.url, ctx.prefix, report, go)
        report.get(timeout=15)
        if not _until(lambda: client.exists("uq:running:index"), 10):
            return ["the worker process did not start the unique task"]
        proc.signal(19 if stop else 9)
        client.delete("uq:running:index")
        worker, running = _worker(backend)
        try:
            if not _until(lambda: client.exists("uq:running:index"), LEASE + 6):
                found.append("the struck worker's task was not delivered again")
            if stop:
                outcome = cancel(result)
                if outcome != Cancel.REQUESTED:
                    found.append(f"cancel of the running task answered {outcome}")
                proc.signal(18)
            client.set("uq:release", 1)
            if not _until(lambda: not backend.queue("default").unique_keys(), 10):
                found += _stranded(backend)
            final = backend.get_result(result.id)
            want = TaskResultStatus.FAILED if stop else TaskResultStatus.SUCCESSFUL
            if not _until(lambda: backend.get_result(result.id).status == want, 5):
                found.append(
                    f"the task's result reads {backend.get_result(result.id).status}, not {want}"
                )
            final = backend.get_result(result.id)
            if final.attempts < 2:
                found.append(f"the record counts {final.attempts} attempt(s) for two deliveries")
            if (
                stop
                and any(e.exception_class_path.endswith("TaskCancelled") for e in final.errors)
                is False
            ):
                found.append(f"the cancelled task's errors do not say so: {final.errors}")
        finally:
            if stop:  # (a SIGKILLed waiter would hold up set() forever)
                go.set()
            worker.stop()
            running.join(5)
            client.delete("uq:release")
    return found


cell(
    "task",
    "holder-sigkill",
    "the unique task of a SIGKILLed worker runs again once the lease lapses; its record "
    "counts both deliveries and its key is freed when the second run ends",
)(lambda ctx: task_holder(ctx, stop=False))
cell(
    "task",
    "holder-sigstop",
    "the unique task of a worker SIGSTOPped past its lease runs again; cancelled while it is "
    "stopped, its result reads FAILED (TaskCancelled) whatever the resumed worker reports, and "
    "its key is freed",
)(lambda ctx: task_holder(ctx, stop=True))


@cell(
    "task",
    "pool-exhaustion",
    "a Tasks worker with 8 threads on a pool of 6, unique enqueues and cancels from the same "
    "pool: every call succeeds (no error reads as an outage), 25 tasks run once, 5 cancelled never",
)
def task_pool(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx, MAX_CONNECTIONS=6) as backend, _serving(backend, found, concurrency=8):
        errors, cancelled = [], set()
        for i in range(30):
            try:
                later = i % 6 == 0
                task = (
                    ct.counted.using(run_after=utcnow() + timedelta(seconds=3))
                    if later
                    else ct.counted
                )
                result = task.enqueue(f"t{i}")
                ut.rebuild_report.enqueue(100 + i)
                if later:
                    cancel(result)
                    cancelled.add(f"t{i}")
            except Exception as exc:
                errors.append(exc)
        found += [f"a call: {outage_claim(exc) or describe(exc)}" for exc in errors]
        labels = [f"t{i}" for i in range(30)]
        _until(
            lambda: (
                sum(_runs(client, x) for x in labels) >= 25
                and not backend.queue("default").unique_keys()
            ),
            10,
        )
        time.sleep(3.2)  # past the cancelled ones' due time
        found += _counted(client, labels, cancelled)
        found += _stranded(backend)
    return found


@cell(
    "task",
    "hostile-names",
    "unique keys with every allowed character: held by one task, a duplicate returns "
    "it, the run frees it; a task on a queue of hostile name is cancelled and never runs",
)
def task_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    key = hostile("unique")
    with tasks_on(ctx) as backend:
        first = ut.rebuild_report.enqueue(key)
        again = ut.rebuild_report.enqueue(key)
        if again.id != first.id:
            found.append("a duplicate of a hostile unique key got a task of its own")
        held = backend.queue("default").unique_keys()
        if list(held.values()) != [first.id]:
            found.append(f"the hostile key is held as {held}")
        found += filter(None, [_burst(backend)])
        if client.llen(f"uq:runs:report:{key}") != 1:
            found.append("the task of the hostile unique key did not run once")
        found += _stranded(backend)
    name = hostile("queue")
    with (
        tasks_on(ctx) as backend,
        override_settings(
            TASKS={
                "default": {
                    "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
                    "QUEUES": ["default", name],
                }
            }
        ),
    ):
        backend = task_backends_for("default")
        result = ct.counted.using(queue_name=name).enqueue("hostile")
        if cancel(result) != Cancel.REMOVED:
            found.append("a task on a hostile queue was not removed by its cancel")
        found += filter(None, [_burst(backend)])
        found += _counted(client, ["hostile"], {"hostile"})
    return found


# -- the Cluster columns -------------------------------------------------------------------------


class Tasks:
    """The Cluster adapter (see cells_cluster._run): tasks waiting, one cancelled, a unique key
    held; the act is one more unique enqueue and one more cancel; then a worker drains."""

    what = "a unique enqueue and a cancel"

    def setup(self, ctx: Any) -> Any:
        from contextlib import ExitStack

        stack = ExitStack()
        options = {
            **settings.REDCOORD,
            "URL": None,
            **ctx.topology.config,
            "KEY_PREFIX": ctx.prefix,
        }
        tasks = {
            "default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": ["default"]}
        }
        stack.enter_context(override_settings(REDCOORD=options, TASKS=tasks))
        backend = task_backends_for("default")
        plain = [ct.counted.enqueue(f"c{i}") for i in range(4)]
        cancelled = {"c1"} if cancel(plain[1]) == Cancel.REMOVED else set()
        ut.rebuild_report.enqueue(1)
        return {
            "stack": stack,
            "backend": backend,
            "plain": plain,
            "cancelled": cancelled,
            "acts": 0,
        }

    def act(self, state: Any) -> None:
        ut.rebuild_report.enqueue(2)
        if cancel(state["plain"][2]) == Cancel.REMOVED:
            state["cancelled"].add("c2")
        state["acts"] += 1

    def verify(self, state: Any) -> list[str]:
        from django_redcoord.core.transport.clients import get_client

        try:
            backend, found = state["backend"], []
            if state["cancelled"] != {"c1", "c2"}:
                found.append(f"the cancels removed {sorted(state['cancelled'])}, not c1 and c2")
            found += filter(None, [_burst(backend, 20)])
            client = get_client()
            found += _counted(client, [f"c{i}" for i in range(4)], {"c1", "c2"})
            for report in (1, 2):
                if client.llen(f"uq:runs:report:{report}") != 1:
                    found.append(f"unique task report:{report} did not run once")
            found += _stranded(backend)
            return found
        finally:
            state["stack"].close()


def _register_cluster_cells() -> None:
    from .cells_cluster import _run

    adapter = Tasks()
    cell(
        "task",
        "cluster-slot-migration",
        f"{adapter.what} on the half-migrated slot succeed or are refused with nothing sent and "
        "succeed once the slot moved; every task not cancelled runs once, no key is stranded",
    )(lambda ctx: _run(ctx, adapter, "cluster-slot-migration"))
    cell(
        "task",
        "cluster-failover",
        f"after a coordinated failover of the queue's primary, {adapter.what} work; "
        "every task not cancelled runs once, the cancelled never, no key is stranded",
    )(lambda ctx: _run(ctx, adapter, "cluster-failover"))


_register_cluster_cells()
