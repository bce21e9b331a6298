"""The ``REDCOORD`` setting: the Django side of the core's options.

``get_config()`` merges the project's ``settings.REDCOORD`` over
:data:`~django_redcoord.core.options.DEFAULTS`, validates it and caches the
result. :func:`install` hands it to the core's :data:`~django_redcoord.core.runtime.runtime`
with the Django pieces the core does not import: the client factory (which
also reads a django-redis ``CACHE`` alias), ``TIME_ZONE`` and
``close_old_connections`` around periodic jobs. ``AppConfig.ready`` installs
it and ``setting_changed`` re-installs it, so ``override_settings`` works in
tests. A script that has ``DJANGO_SETTINGS_MODULE`` set but never called
``django.setup()`` gets it installed on first use. Nothing here runs at import time.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from .core import DEFAULTS, EMBEDDED, URL_SCHEMES, ConfigurationError, problems, validate
from .core import process_runtime as runtime

__all__ = [
    "DEFAULTS",
    "EMBEDDED",
    "URL_SCHEMES",
    "clear_cache",
    "config_or_defaults",
    "default_prefix",
    "embedded_dir",
    "get_config",
    "install",
    "lock_defaults",
    "problems",
    "settings_available",
    "validate",
]


@functools.lru_cache(maxsize=1)
def get_config() -> dict[str, Any]:
    """Return the validated REDCOORD configuration (cached until settings change)."""
    from django.conf import settings

    return validate(getattr(settings, "REDCOORD", None))


def embedded_dir(config: dict[str, Any]) -> str:
    """Folder of the embedded server: EMBEDDED_DIR, else <BASE_DIR or cwd>/.redcoord."""
    if config.get("EMBEDDED_DIR"):
        return os.fspath(config["EMBEDDED_DIR"])
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None) or os.getcwd()
    return os.path.join(os.fspath(base), ".redcoord")


def settings_available() -> bool:
    """True when Django settings are configured, or will be on first access.

    ``settings.configured`` stays False until something reads a setting, even
    with DJANGO_SETTINGS_MODULE set: a script that never called
    ``django.setup()`` still has the project's settings.
    """
    from django.conf import settings

    return settings.configured or bool(os.environ.get("DJANGO_SETTINGS_MODULE"))


def config_or_defaults() -> dict[str, Any]:
    """The options in force (the core's runtime): REDCOORD, or the built-in defaults."""
    return runtime.config


def default_prefix() -> str:
    """KEY_PREFIX in force."""
    return runtime.config["KEY_PREFIX"]


def lock_defaults() -> tuple[float, float | None]:
    """(ttl, wait) defaults for locks: LOCK_TTL/LOCK_WAIT in force."""
    config = runtime.config
    return config["LOCK_TTL"], config["LOCK_WAIT"]


def install() -> None:
    """Hand ``settings.REDCOORD`` and Django's pieces to the core's runtime.

    Raises ConfigurationError (every problem listed) for invalid settings.
    """
    from django.db import close_old_connections
    from django.utils import timezone as dj_timezone

    runtime.configure(
        get_config(),
        client_factory=build_client,
        timezone=dj_timezone.get_default_timezone,
        job_hooks=(close_old_connections,),
    )


def install_if_django() -> None:
    """The runtime's loader: install the project's settings if this process has Django settings.

    Imports nothing from Django unless it is already imported or
    ``DJANGO_SETTINGS_MODULE`` is set (a plain program stays Django-free).
    """
    if "django.conf" not in sys.modules and not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return
    if settings_available():
        install()


def clear_cache(**kwargs: Any) -> None:
    """``setting_changed`` receiver: forget the config and clients; the next use installs the new
    settings."""
    if kwargs.get("setting") not in (None, "REDCOORD", "CACHES", "BASE_DIR", "TIME_ZONE"):
        return
    get_config.cache_clear()
    runtime.clear()


# -- the client: a URL (core), or a django-redis cache alias ------------------------------

DJANGO_REDIS_BACKENDS = ("django_redis.cache.RedisCache",)


def build_client(config: dict[str, Any]) -> Any:
    """Build the client the configuration names: ``CACHE`` here, ``URL`` by the core."""
    from .core import build_client as from_url

    if config["CACHE"] is not None:
        return _client_from_cache(
            config["CACHE"],
            socket_timeout=config["SOCKET_TIMEOUT"],
            connect_timeout=config["CONNECT_TIMEOUT"],
            max_connections=config["MAX_CONNECTIONS"],
        )
    return from_url({**config, "EMBEDDED_DIR": embedded_dir(config)})


def _client_from_cache(
    alias: str, *, socket_timeout: float, connect_timeout: float, max_connections: int
) -> Any:
    """A client for the server of a django-redis cache alias.

    We reuse the alias's connection settings (server, credentials, TLS, db) but
    not its pool: a cache pool retries on errors, which is right for a cache
    and wrong for a lock (a retried acquire after a timeout could act twice).
    """
    from django.conf import settings

    caches = getattr(settings, "CACHES", {})
    if alias not in caches:
        raise ConfigurationError(
            f"REDCOORD['CACHE'] = {alias!r} but settings.CACHES has no such alias "
            f"(aliases: {', '.join(caches) or 'none'})"
        )
    backend = caches[alias].get("BACKEND", "")
    if backend not in DJANGO_REDIS_BACKENDS:
        raise ConfigurationError(
            f"REDCOORD['CACHE'] = {alias!r} uses {backend!r}; it must be a django-redis cache "
            f"({DJANGO_REDIS_BACKENDS[0]}), or set REDCOORD['URL'] instead"
        )
    import redis
    from django_redis import get_redis_connection

    from .core import no_retry

    source = get_redis_connection(alias)
    pool = source.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs.update(
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=no_retry(),
        retry_on_error=[],
        health_check_interval=0,
    )
    kwargs.pop("max_connections", None)
    new_pool = type(pool)(
        connection_class=pool.connection_class, max_connections=max_connections, **kwargs
    )
    return redis.Redis(connection_pool=new_pool)
