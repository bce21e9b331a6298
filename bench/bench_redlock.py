"""Benchmark django_redcoord's quorum lock (Redlock) against pottery's Redlock.

The script starts six throwaway redis-servers on free 127.0.0.1 ports (no
persistence): five independent masters for the quorum locks and one more for
the single-server reference row, and stops every one of them at the end, also
on error or Ctrl-C (part C starts and kills servers of its own). Each
measurement runs in a forked child process with its own new clients, on a
fresh lock name, TTL 10 s (no held lock expires during the run).
Implementations:

* ``ours Redlock``: ``django_redcoord.core.redlock.Redlock`` over the five
  masters, clients from ``client_from_url`` (no retries). An attempt runs
  one Lua script on every master at once from a thread pool, plus a second
  round trip to the masters whose fencing token was below the highest
  (raise_fence); a release is one round trip per master. A busy lock is
  retried after a random pause of up to 0.2 s.
* ``pottery Redlock``: ``pottery.Redlock(key, masters={...},
  auto_release_time=10)`` over the same five masters, with plain
  ``redis.Redis(host, port)`` clients as its users would build them (redis-py
  8's default retry policy: 10 retries, jittered exponential backoff from 10
  ms up to 1 s each). SET NX PX on every master from a new thread pool per
  call; it returns as soon as a majority agreed and leaves the rest of the
  calls running in the background. A busy lock is retried after a random
  pause of up to 0.2 s. Its error logging (a traceback per failed master
  call) is silenced here; in an app it would also cost the time to format.
* ``pottery, no-retry clients`` (part C only): the same, over clients built
  with ``client_from_url`` like ours, to tell pottery's algorithm apart from
  redis-py's default retries.
* ``ours Lock (1 server)`` (reference, parts A and B): the single-server
  ``django_redcoord.core.locks.Lock`` on the sixth server: what the quorum
  costs over one Redis (FIFO queue, handoff by BLPOP, so its contended row is
  a different design, not only one server instead of five).

Part A, uncontended: acquire+release pairs per second in one process. ``--rounds``
interleaved runs (each run measures every implementation once, in alternating
order: forward, backward, forward), median shown; the ratio to pottery is taken
within each run (median over runs). sends/pair: the commands and scripts the
process sent per pair, counted in redis-py's
``Connection.send_packed_command`` (one per master round trip).
Left out: connection set-up and script loading (50 warm-up pairs first),
any network latency (loopback), and everything the other side of the lock
would do; five masters on one 2-core machine compete for the same CPUs,
which real independent masters would not.

Part B, contended: ``--processes`` real OS processes (default 4, forked)
loop on ONE lock name for ``--seconds`` (default 3): acquire (blocking, wait
30 s), hold 1 ms, release. ``--rounds`` interleaved rounds (default 3, order
alternating), median round shown unless said otherwise:

* acq/s: acquisitions that returned inside the window, per second; the
  ratio to pottery within each round (median and the range over rounds)
* fairness: min/max acquisitions per process in the window (1.0 = even); in
  brackets the worst round with its two counts
* wait p50/p99 ms: acquire call to its return (the worst round's p99 in
  brackets)
* overlaps: critical sections [acquired, release-start] (CLOCK_MONOTONIC,
  shared by all processes on Linux) that start before an earlier one ended,
  summed over all rounds; anything but 0 means the lock let two holders in.
  It only sees overlaps longer than the clock reads around the calls, and
  none caused by expiry (nothing expires here) or by a master losing its
  data.

Left out of part B: network latency between the processes and the masters
(which stretches every quorum round trip, and the window in which a split
vote can happen), longer critical sections, and more than one lock name.

Part C, masters down. Each run starts five fresh masters; a child builds its
clients and runs ``KILL_WARM_UP`` (100) acquire+release pairs on one lock
name with all five up (connections open, scripts loaded, the lock in use, as
in a running app), then the parent SIGKILLs some masters (connections reset,
new ones refused at once; a frozen or partitioned master, where each call
costs a socket timeout, is not measured) and the child goes on:

* C1: two of the five killed, a majority (3) still up; both must keep
  working. ``--rounds`` interleaved runs of uncontended pairs for 1.5 s
  (0.5 s with --quick; blocking wait 5 s, 2 s with --quick; a pair that is
  slower runs past the window). pairs/s
  (successful pairs over the time taken, median and each run), the ratio to
  pottery, p50 and slowest pair (ms) over all runs, failed calls (acquire
  returning False or raising, release raising; not counted as pairs), and
  stale grants: how many of the three surviving masters held a grant of the
  lock just before the kill although nobody held it (the parent reads them
  after the child released and waited 0.1 s). pottery can leave such
  grants: it returns from acquire and release once a majority answered, so
  a SET NX still in flight can land after the release's DEL and stay until
  its TTL (10 s) runs out. With two masters down, one stale grant on a
  survivor leaves two masters to grant, no majority, for up to the TTL; it
  happens by chance, so runs differ (see the per-run columns). Ours waits
  for every master's answer in each round trip, so it leaves none.
* C2: three of the five killed, no majority possible: the child calls
  acquire twice, first "try once" (ours ``wait=0``, pottery
  ``blocking=False``), then blocking with a wait of ``FAIL_WAIT`` (5 s; not
  with --quick, where pottery's call alone would take ~9 s more: without a
  majority it waits for every master's answer, and redis-py's default
  retries to a dead master take seconds, on acquire and again on the
  release that follows). Reported: milliseconds until the call returned or raised
  (median over ``--probes`` probes, default 2, --quick 1) and what it
  reported, every outcome seen (exception type, or the value returned). The
  only right answer is a failure; the sooner and the more telling (an error
  rather than the "busy" of a False) the better.

Left out of part C: what happens when the masters come back (recovery), a
master restarted empty, and contention during the outage.

Run from the repository root::

    .venv/bin/python bench/bench_redlock.py [--quick] [--seconds N] [--rounds R]

The default run takes about 2.5 minutes on 2 cores; ``--quick`` is a ~40 s
smoke run with short windows and one round (numbers then only indicative).
Absolute rates are noisy on a shared machine: read the ratios.
"""

from __future__ import annotations

import argparse
import logging
import queue
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import redis
from support import contenders
from support.cli import Options
from support.processes import (
    CTX,
    child_exit,
    child_setup,
    describe,
    run_in_child,
    run_main,
    stop_process,
)
from support.servers import HOST, RedisServer
from support.tables import fmt_ratios, header, median, percentile, print_table, versions

try:
    import pottery
except ImportError:  # the peer: its rows say "not installed"
    pottery = None

from django_redcoord.core.locks import Lock, read_holders
from django_redcoord.core.redlock import Redlock, trust_masters
from django_redcoord.core.transport.clients import client_from_url

MASTERS = 5
KILLED_DEGRADED = 2  # part C1: masters down, a majority still up
KILLED_FAILED = 3  # part C2: masters down, no majority possible
TTL = 10  # seconds; no lock may expire during the benchmark
HOLD = 0.001  # seconds held per contended acquisition
WAIT = 30.0  # seconds a blocking acquire may wait (parts A, B)
DEGRADED_WAIT = 5.0  # seconds a blocking acquire may wait in part C1 (--quick: 2 s)
QUICK_DEGRADED_WAIT = 2.0
FAIL_WAIT = 5.0  # part C2's blocking wait (not measured with --quick)
WARM_UP = 50  # uncontended pairs before part A's timing
KILL_WARM_UP = 100  # part C: pairs on all five masters before some are killed
WARM_UP_TRIES = 10  # part C: a warm-up pair's acquire is tried this often before it is an error
KILL_WARM_UP_TIMEOUT = 60.0  # seconds
CHILD_TIMEOUT = 60.0  # seconds a child may take beyond its planned run
PREFIX = "bench"  # key prefix of ours
LIBRARIES = ("redis", "hiredis", "pottery")

logging.getLogger("pottery").setLevel(logging.CRITICAL)  # a traceback per failed master call


# --- implementations ---------------------------------------------------------------


class Contender(NamedTuple):
    acquire: Callable[[float], Any]  # acquire(wait): 0 = try once
    release: Callable[[], Any]


@dataclass(frozen=True)
class Ports:
    masters: tuple[int, ...]
    single: int | None = None


def _url(port: int) -> str:
    return f"redis://{HOST}:{port}/0"


def _by_wait(make: Callable[[float], Any]) -> Contender:
    """A Contender over lock objects whose wait is fixed when built: one per wait, reused."""
    locks: dict[float, Any] = {}
    held: list[Any] = []

    def acquire(wait: float) -> bool:
        lock = locks.get(wait)
        if lock is None:
            lock = locks[wait] = make(wait)
        acquired = lock.acquire()
        if acquired:
            held.append(lock)
        return acquired

    def release() -> None:
        held.pop().release()

    return Contender(acquire, release)


def _vouch(masters: Sequence[int]) -> None:
    """Fresh masters forgot nothing: vouch for them, or ours refuses quorum grants for a max TTL
    after their start (the restart guard, which cannot tell new from restarted empty)."""
    clients = [client_from_url(_url(p)) for p in masters]
    trust_masters(clients, prefix=PREFIX)
    for client in clients:
        client.close()


def _build_ours(ports: Ports, name: str) -> Contender:
    clients = [client_from_url(_url(p)) for p in ports.masters]
    return _by_wait(lambda wait: Redlock(name, ttl=TTL, wait=wait, clients=clients, prefix=PREFIX))


def _build_single(ports: Ports, name: str) -> Contender:
    if ports.single is None:
        raise RuntimeError("no single server given")
    client = client_from_url(_url(ports.single))
    return _by_wait(lambda wait: Lock(name, ttl=TTL, wait=wait, client=client, prefix=PREFIX))


def _pottery(name: str, masters: Sequence[redis.Redis]) -> Contender:
    if pottery is None:
        raise ModuleNotFoundError("not installed (pottery)")
    lock = pottery.Redlock(key=name, masters=set(masters), auto_release_time=TTL)

    def acquire(wait: float) -> bool:
        if wait == 0:
            return lock.acquire(blocking=False)
        return lock.acquire(blocking=True, timeout=wait)

    return Contender(acquire, lock.release)


def _build_pottery(ports: Ports, name: str) -> Contender:
    return _pottery(name, [redis.Redis(host=HOST, port=p) for p in ports.masters])


def _build_pottery_no_retry(ports: Ports, name: str) -> Contender:
    return _pottery(name, [client_from_url(_url(p)) for p in ports.masters])


def _ours_holds(client: redis.Redis, name: str) -> bool:
    """Whether this master holds a live grant of our lock ``name`` (not a tombstone)."""
    return read_holders(client, [name], prefix=PREFIX)[0] is not None


def _pottery_holds(client: redis.Redis, name: str) -> bool:
    return bool(client.exists(f"redlock:{name}"))


@dataclass(frozen=True)
class Impl:
    label: str
    build: Callable[[Ports, str], Contender]
    holds: Callable[[redis.Redis, str], bool] | None = None  # part C: a grant on this master?


OURS = Impl("ours Redlock (5)", _build_ours, _ours_holds)
POTTERY = Impl("pottery Redlock (5)", _build_pottery, _pottery_holds)
POTTERY_NO_RETRY = Impl("pottery, no-retry clients (5)", _build_pottery_no_retry, _pottery_holds)
SINGLE = Impl("ours Lock (1 server)", _build_single)
REFERENCE = POTTERY.label

HEALTHY_IMPLS = (OURS, POTTERY, SINGLE)  # parts A and B
FAILOVER_IMPLS = (OURS, POTTERY, POTTERY_NO_RETRY)  # part C


def lock_name(part: str, impl: Impl) -> str:
    slug = "".join(ch if ch.isalnum() else "-" for ch in impl.label.lower()).strip("-")
    return f"bench-redlock-{part}-{slug}-{secrets.token_hex(3)}"


def checked(result: Any) -> None:
    if not result:
        raise RuntimeError(f"blocking acquire returned {result!r}")


def interleaved(impls: Sequence[Impl], rounds: int) -> list[tuple[int, Impl]]:
    """(round, impl) in the order run: forward, backward, forward..."""
    return [(r, impl) for r in range(rounds) for impl in (impls if r % 2 == 0 else impls[::-1])]


# --- part A: uncontended -------------------------------------------------------------


class UncontendedResult(NamedTuple):
    pairs_per_s: float
    sends_per_pair: float


def _uncontended(impl: Impl, ports: Ports, name: str, seconds: float) -> UncontendedResult:
    contenders.SendCounter.install()
    contender = impl.build(ports, name)
    acquire, release = contender.acquire, contender.release
    for _ in range(WARM_UP):  # connect, load the scripts
        checked(acquire(WAIT))
        release()
    contenders.SendCounter.reset()
    pairs = 0
    start = time.monotonic()
    end = start + seconds
    while True:
        checked(acquire(WAIT))
        release()
        pairs += 1
        now = time.monotonic()
        if now >= end:
            return UncontendedResult(pairs / (now - start), contenders.SendCounter.read() / pairs)


def part_a(ports: Ports, seconds: float, rounds: int) -> None:
    results: dict[str, list[UncontendedResult]] = {impl.label: [] for impl in HEALTHY_IMPLS}
    errors: dict[str, str] = {}
    names = {impl.label: lock_name("a", impl) for impl in HEALTHY_IMPLS}
    for _, impl in interleaved(HEALTHY_IMPLS, rounds):
        if impl.label in errors:
            continue
        try:
            args = (impl, ports, names[impl.label], seconds)
            results[impl.label].append(run_in_child(_uncontended, args, seconds + CHILD_TIMEOUT))
        except Exception as exc:
            errors[impl.label] = str(exc)
    reference = [r.pairs_per_s for r in results[REFERENCE]]
    rows = []
    for impl in HEALTHY_IMPLS:
        runs = results[impl.label]
        if not runs:
            rows.append([impl.label, "ERROR", "", "", "", errors.get(impl.label, "no result")])
            continue
        rates = [r.pairs_per_s for r in runs]
        rows.append(
            [
                impl.label,
                f"{statistics.median(rates):,.0f}",
                round_ratio(rates, reference),
                f"{statistics.median(r.sends_per_pair for r in runs):.1f}",
                f"{min(rates):,.0f}-{max(rates):,.0f}",
                errors.get(impl.label, ""),
            ]
        )
    print(
        f"\n## A. Uncontended: acquire+release pairs/s, one process (median of {rounds} "
        f"interleaved runs x {seconds:g} s; ratio taken within each run)\n"
    )
    print_table(["impl", "pairs/s", "vs pottery", "sends/pair", "runs min-max", "error"], rows)


def round_ratio(values: Sequence[float], reference: Sequence[float]) -> str:
    """Median over rounds of value / reference in the same round (with the range).

    Rounds where the reference (pottery) managed nothing are left out, and said so.
    """
    pairs = list(zip(values, reference, strict=False))
    ratios = [v / ref for v, ref in pairs if ref]
    skipped = len(pairs) - len(ratios)
    note = f"; {skipped} of {len(pairs)} left out: pottery 0" if skipped else ""
    return fmt_ratios(ratios, "several") + note


# --- part B: contended ---------------------------------------------------------------


@dataclass
class ContendedStats:
    """One round of one implementation."""

    share: contenders.Share
    wait_p50_ms: float | None
    wait_p99_ms: float | None
    overlaps: int


def run_contended(
    impl: Impl, ports: Ports, n: int, seconds: float
) -> tuple[ContendedStats, list[str]]:
    name = lock_name("b", impl)

    def contender(proc_id: int, window: Any, out: Any) -> None:
        records: list[contenders.Record] = []

        def setup() -> Contender:
            contender = impl.build(ports, name)
            checked(contender.acquire(WAIT))  # connect, load the scripts
            contender.release()
            return contender

        def run(contender: Contender, t0: float) -> None:
            acquire = partial(contender.acquire, WAIT)
            contenders.hold_loop(acquire, contender.release, t0, seconds, records, HOLD)

        contenders.contend(proc_id, window, out, setup, run, lambda: records, timeout=60)

    run = contenders.race(n, contender, timeout=seconds + CHILD_TIMEOUT, ready_timeout=90)
    return contended_stats(run.payloads, n, run.t0, seconds), run.errors


def contended_stats(
    per_proc: dict[int, list[contenders.Record]], n: int, t0: float, seconds: float
) -> ContendedStats:
    counts = [contenders.in_window(per_proc.get(i, []), t0 + seconds) for i in range(n)]
    waits = sorted(acq - req for recs in per_proc.values() for req, acq, _ in recs)
    sections = sorted((acq, rel) for recs in per_proc.values() for _, acq, rel in recs)
    return ContendedStats(
        share=contenders.share(counts, seconds),
        wait_p50_ms=percentile(waits, 50) * 1e3 if waits else None,
        wait_p99_ms=percentile(waits, 99) * 1e3 if waits else None,
        overlaps=contenders.count_overlaps(sections),
    )


def part_b(ports: Ports, n: int, seconds: float, rounds: int) -> None:
    runs: dict[str, list[ContendedStats]] = {impl.label: [] for impl in HEALTHY_IMPLS}
    errors: dict[str, list[str]] = {impl.label: [] for impl in HEALTHY_IMPLS}
    for _, impl in interleaved(HEALTHY_IMPLS, rounds):
        try:
            stats, run_errors = run_contended(impl, ports, n, seconds)
            runs[impl.label].append(stats)
            errors[impl.label].extend(run_errors)
        except Exception as exc:
            errors[impl.label].append(f"{type(exc).__name__}: {exc}")
    reference = [s.share.acq_per_s for s in runs[REFERENCE]]
    rows = []
    for impl in HEALTHY_IMPLS:
        stats = runs[impl.label]
        error = "; ".join(errors[impl.label])
        if not stats:
            rows.append([impl.label, "ERROR", "", "", "", "", "", error])
            continue
        shares = [s.share for s in stats]
        p99s = [s.wait_p99_ms for s in stats if s.wait_p99_ms is not None]
        rows.append(
            [
                impl.label,
                *contenders.share_cells(
                    shares, round_ratio([s.acq_per_s for s in shares], reference)
                ),
                fmt_ms(median(s.wait_p50_ms for s in stats)),
                f"{fmt_ms(median(p99s))} ({fmt_ms(max(p99s, default=None))})",
                str(sum(s.overlaps for s in stats)),
                error,
            ]
        )
    print(
        f"\n## B. Contended: {n} processes, one lock, hold {HOLD * 1000:g} ms, "
        f"{rounds} interleaved rounds x {seconds:g} s (median round)\n"
    )
    print_table(
        [
            "impl",
            "acq/s",
            "vs pottery (rounds)",
            "fairness (worst)",
            "wait p50 ms",
            "wait p99 ms (worst)",
            "overlaps",
            "error",
        ],
        rows,
    )


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


# --- part C: masters down ------------------------------------------------------------


def _outcome(exc: BaseException) -> str:
    return type(exc).__name__


def _killed_child(
    impl: Impl,
    ports: Ports,
    name: str,
    waits: tuple[float, ...],
    measure: Callable[..., Any],
    measure_args: tuple[Any, ...],
    sync: tuple[Any, Any, Any],
) -> None:
    """Warm up on all masters, let the parent kill some, then ``measure(contender, *args)``."""
    ready, go, out = sync
    child_setup()
    try:
        contender = impl.build(ports, name)
        for _ in range(KILL_WARM_UP):  # connections open, scripts loaded, the lock in use
            for wait in waits:
                _warm_pair(contender, wait)
        time.sleep(0.1)  # calls still in flight (pottery's) land before the parent looks
    except Exception as exc:
        out.put(("error", f"warm-up: {describe(exc)}"))
    else:
        ready.set()
        go.wait(timeout=60)
        try:
            out.put(("ok", measure(contender, *measure_args)))
        except BaseException as exc:  # noqa: B036 - report everything to the parent
            out.put(("error", describe(exc)))
    # pottery leaves calls to dead masters running in background threads (each
    # retrying for seconds); do not wait for them at exit.
    child_exit(out)


def _warm_pair(contender: Any, wait: float, tries: int = WARM_UP_TRIES) -> None:
    """One acquire+release pair of a warm-up, tried again when the acquire fails: no master is
    down yet, so a failure is the machine's load (a slow round over five masters outlives the
    validity) or a release still landing in the background (pottery's), not what part C
    measures. Only a lock that cannot be had ``tries`` times running ends the warm-up."""
    for attempt in range(tries):
        if contender.acquire(wait):
            contender.release()
            return
        time.sleep(0.01 * (attempt + 1))
    checked(False)


def stale_grants(impl: Impl, ports: Sequence[int], name: str) -> int:
    """How many of these masters hold a grant of ``name`` although nobody holds the lock."""
    count = 0
    for port in ports:
        client = redis.Redis(host=HOST, port=port)
        try:
            if impl.holds is not None and impl.holds(client, name):
                count += 1
        finally:
            client.close()
    return count


def with_masters_killed(
    impl: Impl,
    killed: int,
    waits: tuple[float, ...],
    measure: Callable[..., Any],
    measure_args: tuple[Any, ...],
    timeout: float,
) -> tuple[Any, int]:
    """On five fresh masters: a child warms up, ``killed`` masters are SIGKILLed, it measures.

    Returns the measurement and the stale grants found on the survivors just
    before the kill.
    """
    with ExitStack() as stack:
        servers = [stack.enter_context(RedisServer()) for _ in range(MASTERS)]
        ports = Ports(tuple(s.port for s in servers))
        _vouch(ports.masters)
        name = lock_name(f"c{killed}", impl)
        ready, go, out = CTX.Event(), CTX.Event(), CTX.Queue()
        args = (impl, ports, name, waits, measure, measure_args, (ready, go, out))
        proc = CTX.Process(target=_killed_child, args=args, daemon=True)
        stack.callback(stop_process, proc)  # runs before the servers stop
        proc.start()
        deadline = time.monotonic() + KILL_WARM_UP_TIMEOUT
        while not ready.wait(timeout=0.1):
            try:
                _, value = out.get_nowait()
            except queue.Empty:
                if time.monotonic() > deadline or not proc.is_alive():
                    raise RuntimeError("the child did not get ready") from None
                continue
            raise RuntimeError(value)
        stale = stale_grants(impl, ports.masters[: MASTERS - killed], name)
        for server in servers[MASTERS - killed :]:
            server.kill()
        go.set()
        try:
            status, value = out.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"no answer within {timeout:g} s") from None
        if status != "ok":
            raise RuntimeError(value)
        return value, stale


class DegradedResult(NamedTuple):
    pairs_per_s: float
    latencies: list[float]  # seconds per successful pair
    failures: Counter[str]
    stale: int  # stale grants on the surviving masters at the kill


def _degraded_loop(contender: Contender, seconds: float, wait: float) -> DegradedResult:
    """Uncontended pairs with a minority of masters down: every failure counted, none fatal."""
    acquire, release = contender.acquire, contender.release
    failures: Counter[str] = Counter()
    latencies: list[float] = []
    start = time.monotonic()
    end = start + seconds
    while (t := time.monotonic()) < end:
        try:
            acquired = acquire(wait)
        except Exception as exc:
            failures[f"acquire {_outcome(exc)}"] += 1
            continue
        if not acquired:
            failures[f"acquire {acquired!r}"] += 1
            continue
        try:
            release()
        except Exception as exc:
            failures[f"release {_outcome(exc)}"] += 1
            continue
        latencies.append(time.monotonic() - t)
    return DegradedResult(len(latencies) / (time.monotonic() - start), latencies, failures, 0)


def fmt_rate(value: float) -> str:
    return f"{value:,.1f}" if value < 10 else f"{value:,.0f}"


def part_c1(seconds: float, rounds: int, wait: float) -> None:
    results: dict[str, list[DegradedResult]] = {impl.label: [] for impl in FAILOVER_IMPLS}
    errors: dict[str, list[str]] = {impl.label: [] for impl in FAILOVER_IMPLS}
    timeout = seconds + 4 * wait + CHILD_TIMEOUT
    for _, impl in interleaved(FAILOVER_IMPLS, rounds):
        try:
            res, stale = with_masters_killed(
                impl, KILLED_DEGRADED, (wait,), _degraded_loop, (seconds, wait), timeout
            )
            results[impl.label].append(res._replace(stale=stale))
        except Exception as exc:
            errors[impl.label].append(f"{type(exc).__name__}: {exc}")
    reference = [r.pairs_per_s for r in results[REFERENCE]]
    rows = []
    for impl in FAILOVER_IMPLS:
        runs = results[impl.label]
        error = "; ".join(errors[impl.label])
        if not runs:
            rows.append([impl.label, "ERROR", "", "", "", "", "", "", error])
            continue
        rates = [r.pairs_per_s for r in runs]
        latencies = sorted(x for r in runs for x in r.latencies)
        failures: Counter[str] = sum((r.failures for r in runs), Counter())
        rows.append(
            [
                impl.label,
                fmt_rate(statistics.median(rates)),
                round_ratio(rates, reference),
                " / ".join(fmt_rate(r) for r in rates),
                fmt_ms(percentile(latencies, 50) * 1e3) if latencies else "n/a",
                fmt_ms(latencies[-1] * 1e3) if latencies else "n/a",
                ", ".join(f"{count} {what}" for what, count in failures.most_common()) or "0",
                " / ".join(str(r.stale) for r in runs),
                error,
            ]
        )
    survivors = MASTERS - KILLED_DEGRADED
    print(
        f"\n## C1. {KILLED_DEGRADED} of {MASTERS} masters SIGKILLed after {KILL_WARM_UP} warm-up "
        f"pairs: uncontended pairs/s (median of {rounds} interleaved runs x {seconds:g} s, "
        f"fresh masters each run; blocking wait {wait:g} s)\n"
    )
    print_table(
        [
            "impl",
            "pairs/s",
            "vs pottery",
            "pairs/s per run",
            "pair p50 ms",
            "slowest pair ms",
            "failed calls (all runs)",
            f"stale grants on the {survivors} survivors, per run",
            "error",
        ],
        rows,
    )


def _failure_calls(contender: Contender, waits: tuple[float, ...]) -> list[tuple[float, str]]:
    """Time one acquire per wait (0: try once); each: (seconds, what it reported)."""
    outcomes = []
    for w in waits:
        start = time.monotonic()
        try:
            outcome = f"returned {contender.acquire(w)!r}"
        except Exception as exc:
            outcome = _outcome(exc)
        outcomes.append((time.monotonic() - start, outcome))
    return outcomes


def part_c2(probes: int, waits: tuple[float, ...]) -> None:
    results: dict[str, list[list[tuple[float, str]]]] = {i.label: [] for i in FAILOVER_IMPLS}
    errors: dict[str, list[str]] = {impl.label: [] for impl in FAILOVER_IMPLS}
    timeout = sum(waits) + 2 * CHILD_TIMEOUT
    for _, impl in interleaved(FAILOVER_IMPLS, probes):
        try:
            outcomes, _ = with_masters_killed(
                impl, KILLED_FAILED, waits, _failure_calls, (waits,), timeout
            )
            results[impl.label].append(outcomes)
        except Exception as exc:
            errors[impl.label].append(f"{type(exc).__name__}: {exc}")
    rows = []
    for impl in FAILOVER_IMPLS:
        runs = results[impl.label]
        if not runs:
            rows.append(
                [impl.label, "ERROR", *[""] * (len(waits) - 1), "; ".join(errors[impl.label])]
            )
            continue
        cells = []
        for call in range(len(waits)):
            elapsed = statistics.median(run[call][0] for run in runs) * 1e3
            outcomes = sorted({run[call][1] for run in runs})
            cells.append(f"{fmt_ms(elapsed)} ({' / '.join(outcomes)})")
        rows.append([impl.label, *cells, "; ".join(errors[impl.label])])
    print(
        f"\n## C2. {KILLED_FAILED} of {MASTERS} masters SIGKILLed after {KILL_WARM_UP} warm-up "
        f"pairs: ms until acquire reports failure, and what it reports (median of {probes} "
        f"probe(s), fresh masters each)\n"
    )
    print_table(
        ["impl", *(call_label(w) for w in waits), "error"],
        rows,
    )


def call_label(wait: float) -> str:
    return "try once (wait=0 / blocking=False)" if wait == 0 else f"blocking (wait {wait:g} s)"


# --- output and main -----------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~40 s smoke run")
    cli.number("--seconds", 3.0, 1.0, "part B window per impl and round", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds of parts A, B and C1", least=1)
    cli.number("--processes", 4, None, "part B contending processes", least=2)
    cli.number("--probes", 2, 1, "part C2 probes per impl", least=1)
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run_seconds = 0.5 if args.quick else 1.5  # parts A and C1, per run
    started = time.monotonic()
    with ExitStack() as stack:
        masters = [stack.enter_context(RedisServer()) for _ in range(MASTERS)]
        single = stack.enter_context(RedisServer())
        ports = Ports(tuple(s.port for s in masters), single.port)
        _vouch(ports.masters)
        print(header("Redlock benchmark", single.version(), versions(LIBRARIES)))
        print(
            f"masters 127.0.0.1:{', '.join(str(p) for p in ports.masters)}; "
            f"single server 127.0.0.1:{ports.single}; TTL {TTL} s"
        )
        part_a(ports, run_seconds, args.rounds)
        part_b(ports, args.processes, args.seconds, args.rounds)
    part_c1(run_seconds, args.rounds, QUICK_DEGRADED_WAIT if args.quick else DEGRADED_WAIT)
    part_c2(args.probes, (0,) if args.quick else (0, FAIL_WAIT))
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
