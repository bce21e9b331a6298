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

``async def`` functions and views work too: acquire and release run in a
worker thread so the event loop never blocks. A request cancelled while
waiting (the client went away) stops waiting and gives back whatever the
wait ends with.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import math
import re
import string
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from ..core.exceptions import CoordinationUnavailable, LockLost, LockNotAcquired, RedcoordError
from ..core.keys import validate_name
from ..core.locks import Lock
from ..core.transport.clients import is_async_client
from ..core.transport.drivers import uncancellable
from ..core.values import DEFAULT, check_ttl, check_wait

log = logging.getLogger(__name__)

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


#: Seconds a 503 asks the client to wait while Redis cannot be reached.
UNAVAILABLE_RETRY_AFTER = 5


def unavailable_response(request: HttpRequest, exc: CoordinationUnavailable) -> HttpResponse:
    """Default answer when Redis cannot be reached: 503 Service Unavailable with Retry-After."""
    response = HttpResponse(
        "The coordination service is unavailable; try again shortly.\n",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
    return response


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
) -> Callable[[F], F]:
    """Hold the lock named by ``key`` around each call of the decorated callable.

    Args:
        key: a format template over the call's arguments, or a callable
            taking the same arguments and returning the lock name.
        ttl, wait, auto_renew, reentrant, client: as for :class:`Lock`.
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
    if not (isinstance(key, str) and key) and not callable(key):
        raise TypeError(f"with_lock key must be a non-empty format string or a callable, not {key!r}")
    if ttl is not DEFAULT:
        check_ttl(ttl)
    if wait is not DEFAULT:
        check_wait(wait)
    if on_busy is not None and not callable(on_busy):
        raise TypeError(f"on_busy must be a callable (request, exc) -> HttpResponse, not {on_busy!r}")
    if on_unavailable is not None and not callable(on_unavailable):
        raise TypeError(f"on_unavailable must be a callable (request, exc) -> HttpResponse, not {on_unavailable!r}")
    options = {"ttl": ttl, "wait": wait, "auto_renew": auto_renew, "reentrant": reentrant, "client": client}
    answers = (on_busy or busy_response, on_unavailable or unavailable_response)

    def decorate(target: F) -> F:
        if isinstance(target, type):
            if not hasattr(target, "dispatch"):
                raise TypeError(f"with_lock on a class needs a class-based view (with dispatch()), not {target!r}")
            target.dispatch = decorate(target.dispatch)  # type: ignore[attr-defined]
            return target
        if not callable(target):
            raise TypeError(f"with_lock decorates functions, methods and view classes, not {target!r}")
        namer = _namer(key, target)
        is_async = inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target)
        if is_async and reentrant:
            raise TypeError("with_lock(reentrant=True) is not supported on async functions")
        if inspect.isgeneratorfunction(target):
            return _wrap_generator(target, namer, options)  # type: ignore[return-value]
        if inspect.isasyncgenfunction(target):
            return _wrap_async_generator(target, namer, options)  # type: ignore[return-value]
        if is_async:
            return _wrap_async(target, namer, options, answers)  # type: ignore[return-value]
        return _wrap_sync(target, namer, options, answers)  # type: ignore[return-value]

    return decorate


# -- plain functions and views ---------------------------------------------------------


def _wrap_sync(func: Callable[..., Any], namer: Callable[..., str], options: dict, answers: tuple) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = Lock(namer(*args, **kwargs), **options)
        request = _find_request(args)
        try:
            acquired = lock.acquire()
        except CoordinationUnavailable as exc:
            if request is None:
                raise
            return answers[1](request, exc)
        if not acquired:
            return _busy(lock, request, answers[0])
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        outcome = _FAILED
        try:
            result = func(*args, **kwargs)
            outcome = _handed_to_stream(result, lock)
            return result
        finally:
            _current.reset(token)
            if outcome is not _STREAMING:
                _finish(lock, failed=outcome is _FAILED)

    return wrapper


def _wrap_async(func: Callable[..., Any], namer: Callable[..., str], options: dict, answers: tuple) -> Any:
    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = Lock(namer(*args, **kwargs), **options)
        request = _find_request(args)
        try:
            acquired = await _aacquire(lock)
        except CoordinationUnavailable as exc:
            if request is None:
                raise
            return answers[1](request, exc)
        if not acquired:
            return _busy(lock, request, answers[0])
        token = _current.set(lock)
        if request is not None:
            request.redcoord_lock = lock  # type: ignore[attr-defined]
        outcome = _FAILED
        try:
            result = await func(*args, **kwargs)
            outcome = _handed_to_stream(result, lock)
            return result
        finally:
            _current.reset(token)
            if outcome is not _STREAMING:
                await _afinish(lock, failed=outcome is _FAILED)  # to the end, even if cancelled meanwhile

    return wrapper


def _native(lock: Lock) -> bool:
    """True when the lock can be taken on the event loop (no client given, or a redis.asyncio one)."""
    return lock._client is None or is_async_client(lock._client)


async def _aacquire(lock: Lock) -> bool:
    """Acquire from async code: on the event loop, or in a thread for a sync ``client=``."""
    if _native(lock):
        return await lock.aacquire()  # cancelled at any await, it gives back what it took
    return await _acquire_in_thread(lock)


async def _afinish(lock: Lock, failed: bool, quiet: bool = False) -> None:
    """:func:`_finish` from async code; runs to the end even if the task is cancelled meanwhile."""
    if not _native(lock):
        await uncancellable(asyncio.get_running_loop().run_in_executor(None, _finish, lock, failed, quiet), reraise=True)
        return
    try:
        await uncancellable(lock.arelease(), reraise=True)
    except RedcoordError as exc:
        _release_failed(lock, exc, failed, quiet)


async def _acquire_in_thread(lock: Lock) -> bool:
    """``lock.acquire()`` in a worker thread, so the event loop never blocks.

    If the awaiting task is cancelled (the client went away), the wait is
    interrupted and whatever it ends with is given back: nothing stays held
    or queued. Exactly one side releases a grant: the thread, if the
    cancellation came first; the cancelled task, if the grant did.
    """
    loop = asyncio.get_running_loop()
    handshake = threading.Lock()
    state = {"cancelled": False, "delivered": False}

    def acquire() -> bool:
        granted = lock.acquire()
        with handshake:
            give_back = granted and state["cancelled"]
            state["delivered"] = granted and not give_back
        if give_back:
            _release_quietly(lock)
            return False
        return granted

    future = loop.run_in_executor(None, acquire)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with handshake:
            state["cancelled"] = True
            delivered = state["delivered"]
        if delivered:  # granted just as we were cancelled: nobody will use it
            loop.run_in_executor(None, _release_quietly, lock)
        else:  # still waiting: stop, and give back whatever the wait ends with
            loop.run_in_executor(None, lock._interrupt)
        raise


# -- generators and streamed responses ---------------------------------------------------

_FAILED, _DONE, _STREAMING = object(), object(), object()


def _handed_to_stream(result: Any, lock: Lock) -> object:
    """If ``result`` is a streamed response, keep the lock until it is sent or closed."""
    if not isinstance(result, StreamingHttpResponse):
        return _DONE
    released = threading.Lock()

    def release_once() -> None:
        if released.acquire(blocking=False):
            if _native(lock) and lock._client is not None:
                async_to_sync(_afinish)(lock, False, True)  # its client lives on the server's loop
            else:
                _finish(lock, failed=False, quiet=True)

    content = result.streaming_content
    if result.is_async:

        async def streamed_async() -> Any:
            try:
                async for chunk in content:
                    yield chunk
            finally:
                if released.acquire(blocking=False):
                    await _afinish(lock, failed=False, quiet=True)

        result.streaming_content = _ReleasingAsyncBody(streamed_async(), release_once)
    else:

        def streamed() -> Any:
            try:
                yield from content
            finally:
                release_once()

        result.streaming_content = _ReleasingBody(streamed(), release_once)
    return _STREAMING


class _ReleasingBody:
    """A streamed body whose ``close()`` also releases the lock.

    Django registers the ``close`` of the content it is given among the
    response's closers. A generator closed before its first chunk (a
    middleware replaced the response, the client left before the body began)
    never runs its ``finally``; this close() releases all the same.
    """

    def __init__(self, body: Any, release: Callable[[], None]) -> None:
        self._body, self._release = body, release

    def __iter__(self) -> Any:
        return self._body

    def close(self) -> None:
        try:
            self._body.close()
        finally:
            self._release()


class _ReleasingAsyncBody:
    """The same for an async body (Django's ASGI handler calls ``close()`` when done)."""

    def __init__(self, body: Any, release: Callable[[], None]) -> None:
        self._body, self._release = body, release

    def __aiter__(self) -> Any:
        return self._body

    def close(self) -> None:
        self._release()


def _wrap_generator(func: Callable[..., Any], namer: Callable[..., str], options: dict) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A generator's body runs when it is iterated: so does the lock.
        lock = Lock(namer(*args, **kwargs), **options)
        if not lock.acquire():
            _busy(lock, None, None)
        failed = True
        try:
            yield from func(*args, **kwargs)
            failed = False
        finally:  # exhausted, closed (GeneratorExit) or failed: released
            _finish(lock, failed=failed)

    return wrapper


def _wrap_async_generator(func: Callable[..., Any], namer: Callable[..., str], options: dict) -> Any:
    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = Lock(namer(*args, **kwargs), **options)
        if not await _aacquire(lock):
            _busy(lock, None, None)
        failed = True
        try:
            async for item in func(*args, **kwargs):
                yield item
            failed = False
        finally:
            await _afinish(lock, failed)

    return wrapper


# -- ending a hold -------------------------------------------------------------------------


def _finish(lock: Lock, failed: bool, quiet: bool = False) -> None:
    """Release after the call. After a failure the call's own error matters
    more: a failed release is logged. After success LockLost is raised (the
    work may have overlapped with the next holder), unless ``quiet`` (a
    streamed response is already out: logged). A release Redis never got is
    logged; the lock expires after its TTL."""
    try:
        lock.release()
    except RedcoordError as exc:
        _release_failed(lock, exc, failed, quiet)


def _release_failed(lock: Lock, exc: RedcoordError, failed: bool, quiet: bool) -> None:
    if isinstance(exc, LockLost):
        if failed or quiet:
            log.error("lock %s: lost before the end of the call (its work may have overlapped)", lock.name)
            return
        raise exc
    log.warning("lock %s: not released (%s); it expires after its TTL (%g s)", lock.name, exc, lock.ttl)


def _release_quietly(lock: Lock) -> None:
    try:
        lock.release()
    except RedcoordError as exc:
        log.warning("lock %s: could not give back a grant nobody will use (%s)", lock.name, exc)


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
    return on_busy(request, exc)


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
