"""Benchmark django_redcoord's RateLimiter against other Redis rate limiters for Python.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C. Every implementation gets its own new plain client in each process
(``redis.Redis(host, port)``, hiredis parser when installed; django-ratelimit
gets django-redis's, limits and throttled-py build theirs from the URL), and a
fresh namespace in each run. The server has the redis-cell module loaded
(``--loadmodule``, built by ``make redis-cell`` from ``third_party/``) when it
is built; the peers do not use it, and the CL.THROTTLE rows are left out
without it. Implementations (what one decision costs in Redis in brackets):

* ``ours, CL.THROTTLE (track=True)``: ``RateLimiter("<N>/s;burst=<B>",
  name=...)`` with its defaults, ``hit(key).allowed``, on the server with the
  module: the server's ``CL.THROTTLE`` decides, pipelined with an EVALSHA
  that counts the hit in the limiter's busiest-keys zset of the server's
  minute (TIME, ZSCORE, ZINCRBY; one round trip).
  What users run on a server with the module.
* ``ours, CL.THROTTLE (track=False)``: the command alone.
* ``ours, script (track=True)``: the same limiter with ``native=False`` (what
  users run on a server without the module): one EVALSHA (TIME, HGET, HSET,
  PEXPIRE on the key's hash, and ZSCORE + ZINCRBY on the busiest-keys zset;
  RENAME, ZADD and PEXPIRE once a minute when the minute turns).
* ``ours, script (track=False)``: the script without the busiest-keys count.
* ``bare CL.THROTTLE``: ``client.execute_command("CL.THROTTLE", ...)``, the
  module's command with no library around it: what ours adds to it.
* ``ours window (track=True)``: part C only, the sliding-window counter
  ``"50/s;window"`` (TIME, HGET x 2, HINCRBY, HDEL, PEXPIRE, ZSCORE, ZINCRBY).
* ``django-ratelimit``: ``django_ratelimit.core.get_usage(..., increment=True)``
  through a django-redis cache (Django configured in this script with
  ``settings.configure``); a fixed window on the client's clock (SET NX EX,
  then an EVAL of EXISTS + INCRBY once the key exists: two round trips).
* ``limits moving-window`` / ``fixed-window`` / ``sliding-window-counter``:
  ``limits.strategies`` on ``limits.storage.RedisStorage`` (one EVALSHA each;
  the moving window keeps a timestamp per admitted request in a list,
  timestamps from the client's clock).
* ``throttled-py gcra`` / ``token_bucket`` / ``leaking_bucket`` /
  ``fixed_window`` / ``sliding_window``: ``throttled.Throttled(using=...,
  quota=per_sec(N, burst=B), store=RedisStore(...)).limit(key)`` (one EVALSHA
  each, but fixed_window: INCRBY, then EXPIRE in a second round trip on a
  window's first hit). Its token and leaky buckets read TIME in whole
  seconds, so they refill once a second; its token bucket sets EXPIRE
  floor(2 x B / r) after each admission, which is EXPIRE 0 (the state is
  deleted: the bucket is full again at once) whenever B / r < 0.5 s, as in
  part C, where it then never refuses.
* ``bare INCR (floor)``: ``client.incr(key)``, one plain command and one round
  trip: not a rate limiter, the least any of them can cost.

A library that is not installed is left out with a note.

Parts A and B, throughput: one process makes decisions back to back with a
policy of 100,000/s, burst 100,000, so that nothing is refused (the
``refused`` column must be 0; a window peer gets 100,000 per second). Part A
decides one key; part B 1,000 keys in turn (key i, i+1, ...: every key is
revisited about every 0.2 s, so its state is warm; ours' busiest-keys zset
holds 1,000 members). This VM's speed drifts by up to 2x over seconds, so
the implementations are interleaved finely: one forked child per part builds
every implementation (each with its own client) and warms each up with 50
decisions (connect, load scripts), then runs ``--rounds`` rounds (default
24); a round gives every implementation one slice of ``--seconds`` (default
0.25), in alternating order (forward, backward, ...), so that the rows a
ratio compares ran within the same ~3 s. Reported per implementation (median
round; ratios are taken within each round, then the median over rounds):

* decisions/s: decisions in the slice, per second
* vs best peer: decisions/s divided by that of the fastest peer in the same
  round (ours and the INCR floor are not peers); which peer was the best in
  how many rounds is listed below the table
* time vs INCR: time per decision divided by that of a bare INCR in the same
  round (INCR's decisions/s divided by this row's): 1.00x = as cheap as one
  plain command round trip
* p10-p90: decisions/s of the 10th and 90th percentile round
* cmds/dec: Redis commands per decision from INFO commandstats (read right
  before and right after each slice, INFO itself excluded; nothing else talks
  to the server meanwhile), over all rounds. Redis counts the
  commands a Lua script runs as well, so this is server work; the most
  frequent commands are listed below the table.
* sent/dec: sends the client made per decision (counted in redis-py's
  Connection.send_packed_command, which every redis-py command, script call
  and pipeline goes through, ours and django-redis's included): round trips
* srv CPU us/dec: CPU time of the redis-server process (INFO cpu, user +
  system, read with the commandstats) per decision: the server's whole share,
  socket reads and writes included
* client CPU us/dec: CPU time of the benchmark process (time.process_time:
  Python, the library, redis-py, its socket syscalls) per decision. A
  decision's time is about client CPU + server CPU + the wake-ups between.
* tracks: whether the row also counts the key in a busiest-keys structure
* refused: decisions that said no (must be 0 here)

Below part B: whether the targets are met by ours with track=True (both paths): decisions/s
>= 1.0x the best peer's, and time per decision <= 1.2x a bare INCR's (median
over rounds, single key and many keys); both are reported as measured, with
nothing tuned.

Part C, accuracy: 8 processes hammer ONE key for ``--hammer-seconds``
(default 3) with a tight policy, as fast as each can (no sleeps): GCRA
``50/s;burst=10`` for ours, throttled-py's GCRA, token bucket and leaky bucket
(``per_sec(50, burst=10)``), and each window limiter's closest equivalent, 50
per second (B = 50: a window lets its whole limit through at once). Each
process warms up on another key first; the parent reads Redis ``TIME`` just
before it lets them go and again once all have stopped. Reported:

* admitted: decisions that said yes, all processes
* elapsed: the two Redis TIME readings apart (it includes the few ms between
  the start reading and the first decision, and between the last decision and
  the end reading, which makes the bound slightly generous: at 50/s, one more
  request per 20 ms)
* bound: floor(B + elapsed x r), the most an exact limiter with bucket size B
  and rate r may admit in that time starting full
* over: admitted - bound (0 or less is within the limit; less than about -1
  means it admitted fewer than it promised)
* max 1 s: the most admissions inside any 1 s span, from the clients'
  monotonic clock at the moment each yes returned, all processes together,
  against B + r (indicative: a return can lag its decision by a few ms on 2
  busy cores, so a few over is timing noise). For the GCRA rows B + r = 60;
  for a window row it is 100, twice the 50 it states per window: a fixed
  window can admit that across a boundary, a sliding-window counter nearly
  that in the second after an idle start (a full previous window that it
  weighs as if spread evenly), a moving window states at most 50 (its
  timestamps are the clients' clocks, taken before the round trip).
* decisions/s: all processes together (contended; informational)
* ours' GCRA rows only: every Decision is checked for consistent fields:
  when allowed, retry_after = 0, 0 <= remaining <= B-1 and 0 < reset <= B x
  interval; when refused, remaining = 0, 0 < retry_after <= interval and
  reset <= B x interval (interval = 1/r; 1 ms of rounding allowed; through
  CL.THROTTLE, which answers in whole seconds rounded up, the time bounds are
  rounded up to whole seconds plus one).
  Violations are counted below the table with an example.

Part D, ours' Decision fields in one process (no contention), the script
path (``native=False``: the command's whole seconds would make it slow): on a fresh key,
the remaining sequence of the first B+1 hits of ``50/s;burst=10`` (expected
9, 8, ... 0, then refused), and 20 times: hit until refused, sleep that
decision's retry_after, hit again, which must be admitted (also for the
sliding window ``50/s;window``).

Run from the repository root::

    .venv/bin/python bench/bench_ratelimit.py [--quick] [--seconds N] [--rounds R]

The default run takes about 3-4 minutes on 2 cores; ``--quick`` is a ~30 s
smoke run (4 rounds of 0.1 s slices, a 1 s hammer; numbers only indicative).
Peers needed (PyPI): django-ratelimit, limits, throttled-py (plus this
project's own django-redis): ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import math
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import redis
from support.cli import Options
from support.contenders import SendCounter, contend, race
from support.processes import run_in_child, run_main
from support.servers import HOST, RedisServer, command_calls
from support.tables import (
    fmt_ratios,
    header,
    median,
    percentile,
    print_table,
    top_commands,
    versions,
)

from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.ratelimit import native as cell_native

try:
    import limits
    import limits.storage
    import limits.strategies
except ImportError:  # pragma: no cover - optional peer
    limits = None  # type: ignore[assignment]
try:
    import throttled
except ImportError:  # pragma: no cover - optional peer
    throttled = None  # type: ignore[assignment]
try:
    import django_ratelimit.core as django_ratelimit_core
except ImportError:  # pragma: no cover - optional peer
    django_ratelimit_core = None  # type: ignore[assignment]

WARM_UP = 50  # decisions before a throughput window
MANY_KEYS = 1_000  # part B: keys decided in turn
HAMMER_PROCS = 8  # part C: processes on one key
PROBES = 20  # part D: refused -> sleep retry_after -> hit again
TOP_COMMANDS = 12  # commands listed per implementation below the tables
CHILD_TIMEOUT = 60.0  # seconds a child may take beyond its planned run
TARGET_PEER = 1.0  # ours (track=True) decisions/s >= this x the best peer's
TARGET_INCR = 1.2  # ours (track=True) time per decision <= this x a bare INCR's
OURS_CELL = "ours, CL.THROTTLE (track=True)"
OURS = "ours, script (track=True)"
FLOOR = "bare INCR (floor)"
CELL = "bare CL.THROTTLE"
PIPELINE = "INCR+EXPIRE pipeline (not a limiter)"
MOVING_WINDOW = "limits moving-window"
#: the redis-cell module the server loads when built (make redis-cell)
REDIS_CELL = Path(
    os.environ.get(
        "REDCOORD_REDIS_CELL",
        Path(__file__).resolve().parent.parent / ".redcoord/redis-cell/libredis_cell.so",
    )
)
GCRA_PEER = "throttled-py gcra"


@dataclass(frozen=True)
class Limit:
    """A policy as each implementation is given it: ``rate`` per second, bucket ``burst``."""

    rate: int
    burst: int


THROUGHPUT = Limit(100_000, 100_000)
ACCURACY = Limit(50, 10)

Decide = Callable[[str], bool]  # key -> allowed
Builder = Callable[[int, Limit, str], Decide]  # (port, limit, run tag)


# --- implementations ---------------------------------------------------------------


def _client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port)


#: Part C: ours' Decision field violations in this process (kind -> count, example).
FIELD_PROBLEMS: Counter[str] = Counter()
FIELD_EXAMPLES: dict[str, str] = {}


def _field_problem(kind: str, decision: Any) -> None:
    FIELD_PROBLEMS[kind] += 1
    FIELD_EXAMPLES.setdefault(
        kind,
        f"allowed={decision.allowed} remaining={decision.remaining} "
        f"reset={decision.reset:.3f} retry_after={decision.retry_after:.3f}",
    )


def check_decision(decision: Any, lim: Limit, whole_seconds: bool = False) -> None:
    """Count any field of a GCRA decision that contradicts the policy (1 ms slack;
    with ``whole_seconds``, CL.THROTTLE's reset: rounded up to seconds, plus one)."""
    interval = 1.0 / lim.rate
    full = lim.burst * interval + 0.001
    if whole_seconds:
        full = math.ceil(full) + 1
    if decision.allowed:
        if decision.retry_after != 0:
            _field_problem("allowed with retry_after != 0", decision)
        if not 0 <= decision.remaining <= lim.burst - 1:
            _field_problem("allowed with remaining outside 0..B-1", decision)
        if not 0 < decision.reset <= full:
            _field_problem("allowed with reset outside (0, B x interval]", decision)
    else:
        if decision.remaining != 0:
            _field_problem("refused with remaining != 0", decision)
        if not 0 < decision.retry_after <= interval + 0.001:
            _field_problem("refused with retry_after outside (0, interval]", decision)
        if not 0 <= decision.reset <= full:
            _field_problem("refused with reset outside [0, B x interval]", decision)


def _ours_builder(
    track: bool, window: bool = False, check: bool = False, native: bool = False
) -> Builder:
    def build(port: int, lim: Limit, tag: str) -> Decide:
        if window:
            policy = f"{lim.rate}/s;window"
        else:
            policy = f"{lim.rate}/s;burst={lim.burst}"
        limiter = RateLimiter(
            policy,
            name=f"api-{tag}",
            track=track,
            native=native,
            client=_client(port),
            prefix="bench",
        )
        if native:  # the server has the module: the command must be what decides
            limiter.hit(f"probe-{tag}")
            if not cell_native.known(limiter.client):
                raise RuntimeError("CL.THROTTLE did not decide: is the module loaded?")
        if not check:
            return lambda key: limiter.hit(key).allowed

        def decide(key: str) -> bool:
            decision = limiter.hit(key)
            check_decision(decision, lim, whole_seconds=native)
            return decision.allowed

        return decide

    return build


def _build_django_ratelimit(port: int, lim: Limit, tag: str) -> Decide:
    """Its core function on a django-redis cache; Django is configured by ``configure_django``."""
    get_usage = django_ratelimit_core.get_usage
    rate, group = f"{lim.rate}/s", f"bench-{tag}"

    def decide(key: str) -> bool:
        usage = get_usage(None, group=group, key=lambda _g, _r: key, rate=rate, increment=True)
        return not usage["should_limit"]

    return decide


def configure_django(url: str) -> None:
    """Django settings for django-ratelimit: a django-redis cache on our server."""
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            CACHES={
                "default": {
                    "BACKEND": "django_redis.cache.RedisCache",
                    "LOCATION": url,
                    "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
                }
            },
            RATELIMIT_USE_CACHE="default",
        )


def _limits_builder(strategy: str) -> Builder:
    def build(port: int, lim: Limit, tag: str) -> Decide:
        storage = limits.storage.RedisStorage(f"redis://{HOST}:{port}/0")
        limiter = limits.strategies.STRATEGIES[strategy](storage)
        item = limits.RateLimitItemPerSecond(lim.rate, 1)
        return lambda key: limiter.hit(item, tag, key)

    return build


def _throttled_builder(algorithm: str) -> Builder:
    def build(port: int, lim: Limit, tag: str) -> Decide:
        store = throttled.RedisStore(server=f"redis://{HOST}:{port}/0")
        quota = throttled.per_sec(lim.rate, burst=lim.burst)
        limiter = throttled.Throttled(
            using=algorithm, quota=quota, store=store, key_prefix=f"bench-{tag}"
        )
        return lambda key: not limiter.limit(key).limited

    return build


def _build_incr(port: int, lim: Limit, tag: str) -> Decide:
    client = _client(port)
    return lambda key: client.incr(key) > 0


def _build_incr_expire(port: int, lim: Limit, tag: str) -> Decide:
    """The hand-rolled limiter's round trip: INCR and EXPIRE pipelined (no MULTI, the cheaper
    way), the count not compared with anything."""
    client = _client(port)

    def decide(key: str) -> bool:
        pipe = client.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, 60)
        return pipe.execute()[0] > 0

    return decide


def _build_cell(port: int, lim: Limit, tag: str) -> Decide:
    client = _client(port)
    args = (lim.burst - 1, lim.rate, 1, 1)
    return lambda key: client.execute_command("CL.THROTTLE", f"cell-{tag}:{key}", *args)[0] == 0


@dataclass(frozen=True)
class Impl:
    label: str
    algorithm: str
    build: Builder | None  # None: its library is not installed
    role: str = "peer"  # "ours" | "peer" | "floor" | "reference"
    native: bool = False  # ours through CL.THROTTLE
    window: bool = False  # its bucket is its whole limit (B = r in part C)
    tracks: bool = False
    throughput: bool = True  # parts A and B
    accuracy: bool = True  # part C
    missing: str = ""

    def limit_for(self, lim: Limit) -> Limit:
        return Limit(lim.rate, lim.rate) if self.window else lim


def _peer(label: str, algorithm: str, build: Builder, installed: Any, dist: str, **kw: Any) -> Impl:
    if installed is None:
        return Impl(label, algorithm, None, missing=f"not installed ({dist})", **kw)
    return Impl(label, algorithm, build, **kw)


def implementations(cell: bool) -> list[Impl]:
    """Every row; ``cell``: the server has the redis-cell module loaded."""
    why = f"needs the redis-cell module ({REDIS_CELL} missing: make redis-cell)"

    def ours_cell(label: str, track: bool) -> Impl:
        build = _ours_builder(track=track, native=True) if cell else None
        return Impl(
            label,
            "GCRA",
            build,
            role="ours",
            tracks=track,
            native=True,
            missing="" if cell else why,
        )

    impls = [
        ours_cell(OURS_CELL, True),
        ours_cell("ours, CL.THROTTLE (track=False)", False),
        Impl(OURS, "GCRA", _ours_builder(track=True), role="ours", tracks=True),
        Impl("ours, script (track=False)", "GCRA", _ours_builder(track=False), role="ours"),
        Impl(
            "ours window (track=True)",
            "sliding-window counter",
            _ours_builder(track=True, window=True),
            role="ours",
            window=True,
            tracks=True,
            throughput=False,
        ),
        _peer(
            "django-ratelimit",
            "fixed window",
            _build_django_ratelimit,
            django_ratelimit_core,
            "django-ratelimit",
            window=True,
        ),
    ]
    for strategy, algorithm in (
        ("moving-window", "moving window (log)"),
        ("fixed-window", "fixed window"),
        ("sliding-window-counter", "sliding-window counter"),
    ):
        impls.append(
            _peer(
                f"limits {strategy}",
                algorithm,
                _limits_builder(strategy),
                limits,
                "limits",
                window=True,
            )
        )
    for algorithm, label, window in (
        ("gcra", "GCRA", False),
        ("token_bucket", "token bucket", False),
        ("leaking_bucket", "leaky bucket", False),
        ("fixed_window", "fixed window", True),
        ("sliding_window", "sliding-window counter", True),
    ):
        impls.append(
            _peer(
                f"throttled-py {algorithm}",
                label,
                _throttled_builder(algorithm),
                throttled,
                "throttled-py",
                window=window,
            )
        )
    impls.append(
        Impl(
            CELL,
            "GCRA (module)",
            _build_cell if cell else None,
            role="reference",
            missing="" if cell else why,
        )
    )
    impls.append(
        Impl(
            PIPELINE,
            "counter with a TTL (no limit)",
            _build_incr_expire,
            role="reference",
            accuracy=False,
        )
    )
    impls.append(Impl(FLOOR, "counter (no limit)", _build_incr, role="floor", accuracy=False))
    return impls


def run_tag() -> str:
    return secrets.token_hex(3)


# --- parts A and B: throughput --------------------------------------------------------


@dataclass
class Slice:
    """One implementation's slice of one round."""

    rate: float
    decisions: int
    refused: int
    commands: Counter[str]
    sent: int
    server_cpu: float  # seconds of redis-server CPU (user + sys) in the slice
    client_cpu: float  # seconds of this process's CPU in the slice


def server_cpu(client: redis.Redis) -> float:
    """CPU seconds the redis-server process has used (user + system)."""
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


class Runner:
    """One implementation in the throughput child: its decide function, its place in the keys."""

    def __init__(self, decide: Decide, keys: list[str]) -> None:
        self.decide, self.keys, self.next = decide, keys, 0

    def run(self, stats: redis.Redis, seconds: float) -> Slice:
        decide, keys, n_keys = self.decide, self.keys, len(self.keys)
        before, cpu_before = command_calls(stats), server_cpu(stats)
        SendCounter.reset()
        i = self.next
        refused = 0
        client_start = time.process_time()
        start = time.monotonic()
        end = start + seconds
        while True:
            if not decide(keys[i % n_keys]):
                refused += 1
            i += 1
            now = time.monotonic()
            if now >= end:
                break
        client_cpu = time.process_time() - client_start
        sent = SendCounter.read()
        cpu_after, after = server_cpu(stats), command_calls(stats)
        decisions, self.next = i - self.next, i
        return Slice(
            decisions / (now - start),
            decisions,
            refused,
            after - before,
            sent,
            cpu_after - cpu_before,
            client_cpu,
        )


def _throughput(
    impls: Sequence[Impl], port: int, n_keys: int, seconds: float, rounds: int
) -> tuple[list[dict[str, Slice]], dict[str, str]]:
    """In a child: build every implementation, then ``rounds`` rounds of one slice each."""
    SendCounter.install()
    runners: dict[str, Runner] = {}
    errors: dict[str, str] = {}
    for impl in impls:
        tag = run_tag()
        keys = [f"user-{tag}-{i}" for i in range(n_keys)]
        try:
            runner = Runner(impl.build(port, THROUGHPUT, tag), keys)
            for i in range(WARM_UP):
                runner.decide(keys[i % n_keys])
            runners[impl.label] = runner
        except Exception as exc:
            errors[impl.label] = f"{type(exc).__name__}: {exc}"
    stats = _client(port)
    per_round: list[dict[str, Slice]] = []
    labels = [impl.label for impl in impls]
    for r in range(rounds):
        this_round: dict[str, Slice] = {}
        for label in labels if r % 2 == 0 else labels[::-1]:
            runner = runners.get(label)
            if runner is None:
                continue
            try:
                this_round[label] = runner.run(stats, seconds)
            except Exception as exc:
                errors[label] = f"round {r + 1}: {type(exc).__name__}: {exc}"
                del runners[label]
        per_round.append(this_round)
    return per_round, errors


def best_peer(by_label: dict[str, Slice], impls: Sequence[Impl]) -> tuple[str, float] | None:
    peers = [
        (impl.label, by_label[impl.label].rate)
        for impl in impls
        if impl.role == "peer" and impl.label in by_label and not by_label[impl.label].refused
    ]
    return max(peers, key=lambda p: p[1]) if peers else None


def fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


@dataclass
class ThroughputResult:
    label: str
    n_keys: int
    rounds: list[dict[str, Slice]]
    best: list[tuple[str, float] | None]
    errors: dict[str, str]

    def vs(self, label: str, reference: str) -> list[float]:
        return [
            r[label].rate / r[reference].rate
            for r in self.rounds
            if label in r and reference in r and r[reference].rate
        ]

    def vs_best(self, label: str) -> list[float]:
        return [
            r[label].rate / b[1]
            for r, b in zip(self.rounds, self.best, strict=True)
            if b and label in r
        ]

    def vs_incr(self, label: str) -> list[float]:
        """Time per decision over a bare INCR's, per round."""
        return [1 / ratio for ratio in self.vs(label, FLOOR) if ratio]


def throughput_part(
    part: str, impls: Sequence[Impl], port: int, n_keys: int, seconds: float, rounds: int
) -> ThroughputResult:
    runnable = [impl for impl in impls if impl.throughput and impl.build is not None]
    timeout = CHILD_TIMEOUT + rounds * len(runnable) * (seconds + 0.1)
    try:
        per_round, errors = run_in_child(
            _throughput, (runnable, port, n_keys, seconds, rounds), timeout
        )
    except Exception as exc:
        per_round, errors = [], {impl.label: str(exc) for impl in runnable}
    result = ThroughputResult(
        part, n_keys, per_round, [best_peer(r, runnable) for r in per_round], errors
    )
    rows = [throughput_row(impl, result) for impl in runnable]
    what = "one key" if n_keys == 1 else f"{n_keys:,} keys in turn"
    print(
        f"\n## {part}. Throughput, one process, {what}: policy {THROUGHPUT.rate:,}/s burst "
        f"{THROUGHPUT.burst:,}; {rounds} rounds, each a {seconds:g} s slice per impl in "
        f"alternating order\n"
    )
    print_table(
        [
            "impl",
            "algorithm",
            "tracks",
            "decisions/s",
            "vs best peer",
            "time vs INCR",
            "p10-p90",
            "cmds/dec",
            "sent/dec",
            "srv CPU us/dec",
            "client CPU us/dec",
            "refused",
            "error",
        ],
        rows,
    )
    wins = Counter(b[0] for b in result.best if b)
    names = ", ".join(f"{label} {count}" for label, count in wins.most_common())
    print(f"\nBest peer (rounds won): {names or 'none'}")
    print(f"\nINFO commandstats per decision, Lua internals included ({what}):\n")
    print_table(
        ["impl", "commands/decision"],
        [[impl.label, commands_per_decision(per_round, impl.label)] for impl in runnable],
    )
    return result


def throughput_row(impl: Impl, result: ThroughputResult) -> list[str]:
    label = impl.label
    stats = [r[label] for r in result.rounds if label in r]
    error = result.errors.get(label, "")
    if not stats:
        return [label, impl.algorithm, "", "ERROR"] + [""] * 8 + [error or "no result"]
    decisions = sum(s.decisions for s in stats)
    rates = [s.rate for s in stats]
    vs_best = "(peer)" if impl.role == "peer" else ""
    vs_best = f"{fmt_ratios(result.vs_best(label), 'never')} {vs_best}".strip()
    ordered = sorted(rates)
    return [
        label,
        impl.algorithm,
        "yes" if impl.tracks else "no",
        f"{median(rates):,.0f}",
        vs_best,
        fmt_ratios(result.vs_incr(label), "never"),
        f"{percentile(ordered, 10):,.0f}-{percentile(ordered, 90):,.0f}",
        f"{sum(sum(s.commands.values()) for s in stats) / decisions:.2f}",
        f"{sum(s.sent for s in stats) / decisions:.2f}",
        f"{sum(s.server_cpu for s in stats) / decisions * 1e6:.1f}",
        f"{sum(s.client_cpu for s in stats) / decisions * 1e6:.1f}",
        str(sum(s.refused for s in stats)),
        error,
    ]


def commands_per_decision(per_round: list[dict[str, Any]], label: str) -> str:
    stats = [r[label] for r in per_round if label in r]
    commands: Counter[str] = sum((s.commands for s in stats), Counter())
    return top_commands(commands, sum(s.decisions for s in stats), TOP_COMMANDS)


def report_targets(results: Sequence[ThroughputResult], impls: Sequence[Impl]) -> None:
    print(
        "\n## Targets for ours with track=True (median over rounds): decisions/s >= "
        f"{TARGET_PEER:.1f}x the best peer's and limits' moving window's, time per decision <= "
        f"{TARGET_INCR:.1f}x a bare INCR's and an INCR+EXPIRE pipeline's\n"
    )
    runnable = {impl.label for impl in impls if impl.build is not None}
    rows = []
    for res in results:
        for label, untracked in (
            (OURS_CELL, "ours, CL.THROTTLE (track=False)"),
            (OURS, "ours, script (track=False)"),
        ):
            if label not in runnable:
                continue
            vs_best = median(res.vs_best(label))
            vs_incr = median(res.vs_incr(label))
            vs_pipe = median([1 / v for v in res.vs(label, PIPELINE) if v])
            vs_moving = median(res.vs(label, MOVING_WINDOW))
            what = "one key" if res.n_keys == 1 else f"{res.n_keys:,} keys"
            rows.append(
                [
                    f"{res.label} ({what})",
                    label,
                    fmt_ratio(vs_best),
                    verdict(vs_best, lambda v: v >= TARGET_PEER),
                    fmt_ratio(vs_moving),
                    verdict(vs_moving, lambda v: v >= TARGET_PEER),
                    fmt_ratio(vs_incr),
                    verdict(vs_incr, lambda v: v <= TARGET_INCR),
                    fmt_ratio(vs_pipe),
                    verdict(vs_pipe, lambda v: v <= TARGET_INCR),
                    fmt_ratios(res.vs(label, GCRA_PEER), "never"),
                    fmt_ratios(res.vs(untracked, label), "never"),
                ]
            )
    print_table(
        [
            "part",
            "row",
            "vs best peer",
            f">= {TARGET_PEER:.1f}x",
            "vs limits moving window",
            f">= {TARGET_PEER:.1f}x",
            "time vs INCR",
            f"<= {TARGET_INCR:.1f}x",
            "time vs INCR+EXPIRE",
            f"<= {TARGET_INCR:.1f}x",
            f"vs {GCRA_PEER}",
            "track=False vs True",
        ],
        rows,
    )
    print(
        f"\n(vs {GCRA_PEER}: the other GCRA, decisions/s ratio per round; track=False vs "
        f"True: what the busiest-keys count costs, as a decisions/s ratio)"
    )


def verdict(value: float | None, ok: Callable[[float], bool]) -> str:
    if value is None:
        return "n/a"
    return "met" if ok(value) else "NOT met"


# --- part C: accuracy ------------------------------------------------------------------


@dataclass
class HammerChild:
    admitted: list[float] = field(default_factory=list)  # monotonic time each yes returned
    refused: int = 0
    problems: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)


def _hammer(decide: Decide, key: str, t0: float, seconds: float, child: HammerChild) -> None:
    """Decide ``key`` as fast as this process can from ``t0`` for ``seconds``."""
    deadline = t0 + seconds
    while time.monotonic() < deadline:
        if decide(key):
            child.admitted.append(time.monotonic())
        else:
            child.refused += 1


def redis_time(client: redis.Redis) -> float:
    seconds, micros = client.time()
    return seconds + micros / 1e6


@dataclass
class Accuracy:
    lim: Limit
    admitted: int
    refused: int
    elapsed: float
    max_1s: int
    problems: Counter[str]
    examples: dict[str, str]
    errors: list[str]

    @property
    def bound(self) -> int:
        return math.floor(self.lim.burst + self.elapsed * self.lim.rate + 1e-9)


def hammer(impl: Impl, port: int, seconds: float) -> Accuracy:
    lim = impl.limit_for(ACCURACY)
    tag = run_tag()
    key = f"hot-{tag}"

    def contender(proc_id: int, window: Any, out: Any) -> None:
        child = HammerChild()

        def setup() -> Decide:
            decide = impl.build(port, lim, tag)
            decide(f"warm-{key}")  # connects, loads scripts; another key
            FIELD_PROBLEMS.clear()
            FIELD_EXAMPLES.clear()
            return decide

        def payload() -> HammerChild:
            child.problems, child.examples = Counter(FIELD_PROBLEMS), dict(FIELD_EXAMPLES)
            return child

        contend(
            proc_id,
            window,
            out,
            setup,
            lambda decide, t0: _hammer(decide, key, t0, seconds, child),
            payload,
        )

    client = _client(port)
    times: list[float] = []  # Redis TIME right before the start and once all have stopped
    try:
        run = race(
            HAMMER_PROCS,
            contender,
            timeout=seconds + CHILD_TIMEOUT,
            lead=0.0,
            at_start=lambda: times.append(redis_time(client)),
            at_end=lambda: times.append(redis_time(client)),
        )
    finally:
        client.close()
    children: list[HammerChild] = list(run.payloads.values())
    stamps = sorted(t for c in children for t in c.admitted)
    return Accuracy(
        lim=lim,
        admitted=len(stamps),
        refused=sum(c.refused for c in children),
        elapsed=times[1] - times[0],
        max_1s=max_in_span(stamps, 1.0),
        problems=sum((c.problems for c in children), Counter()),
        examples={k: v for c in children for k, v in c.examples.items()},
        errors=run.errors,
    )


def max_in_span(stamps: Sequence[float], span: float) -> int:
    """The most of the sorted ``stamps`` inside any half-open interval of length ``span``."""
    best, lo = 0, 0
    for hi, t in enumerate(stamps):
        while t - stamps[lo] >= span:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def part_c(impls: Sequence[Impl], port: int, seconds: float) -> None:
    runnable = [impl for impl in impls if impl.accuracy and impl.build is not None]
    rows = []
    problems: list[tuple[str, Accuracy]] = []
    for impl in runnable:
        if impl.role == "ours":
            impl = replace(
                impl,
                build=_ours_builder(
                    impl.tracks, impl.window, check=not impl.window, native=impl.native
                ),
            )
        try:
            acc = hammer(impl, port, seconds)
        except Exception as exc:
            rows.append([impl.label, "", "", "", "", "ERROR", "", "", "", "", "", f"{exc}"])
            continue
        if impl.role == "ours" and not impl.window:
            problems.append((impl.label, acc))
        policy = policy_text(impl, acc.lim)
        rows.append(
            [
                impl.label,
                policy,
                str(acc.lim.burst),
                str(acc.lim.rate),
                f"{acc.elapsed:.3f}",
                str(acc.admitted),
                str(acc.bound),
                f"{acc.admitted - acc.bound:+d}",
                f"{acc.max_1s} / {acc.lim.burst + acc.lim.rate}",
                f"{acc.refused:,}",
                f"{(acc.admitted + acc.refused) / seconds:,.0f}",
                "; ".join(acc.errors),
            ]
        )
    print(
        f"\n## C. Accuracy: {HAMMER_PROCS} processes hammer one key for {seconds:g} s; "
        f"bound = floor(B + elapsed x r), elapsed by Redis TIME\n"
    )
    print_table(
        [
            "impl",
            "policy as given",
            "B",
            "r/s",
            "elapsed s",
            "admitted",
            "bound",
            "over",
            "max 1 s / B+r",
            "refused",
            "decisions/s",
            "error",
        ],
        rows,
    )
    for label, acc in problems:
        checked = acc.admitted + acc.refused
        if not acc.problems:
            print(f"\n{label}: all {checked:,} Decisions had consistent fields.")
            continue
        print(f"\n{label}: Decision fields that contradict the policy (of {checked:,}):")
        for kind, count in acc.problems.most_common():
            print(f"* {kind}: {count:,} (e.g. {acc.examples.get(kind, '?')})")


def policy_text(impl: Impl, lim: Limit) -> str:
    if impl.label == PIPELINE:
        return "INCR k; EXPIRE k 60"
    if impl.role == "reference":
        return f"CL.THROTTLE k {lim.burst - 1} {lim.rate} 1 1"
    if impl.role == "ours":
        return f"{lim.rate}/s;window" if impl.window else f"{lim.rate}/s;burst={lim.burst}"
    if impl.label.startswith("django-ratelimit"):
        return f"rate='{lim.rate}/s'"
    if impl.label.startswith("limits"):
        return f"{lim.rate} per 1 second"
    if impl.window:
        return f"per_sec({lim.rate})"
    return f"per_sec({lim.rate}, burst={lim.burst})"


# --- part D: ours' Decision fields, one process ---------------------------------------


@dataclass
class ProbeResult:
    remaining: list[str]  # the first B+1 hits: remaining, or "refused"
    first_retry_ms: float
    admitted_after_wait: dict[str, int]  # policy -> probes admitted after sleeping retry_after
    retry_ms: dict[str, tuple[float, float]]  # policy -> min, max retry_after (ms)


def _probe(port: int) -> ProbeResult:
    client = _client(port)
    tag = run_tag()
    gcra = RateLimiter(
        f"{ACCURACY.rate}/s;burst={ACCURACY.burst}",
        name=f"probe-{tag}",
        native=False,
        client=client,
        prefix="bench",
    )
    remaining = []
    decision = None
    for _ in range(ACCURACY.burst + 1):
        decision = gcra.hit("fresh")
        remaining.append(str(decision.remaining) if decision.allowed else "refused")
    first_retry = decision.retry_after * 1000 if decision is not None else math.nan
    window = RateLimiter(
        f"{ACCURACY.rate}/s;window", name=f"probe-w-{tag}", client=client, prefix="bench"
    )
    admitted: dict[str, int] = {}
    retries: dict[str, tuple[float, float]] = {}
    for label, limiter in (("50/s;burst=10", gcra), ("50/s;window", window)):
        ok, waits = 0, []
        for _ in range(PROBES):
            while (decision := limiter.hit("probe")).allowed:
                pass
            waits.append(decision.retry_after * 1000)
            time.sleep(decision.retry_after)
            ok += limiter.hit("probe").allowed
        admitted[label] = ok
        retries[label] = (min(waits), max(waits))
    return ProbeResult(remaining, first_retry, admitted, retries)


def part_d(port: int) -> None:
    print("\n## D. Ours' Decision fields, one process, no contention\n")
    try:
        res = run_in_child(_probe, (port,), CHILD_TIMEOUT)
    except Exception as exc:
        print(f"ERROR: {exc}")
        return
    expected = [str(n) for n in range(ACCURACY.burst - 1, -1, -1)] + ["refused"]
    verdict_text = "as expected" if res.remaining == expected else f"EXPECTED {', '.join(expected)}"
    print(
        f"First {ACCURACY.burst + 1} hits on a fresh key (50/s;burst=10), remaining: "
        f"{', '.join(res.remaining)} ({verdict_text}); the refused one's retry_after "
        f"{res.first_retry_ms:.0f} ms\n"
    )
    print_table(
        ["policy", "refused, then slept retry_after: admitted", "retry_after min-max ms"],
        [
            [label, f"{ok}/{PROBES}", f"{res.retry_ms[label][0]:.0f}-{res.retry_ms[label][1]:.0f}"]
            for label, ok in res.admitted_after_wait.items()
        ],
    )


# --- output and main -----------------------------------------------------------------


LIBRARIES = (
    "redis",
    "hiredis",
    "Django",
    "django-redis",
    "django-ratelimit",
    "limits",
    "throttled-py",
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~30 s smoke run")
    cli.number("--seconds", 0.25, 0.1, "parts A and B: slice per impl and round", above=0)
    cli.number("--rounds", 24, 4, "parts A and B: interleaved rounds", least=1)
    what = f"part C: how long {HAMMER_PROCS} processes hammer one key"
    cli.number("--hammer-seconds", 3.0, 1.0, what, above=0)
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cell = REDIS_CELL.is_file()
    impls = implementations(cell)
    started = time.monotonic()
    with RedisServer(extra=["--loadmodule", str(REDIS_CELL)] if cell else []) as server:
        if django_ratelimit_core is not None:
            configure_django(server.url)  # before any fork; no connection is made here
        print(header("Rate limiter benchmark", server.version(), versions(LIBRARIES, None)))
        for impl in impls:
            if impl.build is None:
                print(f"left out: {impl.label}: {impl.missing}")
        print(f"server 127.0.0.1:{server.port}")
        results = [
            throughput_part("A", impls, server.port, 1, args.seconds, args.rounds),
            throughput_part("B", impls, server.port, MANY_KEYS, args.seconds, args.rounds),
        ]
        report_targets(results, impls)
        part_c(impls, server.port, args.hammer_seconds)
        part_d(server.port)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
