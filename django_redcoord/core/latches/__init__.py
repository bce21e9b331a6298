"""Count-down latches and barriers: waiters learn within one lease when a party dies."""

from .barrier import Barrier
from .latch import CountDownLatch, LatchParty

__all__ = ["Barrier", "CountDownLatch", "LatchParty"]
