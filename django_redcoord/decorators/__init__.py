"""Decorators for views and any callable: ``@with_lock``, ``@with_semaphore``,
``@with_read_lock`` and ``@with_write_lock``."""

from .factory import current_lock
from .holds import busy_response, unavailable_response
from .locks import with_lock
from .ratelimits import rate_limit
from .rwlocks import with_read_lock, with_write_lock
from .semaphores import too_many_response, with_semaphore

__all__ = [
    "busy_response",
    "current_lock",
    "rate_limit",
    "too_many_response",
    "unavailable_response",
    "with_lock",
    "with_read_lock",
    "with_semaphore",
    "with_write_lock",
]
