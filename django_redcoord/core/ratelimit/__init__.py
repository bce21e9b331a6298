"""Rate limiting: GCRA, sliding windows and concurrency limits, several checked at once."""

from .limiter import Decision, PolicyState, RateLimited, RateLimiter, safe_key
from .policy import Policy, parse

__all__ = ["Decision", "Policy", "PolicyState", "RateLimited", "RateLimiter", "parse", "safe_key"]
