"""Rate limiting over HTTP, in one package (the limiter itself is the core's
:mod:`django_redcoord.core.ratelimit`; the ``@rate_limit`` view decorator is in
:mod:`django_redcoord.decorators`, beside the others):

* :mod:`.http`: who the client is (``client_ip``, trusted proxies, masked
  IPv6 networks), the rate-limit key of a request, the ``RateLimit`` headers and
  the 429 answer;
* :mod:`.slots`: what the decorator, the middleware and the DRF throttle share:
  a limiter's name, and a concurrency slot given back once at the end of the
  request (streamed bodies too), an outage logged rather than raised;
* :mod:`.middleware`: ``RateLimitMiddleware``, rules by path from ``RATE_LIMITS``;
* :mod:`.drf`: ``RedisThrottle`` for Django REST framework.

Nothing is imported here, so ``.drf`` (which needs ``rest_framework``) is only
loaded by whoever uses it. The older paths (``django_redcoord.middleware``,
``django_redcoord.http``, ``django_redcoord.contrib.drf``) keep working.
"""
