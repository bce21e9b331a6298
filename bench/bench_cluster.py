"""Benchmark ours and a peer on a Redis Cluster and through Sentinel, against one Redis server.

The question: do our throughput ratios to the peers hold on a Cluster, and
through Sentinel, as on one server (target: within +-15 %)? The script
starts, on 127.0.0.1 (no persistence), one standalone redis-server and, as
``--topology`` says (``cluster``, ``sentinel`` or ``both``, the default):

- a Redis Cluster of 3 primaries with ``--replicas`` replicas each (default
  0; ``redis-cli --cluster create ... --cluster-replicas N --cluster-yes``;
  every node ``--cluster-enabled yes --cluster-config-file nodes.conf
  --cluster-node-timeout 1000``). Each node's bus port is set with
  ``--cluster-port`` (Redis 7+) to a free port of its own, so the node's port
  need not leave port+10000 free.
- a Sentinel set: a master (``--repl-diskless-sync-delay 0``, so the replica
  syncs at once), one replica (``--replicaof``, synced before the runs) and
  one sentinel (``sentinel monitor mymaster 127.0.0.1 <port> 1``,
  ``down-after-milliseconds`` 60000, so no failover happens during the bench;
  the runs start once the sentinel sees the master up with its replica).

Every server is stopped at the end, also on error, Ctrl-C or SIGTERM, and dies
with this process (PR_SET_PDEATHSIG; the servers and topologies are
bench/support's, shared with the other benchmarks).

Clients: ours use ``client_from_url`` (one server), ``cluster_client(
validate({"CLUSTER": {"NODES": [...]}}))`` (every node named) and
``sentinel_client(validate({"SENTINEL": {"HOSTS": [("127.0.0.1", port)],
"SERVICE": "mymaster"}}))``, which asks the sentinels where the master is at
most once a second before a call (and on each new connection); the peer
uses redis-py's default clients, ``redis.Redis``,
``redis.cluster.RedisCluster`` and ``redis.sentinel.Sentinel([("127.0.0.1",
port)]).master_for("mymaster")`` (asks on each new connection only), as its
users would build them. Every measurement runs in new forked processes with
clients of their own.

Rows, each measured on the one server, the Cluster and the Sentinel master
with the same process counts, ``--rounds`` interleaved rounds (default 3;
all targets in every round, the order of the runs alternates from round to
round, so drift hits all alike), median shown; every ratio is taken within a
round (median over rounds, min-max in brackets). One table per topology,
each next to the same one-server runs:

1. Uncontended locks: 4 processes, each on a lock name of its own (the four
   names hash to slots on primaries 1, 2, 3 and 1 of the Cluster), loop
   acquire+release for ``--seconds`` (default 2); pairs/s summed over the
   processes. Ours: ``Lock(name, ttl=10, wait=10)``; peer: redis-py's
   ``client.lock(name, timeout=10, blocking_timeout=10, sleep=0.1)``, the
   settings of bench_locks.py's "redis-py Lock" row. 20 warm-up pairs first.
2. Contended lock: 4 processes on ONE name loop acquire (blocking), hold 1
   ms, release for ``--seconds``; acquisitions/s inside the window, and the
   fairness (min/max acquisitions per process) in a note.
3. Queue drain: ``--messages`` (default 20,000) messages ``{"n": i}`` pushed
   round-robin over 4 queues (``push_many``, batches of 1000; not timed; the
   names hash to primaries 1, 2, 3 and 1), then ONE worker process runs
   ``Worker([q1..q4], concurrency=4, burst=True)`` with default settings
   (prefetch, heartbeat) and a no-op handler. Timed as bench_queues.py does:
   the worker is built (client, PING) before a start barrier, the clock
   starts when the barrier releases and stops when the last message's
   handler ran (bench/_queue_jobs.py's shared-memory counter and timestamp,
   here under a threading lock, since four threads share the process's
   slot); worker shutdown and the last acknowledgement are outside. A run
   fails if any message ran twice or never. There is no Python queue peer
   that runs on a Cluster, and the queue peers are not measured through
   Sentinel here, so this row has no peer: it compares ours on the Cluster
   or through Sentinel with ours on one server.

Run from the repository root::

    .venv/bin/python bench/bench_cluster.py [--topology {cluster,sentinel,both}] [--quick]
        [--seconds N] [--rounds R] [--messages M] [--replicas N]

The default run (both topologies) takes about 90 s on 2 cores (one topology:
about 60 s); ``--quick`` (one round, 1 s windows, 5000 messages; ~20 s, ~13 s
for one topology) is a smoke run whose numbers are only indicative. Absolute
rates are noisy on a shared machine: read the ratios.
"""

from __future__ import annotations

import argparse
import queue
import secrets
import statistics
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import _queue_jobs as jobs
import redis
from redis.cluster import RedisCluster
from redis.sentinel import Sentinel
from support.cli import Options
from support.cluster import Cluster
from support.contenders import Record, Window, contend, hold_loop, in_window, race
from support.processes import CTX, child_exit, child_setup, run_main, stop_process
from support.sentinel import SentinelSet
from support.servers import HOST, SERVICE, RedisServer
from support.tables import fmt_ratios, header, print_table, versions

from django_redcoord.core.locks import Lock
from django_redcoord.core.options import validate
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.transport.clients import (
    client_from_url,
    cluster_client,
    sentinel_client,
)

PRIMARIES = 3
NODE_TIMEOUT_MS = 1000
PROCS = 4  # lock rows: processes per run
TTL, WAIT = 10, 10  # seconds; no lock expires and no wait runs out during a run
PEER_SLEEP = 0.1  # redis-py Lock's poll interval (its default; bench_locks.py's row)
HOLD = 0.001  # seconds held per contended acquisition
WARM_UP = 20  # uncontended pairs before the window (connect, load scripts)
QUEUES = 4
CONCURRENCY = 4  # worker threads in the one worker process
BATCH = 1000  # push_many batch when filling
PREFIX = "bench"  # key prefix of ours
TARGET = 0.15  # the +-15 % target on the ratio of ratios
SETUP_TIMEOUT = 60.0  # seconds for children to build clients and warm up
CHILD_TIMEOUT = 60.0  # seconds a run may take beyond its window
STALL = 30.0  # seconds without a drained message before a drain run fails
OURS, PEER = "ours", "redis-py Lock"
DOWN_AFTER_MS = 60_000  # no failover during the bench (a run never stalls the master this long)
WIDTH = 92  # the notes' line width
SENTINEL_READY = 30.0  # seconds for the replica to sync and the sentinel to see both
LIBRARIES = ("django-redcoord", "redis", "hiredis")


@dataclass(frozen=True)
class Target:
    """Where a run goes: the standalone server, the Cluster, or the master behind the sentinel."""

    label: str
    ports: tuple[int, ...]  # the server; every Cluster node, primaries first; or
    # the sentinel, the master and the replica
    mode: str  # "server", "cluster" or "sentinel"

    def ours_client(self) -> Any:
        if self.mode == "cluster":
            nodes = [f"redis://{HOST}:{port}" for port in self.ports]
            return cluster_client(validate({"CLUSTER": {"NODES": nodes}}))
        if self.mode == "sentinel":
            hosts = [(HOST, self.ports[0])]
            return sentinel_client(validate({"SENTINEL": {"HOSTS": hosts, "SERVICE": SERVICE}}))
        return client_from_url(f"redis://{HOST}:{self.ports[0]}/0")

    def peer_client(self) -> Any:
        if self.mode == "cluster":
            return RedisCluster(host=HOST, port=self.ports[0])
        if self.mode == "sentinel":
            return Sentinel([(HOST, self.ports[0])]).master_for(SERVICE)
        return redis.Redis(host=HOST, port=self.ports[0])

    def flush(self) -> None:
        """FLUSHALL on the server, on each primary, or on the master (the script cache stays)."""
        ports = {
            "cluster": self.ports[:PRIMARIES],
            "sentinel": self.ports[1:2],  # the replica follows
        }.get(self.mode, self.ports[:1])
        for port in ports:
            client = redis.Redis(host=HOST, port=port)
            try:
                client.flushall()
            finally:
                client.close()


# --- children ---------------------------------------------------------------------------


def _build_lock(
    impl: str, target: Target, name: str
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if impl == OURS:
        lock = Lock(name, client=target.ours_client(), ttl=TTL, wait=WAIT, prefix=PREFIX)
        return lock.acquire, lock.release
    peer = target.peer_client().lock(name, timeout=TTL, blocking_timeout=WAIT, sleep=PEER_SLEEP)
    return peer.acquire, peer.release


class RunFailed(Exception):
    pass


def lock_run(
    impl: str, target: Target, names: Sequence[str], hold: float, seconds: float
) -> list[int]:
    """Acquisitions per process inside the window (process i uses names[i % len(names)])."""

    def contender(proc_id: int, window: Window, out: Any) -> None:
        records: list[Record] = []

        def setup() -> tuple[Callable[[], Any], Callable[[], Any]]:
            acquire, release = _build_lock(impl, target, names[proc_id % len(names)])
            for _ in range(WARM_UP if not hold else 2):
                if not acquire():
                    raise RuntimeError("warm-up acquire returned False")
                release()
            return acquire, release

        contend(
            proc_id,
            window,
            out,
            setup,
            lambda built, t0: hold_loop(*built, t0, seconds, records, hold),
            lambda: in_window(records, window.t0.value + seconds),
            timeout=SETUP_TIMEOUT,
            report=lambda exc: traceback.format_exc(),
        )

    try:
        run = race(PROCS, contender, timeout=seconds + CHILD_TIMEOUT, ready_timeout=SETUP_TIMEOUT)
    except threading.BrokenBarrierError as exc:
        raise RunFailed(f"a process did not get ready ({exc!r})") from None
    if run.errors:
        raise RunFailed(run.errors[0])
    return list(run.payloads.values())


_mark_lock = threading.Lock()


def _handler(message: Any) -> None:
    with _mark_lock:  # the worker's threads share this process's counter slot
        jobs.mark()


def _drain_child(
    target: Target, names: Sequence[str], counts: Any, lasts: Any, barrier: Any, out: Any
) -> None:
    child_setup()
    jobs.install(counts, lasts, 0)
    try:
        client = target.ours_client()
        client.ping()
        queues = [Queue(name, client=client, prefix=PREFIX) for name in names]
        worker = Worker(
            queues,
            handler=_handler,
            concurrency=CONCURRENCY,
            burst=True,
            worker_id=f"bench-{secrets.token_hex(3)}",
        )
    except BaseException:  # noqa: B036
        out.put(traceback.format_exc())
        barrier.abort()
        child_exit(out)
    error = None
    try:
        barrier.wait(timeout=SETUP_TIMEOUT)
        worker.run()
    except BaseException:  # noqa: B036
        error = traceback.format_exc()
    out.put(error)
    child_exit(out)


def fill(target: Target, names: Sequence[str], messages: int) -> None:
    """Push ``messages`` bodies round-robin over the queues, BATCH per push_many (not timed)."""
    client = target.ours_client()
    try:
        queues = [Queue(name, client=client, prefix=PREFIX) for name in names]
        for start in range(0, messages, BATCH * len(queues)):
            for k, q in enumerate(queues):
                bodies = [
                    {"n": i}
                    for i in range(
                        start + k, min(messages, start + BATCH * len(queues)), len(queues)
                    )
                ]
                if bodies:
                    q.push_many(bodies)
        queued = sum(q.depths().ready for q in queues)
    finally:
        client.close()
    if queued != messages:
        raise RunFailed(f"pushed {messages} messages but {queued} are ready")


def drain_run(target: Target, names: Sequence[str], messages: int) -> float:
    """Messages/s for one worker process draining ``messages`` pre-pushed messages."""
    target.flush()
    fill(target, names, messages)
    counts, lasts = CTX.RawArray("q", 1), CTX.RawArray("d", 1)
    barrier, out = CTX.Barrier(2), CTX.Queue()
    proc = CTX.Process(
        target=_drain_child, args=(target, names, counts, lasts, barrier, out), daemon=True
    )
    proc.start()
    error: str | None = None
    try:
        try:
            barrier.wait(timeout=SETUP_TIMEOUT)
        except threading.BrokenBarrierError:
            raise RunFailed(_report(out) or "the worker did not start") from None
        started = time.monotonic()
        seen, progress_at = 0, started
        while (done := counts[0]) < messages:
            now = time.monotonic()
            if done != seen:
                seen, progress_at = done, now
            elif now - progress_at > STALL:
                raise RunFailed(f"stuck at {done}/{messages} messages for {STALL:g} s")
            if not proc.is_alive():
                raise RunFailed(
                    _report(out) or f"the worker exited after {done}/{messages} messages"
                )
            time.sleep(0.005)
        elapsed = lasts[0] - started
        proc.join(timeout=CHILD_TIMEOUT)  # burst: it leaves once the queues are empty
        error = _report(out)
    finally:
        stop_process(proc)
    if error:
        raise RunFailed(error)
    if counts[0] != messages:
        raise RunFailed(f"{counts[0]} handler runs for {messages} messages (duplicates?)")
    return messages / elapsed


def _report(out: Any) -> str | None:
    try:
        return out.get(timeout=5)
    except queue.Empty:
        return "the worker process reported nothing"


# --- the runs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    kind: str  # "uncontended", "contended" or "drain"
    unit: str


ROWS = (
    Row(f"1. locks uncontended, {PROCS} procs, own names", "uncontended", "pairs/s"),
    Row(f"2. lock contended, {PROCS} procs, one name, hold 1 ms", "contended", "acq/s"),
    Row(f"3. queue drain, {QUEUES} queues, 1 worker x {CONCURRENCY} threads", "drain", "msg/s"),
)


@dataclass
class Results:
    """rates[(row kind, target label, impl)] = one value per round (None: failed)."""

    rates: dict[tuple[str, str, str], list[float | None]] = field(default_factory=dict)
    fairness: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    errors: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def add(self, key: tuple[str, str, str], value: float | None) -> None:
        self.rates.setdefault(key, []).append(value)


def measure(
    args: argparse.Namespace, targets: Sequence[Target], spread: Callable[[str, int], list[str]]
) -> Results:
    """Every run of every round, all targets interleaved; each run on fresh names spread over
    the Cluster's primaries (the one server and the Sentinel master get the same names)."""
    results = Results()
    jobs_: list[tuple[str, Target, str]] = [
        (kind, target, impl)
        for kind in ("uncontended", "contended")
        for target in targets
        for impl in (OURS, PEER)
    ] + [("drain", target, OURS) for target in targets]
    for r in range(args.rounds):
        stamp = secrets.token_hex(2)
        for kind, target, impl in jobs_ if r % 2 == 0 else jobs_[::-1]:
            key = (kind, target.label, impl)
            if key in results.errors:  # failed once: not run again
                results.add(key, None)
                continue
            print(f"  round {r + 1}/{args.rounds}: {kind} {target.label} {impl}", file=sys.stderr)
            try:
                if kind == "drain":
                    qnames = spread(f"q{stamp}", QUEUES)
                    results.add(key, drain_run(target, qnames, args.messages))
                    continue
                hold = HOLD if kind == "contended" else 0.0
                lnames = spread(f"{kind[0]}{impl[0]}{stamp}", PROCS if kind == "uncontended" else 1)
                counts = lock_run(impl, target, lnames, hold, args.seconds)
                results.add(key, sum(counts) / args.seconds)
                if kind == "contended":
                    fair = min(counts) / max(counts) if max(counts) else 0.0
                    results.fairness.setdefault((target.label, impl), []).append(fair)
            except Exception as exc:
                results.errors[key] = str(exc)
                results.add(key, None)
    return results


# --- the report -------------------------------------------------------------------------


def _median_rate(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{statistics.median(present):,.0f}" if present else "ERROR"


def _ratios(a: Sequence[float | None], b: Sequence[float | None]) -> list[float]:
    return [x / y for x, y in zip(a, b, strict=True) if x is not None and y]


def _fmt_ratio(ratios: Sequence[float], verdict: bool = False) -> str:
    text = fmt_ratios(ratios, spread="several")
    if verdict and ratios:
        inside = abs(statistics.median(ratios) - 1.0) <= TARGET
        text += " within" if inside else " OUTSIDE"
    return text


def table(results: Results, one: str, cl: str) -> None:
    """Target ``cl`` (the Cluster or Sentinel) next to ``one`` (the one server)."""
    rows = []
    for row in ROWS:
        get = results.rates.get
        ours_1, ours_c = get((row.kind, one, OURS), []), get((row.kind, cl, OURS), [])
        peer_1, peer_c = get((row.kind, one, PEER)), get((row.kind, cl, PEER))
        if peer_1 is None or peer_c is None:  # the queue row has no peer
            cells = [_median_rate(ours_1), "n/a", "n/a", _median_rate(ours_c), "n/a", "n/a", "n/a"]
        else:
            r1, rc = _ratios(ours_1, peer_1), _ratios(ours_c, peer_c)
            per_round = [
                (oc / pc) / (o1 / p1)
                for o1, p1, oc, pc in zip(ours_1, peer_1, ours_c, peer_c, strict=True)
                if None not in (o1, p1, oc, pc) and p1 and pc and o1
            ]
            cells = [
                _median_rate(ours_1),
                _median_rate(peer_1),
                _fmt_ratio(r1),
                _median_rate(ours_c),
                _median_rate(peer_c),
                _fmt_ratio(rc),
                _fmt_ratio(per_round, verdict=True),
            ]
        rows.append([f"{row.label} ({row.unit})", *cells, _fmt_ratio(_ratios(ours_c, ours_1))])
    print_table(
        [
            "row",
            f"{one}: ours",
            "peer",
            "ours/peer",
            f"{cl}: ours",
            "peer",
            "ours/peer",
            f"{cl} ratio / {one.replace(' ', '-')} ratio (+-{TARGET:.0%})",
            f"ours: {cl} / {one}",
        ],
        rows,
    )


def notes(results: Results, targets: Sequence[Target], args: argparse.Namespace) -> None:
    fair = {
        key: f"{statistics.median(values):.2f}"
        for key, values in results.fairness.items()
        if values
    }
    fairness = "; ".join(
        f"{t.label}: ours {fair.get((t.label, OURS), 'n/a')}, peer "
        f"{fair.get((t.label, PEER), 'n/a')}"
        for t in targets
    )
    modes = {t.mode for t in targets}
    others = " or ".join(t.label for t in targets if t.mode != "server")
    via = " or ".join(
        {"cluster": "on the Cluster", "sentinel": "through Sentinel"}[t.mode]
        for t in targets
        if t.mode != "server"
    )
    clients = ["`redis.Redis`"]
    if "cluster" in modes:
        clients.append("`redis.cluster.RedisCluster`")
    if "sentinel" in modes:
        clients.append(f'`redis.sentinel.Sentinel(hosts).master_for("{SERVICE}")`')
    intro = (
        f"Peer: redis-py's Lock (`client.lock(name, timeout={TTL}, blocking_timeout={WAIT}, "
        f"sleep={PEER_SLEEP:g})`, bench_locks.py's \"redis-py Lock\" settings) on redis-py's "
        f"default clients: {', '.join(clients)}. Ratios are taken within each round: median "
        f'(min-max over {args.rounds} round(s)); "within" = the {others} ours/peer ratio is '
        f"within +-{TARGET:.0%} of the one server's. Last column: ours {via} over ours on one "
        "server (absolute cost)."
    )
    items: list[str] = []
    if "cluster" in modes:
        items.append(
            "python-redis-lock is left out: it does not run on a Cluster (it refuses a "
            "RedisCluster client unless strict=False, and then its release script touches "
            '`lock:NAME` and `lock-signal:NAME`, two hash slots: "EVALSHA - all keys must map '
            "to the same key slot\"). pottery's Redlock is not measured here either, although "
            "given the RedisCluster client as its one master it did acquire and release in a "
            "check (bench_locks.py and bench_redlock.py compare it on one server). So only "
            "redis-py's Lock is a peer on both."
        )
    if "sentinel" in modes:
        items.append(
            "Sentinel rows: one master with one replica (`--replicaof`, synced before the "
            f'runs) and one sentinel monitoring it as "{SERVICE}" (quorum 1, down-after '
            f"{DOWN_AFTER_MS // 1000} s, so no failover happens during the bench). Ours is "
            '`sentinel_client(validate({"SENTINEL": {"HOSTS": [(host, sentinel port)], '
            f'"SERVICE": "{SERVICE}"}}}}))`: besides redis-py\'s ask on each new connection, it '
            "asks the sentinels where the master is at most once a second before a call "
            "(SENTINEL_CHECK, so an idle connection does not keep writing to a former "
            "master); the peer's master_for asks only when it opens a connection. Both write "
            "to the master, which also feeds its replica; the one server has no replica."
        )
    items.append(
        f"Row 2: redis-py's Lock polls every {PEER_SLEEP:g} s and its releasing process "
        "retries at once, so its contended rate is mostly one process re-acquiring (unfair) "
        "and moves with scheduling; ours hands off FIFO to the waiter (BLPOP). That row's "
        "ratio compares two designs. Fairness (min/max acquisitions per process, median "
        f"round): {fairness}."
    )
    why = []
    if "cluster" in modes:
        why.append("RQ, dramatiq and huey need one Redis server (none runs on a Cluster)")
    if "sentinel" in modes:
        why.append(
            "the queue peers are not measured through Sentinel here (bench_queues.py "
            "compares them on one server)"
        )
    items.append(
        f"Row 3 has no peer: {'; '.join(why)}. So it compares ours {via} with ours on one "
        "server (last column). Left out: the enqueue side (the fill is not timed), delays, "
        "retries, dead letters, more worker processes."
    )
    if "cluster" in modes:
        items.append(
            "Left out of the Cluster rows: MOVED/ASK redirections, resharding and failover "
            "(the slot map is stable), and cross-primary load imbalance beyond 4 names. The "
            f"Cluster has {PRIMARIES} primaries with {args.replicas} replica(s) each (--replicas)."
        )
    if "sentinel" in modes:
        items.append(
            "Left out of the Sentinel rows: failover, a dead or slow sentinel, and more "
            "sentinels (one answers every ask)."
        )
    items.append(
        "Left out everywhere: network latency (all on loopback, one machine). Every server "
        "shares the 2 cores with the client processes. Absolute rates are noisy on a shared "
        "machine: read the ratios."
    )
    wrap = {"width": WIDTH, "break_long_words": False, "break_on_hyphens": False}
    print("\n" + textwrap.fill(intro, **wrap) + "\n\nNotes:")
    for item in items:
        print(textwrap.fill(item, initial_indent="- ", subsequent_indent="  ", **wrap))
    for (kind, target, impl), error in results.errors.items():
        print(f"\nERROR in {kind} / {target} / {impl}:\n{error.rstrip()}")
    sys.stdout.flush()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~20 s smoke run")
    cli.add(
        "--topology",
        choices=("cluster", "sentinel", "both"),
        default="both",
        help="what to measure next to the one server (default both: two tables, one set of rounds)",
    )
    cli.add(
        "--replicas",
        type=int,
        default=0,
        help="replicas per primary (default 0: on one 2-core machine replicas take the clients' "
        "CPU)",
    )
    cli.number("--seconds", 2.0, 1.0, "lock window per run", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.number("--messages", 20_000, 5000, "messages per drain", least=1)
    return cli.parse(argv)


def numbered(stem: str, count: int) -> list[str]:
    """Names for a run without a Cluster: no slots to spread over."""
    return [f"{stem}-{k}" for k in range(count)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    with ExitStack() as stack:
        server = stack.enter_context(RedisServer())
        targets = [Target("1 server", (server.port,), "server")]
        where = [f"one server {HOST}:{server.port}"]
        spread: Callable[[str, int], list[str]] = numbered
        if args.topology in ("cluster", "both"):
            cluster = stack.enter_context(
                Cluster(PRIMARIES, args.replicas, node_timeout=NODE_TIMEOUT_MS, stable=0.0)
            )
            primaries = cluster.primary_ports
            others = [port for port in cluster.nodes if port not in primaries]
            targets.append(Target("Cluster", (*primaries, *others), "cluster"))
            where.append(
                f"Cluster: primaries {', '.join(map(str, primaries))}, "
                f"replicas {', '.join(map(str, others)) or 'none'}"
            )
            spread = cluster.spread
        if args.topology in ("sentinel", "both"):
            sentinels = stack.enter_context(SentinelSet(DOWN_AFTER_MS, SENTINEL_READY))
            assert sentinels.sentinel is not None and sentinels.replica is not None
            ports = (sentinels.sentinel.port, sentinels.master.port, sentinels.replica.port)
            targets.append(Target("Sentinel", ports, "sentinel"))
            where.append(f"Sentinel: sentinel {ports[0]}, master {ports[1]}, replica {ports[2]}")
        title = f"{' + '.join(t.label for t in targets[1:])} benchmark"
        print(header(title, server.version(), versions(LIBRARIES)))
        print(
            f"{'; '.join(where)} (started in {time.monotonic() - started:.1f} s); "
            f"{args.rounds} interleaved round(s), lock window {args.seconds:g} s, "
            f"{args.messages:,} messages per drain\n"
        )
        results = measure(args, targets, spread)
        for k, other in enumerate(targets[1:]):
            if k:
                print()
            table(results, targets[0].label, other.label)
        notes(results, targets, args)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
