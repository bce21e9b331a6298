"""django_redcoord: coordination for Django projects on Redis.

The public names are loaded on first access, so ``import django_redcoord``
touches neither Django settings nor Redis, and the plain-Python core
(``django_redcoord.core.locks.lock``) can be used without Django configured.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names: those of the core come through its door (django_redcoord.core), under
# the door's name where it differs; the decorators from the Django layer.
_FROM_CORE = {
    name: name
    for name in (
        "Lock",
        "RateLimiter",
        "RateLimited",
        "ReadWriteLock",
        "CountDownLatch",
        "Event",
        "Signal",
        "Topic",
        "Barrier",
        "BrokenError",
        "LatchBroken",
        "BarrierBroken",
        "Semaphore",
        "RedcoordError",
        "ConfigurationError",
        "CoordinationUnavailable",
        "LockError",
        "LockLost",
        "LockNotAcquired",
        "LockNotOwned",
        "PoolExhausted",
        "QuorumNotReached",
        "ReplicasNotSynced",
        "Redlock",
        "get_client",
        "current_job",
        "LeaderElection",
        "Queue",
    )
}
_FROM_CORE["periodic"] = "periodic_decorator"
_FROM_DECORATORS = (
    "with_lock",
    "with_semaphore",
    "rate_limit",
    "with_read_lock",
    "with_write_lock",
    "current_lock",
)

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
    from .core import (
        Barrier,
        BarrierBroken,
        BrokenError,
        ConfigurationError,
        CoordinationUnavailable,
        CountDownLatch,
        Event,
        LatchBroken,
        LeaderElection,
        Lock,
        LockError,
        LockLost,
        LockNotAcquired,
        LockNotOwned,
        PoolExhausted,
        Queue,
        QuorumNotReached,
        RateLimited,
        RateLimiter,
        ReadWriteLock,
        RedcoordError,
        Redlock,
        ReplicasNotSynced,
        Semaphore,
        Signal,
        Topic,
        current_job,
        get_client,
    )
    from .core import periodic_decorator as periodic
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
from .core import process_runtime as _runtime  # noqa: E402

_runtime.loader = _install_django_settings


def __getattr__(name: str) -> Any:
    if name in _FROM_CORE:
        return getattr(importlib.import_module("django_redcoord.core"), _FROM_CORE[name])
    if name in _FROM_DECORATORS:
        return getattr(importlib.import_module("django_redcoord.decorators"), name)
    raise AttributeError(f"module 'django_redcoord' has no attribute {name!r}")
