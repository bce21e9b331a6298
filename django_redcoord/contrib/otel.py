"""OpenTelemetry tracing: one trace from the request that enqueued a task to the task's run.

Enable it with one setting (read in ``AppConfig.ready``; ``pip install
django-redcoord[otel]``)::

    REDCOORD = {"URL": "redis://...", "TRACING": True}

or, without Django, with one call: ``from django_redcoord.contrib.otel import
enable; enable()``. Spans go to the tracer provider the project configures
(``opentelemetry.trace.set_tracer_provider``), or to the one passed to
:func:`enable`. Nothing here imports ``opentelemetry`` until tracing is
enabled: with it off (the default), a push or a delivery pays one ``is None``
test and the envelopes are exactly as before.

What is traced (OpenTelemetry's messaging conventions, ``messaging.system``
``"redis"``):

* ``send <queue>`` (PRODUCER): every push (``Queue.push``, ``push_many``, a
  Django Task's ``enqueue``/``aenqueue``; inside a transaction with
  ``ENQUEUE_ON_COMMIT`` it starts at the commit, in the trace of the
  ``enqueue()`` call). Its context travels in the message envelope as W3C
  ``traceparent``/``tracestate`` (and ``baggage``): one JSON line, flag TRACED.
* ``process <queue>`` (CONSUMER), around the handler (the task): the first
  delivery is a child of the send span; a later delivery (a retry, a
  redelivery after a crash, a requeued dead letter) starts a new trace with a
  link to the send span, so a retry hours later does not stretch the
  request's trace. A message without trace headers (sent with tracing off, or
  by an older version) runs in a new trace.
* With ``EVENTS`` (default on), from the events of
  :mod:`django_redcoord.core.observe`, inside a trace already in progress
  (they never start one): ``<kind> acquire`` (the wait, with its outcome) and
  ``<kind> hold`` spans of locks, semaphores, read/write locks and latches,
  with their real start times; span events ``redcoord.ratelimit.hit``,
  ``redcoord.view.busy`` and ``redcoord.hold.lost`` on the current span. And
  on their own: one ``leader term`` span per term won (``redcoord.election``,
  ``redcoord.term``) with its ``periodic run`` spans as children.

Lock names and rate-limit keys are never attributes: the events do not carry
them (they are high-cardinality; see ``core/observe.py``). Attributes are
listed in :data:`ATTRIBUTES`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core import REQUEUED, Message, add_observer, current_tracer, remove_observer, set_tracer

__all__ = [
    "ATTRIBUTES",
    "SYSTEM",
    "disable",
    "enable",
    "enabled",
    "install_from_settings",
    "on_setting_changed",
]

#: ``messaging.system`` of our spans.
SYSTEM = "redis"
# : The longest trace headers line read (characters): W3C caps baggage at 8,192 bytes and tracestate
# at
#: 512; a longer line is damaged or hostile and starts a fresh trace instead.
MAX_HEADERS = 16_384

log = logging.getLogger("django_redcoord.otel")

#: Every attribute our spans may carry, for the docs and the tests.
ATTRIBUTES = (
    "messaging.system",
    "messaging.destination.name",
    "messaging.operation.type",
    "messaging.operation.name",
    "messaging.message.id",
    "messaging.batch.message_count",
    "redcoord.delivery",
    "redcoord.task",
    "redcoord.kind",
    "redcoord.outcome",
    "redcoord.election",
    "redcoord.term",
    "redcoord.job",
    "redcoord.ratelimit.limiter",
    "redcoord.ratelimit.allowed",
    "redcoord.status",
    "redcoord.slots",
)

#: How the kinds of the hold events read in span names.
_KINDS = {
    "lock": "lock",
    "semaphore": "semaphore",
    "read": "read lock",
    "write": "write lock",
    "latch": "latch",
}

#: JSON without spaces (one encoder, not one per message as json.dumps(separators=...) builds)
_compact = json.JSONEncoder(separators=(",", ":")).encode

_state_lock = threading.Lock()
_installed: tuple[Any, Any] | None = None  # (message tracer, event observer or None)
_from_settings = False  # the installed tracing came from REDCOORD["TRACING"]


def enable(*, tracer_provider: Any = None, events: bool = True) -> None:
    """Trace messages (and, with ``events``, holds, rate limits, leader terms) from now on.

    Args:
        tracer_provider: where spans go (default: OpenTelemetry's global provider,
            looked up at each span, so a provider set after this call is used).
        events: also make spans from the coordination events (see the module).

    Raises:
        ImportError: ``opentelemetry-api`` is not installed (``pip install django-redcoord[otel]``).
    """
    global _installed, _from_settings
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise ImportError(
            "django_redcoord tracing needs opentelemetry-api: pip install 'django-redcoord[otel]'"
        ) from exc
    from .. import __version__ as version

    tracer = trace.get_tracer("django_redcoord", version, tracer_provider=tracer_provider)
    with _state_lock:
        _uninstall()
        message_tracer = MessageTracer(tracer, explicit=tracer_provider is not None)
        observer = EventSpans(tracer) if events else None
        set_tracer(message_tracer)
        if observer is not None:
            add_observer(observer)
        _installed = (message_tracer, observer)
        _from_settings = False


def disable() -> None:
    """Stop tracing (spans already started end as they would)."""
    global _from_settings
    with _state_lock:
        _uninstall()
        _from_settings = False


def enabled() -> bool:
    """Whether tracing is on in this process."""
    return _installed is not None


def _uninstall() -> None:
    global _installed
    if _installed is None:
        return
    message_tracer, observer = _installed
    if current_tracer() is message_tracer:
        set_tracer(None)
    if observer is not None:
        remove_observer(observer)
        observer.close()
    _installed = None


# -- the Django setting ----------------------------------------------------------------


def install_from_settings() -> None:
    """Apply ``REDCOORD["TRACING"]`` (``AppConfig.ready`` and ``setting_changed`` call it).

    An invalid value, or opentelemetry-api missing, changes nothing here: the
    system checks report them (``redcoord.E003``, ``redcoord.E040``).
    """
    global _from_settings
    from django.conf import settings

    from ..core import tracing_option

    user = getattr(settings, "REDCOORD", None)
    value = user.get("TRACING", False) if isinstance(user, dict) else False
    try:
        option = tracing_option(value)
    except ValueError:
        return
    if option is None:
        if _from_settings:
            disable()
        return
    if (
        _from_settings
        and _installed is not None
        and (_installed[1] is not None) == option["EVENTS"]
    ):
        return
    try:
        enable(events=option["EVENTS"])
    except ImportError:
        return
    _from_settings = True


def on_setting_changed(**kwargs: Any) -> None:
    """``setting_changed`` receiver: a changed REDCOORD turns tracing on or off."""
    if kwargs.get("setting") == "REDCOORD":
        install_from_settings()


# -- messages -----------------------------------------------------------------------------


class MessageTracer:
    """The queues' tracer (see ``core/queues/messages.py``): send and process spans.

    While no tracer provider is set (``opentelemetry-api`` alone, or the SDK
    not configured yet), every span would be a no-op: nothing is carried nor
    restored, and the global provider is looked at once a second, not per
    message (a provider set later is used within a second; OpenTelemetry
    never replaces a provider once set, so a real one is looked at no more).
    ``explicit``: the tracer comes from a provider given to :func:`enable`.
    """

    #: seconds between looks at the global tracer provider while none is set
    RECHECK = 1.0

    def __init__(self, tracer: Any, *, explicit: bool = False) -> None:
        from opentelemetry import context, propagate, trace

        self.tracer = tracer
        self._live = explicit
        self._next_look = 0.0
        self._provider = trace.get_tracer_provider
        self._no_op = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        self._context = context
        self._propagate = propagate
        self._trace = trace
        self._producer = trace.SpanKind.PRODUCER
        self._consumer = trace.SpanKind.CONSUMER

    def live(self) -> bool:
        """Whether spans go somewhere: a tracer provider is set (looked at once a second until
        one is)."""
        if self._live:
            return True
        now = time.monotonic()
        if now < self._next_look:
            return False
        self._next_look = now + self.RECHECK
        self._live = not isinstance(self._provider(), self._no_op)
        return self._live

    def send(self, queue: str, ids: list[str]) -> Any:
        return _Sending(self, queue, ids) if self.live() else _NOT_TRACED

    def process(self, message: Message) -> Any:
        return _Processing(self, message) if self.live() else _NOT_TRACED

    def bind(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """``fn`` run later in the context current now (a task sent at commit time)."""
        if not self.live():
            return fn
        ctx = self._context.get_current()
        attach, detach = self._context.attach, self._context.detach

        def bound() -> Any:
            token = attach(ctx)
            try:
                return fn()
            finally:
                detach(token)

        return bound

    def parent_of(self, message: Message) -> Any:
        """The context a message's headers carry (an empty one when none can be read)."""
        ctx = self._context.Context()
        headers = message.headers
        if headers and len(headers) <= MAX_HEADERS:
            try:
                carrier = json.loads(headers)
            except (ValueError, RecursionError):  # "[[[[..." nested past the parser's depth
                carrier = None
            if isinstance(carrier, dict) and all(isinstance(v, str) for v in carrier.values()):
                try:
                    return self._propagate.extract(carrier, context=ctx)
                except Exception:  # a propagator choking on a garbled value: the message still runs
                    log.debug(
                        "message %s on %s: unreadable trace headers", message.id, message.queue
                    )
        return ctx


class _NotTraced:
    """A push or a delivery while no tracer provider is set: no span, no headers."""

    __slots__ = ()
    headers = ""

    def __enter__(self) -> _NotTraced:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None


_NOT_TRACED = _NotTraced()


class _Sending:
    """The send span of one push: started on enter (the trace headers with it), ended on exit."""

    __slots__ = ("owner", "queue", "ids", "span", "token", "headers")

    def __init__(self, owner: MessageTracer, queue: str, ids: list[str]) -> None:
        self.owner, self.queue, self.ids = owner, queue, ids
        self.headers = ""

    def __enter__(self) -> _Sending:
        owner = self.owner
        attributes: dict[str, Any] = {
            "messaging.system": SYSTEM,
            "messaging.destination.name": self.queue,
            "messaging.operation.type": "send",
            "messaging.operation.name": "send",
        }
        if len(self.ids) == 1:
            attributes["messaging.message.id"] = self.ids[0]
        else:
            attributes["messaging.batch.message_count"] = len(self.ids)
        span = self.span = owner.tracer.start_span(
            f"send {self.queue}", kind=owner._producer, attributes=attributes
        )
        ctx = owner._trace.set_span_in_context(span)
        carrier: dict[str, str] = {}
        owner._propagate.inject(carrier, context=ctx)
        if carrier:
            self.headers = _compact(carrier)
        self.token = owner._context.attach(
            ctx
        )  # the push's own round trip (redis-py's spans) nests in it
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        owner = self.owner
        owner._context.detach(self.token)
        if exc is not None and self.span.is_recording():
            _failed(self.span, exc)
        self.span.end()


class _Processing:
    """The process span of one delivery, made current around the handler."""

    __slots__ = ("owner", "message", "token", "span_cm")

    def __init__(self, owner: MessageTracer, message: Message) -> None:
        self.owner, self.message = owner, message

    def __enter__(self) -> Any:
        owner, message = self.owner, self.message
        trace = owner._trace
        ctx = owner.parent_of(message)
        links = ()
        sent = trace.get_current_span(ctx).get_span_context()
        if sent.is_valid and (message.attempt > 0 or message.flags & REQUEUED):
            # a later delivery: a new trace linked to the send (its baggage kept)
            links = (trace.Link(sent, {"redcoord.delivery": message.attempt + 1}),)
            ctx = trace.set_span_in_context(trace.INVALID_SPAN, ctx)
        attributes: dict[str, Any] = {
            "messaging.system": SYSTEM,
            "messaging.destination.name": message.queue,
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.message.id": message.id,
            "redcoord.delivery": message.attempt + 1,
        }
        body = message.body
        if isinstance(body, dict) and isinstance(body.get("task"), str):
            attributes["redcoord.task"] = body["task"]
        self.token = owner._context.attach(ctx)
        try:
            self.span_cm = owner.tracer.start_as_current_span(
                f"process {message.queue}", kind=owner._consumer, links=links, attributes=attributes
            )
            return self.span_cm.__enter__()
        except BaseException:
            owner._context.detach(self.token)
            raise

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> Any:
        try:
            return self.span_cm.__exit__(kind, exc, tb)
        finally:
            self.owner._context.detach(self.token)


def _failed(span: Any, exc: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:200]))


# -- coordination events ----------------------------------------------------------------------


class EventSpans:
    """An observer (``core/observe.py``) that turns events into spans with their real times."""

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import context, trace

        self.tracer = tracer
        self._trace = trace
        self._empty = context.Context
        self._terms: dict[str, Any] = {}  # election -> its open "leader term" span
        self._terms_lock = threading.Lock()
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "hold.acquire": self._acquire,
            "hold.release": self._release,
            "hold.lost": self._lost,
            "ratelimit.hit": self._ratelimit,
            "view.busy": self._busy,
            "leader.elected": self._elected,
            "leader.demoted": self._demoted,
            "periodic.run": self._periodic,
            "periodic.missed": self._missed,
        }

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        handler = self._handlers.get(event)
        if handler is not None:
            handler(fields)

    def close(self) -> None:
        """End the open term spans (tracing turned off)."""
        with self._terms_lock:
            terms, self._terms = self._terms, {}
        for span in terms.values():
            span.end()

    def _parent(self) -> Any:
        """The current span if it records, else None: these spans only join a trace in progress."""
        span = self._trace.get_current_span()
        return span if span.is_recording() else None

    def _past(
        self,
        name: str,
        seconds: Any,
        attributes: dict[str, Any],
        *,
        error: bool = False,
        context: Any = None,
    ) -> None:
        """A span that ended now and lasted ``seconds``."""
        end = time.time_ns()
        took = seconds if isinstance(seconds, (int, float)) and seconds > 0 else 0
        span = self.tracer.start_span(
            name, context=context, attributes=attributes, start_time=end - int(took * 1e9)
        )
        if error:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, attributes.get("redcoord.outcome", "")))
        span.end(end_time=end)

    def _acquire(self, f: dict[str, Any]) -> None:
        if self._parent() is None:
            return
        kind, outcome = str(f.get("kind", "")), str(f.get("outcome", ""))
        self._past(
            f"{_KINDS.get(kind, kind)} acquire",
            f.get("wait"),
            {"redcoord.kind": kind, "redcoord.outcome": outcome},
            error=outcome == "unavailable",
        )

    def _release(self, f: dict[str, Any]) -> None:
        if self._parent() is None:
            return
        kind = str(f.get("kind", ""))
        self._past(f"{_KINDS.get(kind, kind)} hold", f.get("held"), {"redcoord.kind": kind})

    def _lost(self, f: dict[str, Any]) -> None:
        span = self._parent()
        if span is not None:
            span.add_event("redcoord.hold.lost", {"redcoord.kind": str(f.get("kind", ""))})

    def _ratelimit(self, f: dict[str, Any]) -> None:
        span = self._parent()
        if span is not None:
            span.add_event(
                "redcoord.ratelimit.hit",
                {
                    "redcoord.ratelimit.limiter": str(f.get("limiter", "")),
                    "redcoord.ratelimit.allowed": bool(f.get("allowed")),
                },
            )

    def _busy(self, f: dict[str, Any]) -> None:
        span = self._parent()
        if span is not None:
            span.add_event(
                "redcoord.view.busy",
                {
                    "redcoord.kind": str(f.get("kind", "")),
                    "redcoord.status": int(f.get("status") or 0),
                },
            )

    def _elected(self, f: dict[str, Any]) -> None:
        election = str(f.get("election", ""))
        span = self.tracer.start_span(
            "leader term",
            context=self._empty(),
            attributes={
                "redcoord.election": election,
                "redcoord.term": int(f.get("term") or 0),
            },
        )
        with self._terms_lock:
            old = self._terms.pop(election, None)
            self._terms[election] = span
        if old is not None:
            old.end()

    def _demoted(self, f: dict[str, Any]) -> None:
        with self._terms_lock:
            span = self._terms.pop(str(f.get("election", "")), None)
        if span is not None:
            span.end()

    def _term(self, election: str) -> Any:
        with self._terms_lock:
            span = self._terms.get(election)
        return None if span is None else self._trace.set_span_in_context(span, self._empty())

    def _periodic(self, f: dict[str, Any]) -> None:
        election, outcome = str(f.get("election", "")), str(f.get("outcome", ""))
        context = self._term(election)
        if context is None:
            return
        self._past(
            "periodic run",
            f.get("duration"),
            {
                "redcoord.election": election,
                "redcoord.job": str(f.get("job", "")),
                "redcoord.outcome": outcome,
            },
            error=outcome != "ok",
            context=context,
        )

    def _missed(self, f: dict[str, Any]) -> None:
        with self._terms_lock:
            span = self._terms.get(str(f.get("election", "")))
        if span is not None:
            span.add_event(
                "redcoord.periodic.missed",
                {"redcoord.job": str(f.get("job", "")), "redcoord.slots": int(f.get("slots") or 0)},
            )
