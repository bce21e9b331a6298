"""Reliable at-least-once queues on one Redis.

A message is a JSON value. ``push`` stores it as an *envelope* (id, failed
attempts, max attempts, enqueue time, priority, then the JSON text) in the
queue's ready sorted set, ordered by priority band then arrival (FIFO, or LIFO
for a ``lifo=True`` queue); delayed messages wait in a sorted set by due time.

A :class:`Consumer` claims messages with one Lua script that atomically moves
them from ready to the consumer's own processing list. They stay there until
acknowledged (``ack``), so a consumer that crashes loses nothing: its
heartbeat deadline lapses and :meth:`Queue.reap`, run by every live worker,
puts its in-flight messages back at the front of the queue, counting the
failed attempt. ``nack`` schedules a retry with exponential backoff and
jitter, and after the last attempt moves the message to the dead-letter list
with its error. Acknowledgements ride on the next claim: one round trip per
batch, not per message.

Delivery is at least once: a message whose consumer died after doing the work
but before acknowledging it is delivered again. Make handlers idempotent.

Every write is safe to repeat after an unknown outcome (a timeout): a claim
whose reply was lost is delivered again by the next claim of the same
consumer, acknowledgements and failed nacks are sent again, and a message id
is any allowed name (``|`` included): envelopes put the numeric fields first
and the id last, so nothing ever splits a user string.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..keys import QueueKeys, validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import aexecute_pipeline, as_text, command, execute_pipeline
from ..transport.drivers import Run, Steps, arun, run
from ..transport.errors import unavailable_as_ours
from ..transport.scripts import Script
from ..values import DEFAULT, check_count
from . import messages as _messages
from .consumer import Consumer
from .groups import Group, as_group
from .messages import (
    DEPTHS,
    GROUPED,
    HAS_RECORD,
    MAX_BATCH,
    MAX_PRIORITY,
    MIN_PRIORITY,
    PAUSE,
    PUSH,
    PUSH_UNIQUE,
    REAP,
    REQUEUE_DEAD,
    TRACED,
    Depths,
    EncodedJSON,
    Message,
    delay_ms,
    encode_body,
    queue_defaults,
)

_ONE_DEAD = ("queues/common", "queues/find_dead")
REQUEUE_DEAD_LETTER = Script("queues/requeue_dead_letter", includes=_ONE_DEAD)
DELETE_DEAD_LETTER = Script("queues/delete_dead_letter", includes=_ONE_DEAD)
SAMPLE = Script("queues/sample")
PURGE = Script("queues/purge", includes=("queues/common",))
#: Samples kept per queue: an hour of per-minute differences needs 61.
HISTORY_SAMPLES = 61
#: A queue nobody reports on for this long (s) loses its history and count.
HISTORY_TTL = 86_400


@dataclass(frozen=True)
class Unique:
    """What ``queues/push_unique.lua`` needs of a unique task's push."""

    key: str  # the unique key (any text; the Tasks layer prefixes the task's path)
    until: str  # 's': freed when a worker claims the holder; 'f': when it leaves for good
    mode: str  # 'skip', 'replace' or 'followup' (see the script)
    ttl_ms: int  # the key's safety net: held at most this long
    duplicate_error: str = ""  # JSON of the error of a duplicate's record ('': no record)
    finished_at: str = ""  # that record's finished_at


class Queue(UsesClient):
    """A named queue. Cheap to create; holds no connection of its own.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        lifo: deliver the newest message first (default: oldest first).
        max_attempts: deliveries before a message is dead-lettered
            (default ``REDCOORD["QUEUE_MAX_ATTEMPTS"]``, 3). Stored in each message.
        dead_letter_limit: dead letters kept; past it the oldest are dropped
            with their errors (default ``REDCOORD["QUEUE_DEAD_LETTER_LIMIT"]``,
            10,000; None keeps all).
        client, prefix: as for :class:`~django_redcoord.core.locks.lock.Lock`.
    """

    def __init__(
        self,
        name: str,
        *,
        lifo: bool = False,
        max_attempts: int | None = None,
        dead_letter_limit: int | None = DEFAULT,
        client: Any = None,
        prefix: str | None = None,
    ) -> None:
        self.name = validate_name(name, "queue name")
        if not isinstance(lifo, bool):
            raise TypeError("lifo must be True or False")
        self.lifo = lifo
        self.max_attempts = check_count(
            max_attempts if max_attempts is not None else queue_defaults()["QUEUE_MAX_ATTEMPTS"],
            "max_attempts",
            1,
            1000,
        )
        if dead_letter_limit is DEFAULT:
            dead_letter_limit = queue_defaults().get("QUEUE_DEAD_LETTER_LIMIT", 10_000)
        if dead_letter_limit is not None:
            check_count(dead_letter_limit, "dead_letter_limit", 1, 1_000_000_000)
        self.dead_letter_limit = dead_letter_limit
        self._client = client
        self.key_builder = key_builder(prefix, client)
        self.keys: QueueKeys = self.key_builder.queue(self.name)
        k = self.keys
        self._push_keys = [k.ready, k.seq, k.delayed, k.wake, k.index]
        self._lifo = "1" if lifo else "0"
        self._registered = False  # set after our first push: the index holds the name
        self._push_operation = f"push to queue {self.name!r}"

    def __repr__(self) -> str:
        return f"<Queue {self.name!r}{' lifo' if self.lifo else ''}>"

    # -- producing --------------------------------------------------------------

    def push(
        self,
        body: Any,
        *,
        delay: float | None = None,
        eta: datetime | None = None,
        priority: int = 0,
        id: str | None = None,
        group: str | Group | None = None,
    ) -> str:
        """Add one message (one round trip); return its id.

        ``delay`` (seconds) or ``eta`` (aware datetime) defers delivery;
        ``priority`` from -100 to 100, higher first; ``group`` (a name, or a
        :class:`~django_redcoord.core.queues.groups.Group` with limits) puts it
        in its group's line (see groups.py). Raises TypeError for a body that
        is not JSON-serialisable.
        """
        return run(self.client, self._push_steps(body, delay, eta, priority, id, group))

    async def apush(
        self,
        body: Any,
        *,
        delay: float | None = None,
        eta: datetime | None = None,
        priority: int = 0,
        id: str | None = None,
        group: str | Group | None = None,
    ) -> str:
        """``push()`` on the event loop, with a ``redis.asyncio`` client (see there)."""
        return await arun(
            self._async_client(), self._push_steps(body, delay, eta, priority, id, group)
        )

    def _push_steps(
        self,
        body: Any,
        delay: float | None,
        eta: datetime | None,
        priority: int,
        id: str | None,
        group: str | Group | None = None,
    ) -> Steps:
        if id is None:
            mid = uuid.uuid4().hex
        else:
            mid = validate_name(id, "message id")
        if group is not None:
            g = self._group(group)
            build = lambda headers: [  # noqa: E731
                *self._head(),
                *self._message_args(mid, body, delay, eta, priority, 0, headers, g),
            ]
            yield from self._pushed([mid], self._group_push_keys(None), build)
            return mid
        if priority or delay is not None or eta is not None:
            build = lambda headers: [  # noqa: E731
                *self._head(),
                *self._message_args(mid, body, delay, eta, priority, 0, headers),
            ]
        else:  # the common case, without the argument checks it does not need
            build = lambda headers: [*self._head(), self._envelope(mid, body, 0, 0, headers), 0, 0]  # noqa: E731
        yield from self._pushed([mid], self._push_keys, build)
        return mid

    def _pushed(self, ids: list[str], keys: list[str], build: Any) -> Steps:
        """One PUSH of the messages ``ids``, whose arguments ``build(headers)`` makes.

        The one place where a push meets the message tracer (see
        ``messages.tracer``): with one installed, the push runs inside its
        send span and the envelopes carry its trace headers; without, the
        headers are "" and the envelopes are as they always were.
        """
        tracer = _messages.tracer
        if tracer is None:
            reply = yield Run(PUSH, keys, build(""), self._push_operation)
        else:
            with tracer.send(self.name, ids) as sending:
                reply = yield Run(PUSH, keys, build(sending.headers), self._push_operation)
        self._registered = True
        return reply

    def push_with_record(
        self,
        body: Any,
        *,
        id: str,
        record_key: str,
        record: dict[str, Any],
        ttl: int,
        eta: datetime | None = None,
        priority: int = 0,
        only_new: bool = False,
        group: str | Group | None = None,
    ) -> bool:
        """Push one message and write a hash (``record``, expiring after ``ttl``
        seconds) in the same command: a Django Task and its result record. ``only_new``:
        nothing is done if the record exists already (a re-send whose id is its idempotency
        key). Returns whether it was pushed."""
        return bool(
            run(
                self.client,
                self._push_record_steps(
                    body, id, record_key, record, -ttl if only_new else ttl, eta, priority, group
                ),
            )
        )

    async def apush_with_record(
        self,
        body: Any,
        *,
        id: str,
        record_key: str,
        record: dict[str, Any],
        ttl: int,
        eta: datetime | None = None,
        priority: int = 0,
        group: str | Group | None = None,
    ) -> None:
        """``push_with_record()`` on the event loop (see there)."""
        await arun(
            self._async_client(),
            self._push_record_steps(body, id, record_key, record, ttl, eta, priority, group),
        )

    def _push_record_steps(
        self,
        body: Any,
        id: str,
        record_key: str,
        record: dict[str, Any],
        ttl: int,
        eta: datetime | None,
        priority: int,
        group: str | Group | None = None,
    ) -> Steps:
        pairs = [item for field in record.items() for item in field]
        mid = validate_name(id, "message id")
        g = self._group(group)

        def build(headers: str) -> list[Any]:
            message = self._message_args(mid, body, None, eta, priority, HAS_RECORD, headers, g)
            return [self._head()[0], self._lifo, len(record), ttl, *pairs, *message]

        keys = self._group_push_keys(record_key) if g else [*self._push_keys, record_key]
        return (yield from self._pushed([mid], keys, build))

    def push_unique_with_record(self, *, unique: Unique, **push: Any) -> tuple[bool, str, int]:
        """:meth:`push_with_record` of a unique task (``queues/push_unique.lua``), one command:
        ``(True, replaced id or "", its delivery number)`` when it was pushed and holds
        ``unique.key``, ``(False, holder id, 0)`` when the key is held and nothing was pushed
        (see the script for the modes)."""
        return run(self.client, self._push_unique_steps(unique, **push))

    async def apush_unique_with_record(
        self, *, unique: Unique, **push: Any
    ) -> tuple[bool, str, int]:
        """``push_unique_with_record()`` on the event loop (see there)."""
        return await arun(self._async_client(), self._push_unique_steps(unique, **push))

    def _push_unique_steps(
        self,
        unique: Unique,
        *,
        body: Any,
        id: str,
        record_key: str,
        record: dict[str, Any],
        ttl: int,
        eta: datetime | None = None,
        priority: int = 0,
        group: str | Group | None = None,
    ) -> Steps:
        pairs = [item for field in record.items() for item in field]
        mid = validate_name(id, "message id")
        k = self.keys
        g = self._group(group)
        keys = [*self._push_keys, record_key, k.uniq, k.uniq_ids, k.settle]
        if g:
            keys += [k.gpend, k.gstate, k.gwait]
        tail = [
            unique.key,
            unique.until,
            unique.mode,
            unique.ttl_ms,
            unique.duplicate_error,
            unique.finished_at,
        ]

        def build(headers: str) -> list[Any]:
            message = self._message_args(mid, body, None, eta, priority, HAS_RECORD, headers, g)
            return [self._head()[0], self._lifo, len(record), ttl, *pairs, *message, *tail]

        tracer = _messages.tracer
        if tracer is None:
            reply = yield Run(PUSH_UNIQUE, keys, build(""), self._push_operation)
        else:
            with tracer.send(self.name, [mid]) as sending:
                reply = yield Run(PUSH_UNIQUE, keys, build(sending.headers), self._push_operation)
        self._registered = True
        return int(reply[0]) == 1, as_text(reply[1]), int(reply[2]) if len(reply) > 2 else 0

    def unique_keys(self, limit: int = 1000) -> dict[str, str]:
        """The unique keys held on this queue, each with the id of the task holding it (at most
        ``limit``, one HSCAN page at a time; keys past their TTL included until a push frees
        them)."""
        check_count(limit, "limit", 1, 1_000_000)
        held: dict[str, str] = {}
        with unavailable_as_ours(self.client, f"read the unique keys of queue {self.name!r}"):
            for key, value in self.client.hscan_iter(self.keys.uniq, count=500):
                held[as_text(key)] = as_text(value).split("\n", 1)[0]
                if len(held) >= limit:
                    break
        return held

    def groups(self, limit: int = 100) -> list[dict[str, Any]]:
        """The groups that have messages (at most ``limit``, one HSCAN page at a time), busiest
        first: ``{"group", "in_line", "running", "waiting", "rate_wait"}``: its messages in the
        ready line (or waiting there for a retry or its rate), claimed and not yet settled, and
        waiting behind them; ``rate_wait`` is the seconds until its rate lets the next one start
        (0: now). Two round trips; for the admin and ``redcoord queue show``."""
        check_count(limit, "limit", 1, 100_000)
        k = self.keys
        found: list[tuple[str, int, int, float]] = []
        with unavailable_as_ours(self.client, f"read the groups of queue {self.name!r}"):
            for field, value in self.client.hscan_iter(k.gstate, count=500):
                try:
                    in_line, running, tat = as_text(value).split(" ")
                    counts = int(in_line), int(running)
                    if counts == (0, 0):  # idle: only its rate's last start is remembered
                        continue
                    found.append((as_text(field), *counts, float(tat)))
                except ValueError:
                    continue  # (not ours: shown by nothing rather than breaking the page)
                if len(found) >= limit:
                    break

            def build(pipe: Any) -> None:
                pipe.time()
                for name, *_ in found:
                    pipe.zlexcount(k.gpend, f"[{name}\n", f"({name}\x0b")

            replies = execute_pipeline(self.client, build, operation="read queue groups")
        seconds, micros = replies[0]
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        counted = sorted(
            (
                (name, in_line, running, int(waiting), tat)
                for (name, in_line, running, tat), waiting in zip(found, replies[1:], strict=True)
            ),
            key=lambda g: (-(g[1] + g[2] + g[3]), g[0]),
        )
        return [
            {
                "group": name,
                "in_line": in_line,
                "running": running,
                "waiting": waiting,
                "rate_wait": max(0.0, (tat - now_ms) / 1000.0),
            }
            for name, in_line, running, waiting, tat in counted
        ]

    def push_many_with_records(self, pushes: Sequence[dict[str, Any]]) -> list[bool]:
        """Many :meth:`push_with_record` in one round trip (a pipeline of one script each):
        ``pushes`` are their keyword arguments (``only_new`` included). Every message is encoded
        first: one bad body and nothing is sent. With a message tracer, one send span covers
        them all. Returns, per push, whether it was pushed (False: ``only_new`` found its
        record)."""
        if not pushes:
            return []
        tracer = _messages.tracer
        ids = [validate_name(p["id"], "message id") for p in pushes]
        if tracer is None:
            return self._push_records(self.client, pushes, "")
        with tracer.send(self.name, ids) as sending:
            return self._push_records(self.client, pushes, sending.headers)

    async def apush_many_with_records(self, pushes: Sequence[dict[str, Any]]) -> list[bool]:
        """``push_many_with_records()`` on the event loop (see there)."""
        if not pushes:
            return []
        tracer = _messages.tracer
        ids = [validate_name(p["id"], "message id") for p in pushes]
        client = self._async_client()
        if tracer is None:
            return await self._push_records(client, pushes, "", awaited=True)
        with tracer.send(self.name, ids) as sending:
            return await self._push_records(client, pushes, sending.headers, awaited=True)

    def _push_records(
        self, client: Any, pushes: Sequence[dict[str, Any]], headers: str, *, awaited: bool = False
    ) -> Any:
        """Send the pushes (a pipeline of one script each); with ``awaited``, an awaitable of
        the replies for an asyncio ``client``."""
        runs = []
        for p in pushes:
            record = p["record"]
            pairs = [item for field in record.items() for item in field]
            g = self._group(p.get("group"))
            message = self._message_args(
                p["id"], p["body"], None, p.get("eta"), p.get("priority", 0), HAS_RECORD, headers, g
            )
            runs.append(
                (
                    self._group_push_keys(p["record_key"])
                    if g
                    else [*self._push_keys, p["record_key"]],
                    [
                        self._head()[0],
                        self._lifo,
                        len(record),
                        -p["ttl"] if p.get("only_new") else p["ttl"],
                        *pairs,
                        *message,
                    ],
                )
            )

        def build(pipe: Any) -> None:
            for keys, args in runs:
                PUSH.queue(pipe, keys, args)

        if awaited:
            return self._apushed_records(client, build)
        replies = execute_pipeline(client, build, operation=self._push_operation)
        self._registered = True
        return [bool(reply) for reply in replies]

    async def _apushed_records(self, client: Any, build: Callable[[Any], object]) -> list[bool]:
        replies = await aexecute_pipeline(client, build, operation=self._push_operation)
        self._registered = True
        return [bool(reply) for reply in replies]

    def push_many(
        self,
        bodies: Iterable[Any],
        *,
        delay: float | None = None,
        eta: datetime | None = None,
        priority: int = 0,
        group: str | Group | None = None,
    ) -> list[str]:
        """Add many messages in one round trip (a pipeline of batched scripts); return their ids.

        Every body is encoded before anything is sent: one bad body and
        nothing is pushed. With a message tracer, one send span covers the
        batch and every envelope carries its trace headers. ``group``: all of
        them join that group, in order.
        """
        g = self._group(group)
        tracer = _messages.tracer
        if tracer is None:
            return self._push_many(bodies, delay, eta, priority, None, "", g)
        bodies = list(bodies)
        ids = [uuid.uuid4().hex for _ in bodies]
        with tracer.send(self.name, ids) as sending:
            return self._push_many(bodies, delay, eta, priority, ids, sending.headers, g)

    def _push_many(
        self,
        bodies: Iterable[Any],
        delay: float | None,
        eta: datetime | None,
        priority: int,
        given: list[str] | None,
        headers: str,
        group: Group | None = None,
    ) -> list[str]:
        ids, batches, batch = [], [], []
        for i, body in enumerate(bodies):
            mid = uuid.uuid4().hex if given is None else given[i]
            ids.append(mid)
            batch.extend(self._message_args(mid, body, delay, eta, priority, 0, headers, group))
            if len(batch) >= MAX_BATCH * 3:
                batches.append(batch)
                batch = []
        if batch:
            batches.append(batch)
        if not batches:
            return ids
        head = self._head()
        keys = self._group_push_keys(None) if group else self._push_keys

        def build(pipe: Any) -> None:
            for chunk in batches:
                PUSH.queue(pipe, keys, head + chunk)

        execute_pipeline(self.client, build, operation=self._push_operation)
        self._registered = True
        return ids

    def _message_args(
        self,
        mid: str,
        body: Any,
        delay: float | None,
        eta: datetime | None,
        priority: int,
        flags: int = 0,
        headers: str = "",
        group: Group | None = None,
    ) -> list[Any]:
        check_count(priority, "priority", MIN_PRIORITY, MAX_PRIORITY)
        return [
            self._envelope(mid, body, priority, flags, headers, group),
            priority,
            delay_ms(delay, eta),
        ]

    def _envelope(
        self,
        mid: str,
        body: Any,
        priority: int,
        flags: int = 0,
        headers: str = "",
        group: Group | None = None,
    ) -> str:
        # Numeric fields first, the id last: an id may contain any allowed
        # character. enqueued_ms is this client's clock, like Django's
        # TaskResult.enqueued_at; it is shown, never compared (due times and
        # order use the server's). Trace headers (one line of JSON, flag
        # TRACED) go between the header and the body, where the scripts,
        # which never read a body, carry them along untouched.
        text = body if isinstance(body, EncodedJSON) else encode_body(body)
        if headers:
            if "\n" in headers:
                raise ValueError("trace headers must be one line of JSON text")
            flags |= TRACED
            text = f"{headers}\n{text}"
        if group is not None:  # its line first (queues/common.lua, Groups)
            flags |= GROUPED
            text = f"{group.line()}\n{text}"
        return f"0|{self.max_attempts}|{int(time.time() * 1000)}|{priority}|{flags}|{mid}\n{text}"

    def _group(self, group: Any) -> Group | None:
        """``group`` as a Group (None: none); a LIFO queue takes none."""
        g = as_group(group)
        if g is not None and self.lifo:
            raise ValueError(
                f"queue {self.name!r} is LIFO and groups run in order: push grouped messages "
                "to a FIFO queue"
            )
        return g

    def _group_push_keys(self, record_key: str | None) -> list[str]:
        """queues/push.lua's keys for grouped messages (the record's slot: any key when
        there is no record)."""
        k = self.keys
        return [*self._push_keys, record_key or k.ready, k.gpend, k.gstate, k.gwait]

    def _head(self) -> list[Any]:
        """Queue name for the index (only until a push of ours succeeded), the order, no record."""
        return ["" if self._registered else self.name, self._lifo, 0, 0]

    # -- consuming --------------------------------------------------------------

    def consumer(self, consumer_id: str, *, timeout: float | None = None) -> Consumer:
        """A consumer of this queue with its own processing list."""
        return Consumer(self, consumer_id, timeout=timeout)

    def reap(self, max_consumers: int = 100) -> tuple[int, int, int]:
        """Requeue the in-flight messages of consumers whose heartbeat lapsed.

        Returns (requeued, dead_lettered, consumers_reaped).
        """
        k = self.keys
        result = REAP(
            self.client,
            [k.consumers, k.ready, *k.settling()],
            [max_consumers, self.dead_letter_limit or 0],
            operation=f"reap queue {self.name!r}",
        )
        return tuple(int(x) for x in result[:3])  # type: ignore[return-value]

    def unsettled(self, limit: int = 100) -> list[tuple[str, dict[str, Any], Any]]:
        """Dead letters whose result record is still to be marked FAILED.

        Returns ``(message id, {error, attempts, failed_ms}, entry)`` for the
        oldest ``limit``; pass the entries to :meth:`settled` once marked.
        Written by the scripts that dead-letter a message with a record, so
        none is forgotten if the process that dead-lettered it dies.
        """
        entries = command(
            self.client,
            "LRANGE",
            self.keys.settle,
            0,
            limit - 1,
            operation=f"read dead letters to settle of {self.name!r}",
        )
        out = []
        for entry in entries:
            mid, _, detail = as_text(entry).partition("\n")
            try:
                out.append((mid, json.loads(detail), entry))
            except ValueError:
                out.append((mid, {"error": detail}, entry))
        return out

    def settled(self, entries: Sequence[Any]) -> None:
        """Forget settle entries (from :meth:`unsettled`) whose records are marked."""
        if entries:
            key = self.keys.settle
            execute_pipeline(
                self.client,
                lambda pipe: [pipe.lrem(key, 1, entry) for entry in entries],
                operation=f"settle dead letters of {self.name!r}",
            )

    # -- operating --------------------------------------------------------------

    def depths(self) -> Depths:
        return depths([self], client=self.client)[self.name]

    def pause(self, reason: str = "") -> bool:
        """Pause the queue: its workers claim nothing new from it until :meth:`resume`.

        Pushes, delays and retries go on (nothing is lost or refused); a job a
        worker already claimed still runs (each worker thread holds up to
        ``WORKER_PREFETCH`` claimed messages). The pause lasts until resumed,
        across restarts of the workers (not of a Redis that loses its data).
        ``reason`` (at most 500 characters) is shown on the dashboard.
        Returns False if it was already paused (its first time and reason stay).
        """
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a string, not {reason!r}")
        if len(reason) > 500:
            raise ValueError(f"reason must be at most 500 characters, not {len(reason)}")
        k = self.keys
        done = PAUSE(
            self.client,
            [k.paused, k.ready, k.wake, k.index],
            ["pause", reason, self.name],
            operation=f"pause queue {self.name!r}",
        )
        return int(done) == 1

    def resume(self) -> bool:
        """Resume a paused queue: its idle workers are woken if messages are ready.
        Returns False if it was not paused."""
        k = self.keys
        done = PAUSE(
            self.client,
            [k.paused, k.ready, k.wake, k.index],
            ["resume", "", self.name],
            operation=f"resume queue {self.name!r}",
        )
        return int(done) == 1

    def paused(self) -> dict | None:
        """``{"since_ms", "reason"}`` while the queue is paused, else None (one command)."""
        with unavailable_as_ours(self.client, f"read whether queue {self.name!r} is paused"):
            raw = self.client.get(self.keys.paused)
        return _pause_record(raw) if raw else None

    def dead_letters(self, limit: int = 100) -> list[tuple[Message, dict]]:
        """The oldest dead letters with their last error ({error, attempts, failed_ms})."""
        with unavailable_as_ours(self.client, f"read dead letters of {self.name!r}"):
            raws = self.client.lrange(self.keys.dead, 0, limit - 1)
            messages = [Message.parse(raw, self.name) for raw in raws]
            errors = (
                self.client.hmget(self.keys.errors, [m.id for m in messages]) if messages else []
            )
        return [(m, json.loads(e) if e else {}) for m, e in zip(messages, errors, strict=True)]

    def requeue_dead(self, limit: int = MAX_BATCH) -> int:
        """Move up to ``limit`` dead letters back to ready, attempts reset; return how many.

        A requeued message is flagged REQUEUED: the Tasks runner reopens its
        result record on its next delivery (the old outcome would refuse the
        new one's)."""
        k = self.keys
        moved = 0
        while moved < limit:
            n = int(
                REQUEUE_DEAD(
                    self.client,
                    [
                        k.dead,
                        k.ready,
                        k.errors,
                        k.seq,
                        k.wake,
                        k.settle,
                        k.gpend,
                        k.gstate,
                        k.gwait,
                    ],
                    [min(MAX_BATCH, limit - moved), "1" if self.lifo else "0"],
                    operation=f"requeue dead letters of {self.name!r}",
                )
            )
            moved += n
            if n == 0:
                break
        return moved

    def requeue_dead_letter(self, id: str) -> bool:
        """Move the dead letter ``id`` back to ready, attempts reset (one script); return whether
        it was there.

        False when no dead letter has that id (requeued, deleted, or dropped
        past ``dead_letter_limit`` since it was seen). Raises ValueError or
        TypeError for an id that is not an allowed name.
        """
        k = self.keys
        found = REQUEUE_DEAD_LETTER(
            self.client,
            [k.dead, k.ready, k.errors, k.seq, k.wake, k.settle, k.gpend, k.gstate, k.gwait],
            [validate_name(id, "message id"), self._lifo],
            operation=f"requeue dead letter {id!r} of {self.name!r}",
        )
        return int(found) == 1

    def delete_dead_letter(self, id: str) -> bool:
        """Delete the dead letter ``id`` and its error (one script); return whether it was there."""
        k = self.keys
        found = DELETE_DEAD_LETTER(
            self.client,
            [k.dead, k.errors],
            [validate_name(id, "message id")],
            operation=f"delete dead letter {id!r} of {self.name!r}",
        )
        return int(found) == 1

    def purge(self) -> int:
        """Drop every waiting message: ready, delayed, grouped (in-flight and dead ones stay;
        a group keeps counting its in-flight ones). Returns how many were dropped."""
        k = self.keys
        return int(
            PURGE(
                self.client, [*k.grouping(), k.delayed], [], operation=f"purge queue {self.name!r}"
            )
        )

    def purge_dead(self) -> None:
        """Drop every dead letter and its error."""
        with unavailable_as_ours(self.client, f"purge dead letters of {self.name!r}"):
            self.client.delete(self.keys.dead, self.keys.errors)


def depths(queues: Sequence[Queue], *, client: Any = None) -> dict[str, Depths]:
    """Depths of many queues in one round trip (a pipeline of one script per queue)."""
    if not queues:
        return {}
    client = client or queues[0].client

    def build(pipe: Any) -> None:
        for q in queues:
            DEPTHS.queue(
                pipe,
                [
                    q.keys.ready,
                    q.keys.delayed,
                    q.keys.dead,
                    q.keys.consumers,
                    q.keys.paused,
                    q.keys.gpend,
                    q.keys.gwait,
                    q.keys.gstate,
                ],
                [],
            )

    replies = execute_pipeline(client, build, operation="read queue depths")
    out = {}
    for q, (ready, delayed, processing, dead, consumers, age, groups, *paused) in zip(
        queues, replies, strict=True
    ):
        pause = _pause_record(paused[0]) if paused and paused[0] else None
        out[q.name] = Depths(
            ready,
            delayed,
            processing,
            dead,
            consumers,
            None if age < 0 else age / 1000.0,
            pause,
            groups,
        )
    return out


def _pause_record(raw: Any) -> dict:
    """A pause as queues/pause.lua wrote it; something else there still reads as a pause (of
    unknown time)."""
    try:
        record = json.loads(raw)
        return {"since_ms": int(record["since_ms"]), "reason": str(record.get("reason", ""))}
    except (ValueError, TypeError, KeyError):
        return {"since_ms": 0, "reason": ""}


@dataclass(frozen=True)
class Sample:
    """One queue's state at a minute of the server's clock (see :func:`sample_history`).

    ``minute`` is unix time // 60 s; ``depth`` is ready + delayed + processing;
    ``done`` is the running count of messages its workers finished (it only
    grows, but restarts from 0 if nobody reported for ``HISTORY_TTL``).
    """

    minute: int
    depth: int
    done: int


def sample_history(
    queues: Sequence[Queue], done: Sequence[int], *, client: Any = None
) -> list[bool]:
    """Report on the queues a worker serves, and sample each if nobody did this minute.

    Called by a worker's heartbeat once a minute: one round trip (a pipeline
    of one script per queue, each in its queue's slot). ``done[i]`` (messages
    of ``queues[i]`` the worker finished since its last report) is added to
    that queue's count. Returns, per queue, whether this call wrote the
    minute's sample.
    """
    if not queues:
        return []
    if len(done) != len(queues):
        raise ValueError(
            f"sample_history: {len(done)} counts for {len(queues)} queues; give one count per queue"
        )
    client = client or queues[0].client

    def build(pipe: Any) -> None:
        for q, n in zip(queues, done, strict=True):
            k, kb = q.keys, q.key_builder
            SAMPLE.queue(
                pipe,
                [
                    k.ready,
                    k.delayed,
                    k.consumers,
                    kb.queue_counts(q.name),
                    kb.queue_history(q.name),
                ],
                [max(0, int(n)), HISTORY_SAMPLES, HISTORY_TTL],
            )

    replies = execute_pipeline(client, build, operation="sample queue history")
    return [int(r) == 1 for r in replies]


def read_history(queues: Sequence[Queue], *, client: Any = None) -> dict[str, list[Sample]]:
    """The samples of many queues, oldest first, in one round trip."""
    if not queues:
        return {}
    client = client or queues[0].client
    replies = execute_pipeline(
        client,
        lambda pipe: [
            pipe.lrange(q.key_builder.queue_history(q.name), 0, HISTORY_SAMPLES - 1) for q in queues
        ],
        operation="read queue history",
    )
    out = {}
    for q, entries in zip(queues, replies, strict=True):
        samples = []
        for entry in reversed(entries):
            try:
                minute, depth, count = (int(x) for x in as_text(entry).split(" "))
            except ValueError:
                continue  # not ours: skip it rather than fail the page
            samples.append(Sample(minute, depth, count))
        out[q.name] = samples
    return out
