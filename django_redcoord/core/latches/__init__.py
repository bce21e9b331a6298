"""Count-down latches and barriers: waiters learn within one lease when a party dies."""

from .barrier import Barrier
from .latch import CountDownLatch, LatchParty
from .records import read_barriers, read_latches

__all__ = ["Barrier", "CountDownLatch", "LatchParty", "read_barriers", "read_latches"]
