"""A Django REST framework throttle on django_redcoord's rate limiter (``pip install django-redcoord[drf]``).

::

    class BurstThrottle(RedisThrottle):
        policy = "10/s;burst=20 & 1000/h"
        key = "user"                      # or "ip", "header:X-Api-Key", or a callable (request) -> str

    class OrderViewSet(viewsets.ModelViewSet):
        throttle_classes = [BurstThrottle]

Unlike DRF's own throttles (a read-modify-write of a list in the cache, which
lets concurrent requests through together), every decision is one atomic
script on Redis's clock. ``wait()`` tells DRF the ``Retry-After``; while
Redis cannot be reached the throttle lets requests through (``fail_open =
False`` refuses them instead).
"""

from __future__ import annotations

import logging
from typing import Any

from rest_framework.throttling import BaseThrottle

from ..core.exceptions import CoordinationUnavailable
from ..core.ratelimit import Decision, RateLimiter
from ..http import check_key, rate_limit_key

log = logging.getLogger("django_redcoord.ratelimit")


class RedisThrottle(BaseThrottle):
    """Subclass it with ``policy`` (and ``key``, ``name``, ``fail_open``, ``native``)."""

    policy: str = ""
    key: Any = "user"
    name: str | None = None
    fail_open: bool = True
    native: bool = True  # a lone GCRA rate by the server's CL.THROTTLE when it has one

    def __init__(self) -> None:
        if not self.policy:
            raise TypeError(f"{type(self).__name__} must set policy, e.g. policy = '10/s;burst=20'")
        check_key(self.key)
        self.decision: Decision | None = None

    def _limiter(self) -> RateLimiter:
        cls = type(self)
        limiter = cls.__dict__.get("_redcoord_limiter")
        if limiter is None:
            limiter = RateLimiter(self.policy, name=self.name or f"drf.{cls.__module__}.{cls.__qualname__}", native=self.native)
            cls._redcoord_limiter = limiter  # type: ignore[attr-defined]
        return limiter

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            self.decision = self._limiter().hit(rate_limit_key(request, self.key))
        except CoordinationUnavailable as exc:
            log.warning("throttle %s: Redis unavailable (%s): %s", type(self).__name__, exc, "allowed" if self.fail_open else "refused")
            self.decision = None
            return self.fail_open
        return self.decision.allowed

    def wait(self) -> float | None:
        return self.decision.retry_after if self.decision is not None else None
