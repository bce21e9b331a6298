"""One command, one round trip, on a connection checked out of the client's own pool.

Every coordination command goes through :func:`command` (sync) or
:func:`acommand` (asyncio): a connection is checked out of the client's own
pool and given back right after, so nothing lives outside the pool's
accounting (``max_connections``, ``disconnect()``, fork handling), and the
reply is read by the connection class itself, so Sentinel's ``READONLY``
handling, RESP3 push frames (client tracking) and the client's decoding all
apply. Unlike ``client.execute_command`` there is no silent retry, whatever
retry policy the client was built with: a timeout is an unknown outcome, and
every coordination operation is written to be repeated by its caller instead.
With hiredis installed, plain arguments (str, bytes, int) are packed by its C
packer and sent with the connection's own ``send_packed_command``: the same
bytes as the client's encoder makes for them, without its per-argument
Python (``bench/bench_transport.py`` measures it). A connection that failed
or was interrupted mid-reply is disconnected before it goes back to the pool,
so a late reply is never read as the next one's.

Clients without a plain pool (Redis Cluster, a ``single_connection_client``)
go through ``execute_command``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import inspect
import os
import select
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from ..exceptions import CoordinationUnavailable, PoolExhausted
from .errors import OUTAGES as _OUTAGES
from .errors import describe, is_pool_full, never_sent, outage, unavailable_as_ours


def as_text(value: Any) -> str:
    """A reply as str, whether or not the client decodes responses (``decode_responses``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def as_bytes(value: Any) -> bytes:
    """A reply as bytes, whether or not the client decodes responses."""
    return value if isinstance(value, bytes) else str(value).encode()


_pack: Callable[[tuple[Any, ...]], Any] | None
try:  # the C packer: most of the client's own time per command is packing
    from hiredis import pack_command as _pack
except ImportError:  # pragma: no cover - hiredis is an optional extra
    _pack = None


#: Longest single blocking call (BLPOP) in seconds, whatever the socket timeout.
MAX_BLOCK = 10.0
#: Seconds a BLPOP blocks at least. Redis 6.2 reads a timeout of "0.001" as 0 ms (0.001 × 1000
#: in floating point is just under 1), and 0 means "forever": the call would hang until the
#: socket timeout and read as an outage. 2 ms is read as 2 ms by every version.
MIN_BLOCK = 0.002


def _direct_pool(client: Any) -> Any:
    """The pool to check a connection out of, or None to use ``execute_command``."""
    if not isinstance(client, redis.Redis) or getattr(client, "connection", None) is not None:
        return None
    pool = getattr(client, "connection_pool", None)
    if pool is None or not hasattr(pool, "get_connection") or not hasattr(pool, "release"):
        return None
    return pool


#: A Sentinel pool asks the sentinels where the master is at most this often
#: (seconds) before a checkout, and after a failed ask waits SENTINEL_BACKOFF.
SENTINEL_CHECK = 1.0
SENTINEL_BACKOFF = 10.0


def _sentinel_due(pool: Any) -> bool:
    """True when ``pool`` is a Sentinel master pool whose master address is due for a check.

    redis-py asks the sentinels only when it opens a connection, so an idle
    pooled connection keeps writing to a former master for as long as that
    server still believes it is one (until a sentinel demotes it, up to ~10 s;
    after a second, quick failover it stays master meanwhile): those writes are
    lost when it resyncs. Asking again (``get_master_address``) drops the idle
    connections when the answer changed.
    """
    if not getattr(pool, "is_master", False) or not hasattr(pool, "get_master_address"):
        return False
    now = time.monotonic()
    if now < getattr(pool, "_redcoord_next_check", 0.0):
        return False
    pool._redcoord_next_check = now + SENTINEL_CHECK
    return True


class _BoundedConnect:
    """A sync connection whose connect, made for a call under :func:`answered_by`, is bounded by
    what is left of it: its TCP connect and its handshake (HELLO, AUTH, SELECT) would otherwise
    each wait a whole socket timeout on a paused server, past the wait's bound."""

    _redcoord_bounded = True
    socket_timeout: Any
    socket_connect_timeout: Any

    def connect(self, *args: Any, **kwargs: Any) -> Any:
        until = _until.get()
        if until is None or getattr(self, "_sock", None) is not None:
            return super().connect(*args, **kwargs)  # type: ignore[misc]
        saved = self.socket_timeout, self.socket_connect_timeout
        self.socket_timeout, self.socket_connect_timeout = _capped(saved, until)
        try:
            return super().connect(*args, **kwargs)  # type: ignore[misc]
        finally:
            self.socket_timeout, self.socket_connect_timeout = saved
            sock = getattr(self, "_sock", None)
            if sock is not None:  # (connected: its later reads wait its own timeout again)
                with contextlib.suppress(OSError):
                    sock.settimeout(saved[0])


class _ABoundedConnect:
    """:class:`_BoundedConnect` for a ``redis.asyncio`` connection."""

    _redcoord_bounded = True
    socket_timeout: Any
    socket_connect_timeout: Any

    async def connect(self, *args: Any, **kwargs: Any) -> Any:
        until = _until.get()
        if until is None or getattr(self, "is_connected", False):
            return await super().connect(*args, **kwargs)  # type: ignore[misc]
        saved = self.socket_timeout, self.socket_connect_timeout
        self.socket_timeout, self.socket_connect_timeout = _capped(saved, until)
        try:
            return await super().connect(*args, **kwargs)  # type: ignore[misc]
        finally:
            self.socket_timeout, self.socket_connect_timeout = saved


def _capped(timeouts: tuple[Any, Any], until: float) -> tuple[float, float]:
    left = max(0.001, until - time.monotonic())
    return tuple(left if t is None else min(float(t), left) for t in timeouts)  # type: ignore[return-value]


_bounded_classes: dict[type, type] = {}


def bound_connects(pool: Any) -> None:
    """Make the connections of ``pool`` (a client's we build, before it makes any) connect
    within the bound of the call that makes them (see :class:`_BoundedConnect`); no change for
    calls without one. A client given to us keeps its own connection class: its handshakes wait
    its socket timeout."""
    cls = getattr(pool, "connection_class", None)
    if cls is None or getattr(cls, "_redcoord_bounded", False):
        return
    bounded = _bounded_classes.get(cls)
    if bounded is None:
        mixin = _ABoundedConnect if inspect.iscoroutinefunction(cls.connect) else _BoundedConnect
        bounded = _bounded_classes[cls] = type(cls.__name__, (mixin, cls), {})
    pool.connection_class = bounded
    # (and the connections it made already: one that timed out is disconnected and kept, and
    # connects again when it is next taken; the subclass adds no state)
    for conn in list(getattr(pool, "_available_connections", ())):
        if type(conn) is cls:
            conn.__class__ = bounded


def _checkout(pool: Any, command_name: str) -> Any:
    if _sentinel_due(pool):
        try:
            pool.get_master_address()
        except Exception:  # the sentinels cannot say now: keep the connections we have
            pool._redcoord_next_check = time.monotonic() + SENTINEL_BACKOFF
    # Our shares keep our own calls within the pool; connections taken around
    # us (the project's own calls on the same client) can still fill it: wait
    # for one briefly, then PoolExhausted (see errors.unavailable_as_ours).
    deadline = None
    while True:
        try:
            try:
                return pool.get_connection()
            except TypeError:  # redis-py 5 requires the command name
                return pool.get_connection(command_name)
        except _OUTAGES as exc:
            if not is_pool_full(exc):
                never_sent(exc)
                raise
            deadline = deadline or _full_pool_deadline(pool)
            if time.monotonic() >= deadline:
                raise
            time.sleep(FULL_POOL_RETRY)


def _full_pool_deadline(pool: Any) -> float:
    """Until when a call waits for a connection taken around us: one socket timeout, and never
    past the bound of :func:`answered_by` (the round trip that follows counts in it)."""
    deadline = time.monotonic() + _call_timeout(pool)
    until = _until.get()
    return deadline if until is None else min(deadline, until)


async def _acheckout(pool: Any) -> Any:
    if _sentinel_due(pool):
        try:
            await pool.get_master_address()
        except Exception:  # the sentinels cannot say now: keep the connections we have
            pool._redcoord_next_check = time.monotonic() + SENTINEL_BACKOFF
    deadline = None
    while True:
        try:
            return await pool.get_connection()
        except _OUTAGES as exc:
            if not is_pool_full(exc):
                never_sent(exc)
                raise
            deadline = deadline or _full_pool_deadline(pool)
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(FULL_POOL_RETRY)


#: Seconds between two tries at a pool that connections taken around us fill.
FULL_POOL_RETRY = 0.01


def command(client: Any, *args: Any, operation: str) -> Any:
    """Send one command and return its reply (one round trip, never retried).

    Raises CoordinationUnavailable when Redis cannot be reached, does not
    answer within the socket timeout, or refuses for a passing reason
    (loading, read-only replica, failover); PoolExhausted (a subclass, nothing
    sent) when no connection of the pool came free in time; ResponseError for
    other error replies. Inside :func:`ending_waits` the call may use the
    connections the pool keeps for releases.
    """
    pool = _direct_pool(client)
    if pool is None and _is_cluster(client):
        key = _routing_key(args)
        if key is not None:  # straight to the slot's node: no per-call slot work of redis-py's
            return _on_node(client, (args,), key, operation=operation, raise_errors=True)[0]
    if pool is not None:
        # The usual case, inline (no context managers: they cost more than the rest of the
        # call's Python): the pool's share admits the call at once.
        share, kind = _share(pool), _kind()
        if share is None or share.try_take(kind):
            try:
                return _send(client, pool, args, operation)
            except _OUTAGES as exc:
                ours = outage(client, operation, exc)
                if ours is None:
                    raise
                raise ours from exc
            finally:
                if share is not None:
                    share.give(kind)
    with unavailable_as_ours(client, operation):
        if pool is None:
            return client.execute_command(*args)
        with _slot(client, pool, _kind(), operation):  # it waits for a connection's worth
            return _send(client, pool, args, operation)


def _send(client: Any, pool: Any, args: tuple[Any, ...], operation: str) -> Any:
    if _until.get() is not None:
        _time_left(client, operation)  # (none left: not sent, and no connection made for it)
    conn = _checkout(pool, args[0])
    try:
        cap = _time_left(client, operation)  # (what the wait for a connection left)
        plain = _plain(args) if _pack is not None else None
        if plain is not None and _utf8(conn):
            conn.send_packed_command((_pack(plain),))  # type: ignore[misc]
        else:
            conn.send_command(*args)
        if cap is None:
            return conn.read_response()
        with _read_within(conn, cap):
            return conn.read_response()
    except redis.exceptions.ResponseError:
        raise  # an error reply: the stream is in step
    except BaseException:
        # Failed, timed out or interrupted (KeyboardInterrupt, a cancelled
        # thread) mid-reply: the stream may be out of step. Never reuse it.
        conn.disconnect()
        raise
    finally:
        pool.release(conn)


async def acommand(client: Any, *args: Any, operation: str) -> Any:
    """:func:`command` for a ``redis.asyncio`` client: the same rules, awaited.

    Cancellation (``CancelledError``) mid-reply disconnects the connection,
    like any other interruption: its late reply is never read as the next one's.
    """
    pool = _direct_async_pool(client)
    if pool is None and _is_cluster(client):
        key = _routing_key(args)
        if key is not None:
            return (await _aon_node(client, (args,), key, operation=operation, raise_errors=True))[
                0
            ]
    if pool is not None:
        share, kind = _share(pool), _kind()  # the usual case inline, as in command()
        if share is None or share.try_take(kind):
            try:
                return await _asend(client, pool, args, operation)
            except _OUTAGES as exc:
                ours = outage(client, operation, exc)
                if ours is None:
                    raise
                raise ours from exc
            finally:
                if share is not None:
                    share.give(kind)
    with unavailable_as_ours(client, operation):
        if pool is None:
            return await client.execute_command(*args)
        async with _aslot(client, pool, _kind(), operation):  # it waits for a connection's worth
            return await _asend(client, pool, args, operation)


async def _asend(client: Any, pool: Any, args: tuple[Any, ...], operation: str) -> Any:
    since = _cancels()
    if _until.get() is not None:
        _time_left(client, operation)  # (none left: not sent, and no connection made for it)
    conn = await _acheckout(pool)
    try:
        await _aready(conn)
        cap = _time_left(client, operation)  # (what the wait for a connection left)
        plain = _plain(args) if _pack is not None else None
        if plain is not None and _utf8(conn):
            await conn.send_packed_command((_pack(plain),))  # type: ignore[misc]
        else:
            await conn.send_command(*args)
        _deliver_swallowed_cancel(since)
        return await _aread(conn, cap)
    except redis.exceptions.ResponseError:
        raise
    except BaseException:
        await conn.disconnect(nowait=True)
        raise
    finally:
        await pool.release(conn)


def commands(
    client: Any,
    cmds: tuple[tuple[Any, ...], ...],
    *,
    operation: str,
    raise_errors: bool = True,
    key: str | None = None,
) -> list[Any]:
    """Several commands sent together, one round trip, no MULTI: their replies in order.

    Each runs on its own (a batch, not a transaction). Every reply is read
    before an error reply is raised (the first), so the connection stays in
    step and goes back to the pool; with ``raise_errors=False`` error replies
    are returned in their places instead. The same rules as :func:`command`
    otherwise: no retry, a broken or interrupted connection is dropped.

    ``key``: on a Redis Cluster, the commands are for the node serving that
    key's slot, on one connection (``WAIT`` after a script must follow it
    there; a module command the client does not know is sent as it is).
    """
    if key is not None and _is_cluster(client):
        return _on_node(client, cmds, key, operation=operation, raise_errors=raise_errors)
    pool = _direct_pool(client)
    with unavailable_as_ours(client, operation):
        if pool is None:
            pipe = client.pipeline(transaction=False)
            for args in cmds:
                pipe.execute_command(*args)
            return pipe.execute(raise_on_error=raise_errors)
        with _slot(client, pool, _kind(), operation):
            cap = _time_left(client, operation)  # (what the wait for a connection left)
            conn = _checkout(pool, cmds[0][0])
            try:
                conn.send_packed_command(_pack_all(conn, cmds))
                with _read_within(conn, cap):
                    replies = [_reply_or_error(conn.read_response) for _ in cmds]
            except BaseException:
                conn.disconnect()
                raise
            finally:
                pool.release(conn)
        # (within: an error reply that is an outage, e.g. OOM or READONLY, is raised as one)
        return _raise_first_error(replies) if raise_errors else replies


async def acommands(
    client: Any,
    cmds: tuple[tuple[Any, ...], ...],
    *,
    operation: str,
    raise_errors: bool = True,
    key: str | None = None,
) -> list[Any]:
    """:func:`commands` for a ``redis.asyncio`` client."""
    if key is not None and _is_cluster(client):
        return await _aon_node(client, cmds, key, operation=operation, raise_errors=raise_errors)
    pool = _direct_async_pool(client)
    with unavailable_as_ours(client, operation):
        if pool is None:
            pipe = client.pipeline(transaction=False)
            for args in cmds:
                pipe.execute_command(*args)
            return await pipe.execute(raise_on_error=raise_errors)
        async with _aslot(client, pool, _kind(), operation):
            since = _cancels()
            if _until.get() is not None:
                _time_left(client, operation)  # (none left: not sent, no connection made for it)
            conn = await _acheckout(pool)
            try:
                await _aready(conn)
                cap = _time_left(client, operation)  # (what the wait for a connection left)
                replies = await _asend_all(conn, cmds, cap, since)
            except BaseException:
                await conn.disconnect(nowait=True)
                raise
            finally:
                await pool.release(conn)
        # (within: an error reply that is an outage, e.g. OOM or READONLY, is raised as one)
        return _raise_first_error(replies) if raise_errors else replies


async def _aready(conn: Any) -> None:
    """Make sure a pooled asyncio connection is fit to send on: reconnect it if its peer closed it.

    A connection that sat in the pool while Redis closed it (``timeout`` in
    redis.conf, ``CLIENT KILL``, a proxy's idle timeout, a failover) has its
    end of stream already read by the event loop, yet a send on it succeeds
    and only the read fails ("Connection closed by server"): an outage for a
    call that never reached Redis. redis-py's asyncio pool means to check this
    on checkout (``ensure_connection``) but skips the check while maintenance
    notifications are "auto" (its default; the sync pool checks). Nothing was
    sent on this connection yet, so opening a fresh one is safe. Data waiting
    on an idle connection (a reply nobody read) means it is out of step:
    dropped too. A peer that closes between this check and the send is an
    outage as before (the outcome of a sent command is never guessed).
    """
    if getattr(conn, "is_connected", False):
        stale = _unread(conn)
        if not stale:
            check = getattr(conn, "can_read", None) or conn.can_read_destructive
            try:
                stale = await check()
            except (redis.ConnectionError, OSError):  # (can_read already disconnected it)
                stale = True
        if not stale:
            return
        await conn.disconnect(nowait=True)
    try:
        await conn.connect()  # (a failure here sent nothing: a known outcome)
    except _OUTAGES as exc:
        never_sent(exc)
        raise


# -- an operation's time bound ----------------------------------------------------------
#
# A wait bounded by a deadline must end by its deadline plus one socket timeout
# (the round trip under way when it ran out), however many round trips it
# still makes: on a paused server, a blocked read, a last look and the
# unregistering would each wait out a whole socket timeout otherwise. The
# driver sets the bound (``drivers.Within``) for the round trips of one
# operation: each reads for at most what is left of it, and one that starts
# with nothing left is not sent (an outage, ``sent`` False).

_until: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "redcoord_until", default=None
)


class answered_by:  # noqa: N801 - used as a function: ``with answered_by(until):``
    """Bound the round trips made inside: each must be answered by ``until`` (time.monotonic()), or
    fails as a timeout (an outage); None: no bound but the socket timeout.

    (A class, not a generator: every step of every operation enters one.)"""

    __slots__ = ("until", "token")

    def __init__(self, until: float | None) -> None:
        self.until = until

    def __enter__(self) -> None:
        self.token = _until.set(self.until)

    def __exit__(self, *exc: object) -> None:
        _until.reset(self.token)


def _time_left(client: Any, operation: str) -> float | None:
    """Seconds a round trip may take under :func:`answered_by` (None: no bound); raises
    CoordinationUnavailable (nothing sent) when none is left."""
    until = _until.get()
    if until is None:
        return None
    left = until - time.monotonic()
    if left <= 0.001:
        raise out_of_time(client, operation)
    return left


def out_of_time(client: Any, operation: str) -> CoordinationUnavailable:
    """The outage of a round trip not sent because its wait's bound ran out (see
    :func:`answered_by`)."""
    server = describe(client)
    return CoordinationUnavailable(
        f"Redis at {server} did not answer in time during {operation}: the wait's time ran out "
        "(its deadline and one socket timeout, the server did not answer), so this round trip was "
        "not sent",
        server=server,
        operation=operation,
        sent=False,
    )


async def _aread(conn: Any, cap: float | None) -> Any:
    """Read an asyncio connection's reply within ``cap`` seconds (None: its socket timeout)."""
    timeout = getattr(conn, "socket_timeout", None)
    if cap is None or (timeout is not None and timeout <= cap):
        return await conn.read_response()
    try:  # (not read_response(timeout=...): that returns None when the time runs out)
        return await asyncio.wait_for(conn.read_response(), cap)
    except asyncio.TimeoutError:
        raise redis.TimeoutError(
            f"Timeout reading from {conn.host}:{conn.port} (the wait's time ran out)"
        ) from None


@contextlib.contextmanager
def _read_within(conn: Any, cap: float | None) -> Iterator[None]:
    """Read a sync connection's replies within ``cap`` seconds (None: its socket timeout)."""
    sock = getattr(conn, "_sock", None)
    timeout = getattr(conn, "socket_timeout", None)
    if cap is None or sock is None or (timeout is not None and timeout <= cap):
        yield
        return
    sock.settimeout(cap)
    try:
        yield
    finally:
        sock = getattr(conn, "_sock", None)
        if sock is not None:  # (None: disconnected on a failure)
            with contextlib.suppress(OSError):
                sock.settimeout(timeout)


def _unread(conn: Any) -> bool:
    """True when an idle asyncio connection's socket has something the event loop has not read yet
    (its peer's close, most often: a ``CLIENT KILL`` made just before, while the loop was busy).

    A non-blocking ``poll`` of the socket, no read. TLS connections are left to
    ``can_read`` (a TLS socket may be readable with no reply in it).
    """
    transport = getattr(getattr(conn, "_writer", None), "transport", None)
    if transport is None:
        return False
    if transport.is_closing():
        return True
    if _poll is None or transport.get_extra_info("ssl_object") is not None:
        return False
    sock = transport.get_extra_info("socket")
    try:
        poller = _poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


_poll = getattr(select, "poll", None)


async def _asend_all(
    conn: Any, cmds: tuple[tuple[Any, ...], ...], cap: float | None = None, since: int | None = None
) -> list[Any]:
    """Send ``cmds`` on an asyncio connection and read every reply (error replies in their places),
    each read within ``cap`` seconds (None: the socket timeout). ``since``: the task's
    cancellations before the call began (see :func:`_deliver_swallowed_cancel`)."""
    since = _cancels() if since is None else since
    await conn.send_packed_command(_pack_all(conn, cmds))
    _deliver_swallowed_cancel(since)
    replies: list[Any] = []
    for _ in cmds:
        try:
            replies.append(await _aread(conn, cap))
        except redis.exceptions.ResponseError as exc:
            replies.append(exc)
    return replies


def _cancels() -> int:
    """How many cancellations of the current task were requested and not withdrawn (Python 3.11+;
    0 before)."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None and hasattr(task, "cancelling") else 0


def _deliver_swallowed_cancel(since: int) -> None:
    """Raise the task's cancellation if one arrived since ``since`` and nothing raised it.

    redis-py sends with ``asyncio.wait_for(..., socket_timeout)`` (and connects
    the same way); on Python 3.11 a cancellation that arrives as the send
    completes is swallowed there: the send returns normally. The read after it
    would then wait out the whole reply (a BLPOP: its whole block, up to the
    socket timeout) before anyone notices the task was cancelled. Raised
    here, after the send, the caller disconnects the connection (the reply is
    never read) and the operation gives back what it took at once.
    """
    if _cancels() > since:
        raise asyncio.CancelledError


def _is_cluster(client: Any) -> bool:
    return type(client).__name__ == "RedisCluster"


def _routing_key(args: tuple[Any, ...]) -> Any:
    """The key a script run or a BLPOP is for (its slot's node runs it), or None: other commands
    go through redis-py's own routing."""
    name = args[0]
    if name in ("EVALSHA", "EVAL"):
        return args[3] if len(args) > 3 and int(args[2]) > 0 else None
    if name == "BLPOP":
        return args[1]
    if name == "XREAD" and "STREAMS" in args:  # a broadcast wait (holds/waits.py): one stream
        return args[args.index("STREAMS") + 1]
    return None


#: Seconds between the tries of a call that a Cluster slot in migration refused (``TRYAGAIN``: some
#: of its keys moved, some not yet; nothing ran). A resharding moves a slot's keys in milliseconds,
#: so the call is tried again for about a second before it is an outage (with ``sent=False``).
TRYAGAIN_PAUSES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.3)

#: Commands that change nothing: a batch whose other commands are these may be sent again whole.
_HARMLESS = frozenset({"ASKING", "WAIT", "PING"})


def _refused_for_now(cmds: tuple[tuple[Any, ...], ...], replies: list[Any]) -> bool:
    """True when a command of the batch was refused with ``TRYAGAIN`` and every other one changed
    nothing (so the whole batch may be sent again: nothing of it ran)."""
    refused = False
    for cmd, reply in zip(cmds, replies, strict=False):
        if isinstance(reply, redis.exceptions.TryAgainError) or (
            isinstance(reply, redis.exceptions.ResponseError) and str(reply).startswith("TRYAGAIN")
        ):
            refused = True
        elif str(cmd[0]).upper() not in _HARMLESS:
            return False
    return refused


def _refusal(reply: Any) -> bool:
    """True for a reply refusing a command of a Cluster batch as a whole (it did not run):
    ``MOVED``, ``ASK`` or ``TRYAGAIN``."""
    return isinstance(reply, (redis.exceptions.AskError, redis.exceptions.TryAgainError)) or (
        isinstance(reply, redis.exceptions.ResponseError) and str(reply).startswith("TRYAGAIN")
    )


def _still_redirected(
    client: Any, cmds: tuple[tuple[Any, ...], ...], replies: list[Any], operation: str
) -> None:
    """Raise an outage when a command of the batch was redirected again where ``MOVED`` or
    ``ASK`` sent it (the slot moved once more meanwhile): a raw ``MovedError``/``AskError`` is
    never the caller's to judge, even with ``raise_errors=False``. ``sent`` is False only when no
    command of the batch ran (each was refused, or changes nothing)."""
    left = next((r for r in replies if isinstance(r, redis.exceptions.AskError)), None)
    if left is None:
        return
    server = describe(client)
    raise CoordinationUnavailable(
        f"Redis at {server} kept redirecting the command during {operation}: the slot moved "
        f"again while it was followed ({type(left).__name__}: {left}); try again",
        server=server,
        operation=operation,
        sent=not all(
            _refusal(reply) or str(cmd[0]).upper() in _HARMLESS
            for cmd, reply in zip(cmds, replies, strict=True)
        ),
    ) from left


def _moved(replies: list[Any]) -> bool:
    """True when the slot's commands were refused as served elsewhere (they did not run)."""
    return any(isinstance(r, redis.exceptions.MovedError) for r in replies)


def _asked(
    client: Any, replies: list[Any], cmds: tuple[tuple[Any, ...], ...], operation: str
) -> list[Any]:
    """A slot being migrated (resharding): the keys not moved yet answered here; the others
    ``ASK`` us to send the commands, each after ``ASKING``, to the importing node."""
    ask = next((r for r in replies if isinstance(r, redis.exceptions.AskError)), None)
    if ask is None:
        return replies
    node = client.get_node(host=ask.host, port=ask.port)
    if node is None:  # a node the slot map does not know yet: read it again, and call again later
        client.nodes_manager.initialize()
        raise CoordinationUnavailable(
            f"{operation}: the slot is moving to {ask.host}:{ask.port}, not known yet; try again",
            server=f"{ask.host}:{ask.port}",
            operation=operation,
            sent=False,
        )
    target = client.get_redis_connection(node)
    again = tuple(c for cmd in cmds for c in (("ASKING",), cmd))
    answered = commands(target, again, operation=operation, raise_errors=False)[1::2]
    return [
        a if isinstance(r, redis.exceptions.AskError) else r
        for r, a in zip(replies, answered, strict=True)
    ]


def _on_node(
    client: Any, cmds: tuple[tuple[Any, ...], ...], key: str, *, operation: str, raise_errors: bool
) -> list[Any]:
    """:func:`commands` on the Cluster node serving ``key``'s slot (again once, on the new one,
    after MOVED)."""
    from ..keys import key_slot

    with unavailable_as_ours(client, operation):
        for pause in (*TRYAGAIN_PAUSES, None):
            for attempt in (1, 2):
                node = client.nodes_manager.get_node_from_slot(key_slot(key))
                server = client.get_redis_connection(node)
                try:
                    replies = commands(server, cmds, operation=operation, raise_errors=False)
                except CoordinationUnavailable:
                    # a failover may have moved the slot: the next call asks
                    client.nodes_manager.initialize()
                    raise
                if not _moved(replies) or attempt == 2:
                    break
                client.nodes_manager.initialize()
            replies = _asked(client, replies, cmds, operation)
            if pause is None or not _refused_for_now(cmds, replies):
                break
            time.sleep(pause)
        _still_redirected(client, cmds, replies, operation)
        return (
            _raise_first_error(replies) if raise_errors else replies
        )  # TRYAGAIN, CLUSTERDOWN...: an outage


async def _aon_node(
    client: Any, cmds: tuple[tuple[Any, ...], ...], key: str, *, operation: str, raise_errors: bool
) -> list[Any]:
    """:func:`_on_node` for a ``redis.asyncio`` Cluster client."""
    from ..keys import key_slot

    with unavailable_as_ours(client, operation):
        await client.initialize()  # the slot map is read on first use (a no-op later)
        for pause in (*TRYAGAIN_PAUSES, None):
            for attempt in (1, 2):
                node = client.nodes_manager.get_node_from_slot(key_slot(key))
                replies = await _aon(client, node, cmds, operation)
                if not _moved(replies) or attempt == 2:
                    break
                await client.nodes_manager.initialize()
            replies = await _aasked(client, replies, cmds, operation)
            if pause is None or not _refused_for_now(cmds, replies):
                break
            await asyncio.sleep(pause)
        _still_redirected(client, cmds, replies, operation)
        return (
            _raise_first_error(replies) if raise_errors else replies
        )  # TRYAGAIN, CLUSTERDOWN...: an outage


async def _aon(
    client: Any, node: Any, cmds: tuple[tuple[Any, ...], ...], operation: str
) -> list[Any]:
    """The commands on one node of a ``redis.asyncio`` Cluster client, in one round trip."""
    cap = _time_left(client, operation)
    conn = node.acquire_connection()
    try:
        await _aready(conn)
        return await _asend_all(conn, cmds, cap)
    except BaseException as exc:
        await conn.disconnect(nowait=True)
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError)):
            await client.nodes_manager.initialize()
        raise
    finally:
        node.release(conn)


async def _aasked(
    client: Any, replies: list[Any], cmds: tuple[tuple[Any, ...], ...], operation: str
) -> list[Any]:
    """:func:`_asked` for a ``redis.asyncio`` Cluster client: the same rules, so a slot in
    migration is followed by ``ASKING`` on both drivers (``tests/core/transport/
    test_cluster_parity.py``)."""
    ask = next((r for r in replies if isinstance(r, redis.exceptions.AskError)), None)
    if ask is None:
        return replies
    node = client.get_node(host=ask.host, port=ask.port)
    if node is None:  # a node the slot map does not know yet: read it again, and call again later
        await client.nodes_manager.initialize()
        raise CoordinationUnavailable(
            f"{operation}: the slot is moving to {ask.host}:{ask.port}, not known yet; try again",
            server=f"{ask.host}:{ask.port}",
            operation=operation,
            sent=False,
        )
    again = tuple(c for cmd in cmds for c in (("ASKING",), cmd))
    answered = (await _aon(client, node, again, operation))[1::2]
    return [
        a if isinstance(r, redis.exceptions.AskError) else r
        for r, a in zip(replies, answered, strict=True)
    ]


def _pack_all(conn: Any, cmds: tuple[tuple[Any, ...], ...]) -> Any:
    """The commands packed for one ``send_packed_command``: one buffer, so one system call
    (redis-py's connection sends each item of the list with its own ``sendall``)."""
    if _pack is not None and _utf8(conn):
        plain = [_plain(args) for args in cmds]
        if None not in plain:
            return [b"".join([_pack(args) for args in plain])]  # type: ignore[arg-type]
    return conn.pack_commands(cmds)


def _reply_or_error(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except redis.exceptions.ResponseError as exc:  # an error reply: the stream is in step
        return exc


def _raise_first_error(replies: list[Any]) -> list[Any]:
    for reply in replies:
        if isinstance(reply, redis.exceptions.ResponseError):
            raise reply
    return replies


def _direct_async_pool(client: Any) -> Any:
    if not isinstance(client, AsyncRedis) or getattr(client, "connection", None) is not None:
        return None
    pool = getattr(client, "connection_pool", None)
    if pool is None or not hasattr(pool, "get_connection") or not hasattr(pool, "release"):
        return None
    return pool


def _plain(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``args`` for hiredis's packer when they are only str, bytes and int (packed the same by it
    as by the client's encoder), else None: each int given as its decimal text. (hiredis 3.5
    turns an int into text by a call back into Python, where a signal handler may run: one that
    raised, a KeyboardInterrupt, a soft time limit, gunicorn's SystemExit, crashed the process
    with a segmentation fault.)"""
    ints = False
    for arg in args:
        kind = type(arg)
        if kind is int:
            ints = True
        elif kind is not str and kind is not bytes:
            return None
    return tuple(str(a) if type(a) is int else a for a in args) if ints else args


def _utf8(conn: Any) -> bool:
    encoder = getattr(conn, "encoder", None)
    return (
        encoder is not None
        and encoder.encoding in ("utf-8", "utf8")
        and encoder.encoding_errors == "strict"
    )


@functools.lru_cache(maxsize=64)
def _class_socket_timeout(connection_class: type) -> float | None:
    """The socket timeout a connection class uses when none is passed (redis-py 6+: 5 s; before:
    None)."""
    for klass in connection_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameter = inspect.signature(init).parameters.get("socket_timeout")
        except (TypeError, ValueError):
            continue
        if parameter is not None and parameter.default is not inspect.Parameter.empty:
            return parameter.default
    return None


def socket_timeout(client_or_pool: Any) -> float | None:
    """The socket timeout ``client_or_pool``'s connections really read with (None: none, they
    wait forever).

    A client built without one (``Redis.from_url(url)``) has no ``socket_timeout`` among its
    pool's connection kwargs, yet its connections get their class's default (5 s in redis-py
    6 and later): that default is the one that counts, not "none".
    """
    holder = (
        getattr(client_or_pool, "connection_pool", None)
        or getattr(client_or_pool, "nodes_manager", None)
        or client_or_pool
    )
    kwargs = getattr(holder, "connection_kwargs", None)
    if kwargs is None:
        return None
    if "socket_timeout" in kwargs:
        return kwargs["socket_timeout"]
    connection_class = kwargs.get("connection_class") or getattr(holder, "connection_class", None)
    if connection_class is None:  # a Cluster's nodes: redis.cluster builds plain connections
        connection_class = (
            redis.asyncio.Connection
            if isinstance(client_or_pool, redis.asyncio.RedisCluster)
            else redis.Connection
        )
    return _class_socket_timeout(connection_class)


def max_block(client: Any) -> float:
    """Longest a blocking command may block on ``client``: below its socket timeout.

    A BLPOP that outlasts the socket timeout would fail as a timeout though
    the server is fine; blocking calls are made in chunks of at most this.
    """
    timeout = socket_timeout(client)
    if not timeout:
        return MAX_BLOCK
    return max(0.005, min(MAX_BLOCK, timeout - 0.5 if timeout > 1.0 else timeout / 2))


def blpop(client: Any, keys: list[str], timeout: float, *, operation: str) -> Any:
    """BLPOP ``keys`` for at most ``timeout`` seconds (capped by :func:`max_block`).

    Returns ``[key, value]`` or None. BLPOP's 0 means "forever": never sent.
    When the pool's connections that may block are all blocking, the call
    waits for one within the same ``timeout`` and returns None (a wait that
    timed out: callers re-check) if none came free.
    """
    block = max(MIN_BLOCK, min(timeout, max_block(client)))
    return _blocking_call(client, ("BLPOP", *keys), block, (f"{block:.3f}",), operation)


async def ablpop(client: Any, keys: list[str], timeout: float, *, operation: str) -> Any:
    """:func:`blpop` for a ``redis.asyncio`` client."""
    block = max(MIN_BLOCK, min(timeout, max_block(client)))
    return await _ablocking_call(client, ("BLPOP", *keys), block, (f"{block:.3f}",), operation)


def blocking(client: Any, *args: Any, operation: str) -> Any:
    """A blocking command other than BLPOP (``XREADGROUP ... BLOCK ms``, ``BLMOVE ... seconds``),
    counted
    like a wait (see :func:`blpop`); the caller keeps its block below :func:`max_block`."""
    return _blocking_call(client, args, _block_of(client, args), (), operation)


async def ablocking(client: Any, *args: Any, operation: str) -> Any:
    """:func:`blocking` for a ``redis.asyncio`` client."""
    return await _ablocking_call(client, args, _block_of(client, args), (), operation)


def _block_of(client: Any, args: tuple[Any, ...]) -> float:
    """How long a blocking command blocks (seconds): its BLOCK ms, or its last argument in
    seconds."""
    try:
        words = [as_text(a).upper() if isinstance(a, (str, bytes)) else a for a in args]
        if "BLOCK" in words:
            return float(args[words.index("BLOCK") + 1]) / 1000.0
        return float(as_text(args[-1]))
    except (ValueError, IndexError, UnicodeDecodeError):
        return max_block(client)


def _blocking_call(
    client: Any, args: tuple[Any, ...], block: float, tail: tuple[Any, ...], operation: str
) -> Any:
    pool = _direct_pool(client)
    if pool is None:
        return command(client, *args, *tail, operation=operation)
    started = time.monotonic()
    with (
        unavailable_as_ours(client, operation),
        _slot(client, pool, WAITING, operation, block) as admitted,
    ):
        if not admitted:
            return None  # no connection came free for the wait within it: a wait that timed out
        if tail and time.monotonic() - started > 0.001:  # (BLPOP) only what is left of the wait
            tail = (f"{max(MIN_BLOCK, block - (time.monotonic() - started)):.3f}",)
        return _send(client, pool, (*args, *tail), operation)


async def _ablocking_call(
    client: Any, args: tuple[Any, ...], block: float, tail: tuple[Any, ...], operation: str
) -> Any:
    pool = _direct_async_pool(client)
    if pool is None:
        return await acommand(client, *args, *tail, operation=operation)
    started = time.monotonic()
    with unavailable_as_ours(client, operation):
        async with _aslot(client, pool, WAITING, operation, block) as admitted:
            if not admitted:
                return None
            if tail and time.monotonic() - started > 0.001:
                tail = (f"{max(MIN_BLOCK, block - (time.monotonic() - started)):.3f}",)
            return await _asend(client, pool, (*args, *tail), operation)


# -- the pool's shares ------------------------------------------------------------------
#
# Every checkout through this module is counted against the client's pool, by
# kind: a call that ends waits (a release, a hand-off, a waiter giving up its
# place: see :func:`ending_waits`) may use every connection; any other call
# (a waiter queueing, a re-check, an enqueue, a read) leaves ``reserve`` of
# them free for those; a blocking wait (BLPOP, XREADGROUP BLOCK) leaves
# ``reserve`` more, so the quick calls of waiters that do not block (a queue
# place kept by its re-checks) still get through. A call the pool cannot admit
# now waits for a connection to come free, in order: a quick call for at most
# the socket timeout, then PoolExhausted (the pool is too small; never an
# outage); a blocking wait for at most its own block, then it returns as a wait
# that timed out (its caller re-checks, as after any wait).
#
# The waiters of holds, latches, barriers, events and signals block through
# their process's wake hub (hub.py): one blocking checkout per hub, however
# many wait. The share for blocking calls bounds the others: workers' idle
# BLPOPs, topic reads, an election's wait, and the waits on a client the hub
# cannot serve.
#
#   300 lock waiters, max_connections=100: at most 4 connections block (the
#   hub's BLPOPs); the waiters' queueing and re-checks share 86 more, 10 are
#   kept for releases.

ORDINARY, ENDING, WAITING = "ordinary", "ending", "waiting"
#: A wait that finds the connections for waits all taken sleeps at most this long (seconds) before
#: it returns as timed out and its caller looks again (what it waits for may have come meanwhile).
SLEEPER_LOOK = 0.25


def _sleep_limit(pool: Any, kind: str, timeout: float | None) -> float:
    """How long a call the pool cannot admit now waits for a connection: a wait at most
    ``SLEEPER_LOOK`` (then it returns as timed out), any other call its ``timeout`` or the socket
    timeout; never past the bound of :func:`answered_by` (the round trip that follows counts in
    it too)."""
    if timeout is None:
        limit = _call_timeout(pool)
    else:
        limit = min(timeout, SLEEPER_LOOK) if kind == WAITING else timeout
    until = _until.get()
    return limit if until is None else max(0.0, min(limit, until - time.monotonic()))


_ending: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "redcoord_ending_waits", default=False
)


class ending_waits:  # noqa: N801 - used as a function: ``with ending_waits():``
    """Mark the calls made inside as ending waits: they may use the pool's reserved share.

    For a release, a hand-off, a waiter giving up its place: the calls that
    serve the waiters, which must never find the pool taken by them. Works
    for threads and asyncio tasks alike (a context variable). (A class, not a
    generator: every release enters one.)
    """

    __slots__ = ("token",)

    def __enter__(self) -> None:
        self.token = _ending.set(True)

    def __exit__(self, *exc: object) -> None:
        _ending.reset(self.token)


def reserve(max_connections: int) -> int:
    """Connections of a pool kept for the calls that end waits: a tenth, 2 to 16."""
    return min(16, max(2, max_connections // 10))


def waiting_limit(max_connections: int) -> int:
    """Connections of a pool of ``max_connections`` that may block in a wait at once.

    Two :func:`reserve` shares are kept from the waits: one for the calls
    that end waits (a release, a hand-off, a waiter giving up its place), one
    for the quick calls of everyone else (a waiter queueing or keeping its
    place). Without them, waiters holding every connection would make the
    releases that serve them fail.
    """
    return max(1, max_connections - 2 * reserve(max_connections))


class _Sleeper:
    """A call waiting for its share of the pool; ``granted`` once a connection was counted for
    it, ``gone`` once it stopped waiting without one; ``seq``: its place in the order of
    arrival."""

    __slots__ = ("kind", "granted", "gone", "wake", "seq")

    def __init__(self, kind: str, wake: Callable[[], None]) -> None:
        self.kind, self.granted, self.gone, self.wake, self.seq = kind, False, False, wake, 0


class _Share:
    """Our checkouts of one pool, by kind, and the calls waiting for one: a FIFO line per kind.

    A line is a deque whose sleepers that stopped waiting are skipped when
    they reach its head, so each admission is O(1) however many wait (10,000
    coroutines queueing for 100 connections made a scan of every sleeper at
    every checkout given back: quadratic).
    """

    __slots__ = (
        "pid",
        "lock",
        "limit",
        "ordinary_limit",
        "waiting_limit",
        "total",
        "ordinary",
        "waits",
        "lines",
        "arrivals",
        "sleeping",
    )

    def __init__(self, limit: int) -> None:
        self.pid, self.lock, self.limit = os.getpid(), threading.Lock(), limit
        self.ordinary_limit = max(1, limit - reserve(limit))
        self.waiting_limit = waiting_limit(limit)
        self.total = self.ordinary = self.waits = 0
        self.lines: dict[str, collections.deque[_Sleeper]] = {
            ENDING: collections.deque(),
            ORDINARY: collections.deque(),
            WAITING: collections.deque(),
        }
        self.arrivals = 0
        self.sleeping = 0  # sleepers neither granted nor gone

    @property
    def sleepers(self) -> list[_Sleeper]:
        """The calls waiting for a connection, in order of arrival."""
        with self.lock:
            alive = [s for line in self.lines.values() for s in line if not s.gone]
        return sorted(alive, key=lambda s: s.seq)

    def _admits(self, kind: str) -> bool:
        if self.total >= self.limit:
            return False
        if kind == ENDING:
            return True
        if self.ordinary >= self.ordinary_limit:
            return False
        return kind != WAITING or self.waits < self.waiting_limit

    def _take(self, kind: str) -> None:
        self.total += 1
        if kind != ENDING:
            self.ordinary += 1
            if kind == WAITING:
                self.waits += 1

    def try_take(self, kind: str, sleeper: _Sleeper | None = None) -> bool:
        """Count a checkout of ``kind`` if the pool admits it now, else queue ``sleeper`` (if any).

        (A call of a kind the pool admits never finds an earlier one of its
        kind waiting: every checkout given back admits the waiting calls first.)
        """
        with self.lock:
            if self._admits(kind):
                self._take(kind)
                return True
            if sleeper is not None:
                self.arrivals += 1
                sleeper.seq = self.arrivals
                self.lines[kind].append(sleeper)
                self.sleeping += 1
            return False

    def give(self, kind: str) -> None:
        """A checkout of ``kind`` is back: hand the connection to the calls waiting that the pool
        now admits."""
        with self.lock:
            self.total -= 1
            if kind != ENDING:
                self.ordinary -= 1
                if kind == WAITING:
                    self.waits -= 1
            woken = self._admit_sleepers() if self.sleeping else []
        _wake(self, woken)

    def _head(self, kind: str) -> _Sleeper | None:
        line = self.lines[kind]
        while line and line[0].gone:
            line.popleft()
        return line[0] if line else None

    def _grant(self, sleeper: _Sleeper) -> None:
        self.lines[sleeper.kind].popleft()
        self._take(sleeper.kind)
        sleeper.granted = True
        self._forget(sleeper)

    def _forget(self, sleeper: _Sleeper) -> None:
        self.sleeping -= 1

    def _admit_sleepers(self) -> list[_Sleeper]:
        woken: list[_Sleeper] = []
        # the calls that end waits first, then everyone else in order of arrival
        while self.total < self.limit:
            head = self._head(ENDING)
            if head is None:
                break
            self._grant(head)
            woken.append(head)
        while True:
            heads = [
                head
                for head in (self._head(ORDINARY), self._head(WAITING))
                if head is not None and self._admits(head.kind)
            ]
            if not heads:
                return woken
            head = min(heads, key=lambda s: s.seq)
            self._grant(head)
            woken.append(head)

    def leave(self, sleeper: _Sleeper) -> bool:
        """A call stops waiting (timed out, cancelled): True when a connection was counted for it
        meanwhile."""
        with self.lock:
            if sleeper.granted:
                return True
            if not sleeper.gone and sleeper.seq:
                sleeper.gone = True
                self._forget(sleeper)
            return False


def _wake(share: _Share, woken: list[_Sleeper]) -> None:
    for sleeper in woken:
        try:
            sleeper.wake()
        except (
            RuntimeError
        ):  # its event loop is closed: nobody will use the connection counted for it
            share.give(sleeper.kind)


_shares: weakref.WeakKeyDictionary[Any, _Share] = weakref.WeakKeyDictionary()
_shares_lock = threading.Lock()


def _share(pool: Any) -> _Share | None:
    """The share count of ``pool``, or None when it has no bound worth counting against."""
    limit = getattr(pool, "max_connections", None)
    if pool is None or not isinstance(limit, int) or limit >= 2**30:
        return None
    with _shares_lock:
        state = _shares.get(pool)
        if (
            state is None or state.pid != os.getpid() or state.limit != limit
        ):  # a forked child counts its own
            state = _shares[pool] = _Share(limit)
        return state


def _call_timeout(pool: Any) -> float:
    """How long a quick call may wait for a connection: as long as one may take to answer."""
    timeout = socket_timeout(pool)
    return float(timeout) if timeout else 5.0


def _kind() -> str:
    return ENDING if _ending.get() else ORDINARY


def _exhausted(
    client: Any, share: _Share, kind: str, waited: float, operation: str
) -> PoolExhausted:
    server = describe(client)
    kept = "" if kind == ENDING else f" ({share.limit - share.ordinary_limit} kept for releases)"
    if waited < 0.001:  # (a wait's bound had run out: no time left to wait for one)
        message = (
            f"{operation}: not sent: the wait's time had run out and all {share.limit} "
            f"connections of the pool to {server} (max_connections{kept}) were in calls still "
            "waiting for Redis (a paused or slow server)"
        )
    else:
        message = (
            f"{operation}: no connection of the pool to {server} came free within {waited:g} s: "
            f"all {share.limit} (max_connections{kept}) stayed in use by calls still waiting for "
            "Redis (the pool is too small for this process, or Redis is slow to answer). Raise "
            "REDCOORD['MAX_CONNECTIONS'] or pass a client whose pool is larger"
        )
    return PoolExhausted(
        message,
        max_connections=share.limit,
        server=server,
        operation=operation,
    )


@contextlib.contextmanager
def _slot(
    client: Any,
    pool: Any,
    kind: str,
    operation: str,
    timeout: float | None = None,
) -> Iterator[bool]:
    """Hold a connection's worth of ``pool`` for one call of ``kind`` (see above); yields False
    when a
    wait's own ``timeout`` ran out first (nothing was sent)."""
    share = _share(pool)
    if share is None:
        yield True
        return
    if not share.try_take(kind):
        event = threading.Event()
        sleeper = _Sleeper(kind, event.set)
        if not share.try_take(kind, sleeper):
            limit = _sleep_limit(pool, kind, timeout)
            try:
                event.wait(limit)
            except (
                BaseException
            ):  # interrupted: a connection counted for us meanwhile goes to the next
                if share.leave(sleeper):
                    share.give(kind)
                raise
            if not share.leave(sleeper):
                if kind == WAITING:
                    yield False
                    return
                raise _exhausted(client, share, kind, limit, operation)
    try:
        yield True
    finally:
        share.give(kind)


@contextlib.asynccontextmanager
async def _aslot(
    client: Any,
    pool: Any,
    kind: str,
    operation: str,
    timeout: float | None = None,
) -> AsyncIterator[bool]:
    """:func:`_slot` for an asyncio pool: the task waits on the loop, never blocking it."""
    share = _share(pool)
    if share is None:
        yield True
        return
    if not share.try_take(kind):
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, future)

        sleeper = _Sleeper(kind, wake)
        if not share.try_take(kind, sleeper):
            limit = _sleep_limit(pool, kind, timeout)
            try:
                await asyncio.wait_for(future, limit)
            except asyncio.TimeoutError:
                pass
            except (
                BaseException
            ):  # cancelled: a connection counted for us meanwhile goes to the next
                if share.leave(sleeper):
                    share.give(kind)
                raise
            if not share.leave(sleeper):
                if kind == WAITING:
                    yield False
                    return
                raise _exhausted(client, share, kind, limit, operation)
    try:
        yield True
    finally:
        share.give(kind)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def execute_pipeline(client: Any, build: Callable[[Any], object], *, operation: str) -> list[Any]:
    """Run the commands ``build(pipe)`` queues in one round trip.

    If the server does not know a script yet, its EVALSHAs failed without
    running while the other commands ran: we load the scripts the pipeline
    used (those added with :meth:`Script.queue`) and send it all once more.
    So use it only for commands that are safe to repeat (pushes of fresh
    messages under one script, reads, heartbeats, result records) — never to
    pair a claim with other writes.
    """
    with unavailable_as_ours(client, operation):
        for attempt in (1, 2):
            pipe = client.pipeline(transaction=False)
            build(pipe)
            try:
                with _slot(client, _direct_pool(client), _kind(), operation):
                    return pipe.execute()
            except redis.exceptions.NoScriptError:
                if attempt == 2:
                    raise
                for script in getattr(pipe, "redcoord_scripts", ()):
                    client.script_load(script.source)
    raise AssertionError("unreachable")  # pragma: no cover


async def aexecute_pipeline(
    client: Any, build: Callable[[Any], object], *, operation: str
) -> list[Any]:
    """:func:`execute_pipeline` for a ``redis.asyncio`` client: the same rules, awaited."""
    with unavailable_as_ours(client, operation):
        for attempt in (1, 2):
            pipe = client.pipeline(transaction=False)
            build(pipe)
            try:
                async with _aslot(client, _direct_async_pool(client), _kind(), operation):
                    return await pipe.execute()
            except redis.exceptions.NoScriptError:
                if attempt == 2:
                    raise
                for script in getattr(pipe, "redcoord_scripts", ()):
                    await client.script_load(script.source)
    raise AssertionError("unreachable")  # pragma: no cover
