"""Kept so ``MIDDLEWARE = ["django_redcoord.middleware.RateLimitMiddleware"]`` goes on working:
the middleware lives in :mod:`django_redcoord.ratelimit.middleware`."""

from .ratelimit.middleware import RateLimitMiddleware, rule_names

__all__ = ["RateLimitMiddleware", "rule_names"]
