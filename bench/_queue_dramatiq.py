"""The dramatiq app of bench_queues: a RedisBroker (default middleware) and a no-op actor.

Importing this module needs BENCH_QUEUES_REDIS_PORT in the environment.
"""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.redis import RedisBroker

try:
    from bench._queue_jobs import HOST, mark, redis_port
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    from _queue_jobs import HOST, mark, redis_port

broker = RedisBroker(host=HOST, port=redis_port())
dramatiq.set_broker(broker)


@dramatiq.actor
def noop(n: int | None = None) -> None:
    mark()
