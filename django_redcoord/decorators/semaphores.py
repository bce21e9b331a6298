"""``@with_semaphore``: at most N calls of a view or function at once, across every process.

::

    @with_semaphore("exports", permits=5, wait=0)     # at most 5 exports at once
    def export(request): ...

    @with_semaphore("report:{request.user.pk}", permits=2)
    async def report(request): ...

A view that finds every permit taken (within ``wait``) answers **429 Too Many
Requests** with ``Retry-After`` (seconds until the earliest permit's lease
runs out, at least 1): the request is not wrong and nothing conflicts with
it — the server is at capacity and the client should come back, which is
what 429 says (409, used by ``@with_lock``, says this very resource is being
changed). ``on_busy(request, exc)`` replaces the answer. Other callables get
``LockNotAcquired``. Everything else — generators and streamed responses
holding the permit until their body is done, async views on the event loop,
cancellation, 503 while Redis is down — works as for ``@with_lock``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from ..core import (
    DEFAULT,
    CoordinationUnavailable,
    LockNotAcquired,
    Semaphore,
    check_permits,
    check_ttl,
    check_wait,
)
from .factory import F, holding, view_answers


def too_many_response(request: HttpRequest, exc: LockNotAcquired) -> HttpResponse:
    """Default answer when every permit of a view's semaphore is taken: 429 with Retry-After."""
    retry_after = getattr(exc, "retry_after", None) or 1.0
    response = HttpResponse(
        f"Too many requests at once (semaphore {exc.name!r}); try again shortly.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(max(1, math.ceil(retry_after)))
    return response


def with_semaphore(
    key: str | Callable[..., str],
    *,
    permits: int,
    ttl: float = DEFAULT,
    wait: float | None = DEFAULT,
    auto_renew: bool = False,
    on_busy: Callable[[HttpRequest, LockNotAcquired], HttpResponse] | None = None,
    on_unavailable: Callable[[HttpRequest, CoordinationUnavailable], HttpResponse] | None = None,
    client: Any = None,
) -> Callable[[F], F]:
    """Hold a permit of the semaphore named by ``key`` around each call.

    Args:
        key: a format template over the call's arguments, or a callable
            taking the same arguments and returning the name.
        permits: how many calls may hold a permit at once.
        ttl, wait, auto_renew, client: as for :class:`~django_redcoord.core.semaphores.Semaphore`.
        on_busy: for views, ``on_busy(request, exc)`` returns the response
            sent when no permit is free within ``wait`` (default: 429 with
            ``Retry-After``).
        on_unavailable: for views, the response while Redis cannot be
            reached (default: 503 with ``Retry-After``).

    Raises at decoration time ``TypeError``/``ValueError`` for bad arguments.
    """
    check_permits(permits)
    if ttl is not DEFAULT:
        check_ttl(ttl)
    if wait is not DEFAULT:
        check_wait(wait)
    options = {"ttl": ttl, "wait": wait, "auto_renew": auto_renew, "client": client}
    answers = view_answers(on_busy, on_unavailable, when_busy=too_many_response)
    return holding("with_semaphore", key, lambda name: Semaphore(name, permits, **options), answers)
