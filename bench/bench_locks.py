"""Benchmark django_redcoord's Lock against other Redis locks for Python.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C (part C and part D start servers of their own). Implementations, each
on a fresh name:

* ``ours``: ``django_redcoord.Lock`` (FIFO queue, handoff by BLPOP)
* ``redis-py Lock``: ``client.lock(name, timeout=10)``, polling every 0.1 s
* ``redis-py sleep=0.001``: the same, polling every 1 ms
* ``python-redis-lock``: ``redis_lock.Lock(client, name, expire=10)``
* ``pottery Redlock``: ``pottery.Redlock`` with one master
* ``floor``: hand-written SET NX PX + DEL (two plain round trips)
* part B only, a reference row that is not a lock: ``BLPOP ring (notify
  floor)``, a token passed around the processes by LPUSH/BLPOP sent the
  way ours sends: what any handoff that Redis notifies costs at least on
  this machine (its p99 shows how much of a tail is the VM's wake-up latency)

Part A, uncontended: acquire+release pairs per second in one process, median
of 3 runs. The runs are interleaved (each run measures every implementation
once, in alternating order: forward, backward, forward), so neither the order
nor a burst of noise decides a ratio. The ratios to the floor and to redis-py's
Lock are taken within each run (median over the runs).

Part B, contended: N processes (4, then 16) loop on ONE lock name: acquire
(blocking), hold 1 ms, release. ``--rounds`` interleaved rounds (default 3)
each run every implementation for ``--seconds`` (default 3), in alternating
order, so a burst of noise from the VM's neighbours lands on one round of
each rather than on all of one. Reported per implementation (median round
unless said otherwise):

* acquisitions/s inside the run window, and the ratio to python-redis-lock
  (taken within each round; median and the range over rounds)
* fairness: min/max acquisitions per process in the window (1.0 = perfectly
  even); in brackets the worst round with its two counts
* handoff p50/p99: for consecutive grants to different processes where the
  next one was already waiting, next acquire-return minus previous
  release-start (CLOCK_MONOTONIC is shared by all processes on Linux); the
  p99 of the worst round in brackets
* starved: processes with any single wait > 2 s, or no acquisition at all
  (worst round)
* cmds/acq: Redis commands per acquisition from INFO commandstats (INFO
  itself excluded). Redis counts the commands a Lua script runs as well, so
  this is server work; the most frequent commands are listed below the table.
* sent/acq: sends the clients made per acquisition (counted in redis-py's
  Connection.send_packed_command in each process, which every redis-py
  command and pipeline goes through, ours included): round trips, Lua
  internals not included
* overlaps: critical sections [acquired, release-start] that overlap an
  earlier one; anything but 0 means the lock let two holders in

Part C, outage: milliseconds until one lock call fails with socket_timeout=1
when the server (a) refuses connections (closed port) or (b) is frozen by
SIGSTOP on an already-open connection; ours vs redis-py's default client.
Each probe is cut off after 15 s (6 s with --quick).

Part D, memory per live lock: on a fresh redis-server of its own, for each
implementation (``redis-py sleep=0.001`` left out: same keys as redis-py
Lock) acquire ``--locks`` distinct locks (default 10,000; 2,000 with --quick)
and keep them all held, all with TTL 300 s and names of the same length
(``bench:mem:00001234``; each implementation adds its own key prefix), all
through one client connection. Before each implementation: one warm-up
acquire+release (connects, loads Lua scripts), then FLUSHALL SYNC (the script
cache survives it), so every implementation starts from an empty keyspace.
Reported:

* bytes/live lock: (INFO memory ``used_memory`` after - before) / N, read
  once two readings 50 ms apart agree. It counts everything a live lock costs
  the server: its keys and values, the main and expires hash-table entries,
  and for ours the entry in the live-lock index (a hash bucket, ``<prefix>:
  index:locks:<crc16 % 256>``, shared by all live locks whose names fall in
  it) plus the index buckets' own key overhead, spread over the N locks. It
  also counts jemalloc's size-class rounding, and it moves with N: Redis's
  hash tables grow in powers of two (ours adds up to 256 bucket keys to the
  main table), and the shared index buckets are amortised better the more
  locks are live. Lua's own heap (used_memory_lua) is not part of it.
* keys/live lock: DBSIZE delta / N (ours: the index buckets counted as keys)
* one lock (MEMORY USAGE): the first lock is acquired alone on the empty
  keyspace and every key then present (SCAN) is its; MEMORY USAGE (SAMPLES 0)
  of those keys summed, with their types. A shared index bucket is then a
  hash with one field, so its fixed overhead is all charged to that one lock
  here, while the bytes/live-lock column shares it out. MEMORY USAGE leaves
  out the main and expires hash-table entries that used_memory counts.

Afterwards the locks are not released: the next FLUSHALL, or stopping the
server, drops them.

Run from the repository root::

    .venv/bin/python bench/bench_locks.py [--quick] [--seconds N] [--rounds R]

The default run takes about 4-5 minutes on 2 cores (part D adds ~15 s);
``--quick`` is a ~40 s smoke run with short windows (numbers are then only
indicative; part D's are not, but move with N, see above).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import platform
import queue
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from itertools import pairwise
from typing import Any, NamedTuple

import redis

try:
    import pottery
except ImportError:  # a peer: its rows say "not installed"
    pottery = None
try:
    import redis_lock
except ImportError:
    redis_lock = None

from django_redcoord import Lock
from django_redcoord.core.transport import commands as scripting
from django_redcoord.core.transport.clients import client_from_url

try:
    from bench._servers import (
        HOST,
        RedisServer,
        free_port,
        print_table,
        run_in_child,
        run_main,
        stop_process,
    )
except ImportError:  # run as a script: bench/ itself is sys.path[0]
    from _servers import (
        HOST,
        RedisServer,
        free_port,
        print_table,
        run_in_child,
        run_main,
        stop_process,
    )

CTX = mp.get_context("fork")
TTL = 10  # seconds; no lock should ever expire during the benchmark
HOLD = 0.001  # seconds held per contended acquisition
TOP_COMMANDS = 16  # commands listed in the per-acquisition breakdown
STARVED_WAIT = 2.0  # seconds: a single wait longer than this counts as starvation
FLOOR_SPIN = 0.0001  # seconds the floor sleeps between SET NX retries (see _build_floor)
CHILD_TIMEOUT = 60.0  # seconds a benchmark child may take beyond its planned run
OUTAGE_TIMEOUT = 15.0  # seconds one outage probe may take (--quick: QUICK_OUTAGE_TIMEOUT)
QUICK_OUTAGE_TIMEOUT = 6.0

Record = tuple[float, float, float]  # (t_request, t_acquired, t_release_start)


# --- implementations ---------------------------------------------------------------


class Contender(NamedTuple):
    client: redis.Redis
    acquire: Callable[[], Any]
    release: Callable[[], Any]


# Each builder makes one lock on ``name`` with its own new client, or, for part
# D (many locks, one connection), on ``client``, built earlier by the same builder.


def _plain_client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port)


def _build_ours(
    port: int, name: str, *, client: redis.Redis | None = None, ttl: float = TTL
) -> Contender:
    if client is None:
        client = client_from_url(f"redis://{HOST}:{port}/0")
    lock = Lock(name, ttl=ttl, wait=None, client=client, prefix="bench")
    return Contender(client, lock.acquire, lock.release)


def _redis_py_builder(sleep: float) -> Callable[..., Contender]:
    def build(
        port: int, name: str, *, client: redis.Redis | None = None, ttl: float = TTL
    ) -> Contender:
        if client is None:
            client = _plain_client(port)
        lock = client.lock(name, timeout=ttl, sleep=sleep)
        return Contender(client, lambda: lock.acquire(blocking=True), lock.release)

    return build


def _build_python_redis_lock(
    port: int, name: str, *, client: redis.Redis | None = None, ttl: float = TTL
) -> Contender:
    if redis_lock is None:
        raise ModuleNotFoundError("not installed (python-redis-lock)")
    if client is None:
        client = _plain_client(port)
    lock = redis_lock.Lock(client, name, expire=int(ttl))
    return Contender(client, lock.acquire, lock.release)


def _build_pottery(
    port: int, name: str, *, client: redis.Redis | None = None, ttl: float = TTL
) -> Contender:
    if pottery is None:
        raise ModuleNotFoundError("not installed (pottery)")
    if client is None:
        client = _plain_client(port)
    lock = pottery.Redlock(key=name, masters={client}, auto_release_time=ttl)
    return Contender(client, lock.acquire, lock.release)


def _build_floor(
    port: int, name: str, *, client: redis.Redis | None = None, ttl: float = TTL
) -> Contender:
    """SET NX PX + DEL: the least any Redis lock can do uncontended.

    Contended, it retries SET NX after sleeping FLOOR_SPIN (0.1 ms) rather than
    at once: on 2 cores, 16 hot spinners would starve the holder of CPU. It has
    no queue and no token check on DEL, so its contended numbers are only
    informational.
    """
    if client is None:
        client = _plain_client(port)
    token = secrets.token_hex(8)
    px = int(ttl * 1000)

    def acquire() -> bool:
        while not client.set(name, token, nx=True, px=px):
            time.sleep(FLOOR_SPIN)
        return True

    return Contender(client, acquire, lambda: client.delete(name))


def _build_ring(port: int, name: str, proc_id: int, n: int) -> Contender:
    """A bare token ring over our transport: the least a Redis-notified handoff can cost.

    Process i waits with BLPOP on its own list and passes the token on with
    LPUSH to process i+1's list: no TTL, no token check, no queue, no Lua, and
    only safe because exactly one token exists and the ring is fixed. It is
    not a lock; it is the floor for any design (ours included) where a
    release wakes a blocked waiter through Redis, sent the way ours sends
    (a pooled connection, the connection class's own reading). Process 0
    holds the token at the start.
    """
    client = client_from_url(f"redis://{HOST}:{port}/0")
    mine, nxt = f"{name}:{proc_id}", f"{name}:{(proc_id + 1) % n}"
    if proc_id == 0:
        client.lpush(mine, "token")

    def acquire() -> bool:
        return scripting.blpop(client, [mine], 10.0, operation="ring") is not None

    def release() -> None:
        scripting.command(client, "LPUSH", nxt, "token", operation="ring")

    return Contender(client, acquire, release)


@dataclass(frozen=True)
class Impl:
    label: str
    build: Callable[..., Contender]  # (port, name), or (port, name, proc_id, n) if ring
    ring: bool = False  # part B only
    memory: bool = True  # measured in part D


IMPLS = (
    Impl("ours", _build_ours),
    Impl("redis-py Lock", _redis_py_builder(0.1)),
    # Same keys as redis-py Lock, so left out of part D.
    Impl("redis-py sleep=0.001", _redis_py_builder(0.001), memory=False),
    Impl("python-redis-lock", _build_python_redis_lock),
    Impl("pottery Redlock", _build_pottery),
    Impl("floor", _build_floor),
)
#: Part B only: a reference row, not a lock.
RING = Impl("BLPOP ring (notify floor)", _build_ring, ring=True)
FLOOR = "floor"
REFERENCE = "python-redis-lock"
REDIS_PY = "redis-py Lock"  # part A's second reference


def lock_name(part: str, impl: Impl) -> str:
    slug = "".join(ch if ch.isalnum() else "-" for ch in impl.label.lower())
    return f"bench-{part}-{slug}-{secrets.token_hex(3)}"


def checked(acquire: Callable[[], Any]) -> None:
    if not acquire():
        raise RuntimeError("blocking acquire returned False")


# --- part A: uncontended -------------------------------------------------------------

ROUNDS = 3


def _uncontended_rate(impl: Impl, port: int, name: str, run_seconds: float) -> float:
    contender = impl.build(port, name)
    for _ in range(50):  # warm up: connect, load scripts
        checked(contender.acquire)
        contender.release()
    return _pairs_per_second(contender, run_seconds)


def _pairs_per_second(contender: Contender, run_seconds: float) -> float:
    acquire, release = contender.acquire, contender.release
    pairs = 0
    start = time.monotonic()
    end = start + run_seconds
    while True:
        checked(acquire)
        release()
        pairs += 1
        now = time.monotonic()
        if now >= end:
            return pairs / (now - start)


def part_a(port: int, run_seconds: float) -> None:
    """Rounds are interleaved (each impl once per round, in alternating order)
    so load drift hits all alike and order does not decide a ratio; ratios
    are taken within each round, the median round reported."""
    rates: dict[str, list[float]] = {impl.label: [] for impl in IMPLS}
    errors: dict[str, str] = {}
    names = {impl.label: lock_name("a", impl) for impl in IMPLS}
    for r in range(ROUNDS):
        for impl in IMPLS if r % 2 == 0 else IMPLS[::-1]:
            if impl.label in errors:
                continue
            try:
                args = (impl, port, names[impl.label], run_seconds)
                timeout = run_seconds + CHILD_TIMEOUT
                rates[impl.label].append(run_in_child(_uncontended_rate, args, timeout))
            except Exception as exc:
                errors[impl.label] = str(exc)
    rows = []
    for impl in IMPLS:
        label = impl.label
        if label in errors or not rates[label]:
            rows.append([label, "ERROR", "", "", "", errors.get(label, "no result")])
            continue
        spread = f"{min(rates[label]):,.0f}-{max(rates[label]):,.0f}"
        rows.append(
            [
                label,
                f"{statistics.median(rates[label]):,.0f}",
                round_ratio(rates[label], rates[FLOOR]),
                round_ratio(rates[label], rates[REDIS_PY]),
                spread,
                "",
            ]
        )
    print(
        f"\n## A. Uncontended: acquire+release pairs/s, one process "
        f"(median of {ROUNDS} interleaved runs x {run_seconds:g} s, alternating order; "
        f"ratios taken within each run)\n"
    )
    print_table(["impl", "pairs/s", "vs floor", "vs redis-py Lock", "runs min-max", "error"], rows)


def round_ratio(values: Sequence[float], reference: Sequence[float]) -> str:
    """Median over rounds of value / reference in the same round.

    Both lists hold one value per round from round 0 on (an implementation
    that fails is not run again), so equal positions are the same round.
    """
    ratios = [v / ref for v, ref in zip(values, reference, strict=False) if ref]
    return f"{statistics.median(ratios):.2f}x" if ratios else "n/a"


# --- part B: contended ---------------------------------------------------------------


@dataclass
class RunSync:
    ready: Any  # Barrier(n + 1): workers connected, parent may snapshot stats
    start: Any  # Event: go
    t0: Any  # Value('d'): monotonic start of the window


class SendCounter:
    """Counts the sends this process makes through redis-py: its round trips.

    Commands run inside Lua scripts are not sent, so they are not counted here
    (INFO commandstats counts them). Installed only in benchmark children.
    """

    count = 0

    @classmethod
    def install(cls) -> None:
        original = redis.connection.Connection.send_packed_command

        def counted(conn: Any, *args: Any, **kwargs: Any) -> Any:
            cls.count += 1
            return original(conn, *args, **kwargs)

        redis.connection.Connection.send_packed_command = counted


def _contender_loop(
    impl: Impl, port: int, name: str, seconds: float, proc_id: int, n: int, sync: RunSync, out: Any
) -> None:
    records: list[Record] = []
    error = None
    SendCounter.install()
    try:
        contender = impl.build(port, name, proc_id, n) if impl.ring else impl.build(port, name)
        contender.client.ping()  # connect before the "before" command snapshot
    except Exception as exc:
        contender, error = None, f"{type(exc).__name__}: {exc}"
    try:
        sync.ready.wait(timeout=30)
        sync.start.wait(timeout=30)
        if contender is not None:
            _loop(contender, sync.t0.value, seconds, records)
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        error = f"{type(exc).__name__}: {exc}"
    out.put((proc_id, records, SendCounter.count, error))


def _loop(contender: Contender, t0: float, seconds: float, records: list[Record]) -> None:
    acquire, release = contender.acquire, contender.release
    time.sleep(max(0.0, t0 - time.monotonic()))
    deadline = t0 + seconds
    SendCounter.count = 0
    while (t_request := time.monotonic()) < deadline:
        checked(acquire)
        t_acquired = time.monotonic()
        time.sleep(HOLD)
        t_release_start = time.monotonic()
        release()
        records.append((t_request, t_acquired, t_release_start))


def command_calls(client: redis.Redis) -> Counter[str]:
    """Calls per command since server start, INFO itself left out."""
    stats = client.info("commandstats")
    calls = Counter({k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()})
    del calls["info"]
    return calls


@dataclass
class RunResult:
    per_proc: dict[int, list[Record]]
    errors: list[str]
    commands: Counter[str]
    sent: int
    t0: float


def run_contended(impl: Impl, port: int, n: int, seconds: float) -> RunResult:
    name = lock_name(f"b{n}", impl)
    sync = RunSync(CTX.Barrier(n + 1), CTX.Event(), CTX.Value("d", 0.0))
    out = CTX.Queue()
    procs = [
        CTX.Process(
            target=_contender_loop, args=(impl, port, name, seconds, i, n, sync, out), daemon=True
        )
        for i in range(n)
    ]
    stats_client = redis.Redis(host=HOST, port=port)
    try:
        for proc in procs:
            proc.start()
        sync.ready.wait(timeout=60)
        before = command_calls(stats_client)
        sync.t0.value = time.monotonic() + 0.05
        sync.start.set()
        per_proc, sent, errors = _collect(out, n, seconds + CHILD_TIMEOUT)
        after = command_calls(stats_client)
    finally:
        for proc in procs:
            stop_process(proc)
        stats_client.close()
    return RunResult(per_proc, errors, after - before, sent, sync.t0.value)


def _collect(out: Any, n: int, timeout: float) -> tuple[dict[int, list[Record]], int, list[str]]:
    per_proc: dict[int, list[Record]] = {}
    sent = 0
    errors: list[str] = []
    deadline = time.monotonic() + timeout
    while len(per_proc) < n:
        try:
            proc_id, records, proc_sent, error = out.get(
                timeout=max(0.1, deadline - time.monotonic())
            )
        except queue.Empty:
            errors.append(f"{n - len(per_proc)} process(es) hung for {timeout:g} s")
            break
        per_proc[proc_id] = records
        sent += proc_sent
        if error:
            errors.append(f"p{proc_id}: {error}")
    return per_proc, sent, errors


@dataclass
class ContendedStats:
    """One round of one implementation."""

    acq_per_s: float
    fairness: float
    per_proc_min_max: tuple[int, int]
    handoff_p50_us: float | None
    handoff_p99_us: float | None
    starved: int
    acquisitions: int
    commands: Counter[str]
    sent: int
    overlaps: int


def contended_stats(run: RunResult, n: int, seconds: float) -> ContendedStats:
    window_end = run.t0 + seconds
    in_window = [sum(1 for r in run.per_proc.get(i, []) if r[1] <= window_end) for i in range(n)]
    merged = sorted((r[1], r[2], r[0], pid) for pid, recs in run.per_proc.items() for r in recs)
    handoffs = sorted(
        nxt[0] - prev[1] for prev, nxt in pairwise(merged) if nxt[3] != prev[3] and nxt[2] < prev[1]
    )
    return ContendedStats(
        acq_per_s=sum(in_window) / seconds,
        fairness=min(in_window) / max(in_window) if max(in_window) else 0.0,
        per_proc_min_max=(min(in_window), max(in_window)),
        handoff_p50_us=percentile(handoffs, 50) * 1e6 if handoffs else None,
        handoff_p99_us=percentile(handoffs, 99) * 1e6 if handoffs else None,
        starved=count_starved(run.per_proc, n),
        acquisitions=len(merged),
        commands=run.commands,
        sent=run.sent,
        overlaps=count_overlaps(merged),
    )


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty sequence."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def count_starved(per_proc: dict[int, list[Record]], n: int) -> int:
    starved = 0
    for i in range(n):
        records = per_proc.get(i, [])
        if not records or max(acq - req for req, acq, _ in records) > STARVED_WAIT:
            starved += 1
    return starved


def count_overlaps(merged: Sequence[tuple[float, float, float, int]]) -> int:
    """Critical sections that start before an earlier one ended (sorted by start)."""
    overlaps, latest_end = 0, -math.inf
    for start, end, _, _ in merged:
        if start < latest_end:
            overlaps += 1
        latest_end = max(latest_end, end)
    return overlaps


def part_b(port: int, n: int, seconds: float, rounds: int) -> None:
    """``rounds`` rounds, each running every implementation once, in alternating order.

    A burst of noise from the VM's neighbours then hits one round of each
    implementation rather than all of one: per implementation the table
    gives the median round (and the worst p99 and fairness of any round),
    and the ratio to python-redis-lock is taken within each round.
    """
    impls = (*IMPLS, RING)
    runs: dict[str, list[ContendedStats]] = {impl.label: [] for impl in impls}
    errors: dict[str, list[str]] = {impl.label: [] for impl in impls}
    for r in range(rounds):
        for impl in impls if r % 2 == 0 else impls[::-1]:
            try:
                run = run_contended(impl, port, n, seconds)
                runs[impl.label].append(contended_stats(run, n, seconds))
                errors[impl.label].extend(run.errors)
            except Exception as exc:
                errors[impl.label].append(f"{type(exc).__name__}: {exc}")
    reference = runs.get(REFERENCE, [])
    rows = [
        contended_row(impl.label, runs[impl.label], reference, "; ".join(errors[impl.label]))
        for impl in impls
    ]
    print(
        f"\n## B. Contended: {n} processes, one lock, hold 1 ms, "
        f"{rounds} interleaved rounds x {seconds:g} s\n"
    )
    print_table(
        [
            "impl",
            "acq/s",
            "vs prl (rounds)",
            "fairness (worst)",
            "handoff p50 us",
            "p99 us (worst)",
            "starved",
            "cmds/acq",
            "sent/acq",
            "overlaps",
            "error",
        ],
        rows,
    )
    print(f"\nINFO commandstats per acquisition, Lua internals included (N={n}):\n")
    print_table(
        ["impl", "commands/acq"],
        [[label, top_commands(stats)] for label, stats in runs.items() if stats],
    )


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def top_commands(stats: Sequence[ContendedStats]) -> str:
    total = sum(s.acquisitions for s in stats)
    commands: Counter[str] = sum((s.commands for s in stats), Counter())
    if not total:
        return ""
    return ", ".join(
        f"{cmd} {calls / total:.2f}" for cmd, calls in commands.most_common(TOP_COMMANDS)
    )


def contended_row(
    label: str, stats: Sequence[ContendedStats], ref: Sequence[ContendedStats], error: str
) -> list[str]:
    """Median round; worst round for fairness and p99; totals for counts."""
    if not stats:
        return [label, "ERROR", "", "", "", "", "", "", "", "", error]
    ratios = [s.acq_per_s / r.acq_per_s for s, r in zip(stats, ref, strict=False) if r.acq_per_s]
    ratio = (
        f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        if ratios
        else "n/a"
    )
    worst = min(stats, key=lambda s: s.fairness)
    p99s = [s.handoff_p99_us for s in stats if s.handoff_p99_us is not None]
    total = sum(s.acquisitions for s in stats)
    return [
        label,
        f"{statistics.median(s.acq_per_s for s in stats):,.0f}",
        ratio,
        f"{statistics.median(s.fairness for s in stats):.2f} "
        f"({worst.fairness:.2f}: {worst.per_proc_min_max[0]}/{worst.per_proc_min_max[1]})",
        fmt_us(_median([s.handoff_p50_us for s in stats])),
        f"{fmt_us(_median(p99s))} ({fmt_us(max(p99s, default=None))})",
        str(max(s.starved for s in stats)),
        f"{sum(sum(s.commands.values()) for s in stats) / total:.2f}" if total else "n/a",
        f"{sum(s.sent for s in stats) / total:.2f}" if total else "n/a",
        str(sum(s.overlaps for s in stats)),
        error,
    ]


def fmt_us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


# --- part C: outage ------------------------------------------------------------------


def _ours_outage_call(port: int) -> tuple[redis.Redis, Callable[[], Any]]:
    client = client_from_url(f"redis://{HOST}:{port}/0", socket_timeout=1)
    lock = Lock("bench-outage", ttl=TTL, wait=0, client=client, prefix="bench")
    return client, lock.acquire


def _redis_py_outage_call(port: int) -> tuple[redis.Redis, Callable[[], Any]]:
    client = redis.Redis(host=HOST, port=port, socket_timeout=1)
    lock = client.lock("bench-outage", timeout=TTL)
    return client, lambda: lock.acquire(blocking=False)


OUTAGE_IMPLS = (("ours", _ours_outage_call), ("redis-py Lock", _redis_py_outage_call))


def _outage_probe(
    make: Callable[[int], Any], port: int, warm: bool, ready: Any, go: Any, out: Any
) -> None:
    client, call = make(port)
    if warm:
        client.ping()  # an open connection, as a running app would have
    ready.set()
    go.wait(timeout=30)
    start = time.monotonic()
    try:
        outcome = f"returned {call()!r}"
    except Exception as exc:
        outcome = type(exc).__name__
    out.put((time.monotonic() - start, outcome))


def outage_case(make: Callable[[int], Any], paused: bool, timeout: float) -> str:
    """One probe: 'refused' on a closed port, or 'paused' on a SIGSTOPped server."""
    server = RedisServer().start() if paused else None
    port = server.port if server else free_port()
    ready, go, out = CTX.Event(), CTX.Event(), CTX.Queue()
    proc = CTX.Process(target=_outage_probe, args=(make, port, paused, ready, go, out), daemon=True)
    try:
        proc.start()
        if not ready.wait(timeout=10):
            return "probe did not start"
        if server:
            server.pause()
        go.set()
        try:
            elapsed, outcome = out.get(timeout=timeout)
        except queue.Empty:
            return f"> {timeout * 1000:,.0f} (no answer)"
        return f"{elapsed * 1000:,.0f} ({outcome})"
    finally:
        if server:
            server.stop()  # resumes it first
        stop_process(proc)


def part_c(timeout: float) -> None:
    rows = []
    for label, make in OUTAGE_IMPLS:
        row = [label]
        for paused in (False, True):
            try:
                row.append(outage_case(make, paused, timeout))
            except Exception as exc:
                row.append(f"ERROR {type(exc).__name__}: {exc}")
        rows.append(row)
    print("\n## C. Outage: ms until one lock call fails (socket_timeout=1)\n")
    print_table(["impl", "refused (closed port)", "paused (SIGSTOP)"], rows)


# --- part D: memory per live lock ----------------------------------------------------

MEMORY_TTL = 300  # seconds; no lock may expire while being counted
MEMORY_LOCKS = 10_000  # live locks per implementation (--quick: QUICK_MEMORY_LOCKS)
QUICK_MEMORY_LOCKS = 2_000
MEMORY_CHILD_TIMEOUT = 120.0  # seconds, plus MEMORY_PER_LOCK_TIMEOUT per lock
MEMORY_PER_LOCK_TIMEOUT = 0.02


def memory_lock_name(i: int) -> str:
    """Names of one length for every implementation and lock: ``bench:mem:00001234``."""
    return f"bench:mem:{i:08d}"


class SampleKey(NamedTuple):
    key: str
    type: str
    elements: int | None  # fields/items of a hash, list, set or zset; None for a string
    ttl_ms: int  # PTTL: -1 = no expiry
    bytes: int  # MEMORY USAGE key SAMPLES 0
    shared: bool  # the key's name does not contain the lock's: other locks use it too


@dataclass
class MemoryResult:
    n: int
    used_bytes: int  # used_memory after - before
    keys: int  # DBSIZE after - before
    sample: list[SampleKey]  # the keys of the first lock, acquired alone


def settled_used_memory(client: redis.Redis) -> int:
    """INFO used_memory once two readings 50 ms apart agree (or after ~2 s).

    Waits out incremental rehashing and the client-buffer resizing of Redis's
    cron, both of which briefly hold memory that is not the locks'.
    """
    last = -1
    for _ in range(40):
        now = int(client.info("memory")["used_memory"])
        if now == last:
            break
        last = now
        time.sleep(0.05)
    return last


def sample_keys(client: redis.Redis, name: str) -> list[SampleKey]:
    """Every key in the database, which holds only lock ``name``'s, described."""
    sizes = {"hash": "HLEN", "list": "LLEN", "set": "SCARD", "zset": "ZCARD"}
    sample = []
    for raw in sorted(client.scan_iter(count=1000)):
        key = raw.decode()
        kind = client.type(raw).decode()
        elements = client.execute_command(sizes[kind], raw) if kind in sizes else None
        usage = client.memory_usage(raw, samples=0) or 0
        shared = name not in key
        sample.append(SampleKey(key, kind, elements, client.pttl(raw), usage, shared))
    return sample


def _live_lock_memory(impl: Impl, port: int, n: int) -> MemoryResult:
    """In a child: hold ``n`` locks of ``impl`` at once on one connection, count the cost."""
    warm = impl.build(port, "bench:mem:warm-up0", ttl=MEMORY_TTL)
    client = warm.client
    checked(warm.acquire)  # connects; loads the implementation's Lua scripts, if any
    warm.release()
    client.flushall(asynchronous=False)  # the warm-up's leftovers go; the script cache stays
    if client.dbsize():
        raise RuntimeError("keyspace not empty after FLUSHALL")
    before_bytes, before_keys = settled_used_memory(client), client.dbsize()
    held = []  # keep every lock object alive while counting
    sample: list[SampleKey] = []
    for i in range(n):
        contender = impl.build(port, memory_lock_name(i), client=client, ttl=MEMORY_TTL)
        checked(contender.acquire)
        held.append(contender)
        if i == 0:
            sample = sample_keys(client, memory_lock_name(0))
    after_bytes, after_keys = settled_used_memory(client), client.dbsize()
    return MemoryResult(n, after_bytes - before_bytes, after_keys - before_keys, sample)


def part_d(port: int, n: int) -> None:
    """Each implementation in its own child, one after the other, on an empty keyspace.

    Memory does not drift with the VM's load the way time does, so no rounds.
    The locks are left held: the next implementation's FLUSHALL (and finally
    stopping the server) drops them.
    """
    impls = [impl for impl in IMPLS if impl.memory]
    results: dict[str, MemoryResult] = {}
    errors: dict[str, str] = {}
    timeout = MEMORY_CHILD_TIMEOUT + n * MEMORY_PER_LOCK_TIMEOUT
    for impl in impls:
        try:
            results[impl.label] = run_in_child(_live_lock_memory, (impl, port, n), timeout)
        except Exception as exc:
            errors[impl.label] = str(exc)
    floor = results.get(FLOOR)
    floor_per_lock = floor.used_bytes / floor.n if floor else None
    rows = []
    for impl in impls:
        label = impl.label
        res = results.get(label)
        if res is None:
            rows.append([label, "ERROR", "", "", "", "", errors.get(label, "no result")])
            continue
        per_lock = res.used_bytes / res.n
        ratio = f"{per_lock / floor_per_lock:.2f}x" if floor_per_lock else "n/a"
        rows.append(
            [
                label,
                f"{per_lock:,.0f}",
                ratio,
                f"{res.keys / res.n:.3f}",
                f"{sum(k.bytes for k in res.sample):,}",
                " + ".join(describe_key(k) for k in res.sample),
                "",
            ]
        )
    print(
        f"\n## D. Memory per live lock: {n:,} distinct locks held at once, TTL "
        f"{MEMORY_TTL} s, names like {memory_lock_name(1234)}, fresh server\n"
    )
    print_table(
        [
            "impl",
            "bytes/live lock",
            "vs floor",
            "keys/live lock",
            "one lock: MEMORY USAGE",
            "one lock's keys",
            "error",
        ],
        rows,
    )
    print(
        f"\nThe sampled lock's keys ({memory_lock_name(0)}, acquired alone on the empty "
        f"keyspace; shared = other live locks use the key too):\n"
    )
    print_table(
        ["impl", "key", "type", "MEMORY USAGE", "PTTL ms"],
        [
            [label, k.key, key_kind(k), f"{k.bytes:,}", f"{k.ttl_ms:,}"]
            for label, res in results.items()
            for k in res.sample
        ],
    )


def key_kind(k: SampleKey) -> str:
    """'string', or 'hash, 1 field, shared'."""
    parts = [k.type]
    if k.elements is not None:
        noun = _ELEMENT[k.type]
        parts.append(f"{k.elements} {noun}{'' if k.elements == 1 else 's'}")
    if k.shared:
        parts.append("shared")
    return ", ".join(parts)


def describe_key(k: SampleKey) -> str:
    """'string 120 B', or 'hash (1 field, shared) 120 B'."""
    kind, _, detail = key_kind(k).partition(", ")
    return f"{kind} ({detail}) {k.bytes} B" if detail else f"{kind} {k.bytes} B"


_ELEMENT = {"hash": "field", "list": "item", "set": "member", "zset": "member"}


# --- output and main -----------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def header(server: RedisServer) -> str:
    versions = ", ".join(
        f"{dist} {_version(dist)}" for dist in ("redis", "hiredis", "python-redis-lock", "pottery")
    )
    return (
        f"# Lock benchmark: redis-server {server.version()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores; {versions}"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~30 s smoke run")
    parser.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="contended window per impl, N and round (default 3, --quick 1)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="interleaved contended rounds per N (default 3, --quick 1)",
    )
    parser.add_argument(
        "--locks",
        type=int,
        default=None,
        help=f"part D: live locks held per impl (default {MEMORY_LOCKS:,}, "
        f"--quick {QUICK_MEMORY_LOCKS:,})",
    )
    args = parser.parse_args(argv)
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.seconds <= 0:
        parser.error("--seconds must be > 0")
    if args.locks is None:
        args.locks = QUICK_MEMORY_LOCKS if args.quick else MEMORY_LOCKS
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if args.locks < 1:
        parser.error("--locks must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run_seconds = 0.3 if args.quick else 1.5
    started = time.monotonic()
    with RedisServer() as server:
        print(header(server))
        print(
            f"server 127.0.0.1:{server.port}; part B hold {HOLD * 1000:g} ms, "
            f"starved = a wait > {STARVED_WAIT:g} s or no acquisition"
        )
        part_a(server.port, run_seconds)
        for n in (4, 16):
            part_b(server.port, n, args.seconds, args.rounds)
    part_c(QUICK_OUTAGE_TIMEOUT if args.quick else OUTAGE_TIMEOUT)
    with RedisServer() as server:  # fresh: nothing left over from parts A-C
        part_d(server.port, args.locks)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
