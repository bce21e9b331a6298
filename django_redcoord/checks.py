"""System checks for the REDCOORD settings (``manage.py check``).

Ids are stable; tests assert the exact messages:

* ``redcoord.E001`` no Redis configured.
* ``redcoord.E002`` ``CACHE`` names a missing alias or a cache that is not django-redis.
* ``redcoord.E003`` ``REDCOORD`` is malformed (unknown key, bad URL, bad number).
* ``redcoord.W001`` the configured Redis does not answer (URL shown, password masked).
* ``redcoord.W002`` the embedded development Redis is used with ``DEBUG = False``.

W001 does one PING with a 0.5 s timeout: it is the check people need when a
deploy points at the wrong server, and cheap enough for every ``check``.
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from . import conf
from .exceptions import ConfigurationError

HINT_CONFIGURE = (
    "Add REDCOORD = {'URL': 'redis://127.0.0.1:6379/0'} to settings (or 'embedded' for "
    "development), or REDCOORD = {'CACHE': '<alias>'} to reuse a django-redis cache."
)


def register() -> None:
    checks.register(check_settings, "redcoord")


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from django.conf import settings

    try:
        config = conf.validate(getattr(settings, "REDCOORD", None))
    except ConfigurationError as exc:
        return [
            checks.Error(
                str(exc),
                hint="See the Configuration section of the django_redcoord README.",
                id="redcoord.E003",
            )
        ]
    if config["URL"] is None and config["CACHE"] is None:
        return [checks.Error("No Redis is configured for django_redcoord.", hint=HINT_CONFIGURE, id="redcoord.E001")]
    if config["CACHE"] is not None:
        from .connection import DJANGO_REDIS_BACKENDS

        alias = config["CACHE"]
        caches = getattr(settings, "CACHES", {})
        backend = caches.get(alias, {}).get("BACKEND")
        if backend not in DJANGO_REDIS_BACKENDS:
            what = f"uses {backend!r}" if alias in caches else "is not defined in settings.CACHES"
            return [
                checks.Error(
                    f"REDCOORD['CACHE'] names the cache {alias!r}, which {what}; "
                    "it must be a django-redis cache.",
                    hint=f"Set its BACKEND to '{DJANGO_REDIS_BACKENDS[0]}', or use REDCOORD['URL'].",
                    id="redcoord.E002",
                )
            ]
    messages: list[checks.CheckMessage] = []
    if config["URL"] == conf.EMBEDDED:
        if not settings.DEBUG:
            messages.append(
                checks.Warning(
                    "django_redcoord uses the embedded development Redis while DEBUG is False.",
                    hint="Point REDCOORD['URL'] at a real Redis server in production.",
                    id="redcoord.W002",
                )
            )
        return messages
    messages.extend(_check_reachable(config))
    return messages


def _check_reachable(config: dict[str, Any]) -> list[checks.CheckMessage]:
    import redis

    from .connection import build_client, describe
    from .exceptions import CoordinationUnavailable

    quick = {**config, "SOCKET_TIMEOUT": 0.5, "CONNECT_TIMEOUT": 0.5}
    try:
        client = build_client(quick)
    except ConfigurationError as exc:
        return [checks.Error(str(exc), id="redcoord.E002")]
    try:
        client.ping()
    except (redis.RedisError, OSError, CoordinationUnavailable) as exc:
        return [
            checks.Warning(
                f"Redis at {describe(client)} did not answer: {exc}",
                hint="Start Redis there, or fix REDCOORD (URL, CACHE, password, TLS).",
                id="redcoord.W001",
            )
        ]
    finally:
        client.connection_pool.disconnect()
    return []
