"""Read-write locks: many readers or one writer, fair in request order, leased, fenced."""

from .records import read_rwlocks
from .rwlock import ReadHold, ReadWriteLock, WriteHold

__all__ = ["ReadHold", "ReadWriteLock", "WriteHold", "read_rwlocks"]
