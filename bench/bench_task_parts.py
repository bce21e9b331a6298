"""Where a Django Tasks drain's time goes: the drain with one part of the runner left out at a time.

One private redis-server, Django configured here (TASKS with ``RedisTaskBackend`` and its
default options, an in-memory SQLite), one worker in this process. Each row drains N no-op
tasks (or N core messages) pushed beforehand, timed from the start of the worker (the
command's, for the Tasks rows) to the end of the last task; rows interleave over ``--rounds``
(median):

* **core**: ``Queue`` + ``Worker`` (burst, prefetch 32, a no-op handler), the queue layer alone.
* **floor**: the same worker whose handler makes only the calls Django's Tasks API asks of any
  backend's worker per task: a ``TaskResult``, the ``task_started`` and ``task_finished``
  signals (with the receivers the framework connects), ``close_old_connections()`` before and
  after, the task's call. No result record.
* **tasks**: ``manage.py run_worker --burst`` (the real command, its default logging: one
  line per task at verbosity 1); **tasks -v 0**: the same at verbosity 0.
* **tasks - mark**: the same without the claim-time attempt mark (``worker.N`` of each claimed
  task); **tasks - writes**: without any result write (mark, RUNNING, outcome);
  **tasks - writes - django**: also without the two signals and ``close_old_connections()``.

The three "-" rows replace methods of ``TaskRunner`` (``_mark``, ``_send``) and the runner's
module globals (``task_started``, ``task_finished``, ``close_old_connections``) with no-ops for
that row only: they are measurements of what a part costs, not configurations anyone runs.
The differences between rows are the parts' costs per task; on a shared machine they are
only as good as the rounds agree (min-max shown). Left out: the peers (see bench_queues.py).
"""

from __future__ import annotations

import statistics
import sys
import time
from contextlib import ExitStack
from typing import Any
from unittest import mock

from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer
from support.tasks import configure_tasks, floor_handler, run_worker_burst

PREFIX = "benchparts"
ROWS = [
    "core",
    "floor",
    "tasks",
    "tasks -v 0",
    "tasks - mark",
    "tasks - writes",
    "tasks - writes - django",
]
#: row -> (the row it is measured against, the part the difference is)
PARTS = {
    "floor": ("core", "Django's calls"),
    "tasks -v 0": ("tasks", "the per-task log line"),
    "tasks - mark": ("tasks", "the attempt mark"),
    "tasks - writes": ("tasks - mark", "the other result writes"),
    "tasks - writes - django": ("tasks - writes", "the signals and close_old_connections()"),
}


RAN = [0]  # task calls and core jobs run in this process: each row must run all n
LAST = [0.0]  # when the last of them ended (a row's clock stops there, not at the worker's exit)


def noop(n: int) -> None:
    RAN[0] += 1
    LAST[0] = time.perf_counter()


def setup(url: str) -> Any:
    configure_tasks(url, PREFIX, "bench-task-parts")
    try:
        from django.tasks import task
    except ImportError:
        from django_tasks import task
    global noop
    noop = task()(noop)
    return noop


def drain_core(url: str, n: int, handler: Any) -> float:
    from django_redcoord.core.queues import Queue
    from django_redcoord.core.queues.worker import Worker
    from django_redcoord.core.transport.clients import client_from_url

    queue = Queue("core", client=client_from_url(url), prefix=PREFIX)
    for start in range(0, n, 1000):
        queue.push_many([{"n": i} for i in range(start, min(n, start + 1000))])
    worker = Worker([queue], handler=handler, burst=True)
    started = time.perf_counter()
    worker.run()
    return LAST[0] - started


def drain_tasks(task: Any, n: int, leave_out: str) -> float:
    from django_redcoord.tasks import enqueue_many, runner

    for start in range(0, n, 1000):
        enqueue_many(task, [((i,), {}) for i in range(start, min(n, start + 1000))])
    with ExitStack() as patches:
        if "mark" in leave_out:
            patches.enter_context(mock.patch.object(runner.TaskRunner, "_mark", _nothing))
        if "writes" in leave_out:
            patches.enter_context(mock.patch.object(runner.TaskRunner, "_send", _landed))
        if "django" in leave_out:
            for name in ("task_started", "task_finished"):
                patches.enter_context(mock.patch.object(runner, name, _Silent()))
            patches.enter_context(mock.patch.object(runner, "close_old_connections", _nothing))
        started = time.perf_counter()
        run_worker_burst(verbosity=0 if leave_out.endswith("-v 0") else 1)
        return LAST[0] - started


def _backend() -> Any:
    try:
        from django.tasks import task_backends
    except ImportError:
        from django_tasks import task_backends
    return task_backends["default"]


def _count(message: Any) -> None:
    RAN[0] += 1
    LAST[0] = time.perf_counter()


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _landed(self: Any, writes: list[Any], operation: str) -> list[int]:
    return [1] * len(writes)


class _Silent:
    def send(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


def main(argv: list[str] | None = None) -> None:
    cli = Options(__doc__, quick="a smoke run: 300 tasks per row, 1 round")
    cli.number("--jobs", 20000, 300, "tasks per row and round", least=1)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    args = cli.parse(argv)
    server = RedisServer().start()
    try:
        task = setup(server.url)
        client = server.client
        n = args.jobs
        rates: dict[str, list[float]] = {row: [] for row in ROWS}
        for rnd in range(args.rounds):
            for row in ROWS[rnd % len(ROWS) :] + ROWS[: rnd % len(ROWS)]:
                client.flushall()
                RAN[0] = 0
                if row == "core":
                    elapsed = drain_core(server.url, n, _count)
                elif row == "floor":
                    elapsed = drain_core(server.url, n, floor_handler(task, _backend()))
                else:
                    elapsed = drain_tasks(task, n, row)
                if RAN[0] != n:
                    raise SystemExit(f"{row}: {RAN[0]} runs for {n} tasks")
                rates[row].append(n / elapsed)
                print(f"  round {rnd + 1}: {row}: {n / elapsed:,.0f} tasks/s", file=sys.stderr)
        med = {row: statistics.median(r) for row, r in rates.items()}
        core = med["core"]
        print(
            f"# a Django Tasks drain, part by part: {n:,} no-op tasks per row, one worker, median "
            f"of {args.rounds} round(s); redis-server {client.info('server')['redis_version']}, "
            f"Python {sys.version.split()[0]}"
        )
        print()
        print("| row | tasks/s (min-max) | µs per task | vs core | this part per task |")
        print("|---|---:|---:|---:|---:|")
        for row in ROWS:
            us = 1e6 / med[row]
            part = ""
            if row in PARTS:
                against, what = PARTS[row]
                part = f"{what}: {abs(1e6 / med[against] - us):.0f} µs"
            lo, hi = min(rates[row]), max(rates[row])
            print(
                f"| {row} | {med[row]:,.0f} ({lo:,.0f}-{hi:,.0f}) | {us:.1f} | "
                f"{med[row] / core:.2f}x | {part} |"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    run_main(main)
