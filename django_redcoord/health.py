"""Health checks for container probes: ``manage.py redcoord health`` and :func:`health_view`.

One set of checks, two front ends (the command's exit code, the view's HTTP
status). Each check is one or two round trips over indexes that already
exist — never ``KEYS``, never a scan of the keyspace, never the database:

* ``redis``: PING and TIME in one round trip, on a client with a short
  timeout (``timeout``, 2 s by default) built from the configured one;
* ``worker:<id>``: that worker's heartbeat deadline has not passed;
* ``workers`` / ``workers:<queue>``: at least one live worker on this host,
  or serving ``<queue>`` (on this host too with ``this_host``) — the
  workers index and hashes that ``run_worker`` heartbeats, read as the
  dashboard reads them (:func:`~django_redcoord.dashboard.list_workers`);
* ``leader:<election>``: the election's leader record still has a lease;
* ``queue:<name>``: the oldest ready message, and any delayed
  message already due, has waited less than ``max_age`` seconds (the
  queue's depths as the dashboard reads them, plus its earliest due time);
* ``job:<name>``: the dead-man's switch of a periodic job of the ``default``
  election (:func:`~django_redcoord.core.periodic.overdue.job_health`): its
  due slot was claimed within its allowed lateness (``max_late``, else the
  job's own), and its last run did not fail; a paused job passes.

A check never raises: a failure of any kind is a failing result that says
why, in words an operator reading a probe log understands, with the server's
password masked. When Redis does not answer, the other checks are reported
as not checked.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import redis
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from . import conf
from .core import (
    DEFAULT_ELECTION,
    MAX_LATE_LIMIT,
    Job,
    KeyBuilder,
    Queue,
    RedcoordError,
    answered_by,
    check_seconds,
    commands,
    depths,
    describe,
    execute_pipeline,
    finite_number,
    job_health,
    key_builder,
    read_leader,
    validate_name,
)
from .dashboard import DEAD_WORKER_KEEP_MS, list_workers

#: Seconds a probe waits for Redis to connect, and for each reply.
DEFAULT_TIMEOUT = 2.0
_SHOWN = 5  # workers named in one line


@dataclass(frozen=True)
class Probe:
    """What to check besides Redis itself. Build it with :meth:`build` (which validates).

    ``workers``: worker ids, ``""`` for "any live worker" (on this host when
    no ``queues`` are given, else one serving each queue); ``leaders``:
    election names; ``queues`` with ``max_age`` (seconds): queue ages;
    ``jobs``: periodic job names, with ``max_late`` (seconds) instead of each
    job's own allowed lateness; ``all_jobs``: every registered job.
    """

    workers: tuple[str, ...] = ()
    leaders: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    max_age: float | None = None
    this_host: bool = False
    jobs: tuple[str, ...] = ()
    all_jobs: bool = False
    max_late: float | None = None

    @property
    def checks_jobs(self) -> bool:
        return bool(self.jobs) or self.all_jobs

    @classmethod
    def build(
        cls,
        *,
        workers: Iterable[str] = (),
        leaders: Iterable[str] = (),
        queues: Iterable[str] = (),
        max_age: float | None = None,
        this_host: bool = False,
        jobs: Iterable[str] = (),
        all_jobs: bool = False,
        max_late: float | None = None,
    ) -> Probe:
        """Validate the options; raise ValueError (or TypeError) saying what is allowed."""
        workers = _unique(workers)
        leaders = _unique(name or DEFAULT_ELECTION for name in leaders)
        queues = _unique(queues)
        for name in workers:
            if name:
                validate_name(name, "worker id")
        for name in leaders:
            validate_name(name, "election name")
        for name in queues:
            validate_name(name, "queue name")
        if max_age is not None:
            if not finite_number(max_age):
                raise TypeError(f"max age must be a finite number of seconds, not {max_age!r}")
            if max_age <= 0:
                raise ValueError(f"max age must be > 0 seconds, not {max_age!r}")
            if not queues:
                raise ValueError("a max age needs a queue: add --queue NAME (view: queue=)")
        elif queues and "" not in workers:
            raise ValueError(
                "a queue needs --max-age SECONDS (view: max_age=) to check how long its messages "
                "wait, or --worker without an ID (view: worker=) to check that a live worker "
                "serves it"
            )
        if this_host and "" not in workers:
            raise ValueError(
                "--this-host (view: this_host=1) applies to --worker without an ID (view: worker=)"
            )
        jobs = _unique(jobs)
        for name in jobs:
            validate_name(name, "job name", tag=False)
        if max_late is not None:
            if not jobs:
                raise ValueError(
                    "a max late needs a job: add --job NAME (view: job=); --jobs (view: jobs=1) "
                    "checks each job against its own @periodic(max_late=...)"
                )
            max_late = check_seconds(max_late, "max late (--max-late, view: max_late=)")
            if max_late > MAX_LATE_LIMIT:
                raise ValueError(
                    f"max late must be at most {MAX_LATE_LIMIT:g} seconds (400 days), not "
                    f"{max_late:g}"
                )
        return cls(
            workers,
            leaders,
            queues,
            None if max_age is None else float(max_age),
            this_host,
            jobs,
            bool(all_jobs),
            max_late,
        )


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome: ``name`` (``redis``, ``queue:emails``...), ``ok``, and why."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'OK  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


def run_checks(
    client: Any,
    prefix: str,
    probe: Probe,
    *,
    hostname: str | None = None,
    registry: Mapping[str, Job] | None = None,
) -> list[CheckResult]:
    """Run the Redis check, then the checks ``probe`` asks for; never raises for Redis' sake.

    Args:
        client: a redis-py client (ideally one with short timeouts: :func:`probe_client`).
        prefix: the ``KEY_PREFIX`` the processes checked use.
        hostname: "this host" (default: ``socket.gethostname()``, as workers record it).
        registry: the registered periodic jobs by name, for the job checks
            (default: none; :func:`check` discovers them).
    """
    keys = key_builder(prefix, client)
    host = hostname or socket.gethostname()
    specs = _worker_specs(probe)
    job_names = _job_names(probe, registry or {})
    names = _check_names(probe, registry)
    try:
        started = time.perf_counter()
        _, now = commands(client, (("PING",), ("TIME",)), operation="health check (PING)")
        elapsed_ms = (time.perf_counter() - started) * 1000
    except Exception as exc:  # any failure is the answer; the probe must not crash
        why = _why(client, exc)
        return [CheckResult("redis", False, why)] + [
            CheckResult(name, False, "not checked: Redis did not answer") for name in names
        ]
    now_ms = int(now[0]) * 1000 + int(now[1]) // 1000
    results = [
        CheckResult("redis", True, f"{describe(client)} answered PING in {elapsed_ms:.1f} ms")
    ]
    if specs:
        results += _guarded(
            client,
            [_worker_check_name(w, q) for w, q in specs],
            lambda: check_workers(
                client, keys, specs, now_ms=now_ms, hostname=host, this_host=probe.this_host
            ),
        )
    for election in probe.leaders:
        results += _guarded(
            client, [f"leader:{election}"], lambda e=election: [check_leader(client, keys, e)]
        )
    if probe.max_age is not None:
        max_age = probe.max_age
        results += _guarded(
            client,
            [f"queue:{q}" for q in probe.queues],
            lambda: check_queues(client, prefix, probe.queues, max_age, now_ms=now_ms),
        )
    if probe.checks_jobs:
        results += _guarded(
            client,
            [f"job:{j}" for j in job_names] or ["jobs"],
            lambda: check_jobs(client, keys, probe, registry or {}, now_ms=now_ms),
        )
    return results


def check_jobs(
    client: Any, keys: KeyBuilder, probe: Probe, registry: Mapping[str, Job], *, now_ms: int
) -> list[CheckResult]:
    """One result per periodic job of the ``default`` election: the dead-man's switch (one round
    trip).

    A job named by the probe that this process has not registered is judged
    from its state in Redis alone (the next due time its leader recorded, the
    default allowed lateness).
    """
    names = _job_names(probe, registry)
    if not names:
        return [
            CheckResult(
                "jobs",
                False,
                "no periodic job is registered in this process: autodiscover found "
                "none (<app>.jobs modules, REDCOORD['JOBS'])",
            )
        ]
    election = SimpleNamespace(client=client, keys=keys.leader(DEFAULT_ELECTION))
    jobs = {name: registry.get(name) for name in names}
    overrides = dict.fromkeys(probe.jobs, probe.max_late) if probe.max_late is not None else {}
    results = []
    for found in job_health(election, jobs, now_ms=now_ms, max_late=overrides):  # type: ignore[arg-type]
        detail = f"{found.status}: {found.reason}"
        if found.name not in registry:
            known = ", ".join(sorted(registry)) or "none"
            detail = f"not registered in this process (registered: {known}); {detail}"
        results.append(CheckResult(f"job:{found.name}", found.ok, detail))
    return results


def check_workers(
    client: Any,
    keys: KeyBuilder,
    specs: Sequence[tuple[str, str]],
    *,
    now_ms: int,
    hostname: str,
    this_host: bool = False,
) -> list[CheckResult]:
    """One result per ``(worker id, queue)`` spec (``""``: any), from one read of the workers index.

    A worker is alive while its heartbeat deadline (last beat + its
    ``WORKER_TIMEOUT``) has not passed: the rule the reapers use.
    """
    workers = list_workers(client, keys, now_ms=now_ms)  # two round trips
    results = []
    for worker_id, queue in specs:
        name = _worker_check_name(worker_id, queue)
        if worker_id:
            found = next((w for w in workers if w["id"] == worker_id), None)
            if found is None:
                results.append(
                    CheckResult(
                        name,
                        False,
                        f"no heartbeat in the last {DEAD_WORKER_KEEP_MS // 60000} "
                        "minutes: not running, stopped, or using another KEY_PREFIX",
                    )
                )
            elif found["dead"]:
                results.append(
                    CheckResult(
                        name,
                        False,
                        f"last heartbeat {_age(found)} ago, past its timeout: the "
                        "worker is dead or stuck (its messages are being requeued)",
                    )
                )
            else:
                results.append(
                    CheckResult(
                        name,
                        True,
                        f"alive on {found['host']} (pid {found['pid']}), heartbeat "
                        f"{_age(found)} ago, serving {', '.join(found['queues']) or '-'}",
                    )
                )
            continue
        on_host = this_host or not queue
        where = " and ".join(
            filter(
                None,
                [f"on host {hostname}" if on_host else "", f"serving {queue}" if queue else ""],
            )
        )
        matching = [
            w
            for w in workers
            if (not on_host or w["host"] == hostname) and (not queue or queue in w["queues"])
        ]
        alive = [w for w in matching if not w["dead"]]
        dead = [w for w in matching if w["dead"]]
        if alive:
            shown = ", ".join(f"{w['id']} (heartbeat {_age(w)} ago)" for w in alive[:_SHOWN])
            more = f" and {len(alive) - _SHOWN} more" if len(alive) > _SHOWN else ""
            results.append(
                CheckResult(name, True, f"{len(alive)} live worker(s) {where}: {shown}{more}")
            )
        else:
            why = f"no live worker {where}"
            if dead:
                shown = ", ".join(
                    f"{w['id']} (last heartbeat {_age(w)} ago)" for w in dead[:_SHOWN]
                )
                why += f"; dead or stuck: {shown}"
            results.append(CheckResult(name, False, why))
    return results


def check_leader(client: Any, keys: KeyBuilder, election: str) -> CheckResult:
    """The election has a leader whose lease has not expired (one round trip)."""
    lead = read_leader(keys.leader(election), client)
    name = f"leader:{election}"
    if lead is None:
        return CheckResult(
            name,
            False,
            "no leader holds the lease: no run_leader process is running, "
            "or none can reach this Redis",
        )
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(lead.since))
    return CheckResult(
        name,
        True,
        f"{lead.identity} leads (term {lead.term}, since {since}, "
        f"lease {lead.expires_in:.1f} s left)",
    )


def check_queues(
    client: Any, prefix: str, names: Sequence[str], max_age: float, *, now_ms: int
) -> list[CheckResult]:
    """Each queue's oldest waiting message is younger than ``max_age`` seconds (two round trips).

    Waiting: the next ready message to be delivered (by priority, then
    arrival), and the earliest delayed message if it is already due (due
    messages become ready at the next claim, so with no worker claiming they
    wait in the delayed set).
    """
    queues = [Queue(name, client=client, prefix=prefix) for name in names]
    counts = depths(queues, client=client)
    heads = execute_pipeline(
        client,
        lambda pipe: [pipe.zrange(q.keys.delayed, 0, 0, withscores=True) for q in queues],
        operation="health check (queue ages)",
    )
    results = []
    for queue, head in zip(queues, heads, strict=True):
        d = counts[queue.name]
        ages = [d.oldest_age] if d.oldest_age is not None else []
        if head and head[0][1] <= now_ms:
            ages.append((now_ms - head[0][1]) / 1000.0)
        state = (
            f"{d.ready} ready, {d.delayed} delayed, {d.processing} processing, {d.consumers} "
            "consumer(s)"
        )
        name = f"queue:{queue.name}"
        if not ages:
            results.append(CheckResult(name, True, f"no message waiting; {state}"))
            continue
        age = max(ages)
        if age < max_age:
            results.append(
                CheckResult(
                    name,
                    True,
                    f"oldest waiting message {age:.1f} s old (max {max_age:g} s); {state}",
                )
            )
        else:
            hint = (
                " — nothing consumes it"
                if d.consumers == 0
                else " — the workers are not keeping up"
            )
            results.append(
                CheckResult(
                    name,
                    False,
                    f"oldest waiting message {age:.1f} s old, over the max of "
                    f"{max_age:g} s{hint}; {state}",
                )
            )
    return results


# -- the Django side: a client with short timeouts, the view --------------------------------

_probe_lock = threading.Lock()
_probe: tuple[Any, float, Any] | None = None  # (config it was built from, timeout, client)


def probe_client(timeout: float = DEFAULT_TIMEOUT) -> Any:
    """The configured Redis, with ``timeout`` seconds to connect and per reply (no retries).

    Built from the REDCOORD settings like the process's client (URL or
    django-redis ``CACHE``, credentials, TLS), once per process and timeout;
    rebuilt when the settings change. Raises ConfigurationError when no
    Redis is configured.
    """
    global _probe
    config = conf.get_config()
    with _probe_lock:
        cached = _probe
        if cached is not None and cached[0] is config and cached[1] == timeout:
            return cached[2]
        client = conf.build_client(
            {**config, "SOCKET_TIMEOUT": timeout, "CONNECT_TIMEOUT": timeout}
        )
        _probe = (config, timeout, client)
    if cached is not None:
        cached[2].connection_pool.disconnect()
    return client


def check(probe: Probe, *, timeout: float = DEFAULT_TIMEOUT) -> list[CheckResult]:
    """Run ``probe`` against the configured Redis and ``KEY_PREFIX``.

    Job checks discover the project's periodic jobs first (``<app>.jobs``
    and ``REDCOORD["JOBS"]``, as ``run_leader`` does); a jobs module that
    fails to import fails the check, saying why.
    """
    try:
        client = probe_client(timeout)
    except RedcoordError as exc:  # nothing configured: unhealthy, and why
        return [CheckResult("redis", False, str(exc))]
    registry: Mapping[str, Job] = {}
    broken = None
    if probe.checks_jobs:
        from .discovery import autodiscover

        try:
            registry = autodiscover()
        except Exception as exc:  # a probe reports, it never crashes; the other checks still run
            # (a JOBS module that cannot be imported says so itself: no class name before it)
            why = str(exc) if isinstance(exc, RedcoordError) else f"{type(exc).__name__}: {exc}"
            broken = CheckResult("jobs", False, f"the periodic jobs could not be discovered: {why}")
    results = _within(
        timeout,
        client,
        lambda: run_checks(client, conf.get_config()["KEY_PREFIX"], probe, registry=registry),
        lambda: _check_names(probe, registry),
    )
    if (
        broken is not None
    ):  # (the --job NAMEs are judged from their state alone; --jobs has none to judge)
        results = [r for r in results if r.name != "jobs"] + [broken]
    return results


def _within(
    timeout: float,
    client: Any,
    checks: Callable[[], list[CheckResult]],
    names: Callable[[], list[str]],
) -> list[CheckResult]:
    """``checks()`` answered within ``timeout`` (and a quarter second), else the Redis check failed
    for that reason.

    Its round trips are bounded by the timeout (:func:`answered_by`), the wait for a pooled
    connection included, but a connection made on the way (its handshake) is not: probes beyond
    what the pool admits at once took up to twice the timeout. So the checks run in a thread of
    their own, and an answer that has not come by then is a failure (the thread ends within about
    a socket timeout more, on its own)."""
    done: list[Any] = []

    def run() -> None:
        try:
            with answered_by(time.monotonic() + timeout):
                done.append(checks())
        except BaseException as exc:  # noqa: BLE001 - handed to the probe's thread
            done.append(exc)

    thread = threading.Thread(target=run, name="redcoord-health-check", daemon=True)
    thread.start()
    thread.join(timeout + 0.25)
    if not done:
        return [
            CheckResult(
                "redis",
                False,
                f"Redis at {describe(client)} did not answer the health check within {timeout:g} s",
            )
        ] + [CheckResult(name, False, "not checked: Redis did not answer") for name in names()]
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


@csrf_exempt  # (a POST gets require_safe's 405, not CsrfViewMiddleware's 403)
@never_cache
@require_safe
def health_view(request: HttpRequest) -> JsonResponse:
    """200 ``{"status": "ok", "checks": {...}}`` when healthy, else 503 with ``"status": "fail"``.

    Query: ``worker`` (an id, or empty for "any": on the web server's host,
    or serving the ``queue`` given), ``leader`` (an election, empty for
    ``default``), ``queue`` and ``max_age`` (seconds), ``this_host``,
    ``job`` (a periodic job) and ``max_late`` (seconds), ``jobs=1`` (every
    registered job, each with its own allowed lateness). Each
    may repeat (``?queue=a&queue=b``). Unauthenticated: it names queues,
    workers, hosts and the Redis address (never its password), so route it
    on an internal port or path only. A bad query is a 400.
    """
    params = request.GET
    unknown = sorted(set(params) - set(QUERY_PARAMETERS))
    if unknown:  # a misspelt probe (?workers) must not answer 200 having checked only Redis
        return JsonResponse(
            {
                "status": "error",
                "error": f"unknown query parameter(s) {', '.join(map(repr, unknown))}; the "
                f"parameters are {', '.join(QUERY_PARAMETERS)}",
            },
            status=400,
        )
    try:
        max_age, max_late = params.get("max_age"), params.get("max_late")
        probe = Probe.build(
            workers=params.getlist("worker"),
            leaders=params.getlist("leader"),
            queues=params.getlist("queue"),
            max_age=None if max_age in (None, "") else _seconds(max_age, "max_age"),
            this_host=_flag(params.get("this_host", "0"), "this_host"),
            jobs=params.getlist("job"),
            all_jobs=_flag(params.get("jobs", "0"), "jobs"),
            max_late=None if max_late in (None, "") else _seconds(max_late, "max_late"),
        )
    except (TypeError, ValueError) as exc:
        return JsonResponse({"status": "error", "error": str(exc)}, status=400)
    results = check(probe)
    healthy = all(r.ok for r in results)
    return JsonResponse(
        {
            "status": "ok" if healthy else "fail",
            "checks": {r.name: {"ok": r.ok, "detail": r.detail} for r in results},
        },
        status=200 if healthy else 503,
    )


# -- helpers ----------------------------------------------------------------------------------


#: The query parameters of :func:`health_view`.
QUERY_PARAMETERS = ("worker", "leader", "queue", "max_age", "this_host", "job", "jobs", "max_late")


def _flag(value: str, what: str) -> bool:
    """A yes/no query parameter; anything else is a ValueError saying what is allowed."""
    text = value.strip().lower()
    if text in ("1", "true", "yes", "on", ""):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{what} must be 1 or 0 (true/false, yes/no, on/off), not {value!r}")


def _seconds(value: str, what: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{what} must be a number of seconds, not {value!r}") from None


def _job_names(probe: Probe, registry: Mapping[str, Job]) -> list[str]:
    """The jobs a probe checks: those it names, and every registered one with ``all_jobs``."""
    return sorted(set(probe.jobs) | (set(registry) if probe.all_jobs else set()))


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def _worker_specs(probe: Probe) -> list[tuple[str, str]]:
    """(worker id, queue) per worker check: an id alone, or "any" on this host / per queue."""
    specs = []
    for worker_id in probe.workers:
        if worker_id:
            specs.append((worker_id, ""))
        elif probe.queues:
            specs += [("", q) for q in probe.queues]
        else:
            specs.append(("", ""))
    return specs


def _worker_check_name(worker_id: str, queue: str) -> str:
    if worker_id:
        return f"worker:{worker_id}"
    return f"workers:{queue}" if queue else "workers"


def _age(worker: dict[str, Any]) -> str:
    age = worker["heartbeat_age"]
    return "?" if age is None else f"{age:.1f} s"


def _check_names(probe: Probe, registry: Mapping[str, Job] | None) -> list[str]:
    """The names of the checks ``probe`` asks for besides the Redis check, in their order."""
    names = [_worker_check_name(w, q) for w, q in _worker_specs(probe)]
    names += [f"leader:{e}" for e in probe.leaders]
    names += [f"queue:{q}" for q in probe.queues] if probe.max_age is not None else []
    job_names = _job_names(probe, registry or {})
    return names + ([f"job:{j}" for j in job_names] or (["jobs"] if probe.all_jobs else []))


def _why(client: Any, exc: BaseException) -> str:
    if isinstance(exc, RedcoordError):
        return str(exc)  # names the server (password masked) and what failed
    if isinstance(exc, redis.RedisError):
        return f"Redis at {describe(client)} refused: {type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _guarded(client: Any, names: list[str], run: Any) -> list[CheckResult]:
    """Run one or more checks; a failure of any kind fails each of them, saying why."""
    try:
        return run()
    except Exception as exc:  # a probe reports, it never crashes
        why = _why(client, exc)
        return [CheckResult(name, False, why) for name in names]
