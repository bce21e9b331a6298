"""Redis errors as ours: which failures are outages, and how a server is named in messages.

An outage (refused, reset, timed out, a reply that means "not now":
READONLY, LOADING, MASTERDOWN, BUSY, UNBLOCKED, TRYAGAIN, CLUSTERDOWN,
NOREPLICAS, MISCONF, OOM, or a Cluster with no node for a slot, none
answering, or a slot in migration that kept redirecting a command)
becomes :class:`CoordinationUnavailable`, naming the server with its
password masked and the operation that failed. Every
long-running loop retries those; anything else is a bug to see.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import redis

from ..exceptions import CoordinationUnavailable, PoolExhausted
from ..values import mask_url as mask_url  # (its home; imported from here too)


def describe(client: Any) -> str:
    """The server a client talks to, as a URL with the password masked."""
    if type(client).__name__ == "RedisCluster":
        nodes = getattr(getattr(client, "nodes_manager", None), "startup_nodes", None) or {}
        return "the Redis Cluster of " + (", ".join(sorted(nodes)[:3]) or "(no node known)")
    pool = getattr(client, "connection_pool", None)
    service = getattr(pool, "service_name", None)
    if service:  # Sentinel: the master changes; name the service
        return f"the master of Sentinel service {service!r}"
    kw = getattr(pool, "connection_kwargs", None) or {}
    if kw.get("path"):
        return f"unix://{kw['path']}"
    scheme = "rediss" if "SSL" in type(pool).__name__ or kw.get("ssl") or _is_ssl(pool) else "redis"
    auth = ""
    if kw.get("password") is not None:
        auth = f"{kw.get('username') or ''}:***@"
    elif kw.get("username"):
        auth = f"{kw['username']}@"
    return (
        f"{scheme}://{auth}{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
    )


def _is_ssl(pool: Any) -> bool:
    cls = getattr(pool, "connection_class", None)
    return cls is not None and issubclass(cls, redis.SSLConnection)


# Error replies that mean "not now" rather than "never": the server is
# loading its data, is a replica (a failover demoted it), lost its master,
# is busy running a script, is out of memory or cannot persist, or a blocked
# command was unblocked because the instance changed role. Loops retry them
# like an outage; callers see CoordinationUnavailable.
_PASSING_CLASSES = tuple(
    cls
    for cls in (
        getattr(redis.exceptions, name, None)
        for name in ("ReadOnlyError", "OutOfMemoryError", "TryAgainError", "ClusterDownError")
    )
    if cls is not None
)


_PASSING_PREFIXES = (
    "READONLY",
    "MASTERDOWN",
    "LOADING",
    "BUSY",
    "UNBLOCKED",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "NOREPLICAS",
    "MISCONF",
    "OOM",
)


_WRAPPED_PASSING = re.compile(r": -(?:" + "|".join(_PASSING_PREFIXES) + r")\b")


#: redis-py's Cluster client raises these (not RedisErrors) when no node serves a slot or
#: none answers for its slot map: a Cluster in the middle of a failover.
_CLUSTER_OUTAGES = (
    "Redis Cluster cannot be connected",
    "Slot ",
    "startup_nodes could not agree",
    "Cluster Node ",
    "All slots are not covered",
)


#: redis-py's Cluster client follows ``MOVED``/``ASK`` and waits out ``TRYAGAIN`` for one command
#: a fixed number of times (``RedisClusterRequestTTL``, 16), then raises ``ClusterError("TTL
#: exhausted.")``: a slot in the middle of a resharding (some of its keys moved, some not yet),
#: or a slot map in flux. Its cluster pipelines send a command refused that way again alone
#: through the same loop, so a pipeline ends the same way ("Command # N (...) of pipeline caused
#: error: TTL exhausted."; the asyncio pipeline shows the error's args: "('TTL exhausted.',)").
_TTL_EXHAUSTED = re.compile(r"\(?['\"]?TTL exhausted")


def _redirections_exhausted(exc: BaseException) -> bool:
    """True for redis-py's Cluster client giving up on a command it was redirected or asked to
    try again too many times (a slot being migrated)."""
    return (
        isinstance(exc, redis.exceptions.ClusterError)
        and _TTL_EXHAUSTED.match(_reply(exc)) is not None
    )


_POOL_FULL = ("Too many connections", "No connection available")


def is_pool_full(exc: BaseException) -> bool:
    """True for redis-py's "the pool is full" (MaxConnectionsError; a plain ConnectionError
    before 5.3)."""
    return isinstance(exc, redis.ConnectionError) and str(exc).startswith(_POOL_FULL)


def pool_exhausted(client: Any, operation: str) -> PoolExhausted:
    """The error for a pool that had no connection for us: the pool is too small, not an outage."""
    server = describe(client)
    pool = getattr(client, "connection_pool", None)
    limit = getattr(pool, "max_connections", None)
    limit = limit if isinstance(limit, int) else 0
    return PoolExhausted(
        f"{operation}: every connection of the pool to {server} is in use "
        f"(max_connections={limit}); Redis itself is fine. Raise REDCOORD['MAX_CONNECTIONS'] or "
        "pass a client whose pool is larger",
        max_connections=limit,
        server=server,
        operation=operation,
    )


def is_passing(exc: BaseException) -> bool:
    """True for an error that means Redis is (for now) unavailable, not that the call is wrong."""
    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError)):
        return True
    if isinstance(exc, redis.exceptions.RedisClusterException):
        # an outage of the Cluster, not a call that could never work ("all keys must map to the same
        # key slot")
        return isinstance(exc, redis.exceptions.SlotNotCoveredError) or str(exc).startswith(
            _CLUSTER_OUTAGES
        )
    if isinstance(exc, _PASSING_CLASSES) or _redirections_exhausted(exc):
        return True
    if isinstance(exc, redis.ResponseError):
        text = _reply(exc)
        # the error code is the reply's first word: BUSY, not BUSYGROUP or BUSYKEY
        if (
            text.split(" ", 1)[0] in _PASSING_PREFIXES
            or getattr(exc, "status_code", None) in _PASSING_PREFIXES
        ):
            return True
        # Redis 6.2 wraps the refusal of a command inside a script:
        # "Error running script (call to f_...): @user_script:84: -READONLY You can't write..."
        return text.startswith("Error running script") and _WRAPPED_PASSING.search(text) is not None
    return False


#: The errors :func:`outage` looks at (the others are never outages).
OUTAGES = (redis.RedisError, OSError, redis.exceptions.RedisClusterException)


def outage(client: Any, operation: str, exc: BaseException) -> CoordinationUnavailable | None:
    """What ``exc`` (one of :data:`OUTAGES`, raised by a call to ``client``) is to the caller: a
    CoordinationUnavailable naming the server and the operation, or None when it is no outage
    (raise it as it is).

    Outages are connection errors, timeouts and the error replies of a server
    that cannot serve right now (see :func:`is_passing`). A pool with no
    connection free is not one: that is PoolExhausted (a subclass, nothing sent).
    """
    if is_pool_full(exc):  # the pool is too small: nothing was sent, Redis is fine
        return pool_exhausted(client, operation)
    if not is_passing(exc):
        return None
    server = describe(client)
    if isinstance(exc, (redis.TimeoutError, TimeoutError)):
        kind = "timed out"
    elif isinstance(exc, (redis.ConnectionError, OSError)):
        kind = "could not be reached"
    elif _redirections_exhausted(exc):
        kind = "kept redirecting the command (a slot being migrated)"
    else:
        kind = "refused the command for now"
    return CoordinationUnavailable(
        f"Redis at {server} {kind} during {operation}: {type(exc).__name__}: {exc}",
        server=server,
        operation=operation,
        sent=not (_refused_whole(exc) or getattr(exc, _NEVER_SENT, False)),
    )


#: The mark :func:`never_sent` leaves on an exception.
_NEVER_SENT = "_redcoord_never_sent"


def never_sent(exc: BaseException) -> BaseException:
    """Mark ``exc`` as raised before the call was sent (taking a connection from the pool:
    connecting, its handshake, the check of a pooled one) and return it: its outage says
    ``sent=False``, a known outcome (nothing was done), where a call that was sent and got no
    answer is an unknown one."""
    try:
        setattr(exc, _NEVER_SENT, True)
    except AttributeError:  # (an exception type with __slots__: stays an unknown outcome)
        pass
    return exc


def unreachable(exc: BaseException) -> bool:
    """Whether outage ``exc`` (a CoordinationUnavailable) came of a connection that could not
    be made (see :func:`never_sent`), rather than of a server that refused the call whole."""
    return bool(getattr(exc.__cause__, _NEVER_SENT, False))


def outages_in(client: Any, operation: str, replies: list[Any]) -> list[Any]:
    """``replies`` (a batch's, error replies in their places) with each error reply that is an
    outage turned into its CoordinationUnavailable (see :func:`outage`): a caller that raises an
    error reply it finds raises an outage as one (a full Redis's OOM, READONLY), never raw."""
    return [(outage(client, operation, r) or r) if isinstance(r, Exception) else r for r in replies]


@contextlib.contextmanager
def unavailable_as_ours(client: Any, operation: str) -> Iterator[None]:
    """Turn outages into CoordinationUnavailable (see :func:`outage`)."""
    try:
        yield
    except OUTAGES as exc:
        ours = outage(client, operation, exc)
        if ours is None:
            raise
        raise ours from exc


#: What redis-py puts before the reply of a command that failed inside a pipeline.
_IN_PIPELINE = re.compile(r"Command # \d+ \(.*\) of pipeline caused error: ", re.DOTALL)


def _reply(exc: BaseException) -> str:
    """The server's error reply, without redis-py's "Command # N (...) of pipeline caused
    error: " (the command may hold any text, so the last such prefix ends it)."""
    text = str(exc)
    found = _IN_PIPELINE.match(text)
    return text[found.end() :] if found else text


def _refused_whole(exc: BaseException) -> bool:
    """True for an error reply refusing the command as a whole (TRYAGAIN, CLUSTERDOWN, LOADING,
    READONLY, ...: it did not run), not one raised by a command inside a script that did run, nor
    by one command of a pipeline (the others may have run).

    Nor redis-py's Cluster client giving up after redirections ("TTL exhausted", not a reply):
    in a pipeline the other commands ran, and the one that failed may have been sent alone again
    after its first send timed out (redis-py's sync Cluster pipeline re-sends those too); alone,
    after the client's own retries of a connection error, if it has any. Its outcome is unknown
    (``sent`` stays True)."""
    if not isinstance(exc, redis.ResponseError) or isinstance(
        exc, redis.exceptions.RedisClusterException
    ):
        return False
    text = str(exc)
    if _IN_PIPELINE.match(text):
        return False
    text = _reply(exc)
    if text.startswith("Error running script"):  # a script ran (some of it may have written)
        return False
    return isinstance(exc, _PASSING_CLASSES) or text.split(" ", 1)[0] in _PASSING_PREFIXES
