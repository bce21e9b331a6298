"""Rate limiting: GCRA, sliding windows and concurrency limits, several checked at once."""

from ..rates import Policy, parse
from .limiter import Decision, PolicyState, RateLimited, RateLimiter, safe_key
from .records import busiest_keys, reset_key

__all__ = [
    "Decision",
    "Policy",
    "PolicyState",
    "RateLimited",
    "RateLimiter",
    "busiest_keys",
    "parse",
    "reset_key",
    "safe_key",
]
