"""``RateLimitMiddleware``: rate limits by URL path prefix, from ``REDCOORD["RATE_LIMITS"]``.

::

    MIDDLEWARE = [..., "django_redcoord.middleware.RateLimitMiddleware"]
    REDCOORD = {
        ...,
        "RATE_LIMITS": [
            {"path": "/api/", "policy": "10/s;burst=20 & 1000/h", "key": "header:X-Api-Key"},
            {"path": "/login/", "policy": "5/m", "key": "ip", "methods": ["POST"],
            "on_unavailable": "closed"},
        ],
    }

Every rule whose ``path`` prefixes the request's ``path_info`` (the path within the
app, as URL patterns see it: without ``SCRIPT_NAME``, the prefix it is mounted at) applies (each
with its
own limiter and counts, named ``name`` or after its path and methods, see
:func:`rule_names`); the first that refuses
answers 429 as ``@rate_limit`` does. A concurrency rule's slot is held until
the response's body ends (streamed responses too). Works under WSGI and ASGI (async
requests are decided on the event loop). Rules are read from the settings at
first use and again when they change.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from .. import conf
from ..core import CoordinationUnavailable, Decision, RateLimiter, uncancellable
from ..decorators.holds import unavailable_response
from ..decorators.streaming import release_after_body
from .http import (
    arate_limit_key,
    counted_methods,
    rate_limit_headers,
    rate_limit_key,
    too_many_requests,
)
from .slots import agive_back, give_back, limiter_name, releases

log = logging.getLogger("django_redcoord.ratelimit")


class _Rule:
    def __init__(self, rule: dict[str, Any], name: str) -> None:
        self.path = rule["path"]
        self.key = rule.get("key", "ip")
        self.methods = counted_methods(rule["methods"]) if rule.get("methods") else None
        self.on_unavailable = rule.get("on_unavailable", "open")
        self.limiter = RateLimiter(rule["policy"], name=name, native=rule.get("native", True))

    def applies(self, request: Any) -> bool:
        # path_info: the path within the app, without SCRIPT_NAME (where the app is mounted),
        # as Django's URL patterns match it: a rule for /login/ holds under /app/login/ too.
        return request.path_info.startswith(self.path) and (
            self.methods is None or request.method in self.methods
        )


def rule_names(rules: list[dict[str, Any]]) -> list[str]:
    """Each rule's limiter name: its ``name``, else one of its own.

    A rule without a name is named after its path and methods (``/login/``
    for POST: ``path:login:POST``); rules that would still share a name
    (another key or policy on the same path and methods) get a digest of
    what tells them apart, and identical ones their position: rules never
    share their counts unless they are given the same ``name``.
    """
    derived = []
    for rule in rules:
        methods = sorted({m.upper() for m in rule.get("methods") or ()})
        base = (
            "path"
            + rule["path"].replace("/", ":").rstrip(":")
            + (":" + "+".join(methods) if methods else "")
        )
        derived.append(base)
    names: list[str] = []
    seen: dict[str, int] = {}
    for rule, base in zip(rules, derived, strict=True):
        if rule.get("name"):
            names.append(rule["name"])
            continue
        if derived.count(base) > 1:
            what = json.dumps(
                [rule.get("key", "ip"), str(rule["policy"]), rule.get("native", True)]
            )
            base = f"{base}~{hashlib.sha256(what.encode()).hexdigest()[:8]}"
        name = limiter_name(base)
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else limiter_name(f"{base}#{seen[name]}"))
    return names


class RateLimitMiddleware:
    """Apply ``REDCOORD["RATE_LIMITS"]`` to every request (see the module docstring)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self._rules: tuple[Any, list[_Rule]] = (None, [])
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def _current(self) -> list[_Rule]:
        config = conf.get_config()["RATE_LIMITS"]
        if self._rules[0] is not config:
            self._rules = (
                config,
                [_Rule(rule, name) for rule, name in zip(config, rule_names(config), strict=True)],
            )
        return self._rules[1]

    def __call__(self, request: Any) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        decisions: list[tuple[_Rule, Decision]] = []
        streaming = False
        try:
            for rule in self._current():
                if not rule.applies(request):
                    continue
                try:
                    decision = rule.limiter.hit(rate_limit_key(request, rule.key))
                except CoordinationUnavailable as exc:
                    refused = self._unavailable(request, rule, exc)
                    if refused is not None:
                        return refused
                    continue
                decisions.append((rule, decision))
                if not decision.allowed:
                    # (the 429 carries the refusing decision's headers already)
                    return self._headers(decisions[:-1], too_many_requests(request, decision))
            response = self._headers(decisions, self.get_response(request))
            streaming = self._hand_to_body(response, decisions, request)
            return response
        finally:
            if not streaming:
                for rule, decision in decisions:  # concurrency slots end with the request
                    if decision.token:
                        give_back(rule.limiter, decision)

    async def __acall__(self, request: Any) -> Any:
        decisions: list[tuple[_Rule, Decision]] = []
        streaming = False
        try:
            for rule in self._current():
                if not rule.applies(request):
                    continue
                try:
                    decision = await rule.limiter.ahit(await arate_limit_key(request, rule.key))
                except CoordinationUnavailable as exc:
                    refused = self._unavailable(request, rule, exc)
                    if refused is not None:
                        return refused
                    continue
                decisions.append((rule, decision))
                if not decision.allowed:
                    # (the 429 carries the refusing decision's headers already)
                    return self._headers(decisions[:-1], too_many_requests(request, decision))
            response = self._headers(decisions, await self.get_response(request))
            streaming = self._hand_to_body(response, decisions, request)
            return response
        finally:
            if not streaming:
                for rule, decision in decisions:
                    if decision.token:
                        await uncancellable(agive_back(rule.limiter, decision), reraise=True)

    @staticmethod
    def _hand_to_body(
        response: Any, decisions: list[tuple[_Rule, Decision]], request: Any = None
    ) -> bool:
        """A streamed response keeps the request's concurrency slots until its body ends."""
        held = [(rule, decision) for rule, decision in decisions if decision.token]
        if not held:
            return False

        def release() -> None:
            for rule, decision in held:
                sync_release, _ = releases(rule.limiter, decision)
                sync_release()

        async def arelease() -> None:
            for rule, decision in held:
                await agive_back(rule.limiter, decision)

        return release_after_body(response, release, arelease, request)

    def _unavailable(self, request: Any, rule: _Rule, exc: CoordinationUnavailable) -> Any:
        if rule.on_unavailable == "closed":
            return unavailable_response(request, exc)
        log.warning(
            "rate limit %s: Redis unavailable, request let through (on_unavailable='open'): %s",
            rule.limiter.name,
            exc,
        )
        return None

    @staticmethod
    def _headers(decisions: list[tuple[_Rule, Decision]], response: Any) -> Any:
        """Add every applied rule's policies and state to the headers (after a view's own)."""
        if decisions and hasattr(response, "setdefault"):
            for _, decision in decisions:
                for name, value in rate_limit_headers(decision).items():
                    response[name] = (
                        f"{response[name]}, {value}" if response.has_header(name) else value
                    )
        return response
