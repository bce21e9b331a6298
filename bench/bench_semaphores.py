"""Benchmark django_redcoord's Semaphore against other Redis semaphores for Python.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C; part A's overlap checker uses a second one (see below). Every
implementation gets ``permits=2`` and its own new client in each process, a
plain ``redis.Redis(host, port, socket_timeout=60)``, and a fresh name in each
run. (With redis-py 8's default socket_timeout of 5 s, redis-semaphore and
redis-rate-limiters cannot wait longer than 5 s: their single BLPOP outlasts
the socket timeout, redis-py's default retries re-send it, and a 10 s wait
ends in TimeoutError after about a minute. Ours and py-redis-semaphore block
in chunks below the socket timeout.) Implementations:

* ``ours``: ``django_redcoord.Semaphore`` (FIFO queue, handoff by BLPOP, a
  lease per permit)
* ``Redis in Action fair``: the book's "fair semaphore", written here: a
  counter for ordering, an owner ZSET and a timeout ZSET; an attempt is two
  MULTI pipelines (drop timed-out holders, INCR the counter; then ZADD to both
  sets and ZRANK in the owner set) and, if the rank is >= permits, a third
  that takes the entry out again; a blocking acquire retries after sleeping
  ``RIA_RETRY`` (10 ms). No lock around the attempt (the book adds one later
  to close a race; this is the version without it). The race: with one
  holder in, A draws ticket 5 and B ticket 6; B ranks 1 (admitted), then A
  adds 5 and ranks 1 too (admitted): three holders. The max holders column
  shows how often that happens.
* ``redis-semaphore`` (PyPI, import ``redis_semaphore``): a list of permit
  tokens taken by BLPOP, the holders in a hash; with
  ``stale_client_timeout`` every acquire first pushes back the tokens of
  holders older than it. (Its timestamps read TIME's microseconds as a
  decimal fraction without zero padding, 5123 us as .5123 s, so that timeout
  is off by up to +-1 s.)
* ``redis-rate-limiters`` (PyPI, import ``limiters``): ``SyncSemaphore``, a
  list of permit tokens taken by BLPOP; its ``expiry`` is refreshed on every
  acquire and release and expires the whole semaphore, which the next
  acquire re-creates full.
* ``py-redis-semaphore`` (PyPI) is used instead of ``redis-semaphore`` when it
  is the one installed: both install the module ``redis_semaphore``, so only
  one of them can be. It keeps a lease per holder in a ZSET (heartbeat thread
  while held), and waiters BLPOP a notify list that releases push to,
  re-checking every ``blpop_timeout`` (5 s).

A library that is not installed is left out with a note. The same settings
are used for every implementation: a lease of ``LEASE_A`` (10 s) in part A
(ours: ttl; Redis in Action: timeout; redis-semaphore:
stale_client_timeout; redis-rate-limiters: expiry; py-redis-semaphore:
lock_timeout), none of which runs out while a holder lives, and 2 s in part B.

Part A, contended: N processes (4, then 16) loop on ONE semaphore: acquire
(blocking), hold 1 ms, release. ``--rounds`` interleaved rounds (default 3)
each run every implementation for ``--seconds`` (default 8), in alternating
order (forward, backward, ...), so a burst of noise from the VM's neighbours
lands on one round of each rather than on all of one. Reported per
implementation (median round unless said otherwise):

* acq/s: acquisitions that returned inside the run window, per second
* vs best peer: acq/s divided by that of the fastest other implementation
  in the same round (ours not counted as a peer; a peer that let more than 2
  in during that round is not counted either); median and the range over
  rounds. The best peer of each round is listed below the table.
* fairness: min/max acquisitions per process in the window (1.0 = perfectly
  even); in brackets the worst round with its two counts
* starved: processes with any single wait > 2 s, or no acquisition at all
  in the window (worst round)
* max holders: the overlap checker. After acquiring, each holder INCRs a
  counter and keeps the reply; before releasing it DECRs it. The reply is the
  number of holders at that moment, so it must never exceed 2. Shown: the
  largest reply over all rounds, and ``viol`` = acquisitions (all rounds)
  whose reply was > 2. The counter lives on a second throwaway redis-server
  so that its commands are in neither cmds/acq nor sent/acq; its two round
  trips are part of every hold (each hold is 1 ms + about 0.1-0.2 ms).
* cmds/acq: Redis commands per acquisition from INFO commandstats of the
  benchmark server (INFO itself excluded), over the whole run (all rounds)
  divided by all acquisitions, also those that returned after the window.
  Redis counts the commands a Lua script runs as well, so this is server
  work, failed attempts and polling included; the most frequent commands are
  listed below the table.
* sent/acq: sends the clients made per acquisition (counted in redis-py's
  Connection.send_packed_command in each process, which every redis-py
  command and pipeline goes through; a MULTI/EXEC pipeline is one send):
  round trips, Lua internals not included, the checker's left out

Part B, permits after killed holders: for each implementation two holder
processes acquire one after the other (lease 2 s where the implementation
has one) and are SIGKILLed while holding; then a fresh process, started and
connected beforehand, calls acquire once with a wait of 10 s. All
implementations run side by side (their holders are killed at the same
moment, each implementation on its own name), so part B takes ~15 s whatever
the options. Reported, in seconds from the SIGKILL (CLOCK_MONOTONIC, shared
by all processes):

* lease end: when the lease that should return a permit ran out: the first
  holder's grant + 2 s (a lease per permit; the grants came shortly before
  the kill), or for redis-rate-limiters the last holder's (its expiry is the
  whole semaphore's, re-armed by every call); "-" without a lease
* permit after kill: when that one acquire call returned with a permit
  ("never within 10 s" = it returned without one: the permits were still
  leaked then)
* usable at kill + 10 s: once the fresh process has released what it got,
  how many permits new objects then get with no wait, one after another,
  each kept until the count ends (up to 4 tries: more than 2 would be an
  over-admission). redis-rate-limiters cannot try without waiting (its
  max_sleep=0 means wait forever), so its tries wait up to 50 ms.

Implementations with no lease never give a killed holder's permit back: the
row ``redis-semaphore default`` (no stale_client_timeout, the library's
default) shows it. Note that a try is an acquire call: where a later call is
what puts permits back (redis-semaphore, redis-rate-limiters), the count
shows that call's effect, not what a waiter already blocked would have got.

Run from the repository root::

    .venv/bin/python bench/bench_semaphores.py [--quick] [--seconds N] [--rounds R]

The default run takes about 3.5 minutes on 2 cores (part B ~15 s of it);
``--quick`` is a ~30 s smoke run (one round of 2 s windows; part B as in the
full run).
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import secrets
import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import redis
from support import contenders
from support.cli import Options
from support.processes import CTX, run_main, stop_process
from support.servers import HOST, RedisServer
from support.tables import fmt_ratios, header, per, print_table, top_commands, versions

from django_redcoord import Semaphore

try:
    import limiters  # redis-rate-limiters
except ImportError:  # pragma: no cover - reported as a skipped row
    limiters = None
try:
    import redis_semaphore  # redis-semaphore, or py-redis-semaphore (same module name)
except ImportError:  # pragma: no cover - reported as a skipped row
    redis_semaphore = None

PERMITS = 2
HOLD = 0.001  # seconds held per part A acquisition
LEASE_A = 10  # seconds: part A's lease, never reached while a holder lives
WAIT_A = 30.0  # seconds a part A acquire may block before the run counts as broken
LEASE_B = 2  # seconds: part B's lease (holders are killed while holding)
WAIT_B = 10.0  # seconds the fresh process waits in part B; usable permits counted then
PROBE_TRIES = PERMITS + 2  # part B no-wait tries: more than PERMITS successes = over-admission
RIA_RETRY = 0.01  # seconds the Redis in Action semaphore sleeps between attempts
NO_WAIT_SLEEP = 0.05  # redis-rate-limiters' shortest wait (its 0 means forever)
STARVED_WAIT = 2.0  # seconds: a single wait longer than this counts as starvation
TOP_COMMANDS = 12  # commands listed in the per-acquisition breakdown
CHILD_TIMEOUT = 60.0  # seconds a child may take beyond its planned run
SOCKET_TIMEOUT = 60.0  # every client's; above every wait here (see the module docstring)
OURS = "ours"
LIBRARIES = ("redis", "hiredis", "redis-semaphore", "py-redis-semaphore", "redis-rate-limiters")


# --- implementations ---------------------------------------------------------------


class Sem(NamedTuple):
    client: redis.Redis
    acquire: Callable[[], bool]  # blocks up to the builder's wait; 0 = one try
    release: Callable[[], Any]


# A builder makes one semaphore object on ``name`` with permits=PERMITS, its own
# new client, a lease of ``lease`` seconds and a wait of ``wait`` seconds.
Builder = Callable[[int, str, float, float], Sem]


def _client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port, socket_timeout=SOCKET_TIMEOUT)


def _build_ours(port: int, name: str, lease: float, wait: float) -> Sem:
    client = _client(port)
    sem = Semaphore(name, PERMITS, ttl=lease, wait=wait, client=client, prefix="bench")
    return Sem(client, sem.acquire, sem.release)


class FairSemaphore:
    """The "fair semaphore" of Redis in Action, written for this benchmark.

    ``<name>`` is a ZSET of holder -> acquire time (client clock, seconds)
    that times holders out, ``<name>:owner`` a ZSET of holder -> ticket from
    the counter ``<name>:counter``; a holder is one whose ticket ranks below
    ``limit`` among the owners. One object holds at most one permit.
    """

    def __init__(
        self, client: redis.Redis, name: str, limit: int, timeout: float, wait: float
    ) -> None:
        self.client = client
        self.timeouts, self.owners, self.counter = name, f"{name}:owner", f"{name}:counter"
        self.limit, self.timeout, self.wait = limit, timeout, wait
        self.holder: str | None = None

    def try_acquire(self) -> bool:
        me = secrets.token_hex(8)
        now = time.time()
        pipe = self.client.pipeline(transaction=True)
        pipe.zremrangebyscore(self.timeouts, "-inf", now - self.timeout)
        pipe.zinterstore(self.owners, {self.owners: 1, self.timeouts: 0})
        pipe.incr(self.counter)
        ticket = pipe.execute()[-1]
        pipe.zadd(self.timeouts, {me: now})
        pipe.zadd(self.owners, {me: ticket})
        pipe.zrank(self.owners, me)
        if pipe.execute()[-1] < self.limit:
            self.holder = me
            return True
        pipe.zrem(self.timeouts, me)
        pipe.zrem(self.owners, me)
        pipe.execute()
        return False

    def acquire(self) -> bool:
        deadline = time.monotonic() + self.wait
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                return False
            time.sleep(RIA_RETRY)
        return True

    def release(self) -> bool:
        me, self.holder = self.holder, None
        pipe = self.client.pipeline(transaction=True)
        pipe.zrem(self.timeouts, me)
        pipe.zrem(self.owners, me)
        return bool(pipe.execute()[0])


def _build_ria(port: int, name: str, lease: float, wait: float) -> Sem:
    client = _client(port)
    sem = FairSemaphore(client, name, PERMITS, lease, wait)
    return Sem(client, sem.acquire, sem.release)


def _redis_semaphore_builder(stale: bool) -> Builder:
    """redis-semaphore's Semaphore; ``stale``: with stale_client_timeout=lease."""

    def build(port: int, name: str, lease: float, wait: float) -> Sem:
        client = _client(port)
        sem = redis_semaphore.Semaphore(
            client,
            count=PERMITS,
            namespace=name,
            stale_client_timeout=lease if stale else None,
            blocking=wait > 0,  # blocking: BLPOP for `wait` (its 0 would mean forever)
        )

        def acquire() -> bool:
            try:
                sem.acquire(timeout=wait)
            except redis_semaphore.NotAvailable:
                return False
            return True

        return Sem(client, acquire, sem.release)

    return build


def _build_rate_limiters(port: int, name: str, lease: float, wait: float) -> Sem:
    client = _client(port)
    sem = limiters.SyncSemaphore(
        connection=client,
        name=name,
        capacity=PERMITS,
        max_sleep=wait or NO_WAIT_SLEEP,  # 0 would mean wait forever
        expiry=math.ceil(lease),
    )

    def acquire() -> bool:
        try:
            sem.__enter__()
        except limiters.MaxSleepExceededError:
            return False
        return True

    return Sem(client, acquire, lambda: sem.__exit__(None, None, None))


def _build_py_redis_semaphore(port: int, name: str, lease: float, wait: float) -> Sem:
    client = _client(port)
    config = redis_semaphore.SemaphoreConfig(
        name=name,
        limit=PERMITS,
        lock_timeout=lease,
        acquire_timeout=wait or None,
        namespace="bench",
    )
    sem = redis_semaphore.Semaphore(client, config)

    def acquire() -> bool:
        if not wait:
            return sem.acquire(blocking=False).success
        try:
            return sem.acquire().success
        except redis_semaphore.AcquireTimeoutError:
            return False

    return Sem(client, acquire, sem.release)


@dataclass(frozen=True)
class Impl:
    label: str
    build: Builder | None  # None: its library is not installed
    lease: str  # part B: what its 2 s lease is
    comes_back: str  # part B: how a killed holder's permit comes back, if at all
    part_a: bool = True
    # part B: whose grant starts the lease that returns permits: "first" holder's
    # (a lease per permit), "last" (redis-rate-limiters: every call re-arms the
    # whole semaphore's expiry), or "" (no lease)
    lease_from: str = "first"
    missing: str = ""  # why it is left out


def implementations() -> list[Impl]:
    impls = [
        Impl(
            OURS,
            _build_ours,
            "ttl=2 per permit",
            "the lease runs out; the queued waiter re-checks then (its BLPOP is bounded by "
            "the earliest lease)",
        ),
        Impl(
            "Redis in Action fair",
            _build_ria,
            "timeout=2 per holder",
            "every attempt drops holders older than the timeout; the waiter polls every "
            f"{RIA_RETRY * 1000:g} ms",
        ),
    ]
    flavor = "py" if hasattr(redis_semaphore, "SemaphoreConfig") else "bluele"
    if redis_semaphore is not None and flavor == "bluele":
        impls += [
            Impl(
                "redis-semaphore",
                _redis_semaphore_builder(stale=True),
                "stale_client_timeout=2",
                "only an acquire() call pushes stale tokens back, before it blocks; a waiter "
                "already in BLPOP is not woken",
            ),
            Impl(
                "redis-semaphore default",
                _redis_semaphore_builder(stale=False),
                "none (the default)",
                "no lease: nothing ever gives a killed holder's token back",
                part_a=False,
                lease_from="",
            ),
        ]
    elif redis_semaphore is not None:
        impls.append(
            Impl(
                "py-redis-semaphore",
                _build_py_redis_semaphore,
                "lock_timeout=2 per holder",
                "the lease runs out; a waiter re-checks after each blpop_timeout (5 s)",
            )
        )
    else:
        impls.append(
            Impl("redis-semaphore", None, "", "", missing="not installed (redis-semaphore)")
        )
    impls.append(
        Impl(
            "redis-rate-limiters",
            _build_rate_limiters if limiters is not None else None,
            "expiry=2, whole semaphore",
            "its keys expire 2 s after the last acquire/release and the next acquire re-creates "
            "all permits; a waiter already in BLPOP is not woken",
            lease_from="last",
            missing="" if limiters is not None else "not installed (redis-rate-limiters)",
        )
    )
    return impls


def run_name(part: str, impl: Impl) -> str:
    slug = "".join(ch if ch.isalnum() else "-" for ch in impl.label.lower())
    return f"bench-sem-{part}-{slug}-{secrets.token_hex(3)}"


# --- part A: contended ---------------------------------------------------------------


@dataclass
class Held:
    """One contender's part A: its acquisitions, and what the overlap checker said."""

    records: list[contenders.Record] = field(default_factory=list)
    sent: int = 0
    max_holders: int = 0
    violations: int = 0


def run_contended(
    impl: Impl, port: int, check_port: int, n: int, seconds: float
) -> tuple[contenders.Race, Counter[str]]:
    """One round of ``impl``: ``n`` processes on one semaphore for ``seconds``; what they
    reported, and the benchmark server's commands meanwhile."""
    name = run_name(f"a{n}", impl)
    key = f"{name}:holders"

    def contender(proc_id: int, window: Any, out: Any) -> None:
        held = Held()
        contenders.SendCounter.install(redis.connection.AbstractConnection, skip_port=check_port)
        checker = _client(check_port)

        def setup() -> Sem:
            sem = impl.build(port, name, LEASE_A, WAIT_A)
            sem.client.ping()  # connect before the "before" command snapshot
            checker.ping()
            return sem

        def hold() -> None:
            holders = checker.incr(key)
            time.sleep(HOLD)
            checker.decr(key)
            held.max_holders = max(held.max_holders, holders)
            held.violations += holders > PERMITS

        def run(sem: Sem, t0: float) -> None:
            contenders.SendCounter.reset()
            contenders.hold_loop(sem.acquire, sem.release, t0, seconds, held.records, hold)

        def payload() -> Held:
            held.sent = contenders.SendCounter.read()
            return held

        contenders.contend(proc_id, window, out, setup, run, payload)

    stats_client = _client(port)
    try:
        return contenders.race_on(stats_client, n, contender, timeout=seconds + CHILD_TIMEOUT)
    finally:
        stats_client.close()


@dataclass
class RoundStats:
    """One round of one implementation."""

    share: contenders.Share
    starved: int
    acquisitions: int  # all, also after the window
    commands: Counter[str]
    sent: int
    max_holders: int
    violations: int


def round_stats(run: contenders.Race, commands: Counter[str], n: int, seconds: float) -> RoundStats:
    per_proc = [run.payloads.get(i, Held()) for i in range(n)]
    counts = [contenders.in_window(held.records, run.t0 + seconds) for held in per_proc]
    return RoundStats(
        share=contenders.share(counts, seconds),
        starved=contenders.count_starved([held.records for held in per_proc], STARVED_WAIT, counts),
        acquisitions=sum(len(held.records) for held in per_proc),
        commands=commands,
        sent=sum(held.sent for held in per_proc),
        max_holders=max(held.max_holders for held in per_proc),
        violations=sum(held.violations for held in per_proc),
    )


def best_peers(rounds: list[dict[str, RoundStats]]) -> list[tuple[str, float] | None]:
    """Per round: the fastest implementation other than ours that let at most PERMITS in."""
    best: list[tuple[str, float] | None] = []
    for by_label in rounds:
        peers = [
            (label, s.share.acq_per_s)
            for label, s in by_label.items()
            if label != OURS and not s.violations and s.share.acq_per_s > 0
        ]
        best.append(max(peers, key=lambda p: p[1]) if peers else None)
    return best


def part_a(
    impls: Sequence[Impl], port: int, check_port: int, n: int, seconds: float, rounds: int
) -> None:
    """``rounds`` rounds, each running every implementation once, in alternating order."""
    runnable = [impl for impl in impls if impl.part_a and impl.build is not None]
    per_round: list[dict[str, RoundStats]] = []
    errors: dict[str, list[str]] = {impl.label: [] for impl in runnable}
    for r in range(rounds):
        this_round: dict[str, RoundStats] = {}
        for impl in runnable if r % 2 == 0 else runnable[::-1]:
            try:
                run, commands = run_contended(impl, port, check_port, n, seconds)
                this_round[impl.label] = round_stats(run, commands, n, seconds)
                errors[impl.label].extend(run.errors)
            except Exception as exc:
                errors[impl.label].append(f"{type(exc).__name__}: {exc}")
        per_round.append(this_round)
    best = best_peers(per_round)
    rows = [contended_row(impl.label, per_round, best, errors[impl.label]) for impl in runnable]
    print(
        f"\n## A. Contended: {n} processes, one semaphore, permits={PERMITS}, hold "
        f"{HOLD * 1000:g} ms, {rounds} interleaved rounds x {seconds:g} s\n"
    )
    print_table(
        [
            "impl",
            "acq/s",
            "vs best peer (rounds)",
            "fairness (worst)",
            "starved",
            "max holders",
            "viol",
            "cmds/acq",
            "sent/acq",
            "error",
        ],
        rows,
    )
    names = ", ".join(
        f"r{i + 1} {b[0]} ({b[1]:,.0f}/s)" if b else f"r{i + 1} none" for i, b in enumerate(best)
    )
    print(f"\nBest peer per round: {names}")
    print(f"\nINFO commandstats per acquisition, Lua internals included (N={n}):\n")
    print_table(
        ["impl", "commands/acq"],
        [[impl.label, commands_per_acquisition(per_round, impl.label)] for impl in runnable],
    )


def commands_per_acquisition(per_round: list[dict[str, RoundStats]], label: str) -> str:
    stats = contenders.rounds_of(per_round, label)
    commands: Counter[str] = sum((s.commands for s in stats), Counter())
    return top_commands(commands, sum(s.acquisitions for s in stats), TOP_COMMANDS)


def contended_row(
    label: str,
    per_round: list[dict[str, RoundStats]],
    best: list[tuple[str, float] | None],
    errors: list[str],
) -> list[str]:
    """Median round; worst round for fairness and starvation; totals for counts."""
    error = "; ".join(dict.fromkeys(errors))  # each distinct message once
    stats = contenders.rounds_of(per_round, label)
    if not stats:
        return [label, "ERROR", "", "", "", "", "", "", "", error]
    ratios = [
        r[label].share.acq_per_s / b[1]
        for r, b in zip(per_round, best, strict=True)
        if label in r and b
    ]
    shares = [s.share for s in stats]
    total = sum(s.acquisitions for s in stats)
    return [
        label,
        *contenders.share_cells(shares, fmt_ratios(ratios)),
        str(max(s.starved for s in stats)),
        str(max(s.max_holders for s in stats)),
        str(sum(s.violations for s in stats)),
        per(sum(sum(s.commands.values()) for s in stats), total),
        per(sum(s.sent for s in stats), total),
        error,
    ]


# --- part B: permits after killed holders ----------------------------------------------


def _holder_main(impl: Impl, port: int, name: str, out: Any) -> None:
    """Acquire one permit, say when, and hold it until SIGKILLed."""
    try:
        sem = impl.build(port, name, LEASE_B, WAIT_B)
        acquired = sem.acquire()
        out.put(("ok", (acquired, time.monotonic())))
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        out.put(("error", f"{type(exc).__name__}: {exc}"))
        return
    time.sleep(3600)  # the parent kills us long before this


@dataclass
class LeakResult:
    granted_after: float | None  # seconds from the kill until acquire returned with a permit
    returned_after: float  # seconds from the kill until acquire returned at all
    usable: int  # permits new objects got with no wait, 10 s after the kill
    error: str | None = None


def _fresh_main(
    impl: Impl, port: int, name: str, ready: Any, go: Any, t_kill: Any, out: Any
) -> None:
    """After the kill: one acquire with a 10 s wait; at kill + 10 s count usable permits."""
    try:
        sem = impl.build(port, name, LEASE_B, WAIT_B)
        sem.client.ping()
        ready.set()
        if not go.wait(timeout=120):
            raise RuntimeError("never told to start")
        killed = t_kill.value
        granted = sem.acquire()
        returned = time.monotonic() - killed
        if granted:
            sem.release()
        time.sleep(max(0.0, killed + WAIT_B - time.monotonic()))
        out.put(
            LeakResult(returned if granted else None, returned, usable_permits(impl, port, name))
        )
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        out.put(LeakResult(None, 0.0, -1, f"{type(exc).__name__}: {exc}"))


def usable_permits(impl: Impl, port: int, name: str) -> int:
    """Permits new objects get with no wait, one after another (each kept until the end)."""
    held: list[Sem] = []
    try:
        for _ in range(PROBE_TRIES):
            sem = impl.build(port, name, LEASE_B, 0)
            if not sem.acquire():
                break
            held.append(sem)
        return len(held)
    finally:
        for sem in held:
            sem.release()


@dataclass
class LeakCase:
    impl: Impl
    holders: list[Any] = field(default_factory=list)
    fresh: Any = None
    out: Any = None
    error: str | None = None
    grants: list[float] = field(default_factory=list)  # monotonic times the holders got theirs


def _start_case(impl: Impl, port: int, go: Any, t_kill: Any) -> LeakCase:
    """Two holders holding, and a fresh process connected and waiting for ``go``."""
    case = LeakCase(impl, out=CTX.Queue())
    name = run_name("b", impl)
    for _ in range(PERMITS):
        answers = CTX.Queue()
        proc = CTX.Process(target=_holder_main, args=(impl, port, name, answers), daemon=True)
        proc.start()
        case.holders.append(proc)
        try:
            status, value = answers.get(timeout=30)
        except queue.Empty:
            status, value = "error", "holder did not answer within 30 s"
        if status != "ok" or value[0] is not True:
            case.error = f"holder: {value if status == 'error' else 'acquire returned False'}"
            return case
        case.grants.append(value[1])
    ready = CTX.Event()
    case.fresh = CTX.Process(
        target=_fresh_main, args=(impl, port, name, ready, go, t_kill, case.out), daemon=True
    )
    case.fresh.start()
    if not ready.wait(timeout=30):
        case.error = "fresh process did not connect within 30 s"
    return case


def part_b(impls: Sequence[Impl], port: int) -> None:
    go, t_kill = CTX.Event(), CTX.Value("d", 0.0)
    cases: list[LeakCase] = []
    try:
        for impl in impls:
            if impl.build is not None:
                cases.append(_start_case(impl, port, go, t_kill))
        for case in cases:
            for proc in case.holders:
                if proc.pid is not None and proc.is_alive():
                    os.kill(proc.pid, signal.SIGKILL)
        t_kill.value = time.monotonic()
        go.set()
        results: dict[str, LeakResult | str] = {}
        for case in cases:
            if case.error:
                results[case.impl.label] = case.error
                continue
            try:
                results[case.impl.label] = case.out.get(timeout=WAIT_B + CHILD_TIMEOUT)
            except queue.Empty:
                results[case.impl.label] = "fresh process did not answer"
    finally:
        for case in cases:
            for proc in [*case.holders, case.fresh]:
                if proc is not None:
                    stop_process(proc)
    rows = [leak_row(case, results[case.impl.label], t_kill.value) for case in cases]
    print(
        f"\n## B. Permits after killed holders: permits={PERMITS}, both holders SIGKILLed "
        f"while holding, then one acquire with a {WAIT_B:g} s wait (lease {LEASE_B} s)\n"
    )
    print_table(
        [
            "impl",
            "lease",
            "lease end",
            "permit after kill",
            f"usable at kill + {WAIT_B:g} s",
            "how a killed holder's permit comes back",
            "error",
        ],
        rows,
    )


def leak_row(case: LeakCase, result: LeakResult | str, t_kill: float) -> list[str]:
    impl, lease = case.impl, "-"
    if impl.lease_from and len(case.grants) == PERMITS:
        start = min(case.grants) if impl.lease_from == "first" else max(case.grants)
        lease = f"{start + LEASE_B - t_kill:.2f} s"
    if isinstance(result, str) or result.error:
        error = result if isinstance(result, str) else result.error
        return [impl.label, impl.lease, lease, "ERROR", "", impl.comes_back, error or ""]
    if result.granted_after is not None:
        granted = f"{result.granted_after:.2f} s"
    else:
        granted = f"never within {WAIT_B:g} s (returned at {result.returned_after:.1f} s)"
    usable = f"{result.usable}/{PERMITS}"
    if result.usable > PERMITS:
        usable += " OVER-ADMITS"
    elif result.usable < PERMITS:
        usable += " (leaked)"
    return [impl.label, impl.lease, lease, granted, usable, impl.comes_back, ""]


# --- output and main -----------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~30 s smoke run")
    cli.number("--seconds", 8.0, 2.0, "part A window per impl, N and round", above=0)
    cli.number("--rounds", 3, 1, "part A interleaved rounds per N", least=1)
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    impls = implementations()
    started = time.monotonic()
    with RedisServer() as server, RedisServer() as checker:
        print(header("Semaphore benchmark", server.version(), versions(LIBRARIES, missing=None)))
        for impl in impls:
            if impl.build is None:
                print(f"left out: {impl.label}: {impl.missing}")
        print(
            f"server 127.0.0.1:{server.port}, overlap checker 127.0.0.1:{checker.port}; "
            f"part A lease {LEASE_A} s, starved = a wait > {STARVED_WAIT:g} s or no acquisition"
        )
        for n in (4, 16):
            part_a(impls, server.port, checker.port, n, args.seconds, args.rounds)
        part_b(impls, server.port)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
