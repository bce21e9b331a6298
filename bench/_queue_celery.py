"""The Celery app of bench_queues: Celery with its Redis broker (default settings) and a no-op
task. No result backend: Celery's default stores no results.

Importing this module needs BENCH_QUEUES_REDIS_PORT in the environment.
"""

from __future__ import annotations

from celery import Celery

try:
    from bench._queue_jobs import HOST, mark, redis_port
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    from _queue_jobs import HOST, mark, redis_port

app = Celery("bench", broker=f"redis://{HOST}:{redis_port()}/0")


@app.task
def noop(n: int | None = None) -> None:
    mark()
