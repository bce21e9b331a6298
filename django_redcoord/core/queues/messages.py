"""What crosses Redis for a queue: message envelopes, bodies as strict JSON, and the scripts.

An envelope is a header ``failed|max|enqueued_ms|priority|flags|id``, a
newline, then the body (see ``core/lua/queues/common.lua``): the numeric
fields come first and the split stops before the id, so a message id may hold
any allowed character, ``|`` included. Bodies are strict JSON (no NaN, no
pickle), checked when pushed.

An envelope flagged ``TRACED`` carries one more line between the header and
the body: a JSON object of trace headers (W3C ``traceparent``, ``tracestate``,
``baggage``), written and read by the :data:`tracer` a tracing integration
installs (:mod:`django_redcoord.contrib.otel`). With no tracer installed,
nothing is added and a push or a delivery pays one ``is None`` test.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from ..runtime import runtime
from ..transport.scripts import Script
from ..values import finite_number

#: The Lua every queue script includes (a script of another family that settles a queue's
#: messages, such as the Tasks cancel, includes it too).
QUEUE_INCLUDES = ("queues/common",)
PUSH = Script("queues/push", includes=QUEUE_INCLUDES)
PUSH_UNIQUE = Script("queues/push_unique", includes=QUEUE_INCLUDES)
CLAIM = Script("queues/claim", includes=("ratelimit/common", *QUEUE_INCLUDES))
NACK = Script("queues/nack", includes=QUEUE_INCLUDES)
REAP = Script("queues/reap", includes=QUEUE_INCLUDES)
HAND_BACK = Script("queues/hand_back", includes=QUEUE_INCLUDES)
DEPTHS = Script("queues/depths", includes=QUEUE_INCLUDES)
PAUSE = Script("queues/pause", includes=QUEUE_INCLUDES)
REQUEUE_DEAD = Script("queues/requeue_dead", includes=QUEUE_INCLUDES)

MIN_PRIORITY, MAX_PRIORITY = -100, 100
MAX_BATCH = 1000  # messages per script call (Lua unpack() breaks near 8,000)

#: Flag of an envelope whose message has a result record (a Django Task).
HAS_RECORD = 1
#: Flag of a dead letter given another chance (its record, if any, is to be reopened).
REQUEUED = 2
#: Flag of an envelope whose body is preceded by a line of trace headers (JSON).
TRACED = 4
#: Flag of an envelope whose body (and trace line) is preceded by its group's line
#: ``concurrency|limit|period_ms|burst|group`` (see groups.py).
GROUPED = 8


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
    #: the trace headers line (JSON text) of a TRACED envelope, else None
    headers: str | None = None
    #: the group of a GROUPED envelope (see groups.py), else None
    group: str | None = None

    @property
    def enqueued_at(self) -> datetime:
        return datetime.fromtimestamp(self.enqueued_ms / 1000, tz=timezone.utc)

    @classmethod
    def parse(cls, raw: bytes | str, queue: str) -> Message:
        """Read an envelope (see queues/common.lua); never raises: see ``error``."""
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
        headers = group = None
        if numbers[4] & GROUPED:
            line, newline, rest = body.partition("\n")
            if newline:
                group, body = line.split("|", 4)[-1], rest
        if numbers[4] & TRACED:
            line, newline, rest = body.partition("\n")
            # (JSON bodies hold no raw newline; flagged without the line: the body alone, untraced)
            if newline:
                headers, body = line, rest
        try:
            value = json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = f"body is not readable JSON: {type(exc).__name__}: {str(exc)[:200]}"
            return cls(
                mid,
                None,
                numbers[0],
                numbers[1],
                numbers[2],
                numbers[3],
                queue,
                raw,
                numbers[4],
                error,
                headers,
                group,
            )
        return cls(
            mid,
            value,
            numbers[0],
            numbers[1],
            numbers[2],
            numbers[3],
            queue,
            raw,
            numbers[4],
            None,
            headers,
            group,
        )


@dataclass(frozen=True)
class Depths:
    """Counts of one queue; ``oldest_age`` is the age (s) of its oldest ready message, or None
    (see queues/depths.lua)."""

    ready: int
    delayed: int
    processing: int
    dead: int
    consumers: int
    oldest_age: float | None
    # : while the queue is paused: ``{"since_ms": ..., "reason": ...}`` (see :meth:`Queue.pause`),
    # else None
    paused: dict | None = None
    #: groups with messages (see groups.py)
    groups: int = 0


class Sending(Protocol):
    """One push as a tracer sees it: a context manager around the push's round trip."""

    #: the trace headers line to write into the envelopes (JSON text without
    #: a newline), or "" to write none
    headers: str

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc_info: Any) -> Any: ...


class MessageTracer(Protocol):
    """What a tracing integration gives the queues (see :data:`tracer`)."""

    def send(self, queue: str, ids: list[str]) -> Sending:
        """A push of the messages ``ids`` to ``queue`` begins: its span and the headers to carry."""
        ...

    def process(self, message: Message) -> Any:
        """A context manager the worker runs ``message``'s handler in (its span, made current)."""
        ...

    def bind(self, fn: Any) -> Any:
        """``fn``, to run later (after a commit) in the trace context current now."""
        ...


#: The message tracer in force; None (the default) carries nothing and costs
#: one ``is None`` test per push and per delivery. Set with :func:`set_tracer`.
tracer: MessageTracer | None = None


def current_tracer() -> MessageTracer | None:
    """The message tracer in force (None: none)."""
    return tracer


def set_tracer(new: MessageTracer | None) -> None:
    """Install the message tracer (None: none); pushes and deliveries from now on use it."""
    global tracer
    tracer = new


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
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        text.encode(
            "utf-8"
        )  # a lone surrogate ("\ud800") is not UTF-8: refuse it here, not at the send
        return text
    except UnicodeEncodeError as exc:
        raise TypeError(
            f"{what} must be valid Unicode text: {exc.reason} at "
            f"{exc.object[exc.start : exc.end]!r}"
        ) from None
    except RecursionError:
        raise TypeError(f"{what} are nested too deeply to be encoded as JSON") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must be JSON-serialisable (dict, list, str, int, finite float, bool, None): "
            f"{exc}"
        ) from None


def delay_ms(delay: float | None, eta: datetime | None) -> int:
    if delay is not None and eta is not None:
        raise TypeError("pass either delay= (seconds) or eta= (an aware datetime), not both")
    if eta is not None:
        if not isinstance(eta, datetime) or eta.tzinfo is None:
            raise TypeError(f"eta must be a timezone-aware datetime, not {eta!r}")
        delay = (eta - datetime.now(timezone.utc)).total_seconds()
        return max(0, math.ceil(delay * 1000))
    if delay is None:
        return 0
    if not finite_number(delay) or delay < 0:
        raise ValueError(f"delay must be seconds >= 0, not {delay!r}")
    return math.ceil(delay * 1000)


def retry_delay(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with full jitter: uniform in [base/2, min(cap, base * 2**attempt)]."""
    high = min(cap, base * (2 ** min(attempt, 40)))
    return random.uniform(min(base / 2, high), high)


def queue_defaults() -> dict[str, Any]:
    """The REDCOORD queue/worker settings, or their defaults without Django."""
    return runtime.config
