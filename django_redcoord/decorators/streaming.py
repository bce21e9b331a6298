"""The lock covers the work however it runs: generators, async generators and streamed responses.

A decorated generator takes the lock at its first step and holds it until it
is exhausted or closed. A view returning a ``StreamingHttpResponse`` (or
``FileResponse``) holds it until the body has been sent or the response
closed, including a response closed before its first chunk.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, StreamingHttpResponse

from ..core import Hold
from .holds import aacquire, afinish, aname, busy, finish, native

FAILED, DONE, STREAMING = object(), object(), object()

log = logging.getLogger("django_redcoord")


def handed_to_stream(result: Any, lock: Hold, request: Any = None) -> object:
    """If ``result`` is a streamed response, keep the lock until it is sent or closed (or, when a
    middleware replaced it, until ``request``'s final response is closed)."""

    def release() -> None:
        if native(lock) and lock._client is not None:
            async_to_sync(afinish)(lock, False, True)  # its client lives on the server's loop
        else:
            finish(lock, failed=False, quiet=True)

    return (
        STREAMING
        if release_after_body(
            result, release, lambda: afinish(lock, failed=False, quiet=True), request
        )
        else DONE
    )


def release_after_body(
    result: Any,
    release: Callable[[], None],
    arelease: Callable[[], Awaitable[None]],
    request: Any = None,
) -> bool:
    """If ``result`` is a streamed response, give back what the call holds once, when its body ends.

    The body ends when it has been sent, when it fails, or when the response
    is closed (a client that left, a middleware that replaced the response,
    a body closed before its first chunk). ``release()`` runs in sync code,
    ``await arelease()`` on the event loop that iterates an async body.
    Returns True if the release was handed to the body (the caller must not
    release), False if ``result`` does not stream.
    """
    if not isinstance(result, StreamingHttpResponse):
        return False
    released = threading.Lock()

    def release_once() -> None:
        if released.acquire(blocking=False):
            release()

    async def arelease_once() -> None:
        if released.acquire(blocking=False):
            await arelease()

    # A middleware may answer with a response of its own instead (ConditionalGetMiddleware's
    # 304, an error page): Django never closes this one then, and its body never starts. What
    # Django closes is the final response, and with it the request (``request.close`` is among
    # its closers, under WSGI and ASGI alike): given back then. For a call without a request,
    # once the garbage collector frees the response object.
    if not _at_request_close(request, release_once):
        _when_dropped(result, released, release_once, arelease_once)

    content = result.streaming_content
    if result.is_async:

        async def streamed_async() -> Any:
            try:
                async for chunk in content:
                    yield chunk
            finally:
                await arelease_once()

        result.streaming_content = _ReleasingAsyncBody(streamed_async(), release_once)
    else:

        def streamed() -> Any:
            try:
                yield from content
            finally:
                release_once()

        result.streaming_content = _ReleasingBody(streamed(), release_once)
    return True


def _at_request_close(request: Any, release: Callable[[], None]) -> bool:
    """Run ``release`` when Django closes ``request`` (DRF's Request: the Django request it
    wraps); False when there is no such request."""
    if not isinstance(request, HttpRequest):
        request = getattr(request, "_request", None)
        if not isinstance(request, HttpRequest):
            return False
    pending: list[Callable[[], None]] | None = request.__dict__.get("_redcoord_streams")
    if pending is None:
        pending = request.__dict__["_redcoord_streams"] = []
        close = request.close

        def close_and_give_back() -> None:
            try:
                close()
            finally:
                while pending:
                    try:
                        pending.pop()()  # (a body that ended released already: a no-op)
                    except Exception:  # noqa: BLE001 - the others are still given back
                        log.exception("could not give back what a streamed response held")

        request.close = close_and_give_back  # type: ignore[method-assign]
    pending.append(release)
    return True


def _when_dropped(
    result: Any,
    released: threading.Lock,
    release_once: Callable[[], None],
    arelease_once: Callable[[], Awaitable[None]],
) -> None:
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    weakref.finalize(result, _when_gone, released, release_once, arelease_once, loop).atexit = False


def _when_gone(
    released: threading.Lock,
    release_once: Callable[[], None],
    arelease_once: Callable[[], Awaitable[None]],
    loop: asyncio.AbstractEventLoop | None,
) -> None:
    """A streamed response without a request was collected (garbage: its wrapped body and it
    refer to each other, so the collector frees them): give back what it still held, without
    blocking whoever collected it (an event loop): on the loop the view ran on, else in a thread
    of its own."""
    if released.locked():
        return  # its body ended, or the request did: given back already
    if loop is not None:
        try:
            loop.call_soon_threadsafe(_start, loop, arelease_once)
            return
        except RuntimeError:  # that loop is closed: in a thread, then
            pass
    threading.Thread(target=release_once, name="redcoord-stream-release", daemon=True).start()


#: The give-backs scheduled on a loop by _when_gone (a loop keeps only weak references to its
#: tasks); each leaves when done.
_tasks: set[asyncio.Task[None]] = set()


def _start(loop: asyncio.AbstractEventLoop, arelease_once: Callable[[], Awaitable[None]]) -> None:
    task: asyncio.Task[None] = loop.create_task(arelease_once())  # type: ignore[arg-type]
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


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


def wrap_generator(
    func: Callable[..., Any], namer: Callable[..., str], make: Callable[[str], Hold]
) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A generator's body runs when it is iterated: so does the lock.
        lock = make(namer(*args, **kwargs))
        if not lock.acquire():
            busy(lock, None, None)
        failed = True
        try:
            yield from func(*args, **kwargs)
            failed = False
        finally:  # exhausted, closed (GeneratorExit) or failed: released
            finish(lock, failed=failed)

    return wrapper


def wrap_async_generator(
    func: Callable[..., Any], namer: Callable[..., str], make: Callable[[str], Hold]
) -> Any:
    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        lock = make(await aname(namer, *args, **kwargs))
        if not await aacquire(lock):
            busy(lock, None, None)
        failed = True
        try:
            async for item in func(*args, **kwargs):
                yield item
            failed = False
        finally:
            await afinish(lock, failed)

    return wrapper
