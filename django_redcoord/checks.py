"""System checks for the REDCOORD settings (``manage.py check``).

Ids are stable; tests assert the exact messages:

* ``redcoord.E001`` no Redis configured.
* ``redcoord.E002`` ``CACHE`` names a missing alias or a cache that is not django-redis.
* ``redcoord.E003`` ``REDCOORD`` is malformed (unknown key, bad URL, bad number).
* ``redcoord.W001`` the configured Redis does not answer (URL shown, password masked).
* ``redcoord.W002`` the embedded development Redis is used with ``DEBUG = False``.
* ``redcoord.W003`` (``--deploy``) the Redis evicts keys under memory pressure.
* ``redcoord.W004`` (``--deploy``) the Redis persists nothing (no AOF, no RDB save points).
* ``redcoord.W005`` (``--deploy``) what the Redis keeps could not be read (CONFIG refused).
* ``redcoord.W006`` a ``REDLOCK`` master does not answer (its number and URL shown, password
  masked).
* ``redcoord.W007`` ``REDLOCK`` names fewer than 3 masters, or an even number of them.
* ``redcoord.W008`` a sentinel of ``SENTINEL`` does not answer (its number and address shown).
* ``redcoord.W009`` a node of ``CLUSTER`` does not answer, is not a Cluster node, or says the
  Cluster is not ok (its number and URL shown, password masked).
* ``redcoord.W015`` (``--deploy``) a Cluster primary has ``cluster-require-full-coverage yes``
  (or it could not be read): while one primary is down, the others refuse every call.
* ``redcoord.E031`` a ``RATE_LIMITS`` rule keys on ``"user"`` but ``RateLimitMiddleware``
  comes before ``AuthenticationMiddleware`` (or there is none): it would see no user.
* ``redcoord.E017`` two ``REDLOCK`` URLs reach one Redis server (the same ``run_id``: ``/0``
  and ``/1`` of one server, or two spellings of one host).
* ``redcoord.W017`` (``--deploy``) a ``REDLOCK`` master evicts keys under memory pressure.
* ``redcoord.I018`` (``--deploy``) a ``REDLOCK`` master persists nothing (after a restart it
  refuses quorum grants for ``REDLOCK_MAX_TTL``).
* ``redcoord.E019`` ``REPLICA_TIMEOUT`` does not fit within ``SOCKET_TIMEOUT`` (a replica check
  would read as an outage).
* ``redcoord.E040`` ``TRACING`` is on but ``opentelemetry-api`` is not installed.
* ``redcoord.E042`` a module ``JOBS`` names cannot be found (``run_leader`` would fail to start).

``redcoord.E003`` comes once per problem, so one ``check`` lists them all.
W001 does one PING with a 0.5 s timeout: it is the check people need when a
deploy points at the wrong server, and cheap enough for every ``check``. The
deploy checks ask the server what it keeps (``INFO``, ``CONFIG GET save``):
locks' holders, queued tasks and results live there (see docs/production.md,
"What Redis must keep").
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from . import conf
from .core import ConfigurationError

HINT_CONFIGURE = (
    "Add REDCOORD = {'URL': 'redis://127.0.0.1:6379/0'} to settings (or 'embedded' for "
    "development), or REDCOORD = {'CACHE': '<alias>'} to reuse a django-redis cache."
)


def register() -> None:
    checks.register(check_settings, "redcoord")
    checks.register(check_rate_limit_middleware, "redcoord")
    checks.register(check_what_redis_keeps, "redcoord", deploy=True)
    checks.register(check_redlock_masters_distinct, "redcoord")
    checks.register(check_what_redlock_masters_keep, "redcoord", deploy=True)
    checks.register(check_replica_timeout, "redcoord")
    checks.register(check_cluster_coverage, "redcoord", deploy=True)
    checks.register(check_tracing, "redcoord")
    checks.register(check_jobs_modules, "redcoord")


def check_tracing(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """E040: REDCOORD["TRACING"] on without opentelemetry-api (a bad value is E003's)."""
    from importlib.util import find_spec

    from django.conf import settings

    from .core import tracing_option

    user = getattr(settings, "REDCOORD", None)
    try:
        on = (
            tracing_option(user.get("TRACING", False) if isinstance(user, dict) else False)
            is not None
        )
    except ValueError:
        return []
    try:
        missing = on and find_spec("opentelemetry.trace") is None
    except ImportError:  # no opentelemetry package at all
        missing = True
    if not missing:
        return []
    return [
        checks.Error(
            "REDCOORD['TRACING'] is on but opentelemetry-api is not installed.",
            hint="pip install 'django-redcoord[otel]' (and configure a tracer provider), or set "
            "TRACING to False.",
            id="redcoord.E040",
        )
    ]


def check_jobs_modules(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """E042: a module REDCOORD["JOBS"] names that cannot be found. Found, not imported (its
    code runs when ``run_leader`` imports it, and an error there is ``run_leader``'s to say);
    finding a submodule imports its parent packages, and one that raises is reported here, not
    raised (every command runs the checks). A value that is no list is E003's."""
    from importlib.util import find_spec

    from django.conf import settings

    user = getattr(settings, "REDCOORD", None)
    names = user.get("JOBS", []) if isinstance(user, dict) else []
    if not isinstance(names, (list, tuple)):
        return []
    found = []
    for name in names:
        if not isinstance(name, str) or not name:
            continue
        try:
            missing = find_spec(name) is None
            why = "no such module"
        except Exception as exc:  # a parent package missing or raising, or a bad name
            missing, why = True, f"{type(exc).__name__}: {exc}"
        if missing:
            found.append(
                checks.Error(
                    f"REDCOORD['JOBS'] names {name!r}, which cannot be imported ({why}).",
                    hint="Give the dotted path of a module of your project that defines "
                    "@periodic jobs (e.g. 'myproject.jobs'); an app's own jobs.py is found "
                    "without it.",
                    id="redcoord.E042",
                )
            )
    return found


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from django.conf import settings

    try:
        config = conf.validate(getattr(settings, "REDCOORD", None))
    except ConfigurationError as exc:
        return [
            checks.Error(
                problem,
                hint="See docs/configuration.md of django_redcoord (the settings table).",
                id="redcoord.E003",
            )
            for problem in getattr(exc, "problems", [str(exc)])
        ]
    redlock = _check_redlock(config["REDLOCK"])
    if config["CLUSTER"] is not None:
        return [*redlock, *_check_cluster(config["CLUSTER"])]
    if config["URL"] is None and config["CACHE"] is None and config["SENTINEL"] is None:
        return [
            checks.Error(
                "No Redis is configured for django_redcoord.",
                hint=HINT_CONFIGURE,
                id="redcoord.E001",
            ),
            *redlock,
        ]
    if config["CACHE"] is not None:
        from .conf import DJANGO_REDIS_BACKENDS

        alias = config["CACHE"]
        caches = getattr(settings, "CACHES", {})
        backend = caches.get(alias, {}).get("BACKEND")
        if backend not in DJANGO_REDIS_BACKENDS:
            what = f"uses {backend!r}" if alias in caches else "is not defined in settings.CACHES"
            return [
                checks.Error(
                    f"REDCOORD['CACHE'] names the cache {alias!r}, which {what}; "
                    "it must be a django-redis cache.",
                    hint=(
                        f"Set its BACKEND to '{DJANGO_REDIS_BACKENDS[0]}', or use REDCOORD['URL']."
                    ),
                    id="redcoord.E002",
                )
            ]
    messages: list[checks.CheckMessage] = redlock
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
    if config["SENTINEL"] is not None:
        messages.extend(_check_sentinels(config["SENTINEL"]))
    messages.extend(_check_reachable(config))
    return messages


def _check_sentinels(sentinel: dict[str, Any]) -> list[checks.CheckMessage]:
    """Each sentinel answers a PING (0.5 s each, at once)."""
    import redis

    hosts = sentinel["HOSTS"]
    answers = _ping_each(
        [
            redis.Redis(
                host,
                port,
                username=sentinel["SENTINEL_USERNAME"],
                password=sentinel["SENTINEL_PASSWORD"],
                ssl=sentinel["SSL"],
                socket_timeout=0.5,
                socket_connect_timeout=0.5,
                retry_on_error=[],
            )
            for host, port in hosts
        ]
    )
    return [
        checks.Warning(
            f"Sentinel {i + 1} of {len(hosts)} ({host}:{port}) did not answer: {why}",
            hint="Start it, or fix REDCOORD['SENTINEL']['HOSTS']; the others still find the "
            "master, but a failover needs a majority of the sentinels.",
            id="redcoord.W008",
        )
        for i, ((host, port), why) in enumerate(zip(hosts, answers, strict=True))
        if why is not None
    ]


def _check_cluster(cluster: dict[str, Any]) -> list[checks.CheckMessage]:
    """Each node of ``CLUSTER['NODES']`` answers (0.5 s each, at once), is a Cluster node, and
    finds it ok."""
    from concurrent.futures import ThreadPoolExecutor

    from .core import client_from_url, mask_url

    urls = cluster["NODES"]

    def ask(url: str) -> str | None:
        client = client_from_url(url, socket_timeout=0.5, connect_timeout=0.5)
        try:
            info = client.execute_command("CLUSTER", "INFO")
        except Exception as exc:  # any failure is the answer to report
            if "cluster support disabled" in str(exc).lower():
                return (
                    "it is not a Redis Cluster node (cluster-enabled no): use REDCOORD['URL'] for "
                    "one server"
                )
            return f"did not answer: {type(exc).__name__}: {exc}"
        finally:
            client.connection_pool.disconnect()
        text = info.decode() if isinstance(info, bytes) else str(info)
        if "cluster_state:ok" not in text:
            return (
                "answers, but says the Cluster is not ok (cluster_state:fail: slots without a "
                "primary?)"
            )
        return None

    with ThreadPoolExecutor(min(len(urls), 16)) as pool:
        answers = list(pool.map(ask, urls))
    return [
        checks.Warning(
            f"Cluster node {i + 1} of {len(urls)} ({mask_url(url)}) {why}",
            hint="Start it, or fix REDCOORD['CLUSTER']['NODES']; the client finds the other nodes "
            "from any one that answers, but while none does nothing works.",
            id="redcoord.W009",
        )
        for i, (url, why) in enumerate(zip(urls, answers, strict=True))
        if why is not None
    ]


def _check_reachable(config: dict[str, Any]) -> list[checks.CheckMessage]:
    import redis

    from .conf import build_client
    from .core import CoordinationUnavailable, describe

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


def _check_redlock(urls: list[str]) -> list[checks.CheckMessage]:
    """The quorum lock masters: how many, and whether each answers a PING (0.5 s each, at once)."""
    if not urls:
        return []
    from .core import client_from_url, mask_url

    messages: list[checks.CheckMessage] = []
    count = len(urls)
    if count < 3 or count % 2 == 0:
        messages.append(
            checks.Warning(
                f"REDCOORD['REDLOCK'] names {count} master(s): a quorum lock over {count} survives "
                f"the loss of {(count - 1) // 2}.",
                hint="Use an odd number of independent masters, 3 or more (5 survive the loss of "
                "2).",
                id="redcoord.W007",
            )
        )

    answers = _ping_each(
        [client_from_url(url, socket_timeout=0.5, connect_timeout=0.5) for url in urls]
    )
    down = [
        (i, url, why)
        for i, (url, why) in enumerate(zip(urls, answers, strict=True))
        if why is not None
    ]
    for i, url, why in down:
        messages.append(
            checks.Warning(
                f"Redlock master {i + 1} of {count} ({mask_url(url)}) did not answer: {why}",
                hint=f"Quorum locks need {count // 2 + 1} of the {count} masters; "
                f"{count - len(down)} answer.",
                id="redcoord.W006",
            )
        )
    return messages


def _ping_each(clients: list[Any]) -> list[str | None]:
    """PING every client at once; per client None, or why it did not answer. Their connections
    are closed."""
    from concurrent.futures import ThreadPoolExecutor

    def ping(client: Any) -> str | None:
        try:
            client.ping()
            return None
        except Exception as exc:  # any failure is the answer to report
            return f"{type(exc).__name__}: {exc}"
        finally:
            client.connection_pool.disconnect()

    with ThreadPoolExecutor(min(len(clients), 16)) as pool:
        return list(pool.map(ping, clients))


EVICTING_HINT = (
    "Use 'maxmemory-policy noeviction' on a Redis dedicated to coordination (not a cache's "
    "server): Redis then refuses writes when full instead of dropping locks and queued tasks."
)
PERSISTENCE_HINT = (
    "Enable 'appendonly yes' (or RDB snapshots): without persistence a restart loses queued "
    "tasks, results and held locks (fencing tokens and terms stay monotonic across data loss; "
    "see 'What Redis must keep' in docs/production.md)."
)


def check_what_redis_keeps(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``check --deploy``: an evicting policy (W003), no persistence (W004), or neither readable
    (W005)."""
    import redis
    from django.conf import settings

    from .conf import build_client
    from .core import CoordinationUnavailable, describe

    try:
        config = conf.validate(getattr(settings, "REDCOORD", None))
    except ConfigurationError:
        return []  # E003 says why
    if (
        config["URL"] in (None, conf.EMBEDDED)
        and config["CACHE"] is None
        and config["SENTINEL"] is None
        and config["CLUSTER"] is None
    ):
        # nothing configured (E001), or the development server that keeps nothing on purpose
        return []
    try:
        client = build_client({**config, "SOCKET_TIMEOUT": 0.5, "CONNECT_TIMEOUT": 0.5})
    except ConfigurationError:
        return []  # E002
    except CoordinationUnavailable:
        return []  # W009 reports the Cluster's nodes
    try:
        if type(client).__name__ == "RedisCluster":  # every primary keeps its own slots' data
            servers = [
                (f"{node.name} (a Cluster primary)", client.get_redis_connection(node))
                for node in client.get_primaries()
            ]
        else:
            servers = [(describe(client), client)]
        return [
            message for server, node in servers for message in _what_one_server_keeps(server, node)
        ]
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return []  # W001 / W009 report an unreachable server
    finally:
        client.close()


def _what_one_server_keeps(server: str, client: Any) -> list[checks.CheckMessage]:
    import redis

    found: list[checks.CheckMessage] = []
    try:
        memory, persistence = client.info("memory"), client.info("persistence")
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return []  # W001 reports an unreachable server
    except redis.RedisError as exc:
        return [_unverified(server, "INFO", exc)]
    policy = str(memory.get("maxmemory_policy", "noeviction"))
    if policy != "noeviction":
        found.append(
            checks.Warning(
                f"Redis at {server} uses maxmemory-policy {policy}: under memory pressure it "
                "evicts keys, and django_redcoord's locks, fencing counters and queued tasks with "
                "them.",
                hint=EVICTING_HINT,
                id="redcoord.W003",
            )
        )
    if str(persistence.get("aof_enabled", "0")) != "1":
        try:
            save = client.config_get("save").get("save", "")
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            return found
        except redis.RedisError as exc:
            found.append(_unverified(server, "CONFIG GET save", exc))
            return found
        if not str(save).strip():
            found.append(
                checks.Warning(
                    f"Redis at {server} persists nothing (appendonly no, no RDB save points): a "
                    "restart loses every queued task and result.",
                    hint=PERSISTENCE_HINT,
                    id="redcoord.W004",
                )
            )
    return found


def _unverified(server: str, command: str, exc: Exception) -> checks.CheckMessage:
    return checks.Warning(
        f"Could not verify what Redis at {server} keeps: {command} was refused ({exc}).",
        hint="Check by hand that it uses maxmemory-policy noeviction and persists (appendonly "
        "yes), or allow the check's user INFO and CONFIG GET.",
        id="redcoord.W005",
    )


COVERAGE_HINT = (
    "Set cluster-require-full-coverage no on every node (CONFIG SET cluster-require-full-coverage "
    "no, and in redis.conf), so the other primaries' slots keep working while one primary is "
    "down; see 'Redis Cluster' in docs/topologies.md."
)


def check_cluster_coverage(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``check --deploy`` on a Cluster: every primary must serve its slots while another is down
    (W015).

    With Redis's default ``cluster-require-full-coverage yes`` a node whose
    Cluster has a slot without a primary refuses every command
    (``CLUSTERDOWN``): one dead primary stops every lock, queue and leader,
    whatever their slot, until its replica is promoted (or forever, without one).
    """
    import redis
    from django.conf import settings

    from .conf import build_client
    from .core import CoordinationUnavailable

    try:
        config = conf.validate(getattr(settings, "REDCOORD", None))
    except ConfigurationError:
        return []  # E003 says why
    if config["CLUSTER"] is None:
        return []
    try:
        client = build_client({**config, "SOCKET_TIMEOUT": 0.5, "CONNECT_TIMEOUT": 0.5})
    except (ConfigurationError, CoordinationUnavailable):
        return []  # W009 reports the Cluster's nodes
    found: list[checks.CheckMessage] = []
    try:
        for node in client.get_primaries():
            server = f"{node.name} (a Cluster primary)"
            try:
                reply = client.get_redis_connection(node).config_get(
                    "cluster-require-full-coverage"
                )
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                continue  # W009 reports a node that does not answer
            except redis.RedisError as exc:
                found.append(
                    checks.Warning(
                        f"Could not read cluster-require-full-coverage of Redis at {server}: "
                        f"CONFIG GET was refused ({exc}).",
                        hint=COVERAGE_HINT,
                        id="redcoord.W015",
                    )
                )
                continue
            value = {str(k): v for k, v in (reply or {}).items()}.get(
                "cluster-require-full-coverage", "yes"
            )
            value = value.decode() if isinstance(value, bytes) else str(value)
            if value.strip().lower() != "no":
                found.append(
                    checks.Warning(
                        f"Redis at {server} has cluster-require-full-coverage {value}: while any "
                        "primary of the Cluster is down it refuses every call (CLUSTERDOWN), for "
                        "the slots it serves too.",
                        hint=COVERAGE_HINT,
                        id="redcoord.W015",
                    )
                )
    finally:
        client.close()
    return found


#: The documented path of the rate-limit middleware (``django_redcoord.ratelimit.middleware.
#: RateLimitMiddleware`` is the same class; a subclass of it counts too).
RATE_LIMIT_MIDDLEWARE = "django_redcoord.middleware.RateLimitMiddleware"


def check_rate_limit_middleware(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E031: a ``key="user"`` rule of ``RATE_LIMITS`` needs ``request.user`` set before the
    rate-limit middleware.

    Any middleware that is (or subclasses) Django's ``AuthenticationMiddleware``
    counts; without one before it, every such request would be counted by IP.
    """
    from django.apps import apps
    from django.conf import settings
    from django.utils.module_loading import import_string

    from .ratelimit.middleware import RateLimitMiddleware

    middleware = list(getattr(settings, "MIDDLEWARE", None) or [])

    def limits(path: str) -> bool:
        try:
            found = import_string(path)
        except ImportError:
            return False
        return isinstance(found, type) and issubclass(found, RateLimitMiddleware)

    ours = next((i for i, path in enumerate(middleware) if limits(path)), None)
    if ours is None:
        return []
    try:
        rules = conf.validate(getattr(settings, "REDCOORD", None))["RATE_LIMITS"]
    except ConfigurationError:
        return []  # E003 says why
    by_user = [i for i, rule in enumerate(rules) if rule.get("key", "ip") == "user"]
    if not by_user:
        return []

    # (a project without django.contrib.auth has no user to key on; importing its middleware
    # there would raise, failing every command at its checks)
    auth = apps.is_installed("django.contrib.auth")
    if auth:
        from django.contrib.auth.middleware import AuthenticationMiddleware

    def authenticates(path: str) -> bool:
        if not auth:
            return False
        try:
            found = import_string(path)
        except ImportError:
            return False
        return isinstance(found, type) and issubclass(found, AuthenticationMiddleware)

    if any(authenticates(path) for path in middleware[:ours]):
        return []
    after = any(authenticates(path) for path in middleware[ours + 1 :])
    where = (
        "comes before django.contrib.auth.middleware.AuthenticationMiddleware"
        if after
        else ("has no django.contrib.auth.middleware.AuthenticationMiddleware before it")
    )
    rules_text = ", ".join(f"REDCOORD['RATE_LIMITS'][{i}]" for i in by_user)
    return [
        checks.Error(
            f"{rules_text} key(s) the rate limit on 'user', but {middleware[ours]} {where} in "
            "MIDDLEWARE: it would find no request.user (every request is refused with "
            "ImproperlyConfigured rather than silently counted by IP).",
            hint=f"Move {middleware[ours]} after AuthenticationMiddleware in MIDDLEWARE, or "
            "key the rule on 'ip'.",
            id="redcoord.E031",
        )
    ]


# -- quorum lock masters and replica checks ----------------------------------------------------


def _redlock_config() -> dict[str, Any] | None:
    """The validated REDCOORD, or None when it is invalid (E003 reports that)."""
    from django.conf import settings

    try:
        return conf.validate(getattr(settings, "REDCOORD", None))
    except ConfigurationError:
        return None  # E003 says why


def _redlock_infos(urls: list[str]) -> list[dict[str, Any] | None]:
    """``INFO`` of every ``REDLOCK`` master at once (0.5 s each); None where it did not answer
    (W006 says so)."""
    from concurrent.futures import ThreadPoolExecutor

    from .core import client_from_url

    def ask(url: str) -> dict[str, Any] | None:
        client = client_from_url(url, socket_timeout=0.5, connect_timeout=0.5)
        try:
            return client.info()
        except Exception:  # unreachable, or INFO refused: W006 / nothing to compare
            return None
        finally:
            client.connection_pool.disconnect()

    with ThreadPoolExecutor(min(len(urls), 16)) as pool:
        return list(pool.map(ask, urls))


def check_redlock_masters_distinct(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Two ``REDLOCK`` URLs must not reach one server (E017): compared by ``run_id``.

    ``redis://h/0`` and ``redis://h/1``, or ``localhost`` and ``127.0.0.1``,
    are different URLs of one server: a "majority" of them is one server.
    """
    from .core import mask_url

    config = _redlock_config()
    urls = config["REDLOCK"] if config else []
    if len(urls) < 2:
        return []
    infos = _redlock_infos(urls)
    seen: dict[str, int] = {}
    found: list[checks.CheckMessage] = []
    for i, info in enumerate(infos):
        run_id = str((info or {}).get("run_id") or "")
        if not run_id:
            continue
        if run_id in seen:
            first = seen[run_id]
            found.append(
                checks.Error(
                    f"REDCOORD['REDLOCK'] masters {first + 1} ({mask_url(urls[first])}) and "
                    f"{i + 1} ({mask_url(urls[i])}) are one Redis server (run_id {run_id}): a "
                    "quorum lock over them is not held on independent masters, and losing that "
                    "server loses both.",
                    hint="Name each independent master once (another database or another spelling "
                    "of the host is the same server).",
                    id="redcoord.E017",
                )
            )
        else:
            seen[run_id] = i
    return found


def check_what_redlock_masters_keep(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """``check --deploy``: a ``REDLOCK`` master that evicts keys (W017) or persists nothing
    (I018)."""
    from .core import mask_url

    config = _redlock_config()
    urls = config["REDLOCK"] if config else []
    if not urls:
        return []
    found: list[checks.CheckMessage] = []
    count = len(urls)
    for i, (url, info) in enumerate(zip(urls, _redlock_infos(urls), strict=True)):
        if info is None:
            continue  # W006 reports it
        where = f"Redlock master {i + 1} of {count} ({mask_url(url)})"
        policy = str(info.get("maxmemory_policy", "noeviction"))
        if policy != "noeviction":
            found.append(
                checks.Warning(
                    f"{where} uses maxmemory-policy {policy}: under memory pressure it evicts "
                    "keys, and a quorum lock's grant with them; the master then grants that lock "
                    "again while it is held (its restart guard does not see an eviction).",
                    hint="Use 'maxmemory-policy noeviction' on every Redlock master: a full "
                    "master then refuses grants instead of forgetting them.",
                    id="redcoord.W017",
                )
            )
        if str(info.get("aof_enabled", "0")) != "1" and _saves_nothing(url):
            found.append(
                checks.Info(
                    f"{where} persists nothing: after each restart it refuses quorum grants for "
                    f"REDLOCK_MAX_TTL ({config['REDLOCK_MAX_TTL']:g} s), so that it grants no lock "
                    "it forgot; a majority restarting at once leaves quorum locks unavailable "
                    "that long.",
                    hint="That is safe as it is. With 'appendonly yes' and 'appendfsync always' a "
                    "restarted master forgets nothing and may be vouched for at once "
                    "(django_redcoord.core.redlock.trust_masters).",
                    id="redcoord.I018",
                )
            )
    return found


def _saves_nothing(url: str) -> bool:
    """True when ``CONFIG GET save`` says no RDB save points (False when it cannot be read)."""
    from .core import client_from_url

    client = client_from_url(url, socket_timeout=0.5, connect_timeout=0.5)
    try:
        return not str(client.config_get("save").get("save", "")).strip()
    except Exception:  # refused or unreachable: nothing to say
        return False
    finally:
        client.connection_pool.disconnect()


def check_replica_timeout(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``REPLICA_TIMEOUT`` must end within ``SOCKET_TIMEOUT`` (E019), else every replica check
    reads as an outage."""
    from .core import replica_check_limit

    config = _redlock_config()
    if not config or config.get("REPLICA_TIMEOUT") is None:
        return []
    limit = replica_check_limit(config["SOCKET_TIMEOUT"])
    if limit is None or config["REPLICA_TIMEOUT"] <= limit:
        return []
    return [
        checks.Error(
            f"REDCOORD['REPLICA_TIMEOUT'] ({config['REPLICA_TIMEOUT']:g} s) does not fit within "
            f"REDCOORD['SOCKET_TIMEOUT'] ({config['SOCKET_TIMEOUT']:g} s): a replica check "
            "(replicas=n) waits on the server, and its answer must come before the socket times "
            "out, or the grant reads as an outage.",
            hint=f"Set REPLICA_TIMEOUT to at most {limit:g} s, or raise SOCKET_TIMEOUT.",
            id="redcoord.E019",
        )
    ]
