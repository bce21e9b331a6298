"""Prometheus metrics of the coordination state kept in Redis (an optional extra).

``pip install django-redcoord[metrics]`` (it brings ``prometheus_client``),
then expose :func:`metrics_view` at a URL, or call :func:`start_metrics_server`.
At each scrape :class:`RedcoordCollector` reads Redis through the admin
dashboard's readers (:mod:`django_redcoord.dashboard`): indexes the scripts
maintain, pipelined, never ``KEYS`` nor a scan of the keyspace. The values
are Redis's, so one scrape sees every worker, lock and leader of every
machine: scrape **one** target (several targets would report the same
queues several times).

Redis down is not an error here: the scrape answers ``redcoord_up 0`` (and
the scrape duration) and nothing else, with HTTP 200.

Metrics (gauges unless said otherwise; durations and ages in seconds,
timestamps in seconds since the Unix epoch by Redis's clock):

General:

- ``redcoord_up``: 1 if Redis answered this scrape, else 0.
- ``redcoord_scrape_duration_seconds``: time this scrape spent reading Redis.

Queues, label ``queue`` (OpenTelemetry's ``messaging.destination.name``):

- ``redcoord_queue_messages``: ready messages, waiting for a worker.
- ``redcoord_queue_delayed_messages``: messages not yet due (``run_after``,
  ``delay``, a retry's backoff).
- ``redcoord_queue_in_flight_messages``: messages claimed by workers and not
  yet acknowledged (prefetched ones included).
- ``redcoord_queue_dead_letters``: messages in the dead-letter list.
- ``redcoord_queue_consumers``: consumer threads registered on the queue (a
  dead worker's until a reaper requeues its messages).
- ``redcoord_queue_paused``: 1 while the queue is paused (``Queue.pause()``,
  the admin, ``redcoord queue pause``): its workers claim nothing new; else 0.
- ``redcoord_queue_oldest_message_age_seconds``: age of the oldest ready
  message, since it was pushed; 0 when none is ready. It is the older of the
  first and the last message in delivery order (priority, then arrival or,
  LIFO, departure): exact for a queue with one priority, FIFO or LIFO; with
  several priorities an older message of a middle one may be missed.

Workers:

- ``redcoord_workers{queue}``: worker processes serving the queue whose
  heartbeat is current; 0 for a queue that exists but nobody serves.
- ``redcoord_worker_up{worker, host}``: 1 heartbeat current, 0 lapsed (a
  lapsed worker is listed for ten minutes, while its messages are requeued).
- ``redcoord_worker_last_heartbeat_age_seconds{worker}``: time since its last
  heartbeat.
- ``redcoord_worker_threads{worker}``: its ``--concurrency``.
- ``redcoord_worker_busy_threads{worker}``: threads running a job at its last
  heartbeat.
- ``redcoord_worker_processed_messages_total{worker, outcome}`` (counter):
  messages the worker process finished since it started, as of its last
  heartbeat; ``outcome`` is ``ok``, ``failed`` (to be retried), ``dead``
  (dead-lettered) or ``cancelled`` (acknowledged after a cancel reached it).

Leaders, label ``election``:

- ``redcoord_leader_present``: 1 if the election has a leader, else 0.
- ``redcoord_leader_term``: the leader's term (only while one leads).
- ``redcoord_leader_info{election, holder}``: 1, naming the leader's identity.
- ``redcoord_leader_term_start_timestamp_seconds``: when the term began.
- ``redcoord_leader_lease_remaining_seconds``: time left on its lease.

Periodic jobs, labels ``election``, ``job``:

- ``redcoord_periodic_job_last_start_timestamp_seconds``: start of its last run.
- ``redcoord_periodic_job_last_end_timestamp_seconds``: end of its last
  recorded run.
- ``redcoord_periodic_job_last_duration_seconds``: that run's duration.
- ``redcoord_periodic_job_last_outcome{election, job, outcome}``: 1 for that
  run's outcome, 0 for the other two of ``ok``, ``error``, ``timeout``.
- ``redcoord_periodic_job_running``: 1 while a run is going on.
- ``redcoord_periodic_job_next_due_timestamp_seconds``: when its next slot is due.
- ``redcoord_periodic_job_overdue_seconds``: how long its due slot has gone
  unclaimed (0 when on time); ``redcoord_periodic_job_max_late_seconds``: how
  long it may (its ``max_late``, see ``core/periodic/overdue.py``).
- ``redcoord_periodic_job_healthy``: 1, or 0 while the job is overdue, its
  last run failed, or no leader schedules it (a paused job is healthy).
  While the ``default`` election has a leader, these three also show each
  job registered in this process (discovered as ``run_leader`` does) that no
  leader has claimed a slot of yet: a job the leaders' code lacks never gets
  a state in Redis, and must still set off the alert once the leader has been
  in office longer than the job's ``max_late`` (``overdue_seconds`` is then
  that time).
- ``redcoord_periodic_job_runs_total`` (counter): runs claimed.
- ``redcoord_periodic_job_failures_total`` (counter): runs that ended in
  ``error`` or ``timeout``.
- ``redcoord_periodic_job_missed_slots_total`` (counter): slots skipped or
  folded into a later run.

Locks and semaphores:

- ``redcoord_locks_held``: live locks, all names together.
- ``redcoord_lock_waiters``: waiters queued on them, in all.
- ``redcoord_lock_waiters_exact``: 1 when this scrape read every live lock.
- ``redcoord_rwlocks_held``: read-write locks with at least one holder.
- ``redcoord_semaphore_permits{semaphore}``: the semaphore's limit.
- ``redcoord_semaphore_permits_held{semaphore}``: permits held.
- ``redcoord_semaphore_waiters{semaphore}``: waiters queued.

A periodic job shows once a leader of the election has claimed a slot of it
(run or skipped); its timestamps show once Redis has them, its counts start
at 0. A semaphore shows while it has a live holder. The counters live in Redis and start again
from zero when Redis loses its data or a worker restarts: ``rate()`` and
``increase()`` handle that. Lock names are not labels (one per invoice would
be too many series); the dashboard lists them.

Cost of a scrape: about a dozen pipelined round trips, one script call per
semaphore, read-write lock and queue, one ``HGETALL`` per listed worker and
job, and at most ``REDCOORD["METRICS_LOCK_DETAIL"]`` (1,000) lock records:
up to that many live locks both lock gauges are exact; above it the held
count comes from the lock index and each scrape reads the next locks in
turn (``redcoord_lock_waiters_exact`` is 0). Scrapes that arrive during a
read share it. ``REDCOORD["METRICS_TOKEN"]`` makes :func:`metrics_view` ask
for ``Authorization: Bearer <token>``.

Besides what Redis holds, the same endpoints serve what only this process
sees (:class:`ProcessMetrics`, fed by the core's events, see
:mod:`django_redcoord.core.observe`): counters and histograms that count from
the moment the first ``metrics_view``/``start_metrics_server`` call (or
:func:`process_metrics`) installs them, and that each process keeps for
itself (scrape every process that does the work: each ``run_worker`` with
``--metrics-port``, each web process). Their labels never hold a lock name
nor a rate-limit key:

- ``redcoord_hold_acquisitions_total{kind, outcome}``: acquires of locks,
  semaphores, read and write locks, latch parties (``kind`` ``lock``,
  ``semaphore``, ``read``, ``write``, ``latch``); ``outcome`` ``acquired``,
  ``timeout`` or ``unavailable`` (Redis could not be reached).
- ``redcoord_hold_wait_seconds{kind, outcome}`` (histogram): how long they took.
- ``redcoord_hold_duration_seconds{kind}`` (histogram): from grant to release.
- ``redcoord_holds_lost_total{kind}``: holds found lost (a renewal or an
  extend found them gone, or a release found them passed on).
- ``redcoord_view_busy_responses_total{kind, status}``: answers of decorated
  views that found the resource busy (409, 429) or were rate limited
  (``kind="ratelimit"``).
- ``redcoord_messages_processed_total{queue, task, outcome}``: deliveries a
  worker finished: ``ok``, ``failed`` (to be retried), ``dead``
  (dead-lettered), ``timeout`` (abandoned at its job timeout), ``cancelled``
  (a cancel reached it; acknowledged, never retried); ``task`` is
  the task's path (empty for plain queue messages).
- ``redcoord_message_process_duration_seconds{queue, task, outcome}`` (histogram).
- ``redcoord_message_retries_total{queue, task}``: failed deliveries to be retried.
- ``redcoord_message_dead_letters_total{queue, task}``: deliveries dead-lettered.
- ``redcoord_leader_elected_total{election}``, ``redcoord_leader_demoted_total{election}``:
  this process becoming leader and stepping down.
- ``redcoord_periodic_runs_total{election, job, outcome}``: runs this process
  ran (``ok``, ``error``, ``timeout``).
- ``redcoord_periodic_run_duration_seconds{election, job, outcome}`` (histogram).
- ``redcoord_periodic_missed_slots_total{election, job}``: slots this leader
  skipped or folded into a later run.
- ``redcoord_ratelimit_decisions_total{limiter, outcome}``: ``allowed`` or
  ``refused`` decisions of ``hit()`` (and of ``@rate_limit``).
"""

from __future__ import annotations

import bisect
import copy
import functools
import hmac
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from ..core import (
    DEFAULT_ELECTION,
    CoordinationUnavailable,
    KeyBuilder,
    add_observer,
    key_builder,
    read_holders,
    read_index,
    reading_all,
    unavailable_as_ours,
    validate_name,
)
from ..dashboard import leaders, list_queues, list_rwlocks, list_semaphores, list_workers

log = logging.getLogger("django_redcoord.metrics")

# (metric, field of list_queues' rows, help); None becomes 0 (no message ready: no age)
QUEUE_GAUGES = (
    ("redcoord_queue_messages", "ready", "Ready messages waiting for a worker"),
    (
        "redcoord_queue_delayed_messages",
        "delayed",
        "Messages not yet due (run_after, delay, retry backoff)",
    ),
    (
        "redcoord_queue_in_flight_messages",
        "processing",
        "Messages claimed by workers and not yet acknowledged",
    ),
    ("redcoord_queue_dead_letters", "dead", "Messages in the queue's dead-letter list"),
    ("redcoord_queue_consumers", "consumers", "Consumer threads registered on the queue"),
    (
        "redcoord_queue_oldest_message_age_seconds",
        "oldest_age",
        "Age of the oldest ready message since it was pushed; 0 when none is ready",
    ),
)
# (metric, field of a job's state in ms since the epoch or ms, help); absent fields are left out
JOB_TIMES = (
    (
        "redcoord_periodic_job_last_start_timestamp_seconds",
        "last_start",
        "Start of the job's last run",
    ),
    (
        "redcoord_periodic_job_last_end_timestamp_seconds",
        "last_end",
        "End of the job's last recorded run",
    ),
    (
        "redcoord_periodic_job_last_duration_seconds",
        "duration",
        "Duration of the job's last recorded run",
    ),
    (
        "redcoord_periodic_job_next_due_timestamp_seconds",
        "next_due",
        "When the job's next slot is due",
    ),
)
# (metric without _total, field of a job's state, help); absent counts are 0
JOB_COUNTS = (
    ("redcoord_periodic_job_runs", "runs", "Runs of the job claimed"),
    (
        "redcoord_periodic_job_failures",
        "failures",
        "Runs of the job that ended in error or timeout",
    ),
    (
        "redcoord_periodic_job_missed_slots",
        "missed",
        "Slots of the job skipped or folded into a later run",
    ),
)
JOB_OUTCOMES = ("ok", "error", "timeout")
# (label, field of list_workers' rows)
WORKER_OUTCOMES = (
    ("ok", "ok"),
    ("failed", "failed"),
    ("dead", "dead_lettered"),
    ("cancelled", "cancelled"),
)


def require_prometheus() -> Any:
    """The ``prometheus_client`` module; raises ImportError saying how to install it."""
    try:
        import prometheus_client
    except ImportError as exc:
        raise ImportError(
            "django_redcoord.metrics needs prometheus_client: pip install "
            "'django-redcoord[metrics]'"
        ) from exc
    return prometheus_client


class RedcoordCollector:
    """A ``prometheus_client`` collector that reads the coordination state from Redis at each
    scrape.

    Args:
        client: a redis-py client; default: the configured one (``REDCOORD``),
            looked up at each scrape so ``override_settings`` applies.
        prefix: the key prefix; default: ``REDCOORD["KEY_PREFIX"]``.
        elections: the elections whose leader and periodic jobs to report
            (there is no index of elections; ``run_leader`` uses ``"default"``).

    Register it in a ``CollectorRegistry`` (or ``prometheus_client.REGISTRY``).
    ``describe()`` is empty, so registering it reads nothing from Redis.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        prefix: str | None = None,
        elections: Iterable[str] = (DEFAULT_ELECTION,),
        lock_detail: int | None = None,
    ) -> None:
        self._client = client
        self._prefix = prefix
        self.elections = tuple(validate_name(e, "election name") for e in elections)
        if lock_detail is not None and (
            isinstance(lock_detail, bool) or not isinstance(lock_detail, int) or lock_detail < 0
        ):
            raise ValueError(
                "lock_detail must be a whole number >= 0, or None for METRICS_LOCK_DETAIL, not "
                f"{lock_detail!r}"
            )
        #: The most lock records one scrape reads (None: ``REDCOORD["METRICS_LOCK_DETAIL"]``).
        self.lock_detail = lock_detail
        self._waiters = _WaiterCounts()
        self._reading = threading.Lock()
        # when the last read ended, and its snapshot or failure
        self._last: tuple[float, dict[str, Any] | CoordinationUnavailable] | None = None

    def describe(self) -> list[Any]:
        return []

    def read(self) -> dict[str, Any]:
        """One snapshot of what the metrics show (JSON-ready); raises CoordinationUnavailable.

        Scrapes that arrive while another is reading wait for it and share its
        snapshot, or its failure: however many scrape at once, one process reads
        Redis once at a time, and during an outage each scrape waits for at most
        the read under way and its own (not one socket timeout per scrape ahead).
        """
        asked = time.monotonic()
        with self._reading:
            last = self._last
            if (
                last is not None and last[0] >= asked
            ):  # read while we waited: as fresh as ours would be
                if isinstance(last[1], CoordinationUnavailable):
                    raise copy.copy(last[1])  # (each scrape raises its own)
                return last[1]
            try:
                snapshot = self._read()
            except CoordinationUnavailable as exc:
                self._last = (time.monotonic(), exc)
                raise
            self._last = (time.monotonic(), snapshot)
            return snapshot

    def _read(self) -> dict[str, Any]:
        client, prefix, detail = self._client, self._prefix, self.lock_detail
        if client is None:
            from ..core import get_client

            client = get_client()
        if prefix is None or detail is None:
            from .. import conf

            config = conf.get_config()
            prefix = config["KEY_PREFIX"] if prefix is None else prefix
            detail = config["METRICS_LOCK_DETAIL"] if detail is None else detail
        keys = key_builder(prefix, client)
        with unavailable_as_ours(client, "read coordination metrics"), reading_all(client, keys):
            seconds, micros = client.time()
            now_ms = int(seconds) * 1000 + int(micros) // 1000
            return {
                "locks": _live_locks(
                    client, keys, now_ms=now_ms, detail=detail, counts=self._waiters
                ),
                "rwlocks": list_rwlocks(client, keys, now_ms=now_ms),
                "semaphores": list_semaphores(client, keys, now_ms=now_ms),
                "queues": list_queues(client, keys),
                "workers": list_workers(client, keys, now_ms=now_ms),
                # (while a leader leads, its rows include the jobs registered here that it never
                # claimed: a job the leaders' code lacks has its series, so its alert can fire)
                "leaders": leaders(client, keys, self.elections, now_ms=now_ms),
            }

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        started = time.perf_counter()
        try:
            snapshot: dict[str, Any] | None = self.read()
        except CoordinationUnavailable as exc:
            log.warning("metrics: %s", exc)
            snapshot = None
        # Built in full before anything is yielded: a scrape shows everything
        # read this time, or only redcoord_up 0 (never half of it).
        families = [] if snapshot is None else list(_families(snapshot))
        yield GaugeMetricFamily(
            "redcoord_up",
            "1 if Redis answered this scrape, else 0",
            value=float(snapshot is not None),
        )
        yield from families
        yield GaugeMetricFamily(
            "redcoord_scrape_duration_seconds",
            "Time this scrape spent reading Redis",
            value=time.perf_counter() - started,
        )


class _WaiterCounts:
    """Waiters per lock name as last read, for a collector whose live locks outnumber its detail."""

    __slots__ = ("queued", "after", "of")

    def __init__(self) -> None:
        self.queued: dict[str, int] = {}
        self.after = ""  # the last name read: the next scrape goes on from there
        self.of: tuple[int, str] | None = None  # (client, prefix) they were read from


def _live_locks(
    client: Any, keys: KeyBuilder, *, now_ms: int, detail: int, counts: _WaiterCounts
) -> dict[str, int]:
    """Live locks and their waiters, reading at most ``detail`` lock records.

    The index (one pipelined round trip, no lock record) gives the live
    names. Up to ``detail`` of them, every lock is read (one more round trip):
    a lock that expired under a crashed holder or was released meanwhile is
    not counted, and the waiters are exact. Above it, the count is the
    index's (an entry outlives a crashed holder's lock by up to its TTL), and
    each scrape reads the next ``detail`` locks in name order, in turn: the
    waiters are summed over every live lock as last read (a full turn takes
    live / detail scrapes). Reading every lock of 20,000 took 0.7 s and 0.3 s
    of Redis time per scrape (``bench/bench_metrics.py``).
    """
    if counts.of != (
        id(client),
        keys.prefix,
    ):  # another Redis or prefix (settings changed): start again
        counts.queued.clear()
        counts.after, counts.of = "", (id(client), keys.prefix)
    live = sorted(
        name
        for name, bound in read_index(client, keys, "locks").items()
        if _int(bound) * 1000 >= now_ms
    )
    if len(live) <= detail:
        holders = [h for h in read_holders(client, live, prefix=keys.prefix) if h is not None]
        counts.queued.clear()
        return {"held": len(holders), "waiters": sum(h["queued"] for h in holders), "complete": 1}
    if detail:
        start = bisect.bisect_right(live, counts.after)
        window = (live[start:] + live[:start])[:detail]
        for name, holder in zip(
            window, read_holders(client, window, prefix=keys.prefix), strict=True
        ):
            counts.queued[name] = 0 if holder is None else holder["queued"]
        counts.after = window[-1]
        alive = set(live)
        for name in [n for n in counts.queued if n not in alive]:
            del counts.queued[name]
    return {"held": len(live), "waiters": sum(counts.queued.values()), "complete": 0}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


Rows = Iterable[tuple[tuple[str, ...], float]]


def _gauge(name: str, doc: str, labels: tuple[str, ...], rows: Rows) -> Any:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric(values, value)
    return family


def _counter(name: str, doc: str, labels: tuple[str, ...], rows: Rows) -> Any:
    from prometheus_client.core import CounterMetricFamily

    family = CounterMetricFamily(name, doc, labels=labels)  # exposed as <name>_total
    for values, value in rows:
        family.add_metric(values, value)
    return family


def _families(snap: dict[str, Any]) -> Iterator[Any]:
    """The metric families of one snapshot (see :meth:`RedcoordCollector.read`)."""
    yield from _queue_families(snap["queues"], snap["workers"])
    yield from _leader_families(snap["leaders"])
    yield from _lock_families(snap)


def _queue_families(queues: list[dict[str, Any]], workers: list[dict[str, Any]]) -> Iterator[Any]:
    for name, field, doc in QUEUE_GAUGES:
        yield _gauge(name, doc, ("queue",), (((q["name"],), q[field] or 0) for q in queues))
    yield _gauge(
        "redcoord_queue_paused",
        "1 while the queue is paused (its workers claim nothing new), else 0",
        ("queue",),
        (((q["name"],), 1 if q.get("paused") else 0) for q in queues),
    )

    # every known queue, served or not (the alert "nobody serves this queue" needs the 0)
    serving = {q["name"]: 0 for q in queues}
    for w in workers:
        for name in w["queues"]:
            serving[name] = serving.get(name, 0) + (0 if w["dead"] else 1)
    yield _gauge(
        "redcoord_workers",
        "Worker processes serving the queue whose heartbeat is current",
        ("queue",),
        (((name,), n) for name, n in sorted(serving.items())),
    )

    w_ = ("worker",)
    yield _gauge(
        "redcoord_worker_up",
        "1 if the worker's heartbeat is current, 0 if it lapsed",
        ("worker", "host"),
        (((w["id"], w["host"]), 0 if w["dead"] else 1) for w in workers),
    )
    yield _gauge(
        "redcoord_worker_last_heartbeat_age_seconds",
        "Time since the worker's last heartbeat",
        w_,
        (((w["id"],), w["heartbeat_age"]) for w in workers if w["heartbeat_age"] is not None),
    )
    yield _gauge(
        "redcoord_worker_threads",
        "The worker's threads (--concurrency)",
        w_,
        (((w["id"],), w["concurrency"]) for w in workers),
    )
    yield _gauge(
        "redcoord_worker_busy_threads",
        "Threads running a job at the worker's last heartbeat",
        w_,
        (((w["id"],), len(w["current"])) for w in workers),
    )
    yield _counter(
        "redcoord_worker_processed_messages",
        "Messages the worker process finished since it started",
        ("worker", "outcome"),
        (((w["id"], label), w[field]) for w in workers for label, field in WORKER_OUTCOMES),
    )


def _leader_families(elections: list[dict[str, Any]]) -> Iterator[Any]:
    e_ = ("election",)
    led = [(e["election"], e["leader"]) for e in elections if e["leader"] is not None]
    yield _gauge(
        "redcoord_leader_present",
        "1 if the election has a leader",
        e_,
        (((e["election"],), 0 if e["leader"] is None else 1) for e in elections),
    )
    yield _gauge(
        "redcoord_leader_term", "The current leader's term", e_, (((n,), x["term"]) for n, x in led)
    )
    yield _gauge(
        "redcoord_leader_info",
        "The current leader's identity",
        ("election", "holder"),
        (((n, x["identity"]), 1) for n, x in led),
    )
    yield _gauge(
        "redcoord_leader_term_start_timestamp_seconds",
        "When the current term began",
        e_,
        (((n,), x["since_ms"] / 1000.0) for n, x in led),
    )
    yield _gauge(
        "redcoord_leader_lease_remaining_seconds",
        "Time left on the leader's lease",
        e_,
        (((n,), x["expires_in"]) for n, x in led),
    )

    # job states are decoded by read_job_states: numeric fields are ints when present
    jobs = [((e["election"], job["name"]), job) for e in elections for job in e["jobs"]]
    j_ = ("election", "job")
    for name, field, doc in JOB_TIMES:
        yield _gauge(
            name,
            doc,
            j_,
            ((k, job[field] / 1000.0) for k, job in jobs if isinstance(job.get(field), int)),
        )
    yield _gauge(
        "redcoord_periodic_job_last_outcome",
        "1 for the outcome of the job's last run, 0 for the others",
        ("election", "job", "outcome"),
        (
            ((*k, outcome), float(job["outcome"] == outcome))
            for k, job in jobs
            if job.get("outcome")
            for outcome in JOB_OUTCOMES
        ),
    )
    yield _gauge(
        "redcoord_periodic_job_running",
        "1 while a run of the job is going on",
        j_,
        ((k, 1 if job.get("running") else 0) for k, job in jobs),
    )
    # the dead-man's switch, judged by dashboard.leaders() (core/periodic/overdue.py)
    yield _gauge(
        "redcoord_periodic_job_overdue_seconds",
        "How long the job's due slot has gone unclaimed (0 when on time)",
        j_,
        ((k, float(job["late"])) for k, job in jobs if "late" in job),
    )
    yield _gauge(
        "redcoord_periodic_job_max_late_seconds",
        "How long the job's due slot may go unclaimed",
        j_,
        ((k, float(job["max_late"])) for k, job in jobs if "max_late" in job),
    )
    yield _gauge(
        "redcoord_periodic_job_healthy",
        "1 unless the job is overdue, failing, or scheduled by no leader",
        j_,
        ((k, 0 if job["overdue"] else 1) for k, job in jobs if "overdue" in job),
    )
    for name, field, doc in JOB_COUNTS:  # a script creates a count with its first increment
        yield _counter(
            name,
            doc,
            j_,
            ((k, job[field] if isinstance(job.get(field), int) else 0) for k, job in jobs),
        )


def _lock_families(snap: dict[str, Any]) -> Iterator[Any]:
    from prometheus_client.core import GaugeMetricFamily

    yield GaugeMetricFamily("redcoord_locks_held", "Live locks", value=snap["locks"]["held"])
    yield GaugeMetricFamily(
        "redcoord_lock_waiters", "Waiters queued on live locks", value=snap["locks"]["waiters"]
    )
    yield GaugeMetricFamily(
        "redcoord_lock_waiters_exact",
        "1 when this scrape read every live lock (at most "
        "METRICS_LOCK_DETAIL), 0 when the waiters add up counts read over the last scrapes",
        value=snap["locks"]["complete"],
    )
    yield GaugeMetricFamily(
        "redcoord_rwlocks_held",
        "Read-write locks with a holder",
        value=sum(1 for rw in snap["rwlocks"] if rw["holders"]),
    )
    sems, s_ = snap["semaphores"], ("semaphore",)
    yield _gauge(
        "redcoord_semaphore_permits",
        "The semaphore's limit",
        s_,
        (((x["name"],), x["limit"]) for x in sems),
    )
    yield _gauge(
        "redcoord_semaphore_permits_held",
        "Permits of the semaphore held",
        s_,
        (((x["name"],), x["used"]) for x in sems),
    )
    yield _gauge(
        "redcoord_semaphore_waiters",
        "Waiters queued on the semaphore",
        s_,
        (((x["name"],), x["queued"]) for x in sems),
    )


# -- what this process sees: its events, counted -----------------------------------------

# Seconds. An uncontended acquire takes a round trip (a fraction of a ms); jobs take longer.
# (three tables of bucket bounds, laid out by hand)
# fmt: off
HOLD_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
HELD_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0,
                5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
JOB_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
               2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
# fmt: on


class ProcessMetrics:
    """Counters and histograms of this process's events, in a ``CollectorRegistry`` of their own.

    An observer of :mod:`django_redcoord.core.observe` (``metrics(event,
    fields)``); :func:`process_metrics` makes the process's one and adds it.
    ``registry`` holds the metrics (see the module for the list).
    """

    def __init__(self) -> None:
        pc = require_prometheus()
        self.registry = reg = pc.CollectorRegistry()
        kind, queue_task, job = ("kind",), ("queue", "task"), ("election", "job")
        self.acquisitions = pc.Counter(
            "redcoord_hold_acquisitions",
            "Acquires of locks, semaphores, read-write locks and latch parties, by outcome",
            ("kind", "outcome"),
            registry=reg,
        )
        self.wait = pc.Histogram(
            "redcoord_hold_wait_seconds",
            "Time an acquire took",
            ("kind", "outcome"),
            buckets=HOLD_BUCKETS,
            registry=reg,
        )
        self.held = pc.Histogram(
            "redcoord_hold_duration_seconds",
            "Time from a grant to its release",
            kind,
            buckets=HELD_BUCKETS,
            registry=reg,
        )
        self.lost = pc.Counter(
            "redcoord_holds_lost", "Holds found lost while held", kind, registry=reg
        )
        self.busy = pc.Counter(
            "redcoord_view_busy_responses",
            "Answers of decorated views that found the resource busy or were rate limited",
            ("kind", "status"),
            registry=reg,
        )
        self.processed = pc.Counter(
            "redcoord_messages_processed",
            "Deliveries a worker of this process finished",
            ("queue", "task", "outcome"),
            registry=reg,
        )
        self.processing = pc.Histogram(
            "redcoord_message_process_duration_seconds",
            "Time a delivery took",
            ("queue", "task", "outcome"),
            buckets=JOB_BUCKETS,
            registry=reg,
        )
        self.retries = pc.Counter(
            "redcoord_message_retries", "Failed deliveries to be retried", queue_task, registry=reg
        )
        self.dead = pc.Counter(
            "redcoord_message_dead_letters", "Deliveries dead-lettered", queue_task, registry=reg
        )
        self.elected = pc.Counter(
            "redcoord_leader_elected",
            "Times this process became leader",
            ("election",),
            registry=reg,
        )
        self.demoted = pc.Counter(
            "redcoord_leader_demoted",
            "Times this process stopped leading",
            ("election",),
            registry=reg,
        )
        self.runs = pc.Counter(
            "redcoord_periodic_runs",
            "Runs of periodic jobs this process ran, by outcome",
            (*job, "outcome"),
            registry=reg,
        )
        self.run_time = pc.Histogram(
            "redcoord_periodic_run_duration_seconds",
            "Time a periodic job's run took",
            (*job, "outcome"),
            buckets=JOB_BUCKETS,
            registry=reg,
        )
        self.missed = pc.Counter(
            "redcoord_periodic_missed_slots",
            "Slots this leader skipped or folded into a later run",
            job,
            registry=reg,
        )
        self.decisions = pc.Counter(
            "redcoord_ratelimit_decisions",
            "Decisions of rate limiters, by outcome",
            ("limiter", "outcome"),
            registry=reg,
        )
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}
        # "hold.acquire" -> self._on_hold_acquire...
        self._handlers = {
            n[4:].replace("_", ".", 1): getattr(self, n) for n in dir(self) if n.startswith("_on_")
        }

    def _of(self, metric: Any, *values: str) -> Any:
        """``metric.labels(*values)``, remembered: labels() validates and locks on every call."""
        child = self._children.get((metric, values))
        if child is None:
            child = self._children[(metric, values)] = metric.labels(*values)
        return child

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        handler = self._handlers.get(event)
        if handler is not None:  # events this version does not count are ignored
            handler(**fields)

    def _on_hold_acquire(self, kind: str, outcome: str, wait: float, **_: Any) -> None:
        self._of(self.acquisitions, kind, outcome).inc()
        self._of(self.wait, kind, outcome).observe(wait)

    def _on_hold_release(self, kind: str, held: float, **_: Any) -> None:
        self._of(self.held, kind).observe(held)

    def _on_hold_lost(self, kind: str, **_: Any) -> None:
        self._of(self.lost, kind).inc()

    def _on_view_busy(self, kind: str, status: int, **_: Any) -> None:
        self._of(self.busy, kind, str(status)).inc()

    def _on_message_done(
        self,
        queue: str,
        task: str,
        outcome: str,
        retried: bool,
        dead_lettered: bool,
        duration: float,
        **_: Any,
    ) -> None:
        self._of(self.processed, queue, task, outcome).inc()
        self._of(self.processing, queue, task, outcome).observe(duration)
        if retried:
            self._of(self.retries, queue, task).inc()
        if dead_lettered:
            self._of(self.dead, queue, task).inc()

    def _on_leader_elected(self, election: str, **_: Any) -> None:
        self._of(self.elected, election).inc()

    def _on_leader_demoted(self, election: str, **_: Any) -> None:
        self._of(self.demoted, election).inc()

    def _on_periodic_run(
        self, election: str, job: str, outcome: str, duration: float, **_: Any
    ) -> None:
        self._of(self.runs, election, job, outcome).inc()
        self._of(self.run_time, election, job, outcome).observe(duration)

    def _on_periodic_missed(self, election: str, job: str, slots: int, **_: Any) -> None:
        self._of(self.missed, election, job).inc(slots)

    def _on_ratelimit_hit(self, limiter: str, allowed: bool, **_: Any) -> None:
        self._of(self.decisions, limiter, "allowed" if allowed else "refused").inc()


_process: ProcessMetrics | None = None
_process_lock = threading.Lock()


def process_metrics() -> ProcessMetrics:
    """This process's :class:`ProcessMetrics`, made and added as an observer on the first call.

    ``metrics_view`` and ``start_metrics_server`` call it; call it yourself
    (in your ``AppConfig.ready()``, say) to count from the process's start
    rather than from the first scrape. Reads nothing, starts nothing.
    Raises ImportError naming the extra when ``prometheus_client`` is missing.
    """
    global _process
    with _process_lock:
        if _process is None:
            _process = ProcessMetrics()
            add_observer(_process)
        return _process


class _ProcessCollector:
    """Puts this process's metrics into a registry that also holds a RedcoordCollector."""

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        return process_metrics().registry.collect()


# -- exposition ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def registry(elections: tuple[str, ...] = (DEFAULT_ELECTION,)) -> Any:
    """A ``CollectorRegistry`` for ``elections`` (built once per tuple): a
    :class:`RedcoordCollector` and this process's metrics (:func:`process_metrics`, installed
    now)."""
    prometheus_client = require_prometheus()
    process_metrics()
    reg = prometheus_client.CollectorRegistry(auto_describe=False)
    reg.register(RedcoordCollector(elections=elections))
    reg.register(_ProcessCollector())
    return reg


@csrf_exempt  # (a POST gets require_safe's 405, not CsrfViewMiddleware's 403)
@never_cache
@require_safe
def metrics_view(
    request: HttpRequest, elections: Iterable[str] = (DEFAULT_ELECTION,)
) -> HttpResponse:
    """The metrics in Prometheus's text format (OpenMetrics when the scraper asks for it).

    ``path("metrics/", metrics_view)``; pass ``{"elections": [...]}`` as the
    URL's extra arguments to report elections besides ``"default"``. With
    ``REDCOORD["METRICS_TOKEN"]`` set, a request must carry
    ``Authorization: Bearer <token>`` (compared in constant time), else it
    gets 401 and nothing is read; without it the view is open: serve it where
    only Prometheus reaches it, or wrap it. Redis down answers 200 with
    ``redcoord_up 0``.
    Raises ImportError naming the extra when ``prometheus_client`` is missing.
    """
    from .. import conf

    token = conf.get_config()["METRICS_TOKEN"]
    if token is not None and not _bearer_matches(request, token):
        response = HttpResponse(
            "401 Unauthorized: send the metrics token as 'Authorization: Bearer <token>'\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        response["WWW-Authenticate"] = 'Bearer realm="redcoord-metrics"'
        return response
    prometheus_client = require_prometheus()
    encoder, content_type = prometheus_client.exposition.choose_encoder(
        request.headers.get("Accept", "")
    )
    return HttpResponse(encoder(registry(tuple(elections))), content_type=content_type)


def _bearer_matches(request: HttpRequest, token: str) -> bool:
    """True when the request's ``Authorization: Bearer`` credential is ``token`` (constant-time
    compare)."""
    scheme, _, given = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), token.encode())


def start_metrics_server(
    port: int, addr: str = "0.0.0.0", *, elections: Iterable[str] = (DEFAULT_ELECTION,)
) -> tuple[Any, Any]:
    """Serve the metrics over HTTP from a daemon thread (``prometheus_client.start_http_server``).

    Args:
        port: TCP port (0: any free port; read it from ``server.server_port``).
        addr: address to listen on.
        elections: as for :class:`RedcoordCollector`.

    Returns ``(server, thread)``; ``server.shutdown()`` stops it.
    Raises ImportError naming the extra when ``prometheus_client`` is missing,
    TypeError/ValueError for a bad port, OSError when the port is taken.
    """
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port must be an int, not {port!r}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be between 0 and 65535, not {port}")
    prometheus_client = require_prometheus()
    server, thread = prometheus_client.start_http_server(
        port, addr, registry=registry(tuple(elections))
    )
    log.info("metrics: serving on %s:%d", addr, server.server_port)
    return server, thread


def add_metrics_arguments(parser: Any) -> None:
    """``--metrics-port`` / ``--metrics-addr`` on a long-running command (run_worker,
    run_leader)."""
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics on this port while running (needs django-redcoord[metrics])",
    )
    parser.add_argument(
        "--metrics-addr",
        default="0.0.0.0",
        metavar="ADDR",
        help="address for --metrics-port (default: %(default)s)",
    )


def serve_metrics_for(options: dict[str, Any]) -> Any:
    """Start the metrics server a command was asked for; returns it (``.shutdown()`` at exit) or
    None.

    Raises ValueError saying why when it cannot start (no prometheus_client, a bad or taken port).
    """
    port = options.get("metrics_port")
    if port is None:
        return None
    addr = options.get("metrics_addr")
    try:
        server, _ = start_metrics_server(port, addr or "0.0.0.0")
    except (ImportError, OSError, TypeError, ValueError) as exc:
        where = f"--metrics-port {port}" + (f" --metrics-addr {addr}" if addr else "")
        raise ValueError(f"{where}: {exc}") from exc
    return server
