"""The wake hub: every blocked wait of a process blocks through a few connections.

A waiter blocks between two looks at its primitive's state: a lock,
semaphore or read-write lock waiter pops its wake lists (``BLPOP``: a
hand-off, a word from the waiter ahead, an interruption); a latch, barrier,
event or signal waiter reads its primitive's wake stream after the id its
last look saw (``XREAD BLOCK``, ``holds/waits.py``). Sent as they are, each
such wait holds a connection while it blocks: 10,000 coroutines waiting
would need 10,000 connections (Redis's default ``maxclients``).

Through the hub, the waits of one pool in one process (one event loop for
``redis.asyncio``) register here, and one read serves them all:

* **lists**: a ``BLPOP`` on every key a registered wait blocks on (oldest
  registration first; the waits are spread over ``LIST_READS`` such reads by
  their first key, since a ``BLPOP`` hands out one element at a time); the
  element it pops goes to the oldest wait of this process blocked on that
  key, as Redis serves the longest-blocked client. An element
  popped for a key whose waits all left meanwhile (timed out to look again,
  cancelled) is pushed back at once, so a waiter of another process blocked
  on that key still gets it;
* **streams**: one ``XREAD`` of every stream waited on, each from the oldest
  id one of its waits saw; an entry goes to every wait of its stream that had
  not seen it (a stream read consumes nothing).

Each wait gets what its own command would have returned. A wait that the
read in flight does not cover (a key or stream new to it, an older id) and
that no new read covered within ``POKE_AFTER`` (5 ms; in a busy process the
read after the next wake-up covers it) pokes the hub: one push onto the
hub's own control key, which the read in flight also reads, so it returns
at once and the next read covers the newcomer. Nothing pushed meanwhile is
lost: it waits in its list or stream. Pokes are coalesced: at most one per
read. A list wait that leaves while the read in flight still names a list
nobody else here waits on pokes at once (see ``_ListReads.leave``).

Faults are the waits' own: when the hub's read fails (its connection killed,
a failover, a paused server past the socket timeout), every wait registered
gets the error, as its own blocked command would have, and is issued again
(the state lives in Redis). A read refused with WRONGTYPE (another program
wrote a string where a wake list or stream belongs) fails only the waits on
the wrong-typed keys, found by one ``TYPE`` each; the others read again. A
wait that times out, is cancelled or interrupted leaves the hub. A forked
child gets hubs of its own. A hub's read takes the pool's share for one wait;
with nobody left to read for, it ends and gives its connection back.

On Redis Cluster (keys of different slots cannot be read in one call) and
through a client without its own pool, each wait blocks on its own, as
before.
"""

from __future__ import annotations

import asyncio
import binascii
import contextvars
import copy
import logging
import os
import secrets
import threading
import time
import weakref
from typing import Any

from ..keys import wake_hub_key
from .commands import (
    _ablocking_call,
    _blocking_call,
    _direct_async_pool,
    _direct_pool,
    ablocking,
    ablpop,
    acommands,
    as_text,
    blocking,
    blpop,
    commands,
    max_block,
)

log = logging.getLogger("django_redcoord.transport")

#: Entries one read takes from each stream at most (the waits' own XREAD read as many).
COUNT = 100
#: A wait the read in flight does not cover pokes it if no new read covered it within this long
#: (seconds): in a busy process the next read, built after the next wake-up, covers it anyway
#: (an element pushed meanwhile waits in its list: nothing is lost, it comes this much later).
POKE_AFTER = 0.005
#: A hub's control key outlives its last poke by this long (ms).
CONTROL_KEEP_MS = 60000
#: An element pushed back (its waits had left) is kept this long (ms), as a 'moved' word is.
PUSHED_BACK_KEEP_MS = 15000

STREAMS, LISTS = "streams", "lists"
#: List waits are served by up to this many reads (connections) per pool and process (or event
#: loop): a BLPOP returns one element, so one read hands off one at a time; waits on different
#: lines wake in parallel across reads. Stream waits need one (an XREAD returns every stream's
#: new entries at once).
LIST_READS = 4


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


def _wrong_type(error: BaseException) -> bool:
    """A read refused because a key it names holds another type (another program wrote it):
    only the waits on that key fail (``_Reads.fail_wrong_typed``), not every wait of the read."""
    return "WRONGTYPE" in str(error)


def _copy(error: BaseException) -> BaseException:
    """One error per wait (each raises it in its own task, with its own traceback)."""
    try:
        return copy.copy(error)
    except Exception:
        return error


class _Wait:
    """One registered wait: the keys it blocks on (a stream: one, with the id it saw), and how it
    is told (``done(reply)``, ``done(None, error)``; False: it had ended meanwhile, and the reply
    is not its to take)."""

    __slots__ = ("keys", "mark", "done")

    def __init__(self, keys: tuple[str, ...], mark: str = "0-0") -> None:
        self.keys, self.mark = keys, _id(mark)
        self.done: Any = None


class _Reads:
    """The waits a hub reads for, by key (in order of registration), and its read."""

    kind = key_type = ""

    def __init__(self, hub_prefix: str) -> None:
        self.waits: dict[str, list[_Wait]] = {}
        #: what the read in flight covers (None while no read is built); a poke was sent for it;
        #: how many reads were built
        self.reading: Any = None
        self.poked = False
        self.generation = 0
        self.control = wake_hub_key(hub_prefix, secrets.token_hex(8))

    def add(self, wait: _Wait) -> bool:
        """Register ``wait``; True if a read in flight does not cover it (see ``claim_poke``)."""
        for key in wait.keys:
            self.waits.setdefault(key, []).append(wait)
        return self.reading is not None and not self.covers(wait)

    def claim_poke(self, generation: int) -> bool:
        """True if the read ``generation`` (which did not cover a wait) is still in flight and
        nobody poked it yet: the caller pokes it now."""
        if self.reading is None or self.poked or generation != self.generation:
            return False
        self.poked = True
        return True

    def remove(self, wait: _Wait) -> None:
        for key in wait.keys:
            line = self.waits.get(key)
            if line is None:
                continue
            try:
                line.remove(wait)
            except ValueError:
                continue
            if not line:
                del self.waits[key]

    def leave(self, wait: _Wait) -> bool:
        """``wait`` stops waiting (its time ran out, or it was cancelled): True if the read in
        flight should end now (a poke is due): nobody is left to read for (a read left blocked
        would hold its connection for up to its whole block, and count as a blocked client)."""
        self.remove(wait)
        if self.reading is None or self.poked or self.waits:
            return False
        self.poked = True
        return True

    def read_keys(self) -> list[str]:
        """The keys the read in flight names (but the control key)."""
        return list(self.reading or ())

    def fail_wrong_typed(self, keys: list[str], types: list[Any]) -> list[_Wait]:
        """After a WRONGTYPE reply to the read of ``keys``: the waits on a key whose type
        (``types``, one ``TYPE`` reply per key) is not this read's leave, to get the error as
        their own command would have; the others stay for the next read. The read is over."""
        self.reading = None
        fine = ("none", self.key_type)
        wrong = {k for k, t in zip(keys, types, strict=True) if as_text(t) not in fine}
        failed = {id(w): w for k in wrong for w in self.waits.get(k, ())}
        for wait in failed.values():
            self.remove(wait)
        return list(failed.values())

    def fail_all(self) -> list[_Wait]:
        self.reading = None
        everyone = list({id(w): w for line in self.waits.values() for w in line}.values())
        self.waits.clear()
        return everyone

    def count_covered(self) -> int:
        if self.reading is None:
            return 0
        waits = {id(w): w for line in list(self.waits.values()) for w in list(line)}
        return sum(1 for w in waits.values() if self.covers(w))

    def covers(self, wait: _Wait) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_args(self, block: float) -> tuple[Any, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def dispatch(self, reply: Any) -> tuple[list[tuple[_Wait, Any]], Any]:  # pragma: no cover
        """(the waits the read's reply ends, each with its own reply; commands to send back)."""
        raise NotImplementedError

    def poke_commands(self) -> tuple[tuple[Any, ...], ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def refused(self, reply: Any) -> tuple[tuple[Any, ...], ...]:
        """What to send back for ``reply``, dispatched to a wait that had ended meanwhile (its
        time ran out, or it was cancelled, between the read's reply and its dispatch)."""
        return ()


class _StreamReads(_Reads):
    """One XREAD of every stream waited on, from the oldest id one of its waits saw."""

    kind, key_type = STREAMS, "stream"

    def __init__(self, hub_prefix: str) -> None:
        super().__init__(hub_prefix)
        self.control_seen = "0-0"

    def covers(self, wait: _Wait) -> bool:
        covered = self.reading.get(wait.keys[0])
        return covered is not None and covered <= wait.mark

    def read_args(self, block: float) -> tuple[Any, ...]:
        self.reading = {key: min(w.mark for w in line) for key, line in self.waits.items()}
        self.poked, self.generation = False, self.generation + 1
        ids = [f"{ms}-{seq}" for ms, seq in self.reading.values()]
        block_ms = max(1, int(block * 1000))
        return ("XREAD", "COUNT", COUNT, "BLOCK", block_ms, "STREAMS", self.control) + (
            *self.reading,
            self.control_seen,
            *ids,
        )

    def dispatch(self, reply: Any) -> tuple[list[tuple[_Wait, Any]], Any]:
        self.reading = None
        woken: list[tuple[_Wait, Any]] = []
        for stream, entries in _streams(reply):
            if stream == self.control:
                if entries:
                    self.control_seen = as_text(entries[-1][0])
                continue
            for wait in list(self.waits.get(stream, ())):
                mine = [e for e in entries if e and _id(as_text(e[0])) > wait.mark]
                if mine:
                    self.remove(wait)
                    woken.append((wait, [[stream, mine]]))
        return woken, None

    def poke_commands(self) -> tuple[tuple[Any, ...], ...]:
        return (
            ("XADD", self.control, "MAXLEN", "~", 16, "*", "p", "1"),
            ("PEXPIRE", self.control, CONTROL_KEEP_MS),
        )


class _ListReads(_Reads):
    """One BLPOP of every list waited on (oldest registration first), then the control list."""

    kind, key_type = LISTS, "list"

    def covers(self, wait: _Wait) -> bool:
        return all(key in self.reading for key in wait.keys)

    def read_args(self, block: float) -> tuple[Any, ...]:
        self.reading = set(self.waits)
        self.poked, self.generation = False, self.generation + 1
        return ("BLPOP", *self.waits, self.control, f"{block:.3f}")

    def dispatch(self, reply: Any) -> tuple[list[tuple[_Wait, Any]], Any]:
        self.reading = None
        if not reply:
            return [], None
        key = as_text(reply[0])
        if key == self.control:
            return [], None
        line = self.waits.get(key)
        if line:
            wait = line[0]
            self.remove(wait)
            return [(wait, reply)], None
        # every wait on it left since the read was sent: the element is not ours to keep
        return [], self.refused(reply)

    def refused(self, reply: Any) -> tuple[tuple[Any, ...], ...]:
        # (a popped element is pushed back, so the waiter that is first in line now, here or in
        # another process, gets it; an entry read from a stream was never taken from anyone)
        key = as_text(reply[0])
        return (("LPUSH", key, reply[1]), ("PEXPIRE", key, PUSHED_BACK_KEEP_MS))

    def leave(self, wait: _Wait) -> bool:
        # A read left blocked on a list nobody here waits on would take the next element pushed
        # there, which another process's waiter may be blocked for (the hand-off to the waiter
        # that is first in line now): ended at once, as the wait's own BLPOP would have ended.
        self.remove(wait)
        if self.reading is None or self.poked:
            return False
        if any(key in self.reading and key not in self.waits for key in wait.keys):
            self.poked = True
            return True
        return False

    def poke_commands(self) -> tuple[tuple[Any, ...], ...]:
        return (("LPUSH", self.control, "p"), ("PEXPIRE", self.control, CONTROL_KEEP_MS))


_READS = {STREAMS: _StreamReads, LISTS: _ListReads}
_OPERATION = {STREAMS: "the wake hub's stream read", LISTS: "the wake hub's list read"}


class _Hub:
    def __init__(self, kind: str, hub_prefix: str, port: Any) -> None:
        self.pid, self.port, self.kind = os.getpid(), port, kind
        self.reads: _Reads = _READS[kind](hub_prefix)
        self.running = False


# -- threads --------------------------------------------------------------------------------


class _ThreadHub(_Hub):
    """A hub whose read runs on a daemon thread; its waits are threads'."""

    def __init__(self, kind: str, hub_prefix: str, port: Any) -> None:
        super().__init__(kind, hub_prefix, port)
        self.lock = threading.Lock()

    def wait(self, client: Any, wait: _Wait, seconds: float, operation: str) -> Any:
        event = threading.Event()
        box: list[Any] = []

        def done(reply: Any = None, error: BaseException | None = None) -> bool:
            box.append((reply, error))  # (a wait that timed out meanwhile finds it: see below)
            event.set()
            return True

        wait.done = done
        started = time.monotonic()
        with self.lock:
            uncovered, generation = self.reads.add(wait), self.reads.generation
            start, self.running = not self.running, True
        if start:
            threading.Thread(
                target=self._run, args=(client,), name="redcoord-wake-hub", daemon=True
            ).start()
        try:
            if uncovered and not event.wait(min(POKE_AFTER, seconds)):
                with self.lock:
                    poke = self.reads.claim_poke(generation)
                if poke:
                    self._poke_soon(client, operation)
            event.wait(max(0.0, seconds - (time.monotonic() - started)))
        except BaseException:
            with self.lock:
                poke = self.reads.leave(wait)
            if poke:
                self._poke_soon(client, operation)
            raise
        with self.lock:
            poke = self.reads.leave(wait)
        if poke:
            self._poke_soon(client, operation)
        if not box:
            return None  # the wait's own time ran out: it looks again
        reply, error = box[0]
        if error is not None:
            raise error
        return reply

    def _poke_soon(self, client: Any, operation: str) -> None:
        """Poke the read from a thread of its own: a wait never waits for it. On a paused
        server the poke's connection (the hub's one is blocked) waits for the server, and a
        wait whose time ran out must end by its deadline all the same."""
        commands_ = self.reads.poke_commands()  # (under the waits' view now, not the thread's)
        threading.Thread(
            target=self._poke_quietly,
            args=(client, commands_, operation),
            name="redcoord-wake-hub-poke",
            daemon=True,
        ).start()

    def _poke_quietly(self, client: Any, commands_: Any, operation: str) -> None:
        try:
            commands(client, commands_, operation=operation)
        except Exception as exc:  # the read ends by itself within its block
            with self.lock:
                self.reads.poked = False  # (the next wait not covered pokes again)
            log.debug("the wake hub could not be poked: %s", exc)

    def _fail_wrong_typed(self, client: Any, error: BaseException, operation: str) -> bool:
        """Fail only the waits on the wrong-typed keys; False if none was found (their types
        could not be read, or only the control key is wrong): then every wait gets the error."""
        with self.lock:
            keys = self.reads.read_keys()
        try:
            types = commands(client, tuple(("TYPE", k) for k in keys), operation=operation)
        except Exception:
            return False
        with self.lock:
            failed = self.reads.fail_wrong_typed(keys, types)
            for wait in failed:
                wait.done(None, _copy(error))
        return bool(failed)  # (none: the control key itself, or a race; every wait gets it)

    def _run(self, client: Any) -> None:
        operation = _OPERATION[self.kind]
        while True:
            with self.lock:
                if not self.reads.waits:
                    self.running = False
                    self.reads.reading = None
                    return
                block = max_block(client)
                args = self.reads.read_args(block)
            try:
                reply = _blocking_call(client, args, block, (), operation)
            except BaseException as exc:
                if _wrong_type(exc) and self._fail_wrong_typed(client, exc, operation):
                    continue
                with self.lock:
                    for wait in self.reads.fail_all():
                        wait.done(None, _copy(exc))
                continue
            # Told under the lock: a wait whose time runs out meanwhile leaves under it too, so it
            # either finds its reply (see wait()) or has left before the dispatch (the element is
            # then pushed back); told after, it could leave between the two and drop its reply.
            with self.lock:
                woken, back = self.reads.dispatch(reply)
                for wait, reply in woken:
                    wait.done(reply)
            if back:
                try:
                    commands(client, back, operation=operation)
                except Exception as exc:  # its owner finds what it missed at its next look
                    log.warning("the wake hub could not push an element back: %s", exc)


# -- asyncio --------------------------------------------------------------------------------


class _LoopHub(_Hub):
    """A hub whose read is a task of one event loop; its waits are that loop's tasks."""

    def __init__(self, kind: str, hub_prefix: str, port: Any) -> None:
        super().__init__(kind, hub_prefix, port)
        self.task: asyncio.Task[None] | None = None
        self.pokes: set[asyncio.Task[None]] = set()
        self.timer: asyncio.TimerHandle | None = None

    async def wait(self, client: Any, wait: _Wait, seconds: float, operation: str) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def done(reply: Any = None, error: BaseException | None = None) -> bool:
            if future.done():  # its time ran out or it was cancelled: not resumed yet
                return False
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(reply)
            return True

        wait.done = done
        uncovered = self.reads.add(wait)
        if not self.running:
            self.running = True
            # (a context of its own: not the first waiter's deadline or ending_waits mark)
            self.task = contextvars.Context().run(loop.create_task, self._run(client))
        elif uncovered and self.timer is None:
            self.timer = loop.call_later(
                POKE_AFTER, self._poke_due, client, self.reads.generation, operation
            )
        try:
            try:
                reply = await asyncio.wait_for(future, seconds)
            except asyncio.TimeoutError:
                reply = None  # the wait's own time ran out: it looks again
        except BaseException:
            if self.reads.leave(wait):  # (cancelled: the poke goes on without us)
                self._poke_soon(client, operation)
            raise
        if self.reads.leave(wait):
            # (never awaited: on a paused server the poke waits for the server, and a wait whose
            # time ran out must end by its deadline all the same)
            self._poke_soon(client, operation)
        return reply

    def _poke_due(self, client: Any, generation: int, operation: str) -> None:
        """POKE_AFTER after a wait the read ``generation`` did not cover registered."""
        self.timer = None
        if self.reads.claim_poke(generation):
            self._poke_soon(client, operation)

    def _poke_soon(self, client: Any, operation: str) -> None:
        task = asyncio.get_running_loop().create_task(self._poke_quietly(client, operation))
        self.pokes.add(task)
        task.add_done_callback(self.pokes.discard)

    async def _poke(self, client: Any, operation: str) -> None:
        try:
            await acommands(client, self.reads.poke_commands(), operation=operation)
        except BaseException:
            self.reads.poked = False  # (the next wait not covered pokes again)
            raise

    async def _poke_quietly(self, client: Any, operation: str) -> None:
        try:
            await self._poke(client, operation)
        except Exception as exc:  # the read ends by itself within its block
            log.debug("the wake hub could not be poked: %s", exc)

    async def _fail_wrong_typed(self, client: Any, error: BaseException, operation: str) -> bool:
        """Fail only the waits on the wrong-typed keys; False if none was found (their types
        could not be read, or only the control key is wrong): then every wait gets the error."""
        keys = self.reads.read_keys()
        try:
            types = await acommands(client, tuple(("TYPE", k) for k in keys), operation=operation)
        except Exception:
            return False
        failed = self.reads.fail_wrong_typed(keys, types)
        for wait in failed:
            wait.done(None, _copy(error))
        return bool(failed)  # (none: the control key itself, or a race; every wait gets it)

    async def _run(self, client: Any) -> None:
        operation = _OPERATION[self.kind]
        try:
            while self.reads.waits:
                block = max_block(client)
                args = self.reads.read_args(block)
                if self.timer is not None:  # (this read covers every wait registered so far)
                    self.timer.cancel()
                    self.timer = None
                try:
                    reply = await _ablocking_call(client, args, block, (), operation)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if _wrong_type(exc) and await self._fail_wrong_typed(client, exc, operation):
                        continue
                    for wait in self.reads.fail_all():
                        wait.done(None, _copy(exc))
                    continue
                woken, back = self.reads.dispatch(reply)
                for wait, mine in woken:
                    if not wait.done(mine):
                        back = (*(back or ()), *self.reads.refused(mine))
                if woken:
                    await asyncio.sleep(0)  # the woken first: packing the next read takes a while
                if back:
                    try:
                        await acommands(client, back, operation=operation)
                    except Exception as exc:  # its owner finds what it missed at its next look
                        log.warning("the wake hub could not push an element back: %s", exc)
        except asyncio.CancelledError:
            # (the loop is closing, or the hub was cancelled: its waits are issued again)
            from ..exceptions import CoordinationUnavailable

            for wait in self.reads.fail_all():
                wait.done(None, CoordinationUnavailable("the wake hub's read was cancelled"))
            raise
        finally:
            self.running = False
            self.reads.reading = None
            self.task = None  # (a finished task keeps its loop alive)


# -- the hubs of this process -----------------------------------------------------------------

_thread_hubs: weakref.WeakKeyDictionary[Any, dict[str, _ThreadHub]] = weakref.WeakKeyDictionary()
_loop_hubs: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[Any, dict[str, _LoopHub]]] = (
    weakref.WeakKeyDictionary()
)
#: The registry's lock of each process by pid: a forked child makes its own (another thread of
#: the parent may have held the parent's when it forked: the child would wait for it forever).
#: Made by whichever thread comes first (``dict.setdefault`` is atomic): threads racing for it
#: share one.
_hubs_locks: dict[int, threading.Lock] = {}


def _registry_lock() -> threading.Lock:
    """The lock of the hub registry of this process."""
    pid = os.getpid()
    lock = _hubs_locks.get(pid)
    if lock is None:
        lock = _hubs_locks.setdefault(pid, threading.Lock())
        for other in [p for p in _hubs_locks if p != pid]:  # (an ancestor's, inherited by fork)
            _hubs_locks.pop(other, None)
    return lock


def _port(pool: Any) -> Any:
    return getattr(pool, "connection_kwargs", {}).get("port")


def _part(kind: str, key: str) -> str:
    """Which read of ``kind`` serves a wait whose first key is ``key``: lists are split over
    LIST_READS reads by the CRC32 of the key's hash tag (``{name}``; the whole key without one),
    so every wait on one primitive shares one read. Its waits' first keys change at each
    hand-off (a waiter blocks on the wake list of whoever is just ahead): split by the whole
    key, one lock's line was spread over every read, each read had fewer wake-ups than new
    waits to cover, and nearly every acquisition cost a poke."""
    if kind != LISTS:
        return kind
    end = key.find("}")
    tag = key[: end + 1] if end > key.find("{") >= 0 else key
    return f"{kind}:{binascii.crc32(tag.encode()) % LIST_READS}"


def _thread_hub(pool: Any, kind: str, hub_prefix: str, key: str) -> _ThreadHub:
    part = _part(kind, key)
    with _registry_lock():
        hubs = _thread_hubs.get(pool)
        if hubs is None:
            hubs = _thread_hubs[pool] = {}
        hub = hubs.get(part)
        if hub is None or hub.pid != os.getpid():
            hub = hubs[part] = _ThreadHub(kind, hub_prefix, _port(pool))
        return hub


def _loop_hub(pool: Any, kind: str, hub_prefix: str, key: str) -> _LoopHub:
    part = _part(kind, key)
    loop = asyncio.get_running_loop()
    with _registry_lock():
        per_loop = _loop_hubs.get(pool)
        if per_loop is None:
            per_loop = _loop_hubs[pool] = weakref.WeakKeyDictionary()
        hubs = per_loop.get(loop)
        if hubs is None:
            hubs = per_loop[loop] = {}
        hub = hubs.get(part)
        if hub is None or hub.pid != os.getpid():
            hub = hubs[part] = _LoopHub(kind, hub_prefix, _port(pool))
        return hub


def reading_waits(port: Any = None) -> tuple[int, int]:
    """(reads in flight, waits they cover) of this process's hubs (of pools whose server port
    is ``port``, if given): each such read is one blocked connection standing for that many
    waits. For tests and diagnostics."""
    with _registry_lock():
        hubs: list[_Hub] = [h for by_kind in _thread_hubs.values() for h in by_kind.values()]
        for per_loop in _loop_hubs.values():
            hubs.extend(h for by_kind in per_loop.values() for h in by_kind.values())
    reads = waits = 0
    for hub in hubs:
        if hub.pid != os.getpid() or (port is not None and hub.port != port):
            continue
        covered = hub.reads.count_covered()
        if hub.reads.reading is not None:
            reads += 1
            waits += covered
    return reads, waits


# -- the waits --------------------------------------------------------------------------------


def read_wake(
    client: Any, stream: str, mark: str, seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """The entries of stream ``stream`` after id ``mark``, waiting at most ``seconds`` (below
    the socket timeout): an XREAD reply, or None when none came."""
    pool = _direct_pool(client)
    if pool is None:
        block_ms = max(1, int(seconds * 1000))
        args = ("XREAD", "COUNT", COUNT, "BLOCK", block_ms, "STREAMS", stream, mark)
        return blocking(client, *args, operation=operation)
    hub = _thread_hub(pool, STREAMS, hub_prefix, stream)
    return hub.wait(client, _Wait((stream,), mark), seconds, operation)


async def aread_wake(
    client: Any, stream: str, mark: str, seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """:func:`read_wake` for a ``redis.asyncio`` client."""
    pool = _direct_async_pool(client)
    if pool is None:
        block_ms = max(1, int(seconds * 1000))
        args = ("XREAD", "COUNT", COUNT, "BLOCK", block_ms, "STREAMS", stream, mark)
        return await ablocking(client, *args, operation=operation)
    hub = _loop_hub(pool, STREAMS, hub_prefix, stream)
    return await hub.wait(client, _Wait((stream,), mark), seconds, operation)


def pop_wake(
    client: Any, keys: list[str], seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """The first element of the first of ``keys`` that has one, waiting at most ``seconds``
    (below the socket timeout): ``[key, value]`` as BLPOP replies, or None when none came."""
    pool = _direct_pool(client)
    if pool is None:
        return blpop(client, keys, seconds, operation=operation)
    hub = _thread_hub(pool, LISTS, hub_prefix, keys[0])
    return hub.wait(client, _Wait(tuple(keys)), seconds, operation)


async def apop_wake(
    client: Any, keys: list[str], seconds: float, *, hub_prefix: str, operation: str
) -> Any:
    """:func:`pop_wake` for a ``redis.asyncio`` client."""
    pool = _direct_async_pool(client)
    if pool is None:
        return await ablpop(client, keys, seconds, operation=operation)
    hub = _loop_hub(pool, LISTS, hub_prefix, keys[0])
    return await hub.wait(client, _Wait(tuple(keys)), seconds, operation)
