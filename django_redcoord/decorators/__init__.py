"""Decorators for views and any callable: ``@with_lock``, ``@with_semaphore``."""

from .holds import busy_response, unavailable_response
from .locks import current_lock, with_lock
from .semaphores import too_many_response, with_semaphore

__all__ = [
    "busy_response", "current_lock", "too_many_response", "unavailable_response", "with_lock", "with_semaphore",
]  # fmt: skip
