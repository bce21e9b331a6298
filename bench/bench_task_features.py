"""What the task features cost per task against the plain path (``bench/bench_task_features.py``).

One private redis-server, Django configured here (TASKS with ``RedisTaskBackend`` and its
default options, an in-memory SQLite). Rows, each against the plain task in the same run,
rounds interleaved (median of ``--rounds``):

* **enqueue**: ``task.enqueue(i)`` of a plain task; of a unique task (a new key per call:
  ``queues/push_unique.lua`` instead of ``queues/push.lua``); of a duplicate (the key held:
  nothing pushed, and ``enqueue()`` reads the holder's result, a second round trip).
* **drain**: ``manage.py run_worker --burst`` (the real command, default logging at
  verbosity 1) of N plain tasks against N unique ones (their keys freed at acknowledgement).
* **cancel**: ``cancel(result)`` of a waiting task (REMOVED), against the plain enqueue it
  undoes.

Redis work: the commands per task as the server counts them (``INFO commandstats``: the
script's own ``redis.call``s included, besides the ``EVALSHA``). Left out: the peers. None of
huey, dramatiq, RQ or Celery ships unique tasks or cancel of a queued task in its free tier,
so there is no like-for-like row; ``bench/bench_queues.py`` compares the plain path with them.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer, command_calls
from support.tasks import configure_tasks, run_worker_burst

PREFIX = "benchfeatures"


def by_n(n: int) -> str:
    """A new unique key per call."""
    return f"n{n}"


def setup(url: str) -> dict[str, Any]:
    configure_tasks(url, PREFIX, "bench-task-features")
    try:
        from django.tasks import task
    except ImportError:
        from django_tasks import task
    from django_redcoord.tasks import task_options

    def noop(n: int) -> None:
        return None

    def noop_unique(n: int) -> None:
        return None

    def noop_same_key(n: int) -> None:
        return None

    module = sys.modules[__name__]
    for fn in (noop, noop_unique, noop_same_key):
        fn.__module__, fn.__qualname__ = __name__, fn.__name__
        setattr(module, fn.__name__, fn)
    tasks = {
        "plain": task()(noop),
        "unique": task_options(unique=by_n)(task()(noop_unique)),
        "same": task_options(unique="one")(task()(noop_same_key)),
    }
    for name, t in tasks.items():
        setattr(
            module, {"plain": "noop", "unique": "noop_unique", "same": "noop_same_key"}[name], t
        )
    return tasks


def commands(client: Any) -> int:
    return sum(command_calls(client).values())


def timed(client: Any, fn: Any, n: int) -> tuple[float, float]:
    """(operations per second, Redis commands per operation) of ``fn()`` run ``n`` times."""
    before = commands(client)
    start = time.perf_counter()
    for _ in range(n):
        fn()
    elapsed = time.perf_counter() - start
    return n / elapsed, (commands(client) - before - 1) / n


def drain(client: Any) -> float:
    start = time.perf_counter()
    run_worker_burst()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    cli = Options(__doc__, quick="a smoke run: 200 tasks per row, 1 round")
    cli.number("--jobs", 2000, 200, "tasks per row and round", least=1)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    args = cli.parse(argv)
    server = RedisServer().start()
    try:
        from django_redcoord.core.transport.clients import client_from_url

        tasks = setup(server.url)
        client = client_from_url(server.url)
        from django_redcoord.tasks import cancel

        rows: dict[str, list[tuple[float, float]]] = {}

        def add(name: str, value: tuple[float, float]) -> None:
            rows.setdefault(name, []).append(value)

        n = args.jobs
        for _ in range(args.rounds):
            client.flushall()
            counter = iter(range(10**9))
            add(
                "enqueue plain", timed(client, lambda c=counter: tasks["plain"].enqueue(next(c)), n)
            )
            add("drain plain", (n / drain(client), 0.0))
            add(
                "enqueue unique",
                timed(client, lambda c=counter: tasks["unique"].enqueue(next(c)), n),
            )
            add("drain unique", (n / drain(client), 0.0))
            tasks["same"].enqueue(0)
            add(
                "enqueue duplicate",
                timed(client, lambda c=counter: tasks["same"].enqueue(next(c)), n),
            )
            drain(client)
            waiting = [tasks["plain"].enqueue(i) for i in range(n)]
            it = iter(waiting)
            add("cancel (REMOVED)", timed(client, lambda it=it: cancel(next(it)), n))
        med = {
            k: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v))
            for k, v in rows.items()
        }
        print(
            f"# task features against the plain path: {n} tasks per row, median of {args.rounds} "
            "rounds"
        )
        print(
            f"# redis-server {client.info('server')['redis_version']}, Python "
            f"{sys.version.split()[0]}"
        )
        print()
        print(
            "| row | plain (/s) | feature (/s) | feature / plain | Redis commands per task (plain "
            "→ feature) |"
        )
        print("| --- | ---: | ---: | ---: | --- |")
        for feature, plain in (
            ("enqueue unique", "enqueue plain"),
            ("enqueue duplicate", "enqueue plain"),
            ("drain unique", "drain plain"),
            ("cancel (REMOVED)", "enqueue plain"),
        ):
            (pr, pc), (fr, fc) = med[plain], med[feature]
            work = (
                f"{pc:.1f} → {fc:.1f}" if fc else "(the worker's round trips: see bench_queues.py)"
            )
            print(f"| {feature} | {pr:,.0f} | {fr:,.0f} | {fr / pr:.2f} | {work} |")
    finally:
        server.stop()


if __name__ == "__main__":
    run_main(main)
