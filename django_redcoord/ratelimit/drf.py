"""A Django REST framework throttle on django_redcoord's rate limiter (``pip install
django-redcoord[drf]``).

::

    class BurstThrottle(RedisThrottle):
        policy = "10/s;burst=20 & 1000/h"
        key = "user"                      # or "ip", "header:X-Api-Key", or a callable (request)
        -> str

    class ExportThrottle(RedisThrottle):
        policy = "concurrency=2"          # at most 2 in flight per user
        key = "user"

    class OrderViewSet(viewsets.ModelViewSet):
        throttle_classes = [BurstThrottle]

Unlike DRF's own throttles (a read-modify-write of a list in the cache, which
lets concurrent requests through together), every decision is one atomic
script on Redis's clock. ``wait()`` tells DRF the ``Retry-After``; while
Redis cannot be reached the throttle lets requests through (``fail_open =
False`` refuses them instead).

DRF throttles have no end-of-request hook. A concurrency policy's slot is
given back when the view's response is finalized (``finalize_response``, also
for the error answers of ``handle_exception``), when an exception escapes
the view, or, for a streamed response, when its body has been sent or the
response closed; the throttle hooks those two methods of the view instance
it is asked about (DRF makes one per request), so it needs a DRF ``APIView``
(viewsets and ``@api_view`` views are). The slot's lease returns it if the
process dies.

The limiter is named ``drf.<module>.<qualified name>`` of the throttle class
(``name`` overrides it); a class defined in a function gets a valid name all
the same.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from rest_framework.throttling import BaseThrottle

from ..core import CoordinationUnavailable, Decision, RateLimiter, validate_name
from ..decorators.streaming import release_after_body
from .http import check_key, rate_limit_key
from .slots import agive_back, limiter_name, releases

log = logging.getLogger("django_redcoord.ratelimit")


class RedisThrottle(BaseThrottle):
    """Subclass it with ``policy`` (and ``key``, ``name``, ``fail_open``, ``native``)."""

    policy: str = ""
    key: Any = "user"
    name: str | None = None
    fail_open: bool = True
    native: bool = True  # a lone GCRA rate by the server's CL.THROTTLE when it has one

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if (
            cls.__dict__.get("name") is not None
        ):  # a bad name fails where it is written, not at every request
            validate_name(cls.__dict__["name"], f"{cls.__qualname__}.name", tag=False)

    def __init__(self) -> None:
        if not self.policy:
            raise TypeError(f"{type(self).__name__} must set policy, e.g. policy = '10/s;burst=20'")
        check_key(self.key)
        self.decision: Decision | None = None

    @classmethod
    def limiter_name(cls) -> str:
        """The limiter's name: ``name``, else ``drf.<module>.<qualified name>`` in the allowed
        characters."""
        return cls.name or limiter_name(f"drf.{cls.__module__}.{cls.__qualname__}")

    def _limiter(self) -> RateLimiter:
        cls = type(self)
        limiter = cls.__dict__.get("_redcoord_limiter")
        if limiter is None:
            limiter = RateLimiter(self.policy, name=cls.limiter_name(), native=self.native)
            cls._redcoord_limiter = limiter  # type: ignore[attr-defined]
        return limiter

    def allow_request(self, request: Any, view: Any) -> bool:
        limiter = self._limiter()
        concurrency = any(p.kind == "concurrency" for p in limiter.policies)
        if concurrency and not _hookable(view):
            raise ImproperlyConfigured(
                f"{type(self).__qualname__} has a concurrency policy ({self.policy!r}): its slot "
                "is given back when the view's response is finalized, which needs a DRF APIView, "
                f"not {view!r}"
            )
        try:
            self.decision = limiter.hit(rate_limit_key(request, self.key))
        except CoordinationUnavailable as exc:
            log.warning(
                "throttle %s: Redis unavailable (%s): %s",
                type(self).__name__,
                exc,
                "allowed" if self.fail_open else "refused",
            )
            self.decision = None
            return self.fail_open
        if self.decision.token:
            _release_at_end(view, limiter, self.decision)
        return self.decision.allowed

    def wait(self) -> float | None:
        return self.decision.retry_after if self.decision is not None else None


def _hookable(view: Any) -> bool:
    return callable(getattr(view, "finalize_response", None)) and callable(
        getattr(view, "handle_exception", None)
    )


def _release_at_end(view: Any, limiter: RateLimiter, decision: Decision) -> None:
    """Give the slot back when ``view`` (this request's instance) ends its answer: see the module
    docstring."""
    done = [False]
    release, _ = releases(limiter, decision)

    def release_now() -> None:
        if not done[0]:
            done[0] = True
            release()

    finalize, handle = view.finalize_response, view.handle_exception

    def finalize_response(request: Any, response: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            response = finalize(request, response, *args, **kwargs)
        except BaseException:
            release_now()
            raise
        if not release_after_body(
            response, release_now, lambda: agive_back(limiter, decision), request
        ):
            release_now()
        return response

    def handle_exception(exc: Exception) -> Any:
        try:
            return handle(exc)
        except BaseException:  # the view's error escapes dispatch(): finalize_response never comes
            release_now()
            raise

    view.finalize_response = finalize_response
    view.handle_exception = handle_exception
