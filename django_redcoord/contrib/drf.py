"""Kept so ``django_redcoord.contrib.drf.RedisThrottle`` goes on working: the throttle lives in
:mod:`django_redcoord.ratelimit.drf`."""

from ..ratelimit.drf import RedisThrottle

__all__ = ["RedisThrottle"]
