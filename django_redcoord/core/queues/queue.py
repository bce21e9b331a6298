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
import math
import random
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..exceptions import CoordinationUnavailable
from ..keys import KeyBuilder, QueueKeys, validate_name
from ..runtime import default_prefix, runtime
from ..transport.clients import UsesClient, as_text, unavailable_as_ours
from ..transport.drivers import Run, Steps, arun, run
from ..transport.scripts import Script, command, execute_pipeline

_COMMON = ("queues/common",)
_PUSH = Script("queues/push", includes=_COMMON)
_CLAIM = Script("queues/claim", includes=_COMMON)
_NACK = Script("queues/nack", includes=_COMMON)
_REAP = Script("queues/reap", includes=_COMMON)
_HAND_BACK = Script("queues/hand_back", includes=_COMMON)
_DEPTHS = Script("queues/depths", includes=_COMMON)
_REQUEUE_DEAD = Script("queues/requeue_dead", includes=_COMMON)

MIN_PRIORITY, MAX_PRIORITY = -100, 100
DEFAULT_LIMIT: Any = type("DefaultLimit", (), {"__repr__": lambda self: "DEFAULT"})()
MAX_BATCH = 1000  # messages per script call (Lua unpack() breaks near 8,000)


#: Flag of an envelope whose message has a result record (a Django Task).
HAS_RECORD = 1


@dataclass(frozen=True)
class Message:
    """A delivered message. ``attempt`` counts earlier failed deliveries.

    ``error`` is set (and ``body`` is None) for a message that cannot be read
    (not JSON, nested too deeply, a damaged envelope): the worker
    dead-letters it instead of running anything.
    """

    id: str
    body: Any
    attempt: int
    max_attempts: int
    enqueued_ms: int
    priority: int
    queue: str
    raw: bytes | str
    flags: int = 0
    error: str | None = None

    @property
    def enqueued_at(self) -> datetime:
        return datetime.fromtimestamp(self.enqueued_ms / 1000, tz=timezone.utc)

    @classmethod
    def parse(cls, raw: bytes | str, queue: str) -> Message:
        """Read an envelope (see queue_common.lua); never raises: see ``error``."""
        try:
            text = raw if isinstance(raw, str) else raw.decode()
            header, _, body = text.partition("\n")
            fields = header.split("|", 5)
            if len(fields) == 6:  # failed|max|enqueued_ms|priority|flags|id
                failed, max_attempts, enqueued, priority, flags, mid = fields
            else:  # the first format: id|failed|max|enqueued_ms|priority (no `|` in ids)
                mid, failed, max_attempts, enqueued, priority = fields
                flags = "0"
            numbers = int(failed), int(max_attempts), int(enqueued), int(priority), int(flags)
        except (ValueError, UnicodeDecodeError) as exc:
            return cls("", None, 0, 1, 0, 0, queue, raw, 0, f"damaged envelope: {exc}")
        try:
            value = json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = f"body is not readable JSON: {type(exc).__name__}: {str(exc)[:200]}"
            return cls(mid, None, numbers[0], numbers[1], numbers[2], numbers[3], queue, raw, numbers[4], error)
        return cls(mid, value, numbers[0], numbers[1], numbers[2], numbers[3], queue, raw, numbers[4])


@dataclass(frozen=True)
class Depths:
    """Counts of one queue; ``head_age`` is the age (s) of the next message, or None."""

    ready: int
    delayed: int
    processing: int
    dead: int
    consumers: int
    head_age: float | None


def check_count(value: object, what: str, low: int, high: int) -> int:
    """Validate a whole number in [low, high]; the message says what is allowed."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return value


def encode_body(body: Any) -> str:
    """JSON text of ``body``; raises TypeError naming what cannot be sent (nothing is pickled)."""
    return to_json(body, "queue messages")


class EncodedJSON(str):
    """JSON text already encoded by :func:`to_json`: pushed as it is, not encoded again."""

    __slots__ = ()


def to_json(value: Any, what: str) -> str:
    """Strict JSON text of ``value``, or TypeError saying what is allowed.

    Refused: what JSON cannot hold (sets, bytes, objects...), NaN and
    infinities (``json.dumps`` would write non-JSON ``NaN``), and values
    nested deeper than Python can encode.
    """
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise TypeError(f"{what} are nested too deeply to be encoded as JSON") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must be JSON-serialisable (dict, list, str, int, finite float, bool, None): {exc}"
        ) from None


def _delay_ms(delay: float | None, eta: datetime | None) -> int:
    if delay is not None and eta is not None:
        raise TypeError("pass either delay= (seconds) or eta= (an aware datetime), not both")
    if eta is not None:
        if not isinstance(eta, datetime) or eta.tzinfo is None:
            raise TypeError(f"eta must be a timezone-aware datetime, not {eta!r}")
        delay = (eta - datetime.now(timezone.utc)).total_seconds()
        return max(0, math.ceil(delay * 1000))
    if delay is None:
        return 0
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not math.isfinite(delay) or delay < 0:
        raise ValueError(f"delay must be seconds >= 0, not {delay!r}")
    return math.ceil(delay * 1000)


class Queue(UsesClient):
    """A named queue. Cheap to create; holds no connection of its own.

    Args:
        name: letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
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
        dead_letter_limit: int | None = DEFAULT_LIMIT,
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
        if dead_letter_limit is DEFAULT_LIMIT:
            dead_letter_limit = queue_defaults().get("QUEUE_DEAD_LETTER_LIMIT", 10_000)
        if dead_letter_limit is not None:
            check_count(dead_letter_limit, "dead_letter_limit", 1, 1_000_000_000)
        self.dead_letter_limit = dead_letter_limit
        self._client = client
        self.key_builder = KeyBuilder(prefix or default_prefix())
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
        self, body: Any, *, delay: float | None = None, eta: datetime | None = None, priority: int = 0, id: str | None = None
    ) -> str:
        """Add one message (one round trip); return its id.

        ``delay`` (seconds) or ``eta`` (aware datetime) defers delivery;
        ``priority`` from -100 to 100, higher first. Raises TypeError for a
        body that is not JSON-serialisable.
        """
        return run(self.client, self._push_steps(body, delay, eta, priority, id))

    async def apush(
        self, body: Any, *, delay: float | None = None, eta: datetime | None = None, priority: int = 0, id: str | None = None
    ) -> str:
        """``push()`` on the event loop, with a ``redis.asyncio`` client (see there)."""
        return await arun(self._async_client(), self._push_steps(body, delay, eta, priority, id))

    def _push_steps(self, body: Any, delay: float | None, eta: datetime | None, priority: int, id: str | None) -> Steps:
        if id is None:
            mid = uuid.uuid4().hex
        else:
            mid = validate_name(id, "message id")
        if priority or delay is not None or eta is not None:
            args = [*self._head(), *self._message_args(mid, body, delay, eta, priority)]
        else:  # the common case, without the argument checks it does not need
            args = [*self._head(), self._envelope(mid, body, 0), 0, 0]
        yield Run(_PUSH, self._push_keys, args, self._push_operation)
        self._registered = True
        return mid

    def push_with_record(
        self, body: Any, *, id: str, record_key: str, record: dict[str, Any], ttl: int,
        eta: datetime | None = None, priority: int = 0,
    ) -> None:  # fmt: skip
        """Push one message and write a hash (``record``, expiring after ``ttl``
        seconds) in the same command: a Django Task and its result record."""
        pairs = [item for field in record.items() for item in field]
        args = [self._head()[0], self._lifo, len(record), ttl, *pairs,
                *self._message_args(validate_name(id, "message id"), body, None, eta, priority, HAS_RECORD)]  # fmt: skip
        _PUSH(self.client, [*self._push_keys, record_key], args, operation=self._push_operation)
        self._registered = True

    def push_many(
        self, bodies: Iterable[Any], *, delay: float | None = None, eta: datetime | None = None, priority: int = 0
    ) -> list[str]:
        """Add many messages in one round trip (a pipeline of batched scripts); return their ids.

        Every body is encoded before anything is sent: one bad body and
        nothing is pushed.
        """
        ids, batches, batch = [], [], []
        for body in bodies:
            mid = uuid.uuid4().hex
            ids.append(mid)
            batch.extend(self._message_args(mid, body, delay, eta, priority))
            if len(batch) >= MAX_BATCH * 3:
                batches.append(batch)
                batch = []
        if batch:
            batches.append(batch)
        if not batches:
            return ids
        head = self._head()

        def build(pipe: Any) -> None:
            for chunk in batches:
                _PUSH.queue(pipe, self._push_keys, head + chunk)

        execute_pipeline(self.client, build, operation=self._push_operation)
        self._registered = True
        return ids

    def _message_args(
        self, mid: str, body: Any, delay: float | None, eta: datetime | None, priority: int, flags: int = 0
    ) -> list[Any]:
        check_count(priority, "priority", MIN_PRIORITY, MAX_PRIORITY)
        return [self._envelope(mid, body, priority, flags), priority, _delay_ms(delay, eta)]

    def _envelope(self, mid: str, body: Any, priority: int, flags: int = 0) -> str:
        # Numeric fields first, the id last: an id may contain any allowed
        # character. enqueued_ms is this client's clock, like Django's
        # TaskResult.enqueued_at; it is shown, never compared (due times and
        # order use the server's).
        text = body if isinstance(body, EncodedJSON) else encode_body(body)
        return f"0|{self.max_attempts}|{int(time.time() * 1000)}|{priority}|{flags}|{mid}\n{text}"

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
        result = _REAP(
            self.client,
            [k.consumers, k.ready, k.dead, k.errors, k.wake, k.settle],
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
            self.client, "LRANGE", self.keys.settle, 0, limit - 1, operation=f"read dead letters to settle of {self.name!r}"
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

    def dead_letters(self, limit: int = 100) -> list[tuple[Message, dict]]:
        """The oldest dead letters with their last error ({error, attempts, failed_ms})."""
        with unavailable_as_ours(self.client, f"read dead letters of {self.name!r}"):
            raws = self.client.lrange(self.keys.dead, 0, limit - 1)
            messages = [Message.parse(raw, self.name) for raw in raws]
            errors = self.client.hmget(self.keys.errors, [m.id for m in messages]) if messages else []
        return [(m, json.loads(e) if e else {}) for m, e in zip(messages, errors, strict=True)]

    def requeue_dead(self, limit: int = MAX_BATCH) -> int:
        """Move up to ``limit`` dead letters back to ready, attempts reset; return how many."""
        k = self.keys
        moved = 0
        while moved < limit:
            n = int(
                _REQUEUE_DEAD(
                    self.client,
                    [k.dead, k.ready, k.errors, k.seq, k.wake],
                    [min(MAX_BATCH, limit - moved), "1" if self.lifo else "0"],
                    operation=f"requeue dead letters of {self.name!r}",
                )
            )
            moved += n
            if n == 0:
                break
        return moved

    def purge(self) -> None:
        """Drop every ready and delayed message (in-flight and dead ones stay)."""
        with unavailable_as_ours(self.client, f"purge queue {self.name!r}"):
            self.client.delete(self.keys.ready, self.keys.delayed)

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
            _DEPTHS.queue(pipe, [q.keys.ready, q.keys.delayed, q.keys.dead, q.keys.consumers], [])

    replies = execute_pipeline(client, build, operation="read queue depths")
    out = {}
    for q, (ready, delayed, processing, dead, consumers, age) in zip(queues, replies, strict=True):
        out[q.name] = Depths(ready, delayed, processing, dead, consumers, None if age < 0 else age / 1000.0)
    return out


def queue_defaults() -> dict[str, Any]:
    """The REDCOORD queue/worker settings, or their defaults without Django."""
    return runtime.config


def retry_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with full jitter: uniform in [base/2, min(cap, base * 2**attempt)]."""
    high = min(cap, base * (2 ** min(attempt, 40)))
    return random.uniform(min(base / 2, high), high)


class Consumer:
    """One consumer of one queue: claims into its own processing list.

    Not thread-safe: one consumer per thread. ``timeout`` (seconds, default
    ``REDCOORD["WORKER_TIMEOUT"]``) is how long the consumer may go without a
    claim or :meth:`heartbeat` before the reaper takes its messages back.

    Every call may fail with CoordinationUnavailable and be repeated: the
    acknowledgements of a failed claim are sent with the next one, a claim
    whose reply was lost is delivered again by the next claim (once the
    consumer holds nothing unacknowledged), and a nack that could not be sent
    can be kept (:meth:`defer_nack`) and is sent before the next claim.
    """

    def __init__(self, queue: Queue, consumer_id: str, *, timeout: float | None = None) -> None:
        self.queue = queue
        self.id = consumer_id
        self.processing = queue.keys.processing(consumer_id)
        settings = queue_defaults()
        self.timeout = float(timeout if timeout is not None else settings["WORKER_TIMEOUT"])
        self.retry_base = float(settings["QUEUE_RETRY_DELAY"])
        self.retry_cap = float(settings["QUEUE_RETRY_MAX_DELAY"])
        self._acks: list[Any] = []
        self._held: set[Any] = set()  # delivered to us, not yet acknowledged, nacked or handed back
        self._nacks: list[tuple[Message, str, bool, float | None]] = []  # to send before the next claim
        self._timeout_ms = int(self.timeout * 1000)
        self._lifo = "1" if queue.lifo else "0"

    @property
    def holding(self) -> int:
        """Messages delivered to this consumer and not yet settled (nacks waiting included)."""
        return len(self._held)

    def claim(self, n: int) -> tuple[list[Message], float | None]:
        """Acknowledge what :meth:`ack` collected, then claim up to ``n`` messages.

        Returns (messages, hint): when no message was claimed, ``hint`` is the
        seconds until the next delayed message is due (None: none is).
        """
        if n:
            check_count(n, "n", 0, MAX_BATCH)
        self._send_nacks()
        k = self.queue.keys
        acks, self._acks = self._acks, []
        keys = [k.ready, k.delayed, self.processing, k.consumers, k.wake, k.seq]
        recover = "0" if self._held else "1"
        args = [n, self._timeout_ms, self._lifo, recover, *acks]
        try:
            reply = _CLAIM(self.queue.client, keys, args, operation=f"claim from queue {self.queue.name!r}")
        except CoordinationUnavailable:
            # Unknown outcome: the acknowledgements go again with the next
            # claim (removing an envelope twice is harmless); messages this
            # claim may have moved onto our list come back with it (recover).
            self._acks = acks + self._acks
            raise
        name = self.queue.name
        messages = [Message.parse(raw, name) for raw in reply[1:]]
        self._held.update(m.raw for m in messages)
        hint = int(reply[0])
        return messages, (None if hint < 0 else hint / 1000.0)

    def ack(self, message: Message) -> None:
        """Mark ``message`` done; sent with the next :meth:`claim` or :meth:`flush`."""
        self._acks.append(message.raw)
        self._held.discard(message.raw)

    def flush(self) -> None:
        """Send pending acknowledgements and nacks now (and renew the heartbeat)."""
        self.claim(0)

    heartbeat = flush

    def nack(self, message: Message, error: str, *, dead: bool = False, delay: float | None = None) -> str:
        """The delivery failed: retry later with backoff, or dead-letter after the last attempt.

        Returns "retry", "dead", or "gone" (the reaper already took it back).
        """
        k = self.queue.keys
        if delay is None:
            delay = retry_delay(message.attempt, self.retry_base, self.retry_cap)
        result = _NACK(
            self.queue.client,
            [self.processing, k.delayed, k.dead, k.errors, k.wake, k.settle],
            [message.raw, max(1, int(delay * 1000)), error[:4000], "1" if dead else "0", self.queue.dead_letter_limit or 0],
            operation=f"nack on queue {self.queue.name!r}",
        )
        self._held.discard(message.raw)
        return {0: "gone", 1: "retry", 2: "dead"}[int(result)]

    def defer_nack(self, message: Message, error: str, *, dead: bool = False, delay: float | None = None) -> None:
        """Keep a nack that could not be sent (Redis away); it is sent before the next claim.

        Until then the message stays on this consumer's list, heartbeated:
        nobody else runs it, and nothing else of the batch is held up.
        """
        self._nacks.append((message, error, dead, delay))

    def _send_nacks(self) -> None:
        while self._nacks:
            message, error, dead, delay = self._nacks[0]
            self.nack(message, error, dead=dead, delay=delay)
            self._nacks.pop(0)

    def hand_back(self, messages: Sequence[Message], *, retire: bool = False) -> int:
        """Return unstarted messages to the front of the queue; with ``retire``, leave."""
        self.flush()
        k = self.queue.keys
        n = int(
            _HAND_BACK(
                self.queue.client,
                [self.processing, k.ready, k.consumers, k.wake],
                ["1" if retire else "0", *(m.raw for m in messages)],
                operation=f"hand back to queue {self.queue.name!r}",
            )
        )
        for m in messages:
            self._held.discard(m.raw)
        return n
