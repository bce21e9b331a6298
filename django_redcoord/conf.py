"""The ``REDCOORD`` setting: every default in one dict, read in one place.

``get_config()`` merges the project's ``settings.REDCOORD`` over
:data:`DEFAULTS`, validates it and caches the result; the cache is cleared on
Django's ``setting_changed`` signal (connected in ``AppConfig.ready``), so
``override_settings`` works in tests. Nothing here runs at import time.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from .exceptions import ConfigurationError
from .keys import DEFAULT_PREFIX, validate_prefix

#: Documented defaults; the README's configuration table mirrors this dict.
DEFAULTS: dict[str, Any] = {
    # Where Redis is: exactly one of URL (redis://, rediss://, unix:// or
    # "embedded") and CACHE (the alias of a django-redis cache whose
    # connection pool is reused).
    "URL": None,
    "CACHE": None,
    # Every key starts with "<KEY_PREFIX>:" so several projects share one Redis.
    "KEY_PREFIX": DEFAULT_PREFIX,
    # Seconds. Coordination calls never retry silently: a dead or paused
    # server is reported after at most these timeouts.
    "SOCKET_TIMEOUT": 5.0,
    "CONNECT_TIMEOUT": 2.0,
    # Folder of the embedded development server (socket, pid file, log);
    # default: <BASE_DIR or cwd>/.redcoord
    "EMBEDDED_DIR": None,
    # Locks: default time-to-live and default wait, in seconds.
    "LOCK_TTL": 30.0,
    "LOCK_WAIT": 10.0,
    # Leader election (client-go's rules, validated at start-up:
    # LEASE > RENEW_DEADLINE > 1.2 x RETRY_PERIOD), seconds.
    "LEADER_LEASE": 15.0,
    "LEADER_RENEW_DEADLINE": 10.0,
    "LEADER_RETRY_PERIOD": 2.0,
    # run_leader: seconds to wait for running jobs on SIGTERM before resigning.
    "LEADER_SHUTDOWN_TIMEOUT": 30.0,
    # Modules holding @periodic jobs besides every installed app's jobs.py.
    "JOBS": [],
    # Queues and workers.
    "QUEUE_MAX_ATTEMPTS": 3,  # deliveries before a message is dead-lettered
    "QUEUE_RETRY_DELAY": 1.0,  # seconds before the first retry; doubles each attempt
    "QUEUE_RETRY_MAX_DELAY": 300.0,  # cap of the retry delay, seconds
    "WORKER_HEARTBEAT": 2.0,  # seconds between worker heartbeats
    "WORKER_TIMEOUT": 10.0,  # a worker silent this long is dead: its messages are requeued
    "WORKER_PREFETCH": 32,  # messages a worker claims (and acknowledges) per round trip
    "WORKER_SHUTDOWN_TIMEOUT": 30.0,  # seconds to finish running jobs on SIGTERM
}

_SECONDS = (
    "SOCKET_TIMEOUT",
    "CONNECT_TIMEOUT",
    "LOCK_TTL",
    "LEADER_LEASE",
    "LEADER_RENEW_DEADLINE",
    "LEADER_RETRY_PERIOD",
    "LEADER_SHUTDOWN_TIMEOUT",
    "QUEUE_RETRY_DELAY",
    "QUEUE_RETRY_MAX_DELAY",
    "WORKER_HEARTBEAT",
    "WORKER_TIMEOUT",
    "WORKER_SHUTDOWN_TIMEOUT",
)
_COUNTS = ("QUEUE_MAX_ATTEMPTS", "WORKER_PREFETCH")
EMBEDDED = "embedded"
URL_SCHEMES = ("redis://", "rediss://", "unix://")


def validate(user: Any) -> dict[str, Any]:
    """Merge ``user`` (the REDCOORD dict) over the defaults; raise ConfigurationError."""
    if user is None:
        user = {}
    if not isinstance(user, dict):
        raise ConfigurationError(f"settings.REDCOORD must be a dict, not {type(user).__name__}")
    unknown = sorted(set(user) - set(DEFAULTS))
    if unknown:
        raise ConfigurationError(
            f"unknown REDCOORD key(s) {', '.join(unknown)}; allowed keys are {', '.join(DEFAULTS)}"
        )
    config = {**DEFAULTS, **user}
    url, cache = config["URL"], config["CACHE"]
    if url is not None and cache is not None:
        raise ConfigurationError(
            "REDCOORD sets both URL and CACHE; set exactly one of them "
            "(URL = 'redis://...' or 'embedded', CACHE = a django-redis cache alias)"
        )
    if url is not None and (
        not isinstance(url, str) or (url != EMBEDDED and not url.startswith(URL_SCHEMES))
    ):
        raise ConfigurationError(
            f"REDCOORD['URL'] must start with redis://, rediss:// or unix://, or be 'embedded' (got {url!r})"
        )
    if cache is not None and (not isinstance(cache, str) or not cache):
        raise ConfigurationError(f"REDCOORD['CACHE'] must be a cache alias (str), got {cache!r}")
    try:
        validate_prefix(config["KEY_PREFIX"])
    except ValueError as exc:
        raise ConfigurationError(f"REDCOORD: {exc}") from None
    for key in _SECONDS:
        config[key] = _positive_seconds(key, config[key])
    for key in _COUNTS:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"REDCOORD[{key!r}] must be a whole number >= 1 (got {value!r})")
    jobs = config["JOBS"]
    if not isinstance(jobs, (list, tuple)) or not all(isinstance(j, str) and j for j in jobs):
        raise ConfigurationError(
            f"REDCOORD['JOBS'] must be a list of dotted module paths (got {jobs!r})"
        )
    if config["LOCK_WAIT"] is not None:
        wait = config["LOCK_WAIT"]
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            raise ConfigurationError(
                f"REDCOORD['LOCK_WAIT'] must be seconds >= 0, or None to wait forever (got {wait!r})"
            )
        config["LOCK_WAIT"] = float(wait)
    return config


def _positive_seconds(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigurationError(f"REDCOORD[{key!r}] must be a number of seconds > 0 (got {value!r})")
    return float(value)


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
    """The REDCOORD settings (validated), or the built-in defaults without Django settings."""
    return get_config() if settings_available() else DEFAULTS


def default_prefix() -> str:
    """KEY_PREFIX when Django settings are configured, else the built-in default."""
    return config_or_defaults()["KEY_PREFIX"]


def clear_cache(**kwargs: Any) -> None:
    """``setting_changed`` receiver: forget the cached config and clients."""
    if kwargs.get("setting") not in (None, "REDCOORD", "CACHES", "BASE_DIR"):
        return
    get_config.cache_clear()
    from . import connection

    connection.reset()


def lock_defaults() -> tuple[float, float | None]:
    """(ttl, wait) defaults for locks: LOCK_TTL/LOCK_WAIT, or 30 s / 10 s without Django."""
    config = config_or_defaults()
    return config["LOCK_TTL"], config["LOCK_WAIT"]
