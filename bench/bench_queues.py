"""Benchmark django_redcoord's queues against RQ, huey, dramatiq, Celery and a raw Redis floor.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C; FLUSHALL runs before every measurement. Implementations, each with its
default settings unless named otherwise (worker side: bench/_queue_workers.py):

* ``ours (Queue + Worker)``: ``django_redcoord.core.queues.queue.Queue`` +
  ``django_redcoord.core.queues.worker.Worker`` (prefetch 32, one thread, heartbeat thread),
  burst mode, no-op handler
* ``ours (Django Tasks: run_worker)``: ``manage.py run_worker --burst`` itself, run in the
  worker process with its default verbosity (a log line per task on stderr,
  here /dev/null; its start-up is inside the timed window), a no-op ``@task``
  of a ``RedisTaskBackend``; Django is configured with ``settings.configure``
  in bench/_queue_tasks.py
* ``RQ Worker``: ``rq.Worker`` (forks a work-horse per job), ``work(burst=True)``
* ``RQ SimpleWorker``: ``rq.SimpleWorker`` (runs jobs in-process), burst mode
* ``huey``: ``RedisHuey`` consumer with 1 worker thread (blocking BRPOP).
  huey has no acknowledgement: a job popped by a consumer that dies is lost
* ``dramatiq``: ``RedisBroker`` + ``dramatiq.Worker(broker, worker_threads=1)``
  (its default prefetch is 2 x threads = 2), and the same with a queue
  prefetch of 64 (dramatiq 2.x takes it from ``dramatiq_queue_prefetch``; we
  set the worker's ``queue_prefetch`` attribute, which is what that does)
* ``Celery``: Celery with its Redis broker (kombu), ``task.delay`` to enqueue; a worker
  with the solo pool (tasks run in the worker's own thread; the default prefork pool
  starts a child per core), Celery's default prefetch (4) and early acknowledgement, no
  result backend (Celery's default); gossip, mingle and heartbeat off (cluster start-up
  chatter, nothing per task). See bench/_queue_workers.py
* ``raw floor``: LPUSH to enqueue; the worker LMOVEs one message into its own
  processing list, runs it and LREMs it (two round trips per message, redis-py)

Part 1, enqueue/s, in this process, single-threaded: one call per job and,
where the library has a bulk API, batches of 1000 (ours ``push_many``, the
Tasks backend's ``enqueue_many``, RQ ``Queue.enqueue_many`` of
``Queue.prepare_data``, raw: a pipeline of 1000 LPUSH); huey, dramatiq and
Celery have no bulk enqueue (n/a). Every
job carries one small int. ``--enqueue-jobs`` (default 5000) one-by-one jobs
per library and round are timed in 5 blocks, interleaved across libraries
(this machine's speed drifts), with 4 times as many jobs per batched block.
The ``Tasks push script floor`` row is not an API: it sends, from redis-py,
the one EVALSHA a Tasks enqueue sends (``queues/push.lua`` with the result
record), with the keys and arguments of a real enqueue and a new id swapped
in. It leaves out every line of our Python (the ``TaskResult``, the JSON, the
transport), so it bounds what any Tasks enqueue that writes its record in the
same command can reach.

Part 2, end-to-end drain: the jobs are enqueued first (not timed), then ONE
worker process, and then TWO worker processes (separate OS processes, one
worker each), drain them. ``--jobs`` (default 20,000) for ours, huey,
dramatiq prefetch=64 and the raw floor; the slower rows get fewer jobs so
that the default run stays under 5 minutes: Celery ``--jobs``/4, RQ
SimpleWorker and dramatiq default ``--jobs``/20, RQ Worker ``--jobs``/80 (at
least 200), and those three reference rows run in the first round only
(column "runs"). Workers are built (imports, connections, a PING) before a
start barrier; the clock starts when the barrier releases and stops at the
moment the last job finished. Completion is counted the same way for
everyone, without any Redis traffic: the job body increments this worker
process's slot of a shared-memory counter and stores ``time.monotonic()`` in
a shared-memory array (bench/_queue_jobs.py; RQ's forked work-horses share
them too); the parent polls the counters and, once they add up to the number
of jobs, takes the latest finish time. So the last batch's acknowledgement
(ours: it rides on the next claim) and worker shutdown are outside the timed
window for every implementation. A run fails if any job ran twice or never.
Reported: jobs/s and the ratios to huey, to dramatiq prefetch=64 and to the
raw floor (same number of worker processes).

Rounds (``--rounds``, default 3) interleave the implementations (rotating the
order); tables show the median, with min-max over rounds (drain) or blocks
(enqueue) in brackets.

Targets (from the issue), with our default settings (ours = Queue + Worker):

* drain >= 2x huey and >= 1.0x dramatiq prefetch=64; stretch: >= 2x the
  one-message raw floor
* enqueue one by one >= 1.0x huey; batched >= 5x huey one by one

Run from the repository root::

    .venv/bin/python bench/bench_queues.py [--quick] [--jobs N]

The default run takes 2.5-4 minutes on 2 cores; ``--quick`` (~40 s: 8000
jobs, 2000 enqueues, one round) is a smoke run whose numbers are only
indicative. More options: ``--rounds``, ``--enqueue-jobs``, ``--only
ours,huey,...`` (keys of IMPLS), ``--skip-enqueue``, ``--verbose`` (fill /
start / stop times of each drain) and ``--profile PREFIX`` (cProfile the
worker thread of ours). Progress goes to stderr, the tables to stdout. The
peers: ``pip install rq huey 'dramatiq[redis]' 'celery[redis]'`` (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import _queue_jobs as jobs
import _queue_workers as workers
import redis
from support.cli import Options
from support.processes import run_main
from support.servers import HOST, RedisServer
from support.tables import format_table, versions

BATCH = 1000
BLOCKS = 5  # enqueue: each round times every library in 5 interleaved blocks
FILL_THREADS = 4  # pre-enqueueing (not timed) with a one-call-per-job API uses threads


# -- producers (this process) ---------------------------------------------------------


def _import_app(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"bench.{name}")
    except ImportError:
        return importlib.import_module(name)


class Producers:
    """Enqueue with each library's own client API (imported lazily, connections reused)."""

    def __init__(self, port: int) -> None:
        os.environ[jobs.PORT_ENV] = str(port)  # for the app modules, here and in workers
        self.port = port
        self.plain = redis.Redis(host=HOST, port=port)
        self._ours: Any = None
        self._rq: Any = None
        self._script: tuple[str, list[str], list[Any], str] | None = None

    @property
    def ours(self) -> Any:
        if self._ours is None:
            from django_redcoord.core.queues import Queue
            from django_redcoord.core.transport.clients import client_from_url

            client = client_from_url(jobs.redis_url())
            self._ours = Queue(workers.OURS_QUEUE, client=client, prefix=workers.OURS_PREFIX)
        return self._ours

    @property
    def rq(self) -> Any:
        if self._rq is None:
            import rq

            self._rq = rq.Queue(workers.RQ_QUEUE, connection=redis.Redis(host=HOST, port=self.port))
        return self._rq

    # one call per job ------------------------------------------------------------

    def one_ours(self, n: int) -> None:
        push = self.ours.push
        for i in range(n):
            push({"n": i})

    def one_ours_tasks(self, n: int) -> None:
        enqueue = _import_app("_queue_tasks").noop.enqueue
        for i in range(n):
            enqueue(i)

    def one_rq(self, n: int) -> None:
        enqueue, func = self.rq.enqueue, jobs.noop
        for i in range(n):
            enqueue(func, i)

    def one_huey(self, n: int) -> None:
        noop = _import_app("_queue_huey").noop
        for i in range(n):
            noop(i)  # calling a huey task enqueues it

    def one_dramatiq(self, n: int) -> None:
        send = _import_app("_queue_dramatiq").noop.send
        for i in range(n):
            send(i)

    def one_celery(self, n: int) -> None:
        delay = _import_app("_queue_celery").noop.delay
        for i in range(n):
            delay(i)

    def one_tasks_script(self, n: int) -> None:
        """The Redis part of one Tasks enqueue alone: the EVALSHA of ``queues/push.lua`` (result
        record included) that ``noop.enqueue`` sends, from redis-py, its keys and arguments those
        of one real enqueue with the result id swapped (a string replace: ~1 µs of Python)."""
        sha, keys, args, old = self._tasks_script()
        evalsha = self.plain.evalsha
        nkeys = len(keys)
        for i in range(n):
            new = f"{i:0{len(old)}d}"
            evalsha(
                sha,
                nkeys,
                *[k.replace(old, new) for k in keys],
                *[a.replace(old, new) if isinstance(a, str) else a for a in args],
            )

    def _tasks_script(self) -> tuple[str, list[str], list[Any], str]:
        if self._script is None:
            app = _import_app("_queue_tasks")
            backend, task = app.backend(), app.noop
            result, encoded = backend._prepare(task, (0,), {})
            queue, push = backend._push(task, result, encoded)
            steps = queue._push_record_steps(
                push["body"],
                push["id"],
                push["record_key"],
                push["record"],
                push["ttl"],
                push["eta"],
                push["priority"],
            )
            run = next(steps)
            steps.close()
            self.plain.script_load(run.script.source)
            args = [a if isinstance(a, (str, int)) else str(a) for a in run.args]
            args[0] = ""  # the queue's name in the index: written by the first push only
            self._script = (run.script.sha, list(run.keys), args, result.id)
        return self._script

    def one_raw(self, n: int) -> None:
        lpush = self.plain.lpush
        for i in range(n):
            lpush(workers.RAW_QUEUE, f'{{"n":{i}}}')

    # batches of BATCH (None: the library has no bulk enqueue) -------------------------

    def batch_ours(self, n: int) -> None:
        push_many = self.ours.push_many
        for start in range(0, n, BATCH):
            push_many([{"n": i} for i in range(start, min(n, start + BATCH))])

    def batch_rq(self, n: int) -> None:
        import rq

        queue, func = self.rq, jobs.noop
        for start in range(0, n, BATCH):
            queue.enqueue_many(
                [rq.Queue.prepare_data(func, (i,)) for i in range(start, min(n, start + BATCH))]
            )

    def batch_raw(self, n: int) -> None:
        for start in range(0, n, BATCH):
            pipe = self.plain.pipeline(transaction=False)
            for i in range(start, min(n, start + BATCH)):
                pipe.lpush(workers.RAW_QUEUE, f'{{"n":{i}}}')
            pipe.execute()

    def batch_ours_tasks(self, n: int) -> None:
        app = _import_app("_queue_tasks")
        enqueue_many, noop = app.enqueue_many, app.noop
        for start in range(0, n, BATCH):
            enqueue_many(noop, [((i,), {}) for i in range(start, min(n, start + BATCH))])

    batch_huey = batch_dramatiq = batch_celery = batch_tasks_script = None

    def fill(self, family: str, n: int) -> None:
        """Pre-enqueue ``n`` jobs for a drain (not timed), the fastest way the library offers:
        its bulk API, else one call per job from FILL_THREADS threads."""
        batch = getattr(self, f"batch_{family}")
        if batch is not None:
            batch(n)
            return
        one = getattr(self, f"one_{family}")
        shares = [n // FILL_THREADS + (i < n % FILL_THREADS) for i in range(FILL_THREADS)]
        with ThreadPoolExecutor(FILL_THREADS) as pool:
            for future in [pool.submit(one, k) for k in shares]:
                future.result()

    def queued(self, family: str) -> int:
        """Jobs waiting (a sanity check that the fill worked)."""
        if family == "ours":
            return self.ours.depths().ready
        if family in ("ours_tasks", "tasks_script"):
            return _import_app("_queue_tasks").backend().queue("default").depths().ready
        if family == "rq":
            return self.rq.count
        if family == "huey":
            return _import_app("_queue_huey").huey.pending_count()
        if family == "dramatiq":
            return self.plain.llen("dramatiq:default")
        if family == "celery":
            return self.plain.llen("celery")
        return self.plain.llen(workers.RAW_QUEUE)


# -- implementations ---------------------------------------------------------------------


@dataclass(frozen=True)
class Impl:
    key: str
    label: str
    family: str  # producer side: ours, ours_tasks, rq, huey, dramatiq, celery, raw
    kind: str  # worker side: a key of _queue_workers.SETUPS
    options: dict[str, Any] = field(default_factory=dict)
    share: int = 1  # drains max(200, --jobs // share) jobs (at most --jobs): the slow ones fewer
    once: bool = False  # a slow reference row: measured in the first round only
    burst: bool = True  # its workers exit by themselves once the queue is empty

    def jobs(self, total: int) -> int:
        return total if self.share == 1 else max(min(200, total), total // self.share)


IMPLS = [
    Impl("ours", "ours (Queue + Worker)", "ours", "ours"),
    Impl("ours_tasks", "ours (Django Tasks: run_worker)", "ours_tasks", "ours_tasks"),
    Impl(
        "ours_floor",
        "Tasks API floor (core Worker + Django's per-task calls)",
        "ours",
        "ours_floor",
    ),
    Impl("rq_fork", "RQ Worker (fork per job)", "rq", "rq_fork", share=80, once=True),
    Impl("rq_simple", "RQ SimpleWorker", "rq", "rq_simple", share=20, once=True),
    Impl("huey", "huey (1 thread)", "huey", "huey", burst=False),
    Impl(
        "dramatiq",
        "dramatiq (default, prefetch 2)",
        "dramatiq",
        "dramatiq",
        share=20,
        once=True,
        burst=False,
    ),
    Impl(
        "dramatiq64",
        "dramatiq prefetch=64",
        "dramatiq",
        "dramatiq",
        {"queue_prefetch": 64},
        burst=False,
    ),
    Impl("celery", "Celery (solo pool, Redis broker)", "celery", "celery", share=4, burst=False),
    Impl("raw", "raw floor (LMOVE + LREM)", "raw", "raw"),
]
ENQUEUERS = [
    ("ours", "ours (Queue.push / push_many)"),
    ("ours_tasks", "ours (Django Tasks enqueue)"),
    ("rq", "RQ (enqueue / enqueue_many)"),
    ("huey", "huey (task call)"),
    ("dramatiq", "dramatiq (actor.send)"),
    ("celery", "Celery (task.delay)"),
    ("tasks_script", "Tasks push script floor (its one EVALSHA from redis-py)"),
    ("raw", "raw floor (LPUSH / pipelined)"),
]
#: Enqueue-only rows and the family whose drain rows bring them into an ``--only`` run.
FLOOR_OF = {"tasks_script": "ours_tasks"}
#: The peers' libraries (distribution, modules: any one will do); a family whose library is
#: not installed is left out of the runs, and its rows say so.
PEERS = {
    "ours_tasks": ("django-tasks", ("django.tasks", "django_tasks")),  # Django 6 has its own
    "tasks_script": ("django-tasks", ("django.tasks", "django_tasks")),
    "rq": ("rq", ("rq",)),
    "huey": ("huey", ("huey",)),
    "dramatiq": ("dramatiq", ("dramatiq",)),
    "celery": ("celery", ("celery",)),
}


def _not_installed(family: str) -> str:
    """``"not installed (<dist>)"`` when the library a family needs cannot be imported, else
    ``""``."""
    if family not in PEERS:
        return ""
    dist, modules = PEERS[family]
    for module in modules:
        try:
            if importlib.util.find_spec(module) is not None:
                return ""
        except ImportError:  # its parent package is missing
            pass
    return f"not installed ({dist})"


# -- measurements ------------------------------------------------------------------------


class DrainFailed(Exception):
    pass


def measure_enqueue(producers: Producers, family: str, n: int, batched: bool) -> float | None:
    """Jobs/s of ``n`` enqueues into an empty server (None: no bulk API)."""
    fn = getattr(producers, f"{'batch' if batched else 'one'}_{family}")
    if fn is None:
        return None
    producers.plain.flushall()
    started = time.perf_counter()
    fn(n)
    elapsed = time.perf_counter() - started
    queued = producers.queued(family)
    if queued != n:
        raise RuntimeError(f"{family}: enqueued {n} but {queued} are queued")
    return n / elapsed


def measure_drain(
    ctx: Any,
    producers: Producers,
    impl: Impl,
    nworkers: int,
    njobs: int,
    *,
    stall: float,
    profile: str | None = None,
    verbose: bool = False,
) -> float:
    """Jobs/s for ``nworkers`` worker processes draining ``njobs`` pre-enqueued jobs."""
    t_fill = time.monotonic()
    producers.plain.flushall()
    producers.fill(impl.family, njobs)
    queued = producers.queued(impl.family)
    if queued != njobs:
        raise DrainFailed(f"{impl.key}: enqueued {njobs} but {queued} are queued")
    counts = ctx.RawArray("q", nworkers)
    lasts = ctx.RawArray("d", nworkers)
    starts = ctx.RawArray("d", nworkers)  # when each worker passed the barrier
    barrier = ctx.Barrier(nworkers + 1)
    stop = ctx.Event()
    procs = [
        ctx.Process(
            target=workers.worker_main,
            args=(impl.kind, impl.options, slot, counts, lasts, barrier, stop),
            kwargs={"profile": f"{profile}.{slot}" if profile else None, "starts": starts},
            name=f"bench-{impl.key}-{slot}",
            daemon=True,
        )
        for slot in range(nworkers)
    ]
    t_spawn = time.monotonic()
    for proc in procs:
        proc.start()
    try:
        try:
            barrier.wait(timeout=120)
        except Exception as exc:
            raise DrainFailed(f"{impl.key}: a worker did not start ({exc!r})") from None
        started = time.monotonic()
        seen, progress_at = 0, started
        while True:
            done = sum(counts)
            now = time.monotonic()
            if done >= njobs:
                break
            if done != seen:
                seen, progress_at = done, now
            elif now - progress_at > stall:
                raise DrainFailed(f"{impl.key}: stuck at {done}/{njobs} jobs for {stall:g} s")
            if not any(p.is_alive() for p in procs):
                raise DrainFailed(f"{impl.key}: workers exited after {done}/{njobs} jobs")
            time.sleep(0.005)
        # from the first worker past the barrier: a small drain may be over before this process,
        # descheduled on a busy machine, reads the clock after the barrier
        elapsed = max(lasts) - min([started, *(t for t in starts if t)])
        t_stop = time.monotonic()
    finally:
        stop.set()
        for proc in procs:
            # Burst workers exit by themselves. huey and dramatiq would shut down
            # gracefully in 1-2 s (their poll timeouts); the run is over, so kill them.
            proc.join(60 if impl.burst else 0.1)
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join(5)
    done = sum(counts)
    if done != njobs:
        raise DrainFailed(f"{impl.key}: {done} job runs for {njobs} jobs (duplicates?)")
    if verbose:
        print(
            f"    fill {t_spawn - t_fill:.1f} s, start {started - t_spawn:.1f} s, "
            f"drain {elapsed:.2f} s, stop {time.monotonic() - t_stop:.1f} s",
            file=sys.stderr,
        )
    return njobs / elapsed


# -- report ------------------------------------------------------------------------------


def _fmt_rate(values: list[float]) -> str:
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:,.0f}"
    return f"{med:,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def _ratio(a: list[float], b: list[float]) -> str:
    if not a or not b:
        return "n/a"
    return f"{statistics.median(a) / statistics.median(b):.2f}x"


def header(server: RedisServer) -> str:
    libs = [
        "django-redcoord",
        "redis",
        "hiredis",
        "Django",
        "django-tasks",
        "rq",
        "huey",
        "dramatiq",
    ]
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return (
        f"redis-server {server.version()} (127.0.0.1:{server.port}, no persistence) | "
        f"Python {platform.python_version()} ({platform.python_implementation()}) on "
        f"{platform.system()} {platform.machine()} | cores: {cores} ({usable} usable) | "
        + versions(libs, missing="absent")
    )


# -- main --------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~40 s smoke run (fewer jobs, 1 round)")
    cli.number("--jobs", 20000, 8000, "jobs per drain", least=100)
    cli.number("--enqueue-jobs", 5000, 2000, "jobs per enqueue run", least=100)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.add("--only", default="", help="comma-separated implementation keys (default: all)")
    cli.add("--verbose", action="store_true", help="time fill/start/stop of drains")
    cli.add("--skip-enqueue", action="store_true", help="drain only")
    cli.add(
        "--profile",
        metavar="PREFIX",
        help="cProfile the worker threads of ours to PREFIX.<impl>.<n>w.<slot>.t0 (slower)",
    )
    return cli.parse(argv)


def run(args: argparse.Namespace, server: RedisServer) -> None:
    ctx = mp.get_context("spawn")
    producers = Producers(server.port)
    only = {k for k in args.only.split(",") if k}
    impls = [i for i in IMPLS if not only or i.key in only]
    families = [
        (f, label)
        for f, label in ENQUEUERS
        if not only or any(i.family == FLOOR_OF.get(f, f) for i in impls)
    ]
    missing = {f: why for f, _ in families if (why := _not_installed(f))}
    left_out = (
        [(f, label) for f, label in families if f in missing],
        [i for i in impls if i.family in missing],
    )
    impls = [i for i in impls if i.family not in missing]
    families = [(f, label) for f, label in families if f not in missing]
    print(header(server))
    print(
        f"\nsettings: --jobs {args.jobs}, --enqueue-jobs {args.enqueue_jobs}, "
        f"--rounds {args.rounds}"
        f"{', --quick' if args.quick else ''}",
        flush=True,
    )
    for family, _ in families:  # imports, connections, Lua scripts: outside the timings
        producers.plain.flushall()
        getattr(producers, f"one_{family}")(20)

    one: dict[str, list[float]] = {f: [] for f, _ in families}
    batched: dict[str, list[float]] = {f: [] for f, _ in families}
    drains: dict[tuple[str, int], list[float]] = {(i.key, w): [] for i in impls for w in (1, 2)}
    failures: list[str] = []
    t_start = time.monotonic()
    for rnd in range(args.rounds):
        if not args.skip_enqueue:
            block = args.enqueue_jobs // BLOCKS
            for b in range(BLOCKS):
                k = (rnd * BLOCKS + b) % len(families)
                for family, _ in families[k:] + families[:k]:
                    one[family].append(measure_enqueue(producers, family, block, False))
                    rate = measure_enqueue(producers, family, block * 4, True)
                    if rate is not None:
                        batched[family].append(rate)
        todo = [i for i in impls if rnd == 0 or not i.once]
        order_i = todo[rnd % len(todo) :] + todo[: rnd % len(todo)]
        for nworkers in (1, 2):
            for impl in order_i:
                njobs = impl.jobs(args.jobs)
                profile = args.profile if args.profile and impl.kind.startswith("ours") else None
                try:
                    rate = measure_drain(
                        ctx,
                        producers,
                        impl,
                        nworkers,
                        njobs,
                        stall=30.0,
                        profile=f"{profile}.{impl.key}.{nworkers}w" if profile else None,
                        verbose=args.verbose,
                    )
                except DrainFailed as exc:
                    failures.append(f"round {rnd + 1}, {nworkers} worker(s): {exc}")
                    print(f"  FAILED: {exc}", file=sys.stderr, flush=True)
                    continue
                drains[(impl.key, nworkers)].append(rate)
                print(
                    f"  round {rnd + 1}/{args.rounds}: {impl.label}, {nworkers} worker(s): "
                    f"{rate:,.0f} jobs/s ({time.monotonic() - t_start:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    producers.plain.flushall()

    if not args.skip_enqueue:
        block = args.enqueue_jobs // BLOCKS
        print(
            f"\n### Enqueue (jobs/s, single-threaded; {args.rounds} x {BLOCKS} interleaved blocks "
            f"of {block} jobs one by one and {block * 4} jobs in batches of {BATCH})\n"
        )
        huey_one = one.get("huey", [])
        rows = [
            [
                label,
                _fmt_rate(one[f]),
                _fmt_rate(batched[f]),
                _ratio(one[f], huey_one),
                _ratio(batched[f], huey_one),
            ]
            for f, label in families
        ]
        rows += [[label, missing[f], "", "", ""] for f, label in left_out[0]]
        print(
            format_table(
                [
                    "implementation",
                    "one by one",
                    "batched",
                    "one by one vs huey",
                    "batched vs huey one by one",
                ],
                rows,
            )
        )

    for nworkers in (1, 2):
        print(
            f"\n### Drain, {nworkers} worker process{'es' if nworkers > 1 else ''} "
            f"(jobs/s from worker start to the last job finished)\n"
        )
        huey_r = drains.get(("huey", nworkers), [])
        dram_r = drains.get(("dramatiq64", nworkers), [])
        raw_r = drains.get(("raw", nworkers), [])
        rows = []
        for impl in impls:
            rates = drains[(impl.key, nworkers)]
            njobs = impl.jobs(args.jobs)
            rows.append(
                [
                    impl.label,
                    f"{njobs:,}",
                    str(len(rates)),
                    _fmt_rate(rates),
                    _ratio(rates, huey_r),
                    _ratio(rates, dram_r),
                    _ratio(rates, raw_r),
                ]
            )
        rows += [[impl.label, "", "", missing[impl.family], "", "", ""] for impl in left_out[1]]
        print(
            format_table(
                [
                    "implementation",
                    "jobs",
                    "runs",
                    "jobs/s",
                    "vs huey",
                    "vs dramatiq pf=64",
                    "vs raw floor",
                ],
                rows,
            )
        )

    print("\n### Targets (ours, default settings)\n")
    targets = []
    for nworkers in (1, 2):
        ours = drains.get(("ours", nworkers), [])
        for what, other, need in (
            ("huey", "huey", 2.0),
            ("dramatiq prefetch=64", "dramatiq64", 1.0),
            ("raw floor (stretch)", "raw", 2.0),
        ):
            theirs = drains.get((other, nworkers), [])
            targets.append(_target(f"drain, {nworkers} worker(s), vs {what}", ours, theirs, need))
        for what, mine in (("Django Tasks", "ours_tasks"), ("the Tasks API floor", "ours_floor")):
            targets.append(
                _target(
                    f"drain, {nworkers} worker(s), {what} vs core (within 2x)",
                    drains.get((mine, nworkers), []),
                    ours,
                    0.5,
                )
            )
    if not args.skip_enqueue:
        targets.append(
            _target("enqueue one by one vs huey", one.get("ours", []), one.get("huey", []), 1.0)
        )
        targets.append(
            _target(
                "enqueue batched vs huey one by one",
                batched.get("ours", []),
                one.get("huey", []),
                5.0,
            )
        )
    print(format_table(["target", "need", "got", "met"], targets))
    if failures:
        print("\nFailures:\n" + "\n".join(f"* {f}" for f in failures))
    print(f"\n(total {time.monotonic() - t_start:.0f} s)")


def _target(what: str, ours: list[float], theirs: list[float], need: float) -> list[str]:
    if not ours or not theirs:
        return [what, f">= {need:.1f}x", "n/a", "n/a"]
    got = statistics.median(ours) / statistics.median(theirs)
    return [what, f">= {need:.1f}x", f"{got:.2f}x", "yes" if got >= need else "NO"]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = RedisServer()
    try:
        server.start()
        run(args, server)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        for child in mp.active_children():
            child.kill()
        server.stop()
    return 0


if __name__ == "__main__":
    run_main(main)
