"""Worker processes of bench_queues: one OS process runs one worker of one implementation.

``worker_main`` builds the worker (imports, connections, warm-up PING) before
the start barrier, so start-up cost is not timed; after the barrier it runs
the implementation's own worker loop with its default settings:

* burst-capable implementations (ours, ours via Django Tasks, RQ, the raw
  floor) return once the queue has nothing ready;
* huey and dramatiq have no burst mode: their consumer runs until the parent
  sets ``stop`` (after the shared counters show every job done), then shuts
  down gracefully. Shutdown is outside the timed window.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

try:
    from bench import _queue_jobs as jobs
    from bench.support.processes import die_with_parent
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    import _queue_jobs as jobs
    from support.processes import die_with_parent

Runner = Callable[[Any], object]  # runner(stop_event)

RAW_QUEUE = "raw:queue"
RQ_QUEUE = "bench"
OURS_QUEUE = "bench"
OURS_PREFIX = "bench"


_profile_path: str | None = None


def _run_profiled(fn: Callable[[], object], index: int) -> None:
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        fn()
    finally:
        profile.disable()
        profile.dump_stats(f"{_profile_path}.t{index}")


def _profiled(worker: Any) -> Any:
    """With --profile: run ours' worker thread (not the main thread, which only
    joins it) under cProfile, dumping the stats when the thread ends."""
    if _profile_path:
        thread_main = worker._thread_main

        def profiled(index: int) -> None:
            _run_profiled(lambda: thread_main(index), index)

        worker._thread_main = profiled
    return worker


def _ours(slot: int, options: dict[str, Any]) -> Runner:
    from django_redcoord.core.queues import Queue
    from django_redcoord.core.queues.worker import Worker
    from django_redcoord.core.transport.clients import client_from_url

    client = client_from_url(jobs.redis_url())
    client.ping()
    queue = Queue(OURS_QUEUE, client=client, prefix=OURS_PREFIX)
    worker = _profiled(Worker([queue], handler=jobs.handler, burst=True, **options))
    return lambda stop: worker.run()


def _ours_tasks(slot: int, options: dict[str, Any]) -> Runner:
    """``manage.py run_worker --burst`` itself (in this process, so its start-up is timed), at
    its default verbosity: a log line per task on stderr (here /dev/null), as a project whose
    LOGGING configures nothing for django_redcoord gets it."""
    try:
        from bench import _queue_tasks as app
    except ImportError:
        import _queue_tasks as app
    from django_redcoord.core.queues.worker import Worker
    from django_redcoord.core.transport.clients import get_client

    try:
        from bench.support.tasks import run_worker_burst
    except ImportError:
        from support.tasks import run_worker_burst

    app.backend()
    get_client().ping()
    if _profile_path:  # the command builds its Worker: profile the threads of any
        thread_main = Worker._thread_main

        def profiled(self: Any, index: int) -> None:
            _run_profiled(lambda: thread_main(self, index), index)

        Worker._thread_main = profiled  # type: ignore[method-assign]

    def run(stop: Any) -> None:
        root = logging.getLogger()
        for handler in list(root.handlers):  # worker_main's basicConfig: no LOGGING here
            root.removeHandler(handler)
        run_worker_burst(verbosity=1)

    return run


def _ours_floor(slot: int, options: dict[str, Any]) -> Runner:
    """The core ``Worker`` on the core queue, whose handler makes only the calls Django's Tasks
    API asks of any backend's worker per task: a ``TaskResult``, the ``task_started`` and
    ``task_finished`` signals (with the receivers the Tasks framework connects: its log lines),
    ``close_old_connections()`` before and after, and the task's own call. No result record,
    no claim-time mark, no cancel or timeout bookkeeping: a bound on any Tasks layer over this
    worker, not a row users run."""
    try:
        from bench import _queue_tasks as app
    except ImportError:
        import _queue_tasks as app
    try:
        from bench.support.tasks import floor_handler
    except ImportError:
        from support.tasks import floor_handler

    from django_redcoord.core.queues import Queue
    from django_redcoord.core.queues.worker import Worker
    from django_redcoord.core.transport.clients import client_from_url

    handler = floor_handler(app.noop, app.backend())
    client = client_from_url(jobs.redis_url())
    client.ping()
    queue = Queue(OURS_QUEUE, client=client, prefix=OURS_PREFIX)
    worker = _profiled(Worker([queue], handler=handler, burst=True, **options))
    return lambda stop: worker.run()


def _rq(worker_class: str) -> Callable[[int, dict[str, Any]], Runner]:
    def setup(slot: int, options: dict[str, Any]) -> Runner:
        import redis
        import rq

        conn = redis.Redis(host=jobs.HOST, port=jobs.redis_port())
        conn.ping()
        queue = rq.Queue(RQ_QUEUE, connection=conn)
        worker = getattr(rq, worker_class)([queue], connection=conn)
        # WARNING: RQ logs two INFO lines per job to stderr by default.
        return lambda stop: worker.work(burst=True, logging_level="WARNING")

    return setup


def _huey(slot: int, options: dict[str, Any]) -> Runner:
    try:
        from bench._queue_huey import huey
    except ImportError:
        from _queue_huey import huey

    huey.storage.conn.ping()
    consumer = huey.create_consumer(workers=1, worker_type="thread")

    def run(stop: Any) -> None:
        consumer.start()
        stop.wait()
        consumer.stop(graceful=True)

    return run


def _dramatiq(slot: int, options: dict[str, Any]) -> Runner:
    import dramatiq

    try:
        from bench._queue_dramatiq import broker
    except ImportError:
        from _queue_dramatiq import broker

    broker.client.ping()
    worker = dramatiq.Worker(broker, worker_threads=1)
    if "queue_prefetch" in options:  # dramatiq 2.x: no constructor argument; same as the
        worker.queue_prefetch = options["queue_prefetch"]  # dramatiq_queue_prefetch env var

    def run(stop: Any) -> None:
        worker.start()
        stop.wait()
        worker.stop()

    return run


def _celery(slot: int, options: dict[str, Any]) -> Runner:
    """A Celery worker in this process: the solo pool (it runs each task in the worker's own
    thread, as huey's 1 thread and RQ's SimpleWorker do; the default prefork pool would start
    a child per core), Celery's default prefetch (4 per process) and early acknowledgement.
    Gossip, mingle and the broker heartbeat are off: they synchronise a cluster of workers at
    start-up (mingle waits for replies) and do no work per task."""
    try:
        from bench._queue_celery import app
    except ImportError:
        from _queue_celery import app

    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=3)
    worker = app.Worker(
        hostname=f"bench{slot}@localhost",
        pool="solo",
        concurrency=1,
        loglevel="WARNING",
        quiet=True,
        without_gossip=True,
        without_mingle=True,
        without_heartbeat=True,
    )

    def run(stop: Any) -> None:
        worker.start()  # runs until the benchmark kills this process (no burst mode)

    return run


def _raw(slot: int, options: dict[str, Any]) -> Runner:
    """The floor: LMOVE one message into a processing list, run it, LREM it (2 round trips)."""
    import redis

    conn = redis.Redis(host=jobs.HOST, port=jobs.redis_port())
    conn.ping()
    processing = f"raw:processing:{slot}"
    mark = jobs.mark

    def run(stop: Any) -> None:
        while True:
            message = conn.lmove(RAW_QUEUE, processing, "RIGHT", "LEFT")
            if message is None:
                return
            mark()
            conn.lrem(processing, 1, message)

    return run


SETUPS: dict[str, Callable[[int, dict[str, Any]], Runner]] = {
    "ours": _ours,
    "ours_tasks": _ours_tasks,
    "ours_floor": _ours_floor,
    "rq_fork": _rq("Worker"),
    "rq_simple": _rq("SimpleWorker"),
    "huey": _huey,
    "dramatiq": _dramatiq,
    "celery": _celery,
    "raw": _raw,
}


def worker_main(
    kind: str,
    options: dict[str, Any],
    slot: int,
    counts: Any,
    lasts: Any,
    barrier: Any,
    stop: Any,
    profile: str | None = None,
    starts: Any = None,
) -> None:
    """Entry point of one worker process (multiprocessing, spawn start method); ``starts[slot]``
    gets the time it passed the barrier (the parent may be descheduled right then)."""
    global _profile_path
    die_with_parent(signal.SIGKILL)  # the benchmark died without stopping this worker
    logging.basicConfig(level=logging.WARNING)
    _profile_path = profile
    jobs.install(counts, lasts, slot)
    try:
        runner = SETUPS[kind](slot, options)
    except BaseException:
        traceback.print_exc()
        barrier.abort()
        sys.exit(1)
    barrier.wait()
    if starts is not None:
        starts[slot] = time.monotonic()
    runner(stop)
