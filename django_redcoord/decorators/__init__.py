"""Decorators for views and any callable: ``@with_lock``."""

from .locks import busy_response, current_lock, unavailable_response, with_lock

__all__ = ["busy_response", "current_lock", "unavailable_response", "with_lock"]
