"""Benchmark broadcast wake-up latency: our Signal and Event against bare Redis Pub/Sub.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C. Implementations, each on fresh names per run:

* ``ours Signal.broadcast``: 100 waiters, each a thread with its own
  ``Signal`` object, blocked in ``sig.wait()``; the sender calls
  ``sig.broadcast(k)`` (one Lua script pushes ``k`` onto every queued
  waiter's wake list; each waiter's blocking pop returns it). A waiter
  re-arms by calling ``wait()`` again (a script to queue, then the pop).
* ``ours Event.set``: 100 threads blocked in ``Event(name_k).wait()``; the
  sender calls ``Event(name_k).set()``. A woken waiter re-reads the state
  (one more script round trip) before ``wait()`` returns True, and that is
  in its latency. Each broadcast uses a fresh event (``name_k``, k = 0, 1,
  ...), so a waiter re-arms by waiting on the next one, with no ``clear()``
  and no race between clearing and re-arming.
* ``redis-py pubsub``: 100 threads, each with its own ``client.pubsub()``
  (its own connection) SUBSCRIBEd to one channel, blocked in
  ``get_message(timeout=1)``; the sender PUBLISHes ``k`` once. A waiter
  "re-arms" by calling ``get_message()`` again; it never unsubscribes.
* ``BLPOP + Lua LPUSH (floor)``, a reference row, not a signal: each of the
  100 threads BLPOPs a list of its own (plain redis-py), the sender runs one
  Lua script that LPUSHes ``k`` onto all 100 lists. No queue, no leases, no
  JSON: what any design that wakes waiters through lists (ours) costs at
  least on this machine. Not in part B (its lists keep what was pushed).

The 100 waiters are 4 processes x 25 threads (each process has one client:
ours ``client_from_url``, the others a plain ``redis.Redis``; every thread's
waits and subscriptions use connections of their own from its pool).
100 processes would be the truer picture of 100 independent waiters, but
100 Python processes on this 2-core machine would measure the scheduler,
not Redis. Even so the waiters' Python work dominates: 100 wake-ups share 2
cores with redis-server and the sender, and within a process a woken
thread waits for the GIL behind the others woken with it, so "last waiter"
is mostly the CPU time 100 wake-ups cost client-side, and that differs by
implementation (ours re-arms with a script round trip, pubsub with none).

Part A, broadcast to 100 waiters: the sender (the parent process, its own
client) repeats, per run, ``--broadcasts`` times (default 400; 3 warm-up
broadcasts before them are not counted): wait until the 100 waiters are
armed, take t_send = CLOCK_MONOTONIC, send, then wait until all 100 wrote
their receive time (or 1 s passed). Each waiter writes CLOCK_MONOTONIC just
after ``wait()`` / ``get_message()`` / ``blpop()`` returned the data
(CLOCK_MONOTONIC is one clock for all processes on Linux) into shared
memory, and re-arms at once. "Armed": 2 ms after the last receipt, and then
(all but pubsub) until INFO clients reports 100 ``blocked_clients``, i.e.
every waiter is back in its blocking pop; Pub/Sub clients do not count as
blocked, so for pubsub it is just the 2 ms (and once, before the first
broadcast, PUBSUB NUMSUB = 100). So every broadcast finds every waiter idle
and blocked; re-arming is in the latency only as far as the early waiters'
re-arming competes for CPU (and, for ours, for Redis) with the late
waiters' wake-ups. ``--rounds`` interleaved rounds (default 5) each run
every implementation once (fresh processes), in alternating order. Reported
per implementation, in ms (median round unless said otherwise):

* per-waiter p50/p99: receive - t_send over every (broadcast, waiter) pair
  received; max: the largest of any round (by definition the same as the
  last waiter's max)
* last waiter p50/p99: per broadcast, the last of the 100 receive times -
  t_send (the time until all 100 had it; broadcasts with a missed waiter are
  left out and counted as missed); max: the largest of any round
* first waiter p50: per broadcast, the first of the 100 receive times -
  t_send: the wake-up path with the least queueing behind other waiters
* send call p50: how long the sender's ``broadcast()`` / ``set()`` /
  ``publish()`` call took to return (it competes for CPU with the waiters)
* vs pubsub: the implementation's p50 / pubsub's p50 (above 1 = slower),
  per-waiter and last-waiter, taken within each round; median over rounds
  (min-max in brackets)
* missed: (broadcast, waiter) pairs never received, all rounds summed (of
  rounds x broadcasts x 100); must be 0 for ours
* short sends: broadcasts whose return value (ours: waiters delivered to or
  woken; PUBLISH: subscribers reached; floor: lists pushed) was not 100,
  all rounds summed
* cmds/bcast: Redis commands per broadcast cycle from INFO commandstats
  (INFO itself excluded), all rounds summed / broadcasts; the snapshots are
  taken when all are armed, so a cycle is the send, the 100 wake-ups and
  the 100 re-arms. Redis counts the commands Lua scripts run too, so this is
  server work, not round trips (ours sends EVALSHA and the blocking pop, the
  rest runs inside the scripts); the most frequent are listed below.

Part B, late waiters: the sender sets the event / broadcasts / PUBLISHes
first, then 100 waiters (the same 4 x 25 threads) start waiting on it with
a 0.2 s timeout: ``Event.wait(0.2)`` on the event just set, ``Signal.wait
(0.2)`` on the signal just broadcast, and for pubsub SUBSCRIBE to the channel
just published to and ``get_message()`` until 0.2 s passed. An event stays
set, so its late waiter should return True at once; a signal and a Pub/Sub
message go only to those waiting at the time, so their late waiters miss
them by design (the Signal row is there to show that). ``--late`` repeats
(default 3) per round and implementation, run in the same processes right
after part A's broadcasts. Reported, all rounds summed: waiters, got it,
missed, and p50/p99 of how long ``wait()`` took in the waiters that got it.

Run from the repository root::

    .venv/bin/python bench/bench_signals.py [--quick] [--rounds R] [--broadcasts N] [--late L]

The default run takes about 2.5 minutes on 2 cores; ``--quick`` (2 rounds x
150 broadcasts, 1 late repeat) is a ~30 s smoke run whose numbers are only
indicative.
"""

from __future__ import annotations

import argparse
import queue
import secrets
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from support.cli import Options
from support.processes import CTX, run_main, stop_process
from support.servers import HOST, RedisServer, command_calls
from support.tables import fmt_ratios, header, percentile, print_table, top_commands, versions

from django_redcoord.core.signals import Event, Signal
from django_redcoord.core.transport.clients import client_from_url

PREFIX = "bench"
PROCS = 4  # waiter processes
THREADS = 25  # waiter threads per process
WAITERS = PROCS * THREADS
WARMUP = 3  # broadcasts per run before the counted ones (connect, load scripts)
GAP = 0.002  # seconds between the last receipt and the arming check
MISS_TIMEOUT = 1.0  # seconds the sender waits for all receipts of one broadcast
ARM_TIMEOUT = 10.0  # seconds the sender waits for the waiters to be armed
WAIT_CHUNK = 1.0  # seconds a waiter waits before looking at the stop flag
LATE_TIMEOUT = 0.2  # seconds a late waiter waits
EVENT_KEEP = 600.0  # seconds our events live (keep=)
TOP_COMMANDS = 12
CHILD_TIMEOUT = 60.0  # seconds a waiter process may take to finish after the run


# --- implementations -------------------------------------------------------------------
#
# A waiter's ``next(timeout)`` returns the broadcast number it received, or None
# when ``timeout`` ran out. A sender's ``send(k)`` delivers k and returns what the
# implementation says it reached. Part B: ``late_wait(j, timeout)`` -> got it?


class SignalWaiter:
    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name
        self.sig = Signal(name, client=client, prefix=PREFIX)

    def next(self, timeout: float) -> int | None:
        return self.sig.wait(timeout=timeout)

    def late_wait(self, j: int, timeout: float) -> bool:
        late = Signal(f"{self.name}:late{j}", client=self.client, prefix=PREFIX)
        return late.wait(timeout=timeout) is not None

    def close(self) -> None:
        pass


class SignalSender:
    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name
        self.sig = Signal(name, client=client, prefix=PREFIX)

    def send(self, k: int) -> int:
        return self.sig.broadcast(k)

    def late_send(self, j: int) -> int:
        return Signal(f"{self.name}:late{j}", client=self.client, prefix=PREFIX).broadcast(j)


class EventWaiter:
    """Broadcast k is the event ``name:k``; waiting for the next one is re-arming."""

    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name, self.k = client, name, 0

    def next(self, timeout: float) -> int | None:
        event = Event(f"{self.name}:{self.k}", client=self.client, prefix=PREFIX, keep=EVENT_KEEP)
        if not event.wait(timeout=timeout):
            return None
        self.k += 1
        return self.k - 1

    def late_wait(self, j: int, timeout: float) -> bool:
        late = Event(f"{self.name}:late{j}", client=self.client, prefix=PREFIX, keep=EVENT_KEEP)
        return late.wait(timeout=timeout)

    def close(self) -> None:
        pass


class EventSender:
    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name
        self.events: dict[int, Event] = {}

    def prepare(self, k: int) -> None:
        """Build the Event object before t_send is taken."""
        self.events[k] = Event(
            f"{self.name}:{k}", client=self.client, prefix=PREFIX, keep=EVENT_KEEP
        )

    def send(self, k: int) -> int:
        return self.events.pop(k).set(k)

    def late_send(self, j: int) -> int:
        late = Event(f"{self.name}:late{j}", client=self.client, prefix=PREFIX, keep=EVENT_KEEP)
        return late.set(j)


class PubSubWaiter:
    def __init__(self, client: redis.Redis, name: str) -> None:
        self.name = name
        self.pubsub = client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.subscribe(name)

    def next(self, timeout: float) -> int | None:
        message = self.pubsub.get_message(timeout=timeout)
        return None if message is None else int(message["data"])

    def late_wait(self, j: int, timeout: float) -> bool:
        channel = f"{self.name}:late{j}"
        deadline = time.monotonic() + timeout
        self.pubsub.subscribe(channel)
        try:
            while (left := deadline - time.monotonic()) > 0:
                message = self.pubsub.get_message(timeout=left)
                if message is not None and message["type"] == "message":
                    return True
            return False
        finally:
            self.pubsub.unsubscribe(channel)

    def close(self) -> None:
        self.pubsub.close()


class PubSubSender:
    def __init__(self, client: redis.Redis, name: str) -> None:
        self.client, self.name = client, name

    def send(self, k: int) -> int:
        return self.client.publish(self.name, k)

    def late_send(self, j: int) -> int:
        return self.client.publish(f"{self.name}:late{j}", j)


class FloorWaiter:
    """A bare BLPOP on a list of the waiter's own: the least a list-based wake-up costs."""

    def __init__(self, client: redis.Redis, name: str) -> None:
        self.client, self.key = client, floor_key(name, _thread_waiter_id())

    def next(self, timeout: float) -> int | None:
        popped = self.client.blpop([self.key], timeout=timeout)
        return None if popped is None else int(popped[1])

    def close(self) -> None:
        pass


class FloorSender:
    """One Lua script LPUSHes ``k`` onto every waiter's list (no queue, no TTL, no JSON)."""

    def __init__(self, client: redis.Redis, name: str) -> None:
        self.keys = [floor_key(name, w) for w in range(WAITERS)]
        self.script = client.register_script(
            "for _, key in ipairs(KEYS) do redis.call('LPUSH', key, ARGV[1]) end return #KEYS"
        )

    def send(self, k: int) -> int:
        return self.script(keys=self.keys, args=[k])


def floor_key(name: str, w: int) -> str:
    return f"{PREFIX}:{name}:{w}"


_local = threading.local()


def _thread_waiter_id() -> int:
    return _local.waiter_id


def _ours_client(port: int) -> redis.Redis:
    return client_from_url(f"redis://{HOST}:{port}/0")


def _plain_client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port)


@dataclass(frozen=True)
class Impl:
    label: str
    client: Callable[[int], redis.Redis]
    waiter: Callable[[Any, str], Any]
    sender: Callable[[Any, str], Any]
    blocks: bool  # armed waiters show in INFO blocked_clients
    late_label: str | None  # None: not in part B


IMPLS = (
    Impl(
        "ours Signal.broadcast",
        _ours_client,
        SignalWaiter,
        SignalSender,
        True,
        "ours Signal (broadcast, then wait)",
    ),
    Impl(
        "ours Event.set",
        _ours_client,
        EventWaiter,
        EventSender,
        True,
        "ours Event (set, then wait)",
    ),
    Impl(
        "redis-py pubsub",
        _plain_client,
        PubSubWaiter,
        PubSubSender,
        False,
        "redis-py pubsub (PUBLISH, then SUBSCRIBE)",
    ),
    Impl("BLPOP + Lua LPUSH (floor)", _plain_client, FloorWaiter, FloorSender, True, None),
)
PUBSUB = "redis-py pubsub"


# --- waiter processes ------------------------------------------------------------------


@dataclass
class Shared:
    """Shared memory and sync objects for one run (created before forking)."""

    cycles: int  # broadcasts including warm-up; broadcast number ``cycles`` means stop
    late: int
    recv: Any = field(init=False)  # RawArray d[cycles * WAITERS]: receive time, 0 = none
    late_call: Any = field(init=False)  # RawArray d[late * WAITERS]
    late_ret: Any = field(init=False)  # RawArray d[late * WAITERS]; 0 = not back yet
    late_got: Any = field(init=False)  # RawArray b[late * WAITERS]
    stop: Any = field(init=False)  # RawValue b: part A is over
    barrier: Any = field(init=False)  # Barrier(WAITERS + 1) for part B
    errors: Any = field(init=False)  # Queue of error strings

    def __post_init__(self) -> None:
        self.recv = CTX.RawArray("d", self.cycles * WAITERS)
        self.late_call = CTX.RawArray("d", self.late * WAITERS)
        self.late_ret = CTX.RawArray("d", self.late * WAITERS)
        self.late_got = CTX.RawArray("b", self.late * WAITERS)
        self.stop = CTX.RawValue("b", 0)
        self.barrier = CTX.Barrier(WAITERS + 1)
        self.errors = CTX.Queue()


def _waiter_thread(impl: Impl, client: Any, name: str, w: int, sh: Shared) -> None:
    waiter = None
    _local.waiter_id = w
    try:
        waiter = impl.waiter(client, name)
        while True:
            k = waiter.next(WAIT_CHUNK)
            now = time.monotonic()
            if k is None:
                if sh.stop.value:
                    break
                continue
            if k < 0 or k >= sh.cycles:
                break
            slot = k * WAITERS + w
            if sh.recv[slot] == 0.0:
                sh.recv[slot] = now
        for j in range(sh.late):
            sh.barrier.wait(timeout=60)  # ready: the sender sends now
            sh.barrier.wait(timeout=60)  # go: it has sent
            t_call = time.monotonic()
            got = waiter.late_wait(j, LATE_TIMEOUT)
            t_ret = time.monotonic()
            slot = j * WAITERS + w
            sh.late_call[slot], sh.late_got[slot], sh.late_ret[slot] = t_call, int(got), t_ret
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        sh.errors.put(f"a waiter: {type(exc).__name__}: {exc}")
        sh.barrier.abort()
    finally:
        if waiter is not None:
            waiter.close()


def _waiter_proc(impl: Impl, port: int, name: str, proc_id: int, sh: Shared) -> None:
    client = impl.client(port)
    threads = [
        threading.Thread(
            target=_waiter_thread,
            args=(impl, client, name, proc_id * THREADS + i, sh),
            name=f"waiter-{proc_id}-{i}",
            daemon=True,
        )
        for i in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()


# --- the sender (parent) ---------------------------------------------------------------


def wait_armed(impl: Impl, stats: redis.Redis, name: str, first: bool) -> None:
    """GAP, then until every waiter is blocked (INFO blocked_clients); pubsub: GAP only,
    and before the first broadcast until all have subscribed (PUBSUB NUMSUB)."""
    time.sleep(GAP)
    deadline = time.monotonic() + ARM_TIMEOUT
    while True:
        if impl.blocks:
            armed = int(stats.info("clients")["blocked_clients"])
        elif first:  # once: every waiter has subscribed (PUBSUB NUMSUB, before the snapshot)
            armed = int(stats.pubsub_numsub(name)[0][1])
        else:
            return
        if armed >= WAITERS:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {armed} of {WAITERS} waiters armed after {ARM_TIMEOUT:g} s")
        time.sleep(0.0005)


def wait_received(sh: Shared, k: int) -> None:
    deadline = time.monotonic() + MISS_TIMEOUT
    lo, hi = k * WAITERS, (k + 1) * WAITERS
    while min(sh.recv[lo:hi]) == 0.0 and time.monotonic() < deadline:
        time.sleep(0.0005)


@dataclass
class RunStats:
    """One run: one implementation in one round."""

    per_waiter: list[float]  # seconds, sorted
    first: list[float]  # seconds, sorted: the first waiter's latency per broadcast
    last: list[float]  # seconds, sorted, complete broadcasts only
    send_call: list[float]  # seconds, sorted: how long the send call took
    missed: int
    short: int
    broadcasts: int
    commands: Counter[str]
    late_n: int
    late_got: int
    late_took: list[float]  # seconds, of the waiters that got it
    errors: list[str]


def run_once(impl: Impl, port: int, broadcasts: int, late: int) -> RunStats:
    slug = "".join(ch if ch.isalnum() else "-" for ch in impl.label.lower())
    name = f"bench-sig-{slug}-{secrets.token_hex(3)}"
    cycles = WARMUP + broadcasts
    late = late if impl.late_label else 0
    sh = Shared(cycles, late)
    procs = [
        CTX.Process(target=_waiter_proc, args=(impl, port, name, p, sh), daemon=True)
        for p in range(PROCS)
    ]
    stats = _plain_client(port)
    sender_client = impl.client(port)
    sender = impl.sender(sender_client, name)
    t_send = [0.0] * cycles
    t_sent = [0.0] * cycles  # when the send call returned
    returned = [0] * cycles
    errors: list[str] = []
    before = after = Counter[str]()
    try:
        for proc in procs:
            proc.start()
        sender_client.ping()
        for k in range(cycles + 1):
            wait_armed(impl, stats, name, first=k == 0)
            if k == WARMUP:
                before = command_calls(stats)
            if k == cycles:
                after = command_calls(stats)
                break
            if isinstance(sender, EventSender):
                sender.prepare(k)
            t_send[k] = time.monotonic()
            returned[k] = sender.send(k)
            t_sent[k] = time.monotonic()
            wait_received(sh, k)
        sh.stop.value = 1
        if isinstance(sender, EventSender):
            sender.prepare(cycles)
        sender.send(cycles)  # stop
        for j in range(late):
            sh.barrier.wait(timeout=60)
            sender.late_send(j)
            sh.barrier.wait(timeout=60)
        deadline = time.monotonic() + LATE_TIMEOUT + CHILD_TIMEOUT
        for proc in procs:
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
        sh.stop.value = 1
        sh.barrier.abort()
    finally:
        for proc in procs:
            stop_process(proc)
        stats.close()
        sender_client.close()
    while True:
        try:
            errors.append(sh.errors.get(timeout=0.1))
        except queue.Empty:
            break
    return summarize(sh, t_send, t_sent, returned, before, after, errors)


def summarize(
    sh: Shared,
    t_send: list[float],
    t_sent: list[float],
    returned: list[int],
    before: Counter[str],
    after: Counter[str],
    errors: list[str],
) -> RunStats:
    per_waiter: list[float] = []
    first: list[float] = []
    last: list[float] = []
    missed = short = 0
    counted = [k for k in range(WARMUP, sh.cycles) if t_send[k]]  # sent (a run may stop early)
    for k in counted:
        times = sh.recv[k * WAITERS : (k + 1) * WAITERS]
        got = [t - t_send[k] for t in times if t > 0.0]
        per_waiter.extend(got)
        missed += WAITERS - len(got)
        if got:
            first.append(min(got))
        if len(got) == WAITERS:
            last.append(max(got))
        if returned[k] != WAITERS:
            short += 1
    slots = range(sh.late * WAITERS)
    done = [i for i in slots if sh.late_ret[i] > 0.0]
    took = [sh.late_ret[i] - sh.late_call[i] for i in done if sh.late_got[i]]
    return RunStats(
        per_waiter=sorted(per_waiter),
        first=sorted(first),
        last=sorted(last),
        send_call=sorted(t_sent[k] - t_send[k] for k in counted if t_sent[k]),
        missed=missed,
        short=short,
        broadcasts=len(counted),
        commands=after - before if after else Counter(),
        late_n=len(slots),
        late_got=len(took),
        late_took=sorted(took),
        errors=errors,
    )


# --- reporting -------------------------------------------------------------------------


def pct_ms(values: Sequence[float], p: float) -> float | None:
    return percentile(values, p) * 1000 if values else None


def fmt_ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.2f}"


def median_of(runs: Sequence[RunStats], get: Callable[[RunStats], float | None]) -> str:
    values = [v for r in runs if (v := get(r)) is not None]
    return fmt_ms(statistics.median(values)) if values else "n/a"


def max_of(runs: Sequence[RunStats], attr: str) -> str:
    values = [getattr(r, attr)[-1] * 1000 for r in runs if getattr(r, attr)]
    return fmt_ms(max(values)) if values else "n/a"


def ratio(runs: Sequence[RunStats | None], ref: Sequence[RunStats | None], attr: str) -> str:
    """Median over rounds of p50(ours) / p50(pubsub) in the same round (min-max)."""
    values = []
    for mine, theirs in zip(runs, ref, strict=True):
        if mine is None or theirs is None:
            continue
        a, b = pct_ms(getattr(mine, attr), 50), pct_ms(getattr(theirs, attr), 50)
        if a is not None and b:
            values.append(a / b)
    return fmt_ratios(values)


def commands_per_broadcast(runs: Sequence[RunStats]) -> str:
    total = sum(r.broadcasts for r in runs if r.commands)
    commands: Counter[str] = sum((r.commands for r in runs), Counter())
    return top_commands(commands, total, TOP_COMMANDS, ",.1f")


def report(
    results: dict[str, list[RunStats | None]], rounds: int, broadcasts: int, late: int
) -> None:
    reference = results[PUBSUB]
    rows, late_rows = [], []
    for impl in IMPLS:
        all_runs = results[impl.label]
        runs = [r for r in all_runs if r is not None]
        errors = Counter(e for r in runs for e in r.errors)
        error = "; ".join(f"{e} (x{n})" if n > 1 else e for e, n in errors.items())[:300]
        if not runs:
            rows.append([impl.label, "ERROR", *[""] * 12, "run failed"])
            if impl.late_label is not None:
                late_rows.append([impl.late_label, "ERROR", "", "", "", "", "run failed"])
            continue
        bcasts = sum(r.broadcasts for r in runs)
        cmds = sum(sum(r.commands.values()) for r in runs if r.commands)
        counted = sum(r.broadcasts for r in runs if r.commands)
        compare = impl.label != PUBSUB
        rows.append(
            [
                impl.label,
                median_of(runs, lambda r: pct_ms(r.per_waiter, 50)),
                median_of(runs, lambda r: pct_ms(r.per_waiter, 99)),
                max_of(runs, "per_waiter"),
                median_of(runs, lambda r: pct_ms(r.last, 50)),
                median_of(runs, lambda r: pct_ms(r.last, 99)),
                max_of(runs, "last"),
                median_of(runs, lambda r: pct_ms(r.first, 50)),
                median_of(runs, lambda r: pct_ms(r.send_call, 50)),
                ratio(all_runs, reference, "per_waiter") if compare else "1",
                ratio(all_runs, reference, "last") if compare else "1",
                f"{sum(r.missed for r in runs)} / {bcasts * WAITERS:,}",
                f"{sum(r.short for r in runs)} / {bcasts:,}",
                f"{cmds / counted:,.1f}" if counted else "n/a",
                error,
            ]
        )
        if impl.late_label is None:
            continue
        took = sorted(t for r in runs for t in r.late_took)
        n, got = sum(r.late_n for r in runs), sum(r.late_got for r in runs)
        late_rows.append(
            [
                impl.late_label,
                f"{n:,}",
                f"{got:,}",
                f"{n - got:,}",
                fmt_ms(pct_ms(took, 50)),
                fmt_ms(pct_ms(took, 99)),
                error,
            ]
        )
    print(
        f"\n## A. Broadcast to {WAITERS} waiters ({PROCS} processes x {THREADS} threads): "
        f"{rounds} interleaved round(s) x {broadcasts} broadcasts, latency in ms\n"
    )
    print_table(
        [
            "impl",
            "per-waiter p50",
            "p99",
            "max",
            "last waiter p50",
            "p99",
            "max",
            "first waiter p50",
            "send call p50",
            "vs pubsub (per-waiter p50)",
            "vs pubsub (last p50)",
            "missed",
            "short sends",
            "cmds/bcast",
            "error",
        ],
        rows,
    )
    print(f"\nINFO commandstats per broadcast cycle (send + {WAITERS} wake-ups + re-arms):\n")
    print_table(
        ["impl", "commands/broadcast"],
        [
            [impl.label, commands_per_broadcast([r for r in results[impl.label] if r is not None])]
            for impl in IMPLS
        ],
    )
    print(
        f"\n## B. Late waiters: sent first, then {WAITERS} waiters wait "
        f"({LATE_TIMEOUT:g} s timeout); {late} repeat(s) x {rounds} round(s), summed\n"
    )
    print_table(
        ["impl", "late waiters", "got it", "missed", "wait() p50 ms", "p99 ms", "error"],
        late_rows,
    )


# --- main ------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~30 s smoke run")
    cli.number("--rounds", 5, 2, "interleaved rounds", least=1)
    cli.number("--broadcasts", 400, 150, "counted broadcasts per impl and round", least=1)
    cli.number("--late", 3, 1, "part B repeats per impl and round", least=0)
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    results: dict[str, list[RunStats | None]] = {impl.label: [] for impl in IMPLS}
    with RedisServer() as server:
        print(header("Signal benchmark", server.version(), versions(("redis", "hiredis"))))
        print(
            f"server 127.0.0.1:{server.port}; {WAITERS} waiters = {PROCS} processes x "
            f"{THREADS} threads; {WARMUP} warm-up broadcasts per run not counted"
        )
        for r in range(args.rounds):
            for impl in IMPLS if r % 2 == 0 else IMPLS[::-1]:
                try:
                    run = run_once(impl, server.port, args.broadcasts, args.late)
                except Exception as exc:
                    print(f"{impl.label} round {r}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    run = None
                results[impl.label].append(run)
        report(results, args.rounds, args.broadcasts, args.late)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
