"""Counting semaphores: at most N holders at once, FIFO, leased, fenced; sync and asyncio."""

from .records import read_semaphores, revoke_permit
from .semaphore import Semaphore

__all__ = ["Semaphore", "read_semaphores", "revoke_permit"]
