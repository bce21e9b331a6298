"""The huey app of bench_queues: a RedisHuey (default settings) and its no-op task.

Importing this module needs BENCH_QUEUES_REDIS_PORT in the environment.
"""

from __future__ import annotations

from huey import RedisHuey

try:
    from bench._queue_jobs import HOST, mark, redis_port
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    from _queue_jobs import HOST, mark, redis_port

huey = RedisHuey("bench", host=HOST, port=redis_port())


@huey.task()
def noop(n: int | None = None) -> None:
    mark()
