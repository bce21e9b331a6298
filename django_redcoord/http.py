"""Kept so ``django_redcoord.http`` goes on working: who the client is and how a limit is told
to it live in :mod:`django_redcoord.ratelimit.http`."""

from .ratelimit.http import (
    UNIX,
    RateLimitMisconfigured,
    arate_limit_key,
    check_key,
    client_ip,
    ip_key,
    parse_ip,
    rate_limit_headers,
    rate_limit_key,
    too_many_requests,
)

__all__ = [
    "UNIX",
    "RateLimitMisconfigured",
    "arate_limit_key",
    "check_key",
    "client_ip",
    "ip_key",
    "parse_ip",
    "rate_limit_headers",
    "rate_limit_key",
    "too_many_requests",
]
