"""The one factory behind every hold decorator: ``holding(decorator, key, make, answers)`` wraps a
function, a method, a class-based view's ``dispatch``, a generator or a streamed response so
that ``make(name)`` is held around each call (``@with_lock``, ``@with_semaphore``,
``@with_read_lock``, ``@with_write_lock``); and ``current_lock()``, the innermost hold of the
call in progress. A decorator of a new kind of hold is its arguments checked, a ``make`` and a
call of ``holding``."""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar

from ..core import (
    CoordinationUnavailable,
    Hold,
    Lock,
    validate_name,
)
from .holds import (
    aacquire,
    afinish,
    aname,
    awaiting_dispatch,
    busy,
    find_request,
    finish,
    settle_later,
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


def view_answers(on_busy: Any, on_unavailable: Any, *, when_busy: Any) -> tuple[Any, Any]:
    """(answer when busy, answer when Redis cannot be reached) of a view decorator: the ones
    given, checked to be callables ``(request, exc) -> HttpResponse``, else ``when_busy`` and the
    503 of :func:`~.holds.unavailable_response`."""
    if on_busy is not None and not callable(on_busy):
        raise TypeError(
            f"on_busy must be a callable (request, exc) -> HttpResponse, not {on_busy!r}"
        )
    if on_unavailable is not None and not callable(on_unavailable):
        raise TypeError(
            "on_unavailable must be a callable (request, exc) -> HttpResponse, not "
            f"{on_unavailable!r}"
        )
    return on_busy or when_busy, on_unavailable or unavailable_response


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
        target = awaiting_dispatch(target)  # method_decorator on an async view's dispatch
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
            settle_later(lock)  # a grant it may leave, nobody would release
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
            outcome = handed_to_stream(result, lock, request)
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
            settle_later(lock)
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
            outcome = handed_to_stream(result, lock, request)
            return result
        finally:
            _current.reset(token)
            if outcome is not STREAMING:
                await afinish(
                    lock, failed=outcome is FAILED
                )  # to the end, even if cancelled meanwhile

    return wrapper


def _namer(
    key: str | Callable[..., str], func: Callable[..., Any], decorator: str = "with_lock"
) -> Callable[..., str]:
    """Build ``namer(*args, **kwargs) -> lock name`` for ``key`` on ``func``."""
    if callable(key):

        def from_callable(*args: Any, **kwargs: Any) -> str:
            return validate_name(key(*args, **kwargs), f"name from {key!r}")

        return from_callable

    signature = call_signature(func)
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


def call_signature(func: Callable[..., Any]) -> inspect.Signature:
    """The arguments ``func`` is called with.

    Django's ``method_decorator`` hands the decorator a ``functools.partial``
    of the bound method, made to look like the method (``__wrapped__``): it is
    called without ``self``, so its own signature counts, not the method's.
    """
    if isinstance(func, functools.partial):
        return inspect.signature(func, follow_wrapped=False)
    return inspect.signature(func)


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
