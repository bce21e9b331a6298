"""The options the core understands: every default in one dict, and their validation.

Plain Python (no Django): a Django project sets them as ``settings.REDCOORD``
(read by :mod:`django_redcoord.conf`); a plain program passes the same dict to
``runtime.configure()``. ``validate()`` merges options over :data:`DEFAULTS`
and reports every problem at once.
"""

from __future__ import annotations

import math
import os
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .exceptions import ConfigurationError
from .keys import DEFAULT_PREFIX, validate_name, validate_prefix
from .values import check_timing, finite_number, mask_url

# : Documented defaults; docs/configuration.md's settings table is generated from this dict (make
# docs checks it).
DEFAULTS: dict[str, Any] = {
    # Where Redis is: exactly one of URL (redis://, rediss://, unix:// or
    # "embedded") and CACHE (the alias of a django-redis cache whose
    # connection pool is reused).
    "URL": None,
    "CACHE": None,
    # Or a Sentinel-monitored master: {"HOSTS": [("s1", 26379), ...],
    # "SERVICE": "mymaster", "DB": 0, "USERNAME": None, "PASSWORD": None,
    # "SENTINEL_USERNAME": None, "SENTINEL_PASSWORD": None, "SSL": False}.
    "SENTINEL": None,
    # Or a Redis Cluster (7.0+): {"NODES": ["redis://node-1:6379", ...]}, some
    # of its nodes (the others are discovered); credentials and TLS from the URLs.
    "CLUSTER": None,
    # Every key starts with "<KEY_PREFIX>:" so several projects share one Redis.
    "KEY_PREFIX": DEFAULT_PREFIX,
    # Seconds. Coordination calls never retry silently: a dead or paused
    # server is reported after at most these timeouts.
    "SOCKET_TIMEOUT": 5.0,
    "CONNECT_TIMEOUT": 2.0,
    # Connections per process's pool (each of the sync client and each event
    # loop's asyncio client). A lock waiter holds one for its whole wait; all
    # but a tenth (2 to 16) may wait at once, the rest serve releases.
    "MAX_CONNECTIONS": 1000,
    # Folder of the embedded development server (socket, pid file, log);
    # default: <BASE_DIR or cwd>/.redcoord
    "EMBEDDED_DIR": None,
    # Quorum locks (Redlock): the URLs of independent masters (no replication
    # between them; an odd number, 3 or more), e.g. ["redis://a:6379/0",
    # "redis://b:6379/0", "redis://c:6379/0"]. Empty: no quorum locks.
    "REDLOCK": [],
    # The longest TTL a quorum lock may have (seconds): a master that restarted
    # or lost its data refuses quorum grants for this long, so every grant it
    # may have forgotten has expired first (Redlock's "delayed restart").
    "REDLOCK_MAX_TTL": 60.0,
    # Default seconds a replica check (replicas=n) waits for the replicas; it
    # must end within SOCKET_TIMEOUT (see "Confirming grants on replicas").
    # None: 1 s, or less when SOCKET_TIMEOUT leaves less room.
    "REPLICA_TIMEOUT": None,
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
    # Dead letters kept per queue; the oldest are dropped past it (None: keep all).
    "QUEUE_DEAD_LETTER_LIMIT": 10_000,
    # Rate limits. The reverse proxies (IP addresses or CIDR networks) whose
    # X-Forwarded-For is believed; nobody's by default. "unix" trusts the peer
    # of a Unix socket (an empty or absent REMOTE_ADDR).
    "TRUSTED_PROXIES": [],
    # Rate limits by IP count a client's network: IPv4 /32, IPv6 /64 by default.
    "RATE_LIMIT_IPV4_PREFIX": 32,
    "RATE_LIMIT_IPV6_PREFIX": 64,
    # The middleware's rules: [{"path": "/api/", "policy": "10/s;burst=20",
    # "key": "ip", "methods": ["POST"], "on_unavailable": "open"}, ...]
    "RATE_LIMITS": [],
    # How run_worker, run_leader and redcoord log to the console when the
    # project's LOGGING configures nothing for them: "text" or "json" (one
    # JSON object per line).
    "LOG_FORMAT": "text",
    # The metrics view (django_redcoord.metrics): a token it asks for as
    # "Authorization: Bearer <token>" (None: open, protect it otherwise), and
    # the most lock records one scrape reads (above it: counts from the index,
    # waiters of that many locks per scrape in turn; 0: never read them).
    "METRICS_TOKEN": None,
    "METRICS_LOCK_DETAIL": 1000,
    # OpenTelemetry (django_redcoord.contrib.otel, needs opentelemetry-api):
    # True traces messages from enqueue to the task's run, plus spans for lock
    # waits and holds, rate-limit decisions and leader terms; {"EVENTS": False}
    # traces only the messages. False: off.
    "TRACING": False,
}

# Seconds: (low, high, low_inclusive). NaN and infinities are never allowed.
_DAY = 86400.0
_SECONDS: dict[str, tuple[float, float, bool]] = {
    "SOCKET_TIMEOUT": (0.01, 3600.0, True),
    "CONNECT_TIMEOUT": (0.01, 3600.0, True),
    "LOCK_TTL": (0.001, 365 * _DAY, True),
    "REDLOCK_MAX_TTL": (0.001, 365 * _DAY, True),
    "LEADER_LEASE": (0.001, _DAY, True),
    "LEADER_RENEW_DEADLINE": (0.001, _DAY, True),
    "LEADER_RETRY_PERIOD": (0.001, _DAY, True),
    "LEADER_SHUTDOWN_TIMEOUT": (0.0, _DAY, False),
    "QUEUE_RETRY_DELAY": (0.001, _DAY, True),
    "QUEUE_RETRY_MAX_DELAY": (0.001, _DAY, True),
    "WORKER_HEARTBEAT": (0.01, 3600.0, True),
    "WORKER_TIMEOUT": (0.05, _DAY, True),
    "WORKER_SHUTDOWN_TIMEOUT": (0.0, _DAY, False),
}
_COUNTS = {
    "QUEUE_MAX_ATTEMPTS": (1, 1000),
    "WORKER_PREFETCH": (1, 1000),
    "MAX_CONNECTIONS": (4, 1_000_000),
}
_COUNTS["METRICS_LOCK_DETAIL"] = (0, 1_000_000)
EMBEDDED = "embedded"
LOG_FORMATS = ("text", "json")
URL_SCHEMES = ("redis://", "rediss://", "unix://")


def validate(user: Any) -> dict[str, Any]:
    """Merge ``user`` (the REDCOORD dict) over the defaults and normalise it.

    Raises ConfigurationError listing every problem (``exc.problems``: one
    message per problem, each saying the key, the value and what is allowed).
    """
    config, found = _check(user)
    if found:
        error = ConfigurationError("; ".join(found))
        error.problems = found  # type: ignore[attr-defined]
        raise error
    return config


def problems(user: Any) -> list[str]:
    """Every problem of a REDCOORD dict (empty when it is valid)."""
    return _check(user)[1]


def _check(user: Any) -> tuple[dict[str, Any], list[str]]:
    if user is None:
        user = {}
    if not isinstance(user, dict):
        return {}, [f"settings.REDCOORD must be a dict, not {type(user).__name__}"]
    found: list[str] = []
    unknown = sorted(set(user) - set(DEFAULTS), key=str)
    if unknown:
        found.append(
            f"unknown REDCOORD key(s) {', '.join(map(str, unknown))}; allowed keys are "
            f"{', '.join(DEFAULTS)}"
        )
    config = {**DEFAULTS, **{k: v for k, v in user.items() if k in DEFAULTS}}
    url, cache = config["URL"], config["CACHE"]
    if sum(config[k] is not None for k in ("URL", "CACHE", "SENTINEL", "CLUSTER")) > 1:
        found.append(
            "REDCOORD sets more than one of URL, CACHE, SENTINEL and CLUSTER; set exactly one of "
            "them (URL = 'redis://...' or 'embedded', CACHE = a django-redis cache alias, "
            "SENTINEL = {'HOSTS': [...], 'SERVICE': ...}, CLUSTER = {'NODES': ['redis://...', "
            "...]})"
        )
    found.extend(_sentinel_problems(config))
    found.extend(_cluster_problems(config))
    if url is not None and (
        not isinstance(url, str) or (url != EMBEDDED and not url.startswith(URL_SCHEMES))
    ):
        found.append(
            "REDCOORD['URL'] must start with redis://, rediss:// or unix://, or be 'embedded' "
            f"(got {url!r})"
        )
    elif isinstance(url, str) and url != EMBEDDED:
        problem = url_problem(url, "REDCOORD['URL']")
        if problem:
            found.append(problem)
    if cache is not None and (not isinstance(cache, str) or not cache):
        found.append(f"REDCOORD['CACHE'] must be a cache alias (str), got {cache!r}")
    try:
        validate_prefix(config["KEY_PREFIX"])
    except ValueError as exc:
        found.append(f"REDCOORD: {exc}")
    valid = set()
    for key, (low, high, inclusive) in _SECONDS.items():
        message = _seconds_problem(key, config[key], low, high, inclusive)
        if message:
            found.append(message)
        else:
            config[key] = float(config[key])
            valid.add(key)
    for key, (low, high) in _COUNTS.items():
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            found.append(
                f"REDCOORD[{key!r}] must be a whole number from {low} to {high} (got {value!r})"
            )
        else:
            valid.add(key)
    limit = config["QUEUE_DEAD_LETTER_LIMIT"]
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10**9
    ):
        found.append(
            "REDCOORD['QUEUE_DEAD_LETTER_LIMIT'] must be a whole number from 1 to 1000000000, "
            f"or None to keep every dead letter (got {limit!r})"
        )
    jobs = config["JOBS"]
    if not isinstance(jobs, (list, tuple)) or not all(isinstance(j, str) and j for j in jobs):
        found.append(f"REDCOORD['JOBS'] must be a list of dotted module paths (got {jobs!r})")
    found.extend(_redlock_problems(config))
    folder = config["EMBEDDED_DIR"]
    if folder is not None and not isinstance(folder, (str, os.PathLike)):
        found.append(
            f"REDCOORD['EMBEDDED_DIR'] must be a folder's path (str or pathlib.Path) or None, got "
            f"{folder!r}"
        )
    found.extend(_rate_limit_problems(config))
    found.extend(_metrics_problems(config))
    if config["LOG_FORMAT"] not in LOG_FORMATS:
        found.append(
            f"REDCOORD['LOG_FORMAT'] must be 'text' or 'json' (got {config['LOG_FORMAT']!r})"
        )
    wait = config["LOCK_WAIT"]
    if wait is not None:
        if (
            isinstance(wait, bool)
            or not isinstance(wait, (int, float))
            or not 0 <= wait <= 365 * _DAY
        ):
            found.append(
                "REDCOORD['LOCK_WAIT'] must be seconds >= 0 (a finite number up to a year), "
                f"or None to wait forever (got {wait!r})"
            )
        else:
            config["LOCK_WAIT"] = float(wait)
    replica_timeout = config["REPLICA_TIMEOUT"]
    if replica_timeout is not None:
        if (
            isinstance(replica_timeout, bool)
            or not isinstance(replica_timeout, (int, float))
            or not 0.001 <= replica_timeout <= 3600
        ):
            found.append(
                "REDCOORD['REPLICA_TIMEOUT'] must be seconds from 0.001 to 3600 (it must also end "
                f"within SOCKET_TIMEOUT), or None for the default (got {replica_timeout!r})"
            )
        else:
            config["REPLICA_TIMEOUT"] = float(replica_timeout)
    try:
        tracing_option(config["TRACING"])
    except ValueError as exc:
        found.append(str(exc))
    found.extend(_relations(config, valid))
    return config, found


def tracing_option(value: Any) -> dict[str, bool] | None:
    """REDCOORD["TRACING"] read: None (off) or ``{"EVENTS": bool}``; ValueError saying what is
    allowed."""
    if value is False:
        return None
    if value is True:
        return {"EVENTS": True}
    if (
        isinstance(value, dict)
        and set(value) <= {"EVENTS"}
        and all(isinstance(v, bool) for v in value.values())
    ):
        return {"EVENTS": value.get("EVENTS", True)}
    raise ValueError(
        f"REDCOORD['TRACING'] must be True, False, or a dict like {{'EVENTS': False}} (EVENTS: "
        "spans for lock waits and holds, rate limits and leader terms; default True) (got "
        f"{value!r})"
    )


SENTINEL_DEFAULTS: dict[str, Any] = {
    "HOSTS": None,
    "SERVICE": None,
    "DB": 0,
    "USERNAME": None,
    "PASSWORD": None,
    "SENTINEL_USERNAME": None,
    "SENTINEL_PASSWORD": None,
    "SSL": False,
}


def _sentinel_problems(config: dict[str, Any]) -> list[str]:
    """SENTINEL: normalized to a full dict with HOSTS as a list of (host, port) tuples."""
    value = config["SENTINEL"]
    if value is None:
        return []
    where = "REDCOORD['SENTINEL']"
    if not isinstance(value, dict):
        return [
            f"{where} must be a dict like {{'HOSTS': [('sentinel-1', 26379), ...], 'SERVICE': "
            f"'mymaster'}} (got {value!r})"
        ]
    found = []
    unknown = sorted(set(value) - set(SENTINEL_DEFAULTS), key=str)
    if unknown:
        found.append(
            f"{where} has unknown key(s) {', '.join(map(str, unknown))}; allowed keys are "
            f"{', '.join(SENTINEL_DEFAULTS)}"
        )
    sentinel = {**SENTINEL_DEFAULTS, **{k: v for k, v in value.items() if k in SENTINEL_DEFAULTS}}
    hosts = []
    for entry in sentinel["HOSTS"] if isinstance(sentinel["HOSTS"], (list, tuple)) else [None]:
        if isinstance(entry, str) and entry.rpartition(":")[2].isdigit():
            entry = (entry.rpartition(":")[0], int(entry.rpartition(":")[2]))
        if (
            isinstance(entry, (list, tuple))
            and len(entry) == 2
            and isinstance(entry[0], str)
            and entry[0]
            and isinstance(entry[1], int)
            and not isinstance(entry[1], bool)
            and 0 < entry[1] < 65536
        ):
            hosts.append((entry[0], entry[1]))
        else:
            found.append(
                f"{where}['HOSTS'] must be a non-empty list of the sentinels as (host, port) pairs "
                f"or 'host:port' strings (got {sentinel['HOSTS']!r})"
            )
            break
    if not hosts and not found:
        found.append(
            f"{where}['HOSTS'] must name at least one sentinel, as (host, port) or 'host:port'"
        )
    if not isinstance(sentinel["SERVICE"], str) or not sentinel["SERVICE"]:
        found.append(
            f"{where}['SERVICE'] must be the master's name the sentinels monitor, e.g. 'mymaster' "
            f"(got {sentinel['SERVICE']!r})"
        )
    db = sentinel["DB"]
    if isinstance(db, bool) or not isinstance(db, int) or db < 0:
        found.append(f"{where}['DB'] must be a database number >= 0 (got {db!r})")
    for key in ("USERNAME", "PASSWORD", "SENTINEL_USERNAME", "SENTINEL_PASSWORD"):
        if sentinel[key] is not None and not isinstance(sentinel[key], str):
            found.append(f"{where}[{key!r}] must be a string or None")
    if not isinstance(sentinel["SSL"], bool):
        found.append(f"{where}['SSL'] must be True or False (got {sentinel['SSL']!r})")
    if not found:
        config["SENTINEL"] = {**sentinel, "HOSTS": hosts}
    return found


def _cluster_problems(config: dict[str, Any]) -> list[str]:
    """CLUSTER: {"NODES": [redis:// or rediss:// URLs]} (normalized to a dict with a list).

    The URLs carry the credentials and TLS (one set for the whole cluster) and
    no database (a Cluster has only db 0)."""
    from urllib.parse import urlsplit

    value = config["CLUSTER"]
    if value is None:
        return []
    where = "REDCOORD['CLUSTER']"
    example = "{'NODES': ['redis://node-1:6379', 'redis://node-2:6379']}"
    if not isinstance(value, dict) or set(value) != {"NODES"}:
        return [
            f"{where} must be a dict with exactly the key 'NODES', like {example} (got {value!r})"
        ]
    nodes = value["NODES"]
    if (
        not isinstance(nodes, (list, tuple))
        or not nodes
        or not all(isinstance(u, str) and u.startswith(("redis://", "rediss://")) for u in nodes)
    ):
        return [
            f"{where}['NODES'] must be a non-empty list of node URLs (redis:// or rediss://), like "
            f"{example} (got {nodes!r})"
        ]
    found, seen = [], set()
    for url in nodes:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            parts, port = None, None
        if parts is None or not parts.hostname:
            found.append(
                f"{where}['NODES'] has {url!r}, which names no host; write 'redis://host:port'"
            )
            continue
        if parts.path not in ("", "/", "/0"):
            found.append(
                f"{where}['NODES'] has {url!r}: a Cluster has only database 0, leave the path empty"
            )
        seen.add((parts.scheme, parts.username, parts.password))
        del port
    if len(seen) > 1:
        found.append(
            f"{where}['NODES'] give different schemes or credentials; one Cluster has one set "
            "(write them the same in every URL)"
        )
    if not found:
        config["CLUSTER"] = {"NODES": list(nodes)}
    return found


def url_problem(url: str, what: str) -> str | None:
    """Why redis-py cannot use ``url`` (None: it can), found without connecting: a port that is
    not a number from 0 to 65535, a malformed host, a database that is not a number, an option
    redis-py's connections do not take."""
    import redis

    try:
        path = urlsplit(url).path if url.startswith(("redis://", "rediss://")) else ""
        if path.strip("/") and not path.strip("/").isdigit():
            raise ValueError(f"the database {path.strip('/')!r} is not a number")
        if url.startswith("unix://") and not urlsplit(url).path.strip("/"):
            raise ValueError("it names no socket path")
        for option, values in parse_qs(urlsplit(url).query).items():
            if option in ("socket_timeout", "socket_connect_timeout"):
                try:
                    seconds = float(values[-1])
                except ValueError:
                    seconds = math.nan
                if not (math.isfinite(seconds) and seconds > 0):
                    raise ValueError(f"{option}={values[-1]} is not a number of seconds above 0")
        pool = redis.ConnectionPool.from_url(url)
        pool.make_connection()  # (builds a connection object with the URL's options; no I/O)
    except (ValueError, TypeError, redis.RedisError) as exc:
        # (redis-py refuses some options with its own errors: ?protocol=9, ?ssl_cert_reqs=...)
        return (
            f"{what} {mask_url(url)!r} is not a URL redis-py can use ({exc}); give "
            "redis://[user:password@]host[:port][/db], rediss://... for TLS, or "
            "unix:///path/to/redis.sock[?db=N], with redis-py's URL options (e.g. "
            "?ssl_ca_certs=/path/to/ca.pem)"
        )
    return None


def _redlock_problems(config: dict[str, Any]) -> list[str]:
    """REDLOCK: a list of distinct redis://, rediss:// or unix:// URLs (normalized to a list)."""
    urls = config["REDLOCK"]
    if not isinstance(urls, (list, tuple)) or not all(
        isinstance(u, str) and u.startswith(URL_SCHEMES) for u in urls
    ):
        return [
            "REDCOORD['REDLOCK'] must be a list of the quorum lock masters' URLs (redis://, "
            "rediss:// or unix://), e.g. ['redis://a:6379/0', 'redis://b:6379/0', "
            f"'redis://c:6379/0'] (got {urls!r})"
        ]
    if len(set(urls)) != len(urls):
        return [
            "REDCOORD['REDLOCK'] names a master twice: each URL must be a different, independent "
            f"master (got {urls!r})"
        ]
    problems = [url_problem(u, f"REDCOORD['REDLOCK'][{i}]") for i, u in enumerate(urls)]
    if any(problems):
        return [p for p in problems if p]
    config["REDLOCK"] = list(urls)
    return []


def _rate_limit_problems(config: dict[str, Any]) -> list[str]:
    """Problems of TRUSTED_PROXIES and RATE_LIMITS (each says what is allowed)."""
    import ipaddress

    from .rates import parse

    found = []
    proxies = config["TRUSTED_PROXIES"]
    if not isinstance(proxies, (list, tuple)):
        found.append(
            "REDCOORD['TRUSTED_PROXIES'] must be a list of IP addresses or networks (got "
            f"{proxies!r})"
        )
    else:
        for proxy in proxies:
            if proxy == "unix":  # the peer of a Unix socket
                continue
            try:
                ipaddress.ip_network(proxy, strict=False)
            except (TypeError, ValueError):
                found.append(
                    f"REDCOORD['TRUSTED_PROXIES']: {proxy!r} is not an IP address or network (e.g. "
                    "'10.0.0.0/8'), or 'unix' (the proxy on a Unix socket)"
                )
    for key, most in (("RATE_LIMIT_IPV4_PREFIX", 32), ("RATE_LIMIT_IPV6_PREFIX", 128)):
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            found.append(
                f"REDCOORD[{key!r}] must be a prefix length from 1 to {most} (got {value!r})"
            )
    rules = config["RATE_LIMITS"]
    if not isinstance(rules, (list, tuple)):
        return [*found, f"REDCOORD['RATE_LIMITS'] must be a list of rules (dicts), not {rules!r}"]
    allowed = {"path", "policy", "key", "methods", "name", "on_unavailable", "native"}
    for i, rule in enumerate(rules):
        where = f"REDCOORD['RATE_LIMITS'][{i}]"
        if not isinstance(rule, dict):
            found.append(f"{where} must be a dict with 'path' and 'policy', not {rule!r}")
            continue
        unknown = sorted(set(rule) - allowed, key=str)
        if unknown:
            found.append(
                f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        if not isinstance(rule.get("path"), str) or not rule.get("path", "").startswith("/"):
            found.append(
                f"{where}['path'] must be a URL path prefix starting with '/', not "
                f"{rule.get('path')!r}"
            )
        try:
            parse(rule.get("policy"))
        except ValueError as exc:
            found.append(f"{where}['policy']: {exc}")
        key = rule.get("key", "ip")
        if not (
            isinstance(key, str)
            and (key in ("ip", "user") or (key.startswith("header:") and key[7:].strip()))
        ):
            found.append(f"{where}['key'] must be 'ip', 'user' or 'header:<Name>', not {key!r}")
        if "name" in rule:
            try:
                validate_name(rule["name"], f"{where}['name']", tag=False)
            except (TypeError, ValueError) as exc:
                found.append(str(exc))
        if rule.get("on_unavailable", "open") not in ("open", "closed"):
            found.append(
                f"{where}['on_unavailable'] must be 'open' or 'closed', not "
                f"{rule.get('on_unavailable')!r}"
            )
        if not isinstance(rule.get("native", True), bool):
            found.append(f"{where}['native'] must be True or False, not {rule.get('native')!r}")
        methods = rule.get("methods")
        if methods is not None and not (
            isinstance(methods, (list, tuple)) and all(isinstance(m, str) for m in methods)
        ):
            found.append(f"{where}['methods'] must be a list of HTTP methods, not {methods!r}")
    return found


def _seconds_problem(key: str, value: Any, low: float, high: float, inclusive: bool) -> str:
    """The problem of a number of seconds, or ''."""
    ok = finite_number(value) and (low <= value if inclusive else low < value) and value <= high
    if ok:
        return ""
    bound = f"from {low:.10g}" if inclusive else f"above {low:.10g}"
    return (
        f"REDCOORD[{key!r}] must be a finite number of seconds {bound} up to {high:.10g} (got "
        f"{value!r})"
    )


def _relations(config: dict[str, Any], valid: set[str]) -> list[str]:
    """Rules between keys, checked only when each key is valid on its own."""
    found = []
    leader = ("LEADER_LEASE", "LEADER_RENEW_DEADLINE", "LEADER_RETRY_PERIOD")
    if valid.issuperset(leader):
        try:
            check_timing(*(config[k] for k in leader))
        except (TypeError, ValueError) as exc:
            found.append(f"REDCOORD LEADER_*: {exc}")
    if {"WORKER_HEARTBEAT", "WORKER_TIMEOUT"} <= valid and not config["WORKER_TIMEOUT"] > config[
        "WORKER_HEARTBEAT"
    ]:
        found.append(
            f"REDCOORD['WORKER_TIMEOUT'] ({config['WORKER_TIMEOUT']:g} s) must be longer than "
            f"REDCOORD['WORKER_HEARTBEAT'] ({config['WORKER_HEARTBEAT']:g} s): a worker that does "
            "not beat more than once per timeout looks dead and its messages are taken back"
        )
    if {"QUEUE_RETRY_DELAY", "QUEUE_RETRY_MAX_DELAY"} <= valid and config[
        "QUEUE_RETRY_DELAY"
    ] > config["QUEUE_RETRY_MAX_DELAY"]:
        found.append(
            f"REDCOORD['QUEUE_RETRY_DELAY'] ({config['QUEUE_RETRY_DELAY']:g} s) must not exceed "
            f"REDCOORD['QUEUE_RETRY_MAX_DELAY'] ({config['QUEUE_RETRY_MAX_DELAY']:g} s), the cap "
            "of the backoff"
        )
    return found


def _metrics_problems(config: dict[str, Any]) -> list[str]:
    """METRICS_TOKEN: None, or a token that fits in an Authorization header."""
    token = config["METRICS_TOKEN"]
    if token is None:
        return []
    if (
        not isinstance(token, str)
        or not token
        or any(c.isspace() or not c.isprintable() or ord(c) > 126 for c in token)
    ):
        got = "an unusable string" if isinstance(token, str) else f"a {type(token).__name__}"
        return [
            "REDCOORD['METRICS_TOKEN'] must be None or a non-empty string of printable ASCII "
            "without spaces (e.g. secrets.token_urlsafe(32)), sent by the scraper as "
            f"'Authorization: Bearer <token>' (got {got})"
        ]
    return []
