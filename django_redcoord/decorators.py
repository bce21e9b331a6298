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
(or whatever ``on_busy(request, exc)`` returns) and the held lock is
``request.redcoord_lock``; other code gets :class:`LockNotAcquired`.
Inside any decorated call ``current_lock()`` returns the innermost held lock.

``async def`` functions and views work too: acquire and release run in a
worker thread (``asgiref.sync_to_async``) so the event loop never blocks.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse

from .exceptions import LockNotAcquired
from .keys import validate_name
from .locks import DEFAULT, Lock, check_ttl, check_wait

F = TypeVar("F", bound=Callable[..., Any])

_current: contextvars.ContextVar[Lock | None] = contextvars.ContextVar("redcoord_lock", default=None)


def current_lock() -> Lock | None:
    """The innermost lock held by a ``@with_lock`` call in this context (or None)."""
    return _current.get()


def busy_response(request: HttpRequest, exc: LockNotAcquired) -> HttpResponse:
    """Default answer when a view's lock is busy: 409 Conflict with Retry-After."""
    retry_after = getattr(exc, "retry_after", None) or 1.0
    response = HttpResponse(
        f"The resource is busy (lock {exc.name!r}); try again shortly.\n",
        status=409,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(max(1, math.ceil(retry_after)))
    return response


def with_lock(
    key: str | Callable[..., str],
    *,
    ttl: float = DEFAULT,
    wait: float | None = DEFAULT,
    auto_renew: bool = False,
    reentrant: bool = False,
    on_busy: Callable[[HttpRequest, LockNotAcquired], HttpResponse] | None = None,
    client: Any = None,
) -> Callable[[F], F]:
    """Hold the lock named by ``key`` around each call of the decorated callable.

    Args:
        key: a format template over the call's arguments, or a callable
            taking the same arguments and returning the lock name.
        ttl, wait, auto_renew, reentrant, client: as for :class:`Lock`.
        on_busy: for views, ``on_busy(request, exc)`` returns the response
            sent when the lock is not acquired within ``wait`` (default: 409).

    Raises at decoration time ``TypeError``/``ValueError`` for bad arguments;
    at call time ``LockNotAcquired`` (non-view callables) and ``LockLost``
    (the lock expired before the call ended).
    """
    if not (isinstance(key, str) and key) and not callable(key):
        raise TypeError(f"with_lock key must be a non-empty format string or a callable, not {key!r}")
    if ttl is not DEFAULT:
        check_ttl(ttl)
    if wait is not DEFAULT:
        check_wait(wait)
    if on_busy is not None and not callable(on_busy):
        raise TypeError(f"on_busy must be a callable (request, exc) -> HttpResponse, not {on_busy!r}")
    options = {"ttl": ttl, "wait": wait, "auto_renew": auto_renew, "reentrant": reentrant, "client": client}

    def decorate(target: F) -> F:
        if isinstance(target, type):
            if not hasattr(target, "dispatch"):
                raise TypeError(f"with_lock on a class needs a class-based view (with dispatch()), not {target!r}")
            target.dispatch = decorate(target.dispatch)  # type: ignore[attr-defined]
            return target
        if not callable(target):
            raise TypeError(f"with_lock decorates functions, methods and view classes, not {target!r}")
        namer = _namer(key, target)
        if inspect.iscoroutinefunction(target):
            if reentrant:
                raise TypeError("with_lock(reentrant=True) is not supported on async functions")
            return _wrap_async(target, namer, options, on_busy)  # type: ignore[return-value]
        return _wrap_sync(target, namer, options, on_busy)  # type: ignore[return-value]

    return decorate


def _wrap_sync(func: Callable[..., Any], namer: Callable[..., str], options: dict, on_busy: Any) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = Lock(namer(*args, **kwargs), **options)
        request = _find_request(args)
        if not lock.acquire():
            return _busy(lock, request, on_busy)
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        try:
            return func(*args, **kwargs)
        finally:
            _current.reset(token)
            lock.release()

    return wrapper


def _wrap_async(func: Callable[..., Any], namer: Callable[..., str], options: dict, on_busy: Any) -> Any:
    from asgiref.sync import sync_to_async

    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = Lock(namer(*args, **kwargs), **options)
        request = _find_request(args)
        if not await sync_to_async(lock.acquire, thread_sensitive=False)():
            return _busy(lock, request, on_busy)
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        try:
            return await func(*args, **kwargs)
        finally:
            _current.reset(token)
            await sync_to_async(lock.release, thread_sensitive=False)()

    return wrapper


def _busy(lock: Lock, request: HttpRequest | None, on_busy: Any) -> Any:
    wait = lock.wait
    exc = LockNotAcquired(
        f"lock {lock.name!r} could not be acquired within "
        f"{'forever' if wait is None else f'{wait:g} s'}",
        name=lock.name,
        wait=wait,
    )
    exc.retry_after = lock.retry_after  # type: ignore[attr-defined]
    if request is None:
        raise exc
    return (on_busy or busy_response)(request, exc)


def _find_request(args: tuple[Any, ...]) -> HttpRequest | None:
    """The view's request: first positional for function views, second for methods."""
    for arg in args[:2]:
        if isinstance(arg, HttpRequest):
            return arg
    return None


def _namer(key: str | Callable[..., str], func: Callable[..., Any]) -> Callable[..., str]:
    """Build ``namer(*args, **kwargs) -> lock name`` for ``key`` on ``func``."""
    if callable(key):

        def from_callable(*args: Any, **kwargs: Any) -> str:
            return validate_name(key(*args, **kwargs), f"lock name from {key!r}")

        return from_callable

    signature = inspect.signature(func)
    var_keyword = _check_template(key, func, signature)

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
                f"with_lock key {key!r} on {func.__qualname__} could not be formatted: {exc!r}; "
                f"the call's arguments are {', '.join(arguments) or 'none'}"
            ) from None
        return validate_name(name, f"lock name {name!r} (from key {key!r})")

    return from_template


def _check_template(key: str, func: Callable[..., Any], signature: inspect.Signature) -> str | None:
    """Fail at decoration time for a template that can never format; return the **kwargs name."""
    params = signature.parameters
    var_keyword = next((p.name for p in params.values() if p.kind is p.VAR_KEYWORD), None)
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(key) if field is not None]
    except ValueError as exc:
        raise ValueError(f"with_lock key {key!r} is not a valid format template: {exc}") from None
    names = ", ".join(params) or "none"
    for field in fields:
        root = re.match(r"[^.\[]*", field).group()  # type: ignore[union-attr]
        if not root.isidentifier():
            raise ValueError(
                f"with_lock key {key!r}: each {{...}} must start with an argument name of "
                f"{func.__qualname__} (its arguments are {names}), not {{{field}}}"
            )
        if root not in params and var_keyword is None:
            raise ValueError(
                f"with_lock key {key!r} on {func.__qualname__}: {{{field}}} names no argument "
                f"(its arguments are {names})"
            )
    return var_keyword
