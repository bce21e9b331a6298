"""``@rate_limit``: limit how often a view answers, per client, with the standard headers.

::

    @rate_limit("10/s;burst=20 & 1000/h", key="user")
    def search(request): ...

    @rate_limit("5/m", key="ip", methods=["POST"])      # only POSTs count
    class LoginView(View): ...

    @rate_limit("100/s", key="header:X-Api-Key")
    async def api(request): ...                          # decided on the event loop

A refused request gets **429** with ``Retry-After``, the draft standard
``RateLimit-Policy``/``RateLimit`` headers and a problem+json body
(``on_limited(request, decision)`` replaces it); every answer the view gives
carries the headers too. With ``block=False`` nothing is refused: the view
reads ``request.ratelimit`` (a Decision) and decides. A concurrency policy's
slot is given back when the view returns. While Redis cannot be reached,
``on_unavailable="open"`` (the default) lets requests through with a
warning logged, ``"closed"`` answers 503 with ``Retry-After``, and a callable
``(request, exc)`` answers whatever it returns.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from ..core.exceptions import CoordinationUnavailable
from ..core.observe import observe, observers
from ..core.ratelimit import Decision, RateLimiter, parse
from ..core.transport.drivers import uncancellable
from ..http import arate_limit_key, check_key, rate_limit_headers, rate_limit_key, too_many_requests
from .holds import find_request, unavailable_response, view_dispatch
from .locks import F

log = logging.getLogger("django_redcoord.ratelimit")


def rate_limit(
    policy: Any,
    *,
    key: Any = "ip",
    methods: list[str] | tuple[str, ...] | None = None,
    block: bool = True,
    name: str | None = None,
    on_limited: Callable[[HttpRequest, Decision], HttpResponse] | None = None,
    on_unavailable: str | Callable[[HttpRequest, CoordinationUnavailable], HttpResponse] = "open",
    track: bool = True,
    native: bool = True,
    client: Any = None,
) -> Callable[[F], F]:
    """Limit the decorated view (see the module docstring).

    Args:
        policy: policies like ``"10/s;burst=20 & 1000/h"`` (see
            :mod:`~django_redcoord.core.ratelimit.policy`).
        key: what a request counts against: ``"ip"`` (default), ``"user"``,
            ``"header:<Name>"``, or a callable ``(request) -> str``.
        methods: only these HTTP methods count (default: all).
        block: refuse over-limit requests (default); False only records the
            decision in ``request.ratelimit``.
        name: the limiter's name (default: from the view's module and name);
            views with the same name share their counts.
        on_limited, on_unavailable, track, native, client: see the module docstring
            and :class:`~django_redcoord.core.ratelimit.RateLimiter`.

    Raises ValueError/TypeError at decoration time for a bad policy or argument.
    """
    policies = parse(policy)
    check_key(key)
    if methods is not None:
        methods = tuple(m.upper() for m in methods)
    if on_limited is not None and not callable(on_limited):
        raise TypeError(f"on_limited must be a callable (request, decision) -> HttpResponse, not {on_limited!r}")
    if on_unavailable not in ("open", "closed") and not callable(on_unavailable):
        raise ValueError(f"on_unavailable must be 'open', 'closed' or a callable (request, exc), not {on_unavailable!r}")

    def decorate(target: F) -> F:
        if isinstance(target, type):
            if not hasattr(target, "dispatch"):
                raise TypeError(f"rate_limit on a class needs a class-based view (with dispatch()), not {target!r}")
            target.dispatch = decorate(view_dispatch(target))  # type: ignore[attr-defined]
            return target
        limiter = RateLimiter(policies, name=name or _default_name(target), track=track, native=native, client=client)
        guard = _Guard(limiter, key, methods, block, on_limited or too_many_requests, on_unavailable)
        if inspect.iscoroutinefunction(target):

            @functools.wraps(target)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                request = find_request(args)
                decision, answer = await guard.adecide(request)
                if answer is not None:
                    return answer
                try:
                    return guard.finish(await target(*args, **kwargs), decision)
                finally:
                    if decision is not None and decision.token:
                        # to the end even if the view's task is cancelled (again) meanwhile
                        await uncancellable(agive_back(limiter, decision), reraise=True)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(target)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            request = find_request(args)
            decision, answer = guard.decide(request)
            if answer is not None:
                return answer
            try:
                return guard.finish(target(*args, **kwargs), decision)
            finally:
                if decision is not None and decision.token:
                    give_back(limiter, decision)

        return wrapper  # type: ignore[return-value]

    return decorate


class _Guard:
    """What happens before and after a limited view: decide, answer, add headers."""

    def __init__(self, limiter: RateLimiter, key: Any, methods: Any, block: bool, on_limited: Any, on_unavailable: Any) -> None:
        self.limiter, self.key, self.methods, self.block = limiter, key, methods, block
        self.on_limited, self.on_unavailable = on_limited, on_unavailable

    def _counts(self, request: HttpRequest | None) -> bool:
        if request is None:
            raise TypeError(f"rate_limit {self.limiter.name!r} decorates views: the call has no HttpRequest")
        return self.methods is None or request.method in self.methods

    def decide(self, request: HttpRequest | None) -> tuple[Decision | None, Any]:
        if not self._counts(request):
            return None, None
        try:
            decision = self.limiter.hit(rate_limit_key(request, self.key))
        except CoordinationUnavailable as exc:
            return None, self._unavailable(request, exc)
        return decision, self._answer(request, decision)

    async def adecide(self, request: HttpRequest | None) -> tuple[Decision | None, Any]:
        if not self._counts(request):
            return None, None
        try:
            decision = await self.limiter.ahit(await arate_limit_key(request, self.key))
        except CoordinationUnavailable as exc:
            return None, self._unavailable(request, exc)
        return decision, self._answer(request, decision)

    def _answer(self, request: HttpRequest, decision: Decision) -> Any:
        request.ratelimit = decision  # type: ignore[attr-defined]
        if decision.allowed or not self.block:
            return None
        response = self.on_limited(request, decision)
        if observers:
            observe("view.busy", kind="ratelimit", status=getattr(response, "status_code", 0))
        return response

    def _unavailable(self, request: HttpRequest, exc: CoordinationUnavailable) -> Any:
        request.ratelimit = None  # type: ignore[attr-defined]
        if callable(self.on_unavailable):
            return self.on_unavailable(request, exc)
        if self.on_unavailable == "closed":
            return unavailable_response(request, exc)
        log.warning("rate limit %s: Redis unavailable, request let through (on_unavailable='open'): %s", self.limiter.name, exc)
        return None

    def finish(self, response: Any, decision: Decision | None) -> Any:
        """Every answer of a limited view tells the client where it stands."""
        if decision is not None and isinstance(response, HttpResponseBase):
            for header, value in rate_limit_headers(decision).items():
                response.setdefault(header, value)
        return response


def give_back(limiter: RateLimiter, decision: Decision) -> None:
    """Release a concurrency slot at the end of a request; Redis being down is logged, not raised.

    The answer is made by then: an outage must not turn it into an error. The
    slot's lease gives it back once it runs out.
    """
    try:
        limiter.release(decision)
    except CoordinationUnavailable as exc:
        log.warning("rate limit %s: slot not released, Redis unavailable (its lease returns it): %s", limiter.name, exc)


async def agive_back(limiter: RateLimiter, decision: Decision) -> None:
    """``give_back()`` on the event loop."""
    try:
        await limiter.arelease(decision)
    except CoordinationUnavailable as exc:
        log.warning("rate limit %s: slot not released, Redis unavailable (its lease returns it): %s", limiter.name, exc)


def _default_name(target: Callable[..., Any]) -> str:
    """A limiter name from the view's module and qualified name, in the allowed characters."""
    return limiter_name(f"{getattr(target, '__module__', 'view')}.{getattr(target, '__qualname__', 'view')}")


def limiter_name(raw: str) -> str:
    """``raw`` as a limiter name: other characters than the allowed ones become ``_``."""
    return re.sub(r"[^A-Za-z0-9_\-.:/@=+,#~|]", "_", raw)[:200] or "_"
