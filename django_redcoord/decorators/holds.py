"""How a decorated call answers and ends: 409/503 responses, acquiring from async code, releasing
after the call.

Shared by the wrappers of plain and async callables (:mod:`.locks`) and of
generators and streamed responses (:mod:`.streaming`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core.exceptions import SynchronousOnlyOperation
from django.http import HttpRequest, HttpResponse

from ..core import (
    CoordinationUnavailable,
    LockLost,
    LockNotAcquired,
    RedcoordError,
    is_async_client,
    observers,
    uncancellable,
)
from ..core import Hold as Lock
from ..core import observe_event as observe
from ..core import settle_later as settle_in_doubt

log = logging.getLogger("django_redcoord.locks")

# An async call given a sync ``client=`` takes its lock in a thread. Blocking
# waits get their own threads, and releases (and interruptions) others: in
# the event loop's default executor (a handful of threads) waits would fill
# every thread and the releases that end them would queue behind them, and
# so would every other ``sync_to_async`` call of the process.
_WAIT_THREADS = 256
_executors: dict[str, tuple[int, ThreadPoolExecutor]] = {}
_executors_lock = threading.Lock()


def _executor(kind: str, size: int) -> ThreadPoolExecutor:
    """The process's executor for ``kind`` (made on first use; a forked child makes its own)."""
    pid = os.getpid()
    with _executors_lock:
        made = _executors.get(kind)
        if made is None or made[0] != pid:
            made = _executors[kind] = (
                pid,
                ThreadPoolExecutor(size, thread_name_prefix=f"redcoord-{kind}"),
            )
    return made[1]


def _in_thread(kind: str, func: Any, *args: Any) -> asyncio.Future:
    size = _WAIT_THREADS if kind == "wait" else 8
    return asyncio.get_running_loop().run_in_executor(_executor(kind, size), func, *args)


def settle_later(lock: Lock) -> None:
    """A view's acquire raised CoordinationUnavailable after its command was sent: the grant
    may still land once Redis answers again (a paused or overloaded server runs what it had
    read), and no request would ever release it, so the view would answer 409 for the lock's
    whole TTL after the outage. The core's settling thread asks again as the same owner until
    Redis answers and gives back what it finds (``Hold.settle``)."""
    owner = getattr(lock, "in_doubt", None)  # (a quorum lock's grants expire with their TTL)
    if owner is not None:
        settle_in_doubt(lock, owner, lock.ttl, lock.doubt_lasts)


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


def busy(lock: Lock, request: HttpRequest | None, on_busy: Any) -> Any:
    wait = lock.wait
    exc = LockNotAcquired(
        f"{lock.kind} {lock.name!r} could not be acquired within "
        f"{'forever' if wait is None else f'{wait:g} s'}",
        name=lock.name,
        wait=wait,
    )
    exc.retry_after = lock.retry_after  # type: ignore[attr-defined]
    if request is None:
        raise exc
    response = on_busy(request, exc)
    if observers:
        observe("view.busy", kind=lock._event_kind, status=getattr(response, "status_code", 0))
    return response


def is_request(value: Any) -> bool:
    """A view's request: Django's HttpRequest, or a request wrapping one, as Django REST
    framework's ``Request`` does (its ``user`` is the one DRF authenticated, so keys read it)."""
    return isinstance(value, HttpRequest) or isinstance(
        getattr(value, "_request", None), HttpRequest
    )


def find_request(args: tuple[Any, ...]) -> HttpRequest | None:
    """The view's request: first positional for function views, second for methods."""
    for arg in args[:2]:
        if is_request(arg):
            return arg  # type: ignore[no-any-return]
    return None


def is_async(target: Any) -> bool:
    """True for an ``async def`` (also behind partials and bound methods, as ``method_decorator``
    gives them)."""
    while True:
        if isinstance(target, functools.partial):
            target = target.func
        elif inspect.ismethod(target):
            target = target.__func__
        else:
            break
    return inspect.iscoroutinefunction(target) or iscoroutinefunction(target)


def awaiting_dispatch(target: Any) -> Any:
    """``method_decorator`` on an async class-based view's ``dispatch``: the decorator gets a
    partial of the bound, sync ``dispatch``, which returns the handler's coroutine. It is given
    as an ``async def`` that awaits it, so a hold or a slot lasts while the handler runs and a
    refusal is a response Django can await. Anything else is returned as it is."""
    bound = (
        getattr(target.func, "__self__", None) if isinstance(target, functools.partial) else None
    )
    if bound is None or not getattr(type(bound), "view_is_async", False) or is_async(target):
        return target

    @functools.wraps(target)
    async def awaiting(*args: Any, **kwargs: Any) -> Any:
        result = target(*args, **kwargs)
        return (await result) if inspect.isawaitable(result) else result

    return awaiting


def view_dispatch(view: type) -> Any:
    """The ``dispatch`` of a class-based view, to be wrapped by a decorator.

    An async view's (``async def`` handlers) is a plain method returning the
    handler's coroutine, so a plain wrapper would decide, hold and let go
    before the handler ran, and answer a refusal Django cannot await: it is
    given as an ``async def`` that awaits the handler instead.
    """
    dispatch = view.dispatch  # type: ignore[attr-defined]
    if not getattr(view, "view_is_async", False) or inspect.iscoroutinefunction(dispatch):
        return dispatch

    @functools.wraps(dispatch)
    async def async_dispatch(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = dispatch(self, *args, **kwargs)
        return (await result) if inspect.isawaitable(result) else result

    return async_dispatch


async def aname(namer: Any, *args: Any, **kwargs: Any) -> str:
    """A name for a call on the event loop: ``namer(...)``, or in a thread when it
    reads something lazy that queries the database (``{request.user.pk}`` of
    a signed-in user: Django refuses that on the loop)."""
    try:
        return namer(*args, **kwargs)
    except SynchronousOnlyOperation:
        return await sync_to_async(namer)(*args, **kwargs)


def native(lock: Lock) -> bool:
    """True when the lock can be taken on the event loop (no client given, or a redis.asyncio
    one)."""
    return lock._client is None or is_async_client(lock._client)


async def aacquire(lock: Lock) -> bool:
    """Acquire from async code: on the event loop, or in a thread for a sync ``client=``."""
    if native(lock):
        return await lock.aacquire()  # cancelled at any await, it gives back what it took
    return await _acquire_in_thread(lock)


async def afinish(lock: Lock, failed: bool, quiet: bool = False) -> None:
    """:func:`finish` from async code; runs to the end even if the task is cancelled meanwhile."""
    if not native(lock):
        await uncancellable(_in_thread("release", finish, lock, failed, quiet), reraise=True)
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

    future = _in_thread("wait", acquire)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with handshake:
            state["cancelled"] = True
            delivered = state["delivered"]
        if delivered:  # granted just as we were cancelled: nobody will use it
            _in_thread("release", _release_quietly, lock)
        else:  # still waiting: stop, and give back whatever the wait ends with
            _in_thread("release", lock._interrupt)
        raise


def finish(lock: Lock, failed: bool, quiet: bool = False) -> None:
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
            log.error(
                "lock %s: lost before the end of the call (its work may have overlapped)", lock.name
            )
            return
        raise exc
    log.warning(
        "lock %s: not released (%s); it expires after its TTL (%g s)", lock.name, exc, lock.ttl
    )


def _release_quietly(lock: Lock) -> None:
    try:
        lock.release()
    except RedcoordError as exc:
        log.warning("lock %s: could not give back a grant nobody will use (%s)", lock.name, exc)
