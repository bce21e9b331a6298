"""HTTP around rate limits: who the client is, and how a limit is told to it.

* :func:`client_ip`: the client's address. ``X-Forwarded-For`` is believed
  only from a reverse proxy listed in ``REDCOORD["TRUSTED_PROXIES"]`` (none
  by default): anyone can send that header, so trusting it from anyone lets
  a client pick its own rate-limit key. ``"unix"`` in that list trusts the
  peer of a Unix socket (gunicorn ``--bind unix:`` gives an empty
  ``REMOTE_ADDR``, uvicorn ``--uds`` none at all). A request whose client
  cannot be told raises :class:`RateLimitMisconfigured` (an
  ``ImproperlyConfigured``): counting every such request as one client would
  let one client lock out the site.
* :func:`ip_key`: the address as a rate-limit key, masked to its network
  (``RATE_LIMIT_IPV6_PREFIX``, a /64 by default: one IPv6 client owns at
  least that; ``RATE_LIMIT_IPV4_PREFIX``, a /32 by default).
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
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse

from .. import conf
from ..core import ConfigurationError, Decision


def counted_methods(methods: Any) -> tuple[str, ...] | None:
    """The HTTP methods a limit restricted to ``methods`` counts (None: all), upper case.

    A limit on GET counts HEAD too: Django answers HEAD with the GET view (a class-based
    view's ``head`` is its ``get``; a function view sees HEAD as it is), so the view's work runs
    for HEAD as for GET, and a limit that let HEAD by would be a way around it.
    """
    if methods is None:
        return None
    if isinstance(methods, str) or not all(isinstance(m, str) and m for m in methods):
        raise TypeError(
            f"methods must be a list of HTTP methods such as ['GET', 'POST'] (or None for all), "
            f"not {methods!r}"
        )
    counted = tuple(m.upper() for m in methods)
    return (*counted, "HEAD") if "GET" in counted and "HEAD" not in counted else counted


#: The ``TRUSTED_PROXIES`` entry that trusts the peer of a Unix socket (no client address).
UNIX = "unix"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class RateLimitMisconfigured(ConfigurationError, ImproperlyConfigured):
    """A rate limit cannot tell who the client is as the project is configured (a 500, loudly).

    Both django_redcoord's ``ConfigurationError`` and Django's ``ImproperlyConfigured``.
    """


@lru_cache(maxsize=16)
def _trust(proxies: tuple[str, ...]) -> tuple[bool, tuple[Any, ...]]:
    """(the Unix-socket peer is trusted, the trusted networks)."""
    return UNIX in proxies, tuple(
        ipaddress.ip_network(p, strict=False) for p in proxies if p != UNIX
    )


@lru_cache(maxsize=4096)  # a client sends many requests: parse its address once
def parse_ip(text: str | None) -> IPAddress | None:
    """An address as a server or a proxy writes it, or None.

    Accepts ``192.0.2.1``, ``192.0.2.1:8080``, ``2001:db8::1``,
    ``[2001:db8::1]`` and ``[2001:db8::1]:443``; an IPv4-mapped IPv6 address
    (``::ffff:192.0.2.1``, a dual-stack socket's view of an IPv4 client) is
    that IPv4 address.
    """
    if not text:
        return None
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        text = text[1:end] if end > 0 else text
    elif text.count(":") == 1:  # IPv4 with a port
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


NO_PEER = (
    "rate limit by client IP: the request has no client address (REMOTE_ADDR is {remote}: the "
    "server listens on a Unix socket behind a proxy, as gunicorn --bind unix: or uvicorn --uds "
    "do?). Counting every such request as one client would let one client lock out the site, so "
    "it is refused. Add \"unix\" to REDCOORD['TRUSTED_PROXIES'] to trust the proxy on the socket "
    "(its X-Forwarded-For then names the client), or key the limit on something else."
)
NO_FORWARDED = (
    "rate limit by client IP: the request came from {proxy} without a usable X-Forwarded-For "
    "header ({header!r}); counting every such request as the proxy's own address would make all "
    "its clients one client, so it is refused. The proxy must send X-Forwarded-For with the "
    "client's address (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;), or "
    "take it out of REDCOORD['TRUSTED_PROXIES'] if it is not a proxy."
)


def client_ip(request: HttpRequest) -> str:
    """The client's IP address.

    ``REMOTE_ADDR``, unless it is a trusted proxy: then ``X-Forwarded-For``
    is read from the right (the hop nearest to us), skipping trusted proxies;
    the first address that is not one is the client (if every hop is
    trusted, the farthest one; a hop that is not an address ends the walk
    there: nothing left of it can be believed). The answer never is the
    trusted proxy's own address: that would count all its clients as one.

    Raises :class:`RateLimitMisconfigured` when the request has no client
    address (empty, absent or not an IP ``REMOTE_ADDR``: a Unix socket)
    and ``"unix"`` is not in ``TRUSTED_PROXIES``, or when a trusted proxy
    (on a Unix socket or TCP) sent no usable ``X-Forwarded-For`` (absent,
    empty, or its nearest hop not an address).
    """
    unix, networks = _trust(tuple(conf.get_config()["TRUSTED_PROXIES"]))
    remote = request.META.get("REMOTE_ADDR")
    peer = parse_ip(remote)
    if peer is None:
        if not unix:
            raise RateLimitMisconfigured(
                NO_PEER.format(remote="absent" if remote is None else f"{remote!r}")
            )
    elif not any(peer in net for net in networks):
        return str(peer)
    client = None  # never the proxy itself (peer): only what it forwarded
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([h for h in forwarded.split(",") if h.strip()]):
        ip = parse_ip(hop)
        if ip is None:
            break  # a forged or broken hop: believe nothing left of it
        client = ip
        if not any(ip in net for net in networks):
            break
    if client is None:
        proxy = (
            "the Unix socket's proxy (\"unix\" in REDCOORD['TRUSTED_PROXIES'])"
            if peer is None
            else f"the trusted proxy {peer} (in REDCOORD['TRUSTED_PROXIES'])"
        )
        raise RateLimitMisconfigured(NO_FORWARDED.format(proxy=proxy, header=forwarded[:200]))
    return str(client)


def ip_key(address: str) -> str:
    """``ip:`` and the client's network: the address masked to ``RATE_LIMIT_IPV4_PREFIX``
    (32: the address itself) or ``RATE_LIMIT_IPV6_PREFIX`` (64: a /64, which one
    client owns at least, so it cannot take 2^64 budgets)."""
    config = conf.get_config()
    return _masked(address, config["RATE_LIMIT_IPV4_PREFIX"], config["RATE_LIMIT_IPV6_PREFIX"])


@lru_cache(maxsize=4096)
def _masked(address: str, v4: int, v6: int) -> str:
    ip = parse_ip(address)
    if ip is None:  # client_ip() gives addresses only
        raise RateLimitMisconfigured(f"rate limit by client IP: {address!r} is not an IP address")
    if ip.version == 4:
        return (
            f"ip:{ip}" if v4 == 32 else f"ip:{ipaddress.IPv4Network((int(ip), v4), strict=False)}"
        )
    bare = ipaddress.IPv6Address(int(ip))  # without a zone (%eth0)
    return f"ip:{bare}" if v6 == 128 else f"ip:{ipaddress.IPv6Network((int(ip), v6), strict=False)}"


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


NO_USER = (
    "rate limit key 'user': the request has no user (request.user is not set), so every request "
    "would be counted by IP. Put django.contrib.auth.middleware.AuthenticationMiddleware in "
    "MIDDLEWARE (before django_redcoord.middleware.RateLimitMiddleware), or use key='ip'."
)


def rate_limit_key(request: HttpRequest, key: Any) -> str:
    """The key a request counts against: ``"ip"``, ``"user"`` (its pk; the IP when
    anonymous), ``"header:<Name>"`` (that header; the IP without it) or a
    callable taking the request.

    Raises :class:`RateLimitMisconfigured` when the client cannot be told
    (see :func:`client_ip`) or ``"user"`` finds no ``request.user`` (no
    ``AuthenticationMiddleware`` before this point).
    """
    if callable(key):
        return str(key(request))
    if key == "user":
        user = getattr(request, "user", None)
        if user is None:
            raise RateLimitMisconfigured(NO_USER)
        if getattr(user, "is_authenticated", False):
            return f"user:{user.pk}"
        return ip_key(client_ip(request))
    if isinstance(key, str) and key.startswith("header:"):
        header = "HTTP_" + key[len("header:") :].upper().replace("-", "_")
        value = request.META.get(header)
        return f"h:{value}" if value else ip_key(client_ip(request))
    return ip_key(client_ip(request))


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
        if user is None:
            raise RateLimitMisconfigured(NO_USER)
        if getattr(user, "is_authenticated", False):
            return f"user:{user.pk}"
        return ip_key(client_ip(request))
    return rate_limit_key(request, key)


def check_key(key: Any) -> Any:
    """Validate a key spec at decoration or start-up time."""
    if (
        callable(key)
        or key in ("ip", "user")
        or (isinstance(key, str) and key.startswith("header:") and len(key) > 7)
    ):
        return key
    raise ValueError(
        f"key must be 'ip', 'user', 'header:<Name>' or a callable taking the request, not {key!r}"
    )
