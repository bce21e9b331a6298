"""What every held primitive shares: the hold protocol, owner identity, the watchdog.

A lock, a semaphore permit and the read and write holds of a read-write lock
are *holds*: taken FIFO through a queue in Redis, handed to the oldest live
waiter on release, leased (a crashed holder's hold expires), fenced, and
optionally renewed. :class:`.hold.Hold` is that client side once; each
primitive adds its scripts and keys.
"""

from .hold import Hold

__all__ = ["Hold"]
