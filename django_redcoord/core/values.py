"""Small values every family shares: the DEFAULT marker, seconds and milliseconds.

Public times are seconds (floats); Lua sees whole milliseconds. Written once
here so that every primitive validates and converts them the same way.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, TypeGuard
from urllib.parse import urlsplit, urlunsplit

#: Marks "use the configured default" (None often means something else, e.g. "wait forever").
DEFAULT: Any = type("Default", (), {"__repr__": lambda self: "DEFAULT"})()


def finite_number(value: object) -> TypeGuard[int | float]:
    """True for an int or float (not a bool) that is finite as a float. An int too big for a float
    (``10**400``) is not: ``math.isfinite`` raises OverflowError on it, which a check must never
    let out."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def ms(seconds: float) -> int:
    """Whole milliseconds for Lua, at least 1 (a TTL of 0 ms would mean "no expiry")."""
    return max(1, int(seconds * 1000))


def check_seconds(
    value: object,
    what: str,
    *,
    allow_zero: bool = False,
    timedelta_ok: bool = False,
    most: float | None = None,
) -> float:
    """Validate a duration: a finite number of seconds > 0 (>= 0 with ``allow_zero``), at most
    ``most`` (default: a year; what Redis is asked to keep or wait for is then always a valid
    millisecond count; a caller with a bound of its own checks it after, with ``most=inf``).

    Raises TypeError for anything but a finite number (or a ``timedelta``
    when ``timedelta_ok``), ValueError when it is out of range; both say
    what is allowed.
    """
    if timedelta_ok and isinstance(value, timedelta):
        value = value.total_seconds()
    if not finite_number(value):
        kind = (
            "a number of seconds or a timedelta" if timedelta_ok else "a finite number of seconds"
        )
        raise TypeError(f"{what} must be {kind}, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{what} must be {'>= 0' if allow_zero else '> 0'} seconds, not {value!r}")
    if value > (MAX_SECONDS if most is None else most):
        raise ValueError(
            f"{what} must be at most {MAX_SECONDS:g} seconds (a year), not {value!r}"
            if most is None
            else f"{what} must be at most {most:g} seconds, not {value!r}"
        )
    return float(value)


#: The longest duration :func:`check_seconds` takes (s): a year, as for a ttl or a wait.
MAX_SECONDS = 365 * 24 * 3600.0


_MAX_TTL = 365 * 24 * 3600.0


def check_ttl(ttl: object) -> float:
    """Validate a TTL in seconds: a number > 0 (at least 1 ms), at most a year."""
    if not finite_number(ttl):
        raise TypeError(f"ttl must be a number of seconds > 0, not {ttl!r}")
    if not 0.001 <= ttl <= _MAX_TTL:
        raise ValueError(f"ttl must be between 0.001 and {_MAX_TTL:g} seconds, not {ttl!r}")
    return float(ttl)


#: The longest finite wait (s): a year, as REDCOORD["LOCK_WAIT"] allows; longer is None (forever).
MAX_WAIT = 365 * 24 * 3600.0


def check_wait(wait: object) -> float | None:
    """Validate a wait in seconds: a number from 0 (try once) to a year, or None (forever)."""
    if wait is None:
        return None
    if (
        isinstance(wait, bool)
        or not isinstance(wait, (int, float))
        or (isinstance(wait, float) and math.isnan(wait))
    ):  # (an int is compared as it is: 10**400 is too long, not an OverflowError)
        raise TypeError(f"wait must be seconds >= 0 or None (wait forever), not {wait!r}")
    if wait < 0:
        raise ValueError(
            f"wait must be seconds >= 0 (0 tries once) or None (forever), not {wait!r}"
        )
    if wait > MAX_WAIT:
        raise ValueError(
            f"wait must be at most {MAX_WAIT:g} seconds (a year, as REDCOORD['LOCK_WAIT']), "
            f"or None (forever), not {wait!r}"
        )
    return float(wait)


def check_count(value: object, what: str, low: int, high: int) -> int:
    """Validate a whole number in [low, high]; the message says what is allowed."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return value


_MAX_ELECTION_SECONDS = 24 * 3600.0


def check_timing(
    lease: object, renew_deadline: object, retry_period: object
) -> tuple[float, float, float]:
    """Validate election timing (seconds) with client-go's rules; return the floats.

    Allowed: numbers > 0 with ``lease > renew_deadline > 1.2 × retry_period``.
    Raises TypeError for non-numbers, ValueError for values breaking the rules.
    """
    checked = []
    for what, value in (
        ("lease", lease),
        ("renew_deadline", renew_deadline),
        ("retry_period", retry_period),
    ):
        if not finite_number(value):
            raise TypeError(f"{what} must be a number of seconds > 0, not {value!r}")
        if not 0.001 <= value <= _MAX_ELECTION_SECONDS:
            raise ValueError(
                f"{what} must be between 0.001 and {_MAX_ELECTION_SECONDS:g} seconds, not {value!r}"
            )
        checked.append(float(value))
    lease, renew_deadline, retry_period = checked
    if not lease > renew_deadline:
        raise ValueError(
            f"lease ({lease:g} s) must be longer than renew_deadline ({renew_deadline:g} s): "
            "a leader that cannot renew steps down at the deadline, before its lease can pass "
            "to another candidate (allowed: lease > renew_deadline > 1.2 × retry_period)"
        )
    if not renew_deadline > 1.2 * retry_period:
        raise ValueError(
            f"renew_deadline ({renew_deadline:g} s) must be longer than 1.2 × retry_period "
            f"(1.2 × {retry_period:g} s = {1.2 * retry_period:g} s): a leader renews every "
            "retry_period and must get more than one try before the deadline "
            "(allowed: lease > renew_deadline > 1.2 × retry_period)"
        )
    return lease, renew_deadline, retry_period


def whole_span(whole: int) -> str:
    """Whole seconds in the two largest units people read: 3 d 4 h, 2 h 5 min, 12 min 5 s, 42 s."""
    for unit, size, sub, subsize in (
        ("d", 86400, "h", 3600),
        ("h", 3600, "min", 60),
        ("min", 60, "s", 1),
    ):
        if whole >= size:
            return f"{whole // size} {unit} {whole % size // subsize} {sub}"
    return f"{whole} s"


def mask_url(url: str) -> str:
    """Return ``url`` with its password replaced by ``***`` (a URL it cannot read, whole, as
    ``<unparseable url>``: it may hold a password)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # (a bad port is found by .port)
        return "<unparseable url>"
    netloc = f"{user}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
