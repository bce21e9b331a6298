"""Rate-limit policies: parsed once, from the text a setting or a decorator holds.

Syntax (policies joined with ``&`` are checked together, atomically: a
request passes only if every one of them lets it through, and then counts
against all of them)::

    10/s                  GCRA: 10 per second, bursts of up to 10
    10/s;burst=20         GCRA: 10 per second, bursts of up to 20
    1000/h;window         sliding-window counter: at most 1000 per clock hour, about
                          1000 in any sliding hour (up to ~2000 after a burst)
    100/5m                GCRA: 100 per 5 minutes
    concurrency=5         at most 5 in flight at once (released when the work ends)
    concurrency=5;lease=60   ... a crashed holder's slot returns after 60 s (default 60)
    10/s;burst=20 & 1000/h & concurrency=50

Periods: ``s``, ``m``, ``h``, ``d`` (also ``sec``, ``min``, ``hour``, ``day``,
with an optional count: ``5m``). Bad text raises ValueError saying what is
allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
# ASCII digits only: \d (and str.isdigit) would take '٣' or '²' for a number.
_RATE = re.compile(r"^([0-9]+)\s*/\s*([0-9]*)\s*([a-z]+)$", re.ASCII)
_SECONDS = re.compile(r"^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)?$", re.ASCII)
SYNTAX = (
    "'<count>/<period>' (GCRA, e.g. '10/s', '100/5m'), with ';burst=<n>' or ';window' "
    "(sliding window), or 'concurrency=<n>' with ';lease=<seconds>'; join several with '&'"
)
MAX_COUNT = 10**9
#: The longest period (and concurrency lease) a policy takes, in seconds: a year.
MAX_PERIOD = 86400 * 365


@dataclass(frozen=True)
class Policy:
    """One policy: ``kind`` is "gcra", "window" or "concurrency".

    gcra: ``limit`` per ``period`` seconds, bursts of up to ``burst``.
    window: at most ``limit`` per fixed window, about ``limit`` in any ``period`` seconds (two
    weighted windows).
    concurrency: at most ``limit`` in flight; a slot is leased for ``period`` seconds.
    """

    kind: str
    limit: int
    period: float
    burst: int
    text: str

    @property
    def name(self) -> str:
        """A short name for headers and the admin: the policy's own text."""
        return self.text


def parse(spec: object) -> list[Policy]:
    """The policies of ``spec`` (text, a Policy, or a list of either); ValueError, saying what is
    allowed, for anything else."""
    if isinstance(spec, Policy):
        return [spec]
    if isinstance(spec, (list, tuple)):
        found = [p for item in spec for p in parse(item)]
        if not found:
            raise ValueError(f"a rate limit needs at least one policy: {SYNTAX}")
        return found
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a rate-limit policy must be text like {SYNTAX}, not {spec!r}")
    return [_one(part.strip()) for part in spec.split("&")]


def _one(text: str) -> Policy:
    fields = [f.strip().lower() for f in text.split(";")]
    head, options = fields[0], fields[1:]
    if head.startswith("concurrency"):
        limit = _count(head.partition("=")[2], text, "concurrency")
        lease = 60.0
        for option in options:
            name, _, value = option.partition("=")
            if name != "lease":
                raise ValueError(
                    f"policy {text!r}: unknown option {option!r}; a concurrency policy takes "
                    "';lease=<seconds>'"
                )
            lease = _seconds(value, text)
        return Policy("concurrency", limit, lease, limit, text)
    match = _RATE.match(head)
    if not match:
        raise ValueError(f"policy {text!r} is not understood; write {SYNTAX}")
    limit = _count(match.group(1), text, "count")
    unit = _UNITS.get(match.group(3))
    if unit is None:
        raise ValueError(f"policy {text!r}: unknown period {match.group(3)!r}; use s, m, h or d")
    period = float(unit * int(match.group(2) or 1))
    if period <= 0:
        raise ValueError(f"policy {text!r}: the period must be at least 1 {match.group(3)}")
    if period > MAX_PERIOD:
        raise ValueError(
            f"policy {text!r}: the period must be at most 365 days ({MAX_PERIOD} s), not "
            f"{period:g} s"
        )
    kind, burst = "gcra", limit
    for option in options:
        name, _, value = option.partition("=")
        if name == "burst":
            burst = _count(value, text, "burst")
        elif name == "window" and not value:
            kind = "window"
        else:
            raise ValueError(
                f"policy {text!r}: unknown option {option!r}; a rate takes ';burst=<n>' or "
                "';window'"
            )
    if kind == "window" and burst != limit:
        raise ValueError(
            f"policy {text!r}: a sliding window has no burst (it allows about {limit} in any "
            "window)"
        )
    return Policy(kind, limit, period, burst, text)


def _count(value: str, text: str, what: str) -> int:
    value = value.strip()
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_COUNT:
        raise ValueError(
            f"policy {text!r}: {what} must be a whole number (digits 0-9) from 1 to {MAX_COUNT}, "
            f"not {value!r}"
        )
    return int(value)


def _seconds(value: str, text: str) -> float:
    seconds = (
        float(value) if _SECONDS.match(value) else -1.0
    )  # ASCII digits: float() takes '٣' and '1_0'
    if not 0.001 <= seconds <= MAX_PERIOD:
        raise ValueError(
            f"policy {text!r}: lease must be seconds from 0.001 to a year, not {value!r}"
        )
    return seconds
