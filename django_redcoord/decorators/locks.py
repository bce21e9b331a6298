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

import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from ..core import (
    DEFAULT,
    CoordinationUnavailable,
    Lock,
    LockNotAcquired,
    check_count,
    check_ttl,
    check_wait,
)
from .factory import F, holding, view_answers
from .holds import (
    busy_response,
)

log = logging.getLogger("django_redcoord.locks")


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
    if reentrant and not isinstance(reentrant, bool):
        raise TypeError("reentrant must be True or False")
    answers = view_answers(on_busy, on_unavailable, when_busy=busy_response)
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


# -- plain functions and views ---------------------------------------------------------


# -- generators and streamed responses ---------------------------------------------------


# -- ending a hold -------------------------------------------------------------------------
