"""HTTP around rate limits: who the client is, and how a limit is told to it.

* :func:`client_ip`: the client's address. ``X-Forwarded-For`` is believed
  only from a reverse proxy listed in ``REDCOORD["TRUSTED_PROXIES"]`` (none
  by default): anyone can send that header, so trusting it from anyone lets
  a client pick its own rate-limit key.
* :func:`rate_limit_headers`: ``RateLimit-Policy`` and ``RateLimit`` as the
  IETF draft (draft-ietf-httpapi-ratelimit-headers) defines them: each policy
  a quoted name with ``q`` (its quota) and ``w`` (its window, seconds); its
  state now with ``r`` (remaining) and ``t`` (seconds until it resets).
* :func:`too_many_requests`: the 429 answer, a problem+json body (RFC 9457)
  with ``Retry-After`` and the headers above.
"""

from __future__ import annotations

import ipaddress
import json
import math
from functools import lru_cache
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse

from . import conf
from .core.ratelimit import Decision


@lru_cache(maxsize=16)
def _networks(proxies: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in proxies)


def _trusted(address: str, networks: tuple[Any, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in net for net in networks)


def client_ip(request: HttpRequest) -> str:
    """The client's IP address.

    ``REMOTE_ADDR``, unless it is a trusted proxy: then ``X-Forwarded-For``
    is read from the right (the hop nearest to us), skipping trusted proxies;
    the first address that is not one is the client. A header that names
    only trusted proxies, or garbage, leaves ``REMOTE_ADDR``.
    """
    remote = request.META.get("REMOTE_ADDR", "") or ""
    networks = _networks(tuple(conf.get_config()["TRUSTED_PROXIES"]))
    if not networks or not _trusted(remote, networks):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
        if not _trusted(hop, networks):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote  # a forged or broken hop: do not believe the rest
    return remote


def rate_limit_headers(decision: Decision) -> dict[str, str]:
    """``RateLimit-Policy`` and ``RateLimit`` for ``decision`` (every policy of its limiter)."""
    policies, states = [], []
    for state in decision.policies:
        p = state.policy
        name = p.text.replace("\\", "").replace('"', "")
        if p.kind == "concurrency":
            policies.append(f'"{name}";q={p.limit}')
        else:
            policies.append(f'"{name}";q={p.limit};w={max(1, math.ceil(p.period))}')
        states.append(f'"{name}";r={max(0, state.remaining)};t={max(0, math.ceil(state.reset))}')
    return {"RateLimit-Policy": ", ".join(policies), "RateLimit": ", ".join(states)}


def too_many_requests(request: HttpRequest, decision: Decision) -> HttpResponse:
    """429 Too Many Requests: a problem+json body, ``Retry-After`` and the rate-limit headers."""
    retry_after = max(1, math.ceil(decision.retry_after))
    policy = decision.denied_by.text if decision.denied_by else ""
    body = {
        "type": "about:blank",
        "title": "Too Many Requests",
        "status": 429,
        "detail": f"rate limit {policy!r} reached; retry in {retry_after} s",
        "retry_after": retry_after,
        "policy": policy,
    }
    response = HttpResponse(json.dumps(body), status=429, content_type="application/problem+json")
    response["Retry-After"] = str(retry_after)
    for name, value in rate_limit_headers(decision).items():
        response[name] = value
    return response


def rate_limit_key(request: HttpRequest, key: Any) -> str:
    """The key a request counts against: ``"ip"``, ``"user"`` (its pk; the IP when
    anonymous), ``"header:<Name>"`` (that header; the IP without it) or a
    callable taking the request."""
    if callable(key):
        return str(key(request))
    if key == "user":
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            return f"user:{user.pk}"
        return f"ip:{client_ip(request)}"
    if isinstance(key, str) and key.startswith("header:"):
        header = "HTTP_" + key[len("header:"):].upper().replace("-", "_")
        value = request.META.get(header)
        return f"h:{value}" if value else f"ip:{client_ip(request)}"
    return f"ip:{client_ip(request)}"


async def arate_limit_key(request: HttpRequest, key: Any) -> str:
    """:func:`rate_limit_key` on the event loop, which must not touch the database:
    the user comes from ``request.auser()``, a plain function key runs in a
    thread (``sync_to_async``: it may read ``request.user``), an ``async def``
    key is awaited."""
    if callable(key):
        if iscoroutinefunction(key):
            return str(await key(request))
        return str(await sync_to_async(key)(request))
    if key == "user":
        auser = getattr(request, "auser", None)  # AuthenticationMiddleware, Django 5.0+
        if auser is not None:
            user = await auser()
        else:
            user = await sync_to_async(lambda: getattr(request, "user", None))()
        if user is not None and getattr(user, "is_authenticated", False):
            return f"user:{user.pk}"
        return f"ip:{client_ip(request)}"
    return rate_limit_key(request, key)


def check_key(key: Any) -> Any:
    """Validate a key spec at decoration or start-up time."""
    if callable(key) or key in ("ip", "user") or (isinstance(key, str) and key.startswith("header:") and len(key) > 7):
        return key
    raise ValueError(f"key must be 'ip', 'user', 'header:<Name>' or a callable taking the request, not {key!r}")
