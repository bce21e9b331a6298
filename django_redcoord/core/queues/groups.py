"""Groups: per-key order and per-tenant fairness, with limits checked when a worker claims.

A message pushed with a group (``queue.push(body, group="tenant:42")``) joins
its group's line. A group has at most one message in the queue's ready line at
a time, so the queue serves its groups round-robin however many messages one
of them holds; within a group, messages run highest priority first, then in
the order they were pushed. A :class:`Group` may also say how many of its
messages may run at once (``concurrency``; 1 runs them strictly one after
another, in order) and how fast they may start (``rate``, one GCRA rate such
as ``"10/s"``). Both are checked by the claim script: a message its group's
rate refuses stays in line and waits, spending no attempt.

The limits travel in each message (one line before its body, see
``core/lua/queues/common.lua``), so no setting has to agree across processes:
the message being claimed says its group's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rates import parse as parse_rate

#: A group's name: 1 to this many characters, any but a newline.
MAX_GROUP = 1000
#: Most messages of one group that may run at once, when limited.
MAX_CONCURRENCY = 1_000_000


@dataclass(frozen=True)
class Group:
    """A message's group and the limits its group runs under.

    Args:
        name: the group (a tenant, an account, an order id): 1 to 1,000
            characters of valid Unicode text, any but a newline.
        concurrency: at most this many of the group's messages claimed at once
            (1 to 1,000,000; 1 runs them strictly in order); None: no limit.
        rate: how fast the group's messages may start: one GCRA rate, such as
            ``"10/s"``, ``"100/m;burst=20"`` (the rate limiter's syntax); None:
            no limit.

    Raises TypeError / ValueError saying what is allowed.
    """

    name: str
    concurrency: int | None = None
    rate: str | None = None

    def __post_init__(self) -> None:
        check_group_name(self.name)
        c = self.concurrency
        if c is not None and (isinstance(c, bool) or not isinstance(c, int)):
            raise TypeError(f"a group's concurrency must be a whole number or None, not {c!r}")
        if c is not None and not 1 <= c <= MAX_CONCURRENCY:
            raise ValueError(
                f"a group's concurrency must be between 1 and {MAX_CONCURRENCY:,} (None: no "
                f"limit), not {c!r}"
            )
        if self.rate is not None:
            rate_args(self.rate)

    def line(self) -> str:
        """The line a grouped envelope carries: concurrency|limit|period_ms|burst|name."""
        limit, period_ms, burst = rate_args(self.rate) if self.rate is not None else (0, 0, 0)
        return f"{self.concurrency or 0}|{limit}|{period_ms}|{burst}|{self.name}"


def check_group_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a group must be a string (or a Group), not {name!r}")
    if not 1 <= len(name) <= MAX_GROUP or "\n" in name:
        raise ValueError(
            f"a group must be 1 to {MAX_GROUP} characters, any but a newline, not {name[:50]!r}"
        )
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"a group must be valid Unicode text, not {name[:50]!r}") from None
    return name


def rate_args(rate: Any) -> tuple[int, int, int]:
    """(limit, period_ms, burst) of a group's rate, or ValueError saying what is allowed."""
    what = "a group's rate must be one GCRA rate such as '10/s' or '100/m;burst=20'"
    try:
        policies = parse_rate(rate)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    if len(policies) != 1 or policies[0].kind != "gcra":
        raise ValueError(f"{what}, not {rate!r}")
    p = policies[0]
    return p.limit, int(p.period * 1000), p.burst


def as_group(value: Any) -> Group | None:
    """``value`` (None, a group's name, or a :class:`Group`) as a Group, or None."""
    if value is None or isinstance(value, Group):
        return value
    return Group(check_group_name(value))
