"""Lua scripts: each lives in ``scripts/<name>.lua`` and runs by EVALSHA.

A script is read from disk on first use (never at import), optionally
prefixed by shared helper files, and sent with EVALSHA: one round trip. A
server that does not know the script yet (first use, restart, failover)
answers NOSCRIPT and we fall back to EVAL once, which also caches it.

Coordination calls go through a *lane*: a connection of the client's pool
settings that belongs to one thread of one process. redis-py opens it (TLS,
AUTH, HELLO, SELECT); with hiredis installed the lane then writes packed
commands to the socket and parses replies with its own hiredis reader, so
none of redis-py's per-command machinery (pool checkout, retry wrapper,
parser layers, push handling) runs. That machinery is most of a lock
handoff's client time here: a waiter runs it just after being woken, with
cold caches. Without hiredis the lane uses the connection's own send and
read. Any error leaves the lane disconnected (its stream may be out of
step); the next call reconnects. A forked child forgets every lane (an
``os.register_at_fork`` hook) and opens its own.
"""

from __future__ import annotations

import hashlib
import os
import select
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

import redis

from .connection import unavailable_as_ours

try:  # C packer and reader: the lane's fast path
    import hiredis as _hiredis
except ImportError:  # pragma: no cover - hiredis is an optional extra
    _hiredis = None

_NOT_ENOUGH = object()
_READ_SIZE = 65536

_lanes = threading.local()
_fork_hook = False
_generation = 0  # bumped in a forked child: lanes pinned before the fork are void


def _forget_lanes() -> None:
    """In a forked child: every lane is the parent's stream, never to be used here."""
    global _lanes, _generation
    _lanes = threading.local()
    _generation += 1


class PinnedLane:
    """The lane of the thread that last used an object (one thread at a time).

    Saves the per-call lookup of the thread's lane on a critical path (a
    lock's release starts a handoff; its wait ends one).
    """

    __slots__ = ("key", "lane")

    def __init__(self) -> None:
        self.key: tuple[int, int] | None = None
        self.lane: _Lane | None = None

    def get(self, client: Any) -> _Lane | None:
        key = (threading.get_ident(), _generation)
        if self.key != key:
            self.lane, self.key = _lane(client), key
        return self.lane


class _Lane:
    """One thread's own connection, with ``pool``'s settings.

    redis-py's connection does the connecting and the closing. With hiredis
    installed the lane writes packed commands to the socket and parses the
    replies with its own hiredis reader, configured as redis-py configures
    its own (RESP2 or RESP3 as negotiated, the client's decoding, redis-py's
    error classes): the least Python between a reply arriving and the caller
    having it. Without hiredis it uses the connection's send and read.
    """

    __slots__ = ("pool", "conn", "sock", "reader", "incomplete", "poller", "view")

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.conn = pool.make_connection()
        self.sock: Any = None
        self.reader: Any = None
        self.incomplete: Any = _NOT_ENOUGH  # what the reader answers while a reply is partial
        self.poller: Any = None
        self.view: memoryview | None = None

    def _open(self) -> None:
        conn = self.conn
        conn.connect()
        self.sock = conn._sock
        if _hiredis is None:
            return
        encoder = conn.encoder
        kwargs: dict[str, Any] = {
            "protocolError": redis.exceptions.InvalidResponse,
            "replyError": conn._parser.parse_error,
            "errors": encoder.encoding_errors,
        }
        if encoder.decode_responses:
            kwargs["encoding"] = encoder.encoding
        try:
            self.reader, self.incomplete = _hiredis.Reader(notEnoughData=_NOT_ENOUGH, **kwargs), _NOT_ENOUGH
        except TypeError:  # hiredis < 3: it answers False while incomplete,
            if str(getattr(conn, "protocol", 2)) != "2":  # which a RESP3 reply can be
                return
            self.reader, self.incomplete = _hiredis.Reader(**kwargs), False
        self.poller = select.poll()
        self.poller.register(self.sock, select.POLLIN)
        if self.view is None:
            self.view = memoryview(bytearray(_READ_SIZE))

    def close(self) -> None:
        self.sock = self.reader = self.poller = None
        self.conn.disconnect()

    def _stale(self) -> bool:
        """Readable while nothing of ours is in flight: closed by the server
        (restart, idle timeout) or out of step. Either way, start afresh."""
        sock = self.sock
        if self.reader is None:
            try:
                return bool(self.conn.can_read())
            except (redis.ConnectionError, OSError):
                return True
        if hasattr(sock, "pending") and sock.pending():
            return True
        return bool(self.poller.poll(0))

    def run(self, args: tuple[Any, ...], packed: bytes | None) -> Any:
        """Send one command (``packed``, if given, is ``args`` already packed) and read its reply."""
        if self.sock is None:
            self._open()
        elif self._stale():
            self.close()
            self._open()
        reader = self.reader
        if reader is None:
            if packed is None:
                self.conn.send_command(*args)
            else:
                self.conn.send_packed_command((packed,))
            return self.conn.read_response()
        sock, view, incomplete = self.sock, self.view, self.incomplete
        try:
            sock.sendall(packed or _hiredis.pack_command(args))
            reply = reader.gets()
            while reply is incomplete:
                n = sock.recv_into(view)
                if not n:
                    raise redis.ConnectionError("Connection closed by server.")
                reader.feed(view, 0, n)
                reply = reader.gets()
        except TimeoutError as exc:  # socket.timeout
            raise redis.TimeoutError(f"Timeout on the socket: {exc}") from exc
        except OSError as exc:
            raise redis.ConnectionError(f"Error on the socket: {exc}") from exc
        if isinstance(reply, Exception):
            raise reply  # an error reply; the stream is in step
        return reply


def _lane(client: Any) -> _Lane | None:
    """This thread's own lane for ``client``'s pool, or None to use the client."""
    global _fork_hook
    pool = getattr(client, "connection_pool", None)
    if type(client) is not redis.Redis or not isinstance(pool, redis.ConnectionPool):
        return None  # pipelines, cluster or sentinel clients: their own path
    lanes = getattr(_lanes, "by_pool", None)
    if lanes is None:
        if not _fork_hook:
            os.register_at_fork(after_in_child=_forget_lanes)
            _fork_hook = True
        lanes = _lanes.by_pool = {}
    lane = lanes.get(id(pool))
    if lane is None or lane.pool is not pool:
        lane = lanes[id(pool)] = _Lane(pool)
    return lane


def command(client: Any, *args: Any, operation: str, pin: PinnedLane | None = None) -> Any:
    """Send one command on this thread's lane (or the client) and return its reply.

    ``pin``: where the caller keeps its lane (see :class:`PinnedLane`).
    """
    lane = _lane(client) if pin is None else pin.get(client)
    if lane is None:
        with unavailable_as_ours(client, operation):
            return client.execute_command(*args)
    return _run(lane, client, args, None, operation)


def _run(lane: _Lane, client: Any, args: tuple[Any, ...], packed: bytes | None, operation: str) -> Any:
    """One command on a lane; outages become CoordinationUnavailable."""
    try:
        return lane.run(args, packed)
    except redis.exceptions.ResponseError:
        raise  # an error reply: the stream is in step
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        lane.close()
        with unavailable_as_ours(client, operation):
            raise exc from exc.__cause__
    except BaseException:
        lane.close()  # interrupted mid-reply: never reuse a stream out of step
        raise


class Script:
    """One Lua script file (plus shared helper files) run against a client."""

    __slots__ = ("name", "includes", "_loaded")

    def __init__(self, name: str, *, includes: tuple[str, ...] = ()) -> None:
        self.name = name
        self.includes = includes
        self._loaded: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"Script({self.name!r})"

    def _load(self) -> tuple[str, str]:
        if self._loaded is None:
            source = "\n".join(_read(f) for f in (*self.includes, f"{self.name}.lua"))
            self._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
        return self._loaded

    @property
    def source(self) -> str:
        return self._load()[0]

    def queue(self, pipe: Any, keys: list[str], args: list[Any]) -> None:
        """Add a run of this script to a pipeline (see :func:`execute_pipeline`)."""
        pipe.evalsha(self._load()[1], len(keys), *keys, *args)
        used = getattr(pipe, "redcoord_scripts", None)
        if used is None:
            used = pipe.redcoord_scripts = set()
        used.add(self)

    def packed(self, keys: list[str], args: list[Any]) -> bytes | None:
        """This run packed ahead of time for ``packed=`` of :meth:`__call__` (None without hiredis)."""
        if _hiredis is None:
            return None
        return _hiredis.pack_command(("EVALSHA", (self._loaded or self._load())[1], len(keys), *keys, *args))

    def __call__(
        self,
        client: Any,
        keys: list[str],
        args: list[Any],
        *,
        operation: str,
        packed: bytes | None = None,
        pin: PinnedLane | None = None,
    ) -> Any:
        """Run the script: one round trip (two only after NOSCRIPT).

        ``packed``: :meth:`packed` of the same keys and args; ``pin``: see
        :func:`command`.
        """
        source, sha = self._loaded or self._load()
        try:
            if packed is not None and pin is not None:
                lane = pin.get(client)
                if lane is not None:  # the shortest way: a lock's release starts a handoff
                    return _run(lane, client, (), packed, operation)
            return command(client, "EVALSHA", sha, len(keys), *keys, *args, operation=operation)
        except redis.exceptions.NoScriptError:
            return command(client, "EVAL", source, len(keys), *keys, *args, operation=operation)


def _read(filename: str) -> str:
    return resources.files(__package__).joinpath("scripts", filename).read_text()


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
