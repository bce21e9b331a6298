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
import queue
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple

import redis
from support import contenders
from support.cli import Options
from support.processes import CTX, run_in_child, run_main, stop_process
from support.servers import HOST, RedisServer, free_port
from support.tables import (
    fmt_ratios,
    header,
    median,
    per,
    percentile,
    print_table,
    top_commands,
    versions,
)

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

TTL = 10  # seconds; no lock should ever expire during the benchmark
HOLD = 0.001  # seconds held per contended acquisition
TOP_COMMANDS = 16  # commands listed in the per-acquisition breakdown
STARVED_WAIT = 2.0  # seconds: a single wait longer than this counts as starvation
FLOOR_SPIN = 0.0001  # seconds the floor sleeps between SET NX retries (see _build_floor)
CHILD_TIMEOUT = 60.0  # seconds a benchmark child may take beyond its planned run
OUTAGE_TIMEOUT = 15.0  # seconds one outage probe may take (--quick: QUICK_OUTAGE_TIMEOUT)
QUICK_OUTAGE_TIMEOUT = 6.0


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
    return fmt_ratios([v / ref for v, ref in zip(values, reference, strict=False) if ref], "never")


# --- part B: contended ---------------------------------------------------------------


@dataclass
class ContendedStats:
    """One round of one implementation."""

    share: contenders.Share
    handoff_p50_us: float | None
    handoff_p99_us: float | None
    starved: int
    acquisitions: int
    commands: Counter[str]
    sent: int
    overlaps: int


def run_contended(
    impl: Impl, port: int, n: int, seconds: float
) -> tuple[contenders.Race, Counter[str]]:
    """One round of ``impl``: ``n`` processes on one lock for ``seconds``; what they reported
    (records and sends each), and the server's commands meanwhile."""
    name = lock_name(f"b{n}", impl)

    def contender(proc_id: int, window: Any, out: Any) -> None:
        records: list[contenders.Record] = []
        contenders.SendCounter.install()

        def setup() -> Contender:
            built = impl.build(port, name, proc_id, n) if impl.ring else impl.build(port, name)
            built.client.ping()  # connect before the "before" command snapshot
            return built

        def run(built: Contender, t0: float) -> None:
            contenders.SendCounter.reset()
            contenders.hold_loop(built.acquire, built.release, t0, seconds, records, HOLD)

        contenders.contend(
            proc_id, window, out, setup, run, lambda: (records, contenders.SendCounter.read())
        )

    stats_client = redis.Redis(host=HOST, port=port)
    try:
        return contenders.race_on(stats_client, n, contender, timeout=seconds + CHILD_TIMEOUT)
    finally:
        stats_client.close()


def contended_stats(
    run: contenders.Race, commands: Counter[str], n: int, seconds: float
) -> ContendedStats:
    per_proc = [run.payloads.get(i, ([], 0))[0] for i in range(n)]
    counts = [contenders.in_window(records, run.t0 + seconds) for records in per_proc]
    merged = sorted((r[1], r[2], r[0], pid) for pid, recs in enumerate(per_proc) for r in recs)
    handoffs = sorted(
        nxt[0] - prev[1] for prev, nxt in pairwise(merged) if nxt[3] != prev[3] and nxt[2] < prev[1]
    )
    return ContendedStats(
        share=contenders.share(counts, seconds),
        handoff_p50_us=percentile(handoffs, 50) * 1e6 if handoffs else None,
        handoff_p99_us=percentile(handoffs, 99) * 1e6 if handoffs else None,
        starved=contenders.count_starved(per_proc, STARVED_WAIT),
        acquisitions=len(merged),
        commands=commands,
        sent=sum(sent for _, sent in run.payloads.values()),
        overlaps=contenders.count_overlaps((start, end) for start, end, _, _ in merged),
    )


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
                run, commands = run_contended(impl, port, n, seconds)
                runs[impl.label].append(contended_stats(run, commands, n, seconds))
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
        [
            [
                label,
                top_commands(
                    sum((s.commands for s in stats), Counter()),
                    sum(s.acquisitions for s in stats),
                    TOP_COMMANDS,
                ),
            ]
            for label, stats in runs.items()
            if stats
        ],
    )


def contended_row(
    label: str, stats: Sequence[ContendedStats], ref: Sequence[ContendedStats], error: str
) -> list[str]:
    """Median round; worst round for fairness and p99; totals for counts."""
    if not stats:
        return [label, "ERROR", "", "", "", "", "", "", "", "", error]
    shares = [s.share for s in stats]
    ratios = [
        s.share.acq_per_s / r.share.acq_per_s
        for s, r in zip(stats, ref, strict=False)
        if r.share.acq_per_s
    ]
    p99s = [s.handoff_p99_us for s in stats if s.handoff_p99_us is not None]
    total = sum(s.acquisitions for s in stats)
    return [
        label,
        *contenders.share_cells(shares, fmt_ratios(ratios)),
        fmt_us(median(s.handoff_p50_us for s in stats)),
        f"{fmt_us(median(p99s))} ({fmt_us(max(p99s, default=None))})",
        str(max(s.starved for s in stats)),
        per(sum(sum(s.commands.values()) for s in stats), total),
        per(sum(s.sent for s in stats), total),
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

LIBRARIES = ("redis", "hiredis", "python-redis-lock", "pottery")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~30 s smoke run")
    cli.number("--seconds", 3.0, 1.0, "contended window per impl, N and round", above=0)
    cli.number("--rounds", 3, 1, "interleaved contended rounds per N", least=1)
    cli.number(
        "--locks", MEMORY_LOCKS, QUICK_MEMORY_LOCKS, "part D: live locks held per impl", least=1
    )
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run_seconds = 0.3 if args.quick else 1.5
    started = time.monotonic()
    with RedisServer() as server:
        print(header("Lock benchmark", server.version(), versions(LIBRARIES)))
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
