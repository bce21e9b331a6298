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

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from ..exceptions import CoordinationUnavailable
from .errors import describe, unavailable_as_ours


def as_text(value: Any) -> str:
    """A reply as str, whether or not the client decodes responses (``decode_responses``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def as_bytes(value: Any) -> bytes:
    """A reply as bytes, whether or not the client decodes responses."""
    return value if isinstance(value, bytes) else str(value).encode()


try:  # the C packer: most of the client's own time per command is packing
    from hiredis import pack_command as _pack
except ImportError:  # pragma: no cover - hiredis is an optional extra
    _pack = None


#: Longest single blocking call (BLPOP) in seconds, whatever the socket timeout.
MAX_BLOCK = 10.0


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


def _checkout(pool: Any, command_name: str) -> Any:
    if _sentinel_due(pool):
        try:
            pool.get_master_address()
        except Exception:  # the sentinels cannot say now: keep the connections we have
            pool._redcoord_next_check = time.monotonic() + SENTINEL_BACKOFF
    try:
        return pool.get_connection()
    except TypeError:  # redis-py 5 requires the command name
        return pool.get_connection(command_name)


async def _acheckout(pool: Any) -> Any:
    if _sentinel_due(pool):
        try:
            await pool.get_master_address()
        except Exception:  # the sentinels cannot say now: keep the connections we have
            pool._redcoord_next_check = time.monotonic() + SENTINEL_BACKOFF
    return await pool.get_connection()


def command(client: Any, *args: Any, operation: str) -> Any:
    """Send one command and return its reply (one round trip, never retried).

    Raises CoordinationUnavailable when Redis cannot be reached, does not
    answer within the socket timeout, or refuses for a passing reason
    (loading, read-only replica, failover); ResponseError for other error
    replies.
    """
    pool = _direct_pool(client)
    if pool is None and _is_cluster(client):
        key = _routing_key(args)
        if key is not None:  # straight to the slot's node: no per-call slot work of redis-py's
            return _on_node(client, (args,), key, operation=operation, raise_errors=True)[0]
    with unavailable_as_ours(client, operation):
        if pool is None:
            return client.execute_command(*args)
        conn = _checkout(pool, args[0])
        try:
            if _pack is not None and _plain(args) and _utf8(conn):
                conn.send_packed_command((_pack(args),))
            else:
                conn.send_command(*args)
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
            return (await _aon_node(client, (args,), key, operation=operation, raise_errors=True))[0]
    with unavailable_as_ours(client, operation):
        if pool is None:
            return await client.execute_command(*args)
        conn = await _acheckout(pool)
        try:
            if _pack is not None and _plain(args) and _utf8(conn):
                await conn.send_packed_command((_pack(args),))
            else:
                await conn.send_command(*args)
            return await conn.read_response()
        except redis.exceptions.ResponseError:
            raise
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await pool.release(conn)


def commands(
    client: Any, cmds: tuple[tuple[Any, ...], ...], *, operation: str, raise_errors: bool = True,
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
        conn = _checkout(pool, cmds[0][0])
        try:
            conn.send_packed_command(_pack_all(conn, cmds))
            replies = [_reply_or_error(conn.read_response) for _ in cmds]
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)
    return _raise_first_error(replies) if raise_errors else replies


async def acommands(
    client: Any, cmds: tuple[tuple[Any, ...], ...], *, operation: str, raise_errors: bool = True,
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
        conn = await _acheckout(pool)
        try:
            replies = await _asend_all(conn, cmds)
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await pool.release(conn)
    return _raise_first_error(replies) if raise_errors else replies


async def _asend_all(conn: Any, cmds: tuple[tuple[Any, ...], ...]) -> list[Any]:
    """Send ``cmds`` on an asyncio connection and read every reply (error replies in their places)."""
    await conn.send_packed_command(_pack_all(conn, cmds))
    replies: list[Any] = []
    for _ in cmds:
        try:
            replies.append(await conn.read_response())
        except redis.exceptions.ResponseError as exc:
            replies.append(exc)
    return replies


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
    return None


def _moved(replies: list[Any]) -> bool:
    """True when the slot's commands were refused as served elsewhere (they did not run)."""
    return any(isinstance(r, redis.exceptions.MovedError) for r in replies)


def _asked(client: Any, replies: list[Any], cmds: tuple[tuple[Any, ...], ...], operation: str) -> list[Any]:
    """A slot being migrated (resharding): the keys not moved yet answered here; the others
    ``ASK`` us to send the commands, each after ``ASKING``, to the importing node."""
    ask = next((r for r in replies if isinstance(r, redis.exceptions.AskError)), None)
    if ask is None:
        return replies
    node = client.get_node(host=ask.host, port=ask.port)
    if node is None:  # a node the slot map does not know yet: read it again, and call again later
        client.nodes_manager.initialize()
        raise CoordinationUnavailable(f"{operation}: the slot is moving to {ask.host}:{ask.port}, not known yet; try again",
                                      server=f"{ask.host}:{ask.port}", operation=operation, sent=False)  # fmt: skip
    target = client.get_redis_connection(node)
    again = tuple(c for cmd in cmds for c in (("ASKING",), cmd))
    answered = commands(target, again, operation=operation, raise_errors=False)[1::2]
    return [a if isinstance(r, redis.exceptions.AskError) else r for r, a in zip(replies, answered, strict=True)]


def _on_node(client: Any, cmds: tuple[tuple[Any, ...], ...], key: str, *, operation: str, raise_errors: bool) -> list[Any]:
    """:func:`commands` on the Cluster node serving ``key``'s slot (again once, on the new one, after MOVED)."""
    from ..keys import key_slot

    with unavailable_as_ours(client, operation):
        for attempt in (1, 2):
            node = client.nodes_manager.get_node_from_slot(key_slot(key))
            server = client.get_redis_connection(node)
            try:
                replies = commands(server, cmds, operation=operation, raise_errors=False)
            except CoordinationUnavailable:
                client.nodes_manager.initialize()  # a failover may have moved the slot: the next call asks
                raise
            if not _moved(replies) or attempt == 2:
                break
            client.nodes_manager.initialize()
        replies = _asked(client, replies, cmds, operation)
        return _raise_first_error(replies) if raise_errors else replies  # TRYAGAIN, CLUSTERDOWN...: an outage


async def _aon_node(
    client: Any, cmds: tuple[tuple[Any, ...], ...], key: str, *, operation: str, raise_errors: bool
) -> list[Any]:
    """:func:`_on_node` for a ``redis.asyncio`` Cluster client."""
    from ..keys import key_slot

    with unavailable_as_ours(client, operation):
        await client.initialize()  # the slot map is read on first use (a no-op later)
        for attempt in (1, 2):
            node = client.nodes_manager.get_node_from_slot(key_slot(key))
            conn = node.acquire_connection()
            try:
                replies = await _asend_all(conn, cmds)
            except BaseException as exc:
                await conn.disconnect(nowait=True)
                if isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError)):
                    await client.nodes_manager.initialize()
                raise
            finally:
                node.release(conn)
            if not _moved(replies) or attempt == 2:
                break
            await client.nodes_manager.initialize()
        if any(isinstance(r, redis.exceptions.AskError) for r in replies):  # resharding: nothing ran; the caller retries
            raise CoordinationUnavailable(f"{operation}: the slot is being migrated; try again", operation=operation, sent=False)
        return _raise_first_error(replies) if raise_errors else replies  # TRYAGAIN, CLUSTERDOWN...: an outage


def _pack_all(conn: Any, cmds: tuple[tuple[Any, ...], ...]) -> Any:
    if _pack is not None and _utf8(conn) and all(_plain(args) for args in cmds):
        return [_pack(args) for args in cmds]
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


def _plain(args: tuple[Any, ...]) -> bool:
    """Only str, bytes and int arguments: packed the same by hiredis as by the client's encoder."""
    for arg in args:
        kind = type(arg)
        if kind is not str and kind is not bytes and kind is not int:
            return False
    return True


def _utf8(conn: Any) -> bool:
    encoder = getattr(conn, "encoder", None)
    return encoder is not None and encoder.encoding in ("utf-8", "utf8") and encoder.encoding_errors == "strict"


def max_block(client: Any) -> float:
    """Longest a blocking command may block on ``client``: below its socket timeout.

    A BLPOP that outlasts the socket timeout would fail as a timeout though
    the server is fine; blocking calls are made in chunks of at most this.
    """
    holder = getattr(client, "connection_pool", None) or getattr(client, "nodes_manager", None)  # Cluster: its nodes'
    kwargs = getattr(holder, "connection_kwargs", None) or {}
    timeout = kwargs.get("socket_timeout")
    if not timeout:
        return MAX_BLOCK
    return max(0.005, min(MAX_BLOCK, timeout - 0.5 if timeout > 1.0 else timeout / 2))


def blpop(client: Any, keys: list[str], timeout: float, *, operation: str) -> Any:
    """BLPOP ``keys`` for at most ``timeout`` seconds (capped by :func:`max_block`).

    Returns ``[key, value]`` or None. BLPOP's 0 means "forever": never sent.
    Raises CoordinationUnavailable at once when the pool's connections that
    may wait are all waiting (see :func:`_waiting_slot`).
    """
    block = max(0.001, min(timeout, max_block(client)))
    with _waiting_slot(client, _direct_pool(client), operation):
        return command(client, "BLPOP", *keys, f"{block:.3f}", operation=operation)


async def ablpop(client: Any, keys: list[str], timeout: float, *, operation: str) -> Any:
    """:func:`blpop` for a ``redis.asyncio`` client."""
    block = max(0.001, min(timeout, max_block(client)))
    with _waiting_slot(client, _direct_async_pool(client), operation):
        return await acommand(client, "BLPOP", *keys, f"{block:.3f}", operation=operation)


def blocking(client: Any, *args: Any, operation: str) -> Any:
    """A blocking command other than BLPOP (XREADGROUP ... BLOCK ms), counted like a wait
    (see :func:`_waiting_slot`); the caller keeps its block below :func:`max_block`."""
    with _waiting_slot(client, _direct_pool(client), operation):
        return command(client, *args, operation=operation)


async def ablocking(client: Any, *args: Any, operation: str) -> Any:
    """:func:`blocking` for a ``redis.asyncio`` client."""
    with _waiting_slot(client, _direct_async_pool(client), operation):
        return await acommand(client, *args, operation=operation)


class _Waiters:
    """How many connections of one pool are held by a blocking wait right now."""

    __slots__ = ("pid", "count", "lock")

    def __init__(self) -> None:
        self.pid, self.count, self.lock = os.getpid(), 0, threading.Lock()


_waiters: weakref.WeakKeyDictionary[Any, _Waiters] = weakref.WeakKeyDictionary()
_waiters_lock = threading.Lock()


def waiting_limit(max_connections: int) -> int:
    """Connections of a pool of ``max_connections`` that may block in a wait at once.

    The rest (a tenth, 2 to 16) is kept for the calls that end waits: a
    release, a hand-off, a waiter giving up its place. Without it, waiters
    holding every connection would make the releases that serve them fail.
    """
    return max(1, max_connections - min(16, max(2, max_connections // 10)))


@contextlib.contextmanager
def _waiting_slot(client: Any, pool: Any, operation: str) -> Iterator[None]:
    """Count a blocking wait against its pool; refuse it when the waiters' share is full."""
    limit = getattr(pool, "max_connections", None)
    if pool is None or not isinstance(limit, int) or limit >= 2**30:
        yield
        return
    with _waiters_lock:
        state = _waiters.get(pool)
        if state is None or state.pid != os.getpid():  # a forked child waits on its own
            state = _waiters[pool] = _Waiters()
    allowed = waiting_limit(limit)
    with state.lock:
        if state.count >= allowed:
            server = describe(client)
            raise CoordinationUnavailable(
                f"{operation}: {allowed} connections of the pool to {server} are already blocked waiting "
                f"(max_connections={limit}, the rest is kept for releases); raise REDCOORD['MAX_CONNECTIONS'] "
                "or pass a client whose pool is larger",
                server=server,
                operation=operation,
                sent=False,
            )
        state.count += 1
    try:
        yield
    finally:
        with state.lock:
            state.count -= 1


def execute_pipeline(client: Any, build: Callable[[Any], None], *, operation: str) -> list[Any]:
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
                return pipe.execute()
            except redis.exceptions.NoScriptError:
                if attempt == 2:
                    raise
                for script in getattr(pipe, "redcoord_scripts", ()):
                    client.script_load(script.source)
    raise AssertionError("unreachable")  # pragma: no cover
