"""The wake hub: every broadcast wait of a process blocks through one connection.

Latches, barriers, events and signals wait by reading their primitive's wake
stream after the id their last look saw (``holds/waits.py``). Sent as it is,
each such wait holds a connection of the pool while it blocks: 10,000
coroutines waiting would need 10,000 connections (Redis's default
``maxclients``). Through the hub, the waits of one pool in one process (one
event loop for ``redis.asyncio``) register here, and one ``XREAD BLOCK``
reads every stream they wait on, each from the oldest id one of its waiters
saw; an entry is handed to every waiter of its stream that had not seen it.
A stream read is never consumed, so the hub cannot take one waiter's
wake-up from another: it gives each waiter what its own ``XREAD`` would have
returned.

A waiter whose stream the read in flight does not cover (a stream new to the
hub, or an older id) pokes the hub: one ``XADD`` to the hub's own control
stream, which the read in flight also reads, so it returns at once and the
next read covers the newcomer. Pokes are coalesced: at most one per read.

Faults are the waiters' own: when the hub's read fails (its connection
killed, a failover, a paused server past the socket timeout), every waiter
registered gets the error, as its own blocked ``XREAD`` would have, and
issues its wait again (``holds/waits.py``): the state lives in Redis. A
waiter that times out, is cancelled or interrupted leaves the hub; the read
in flight may still name its stream until it returns (harmless). A forked
child gets hubs of its own. The hub's read takes the pool's share for one
wait; when it has nobody left to read for, it ends and gives its connection
back.

On Redis Cluster (streams in different slots cannot be read in one call)
and through a client without its own pool, each wait blocks on its own, as
before.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import secrets
import threading
import weakref
from typing import Any

from ..keys import wake_hub_key
from .commands import (
    _direct_async_pool,
    _direct_pool,
    ablocking,
    acommands,
    as_text,
    blocking,
    commands,
    max_block,
)

#: Entries one read takes from each stream at most (the waiters' own XREAD read as many).
COUNT = 100
#: The control stream outlives the hub's last poke by this long (ms).
CONTROL_KEEP_MS = 60000


def _id(text: str) -> tuple[int, int]:
    ms, _, seq = text.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return 0, 0


def _streams(reply: Any) -> list[tuple[str, list[Any]]]:
    """An XREAD reply as ``(stream, entries)`` pairs (RESP2 or RESP3; None: none)."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else [(item[0], item[1]) for item in reply]
    return [(as_text(stream), list(entries or [])) for stream, entries in pairs]


def _after(entries: list[Any], mark: tuple[int, int]) -> list[Any]:
    return [entry for entry in entries if entry and _id(as_text(entry[0])) > mark]


class _Waiter:
    """One registered wait: its stream, the id it saw, and how it is told (``done``)."""

    __slots__ = ("stream", "mark", "done")

    def __init__(self, stream: str, mark: str, done: Any) -> None:
        self.stream, self.mark, self.done = stream, _id(mark), done


class _Hub:
    """The registered waits of one pool in one process (and event loop), and its read.

    ``reading``: the streams the read in flight covers, and from which id
    (None while no read is built); ``poked``: a poke was sent for this read.
    """

    def __init__(self, hub_prefix: str, port: Any = None) -> None:
        self.pid, self.port = os.getpid(), port
        self.waiters: dict[str, list[_Waiter]] = {}
        self.reading: dict[str, tuple[int, int]] | None = None
        self.poked = False
        self.running = False
        self.control = wake_hub_key(hub_prefix, secrets.token_hex(8))
        self.control_seen = "0-0"

    def _add(self, waiter: _Waiter) -> bool:
        """Register ``waiter``; True if the read in flight does not cover it (a poke is due)."""
        self.waiters.setdefault(waiter.stream, []).append(waiter)
        if self.reading is None or self.poked:
            return False
        covered = self.reading.get(waiter.stream)
        if covered is not None and covered <= waiter.mark:
            return False
        self.poked = True
        return True

    def _remove(self, waiter: _Waiter) -> None:
        line = self.waiters.get(waiter.stream)
        if line is None:
            return
        try:
            line.remove(waiter)
        except ValueError:
            return
        if not line:
            del self.waiters[waiter.stream]

    def _read_args(self, block_ms: int) -> tuple[Any, ...]:
        """The next read: every stream waited on, each from the oldest id one of its waiters saw,
        and the control stream."""
        self.reading = {stream: min(w.mark for w in line) for stream, line in self.waiters.items()}
        self.poked = False
        streams = list(self.reading)
        ids = [f"{ms}-{seq}" for ms, seq in self.reading.values()]
        return (
            "XREAD",
            "COUNT",
            COUNT,
            "BLOCK",
            block_ms,
            "STREAMS",
            self.control,
            *streams,
            self.control_seen,
            *ids,
        )

    def _dispatch(self, reply: Any) -> list[tuple[_Waiter, Any]]:
        """Who the read's entries wake, each with the reply its own XREAD would have had."""
        self.reading = None
        woken: list[tuple[_Waiter, Any]] = []
        for stream, entries in _streams(reply):
            if stream == self.control:
                if entries:
                    self.control_seen = as_text(entries[-1][0])
                continue
            line = self.waiters.get(stream)
            if not line or not entries:
                continue
            for waiter in list(line):
                mine = _after(entries, waiter.mark)
                if mine:
                    self._remove(waiter)
                    woken.append((waiter, [[stream, mine]]))
        return woken

    def _fail_all(self) -> list[_Waiter]:
        self.reading = None
        everyone = [w for line in self.waiters.values() for w in line]
        self.waiters.clear()
        return everyone

    def _poke_commands(self) -> tuple[tuple[Any, ...], ...]:
        return (
            ("XADD", self.control, "MAXLEN", "~", 16, "*", "p", "1"),
            ("PEXPIRE", self.control, CONTROL_KEEP_MS),
        )


def _block_ms(client: Any) -> int:
    return max(1, int(max_block(client) * 1000))


# -- threads --------------------------------------------------------------------------------


class _ThreadHub(_Hub):
    """A hub whose read runs on a daemon thread; its waiters are threads."""

    def __init__(self, hub_prefix: str, port: Any = None) -> None:
        super().__init__(hub_prefix, port)
        self.lock = threading.Lock()

    def read(self, client: Any, stream: str, mark: str, seconds: float, operation: str) -> Any:
        event = threading.Event()
        box: list[Any] = []

        def done(reply: Any = None, error: BaseException | None = None) -> None:
            box.append((reply, error))
            event.set()

        waiter = _Waiter(stream, mark, done)
        with self.lock:
            poke = self._add(waiter)
            start = not self.running
            self.running = True
        if start:
            threading.Thread(
                target=self._run, args=(client,), name="redcoord-wake-hub", daemon=True
            ).start()
        try:
            if poke:
                commands(client, self._poke_commands(), operation=operation)
            event.wait(seconds)
        finally:
            with self.lock:
                self._remove(waiter)
        if not box:
            return None  # the wait's own time ran out: it looks again
        reply, error = box[0]
        if error is not None:
            raise error
        return reply

    def _run(self, client: Any) -> None:
        while True:
            with self.lock:
                if not self.waiters:
                    self.running = False
                    self.reading = None
                    return
                args = self._read_args(_block_ms(client))
            try:
                reply = blocking(client, *args, operation="the wake hub's read")
            except BaseException as exc:
                with self.lock:
                    everyone = self._fail_all()
                for waiter in everyone:
                    waiter.done(None, exc)
                continue
            with self.lock:
                woken = self._dispatch(reply)
            for waiter, mine in woken:
                waiter.done(mine)


# -- asyncio --------------------------------------------------------------------------------


class _LoopHub(_Hub):
    """A hub whose read is a task of one event loop; its waiters are that loop's tasks."""

    def __init__(self, hub_prefix: str, port: Any, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(hub_prefix, port)
        self.loop = loop
        self.task: asyncio.Task[None] | None = None

    async def read(
        self, client: Any, stream: str, mark: str, seconds: float, operation: str
    ) -> Any:
        future: asyncio.Future[Any] = self.loop.create_future()

        def done(reply: Any = None, error: BaseException | None = None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(reply)

        waiter = _Waiter(stream, mark, done)
        poke = self._add(waiter)
        if not self.running:
            self.running = True
            # (a context of its own: not the first waiter's deadline or ending_waits mark)
            self.task = contextvars.Context().run(self.loop.create_task, self._run(client))
        try:
            if poke:
                await acommands(client, self._poke_commands(), operation=operation)
            try:
                return await asyncio.wait_for(future, seconds)
            except asyncio.TimeoutError:
                return None  # the wait's own time ran out: it looks again
        finally:
            self._remove(waiter)

    async def _run(self, client: Any) -> None:
        try:
            while self.waiters:
                args = self._read_args(_block_ms(client))
                try:
                    reply = await ablocking(client, *args, operation="the wake hub's read")
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    for waiter in self._fail_all():
                        waiter.done(None, exc)
                    continue
                for waiter, mine in self._dispatch(reply):
                    waiter.done(mine)
        except asyncio.CancelledError:
            # (the loop is closing, or the hub was cancelled: its waiters issue their waits again)
            from ..exceptions import CoordinationUnavailable

            for waiter in self._fail_all():
                waiter.done(None, CoordinationUnavailable("the wake hub's read was cancelled"))
            raise
        finally:
            self.running = False
            self.reading = None


# -- the hubs of this process -----------------------------------------------------------------

_hubs: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_hubs_lock = threading.Lock()


def _port(pool: Any) -> Any:
    return getattr(pool, "connection_kwargs", {}).get("port")


def reading_waits(port: Any = None) -> tuple[int, int]:
    """(reads in flight, waits they cover) of this process's hubs (of pools whose server port
    is ``port``, if given): each such read is one blocked connection standing for that many
    waits. For tests and diagnostics."""
    with _hubs_lock:
        found = list(_hubs.values())
    hubs: list[_Hub] = []
    for entry in found:
        hubs.extend(entry.values() if isinstance(entry, weakref.WeakKeyDictionary) else [entry])
    reads = waits = 0
    for hub in hubs:
        reading = hub.reading
        if reading is None or hub.pid != os.getpid() or (port is not None and hub.port != port):
            continue
        reads += 1
        for stream, line in list(hub.waiters.items()):
            covered = reading.get(stream)
            waits += sum(1 for w in list(line) if covered is not None and covered <= w.mark)
    return reads, waits


def _thread_hub(pool: Any, hub_prefix: str) -> _ThreadHub:
    with _hubs_lock:
        hub = _hubs.get(pool)
        if hub is None or hub.pid != os.getpid():
            hub = _hubs[pool] = _ThreadHub(hub_prefix, _port(pool))
        return hub


def _loop_hub(pool: Any, hub_prefix: str) -> _LoopHub:
    loop = asyncio.get_running_loop()
    with _hubs_lock:
        per_loop = _hubs.get(pool)
        if per_loop is None:
            per_loop = _hubs[pool] = weakref.WeakKeyDictionary()
        hub = per_loop.get(loop)
        if hub is None or hub.pid != os.getpid():
            hub = per_loop[loop] = _LoopHub(hub_prefix, _port(pool), loop)
        return hub


def _own_read(stream: str, mark: str, seconds: float) -> tuple[Any, ...]:
    return ("XREAD", "COUNT", COUNT, "BLOCK", max(1, int(seconds * 1000)), "STREAMS", stream, mark)


def read_wake(
    client: Any, stream: str, mark: str, seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """The entries of stream ``stream`` after id ``mark``, waiting at most ``seconds`` (below
    the socket timeout): an XREAD reply, or None when none came."""
    pool = _direct_pool(client)
    if pool is None:
        return blocking(client, *_own_read(stream, mark, seconds), operation=operation)
    return _thread_hub(pool, hub_prefix).read(client, stream, mark, seconds, operation)


async def aread_wake(
    client: Any, stream: str, mark: str, seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """:func:`read_wake` for a ``redis.asyncio`` client."""
    pool = _direct_async_pool(client)
    if pool is None:
        return await ablocking(client, *_own_read(stream, mark, seconds), operation=operation)
    hub = _loop_hub(pool, hub_prefix)
    return await hub.read(client, stream, mark, seconds, operation)
