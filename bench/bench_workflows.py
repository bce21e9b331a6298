"""What workflows of Django Tasks (chains, chords, groups) cost per task against plain tasks.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C; FLUSHALL runs before every measurement (the Lua scripts stay loaded,
and are loaded before any timing). Django is configured as for bench_queues.py's
``ours (Django Tasks)`` rows, by importing bench/_queue_tasks.py: ``TASKS`` with
``django_redcoord.tasks.RedisTaskBackend`` and its default options (queue
``default``), an in-memory SQLite; every task is that module's no-op ``noop(n)``
(its body only counts the run), called with one small int.

Rows, each ``--tasks`` (default 4,000; a multiple of 100) tasks per round:

* ``plain``: ``noop.enqueue(i)`` one by one: the path every row is divided by
* ``chains of 10``: ``chain(step(noop, i), ... 10 steps).enqueue()``, tasks / 10
  chains; each step starts once the one before it succeeded
* ``chords of 10 + callback``: ``chord([step(noop, i), ... 10], then=step(noop,
  -1)).enqueue()``, tasks / 10 chords; the callback is a task too, so this row
  runs 1.1 x ``--tasks`` tasks and every rate counts it
* ``groups of 100``: ``group([step(noop, i), ... 100]).enqueue()``, tasks / 100
  groups, no callback

Per row and round: ``enqueue`` (this process, single-threaded: building the
steps, ``enqueue()``, its round trips), then ``drain``: ``manage.py run_worker
--burst`` itself, in this process, with its defaults (one thread, prefetch 32,
its log line per task at verbosity 1, written to /dev/null), as
bench_queues.py's Django Tasks row runs it (there in a worker process of its
own, here in this one). A worker moves a workflow on as the outcome of its
member lands, before its next claim, so one burst drains chains and chords to
their end (the drain would run more bursts while a workflow still runs, up to
20, and a note under the table would say so). The clock starts as the command
starts (its start-up inside the window) and stops when the last task's body
returned (``time.monotonic()``, as bench_queues.py) or the last workflow
ended (its ``ended_ms``, the server's clock: same machine, ms resolution),
whichever is later: the command's exit (its main loop notices the end of a
burst within 0.1 s) is left out, as bench_queues.py leaves out shutdown, and
so is the write of the plain row's last outcomes (on the final, empty claim),
while the workflows' ends come with that write: one round trip of the window
to their disadvantage. The run fails unless every task ran once and every
workflow ended SUCCESSFUL. Reported: first the ratios to ``plain`` (taken
within each round; median over rounds, min-max in brackets), then the rates
(tasks/s, median over rounds).

``Redis µs/task``: the EVALSHA and EVAL time INFO commandstats counts during
the enqueue or the drain (CONFIG RESETSTAT before each: the Lua scripts' own
``redis.call``s are inside it), divided by the tasks (the drain's: the
worker's claims and result writes, and a workflow member's call of
``tasks/workflow.lua`` as its outcome lands); ``(+x EXEC)``: the
MULTI/EXEC time besides (a workflow's enqueue sends its hash's HSET and the
ZADD to the running index in one; its queued commands are inside EXEC's time,
as a script's are inside EVALSHA's, and commandstats counts both again under
their own names, which are not added). ``bytes/waiting member``: right after
the enqueue, MEMORY USAGE (SAMPLES 0: exact) of the workflow hashes, divided
by the members not yet started: a chain's 9 later steps, a chord's callback
(each waits in the hash as the push prepared at the enqueue, until its turn);
a group without callback starts every member at once, so none waits (n/a).
The hash also holds every member's id, queue and state, so a chord's one
waiting callback carries its 10 running members' fields too. For ``plain``:
its bytes per queued task (the ready zset and the result records, divided by
the tasks), what the ratio column divides by. ``bytes/task, all``: the ready
zset, the result records of the tasks started, the workflow hashes and their
index, divided by all the row's tasks: what the whole backlog holds per task.

Left out: failures and their policies, cancels, the sweep of a workflow whose
member's worker died (none here), ``enqueue_many``, more worker threads or
processes, and the peers (Celery's canvas: see bench_queues.py for the plain
path against them). No timing is asserted. Run from the repository root::

    .venv/bin/python bench/bench_workflows.py [--quick] [--tasks N] [--rounds N]

The default run takes 25-60 s on 2 cores; ``--quick`` (a few seconds: 200
tasks per row, one round) is a smoke run whose numbers mean little. Progress
goes to stderr, the tables to stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _queue_jobs as jobs
from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer
from support.tables import fmt_ratios, format_table, header, versions

CHAIN = 10  # steps per chain
CHORD = 10  # members per chord (and its callback)
GROUP = 100  # members per group
DRAIN_BURSTS = 20  # run_worker --burst calls a drain may take before it counts as stuck


# -- the Django side (configured once the server's port is known) ----------------------------


class App:
    """The Tasks backend, the no-op task and the workflow API, imported after Django is
    configured for the benchmark's server (bench/_queue_tasks.py)."""

    def __init__(self, port: int) -> None:
        os.environ[jobs.PORT_ENV] = str(port)
        try:
            from bench import _queue_tasks as tasks_app
        except ImportError:  # run as a script: bench/ itself is sys.path[0]
            import _queue_tasks as tasks_app

        from support.tasks import run_worker_burst

        from django_redcoord.tasks import chain, chord, group, step
        from django_redcoord.tasks.workflows import _keys

        self.noop = tasks_app.noop
        self.backend = tasks_app.backend()
        self.client = self.backend.client
        self.keys = _keys(self.backend)
        self.queue = self.keys.queue("default")
        self.index = self.keys.workflow_index(self.keys.workflow("x"))
        self.chain, self.chord, self.group, self.step = chain, chord, group, step
        self.run_worker_burst = run_worker_burst
        self.counts = [0]  # runs of noop (its body: _queue_jobs.mark)
        self.lasts = [0.0]  # time.monotonic() when the last one finished
        # (in the module the task's body calls: bench._queue_jobs when bench/ is a package)
        sys.modules[tasks_app.mark.__module__].install(self.counts, self.lasts, 0)

    def record_key(self, result_id: str) -> str:
        return self.backend._result_key(result_id)


# -- the rows ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Path:
    key: str
    label: str
    unit: int  # tasks --tasks is divided into (1: plain)
    tasks_per_unit: int  # tasks each unit runs (a chord's callback included)
    started_per_unit: int  # tasks queued right after a unit's enqueue
    enqueue: Callable[[App, int], list[Any]]  # (app, units) -> the handles


def _plain(app: App, units: int) -> list[Any]:
    enqueue = app.noop.enqueue
    return [enqueue(i) for i in range(units)]


def _chains(app: App, units: int) -> list[Any]:
    chain, step, noop = app.chain, app.step, app.noop
    return [
        chain(*[step(noop, c * CHAIN + j) for j in range(CHAIN)]).enqueue() for c in range(units)
    ]


def _chords(app: App, units: int) -> list[Any]:
    chord, step, noop = app.chord, app.step, app.noop
    return [
        chord([step(noop, c * CHORD + j) for j in range(CHORD)], then=step(noop, -1)).enqueue()
        for c in range(units)
    ]


def _groups(app: App, units: int) -> list[Any]:
    group, step, noop = app.group, app.step, app.noop
    return [
        group([step(noop, g * GROUP + j) for j in range(GROUP)]).enqueue() for g in range(units)
    ]


PATHS = [
    Path("plain", "plain (enqueue one by one)", 1, 1, 1, _plain),
    Path("chain", f"chains of {CHAIN}", CHAIN, CHAIN, 1, _chains),
    Path("chord", f"chords of {CHORD} + callback", CHORD, CHORD + 1, CHORD, _chords),
    Path("group", f"groups of {GROUP}", GROUP, GROUP, GROUP, _groups),
]


@dataclass
class Cost:
    tasks: int
    enqueue: float  # tasks/s
    drain: float  # tasks/s
    enqueue_us: float  # Redis script time per task, enqueue
    enqueue_exec_us: float  # Redis MULTI/EXEC time per task, enqueue
    drain_us: float
    drain_exec_us: float
    waiting_bytes: float | None  # per waiting member (plain: per queued task); None: none waits
    all_bytes: float  # every key of the backlog, per task
    bursts: int  # run_worker --burst calls the drain took


def redis_usec(client: Any) -> tuple[float, float]:
    """(EVALSHA + EVAL, EXEC) µs since the last CONFIG RESETSTAT. Each includes the commands
    it ran (a script's ``redis.call``s, a transaction's queued commands), which INFO
    commandstats also counts under their own names: those are not added again."""
    stats = client.info("commandstats")

    def usec(*names: str) -> float:
        return float(sum(stats.get(f"cmdstat_{c}", {}).get("usec", 0) for c in names))

    return usec("evalsha", "eval"), usec("exec")


def memory(client: Any, keys: list[str]) -> int:
    """MEMORY USAGE (SAMPLES 0: exact) of ``keys``, summed (one pipeline)."""
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.memory_usage(key, samples=0)
    return sum(v or 0 for v in pipe.execute())


def hashes(client: Any, keys: list[str]) -> list[dict[str, str]]:
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.hgetall(key)
    return [
        {k.decode() if isinstance(k, bytes) else k: v for k, v in h.items()} for h in pipe.execute()
    ]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def measure(app: App, path: Path, ntasks: int) -> Cost:
    client = app.client
    client.flushall()
    units = ntasks // path.unit
    tasks = units * path.tasks_per_unit
    plain = path.key == "plain"

    client.config_resetstat()
    started = time.perf_counter()
    handles = path.enqueue(app, units)
    enqueue = tasks / (time.perf_counter() - started)
    enqueue_us, enqueue_exec_us = redis_usec(client)

    queued = client.zcard(app.queue.ready)
    if queued != units * path.started_per_unit:
        raise RuntimeError(
            f"{path.key}: {queued} tasks queued after the enqueue, not "
            f"{units * path.started_per_unit}"
        )
    ready_bytes = memory(client, [app.queue.ready])
    if plain:
        record_bytes = memory(client, [app.record_key(r.id) for r in handles])
        waiting_bytes: float | None = (ready_bytes + record_bytes) / tasks
        all_bytes = (ready_bytes + record_bytes) / tasks
    else:
        wf_keys = [app.keys.workflow(w.id) for w in handles]
        states = hashes(client, wf_keys)
        started_ids = [
            _text(h[k.replace("st.", "id.", 1)])
            for h in states
            for k, v in h.items()
            if k.startswith("st.") and _text(v) != "w"
        ]
        waiting = sum(
            1 for h in states for k, v in h.items() if k.startswith("st.") and _text(v) == "w"
        )
        if len(started_ids) != queued or waiting + queued != tasks:
            raise RuntimeError(
                f"{path.key}: {len(started_ids)} members started and {waiting} waiting after the "
                f"enqueue, {queued} queued, of {tasks} tasks"
            )
        wf_bytes = memory(client, wf_keys)
        record_bytes = memory(client, [app.record_key(r) for r in started_ids])
        index_bytes = memory(client, [app.index])
        waiting_bytes = wf_bytes / waiting if waiting else None
        all_bytes = (ready_bytes + record_bytes + wf_bytes + index_bytes) / tasks

    app.counts[0], app.lasts[0] = 0, 0.0
    client.config_resetstat()
    wall, started = time.time(), time.monotonic()  # (the workflows end at server wall time)
    bursts = 0
    while True:
        app.run_worker_burst()
        bursts += 1
        if plain or client.zcard(app.index) == 0 or bursts >= DRAIN_BURSTS:
            break
    drain_us, drain_exec_us = redis_usec(client)

    if app.counts[0] != tasks:
        raise RuntimeError(f"{path.key}: {app.counts[0]} task runs for {tasks} tasks")
    ended = app.lasts[0]
    if not plain:
        pipe = client.pipeline(transaction=False)
        for w in handles:
            pipe.hmget(app.keys.workflow(w.id), ["status", "ended_ms"])
        replies = [(_text(st), _text(ms or 0)) for st, ms in pipe.execute()]
        unfinished = [st for st, _ in replies if st != "SUCCESSFUL"]
        if unfinished:
            raise RuntimeError(
                f"{path.key}: {len(unfinished)} of {len(handles)} workflows did not end "
                f"SUCCESSFUL after {bursts} burst(s) (e.g. {unfinished[0]})"
            )
        last_ms = max(int(ms) for _, ms in replies)
        ended = max(ended, started + (last_ms / 1000 - wall))
    drain = tasks / (ended - started)
    return Cost(
        tasks,
        enqueue,
        drain,
        enqueue_us / tasks,
        enqueue_exec_us / tasks,
        drain_us / tasks,
        drain_exec_us / tasks,
        waiting_bytes,
        all_bytes,
        bursts,
    )


def run(args: argparse.Namespace, app: App) -> tuple[dict[str, list[Cost | None]], list[str]]:
    """Per row, one cost per round (None: that round's run failed), and the failures."""
    for path in PATHS:  # imports, connections, Lua scripts, the command: outside the timings
        measure(app, path, 2 * GROUP)
    costs: dict[str, list[Cost | None]] = {p.key: [] for p in PATHS}
    failures: list[str] = []
    for rnd in range(args.rounds):
        k = rnd % len(PATHS)
        for path in PATHS[k:] + PATHS[:k]:
            try:
                cost = measure(app, path, args.tasks)
            except RuntimeError as exc:
                failures.append(f"round {rnd + 1}, {path.label}: {exc}")
                progress(f"  FAILED: {exc}")
                costs[path.key].append(None)
                continue
            costs[path.key].append(cost)
            progress(
                f"round {rnd + 1}/{args.rounds}: {path.label}: enqueue {cost.enqueue:,.0f} "
                f"tasks/s, drain {cost.drain:,.0f} tasks/s"
                + (f" ({cost.bursts} bursts)" if cost.bursts > 1 else "")
            )
    app.client.flushall()
    return costs, failures


# -- report ------------------------------------------------------------------------------------


def print_costs(
    args: argparse.Namespace, costs: dict[str, list[Cost | None]], failures: list[str]
) -> None:
    print(
        f"\n### Cost per task: {args.tasks:,} tasks per row and round (chords: 1.1x, their "
        f"callbacks), enqueued one workflow (plain: one task) at a time, then drained by "
        f"`run_worker --burst` (1 thread, prefetch 32); median of {args.rounds} round(s)\n"
    )
    plain = costs["plain"]
    done = {key: [c for c in runs if c is not None] for key, runs in costs.items()}

    def ratios(key: str, attr: str) -> str:
        # within each round; a round where either run failed has none
        values = [
            getattr(c, attr) / getattr(p, attr)
            for c, p in zip(costs[key], plain, strict=True)
            if c is not None and p is not None and getattr(c, attr) is not None
        ]
        return fmt_ratios(values, "several")

    def med(key: str, attr: str) -> float | None:
        values = [getattr(c, attr) for c in done[key] if getattr(c, attr) is not None]
        return statistics.median(values) if values else None

    def cell(value: float | None, fmt: str) -> str:
        return "n/a" if value is None else format(value, fmt)

    def redis_cell(key: str, phase: str) -> str:
        scripts, exec_ = med(key, f"{phase}_us") or 0.0, med(key, f"{phase}_exec_us") or 0.0
        return f"{scripts:.1f}" + (f" (+{exec_:.1f} EXEC)" if exec_ >= 0.05 else "")

    rows = []
    for path in PATHS:
        if not done[path.key]:
            rows.append([path.label, "ERROR", *[""] * 9])
            continue
        waiting = med(path.key, "waiting_bytes")
        rows.append(
            [
                path.label,
                f"{done[path.key][0].tasks:,}",
                ratios(path.key, "enqueue"),
                ratios(path.key, "drain"),
                ratios(path.key, "waiting_bytes") if waiting is not None else "n/a",
                cell(med(path.key, "enqueue"), ",.0f"),
                cell(med(path.key, "drain"), ",.0f"),
                redis_cell(path.key, "enqueue"),
                redis_cell(path.key, "drain"),
                cell(waiting, ",.0f"),
                cell(med(path.key, "all_bytes"), ",.0f"),
            ]
        )
    print(
        format_table(
            [
                "row",
                "tasks",
                "enqueue vs plain",
                "drain vs plain",
                "bytes/waiting vs plain",
                "enqueue tasks/s",
                "drain tasks/s",
                "Redis µs/task enqueue",
                "Redis µs/task drain",
                "bytes/waiting member",
                "bytes/task, all",
            ],
            rows,
        )
    )
    bursts = {p.label: max(c.bursts for c in done[p.key]) for p in PATHS if done[p.key]}
    if any(b > 1 for b in bursts.values()):
        more = ", ".join(f"{k}: {b}" for k, b in bursts.items() if b > 1)
        print(f"\n(drains that took more than one `run_worker --burst`, at most: {more})")
    if failures:
        print("\nFailures:\n" + "\n".join(f"* {f}" for f in failures))


# -- main --------------------------------------------------------------------------------------


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="a smoke run of a few seconds: 200 tasks per row, one round")
    cli.number("--tasks", 4000, 200, "tasks per row and round (a multiple of 100)", least=100)
    cli.number("--rounds", 5, 1, "interleaved rounds", least=1)
    args = cli.parse(argv)
    if args.tasks % GROUP:
        cli.error(f"--tasks must be a multiple of {GROUP}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = RedisServer()
    try:
        server.start()
        started = time.monotonic()
        app = App(server.port)
        print(
            header(
                "workflows of Django Tasks",
                server.version(),
                versions(
                    ["django-redcoord", "Django", "django-tasks", "redis", "hiredis"],
                    missing="absent",
                ),
            )
        )
        print(
            f"settings: --tasks {args.tasks}, --rounds {args.rounds}"
            f"{', --quick' if args.quick else ''}",
            flush=True,
        )
        costs, failures = run(args, app)
        print_costs(args, costs, failures)
        print(f"\n(total {time.monotonic() - started:.0f} s)")
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    run_main(main)
