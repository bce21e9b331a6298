"""``@with_lock``: hold a distributed lock around a view, a method or any function.

::

    @with_lock("invoice:{pk}", ttl=30, wait=5)          # function view
    def pay_invoice(request, pk): ...

    class ReportView(View):
        @with_lock("report:{request.user.pk}")           # method of a class-based view
        def post(self, request): ...

    @with_lock("export:{self.pk}")                       # whole CBV: wraps dispatch()
    class ExportView(View): ...

The key is a ``str.format`` template over the call's bound arguments
(attribute access such as ``{request.user.pk}`` works) or a callable taking
the same arguments and returning the name. For views (the call has an
``HttpRequest`` argument) a busy lock answers 409 with ``Retry-After``
(or whatever ``on_busy(request, exc)`` returns), a Redis that cannot be
reached answers 503 with ``Retry-After`` (or ``on_unavailable(request,
exc)``), and the held lock is ``request.redcoord_lock``; other code gets
:class:`LockNotAcquired` / :class:`CoordinationUnavailable`. Inside any
decorated call ``current_lock()`` returns the innermost held lock.

The lock covers the work, however it runs: a generator (sync or async) holds
it from its first step until it is exhausted or closed; a view returning a
``StreamingHttpResponse`` holds it until the response has been sent or closed.

``async def`` functions and views acquire and release on the event loop
with a ``redis.asyncio`` client (no thread hop). Cancelled at any await (the
client went away, a timeout), the call gives back what it took: it leaves
the queue, and a grant that arrives as it is cancelled is released before
the cancellation goes on. Only with a sync ``client=`` does an async call
take its lock in a worker thread.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse

from ..core import (
    DEFAULT,
    CoordinationUnavailable,
    Hold,
    Lock,
    LockNotAcquired,
    check_count,
    check_ttl,
    check_wait,
    validate_name,
)
from .holds import (
    aacquire,
    afinish,
    aname,
    busy,
    busy_response,
    find_request,
    finish,
    unavailable_response,
    view_dispatch,
)
from .streaming import FAILED, STREAMING, handed_to_stream, wrap_async_generator, wrap_generator

log = logging.getLogger("django_redcoord.locks")

F = TypeVar("F", bound=Callable[..., Any])

_current: contextvars.ContextVar[Lock | None] = contextvars.ContextVar(
    "redcoord_lock", default=None
)


def current_lock() -> Lock | None:
    """The innermost lock held by a ``@with_lock`` call in this context (or None)."""
    return _current.get()


def with_lock(
    key: str | Callable[..., str],
    *,
    ttl: float = DEFAULT,
    wait: float | None = DEFAULT,
    auto_renew: bool = False,
    reentrant: bool = False,
    on_busy: Callable[[HttpRequest, LockNotAcquired], HttpResponse] | None = None,
    on_unavailable: Callable[[HttpRequest, CoordinationUnavailable], HttpResponse] | None = None,
    client: Any = None,
    quorum: bool | int = False,
    replicas: int = 0,
) -> Callable[[F], F]:
    """Hold the lock named by ``key`` around each call of the decorated callable.

    Args:
        key: a format template over the call's arguments, or a callable
            taking the same arguments and returning the lock name.
        ttl, wait, auto_renew, reentrant, client, replicas: as for :class:`Lock`
            (a view answers 503 when the replicas do not confirm a grant).
        quorum: ``True`` holds a quorum lock (:class:`Redlock`) on a majority
            of the ``REDCOORD["REDLOCK"]`` masters instead; a number asks for
            that many of them. ``client`` is then a list of the masters'
            clients (or None); ``auto_renew`` and ``reentrant`` are not
            available for quorum locks.
        on_busy: for views, ``on_busy(request, exc)`` returns the response
            sent when the lock is not acquired within ``wait`` (default: 409).
        on_unavailable: for views, ``on_unavailable(request, exc)`` returns the
            response sent when Redis cannot be reached (default: 503 with
            ``Retry-After``); other callables get CoordinationUnavailable.

    The lock is held for as long as the call's work lasts: until a generator
    is exhausted or closed, and until a view's ``StreamingHttpResponse`` (or
    ``FileResponse``) has been sent or closed.

    Raises at decoration time ``TypeError``/``ValueError`` for bad arguments;
    at call time ``LockNotAcquired`` (non-view callables) and ``LockLost``
    (the lock expired before the call ended).
    """
    if ttl is not DEFAULT:
        check_ttl(ttl)
    if wait is not DEFAULT:
        check_wait(wait)
    if on_busy is not None and not callable(on_busy):
        raise TypeError(
            f"on_busy must be a callable (request, exc) -> HttpResponse, not {on_busy!r}"
        )
    if on_unavailable is not None and not callable(on_unavailable):
        raise TypeError(
            "on_unavailable must be a callable (request, exc) -> HttpResponse, not "
            f"{on_unavailable!r}"
        )
    if reentrant and not isinstance(reentrant, bool):
        raise TypeError("reentrant must be True or False")
    answers = (on_busy or busy_response, on_unavailable or unavailable_response)
    if quorum is not False:
        if replicas:
            raise TypeError(
                "with_lock(quorum=...) takes no replicas: a quorum lock's masters are independent"
            )
        return holding(
            "with_lock",
            key,
            _quorum_maker(quorum, ttl, wait, auto_renew, reentrant, client),
            answers,
        )
    check_count(replicas, "replicas", 0, 100)
    options = {
        "ttl": ttl,
        "wait": wait,
        "auto_renew": auto_renew,
        "reentrant": reentrant,
        "client": client,
        "replicas": replicas,
    }
    return holding(
        "with_lock", key, lambda name: Lock(name, **options), answers, reentrant=reentrant
    )


def _quorum_maker(
    quorum: bool | int,
    ttl: float,
    wait: float | None,
    auto_renew: bool,
    reentrant: bool,
    client: Any,
) -> Any:
    """``name -> Redlock(name, ...)`` for ``@with_lock(..., quorum=...)``, its arguments checked
    now."""
    from ..core import Redlock

    if quorum is True:
        count = None
    elif isinstance(quorum, int) and not isinstance(quorum, bool) and quorum > 0:
        count = quorum
    else:
        raise TypeError(
            "quorum must be True (a majority of the REDLOCK masters) or a number of masters, not "
            f"{quorum!r}"
        )
    if auto_renew or reentrant:
        raise TypeError(
            "with_lock(quorum=...) takes no auto_renew or reentrant: a quorum lock is extended by "
            "hand"
        )
    if client is not None and not isinstance(client, (list, tuple)):
        raise TypeError(
            "with_lock(quorum=...) takes client=[...] (one client per master), or none for "
            "REDLOCK's"
        )
    return lambda name: Redlock(name, ttl=ttl, wait=wait, clients=client, quorum=count)


def holding(
    decorator: str,
    key: str | Callable[..., str],
    make: Callable[[str], Hold],
    answers: tuple,
    *,
    reentrant: bool = False,
) -> Callable[[F], F]:
    """The decorator that holds ``make(name)`` around each call (``with_lock``, ``with_semaphore``).

    ``key`` names the resource from the call's arguments; ``answers`` are the
    views' (busy, unavailable) responses.
    """
    if not (isinstance(key, str) and key) and not callable(key):
        raise TypeError(
            f"{decorator} key must be a non-empty format string or a callable, not {key!r}"
        )

    def decorate(target: F) -> F:
        if isinstance(target, type):
            if not hasattr(target, "dispatch"):
                raise TypeError(
                    f"{decorator} on a class needs a class-based view (with dispatch()), not "
                    f"{target!r}"
                )
            target.dispatch = decorate(view_dispatch(target))  # type: ignore[attr-defined]
            return target
        if not callable(target):
            raise TypeError(
                f"{decorator} decorates functions, methods and view classes, not {target!r}"
            )
        namer = _namer(key, target, decorator)
        is_async = inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target)
        if is_async and reentrant:
            raise TypeError(f"{decorator}(reentrant=True) is not supported on async functions")
        if inspect.isgeneratorfunction(target):
            return wrap_generator(target, namer, make)  # type: ignore[return-value]
        if inspect.isasyncgenfunction(target):
            return wrap_async_generator(target, namer, make)  # type: ignore[return-value]
        if is_async:
            return _wrap_async(target, namer, make, answers)  # type: ignore[return-value]
        return _wrap_sync(target, namer, make, answers)  # type: ignore[return-value]

    return decorate


# -- plain functions and views ---------------------------------------------------------


def _wrap_sync(
    func: Callable[..., Any], namer: Callable[..., str], make: Callable[[str], Hold], answers: tuple
) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = make(namer(*args, **kwargs))
        request = find_request(args)
        try:
            acquired = lock.acquire()
        except CoordinationUnavailable as exc:
            if request is None:
                raise
            return answers[1](request, exc)
        if not acquired:
            return busy(lock, request, answers[0])
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        outcome = FAILED
        try:
            result = func(*args, **kwargs)
            outcome = handed_to_stream(result, lock)
            return result
        finally:
            _current.reset(token)
            if outcome is not STREAMING:
                finish(lock, failed=outcome is FAILED)

    return wrapper


def _wrap_async(
    func: Callable[..., Any], namer: Callable[..., str], make: Callable[[str], Hold], answers: tuple
) -> Any:
    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = make(await aname(namer, *args, **kwargs))
        request = find_request(args)
        try:
            acquired = await aacquire(lock)
        except CoordinationUnavailable as exc:
            if request is None:
                raise
            return answers[1](request, exc)
        if not acquired:
            return busy(lock, request, answers[0])
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        outcome = FAILED
        try:
            result = await func(*args, **kwargs)
            outcome = handed_to_stream(result, lock)
            return result
        finally:
            _current.reset(token)
            if outcome is not STREAMING:
                await afinish(
                    lock, failed=outcome is FAILED
                )  # to the end, even if cancelled meanwhile

    return wrapper


# -- generators and streamed responses ---------------------------------------------------


# -- ending a hold -------------------------------------------------------------------------


def _namer(
    key: str | Callable[..., str], func: Callable[..., Any], decorator: str = "with_lock"
) -> Callable[..., str]:
    """Build ``namer(*args, **kwargs) -> lock name`` for ``key`` on ``func``."""
    if callable(key):

        def from_callable(*args: Any, **kwargs: Any) -> str:
            return validate_name(key(*args, **kwargs), f"name from {key!r}")

        return from_callable

    signature = inspect.signature(func)
    var_keyword = _check_template(key, func, signature, decorator)

    def from_template(*args: Any, **kwargs: Any) -> str:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{func.__qualname__}() called with bad arguments: {exc}") from None
        bound.apply_defaults()
        arguments = bound.arguments
        if var_keyword is not None:  # {slug} as well as {kwargs[slug]}
            arguments = {**arguments, **arguments.get(var_keyword, {})}
        try:
            name = key.format_map(arguments)
        except (KeyError, AttributeError, IndexError) as exc:
            raise ValueError(
                f"{decorator} key {key!r} on {func.__qualname__} could not be formatted: {exc!r}; "
                f"the call's arguments are {', '.join(arguments) or 'none'}"
            ) from None
        return validate_name(name, f"name {name!r} (from key {key!r})")

    return from_template


def _check_template(
    key: str, func: Callable[..., Any], signature: inspect.Signature, decorator: str
) -> str | None:
    """Fail at decoration time for a template that can never format; return the **kwargs name."""
    params = signature.parameters
    var_keyword = next((p.name for p in params.values() if p.kind is p.VAR_KEYWORD), None)
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(key) if field is not None]
    except ValueError as exc:
        raise ValueError(f"{decorator} key {key!r} is not a valid format template: {exc}") from None
    names = ", ".join(params) or "none"
    for field in fields:
        root = re.match(r"[^.\[]*", field).group()  # type: ignore[union-attr]
        if not root.isidentifier():
            raise ValueError(
                f"{decorator} key {key!r}: each {{...}} must start with an argument name of "
                f"{func.__qualname__} (its arguments are {names}), not {{{field}}}"
            )
        if root not in params and var_keyword is None:
            raise ValueError(
                f"{decorator} key {key!r} on {func.__qualname__}: {{{field}}} names no argument "
                f"(its arguments are {names})"
            )
    return var_keyword
