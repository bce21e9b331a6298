"""Distributed locks: token-checked, expiring, fenced, fair; sync and asyncio."""

from ..values import DEFAULT, check_ttl, check_wait
from .lock import Lock
from .records import force_release, read_holders

__all__ = ["DEFAULT", "Lock", "check_ttl", "check_wait", "force_release", "read_holders"]
