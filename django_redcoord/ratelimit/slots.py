"""What the three ways in (``@rate_limit``, ``RateLimitMiddleware``, the DRF throttle) share: a
limiter's name from a view or a path, and the end of a request that holds a concurrency slot
(given back once, from sync code or the event loop, an outage logged rather than raised)."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync

from ..core import (
    MAX_NAME_LENGTH,
    CoordinationUnavailable,
    Decision,
    RateLimiter,
    is_async_client,
    is_valid_name,
)

log = logging.getLogger("django_redcoord.ratelimit")


def holds_slot(decision: Decision | None) -> bool:
    """True when ``decision`` holds a concurrency slot to give back at the end of the request."""
    return decision is not None and bool(decision.token)


def releases(
    limiter: RateLimiter, decision: Decision
) -> tuple[Callable[[], None], Callable[[], Any]]:
    """(release from sync code, release on the event loop) of a slot a streamed body holds until
    it ends."""
    if is_async_client(limiter._client):  # only its loop can use it

        def release() -> None:
            async_to_sync(agive_back)(limiter, decision)

    else:

        def release() -> None:
            give_back(limiter, decision)

    return release, lambda: agive_back(limiter, decision)


def give_back(limiter: RateLimiter, decision: Decision) -> None:
    """Release a concurrency slot at the end of a request; Redis being down is logged, not raised.

    The answer is made by then: an outage must not turn it into an error. The
    slot's lease gives it back once it runs out.
    """
    try:
        limiter.release(decision)
    except CoordinationUnavailable as exc:
        log.warning(
            "rate limit %s: slot not released, Redis unavailable (its lease returns it): %s",
            limiter.name,
            exc,
        )


async def agive_back(limiter: RateLimiter, decision: Decision) -> None:
    """``give_back()`` on the event loop."""
    try:
        await limiter.arelease(decision)
    except CoordinationUnavailable as exc:
        log.warning(
            "rate limit %s: slot not released, Redis unavailable (its lease returns it): %s",
            limiter.name,
            exc,
        )


def limiter_name(raw: str) -> str:
    """``raw`` (a qualified name, a path) as a valid limiter name, distinct for distinct ``raw``.

    Returned as it is when valid. Otherwise characters outside the allowed
    ones (``<locals>``, spaces, letters beyond ASCII, braces) become ``_``, and
    a digest of ``raw`` is appended so that two names that differ only there
    (or past the length cap) never share a limiter.
    """
    if is_valid_name(raw, tag=False):
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9_\-.:/@=+,#~|]", "_", raw)[: MAX_NAME_LENGTH - len(digest) - 1]
    return f"{readable}~{digest}"
