"""The lock covers the work however it runs: generators, async generators and streamed responses.

A decorated generator takes the lock at its first step and holds it until it
is exhausted or closed. A view returning a ``StreamingHttpResponse`` (or
``FileResponse``) holds it until the body has been sent or the response
closed, including a response closed before its first chunk.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import async_to_sync
from django.core.signals import request_finished, request_started
from django.http import StreamingHttpResponse

from ..core import Hold
from .holds import aacquire, afinish, aname, busy, finish, native

FAILED, DONE, STREAMING = object(), object(), object()

log = logging.getLogger("django_redcoord")


def handed_to_stream(result: Any, lock: Hold) -> object:
    """If ``result`` is a streamed response, keep the lock until it is sent or closed."""

    def release() -> None:
        if native(lock) and lock._client is not None:
            async_to_sync(afinish)(lock, False, True)  # its client lives on the server's loop
        else:
            finish(lock, failed=False, quiet=True)

    return (
        STREAMING
        if release_after_body(result, release, lambda: afinish(lock, failed=False, quiet=True))
        else DONE
    )


def release_after_body(
    result: Any, release: Callable[[], None], arelease: Callable[[], Awaitable[None]]
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
    pending = _pending_here()

    def release_once() -> None:
        if released.acquire(blocking=False):
            with contextlib.suppress(ValueError):
                pending.remove(release_once)
            release()

    pending.append(release_once)

    content = result.streaming_content
    if result.is_async:

        async def streamed_async() -> Any:
            try:
                async for chunk in content:
                    yield chunk
            finally:
                if released.acquire(blocking=False):
                    await arelease()

        result.streaming_content = _ReleasingAsyncBody(streamed_async(), release_once)
    else:

        def streamed() -> Any:
            try:
                yield from content
            finally:
                release_once()

        result.streaming_content = _ReleasingBody(streamed(), release_once)
    return True


#: The releases still to run of the streamed responses made in this request (this context: a
#: WSGI server's thread, an ASGI request's task), run when its final response is closed.
_pending: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "redcoord_streams_pending", default=None
)


def _pending_here() -> list[Callable[[], None]]:
    """This context's list of pending releases; the first call also connects the receiver.

    A middleware may replace the streamed response (ConditionalGetMiddleware's 304, an error
    page from ``process_response``): Django then never closes it, and its body never starts,
    so neither the body's ``finally`` nor its ``close()`` runs. The final response's
    ``close()`` sends ``request_finished``, in the thread that served the request (WSGI) or in
    a copy of the request task's context (ASGI): what is still pending here is given back then.
    A body that did start releases as it ends, before that close. (``request_started`` starts
    each request with a list of its own.)"""
    request_started.connect(_new_request, dispatch_uid="django_redcoord.streams_new", weak=False)
    request_finished.connect(
        _release_pending, dispatch_uid="django_redcoord.streams_pending", weak=False
    )
    pending = _pending.get()
    if pending is None:
        pending = []
        _pending.set(pending)
    return pending


def _new_request(**kwargs: Any) -> None:
    """A request starts here: its list is its own (a WSGI thread serves one request after
    another, and Django's test client several from one thread)."""
    _pending.set(None)


def _release_pending(**kwargs: Any) -> None:
    pending = _pending.get()
    while pending:
        release = pending.pop()
        try:
            release()
        except Exception:  # noqa: BLE001 - the others are still given back
            log.exception("could not give back what a replaced streamed response held")


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
