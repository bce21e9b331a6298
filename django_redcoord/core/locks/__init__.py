"""Distributed locks: token-checked, expiring, fenced, fair; sync and asyncio."""

from .lock import DEFAULT, Lock, check_ttl, check_wait, force_release, read_holders

__all__ = ["DEFAULT", "Lock", "check_ttl", "check_wait", "force_release", "read_holders"]
