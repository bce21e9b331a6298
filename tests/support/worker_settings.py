"""Settings for run_worker subprocesses in tests: short heartbeat and timeout."""

import os

from testproject.settings import *  # noqa: F403

REDCOORD = {
    "URL": os.environ["REDCOORD_REDIS_URL"],
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "test"),
    "WORKER_HEARTBEAT": 0.2,
    "WORKER_TIMEOUT": 1.0,
    "QUEUE_RETRY_DELAY": 0.01,
    "SOCKET_TIMEOUT": float(os.environ.get("REDCOORD_SOCKET_TIMEOUT", "5.0")),
    "CONNECT_TIMEOUT": float(os.environ.get("REDCOORD_CONNECT_TIMEOUT", "2.0")),
}
