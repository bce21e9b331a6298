"""``@with_read_lock`` / ``@with_write_lock``: a read or a write hold of a read-write lock around
a call.

::

    @with_read_lock("catalog")            # many views read at once
    def show_catalog(request): ...

    @with_write_lock("catalog")           # one writes, alone, fairly queued
    def import_catalog(request): ...

Busy views answer 409 with ``Retry-After`` as ``@with_lock`` does (``on_busy``
replaces it); everything else — generators and streamed responses, async
views on the event loop, cancellation, 503 while Redis is down — works as
for ``@with_lock``. The hold is ``request.redcoord_lock``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from ..core import (
    DEFAULT,
    CoordinationUnavailable,
    LockNotAcquired,
    ReadWriteLock,
    check_ttl,
    check_wait,
)
from .factory import F, holding
from .holds import busy_response, unavailable_response


def _rw_decorator(mode: str) -> Callable[..., Callable[[F], F]]:
    def decorator(
        key: str | Callable[..., str],
        *,
        ttl: float = DEFAULT,
        wait: float | None = DEFAULT,
        auto_renew: bool = False,
        on_busy: Callable[[HttpRequest, LockNotAcquired], HttpResponse] | None = None,
        on_unavailable: Callable[[HttpRequest, CoordinationUnavailable], HttpResponse]
        | None = None,
        client: Any = None,
    ) -> Callable[[F], F]:
        if ttl is not DEFAULT:
            check_ttl(ttl)
        if wait is not DEFAULT:
            check_wait(wait)
        for what, answer in (("on_busy", on_busy), ("on_unavailable", on_unavailable)):
            if answer is not None and not callable(answer):
                raise TypeError(
                    f"{what} must be a callable (request, exc) -> HttpResponse, not {answer!r}"
                )
        options = {"ttl": ttl, "wait": wait, "auto_renew": auto_renew, "client": client}
        answers = (on_busy or busy_response, on_unavailable or unavailable_response)

        def make(name: str) -> Any:
            rw = ReadWriteLock(name, **options)
            return rw.read() if mode == "r" else rw.write()

        return holding(f"with_{'read' if mode == 'r' else 'write'}_lock", key, make, answers)

    decorator.__name__ = decorator.__qualname__ = f"with_{'read' if mode == 'r' else 'write'}_lock"
    decorator.__doc__ = (
        f"Hold a {'read' if mode == 'r' else 'write'} hold of the read-write lock named by ``key`` "
        "around each call."
    )
    return decorator


with_read_lock = _rw_decorator("r")
with_write_lock = _rw_decorator("w")
