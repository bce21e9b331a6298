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

from . import conf
from .connection import UsesClient, unavailable_as_ours
from .exceptions import CoordinationUnavailable
from .keys import KeyBuilder, QueueKeys, validate_name
from .scripting import Script, execute_pipeline

_COMMON = ("queue_common.lua",)
_PUSH = Script("queue_push", includes=_COMMON)
_CLAIM = Script("queue_claim", includes=_COMMON)
_NACK = Script("queue_nack", includes=_COMMON)
_REAP = Script("queue_reap", includes=_COMMON)
_HAND_BACK = Script("queue_hand_back", includes=_COMMON)
_DEPTHS = Script("queue_depths", includes=_COMMON)
_REQUEUE_DEAD = Script("queue_requeue_dead", includes=_COMMON)

MIN_PRIORITY, MAX_PRIORITY = -100, 100
MAX_BATCH = 1000  # messages per script call (Lua unpack() breaks near 8,000)


@dataclass(frozen=True)
class Message:
    """A delivered message. ``attempt`` counts earlier failed deliveries."""

    id: str
    body: Any
    attempt: int
    max_attempts: int
    enqueued_ms: int
    priority: int
    queue: str
    raw: bytes

    @property
    def enqueued_at(self) -> datetime:
        return datetime.fromtimestamp(self.enqueued_ms / 1000, tz=timezone.utc)

    @classmethod
    def parse(cls, raw: bytes, queue: str) -> Message:
        header, _, body = raw.partition(b"\n")
        mid, failed, max_attempts, enqueued, priority = header.decode().split("|")
        return cls(mid, json.loads(body), int(failed), int(max_attempts), int(enqueued), int(priority), queue, raw)


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
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"queue messages must be JSON-serialisable (dict, list, str, int, float, bool, None): {exc}") from None


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
        client, prefix: as for :class:`~django_redcoord.locks.Lock`.
    """

    def __init__(
        self,
        name: str,
        *,
        lifo: bool = False,
        max_attempts: int | None = None,
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
        self._client = client
        self.key_builder = KeyBuilder(prefix or conf.default_prefix())
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
        if id is None:
            mid = uuid.uuid4().hex
        else:
            mid = validate_name(id, "message id")
        if priority or delay is not None or eta is not None:
            args = [*self._head(), *self._message_args(mid, body, delay, eta, priority)]
        else:  # the common case, without the argument checks it does not need
            args = [*self._head(), self._envelope(mid, body, 0), 0, 0]
        _PUSH(self.client, self._push_keys, args, operation=self._push_operation)
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
                *self._message_args(validate_name(id, "message id"), body, None, eta, priority)]  # fmt: skip
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

    def _message_args(self, mid: str, body: Any, delay: float | None, eta: datetime | None, priority: int) -> list[Any]:
        check_count(priority, "priority", MIN_PRIORITY, MAX_PRIORITY)
        return [self._envelope(mid, body, priority), priority, _delay_ms(delay, eta)]

    def _envelope(self, mid: str, body: Any, priority: int) -> str:
        # enqueued_ms is this client's clock, like Django's TaskResult.enqueued_at;
        # it is shown, never compared (due times and order use the server's).
        return f"{mid}|0|{self.max_attempts}|{int(time.time() * 1000)}|{priority}\n{encode_body(body)}"

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
            [k.consumers, k.ready, k.dead, k.errors, k.wake],
            [max_consumers],
            operation=f"reap queue {self.name!r}",
        )
        return tuple(int(x) for x in result)  # type: ignore[return-value]

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
    return conf.config_or_defaults()


def retry_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with full jitter: uniform in [base/2, min(cap, base * 2**attempt)]."""
    high = min(cap, base * (2 ** min(attempt, 40)))
    return random.uniform(min(base / 2, high), high)


class Consumer:
    """One consumer of one queue: claims into its own processing list.

    Not thread-safe: one consumer per thread. ``timeout`` (seconds, default
    ``REDCOORD["WORKER_TIMEOUT"]``) is how long the consumer may go without a
    claim or :meth:`heartbeat` before the reaper takes its messages back.
    """

    def __init__(self, queue: Queue, consumer_id: str, *, timeout: float | None = None) -> None:
        self.queue = queue
        self.id = consumer_id
        self.processing = queue.keys.processing(consumer_id)
        settings = queue_defaults()
        self.timeout = float(timeout if timeout is not None else settings["WORKER_TIMEOUT"])
        self.retry_base = float(settings["QUEUE_RETRY_DELAY"])
        self.retry_cap = float(settings["QUEUE_RETRY_MAX_DELAY"])
        self._acks: list[bytes] = []
        self._rotations = 0
        self._timeout_ms = int(self.timeout * 1000)
        self._lifo = "1" if queue.lifo else "0"

    def claim(self, n: int) -> tuple[list[Message], float | None]:
        """Acknowledge what :meth:`ack` collected, then claim up to ``n`` messages.

        Returns (messages, hint): when no message was claimed, ``hint`` is the
        seconds until the next delayed message is due (None: none is).
        """
        if n:
            check_count(n, "n", 0, MAX_BATCH)
        k = self.queue.keys
        acks, self._acks = self._acks, []
        keys = [k.ready, k.delayed, self.processing, k.consumers, k.wake, k.seq]
        args = [n, self._timeout_ms, self._lifo, *acks]
        try:
            reply = _CLAIM(self.queue.client, keys, args, operation=f"claim from queue {self.queue.name!r}")
        except CoordinationUnavailable:
            # Unknown outcome: the claim may have moved messages onto our list
            # that we never saw, and our heartbeat would keep them there. Move
            # on to a fresh processing list; the old one stops heartbeating and
            # the reaper returns what it holds (finished ones run again).
            self._rotations += 1
            self.processing = self.queue.keys.processing(f"{self.id}~{self._rotations}")
            raise
        name = self.queue.name
        messages = [Message.parse(raw, name) for raw in reply[1:]]
        hint = int(reply[0])
        return messages, (None if hint < 0 else hint / 1000.0)

    def ack(self, message: Message) -> None:
        """Mark ``message`` done; sent with the next :meth:`claim` or :meth:`flush`."""
        self._acks.append(message.raw)

    def flush(self) -> None:
        """Send pending acknowledgements now (and renew the heartbeat)."""
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
            [self.processing, k.delayed, k.dead, k.errors, k.wake],
            [message.raw, max(1, int(delay * 1000)), error[:4000], "1" if dead else "0"],
            operation=f"nack on queue {self.queue.name!r}",
        )
        return {0: "gone", 1: "retry", 2: "dead"}[int(result)]

    def hand_back(self, messages: Sequence[Message], *, retire: bool = False) -> int:
        """Return unstarted messages to the front of the queue; with ``retire``, leave."""
        self.flush()
        k = self.queue.keys
        return int(
            _HAND_BACK(
                self.queue.client,
                [self.processing, k.ready, k.consumers, k.wake],
                ["1" if retire else "0", *(m.raw for m in messages)],
                operation=f"hand back to queue {self.queue.name!r}",
            )
        )
