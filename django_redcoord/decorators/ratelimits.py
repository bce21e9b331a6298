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
slot is given back when the view returns, or, for a ``StreamingHttpResponse``
(``FileResponse``), when its body has been sent or the response closed.

Without ``name=`` the limiter is named after the view: a function view's
module and qualified name; a class-based view's class (the one being
dispatched, never the ``View.dispatch`` it inherits), and a decorated
method's class and method name. Every view counts on its own, and so does
each of several limits stacked on one view (the outer ones end in ``#2``...).
While Redis cannot be reached,
``on_unavailable="open"`` (the default) lets requests through with a
warning logged, ``"closed"`` answers 503 with ``Retry-After``, and a callable
``(request, exc)`` answers whatever it returns.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from ..core import (
    CoordinationUnavailable,
    Decision,
    RateLimiter,
    observers,
    parse,
    uncancellable,
    validate_name,
)
from ..core import observe_event as observe
from ..ratelimit.http import (
    arate_limit_key,
    check_key,
    counted_methods,
    rate_limit_headers,
    rate_limit_key,
    too_many_requests,
)
from ..ratelimit.slots import agive_back, give_back, holds_slot, limiter_name, releases
from .factory import F
from .holds import (
    awaiting_dispatch,
    find_request,
    is_async,
    is_request,
    unavailable_response,
    view_dispatch,
)
from .streaming import release_after_body

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
            :mod:`~django_redcoord.core.rates`).
        key: what a request counts against: ``"ip"`` (default), ``"user"``,
            ``"header:<Name>"``, or a callable ``(request) -> str``.
        methods: only these HTTP methods count (default: all); GET counts HEAD too, which
            Django answers with the GET view.
        block: refuse over-limit requests (default); False only records the
            decision in ``request.ratelimit``.
        name: the limiter's name (default: from the view's module and
            qualified name, a class-based view's own class); views with the
            same name share their counts.
        on_limited, on_unavailable, track, native, client: see the module docstring
            and :class:`~django_redcoord.core.ratelimit.RateLimiter`.

    Raises ValueError/TypeError at decoration time for a bad policy or argument.
    """
    policies = parse(policy)
    if sum(p.kind == "concurrency" for p in policies) > 1:
        raise ValueError("a rate limiter takes at most one concurrency policy")
    check_key(key)
    if name is not None:
        validate_name(name, "rate_limit name", tag=False)
    methods = counted_methods(methods)
    if on_limited is not None and not callable(on_limited):
        raise TypeError(
            f"on_limited must be a callable (request, decision) -> HttpResponse, not {on_limited!r}"
        )
    if on_unavailable not in ("open", "closed") and not callable(on_unavailable):
        raise ValueError(
            "on_unavailable must be 'open', 'closed' or a callable (request, exc), not "
            f"{on_unavailable!r}"
        )
    # One guard per limiter name: a decorated class-based view has one per view
    # class it serves, and method_decorator() decorates anew at every request.
    guards: dict[str, _Guard] = {}

    def guard_named(limiter: str) -> _Guard:
        guard = guards.get(limiter)
        if guard is None:
            made = RateLimiter(policies, name=limiter, track=track, native=native, client=client)
            guard = guards.setdefault(
                limiter,
                _Guard(made, key, methods, block, on_limited or too_many_requests, on_unavailable),
            )
        return guard

    def decorate(target: F) -> F:
        if isinstance(target, type):
            if not hasattr(target, "dispatch"):
                raise TypeError(
                    "rate_limit on a class needs a class-based view (with dispatch()), not "
                    f"{target!r}"
                )
            target.dispatch = wrap(view_dispatch(target), _view_namer(name))  # type: ignore[attr-defined]
            return target
        if not callable(target):
            raise TypeError(
                "rate_limit decorates views, methods of class-based views and view classes, not "
                f"{target!r}"
            )
        return wrap(*_adapt_bound(target, name))  # type: ignore[return-value]

    def wrap(target: Callable[..., Any], namer: Callable[[tuple], str]) -> Any:
        # Stacked limits (@rate_limit("10/s") over @rate_limit("1000/h")) on one view
        # would share a default name, and so their state: each layer gets its own.
        layers = getattr(target, "_redcoord_rate_limits", 0)
        if layers and name is None:
            namer = _layer(namer, layers + 1)
        if is_async(target):

            @functools.wraps(target)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                guard = guard_named(namer(args))
                request = find_request(args)
                decision, answer = await guard.adecide(request)
                if answer is not None:
                    return answer
                streaming = False
                try:
                    result = guard.finish(await target(*args, **kwargs), decision)
                    streaming = holds_slot(decision) and release_after_body(
                        result, *releases(guard.limiter, decision), request
                    )
                    return result
                finally:
                    if holds_slot(decision) and not streaming:
                        # to the end even if the view's task is cancelled (again) meanwhile
                        await uncancellable(agive_back(guard.limiter, decision), reraise=True)

            async_wrapper._redcoord_rate_limits = layers + 1  # type: ignore[attr-defined]
            return async_wrapper

        @functools.wraps(target)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            guard = guard_named(namer(args))
            request = find_request(args)
            decision, answer = guard.decide(request)
            if answer is not None:
                return answer
            streaming = False
            try:
                result = guard.finish(target(*args, **kwargs), decision)
                streaming = holds_slot(decision) and release_after_body(
                    result, *releases(guard.limiter, decision), request
                )
                return result
            finally:
                if holds_slot(decision) and not streaming:
                    give_back(guard.limiter, decision)

        wrapper._redcoord_rate_limits = layers + 1  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _layer(namer: Callable[[tuple], str], layer: int) -> Callable[[tuple], str]:
    """``namer`` for the ``layer``-th stacked limit of a view: its names end in ``#<layer>``."""
    return lambda args: limiter_name(f"{namer(args)}#{layer}")


def view_name(view: type, method: str | None = None) -> str:
    """The limiter name of a class-based view (``module.QualName``), or of one of its methods."""
    raw = f"{view.__module__}.{view.__qualname__}"
    return limiter_name(raw if method in (None, "dispatch") else f"{raw}.{method}")


def _view_namer(name: str | None) -> Callable[[tuple], str]:
    """Names for a decorated view class: the class being dispatched (``self``), never the
    ``View.dispatch`` it inherits, so every view (a subclass too) counts on its own."""
    if name is not None:
        return lambda args: name
    names: dict[type, str] = {}

    def namer(args: tuple) -> str:
        view = type(args[0])
        found = names.get(view)
        if found is None:
            found = names[view] = view_name(view)
        return found

    return namer


def _adapt_bound(
    target: Callable[..., Any], name: str | None
) -> tuple[Callable[..., Any], Callable[[tuple], str]]:
    """(what to wrap, its namer) for a function, a method, or ``method_decorator``'s bound
    partial."""
    bound = (
        getattr(target.func, "__self__", None) if isinstance(target, functools.partial) else None
    )
    if bound is not None:  # method_decorator: called anew for each request, on the view instance
        fixed = name or view_name(type(bound), getattr(target, "__name__", None))
        return awaiting_dispatch(target), lambda args: fixed
    if name is not None:
        return target, lambda args: name
    named = target
    while isinstance(named, functools.partial) and not hasattr(named, "__qualname__"):
        named = named.func  # a bare partial of a view: named after the view
    own = limiter_name(
        f"{getattr(named, '__module__', 'view')}.{getattr(named, '__qualname__', 'view')}"
    )
    method = getattr(named, "__name__", None)
    names: dict[type, str] = {}

    def namer(args: tuple) -> str:
        # a method of a class-based view: named after the view being dispatched
        if len(args) >= 2 and is_request(args[1]) and not is_request(args[0]):
            view = type(args[0])
            found = names.get(view)
            if found is None:
                found = names[view] = view_name(view, method)
            return found
        return own

    return target, namer


class _Guard:
    """What happens before and after a limited view: decide, answer, add headers."""

    def __init__(
        self,
        limiter: RateLimiter,
        key: Any,
        methods: Any,
        block: bool,
        on_limited: Any,
        on_unavailable: Any,
    ) -> None:
        self.limiter, self.key, self.methods, self.block = limiter, key, methods, block
        self.on_limited, self.on_unavailable = on_limited, on_unavailable

    def _counts(self, request: HttpRequest | None) -> bool:
        if request is None:
            raise TypeError(
                f"rate_limit {self.limiter.name!r} decorates views: the call has no HttpRequest"
            )
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
        log.warning(
            "rate limit %s: Redis unavailable, request let through (on_unavailable='open'): %s",
            self.limiter.name,
            exc,
        )
        return None

    def finish(self, response: Any, decision: Decision | None) -> Any:
        """Every answer of a limited view tells the client where it stands."""
        if decision is not None and isinstance(response, HttpResponseBase):
            for header, value in rate_limit_headers(decision).items():
                response.setdefault(header, value)
        return response
