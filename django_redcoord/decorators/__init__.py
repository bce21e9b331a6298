"""Decorators for views and any callable: ``@with_lock``."""

from .holds import busy_response, unavailable_response
from .locks import current_lock, with_lock

__all__ = ["busy_response", "current_lock", "unavailable_response", "with_lock"]
