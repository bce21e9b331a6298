"""Durable topics on Redis Streams: messages that must not be lost, each group reading all of them.

::

    orders = Topic("orders", maxlen=100_000)
    orders.publish({"id": 7})                     # kept until trimmed (about maxlen messages)

    mail = orders.subscribe("mailer")             # a consumer group: each message once per group
    for message in mail.receive(count=10, timeout=5):
        send_mail(message.data)
        mail.ack(message)                         # not acked within the lease: delivered again

A topic is a stream; each ``subscribe(group)`` is a consumer group, so every
group sees every message, and within a group each message goes to one
subscriber. **A lease per subscriber:** a message delivered to a subscriber
that does not acknowledge it within ``lease`` seconds (it died, or hangs) is
taken over by the group's next ``receive()`` (``XAUTOCLAIM``) — at least once,
never lost. **Bounded retention:** about ``maxlen`` messages are kept
(``XADD MAXLEN ~``). ``receive`` blocks on the stream (no polling), in chunks
below the socket timeout, and rides out dropped connections and outages while
its timeout lasts. **A vanished group** (Redis lost it: a restart without
persistence, a failover, ``XGROUP DESTROY``) is created again by the next
``receive()``, after the last message this subscriber received (see the
docs/signals.md for what is lost); never a raw ``NOGROUP``.
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis

from ..exceptions import CoordinationUnavailable, PoolExhausted
from ..holds.steps import OUTAGE_RETRY
from ..keys import validate_name
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, max_block
from ..transport.drivers import Blocking, Command, Pause, Run, Steps, Within, arun, run
from ..transport.scripts import Script
from ..values import check_count, check_seconds, check_wait
from .event import to_json

log = logging.getLogger("django_redcoord.topics")

PUBLISH = Script("signals/topic_publish")
RECEIVE = Script("signals/topic_receive")
#: A consumer of a group (a subscriber) that holds no message and did nothing this long (s) is
#: deleted by a receive of the group (see topic_receive.lua); its next read creates it again.
CONSUMER_IDLE = 600.0


@dataclass(frozen=True)
class TopicMessage:
    """A message received from a topic: ``id`` (the stream id), ``data``, and
    ``redelivered`` (True when taken over from a subscriber whose lease ran out)."""

    id: str
    data: Any
    redelivered: bool = False


class Topic(UsesClient):
    """A durable topic: ``publish()`` / ``apublish()``, and ``subscribe(group)``.

    Args:
        name: ASCII letters, digits and ``_ - . : / @ = + , # ~ |``, at most 200 characters.
        maxlen: about how many messages it keeps (default 10,000); older ones
            are trimmed, read or not.
        client, prefix: as for a lock.
    """

    def __init__(
        self, name: str, *, maxlen: int = 10_000, client: Any = None, prefix: str | None = None
    ) -> None:
        self.name = validate_name(name, "topic name")
        self.maxlen = check_count(maxlen, "maxlen", 1, 10**9)
        self._client = client
        builder = key_builder(prefix, client)
        self.key = builder.topic(self.name)
        self._index = builder.topic_index(self.name)

    def __repr__(self) -> str:
        return f"<Topic {self.name!r}>"

    def publish(self, data: Any) -> str:
        """Add a message (strict JSON); returns its id."""
        return run(self.client, self._publish_steps(data))

    async def apublish(self, data: Any) -> str:
        """``publish()`` on the event loop."""
        return await arun(self._async_client(), self._publish_steps(data))

    def _publish_steps(self, data: Any) -> Steps:
        payload = to_json(data)
        mid = yield Run(
            PUBLISH,
            [self.key, self._index],
            [payload, self.maxlen, self.name],
            f"publish to topic {self.name!r}",
        )
        return as_text(mid)

    def subscribe(
        self, group: str, consumer: str | None = None, *, lease: float = 30.0, start: str = "new"
    ) -> Subscription:
        """A subscriber of consumer group ``group`` (created on first use).

        ``start``: "new" (a new group gets the messages published from now
        on) or "all" (a new group reads the retained messages from the
        oldest). ``consumer`` names this subscriber (default: random).
        """
        return Subscription(self, group, consumer, lease=lease, start=start)


class Subscription:
    """One subscriber of a topic's consumer group: ``receive``, ``ack``; each with an
    ``a``-prefixed twin."""

    def __init__(
        self, topic: Topic, group: str, consumer: str | None, *, lease: float, start: str
    ) -> None:
        self.topic = topic
        self.group = validate_name(group, "group name")
        self.consumer = (
            validate_name(consumer, "consumer name")
            if consumer is not None
            else secrets.token_urlsafe(9)
        )
        self.lease = check_seconds(lease, "lease")
        if start not in ("new", "all"):
            raise ValueError(f"start must be 'new' or 'all', not {start!r}")
        self._start = "$" if start == "new" else "0"
        self._group_ready = False  # this object has seen its group (so a missing one was lost)
        self._last_id: str | None = None  # the newest message id this object received
        #: How often this subscriber found its group gone (Redis lost it) and created it again.
        self.groups_recreated = 0

    def __repr__(self) -> str:
        return f"<Subscription {self.topic.name!r} group={self.group!r} consumer={self.consumer!r}>"

    def receive(self, count: int = 10, timeout: float | None = None) -> list[TopicMessage]:
        """Up to ``count`` messages: first any whose subscriber's lease ran out, then new ones,
        blocking up to ``timeout`` seconds for one (None: until one comes; 0: only look)."""
        client = self.topic.client
        return run(client, self._receive_steps(count, timeout, max_block(client)))

    async def areceive(self, count: int = 10, timeout: float | None = None) -> list[TopicMessage]:
        """``receive()`` on the event loop."""
        client = self.topic._async_client()
        return await arun(client, self._receive_steps(count, timeout, max_block(client)))

    def ack(self, *messages: TopicMessage) -> int:
        """Acknowledge messages (they are done); returns how many were pending."""
        return run(self.topic.client, self._ack_steps(messages))

    async def aack(self, *messages: TopicMessage) -> int:
        """``ack()`` on the event loop."""
        return await arun(self.topic._async_client(), self._ack_steps(messages))

    def _ack_steps(self, messages: tuple[TopicMessage, ...]) -> Steps:
        if not messages:
            return 0
        try:
            done = yield Command(
                "XACK",
                self.topic.key,
                self.group,
                *(m.id for m in messages),
                operation=self._op("acknowledge"),
            )
        except redis.ResponseError as exc:
            if not _is_nogroup(exc):
                raise
            return 0  # the group was lost with its pending messages: none was pending
        return int(done)

    def _op(self, what: str) -> str:
        return f"{what} on topic {self.topic.name!r} (group {self.group!r})"

    def _receive_steps(self, count: int, timeout: float | None, chunk: float) -> Steps:
        check_count(count, "count", 1, 10_000)
        timeout = check_wait(timeout)
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        key, operation = self.topic.key, self._op("receive")
        look, outage = True, None
        yield Within(deadline)  # a paused server: the look and the blocked read end by one bound
        while True:
            if look:
                # One round trip when messages are there: stale ones taken over,
                # else new ones; a missing group is created (again) first.
                try:
                    redelivered, entries, created = yield Run(
                        RECEIVE,
                        [key],
                        [
                            self.group,
                            self.consumer,
                            int(self.lease * 1000),
                            count,
                            self._from(),
                            int(CONSUMER_IDLE * 1000),
                        ],
                        operation,
                    )
                except CoordinationUnavailable as exc:
                    if isinstance(exc, PoolExhausted) or deadline - time.monotonic() <= 0:
                        raise
                    if outage is None:
                        log.warning(
                            "%s: Redis cannot answer (%s); looking again while the wait lasts",
                            operation,
                            exc,
                        )
                    outage = exc
                    yield Pause(min(OUTAGE_RETRY, max(0.0, deadline - time.monotonic())))
                    continue
                outage, look = None, False
                if int(created) and self._group_ready:
                    self._recreated()
                self._group_ready = True
                received = _entries(entries, redelivered=bool(int(redelivered)))
                if received:
                    return self._got(received)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            block = max(1, int(min(remaining, chunk) * 1000))
            try:
                reply = yield Blocking(
                    "XREADGROUP",
                    "GROUP",
                    self.group,
                    self.consumer,
                    "COUNT",
                    count,
                    "BLOCK",
                    block,
                    "STREAMS",
                    key,
                    ">",
                    operation=operation,
                )
            except CoordinationUnavailable as exc:
                if isinstance(exc, PoolExhausted) or deadline - time.monotonic() <= 0:
                    raise  # a full pool is not an outage; nor is there time left to look again
                # A dropped connection: unread messages stay in the stream; look again.
                log.warning(
                    "%s: the blocked read lost its connection (%s); issuing it again",
                    operation,
                    exc,
                )
                look = True
                continue
            except redis.ResponseError as exc:
                if not _is_nogroup(exc):
                    raise
                look = True  # the group vanished (Redis lost it): the look creates it again
                continue
            received = _stream_entries(reply)
            if received:
                return self._got(received)

    def _from(self) -> str:
        """Where the group starts if it is missing (see topic_receive.lua)."""
        if self._last_id is not None:
            return self._last_id  # after the last message we received: nothing after it is skipped
        return "0" if self._group_ready else self._start

    def _got(self, received: list[TopicMessage]) -> list[TopicMessage]:
        newest = max(received, key=lambda m: _id_key(m.id)).id
        if self._last_id is None or _id_key(newest) > _id_key(self._last_id):
            self._last_id = newest
        return received

    def _recreated(self) -> None:
        self.groups_recreated += 1
        log.warning(
            "%s: the consumer group was missing (Redis lost it: a restart without persistence, a "
            "failover to a replica without it, or XGROUP DESTROY); created again from %s. "
            "Messages published before the loss that the group had not received were lost with it "
            "if the stream was lost too; messages received but not acknowledged are no longer "
            "pending (not handed on if their subscriber dies)",
            self._op("receive"),
            "after " + self._last_id if self._last_id else "the oldest kept message",
        )


def _is_nogroup(exc: BaseException) -> bool:
    return str(exc).startswith("NOGROUP") or "-NOGROUP" in str(exc)


def _id_key(mid: str) -> tuple[int, int]:
    ms_part, _, seq = mid.partition("-")
    return int(ms_part), int(seq or 0)


def _stream_entries(reply: Any) -> list[TopicMessage]:
    """Messages of an XREADGROUP reply (RESP2: [[key, entries]]; RESP3: {key: entries})."""
    if not reply:
        return []
    streams = reply.values() if isinstance(reply, dict) else [item[1] for item in reply]
    return [m for entries in streams for m in _entries(entries)]


def _entries(entries: Any, *, redelivered: bool = False) -> list[TopicMessage]:
    out = []
    for entry in entries or []:
        if not entry or entry[1] is None:  # deleted (trimmed) while pending
            continue
        mid, fields = entry
        pairs = (
            fields.items()
            if isinstance(fields, dict)
            else zip(fields[::2], fields[1::2], strict=True)
        )
        values = {as_text(k): as_text(v) for k, v in pairs}
        out.append(TopicMessage(as_text(mid), json.loads(values.get("d", "null")), redelivered))
    return out
