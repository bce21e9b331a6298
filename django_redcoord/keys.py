"""The one place that builds Redis key names.

Every key is ``<prefix>:<kind>:{<name>}[:<part>]``. The ``{<name>}`` hash tag
puts every key a single script touches for one resource in the same Redis
Cluster slot. Names are restricted to a safe character set: no ``{}`` (they
would break the hash tag), no glob characters (``SCAN MATCH`` under our prefix
stays exact), no whitespace or control bytes, and a length cap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NAME_LENGTH = 200
ALLOWED_NAME_CHARS = "letters, digits and _ - . : / @ = + , # ~ |"
_NAME_RE = re.compile(r"[A-Za-z0-9_\-.:/@=+,#~|]+")
_PREFIX_RE = re.compile(r"[A-Za-z0-9_\-.:]+")
DEFAULT_PREFIX = "redcoord"


def validate_name(name: object, what: str = "name") -> str:
    """Return ``name`` if it is usable in a key, else raise ``ValueError``/``TypeError``.

    Allowed: a non-empty ``str`` of at most 200 characters drawn from letters,
    digits and ``_ - . : / @ = + , # ~ |``.
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, not {type(name).__name__} ({name!r})")
    if not name:
        raise ValueError(f"{what} must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"{what} is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed")
    if not _NAME_RE.fullmatch(name):
        bad = sorted({c for c in name if not _NAME_RE.fullmatch(c)})
        raise ValueError(
            f"{what} {name!r} contains {''.join(bad)!r}; allowed characters are {ALLOWED_NAME_CHARS}"
        )
    return name


def validate_prefix(prefix: object) -> str:
    """Return ``prefix`` if usable as KEY_PREFIX: letters, digits and ``_ - . :``."""
    if not isinstance(prefix, str) or not prefix or not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(
            f"KEY_PREFIX must be a non-empty str of letters, digits and _ - . : (got {prefix!r})"
        )
    if len(prefix) > 64:
        raise ValueError(f"KEY_PREFIX is {len(prefix)} characters long; at most 64 are allowed")
    return prefix


@dataclass(frozen=True)
class LockKeys:
    """Keys of one lock. All share the ``{name}`` hash tag."""

    lock: str  # hash: token, fence, host, pid, thread, acquired_ms, ttl_ms, depth
    fence: str  # integer: last fencing token issued for this name (never expires)
    queue: str  # list: tokens of waiters, oldest first
    waiters: str  # hash: waiter token -> "deadline_ms|ttl_ms|wake_key|host|pid|thread"
    index: str  # zset (shared by all locks): name -> expiry in ms since the epoch
    wake_prefix: str  # a waiter blocks on wake_prefix + its token

    def wake(self, token: str) -> str:
        return self.wake_prefix + token


class KeyBuilder:
    """Builds every key under one prefix (``REDCOORD["KEY_PREFIX"]``)."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        self.prefix = validate_prefix(prefix)

    def __repr__(self) -> str:
        return f"KeyBuilder({self.prefix!r})"

    def lock(self, name: str) -> LockKeys:
        validate_name(name, "lock name")
        base = f"{self.prefix}:lock:{{{name}}}"
        return LockKeys(
            lock=base,
            fence=f"{base}:fence",
            queue=f"{base}:queue",
            waiters=f"{base}:waiters",
            index=self.lock_index(),
            wake_prefix=f"{base}:wake:",
        )

    def lock_index(self) -> str:
        return f"{self.prefix}:index:locks"
