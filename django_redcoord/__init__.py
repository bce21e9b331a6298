"""django_redcoord: coordination for Django projects on Redis.

The public names are loaded on first access, so ``import django_redcoord``
touches neither Django settings nor Redis, and the plain-Python core
(``django_redcoord.core.locks.lock``) can be used without Django configured.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Lock": "django_redcoord.core.locks",
    "with_lock": "django_redcoord.decorators",
    "with_semaphore": "django_redcoord.decorators",
    "rate_limit": "django_redcoord.decorators",
    "RateLimiter": "django_redcoord.core.ratelimit",
    "RateLimited": "django_redcoord.core.ratelimit",
    "with_read_lock": "django_redcoord.decorators",
    "with_write_lock": "django_redcoord.decorators",
    "ReadWriteLock": "django_redcoord.core.rwlocks",
    "CountDownLatch": "django_redcoord.core.latches",
    "Event": "django_redcoord.core.signals",
    "Signal": "django_redcoord.core.signals",
    "Topic": "django_redcoord.core.signals",
    "Barrier": "django_redcoord.core.latches",
    "BrokenError": "django_redcoord.core.exceptions",
    "LatchBroken": "django_redcoord.core.exceptions",
    "BarrierBroken": "django_redcoord.core.exceptions",
    "Semaphore": "django_redcoord.core.semaphores",
    "current_lock": "django_redcoord.decorators",
    "RedcoordError": "django_redcoord.core.exceptions",
    "ConfigurationError": "django_redcoord.core.exceptions",
    "CoordinationUnavailable": "django_redcoord.core.exceptions",
    "LockError": "django_redcoord.core.exceptions",
    "LockLost": "django_redcoord.core.exceptions",
    "LockNotAcquired": "django_redcoord.core.exceptions",
    "LockNotOwned": "django_redcoord.core.exceptions",
    "PoolExhausted": "django_redcoord.core.exceptions",
    "QuorumNotReached": "django_redcoord.core.exceptions",
    "ReplicasNotSynced": "django_redcoord.core.exceptions",
    "Redlock": "django_redcoord.core.redlock",
    "get_client": "django_redcoord.core.transport.clients",
    "periodic": "django_redcoord.core.periodic",
    "current_job": "django_redcoord.core.periodic",
    "LeaderElection": "django_redcoord.core.leader",
    "Queue": "django_redcoord.core.queues",
}

__all__ = [
    "Barrier",
    "BarrierBroken",
    "BrokenError",
    "CountDownLatch",
    "Event",
    "LatchBroken",
    "ConfigurationError",
    "CoordinationUnavailable",
    "Lock",
    "LockError",
    "LockLost",
    "LockNotAcquired",
    "LeaderElection",
    "LockNotOwned",
    "PoolExhausted",
    "Queue",
    "QuorumNotReached",
    "RateLimited",
    "RateLimiter",
    "ReadWriteLock",
    "RedcoordError",
    "Redlock",
    "ReplicasNotSynced",
    "Semaphore",
    "Signal",
    "Topic",
    "current_job",
    "current_lock",
    "get_client",
    "periodic",
    "rate_limit",
    "with_lock",
    "with_read_lock",
    "with_semaphore",
    "with_write_lock",
]

if TYPE_CHECKING:  # pragma: no cover
    from .core.exceptions import (
        BarrierBroken,
        BrokenError,
        ConfigurationError,
        CoordinationUnavailable,
        LatchBroken,
        LockError,
        LockLost,
        LockNotAcquired,
        LockNotOwned,
        PoolExhausted,
        QuorumNotReached,
        RedcoordError,
        ReplicasNotSynced,
    )
    from .core.latches import Barrier, CountDownLatch
    from .core.leader.election import LeaderElection
    from .core.locks.lock import Lock
    from .core.periodic.jobs import current_job, periodic
    from .core.queues import Queue
    from .core.ratelimit import RateLimited, RateLimiter
    from .core.redlock import Redlock
    from .core.rwlocks import ReadWriteLock
    from .core.semaphores import Semaphore
    from .core.signals import Event, Signal, Topic
    from .core.transport.clients import get_client
    from .decorators import (
        current_lock,
        rate_limit,
        with_lock,
        with_read_lock,
        with_semaphore,
        with_write_lock,
    )


def _install_django_settings() -> None:
    from . import conf

    conf.install_if_django()


# The core's runtime installs the project's REDCOORD on first use when this
# process has Django settings (also before django.setup()); it imports
# nothing from Django otherwise. Setting a function reads no setting.
from .core.runtime import runtime as _runtime  # noqa: E402

_runtime.loader = _install_django_settings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'django_redcoord' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
