"""The no-op job shared by every implementation in bench_queues, and its counters.

Completion is detected the same way for every implementation: the job body
(``mark``) adds one to this worker process's slot in a shared-memory counter
array and stores ``time.monotonic()`` in a shared-memory "last job finished"
array. Both arrays are anonymous shared memory created by the parent, so
writes made in RQ's forked work-horse children are seen too, and
CLOCK_MONOTONIC is the same clock in every process on Linux. The parent polls
the counters (sleeping between polls) and takes the latest "last finished"
time once the counts add up to the number of jobs enqueued. No implementation
pays an extra Redis round trip for it.

This module is imported by the parent and by every worker process; it must
stay free of heavyweight imports.
"""

from __future__ import annotations

import os
import time
from typing import Any

HOST = "127.0.0.1"
PORT_ENV = "BENCH_QUEUES_REDIS_PORT"

_monotonic = time.monotonic
_counts: Any = None
_lasts: Any = None
_slot = 0


def redis_port() -> int:
    """The port of the benchmark's private redis-server (set by the parent)."""
    return int(os.environ[PORT_ENV])


def redis_url() -> str:
    return f"redis://{HOST}:{redis_port()}/0"


def install(counts: Any, lasts: Any, slot: int) -> None:
    """Point ``mark`` at this worker process's slot of the shared arrays."""
    global _counts, _lasts, _slot
    _counts, _lasts, _slot = counts, lasts, slot


def mark() -> None:
    """The whole body of every benchmark job: count it, note when it finished."""
    if _counts is not None:
        _counts[_slot] += 1
        _lasts[_slot] = _monotonic()


def noop(n: int | None = None) -> None:
    """The RQ job (RQ imports jobs by dotted path)."""
    mark()


def handler(message: Any) -> None:
    """The django_redcoord Worker handler."""
    mark()
