"""What queue groups cost per message, and what they buy a light tenant beside a hot one.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C; FLUSHALL runs before every measurement (the Lua scripts stay loaded,
and are loaded before any timing). Queues are
``django_redcoord.core.queues.queue.Queue`` objects with their default
settings and a plain ``redis.Redis`` client; every body is one small JSON value.

Part 1, cost per task (this process, single-threaded). Rows:

* ``plain (no group)``: ``q.push(body)``: the path every row is divided by
* ``groups, no limits``: ``q.push(body, group=name)``, the messages spread
  round-robin over ``--groups`` (default 1,000) groups
* ``groups, concurrency=1``: the same with ``Group(name, concurrency=1)``:
  the claim script counts each group's running messages and keeps a group's
  next message out of line until the running one is acknowledged
* ``groups, rate 100000/s``: ``Group(name, rate="100000/s")`` (burst 100,000):
  the claim script runs its GCRA check on every message it takes; with about
  ``--messages / --groups`` messages per group the check never refuses one
  (a refused message is ZADDed to the groups' waiting zset: a note under the
  table says so if the drain ran more ZADDs than the no-limits row's)

Per row and round, ``--messages`` (default 10,000) messages are pushed one by
one (``enqueue``: one ``push`` and round trip each), then one consumer drains
them (``drain``: ``claim(64)``, ``ack`` of every message, the
acknowledgements riding on the next claim, until a claim comes back empty).
Reported: first the ratios to ``plain`` (taken within each round; median
over rounds, min-max in brackets), then the rates (msgs/s, median).
``Redis µs/msg``: the EVALSHA (and EVAL) time INFO commandstats counts during
the enqueue or the drain (CONFIG RESETSTAT before each: the Lua scripts' own
``redis.call``s are inside it), divided by the messages: the server's share
of the cost. ``bytes/queued msg``: after the enqueue, MEMORY USAGE (SAMPLES 0:
exact) of the ready zset, plus for groups the pending zset and the groups'
state hash, divided by the messages queued (the state of the 1,000 groups is
spread over them). Left out: ``push_many``, delays, priorities, the Worker
class (its threads, heartbeat and wake-ups: see bench_queues.py), a rate that
does refuse (then messages wait, by design), concurrency limits above 1.

Part 2, hot tenant: ``--groups`` (1,000) cold groups of ``--cold`` (10)
messages each and one hot group of 100 x ``--cold`` messages. Two forked
worker processes, one ``Consumer`` each, drain the queue: ``claim(--batch)``
(default 2), a 0 ms job, ``ack`` (sent with the next claim); an idle worker
blocks on the queue's wake list (BLPOP, 50 ms at most) as the real Worker
does. The hot messages are pushed first, all at once (one ``push_many``: a
tenant's bulk import); then this process pushes the cold ones one by one,
round-robin over the cold groups, paced at ``--load`` (0.3) x the lesser of
two speeds measured just before: this process pushing cold grouped messages
alone, and the two workers draining a full queue of them (column ``cold
arrivals/s``: the rate reached). A cold message's wait is the claiming
worker's ``time.time()`` when its claim returned minus the message's
``enqueued_ms`` (the producer's ``time.time()`` when it built the envelope,
before the push's round trip): one machine, one clock. Rows, each a fresh
queue and fresh workers:

* ``unloaded``: the cold groups alone (grouped): the baseline
* ``loaded, grouped``: the hot group first, then the cold ones, all grouped
* ``loaded, ungrouped (plain FIFO)``: the same messages with no group: the
  cold ones queue behind the hot backlog (the negative baseline)

Reported: the cold messages' p99 wait as a ratio to ``unloaded`` (within
each round; median, min-max), their p50 and p99 (ms, median over rounds) and
max (ms, over all rounds), the arrival rate reached, and ``last hot
claimed``: ms from the hot push to the claim of the last hot message (how
long the hot tenant's backlog lasted; grouped, it is served round-robin with
the cold groups and takes longer). Left out: the hot messages' own waits,
delays, priorities, retries and limits.

Why claims of 2 and paced arrivals: the hot group is a tenth of the cold
volume, so it can only delay the cold messages that arrive while its backlog
lasts. Pushing all the cold ones first and draining afterwards would measure
how long their own pile takes (the hot tenth adds about a tenth to it). One
producer pushing one by one reaches only a few thousand msgs/s here, while two
workers claiming 8 at a time drain several times that: a 1,000-message hot
backlog is gone in 20-50 ms, about 1-2 % of the cold messages arrive during
it, and the FIFO row's p99 lands on that edge (1-3x the unloaded one, from run
to run). With claims of 2 the workers drain closer to the arrival rate: the
backlog lasts long enough to reach the p99. ``--batch 8`` shows the former.

``--rounds`` (default 3) interleave the rows, rotating their order. No
timing is asserted: on a shared 2-core machine the absolute numbers drift,
the ratios less. Run from the repository root::

    .venv/bin/python bench/bench_groups.py [--quick] [--only costs|hot]

The default run takes 35-60 s on 2 cores; ``--quick`` (2-3 s: 1,000 messages
in part 1, one cold message per group in part 2, one round) is a smoke run
whose numbers mean little. Progress goes to stderr, the tables to stdout.
"""

from __future__ import annotations

import argparse
import queue as queue_mod
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from support.cli import Options
from support.processes import CTX, child_exit, child_setup, describe, run_main, stop_process
from support.servers import HOST, RedisServer
from support.tables import fmt_ratios, format_table, header, percentile, versions

from django_redcoord.core.queues.groups import Group
from django_redcoord.core.queues.queue import Queue

PREFIX = "benchgroups"
QUEUE = "groups"
DRAIN_BATCH = 64  # part 1: one consumer's claim size
WORKERS = 2
HOT_FACTOR = 100  # the hot group holds this many times a cold group's messages
RATE = "100000/s"  # part 1: far above any group's rate here (burst 100,000)
HOT, COLD = 0, 1  # part 2 bodies: which tenant a message belongs to
IDLE_BLOCK = 0.05  # s: an idle worker's BLPOP on the wake list
STALL = 30.0  # s without progress: a run failed


def new_queue(port: int) -> Queue:
    return Queue(QUEUE, client=redis.Redis(host=HOST, port=port), prefix=PREFIX)


# -- part 1: cost per task ----------------------------------------------------------------


@dataclass(frozen=True)
class Path:
    key: str
    label: str
    groups: Callable[[int], list[Any]] | None  # the groups to cycle through (None: plain)


PATHS = [
    Path("plain", "plain (no group)", None),
    Path("groups", "groups, no limits", lambda n: [f"g:{i}" for i in range(n)]),
    Path("conc1", "groups, concurrency=1", lambda n: [Group(f"g:{i}", 1) for i in range(n)]),
    Path(
        "rate",
        f"groups, rate {RATE} (never refusing)",
        lambda n: [Group(f"g:{i}", rate=RATE) for i in range(n)],
    ),
]


@dataclass
class Cost:
    enqueue: float  # msgs/s
    drain: float  # msgs/s
    push_us: float  # Redis script time per message, enqueue
    claim_us: float  # Redis script time per message, drain
    bytes: float  # per queued message
    throttled: int  # drain claims that came back empty with a wait (a refusing rate)
    zadds: int  # ZADD calls during the drain (INFO commandstats; inside the scripts)


def script_usec(client: redis.Redis) -> float:
    stats = client.info("commandstats")
    return float(sum(stats.get(f"cmdstat_{c}", {}).get("usec", 0) for c in ("evalsha", "eval")))


def queued_bytes(q: Queue, grouped: bool) -> tuple[int, int]:
    """(bytes, messages) of what waits: MEMORY USAGE of the keys that hold it, exact."""
    client, k = q.client, q.keys
    keys = [k.ready, k.gpend, k.gstate] if grouped else [k.ready]
    total = sum(client.memory_usage(key, samples=0) or 0 for key in keys)
    return total, client.zcard(k.ready) + client.zcard(k.gpend)


def measure_cost(q: Queue, path: Path, n: int, ngroups: int) -> Cost:
    client = q.client
    client.flushall()
    groups = path.groups(ngroups) if path.groups else None
    push = q.push
    client.config_resetstat()
    started = time.perf_counter()
    if groups is None:
        for i in range(n):
            push({"n": i})
    else:
        ng = len(groups)
        for i in range(n):
            push({"n": i}, group=groups[i % ng])
    enqueue = n / (time.perf_counter() - started)
    push_us = script_usec(client) / n
    size, queued = queued_bytes(q, groups is not None)
    if queued != n:
        raise RuntimeError(f"{path.key}: pushed {n} messages but {queued} are queued")

    consumer = q.consumer("drain")
    claim, ack = consumer.claim, consumer.ack
    got = throttled = 0
    client.config_resetstat()
    started = time.perf_counter()
    while True:
        messages, hint = claim(DRAIN_BATCH)
        if messages:
            got += len(messages)
            for m in messages:
                ack(m)
        elif hint is None:  # empty: this claim carried the last acknowledgements
            break
        else:  # a group's rate refused (not expected here): its message waits
            throttled += 1
            time.sleep(hint)
    drain = n / (time.perf_counter() - started)
    claim_us = script_usec(client) / n
    zadds = client.info("commandstats").get("cmdstat_zadd", {}).get("calls", 0)
    if got != n:
        raise RuntimeError(f"{path.key}: drained {got} of {n} messages")
    return Cost(enqueue, drain, push_us, claim_us, size / n, throttled, zadds)


def run_costs(args: argparse.Namespace, port: int) -> dict[str, list[Cost]]:
    q = new_queue(port)
    for path in PATHS:  # load the scripts, build the connection: outside the timings
        measure_cost(q, path, 20, 10)
    costs: dict[str, list[Cost]] = {p.key: [] for p in PATHS}
    for rnd in range(args.rounds):
        k = rnd % len(PATHS)
        for path in PATHS[k:] + PATHS[:k]:
            cost = measure_cost(q, path, args.messages, args.groups)
            costs[path.key].append(cost)
            progress(
                f"part 1, round {rnd + 1}/{args.rounds}: {path.label}: enqueue "
                f"{cost.enqueue:,.0f}/s, drain {cost.drain:,.0f}/s"
            )
    q.client.flushall()
    return costs


def print_costs(args: argparse.Namespace, costs: dict[str, list[Cost]]) -> None:
    print(
        f"\n### Cost per task: {args.messages:,} messages per row and round over "
        f"{args.groups:,} groups, pushed one by one, then drained by one consumer "
        f"(claim {DRAIN_BATCH}, ack); median of {args.rounds} round(s)\n"
    )
    plain = costs["plain"]

    def ratios(key: str, attr: str) -> str:
        return fmt_ratios(
            [getattr(c, attr) / getattr(p, attr) for c, p in zip(costs[key], plain, strict=True)],
            "several",
        )

    def med(key: str, attr: str) -> float:
        return statistics.median(getattr(c, attr) for c in costs[key])

    rows = [
        [
            path.label,
            ratios(path.key, "enqueue"),
            ratios(path.key, "drain"),
            ratios(path.key, "bytes"),
            f"{med(path.key, 'enqueue'):,.0f}",
            f"{med(path.key, 'drain'):,.0f}",
            f"{med(path.key, 'push_us'):.1f}",
            f"{med(path.key, 'claim_us'):.1f}",
            f"{med(path.key, 'bytes'):.0f}",
        ]
        for path in PATHS
    ]
    print(
        format_table(
            [
                "path",
                "enqueue vs plain",
                "drain vs plain",
                "bytes vs plain",
                "enqueue msgs/s",
                "drain msgs/s",
                "Redis µs/msg push",
                "Redis µs/msg claim+ack",
                "bytes/queued msg",
            ],
            rows,
        )
    )
    refused = sum(
        max(0, r.zadds - g.zadds) for r, g in zip(costs["rate"], costs["groups"], strict=True)
    )
    throttled = sum(c.throttled for c in costs["rate"])
    if refused or throttled:
        print(
            f"\n(the rate row's groups refused messages: {refused} ZADD(s) more than the "
            f"no-limits drain, {throttled} empty claim(s) waited: not a pure cost row)"
        )


# -- part 2: hot tenant -------------------------------------------------------------------


def worker_main(
    port: int,
    slot: int,
    batch: int,
    counts: Any,
    ready: Any,
    go: Any,
    stop: Any,
    out: Any,
) -> None:
    """One forked worker: claim small batches, run a 0 ms job, ack; note each cold message's
    wait (ms) and when it claimed its last hot message; block on the wake list while there is
    nothing to claim."""
    child_setup()
    try:
        q = new_queue(port)
        consumer = q.consumer(f"worker-{slot}")
        consumer.claim(0)  # connect, load the script
        blpop, wake = q.client.blpop, q.keys.wake
        claim, ack = consumer.claim, consumer.ack
        waits: list[float] = []
        last_hot = 0.0
        ready.wait(timeout=60)
        go.wait(timeout=60)
        while True:
            messages, _ = claim(batch)
            if messages:
                now = time.time() * 1000
                for m in messages:
                    if m.body == COLD:
                        waits.append(now - m.enqueued_ms)
                    else:
                        last_hot = now
                    ack(m)  # the 0 ms job is done
                counts[slot] += len(messages)
                continue
            if stop.is_set():  # (the empty claim carried the acknowledgements)
                break
            blpop([wake], timeout=IDLE_BLOCK)
        out.put(("ok", (waits, last_hot)))
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        out.put(("error", describe(exc)))
    child_exit(out)


class Workers:
    """WORKERS forked workers, started together once built; stopped and reaped together."""

    def __init__(self, port: int, batch: int) -> None:
        self.counts = CTX.RawArray("q", WORKERS)
        self.ready = CTX.Barrier(WORKERS + 1)
        self.go = CTX.Event()
        self.stop = CTX.Event()
        self.out = CTX.Queue()
        self.procs = [
            CTX.Process(
                target=worker_main,
                args=(port, slot, batch, self.counts, self.ready, self.go, self.stop, self.out),
                daemon=True,
            )
            for slot in range(WORKERS)
        ]
        try:
            for proc in self.procs:
                proc.start()
            self.ready.wait(timeout=60)
        except BaseException:
            self.close()
            raise

    def start(self) -> None:
        self.go.set()

    def wait_for(self, total: int) -> float:
        """Block until the workers processed ``total`` messages; the monotonic time then."""
        seen, progress_at = -1, time.monotonic()
        while True:
            done = sum(self.counts)
            now = time.monotonic()
            if done >= total:
                return now
            if done != seen:
                seen, progress_at = done, now
            elif now - progress_at > STALL:
                raise RuntimeError(f"stuck at {done}/{total} messages for {STALL:g} s")
            if not all(p.is_alive() for p in self.procs):
                raise RuntimeError(f"a worker exited after {done}/{total} messages")
            time.sleep(0.002)

    def finish(self) -> tuple[list[float], float]:
        """Stop the workers; the cold waits they noted (ms), and the clock (ms) of the last
        hot message's claim (0: none)."""
        self.stop.set()
        waits: list[float] = []
        last_hot = 0.0
        try:
            for _ in self.procs:
                status, value = self.out.get(timeout=30)
                if status == "error":
                    raise RuntimeError(f"a worker failed: {value}")
                waits.extend(value[0])
                last_hot = max(last_hot, value[1])
        except queue_mod.Empty:
            raise RuntimeError("a worker did not report within 30 s") from None
        finally:
            self.close()
        return waits, last_hot

    def close(self) -> None:
        self.stop.set()
        self.go.set()
        for proc in self.procs:
            stop_process(proc)


def measure_capacity(port: int, ngroups: int, n: int, batch: int) -> float:
    """Msgs/s of the workers draining ``n`` cold grouped messages queued beforehand."""
    q = new_queue(port)
    q.client.flushall()
    per, extra = divmod(n, ngroups)
    for i in range(ngroups):
        if per + (i < extra):
            q.push_many([COLD] * (per + (i < extra)), group=f"cold:{i}")
    workers = Workers(port, batch)
    try:
        started = time.monotonic()
        workers.start()
        ended = workers.wait_for(n)
        workers.finish()
    finally:
        workers.close()
    q.client.flushall()
    return n / (ended - started)


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    hot: bool
    grouped: bool


SCENARIOS = [
    Scenario("unloaded", "unloaded (cold groups only, grouped)", False, True),
    Scenario("grouped", "loaded, grouped", True, True),
    Scenario("ungrouped", "loaded, ungrouped (plain FIFO)", True, False),
]


@dataclass
class HotRun:
    waits: list[float]  # the cold messages' waits (ms), sorted
    arrivals: float  # cold messages pushed per second, as reached
    hot_done: float | None  # ms from the hot push to the claim of the last hot message

    def p(self, q: float) -> float:
        return percentile(self.waits, q)


def measure_hot(args: argparse.Namespace, port: int, sc: Scenario, rate: float) -> HotRun:
    """One run of a scenario: the hot backlog (if any), then the cold arrivals at ``rate``."""
    q = new_queue(port)
    q.client.flushall()
    names = [f"cold:{i}" if sc.grouped else None for i in range(args.groups)]
    n_cold, n_hot = args.groups * args.cold, HOT_FACTOR * args.cold if sc.hot else 0
    workers = Workers(port, args.batch)
    try:
        workers.start()
        hot_at = time.time() * 1000
        if n_hot:
            q.push_many([HOT] * n_hot, group="hot" if sc.grouped else None)
        push, sleep, clock = q.push, time.sleep, time.monotonic
        ngroups = args.groups
        t0 = clock()
        for idx in range(n_cold):
            ahead = t0 + idx / rate - clock()
            if ahead > 0:
                sleep(ahead)
            push(COLD, group=names[idx % ngroups])
        arrivals = n_cold / (clock() - t0)
        workers.wait_for(n_cold + n_hot)
        waits, last_hot = workers.finish()
    finally:
        workers.close()
    if len(waits) != n_cold:
        raise RuntimeError(f"{sc.key}: {len(waits)} cold messages claimed of {n_cold}")
    return HotRun(sorted(waits), arrivals, last_hot - hot_at if n_hot else None)


def measure_producer(port: int, ngroups: int, n: int) -> float:
    """Msgs/s of this process pushing ``n`` cold grouped messages one by one, no worker running."""
    q = new_queue(port)
    q.client.flushall()
    names = [f"cold:{i}" for i in range(ngroups)]
    push = q.push
    started = time.perf_counter()
    for idx in range(n):
        push(COLD, group=names[idx % ngroups])
    elapsed = time.perf_counter() - started
    q.client.flushall()
    return n / elapsed


def run_hot(
    args: argparse.Namespace, port: int
) -> tuple[tuple[float, float, float], dict[str, list[HotRun | None]], list[str]]:
    n = max(2000, args.groups * args.cold)
    producer = measure_producer(port, args.groups, min(n, 5000))
    capacity = measure_capacity(port, args.groups, n, args.batch)
    rate = args.load * min(producer, capacity)
    progress(
        f"part 2: producer {producer:,.0f} msgs/s, workers {capacity:,.0f} msgs/s: cold "
        f"arrivals at {rate:,.0f}/s"
    )
    # per scenario, one entry per round (None: that run failed)
    results: dict[str, list[HotRun | None]] = {sc.key: [] for sc in SCENARIOS}
    failures: list[str] = []
    for rnd in range(args.rounds):
        k = rnd % len(SCENARIOS)
        for sc in SCENARIOS[k:] + SCENARIOS[:k]:
            try:
                run = measure_hot(args, port, sc, rate)
            except Exception as exc:  # a worker that failed to start: BrokenBarrierError
                failures.append(f"round {rnd + 1}, {sc.label}: {exc}")
                progress(f"  FAILED: {exc}")
                results[sc.key].append(None)
                continue
            results[sc.key].append(run)
            progress(
                f"part 2, round {rnd + 1}/{args.rounds}: {sc.label}: cold p50 {run.p(50):.1f} ms, "
                f"p99 {run.p(99):.1f} ms, arrivals {run.arrivals:,.0f}/s"
                + (f", hot done after {run.hot_done:.0f} ms" if run.hot_done is not None else "")
            )
    return (producer, capacity, rate), results, failures


def print_hot(
    args: argparse.Namespace,
    speeds: tuple[float, float, float],
    results: dict[str, list[HotRun | None]],
    failures: list[str],
) -> None:
    n_cold = args.groups * args.cold
    producer, capacity, rate = speeds
    print(
        f"\n### Hot tenant: {args.groups:,} cold groups x {args.cold} message(s) "
        f"({n_cold:,}), one hot group of {HOT_FACTOR * args.cold:,} pushed first; "
        f"{WORKERS} worker processes (claim {args.batch}, 0 ms job, ack); cold arrivals paced "
        f"at {rate:,.0f}/s ({args.load:g} x the lesser of {producer:,.0f}/s pushed alone and "
        f"{capacity:,.0f}/s drained); median of {args.rounds} round(s)\n"
    )
    base = results["unloaded"]
    rows = []
    for sc in SCENARIOS:
        runs = [r for r in results[sc.key] if r is not None]
        if not runs:
            rows.append([sc.label, "ERROR", "", "", "", "", ""])
            continue
        # within each round (a round where either run failed has no ratio)
        paired = [r.p(99) / b.p(99) for r, b in zip(results[sc.key], base, strict=True) if r and b]
        hot = [r.hot_done for r in runs if r.hot_done is not None]
        rows.append(
            [
                sc.label,
                fmt_ratios(paired, "several"),
                f"{statistics.median(r.p(50) for r in runs):.1f}",
                f"{statistics.median(r.p(99) for r in runs):.1f}",
                f"{max(r.waits[-1] for r in runs):.1f}",
                f"{statistics.median(r.arrivals for r in runs):,.0f}",
                f"{statistics.median(hot):.0f}" if hot else "",
            ]
        )
    print(
        format_table(
            [
                "row",
                "cold p99 vs unloaded",
                "cold p50 (ms)",
                "cold p99 (ms)",
                "cold max (ms)",
                "cold arrivals/s",
                "last hot claimed (ms)",
            ],
            rows,
        )
    )
    if failures:
        print("\nFailures:\n" + "\n".join(f"* {f}" for f in failures))


# -- main ----------------------------------------------------------------------------------


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="a smoke run of a few seconds: tiny sizes, one round")
    cli.number("--messages", 10000, 1000, "part 1: messages per row and round", least=100)
    cli.number("--groups", 1000, 1000, "groups (part 1), cold groups (part 2)", least=1)
    cli.number("--cold", 10, 1, "part 2: messages per cold group", least=1)
    cli.number("--load", 0.3, None, "part 2: cold arrival rate / capacity", above=0)
    cli.number("--batch", 2, None, "part 2: each worker's claim size", least=1)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.add("--only", choices=["costs", "hot"], help="run one part (default: both)")
    return cli.parse(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = RedisServer()
    try:
        server.start()
        started = time.monotonic()
        print(
            header(
                "queue groups",
                server.version(),
                versions(["django-redcoord", "redis", "hiredis"], missing="absent"),
            )
        )
        print(
            f"settings: --messages {args.messages}, --groups {args.groups}, --cold {args.cold}, "
            f"--load {args.load:g}, --batch {args.batch}, --rounds {args.rounds}"
            f"{', --quick' if args.quick else ''}",
            flush=True,
        )
        costs = run_costs(args, server.port) if args.only != "hot" else None
        hot = run_hot(args, server.port) if args.only != "costs" else None
        if costs is not None:
            print_costs(args, costs)
        if hot is not None:
            print_hot(args, *hot)
        print(f"\n(total {time.monotonic() - started:.0f} s)")
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        for child in CTX.active_children():
            child.kill()
        server.stop()
    return 0


if __name__ == "__main__":
    run_main(main)
