"""Lua scripts: each lives in ``scripts/<name>.lua`` and runs by EVALSHA.

A script is read from disk on first use (never at import), optionally
prefixed by shared helper files, and sent with EVALSHA: one round trip. A
server that does not know the script yet (first use, restart, failover)
answers NOSCRIPT and we fall back to EVAL once, which also caches it.

Coordination calls go through a *lane*: a connection of the client's pool
settings that belongs to one thread of one process, used with the
connection's own send/read. It skips redis-py's per-command machinery (pool
checkout, retry wrapper, metrics hooks), which costs more client time than
the round trip itself: about 35 us per call instead of 55 us measured here.
Commands are packed by hiredis's C packer when it is installed (1 us for a
lock script's 16 arguments, against 3.6 us in redis-py's packer). Any error
leaves the lane disconnected (its stream may be out of step); the next call
reconnects. A forked child forgets every lane (an ``os.register_at_fork``
hook) and opens its own.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

import redis

from .connection import unavailable_as_ours

try:  # C packer: a third of the client time redis-py's pack takes for a script call
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is an optional extra
    _hiredis_pack = None

_lanes = threading.local()
_fork_hook = False


def _forget_lanes() -> None:
    """In a forked child: every lane is the parent's stream, never to be used here."""
    global _lanes
    _lanes = threading.local()


def _lane(client: Any) -> Any:
    """This thread's own connection with ``client``'s settings, or None to use the client."""
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
    entry = lanes.get(id(pool))
    if entry is None or entry[0] is not pool:
        entry = (pool, pool.make_connection())
        lanes[id(pool)] = entry
    return entry[1]


def command(client: Any, *args: Any, operation: str) -> Any:
    """Send one command on this thread's lane (or the client) and return its reply."""
    conn = _lane(client)
    if conn is None:
        with unavailable_as_ours(client, operation):
            return client.execute_command(*args)
    if conn._sock is not None:
        # Closed by the server while idle (restart, idle timeout), or data
        # left over: nothing of ours is in flight, so start a fresh one.
        try:
            stale = conn.can_read()
        except (redis.ConnectionError, OSError):
            stale = True
        if stale:
            conn.disconnect()
    try:
        if _hiredis_pack is None:
            conn.send_command(*args)
        else:
            conn.send_packed_command((_hiredis_pack(args),))
        return conn.read_response()
    except redis.exceptions.ResponseError:
        raise  # an error reply: the stream is in step
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        conn.disconnect()
        with unavailable_as_ours(client, operation):
            raise exc from exc.__cause__
    except BaseException:
        conn.disconnect()  # interrupted mid-reply: never reuse a stream out of step
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

    def __call__(self, client: Any, keys: list[str], args: list[Any], *, operation: str) -> Any:
        """Run the script: one round trip (two only after NOSCRIPT)."""
        source, sha = self._loaded or self._load()
        try:
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
