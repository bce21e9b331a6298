"""GCRA in the server: ``CL.THROTTLE`` where the server has it (redis-cell, Dragonfly).

A limiter whose only policy is a GCRA rate decides with the server's own
command instead of the Lua script: one command, no script. Whether a server
has it is learnt on a limiter's first decision against that server (the
command is tried; an "unknown command" reply marks the server as without it
and the decision is made again in Lua) and remembered for the process, so
load the module before the application starts: a process that found no
``CL.THROTTLE`` keeps to Lua, and its counts live in other keys than the
command's.

``CL.THROTTLE key max_burst count period quantity`` admits ``max_burst + 1``
at once and ``count`` per ``period`` seconds after that: our ``burst`` is
``max_burst + 1``. It answers ``[limited, limit, remaining, retry_after,
reset_after]`` in whole seconds, rounded up from milliseconds (see
:func:`numbers` for the retry time we give from it); ``RateLimiter(...,
native=False)`` keeps a limiter on the script for millisecond answers.
"""

from __future__ import annotations

import threading
from typing import Any

import redis

from ..rates import Policy
from ..transport.commands import command

#: server (host, port, unix socket, db) -> whether it has CL.THROTTLE, learnt by trying
_KNOWN: dict[Any, bool] = {}
_LOCK = threading.Lock()


def server_of(client: Any) -> Any:
    """What identifies the server behind ``client`` (sync or asyncio redis-py)."""
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", None)
    if kwargs is None:
        return ("client", id(client))
    return (kwargs.get("host"), kwargs.get("port"), kwargs.get("path"), kwargs.get("db"))


def known(client: Any) -> bool | None:
    """True/False once a decision against ``client``'s server has shown whether it has
    CL.THROTTLE."""
    return _KNOWN.get(server_of(client))


def learn(client: Any, has_it: bool) -> None:
    with _LOCK:
        _KNOWN[server_of(client)] = has_it


def probe(client: Any, key: str) -> bool:
    """Learn whether ``client``'s server has CL.THROTTLE (one read of ``key`` that counts
    nothing)."""
    has_it = known(client)
    if has_it is None:
        try:
            command(client, "CL.THROTTLE", key, 0, 1, 1, 0, operation="look for CL.THROTTLE")
            has_it = True
        except redis.RedisError as exc:
            if not is_unknown_command(exc):
                raise
            has_it = False
        learn(client, has_it)
    return has_it


def eligible(policies: tuple[Policy, ...]) -> bool:
    """Whether the command can decide these policies: one GCRA rate over whole seconds."""
    if len(policies) != 1 or policies[0].kind != "gcra":
        return False
    period = policies[0].period
    return period == int(period)


def is_unknown_command(exc: BaseException) -> bool:
    """An error reply meaning the server has no CL.THROTTLE (or this user may not run it); or, from
    redis-py's Cluster client, that the nodes' command table has no such command."""
    if not isinstance(exc, redis.ResponseError):
        return (
            isinstance(exc, redis.RedisError)
            and "doesn't exist in redis commands" in str(exc).lower()
        )
    text = str(exc).lower()
    return "unknown command" in text or text.startswith("noperm") or "no permissions to run" in text


def throttle_args(key: str, policy: Policy, quantity: int) -> tuple[Any, ...]:
    """The command for ``quantity`` requests of ``key`` (0: read, count nothing)."""
    return ("CL.THROTTLE", key, policy.burst - 1, policy.limit, int(policy.period), quantity)


def numbers(
    reply: Any, policy: Policy, *, peek: bool, cost: int = 1
) -> tuple[bool, int, float, float]:
    """(allowed, remaining, reset, retry_after) in seconds from a CL.THROTTLE reply.

    The command answers in whole seconds, rounded up from milliseconds (so a
    wait under 1 ms is 0). A refused request never waits longer than its
    cost's worth of intervals (only admitted requests move the bucket on, so
    it is never fuller than the burst): ``retry_after`` is the shorter of the
    two, and at least 1 ms, an upper bound that is never too early.

    A peek asks with quantity 0, which always "passes": it would let one more
    request through when at least one remains. The command gives no retry
    time for it (nor for a request larger than the burst, which can never
    pass); both come from the reset time instead: one request fits again once
    the bucket has drained down to ``burst - 1``.
    """
    limited, _, remaining, retry, reset = (int(x) for x in reply)
    interval = policy.period / policy.limit
    allowed = remaining >= 1 if peek else not limited
    if allowed:
        return True, remaining, float(max(reset, 0)), 0.0
    if retry < 0:
        return (
            False,
            remaining,
            float(max(reset, 0)),
            float(max(1, reset - int((policy.burst - 1) * interval))),
        )
    return False, remaining, float(max(reset, 0)), max(0.001, min(float(retry), cost * interval))


def forget() -> None:
    """Forget what every server was found to have (after ``MODULE LOAD`` into a running server;
    tests)."""
    with _LOCK:
        _KNOWN.clear()
