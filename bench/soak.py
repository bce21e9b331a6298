"""The soak: ``make soak`` (or ``bench/soak.py [--quick]``): a chaos run that writes the report.

Every process is real and every fault is a signal, with the fault suite's
harness (tests/faults/: the Bench, its subjects, nemeses and checkers, the
oracle Redis no fault touches). Three phases, one command:

1. **calm**: ``manage.py run_worker`` processes and producer processes
   (Django Tasks ``enqueue()``) at the chaos phase's rate, no fault: the
   latency reference.
2. **chaos** (one Redis with AOF, ``appendfsync always``): the same workers
   and producers, plus two ``run_leader`` processes running the fault suite's
   periodic job every 0.5 s, lock contenders writing their fencing tokens to a
   fenced resource, and rate-limited clients sharing one key. Meanwhile the
   driver SIGKILLs a worker every few seconds (and starts a replacement),
   SIGKILLs Redis and restarts it from its AOF, and SIGKILLs the leader.
3. **sentinel**: a master, two replicas and three sentinels; workers,
   producers and leaders find the master through the sentinels
   (REDCOORD["SENTINEL"]); the master is SIGKILLed mid-run and the sentinels
   promote a replica.

Then every checker runs and the report is written; the exit status is 1 if any
assertion failed (each is listed with its count in the report). ``--quick``
(about 2,000 tasks, 3 worker kills, one Redis restart, a failover; about two
minutes on 2 busy cores) writes its report to the work directory unless ``--report`` names
one; tests/faults/test_soak_quick.py runs it.

Why bench/ and not tests/faults/: this is a measurement program with a
published result (numbers beside a peer's, durations, latencies), run by a
make target next to the benchmarks and never by CI; it imports the fault
suite's harness rather than living in it, and only its quick mode is a test.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench/ itself is sys.path[0]
    sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench import _soak_checks as checks  # noqa: E402
from bench import _soak_report as report  # noqa: E402
from django_redcoord.core.keys import KeyBuilder  # noqa: E402
from django_redcoord.core.options import DEFAULTS  # noqa: E402
from django_redcoord.core.queues import Queue  # noqa: E402
from django_redcoord.core.transport.commands import as_text  # noqa: E402
from tests.faults.checks import task_outcomes  # noqa: E402
from tests.faults.harness import (  # noqa: E402
    Bench,
    PersistentRedis,
    leader_violations,
    overlapping,
    processes_alive_or_failed,
    tokens_out_of_order,
    unaccounted_tasks,
    wait_for,
)
from tests.faults.names import HOSTILE_QUEUE  # noqa: E402
from tests.faults.oracle import RUNS_KEY, entries  # noqa: E402
from tests.faults.test_leaders import _leader_pid  # noqa: E402
from tests.support.redis_servers import RedisServer, SentinelServer  # noqa: E402

SETTINGS = "bench._soak_settings"
QUEUES = [
    "default",
    HOSTILE_QUEUE,
]  # what `run_worker` with no argument serves (tests/faults/settings.py)
HEARTBEAT, TIMEOUT, PREFETCH = (
    DEFAULTS["WORKER_HEARTBEAT"],
    DEFAULTS["WORKER_TIMEOUT"],
    DEFAULTS["WORKER_PREFETCH"],
)
#: a killed worker's messages go back within its heartbeat deadline (TIMEOUT after its last beat)
#: plus the interval of the reapers (every live worker reaps at each of its heartbeats)
RECLAIM_BOUND = TIMEOUT + HEARTBEAT
#: a worker's loops retry an unreachable Redis with backoff capped at 2 s (core/queues/worker.py)
OUTAGE_BACKOFF = 2.0
LOCK_TTL = 5.0
POLICY = ("20/s;burst=5", 20, 1.0, 5)  # text, limit, period (s), burst
WINDOWS = (0.1, 1.0, 10.0)
#: ms; with tests/support/redis_servers.py's 1000 the sentinels sometimes fail a freshly
#: promoted master
#: over again on a busy machine (the README's Sentinel section: 1 run in 3), and that second,
#: unplanned failover to a replica still resyncing loses data: quorum 2 of 3 and 3 s here
SENTINEL_DOWN_AFTER = 3000


@dataclass
class Plan:
    calm_tasks: int
    chaos_tasks: int
    sentinel_tasks: int
    rate: float  # tasks per second, per producer
    producers: int = 2
    workers: int = 4
    worker_kills: int = 60
    redis_kills: int = 2
    leader_kills: int = 3
    contenders: int = 3
    limiters: int = 2

    def seconds(self, tasks: int, producers: int | None = None) -> float:
        return tasks / (self.rate * (producers or self.producers))


# : rates this shared 2-core machine sustains with every subject running (flat out it made 76
# tasks/s)
FULL = Plan(calm_tasks=6_000, chaos_tasks=100_000, sentinel_tasks=4_000, rate=36.0, contenders=2)
QUICK = Plan(
    calm_tasks=200,
    chaos_tasks=1_500,
    sentinel_tasks=300,
    rate=50.0,
    workers=3,
    worker_kills=3,
    redis_kills=1,
    leader_kills=1,
    contenders=2,
    limiters=1,
)


@dataclass
class Phase:
    """What one phase measured."""

    name: str
    tasks_sent: int = 0
    maybe: int = 0
    seconds: float = 0.0
    lat: list[float] = field(default_factory=list)
    checks: list[report.Check] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, saved: dict[str, Any]) -> Phase:
        """A phase as saved in phases.json (see --render-from)."""
        phase = cls(**{**saved, "checks": [report.Check(**c) for c in saved["checks"]]})
        phase.facts["rate"] = {float(w): tuple(v) for w, v in phase.facts.get("rate", {}).items()}
        return phase

    def check(self, name: str, count: Any, bound: str, violations: list[str]) -> None:
        self.checks.append(report.Check(self.name, name, count, bound, violations))


def log(message: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- subjects ----------------------------------------------------------------------------------


def start_worker(bench: Bench, **env: str) -> Any:
    return bench.spawn(
        "run_worker", ["manage.py", "run_worker"], DJANGO_SETTINGS_MODULE=SETTINGS, **env
    )


def start_leader(bench: Bench, **env: str) -> Any:
    return bench.spawn(
        "run_leader", ["manage.py", "run_leader"], DJANGO_SETTINGS_MODULE=SETTINGS, **env
    )


def start_producers(bench: Bench, plan: Plan, tasks: int, producers: int, **env: str) -> list[Any]:
    each = [tasks // producers + (i < tasks % producers) for i in range(producers)]
    subjects = [
        bench.spawn(
            "producer",
            ["-m", "bench._soak_producer", str(n), str(plan.rate)],
            DJANGO_SETTINGS_MODULE=SETTINGS,
            **env,
        )
        for n in each
    ]
    for subject in subjects:
        subject.terminated = True  # each exits 0 by itself when done
    return subjects


def wait_producers(producers: list[Any], timeout: float) -> list[str]:
    found = []
    for p in producers:
        try:
            code = p.proc.wait(timeout)
        except Exception:
            found.append(f"producer pid {p.pid} still running after {timeout:g} s")
            continue
        if code != 0:
            found.append(f"producer pid {p.pid} exited {code}:\n{p.output()}")
    return found


def drained(bench: Bench, expected: int) -> bool:
    """Every task sent ran at least once and no queue holds anything (ready, delayed, in flight)."""
    try:
        if bench.oracle.hlen("runs") < expected:
            return False
        client = bench.client(socket_timeout=5)
        return all(
            not (d.ready or d.delayed or d.processing)
            for d in (Queue(q, client=client, prefix=bench.prefix).depths() for q in QUEUES)
        )
    except redis.RedisError:
        return False


#: The replication lag the sentinel phase accepts: an enqueue acknowledged at most this long
#: before the master's SIGKILL may be lost with its unreplicated writes (see unreplicated_tail).
REPLICATION_LAG_BOUND = 5.0


def unreplicated_tail(bench: Bench, killed_at: float) -> tuple[set[str], float]:
    """Tasks whose enqueue the killed master acknowledged but never replicated: sent (acknowledged)
    before ``killed_at`` (wall time) and without a result record on the promoted master (the push
    script writes the message and the record together, so a replica has both or neither).
    Returns (their ids, the oldest one's age at the kill in seconds, 0 if none). Redis
    replicates asynchronously: this is the loss a Sentinel failover costs, which the report
    states and bounds rather than hides."""
    client, keys = bench.client(socket_timeout=5), KeyBuilder(bench.prefix)
    before = [e for e in entries(bench.oracle, "sent") if e["at"] <= killed_at * 1e6]
    pipe = client.pipeline(transaction=False)
    for e in before:
        pipe.exists(keys.task_result(e["id"]))
    lost = [e for e, exists in zip(before, pipe.execute(), strict=True) if not exists]
    oldest = max((killed_at - e["at"] / 1e6 for e in lost), default=0.0)
    return {e["id"] for e in lost}, oldest


def settle(bench: Bench, phase: Phase, deadline: float, tail: set[str] = frozenset()) -> None:
    """Wait for the work to drain, then check tasks: none lost, every result right, duplicates
    explained. ``tail``: tasks a failover lost with the killed master's unreplicated writes
    (see unreplicated_tail): checked apart, not waited for."""
    sent = entries(bench.oracle, "sent")
    phase.tasks_sent = len(sent)
    phase.maybe = bench.oracle.llen("maybe")
    try:
        wait_for(
            lambda: drained(bench, len(sent) - len(tail)),
            deadline,
            "every task sent to run and the queues to drain",
            step=0.5,
        )
    except AssertionError as exc:
        log(str(exc))
    expected, runs, results, dead = task_outcomes(bench, QUEUES)
    expected = {rid: kind for rid, kind in expected.items() if rid not in tail}
    bad = unaccounted_tasks(expected, runs, results, dead)
    never = [rid for rid in expected if runs.get(rid, 0) < 1]
    phase.facts["never_ran"] = len(never)
    phase.facts["failing_tasks"] = sum(kind == "fail" for kind in expected.values())
    phase.check(
        "tasks lost (acknowledged enqueue, never ran)",
        len(never),
        "0",
        [v for v in bad if "never ran" in v],
    )
    phase.check(
        "tasks whose result is wrong (not SUCCESSFUL; a failing one not FAILED and dead-lettered)",
        len([v for v in bad if "never ran" not in v]),
        "0",
        [v for v in bad if "never ran" not in v],
    )
    ran = checks.parse_runs(bench.oracle.lrange(checks.RAN_KEY, 0, -1))
    phase.lat = checks.latencies(ran)
    phase.facts["runs"] = sum(len(g) for g in ran.values())
    phase.facts["ran"] = ran


def duplicate_check(phase: Phase, faults: list[checks.Fault], workers: int) -> None:
    """Every duplicate explained; one kill causes at most its prefetch, a server fault at most the
    prefetch of each worker (what each may have run and not yet acknowledged)."""
    counts, found = checks.attribute_duplicates(phase.facts.pop("ran"), faults, per_kill=PREFETCH)
    extra = sum(counts.values())
    by_kills = sum(n for what, n in counts.items() if what.startswith("SIGKILL worker"))
    phase.facts["duplicates"] = extra
    phase.facts["duplicates_by_cause"] = {
        "worker SIGKILLs": by_kills,
        **{what: n for what, n in counts.items() if not what.startswith("SIGKILL worker")},
    }
    phase.facts["duplicate_worst_kill"] = max(
        [n for what, n in counts.items() if what.startswith("SIGKILL worker")], default=0
    )
    unexplained = [v for v in found if "with no worker kill" in v]
    phase.check(
        "duplicate runs without a kill or server fault to explain them",
        len(unexplained),
        "0",
        unexplained,
    )
    over = [v for v in found if "more than its prefetch" in v]
    phase.check(
        f"duplicate runs caused by one worker kill (max), ≤ prefetch {PREFETCH}",
        phase.facts["duplicate_worst_kill"],
        f"≤ {PREFETCH}",
        over,
    )
    kills = sum(f.pid is not None for f in faults)
    server = len(faults) - kills
    total_bound = (kills + server * workers) * PREFETCH
    phase.check(
        f"duplicate runs (all), ≤ (worker kills {kills} + server faults {server} × {workers} "
        f"workers) × prefetch {PREFETCH}",
        extra,
        f"≤ {total_bound:,}",
        [] if extra <= total_bound else [f"{extra} duplicates > {total_bound}"],
    )


def is_up(subject: Any) -> bool:
    """The subject's command is up: its first log line (a worker's "serving", a leader's
    "campaigning")."""
    marker = {"run_worker": ": serving ", "run_leader": " campaigning in election "}.get(
        subject.name
    )
    try:
        with open(subject.log, errors="replace") as fh:
            return marker is None or marker in fh.read(4000)
    except OSError:
        return False


def stop_everything(bench: Bench, phase: Phase) -> None:
    # a process SIGTERMed before Django set the command's handler up dies of the signal
    wait_for(lambda: all(is_up(s) for s in bench.live()), 120, "every subject to start")
    phase.check("subjects that exited 0 unasked", 0, "0", processes_alive_or_failed(bench))
    phase.checks[-1].count = len(phase.checks[-1].violations)
    stopped = bench.stop_all(timeout=60)
    phase.check("subjects that did not exit 0 on SIGTERM", len(stopped), "0", stopped)


def new_bench(servers: list[Any], sut: Any, workdir: Path, name: str) -> Bench:
    oracle_server = RedisServer().start()
    servers += [sut, oracle_server]
    folder = workdir / name
    folder.mkdir()
    return Bench(sut, oracle_server, folder, prefix="soak")


# -- calm and chaos ------------------------------------------------------------------------------


class ReclaimWatch:
    """Polls the queues' consumer sets (every 0.1 s) for the consumers of killed workers:
    a consumer leaves its set when a reaper requeued its in-flight messages."""

    PID = re.compile(r"\.(\d+)\.[0-9a-f]{6}\.\d+$")

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.client = bench.client(socket_timeout=1, connect_timeout=1)
        self.keys = [Queue(q, client=self.client, prefix=bench.prefix).keys for q in QUEUES]
        self.pending: dict[int, dict[str, Any]] = {}
        self.done: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _held(self) -> dict[int, list[str]]:
        members: dict[int, list[str]] = {}
        for k in self.keys:
            for member in self.client.zrange(k.consumers, 0, -1):
                match = self.PID.search(as_text(member))
                if match:
                    members.setdefault(int(match.group(1)), []).append(as_text(member))
        return members

    def killed(self, pid: int, at: float) -> None:
        """Call right after the SIGKILL of worker ``pid`` (``at``: time.monotonic() just before
        it)."""
        held, orphaned = [], 0
        try:
            held = self._held().get(pid, [])
            orphaned = sum(self.client.llen(m) for m in held)
        except redis.RedisError:
            pass
        record = {
            "pid": pid,
            "at": at,
            "held": len(held),
            "orphaned": orphaned,
            "seconds": None,
            "bound": RECLAIM_BOUND,
        }
        with self.lock:
            if held:
                self.pending[pid] = record
            else:
                record["seconds"] = 0.0  # nothing registered yet: nothing to reclaim
                self.done.append(record)

    def _run(self) -> None:
        while not self.stopping.wait(0.1):
            try:
                held = self._held()
            except redis.RedisError:
                continue
            now = time.monotonic()
            with self.lock:
                for pid in [p for p in self.pending if p not in held]:
                    record = self.pending.pop(pid)
                    record["seconds"] = now - record["at"]
                    self.done.append(record)

    def stop(self, wait: float, outages: list[tuple[float, float]]) -> list[dict[str, Any]]:
        """The reclaims; a kill whose bound spans a Redis outage gets the outage and the
        workers' longest outage backoff (2 s) added to its bound."""
        deadline = time.monotonic() + wait
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.1)
        self.stopping.set()
        self.thread.join(2)
        with self.lock:
            found = self.done + list(self.pending.values())
        for record in found:
            for down, up in outages:
                if record["at"] <= down <= record["at"] + record["bound"]:
                    record["bound"] += up - down + OUTAGE_BACKOFF
        return found


def schedule(plan: Plan) -> list[tuple[float, str]]:
    """(progress, event) of the chaos phase, progress being the share of the phase's tasks the
    producers have sent (so the faults spread over the run however fast the machine is): Redis
    kills evenly spaced, worker kills spread evenly over the rest (none while Redis restarts),
    leader kills in between."""
    events = [((i + 1) / (plan.redis_kills + 1), "redis") for i in range(plan.redis_kills)]
    quiet = [(f - 0.005, f + 0.015) for f, _ in events]
    start, end, step = 0.02, 0.95, 0.0005
    slots = [
        start + i * step
        for i in range(int((end - start) / step))
        if not any(a <= start + i * step <= b for a, b in quiet)
    ]
    events += [
        (slots[int((i + random.random()) * len(slots) / plan.worker_kills)], "worker")
        for i in range(plan.worker_kills)
    ]
    events += [((i + 0.5) / plan.leader_kills, "leader") for i in range(plan.leader_kills)]
    return sorted(events)


def progress(bench: Bench, tasks: int) -> float:
    """The share of ``tasks`` the producers have sent."""
    try:
        return bench.oracle.llen("sent") / tasks
    except redis.RedisError:
        return 0.0


def load_phase(name: str, plan: Plan, workdir: Path, servers: list[Any]) -> Phase:
    """The calm phase (``name`` "calm": no fault) or the chaos phase: the same subjects, the same
    rate."""
    phase = Phase(name)
    chaos = name == "chaos"
    tasks = plan.chaos_tasks if chaos else plan.calm_tasks
    bench = new_bench(servers, PersistentRedis().start(), workdir, name)
    seconds = plan.seconds(tasks)
    faults: list[checks.Fault] = []
    outages: list[tuple[float, float]] = []
    counts = {"worker": 0, "redis": 0, "leader": 0}
    try:
        for _ in range(plan.workers):
            start_worker(bench)
        for _ in range(2):
            start_leader(bench)
        contenders = [
            bench.spawn(
                "contender",
                ["-m", "tests.faults.contender", "soak:fenced", str(seconds), str(LOCK_TTL)],
            )
            for _ in range(plan.contenders)
        ]
        limiters = [
            bench.spawn(
                "limiter",
                ["-m", "bench._soak_limiter", str(seconds), POLICY[0], "client:shared"],
                DJANGO_SETTINGS_MODULE=SETTINGS,
            )
            for _ in range(plan.limiters)
        ]
        for subject in contenders + limiters:
            subject.terminated = True  # each exits 0 by itself after `seconds`
        wait_for(
            lambda: len(entries(bench.oracle, RUNS_KEY)) >= 2, 60, "the leader's first job runs"
        )
        watch = ReclaimWatch(bench)
        started = time.monotonic()
        producers = start_producers(bench, plan, tasks, plan.producers)
        for share, event in schedule(plan) if chaos else []:
            while progress(bench, tasks) < share and any(p.proc.poll() is None for p in producers):
                time.sleep(0.1)
            if event == "worker":
                victim = random.choice(
                    [w for w in bench.live("run_worker") if is_up(w)] or bench.live("run_worker")
                )
                victim.killed = True
                at, wall = time.monotonic(), time.time()
                victim.signal(signal.SIGKILL)
                victim.proc.wait(5)
                faults.append(checks.Fault(f"SIGKILL worker pid {victim.pid}", wall, victim.pid))
                watch.killed(victim.pid, at)
                start_worker(bench)
            elif event == "redis":
                wall, at = time.time(), time.monotonic()
                bench.sut.kill()
                time.sleep(1.0)
                bench.sut.restart()
                outages.append((at, time.monotonic()))
                faults.append(checks.Fault(f"SIGKILL redis #{counts['redis'] + 1}", wall))
                log(f"redis killed and restarted from its AOF in {time.monotonic() - at:.1f} s")
            else:
                pid = _leader_pid(bench)
                victim = next((s for s in bench.live("run_leader") if s.pid == pid), None)
                if victim is None:
                    continue  # no leader right now (a campaign under way): skip this one
                victim.killed = True
                victim.signal(signal.SIGKILL)
                victim.proc.wait(5)
                start_leader(bench)
            counts[event] += 1
            if event != "worker" or counts["worker"] % 10 == 0:
                log(
                    f"chaos: {counts} after {time.monotonic() - started:.0f} s, "
                    f"{progress(bench, tasks):.0%} of the tasks sent"
                )
        found = wait_producers(producers, seconds * 4 + 120)
        phase.check("producers that failed", len(found), "0", found)
        settle(bench, phase, 300)
        phase.seconds = time.monotonic() - started
        reclaims = watch.stop(RECLAIM_BOUND + 5, outages)
        phase.facts.update(counts=counts, reclaims=reclaims, outages=[b - a for a, b in outages])
        duplicate_check(phase, faults, plan.workers)
        if chaos:
            done = [r["seconds"] for r in reclaims if r["seconds"] is not None]
            phase.check(
                "slowest reclaim of a killed worker's messages (s), bound heartbeat timeout "
                f"{TIMEOUT:g} + reaper interval {HEARTBEAT:g}",
                round(max(done, default=0.0), 1),
                f"≤ {RECLAIM_BOUND:g}",
                checks.slow_reclaims(reclaims),
            )
        for subject in contenders + limiters:
            subject.proc.wait(max(0.0, started + seconds - time.monotonic()) + 120)
        lock_checks(bench, phase)
        leader_checks(bench, phase)
        admitted = [
            tuple(map(float, as_text(e).split())) for e in bench.oracle.lrange("rl:admitted", 0, -1)
        ]
        rl_counts = {as_text(k): int(v) for k, v in bench.oracle.hgetall("rl:counts").items()}
        seen, over = checks.over_admitted(
            admitted, limit=POLICY[1], period=POLICY[2], burst=POLICY[3], windows=WINDOWS
        )
        phase.facts.update(rate=seen, rate_counts=rl_counts)
        phase.check(
            f"rate limit '{POLICY[0]}': windows admitting more than burst + rate × window",
            len(over),
            "0",
            over,
        )
        stop_everything(bench, phase)
    finally:
        bench.cleanup()
    return phase


def calm_phase(plan: Plan, workdir: Path, servers: list[Any]) -> Phase:
    return load_phase("calm", plan, workdir, servers)


def chaos_phase(plan: Plan, workdir: Path, servers: list[Any]) -> Phase:
    return load_phase("chaos", plan, workdir, servers)


def lock_checks(bench: Bench, phase: Phase) -> None:
    """tests/faults/test_locks.py's lock_violations, split so that each count is reported, and
    with its late-write check scanning only the holders that lost the lock (its own loop is
    quadratic in the sections: tens of thousands here). No gap check: Redis is down for a while."""
    sections = entries(bench.oracle, "cs")
    kept = [s for s in sections if not s["lost"]]
    phase.facts["sections"] = len(sections)
    phase.facts["sections_lost"] = len(sections) - len(kept)
    phase.facts["tokens"] = (
        min((s["token"] for s in sections), default=0),
        max((s["token"] for s in sections), default=0),
    )
    overlap = overlapping(
        (s["enter"], s["exit"], f"pid {s['pid']} token {s['token']}") for s in kept
    )
    phase.check("overlapping lock holders (holders that kept the lock)", len(overlap), "0", overlap)
    order = tokens_out_of_order((s["enter"], s["exit"], s["token"]) for s in kept)
    by_enter = sorted(sections, key=lambda s: s["enter"])
    starts = [s["enter"] for s in by_enter]
    for s in sections:
        if s["lost"] and s["accepted_out"]:
            inside = by_enter[
                bisect.bisect_right(starts, s["enter"]) : bisect.bisect_left(starts, s["exit"])
            ]
            later = [t for t in inside if t["accepted_in"]]
            if later:
                order.append(
                    f"the late write of token {s['token']} was accepted after token "
                    f"{later[0]['token']} wrote"
                )
    phase.check("fencing tokens out of grant order; late writes accepted", len(order), "0", order)
    refused = checks.refused_fenced_writes(sections)
    phase.check(
        "fenced writes refused to a holder that kept the lock (a token that did not grow)",
        len(refused),
        "0",
        refused,
    )


def leader_checks(bench: Bench, phase: Phase) -> None:
    runs = entries(bench.oracle, RUNS_KEY)
    found = leader_violations(runs, slots_once=True)
    terms = [v for v in found if v.startswith("a run of term")]
    slots = [v for v in found if v.startswith("slot")]
    phase.facts["job_runs"] = len(runs)
    phase.facts["terms"] = sorted({r["term"] for r in runs})
    phase.check(
        "periodic job runs under an older term after a newer one acted (terms only grow)",
        len(terms),
        "0",
        terms,
    )
    phase.check("periodic slots run more than once", len(slots), "0", slots)


# -- sentinel ------------------------------------------------------------------------------------


def sentinel_phase(plan: Plan, workdir: Path, servers: list[Any]) -> Phase:
    phase = Phase("sentinel")
    master = RedisServer(extra=("--appendonly", "yes", "--appendfsync", "always")).start()
    servers.append(master)
    replicas = [
        RedisServer(
            extra=(
                "--replicaof",
                "127.0.0.1",
                str(master.port),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            )
        ).start()
        for _ in range(2)
    ]
    servers += replicas
    wait_for(
        lambda: all(_info(r, "replication").get("master_link_status") == "up" for r in replicas),
        30,
        "the replicas to sync",
    )
    sentinels = [SentinelServer(master.port).start() for _ in range(3)]
    servers += sentinels
    for sentinel in sentinels:  # see SENTINEL_DOWN_AFTER
        client = redis.Redis(port=sentinel.port, socket_timeout=2)
        client.sentinel_set("mymaster", "quorum", 2)
        client.sentinel_set("mymaster", "down-after-milliseconds", SENTINEL_DOWN_AFTER)
        client.close()
    wait_for(
        lambda: all(_sentinel_sees(s, 2, 2) for s in sentinels),
        60,
        "each sentinel to know the others and the replicas",
    )
    env = {"SOAK_SENTINEL": ",".join(f"127.0.0.1:{s.port}" for s in sentinels)}
    bench = new_bench(servers, master, workdir, "sentinel")
    servers.remove(master)  # counted once
    producers_n = plan.producers
    seconds = plan.seconds(plan.sentinel_tasks, producers_n)
    try:
        for _ in range(2):
            start_worker(bench, **env)
            start_leader(bench, **env)
        wait_for(
            lambda: len(entries(bench.oracle, RUNS_KEY)) >= 2, 60, "the leader's first job runs"
        )
        started = time.monotonic()
        producers = start_producers(bench, plan, plan.sentinel_tasks, producers_n, **env)
        while progress(bench, plan.sentinel_tasks) < 0.5 and any(
            p.proc.poll() is None for p in producers
        ):
            time.sleep(0.1)
        wall, at = time.time(), time.monotonic()
        master.kill()
        new = wait_for(
            lambda: _promoted(sentinels, master.port), 60, "the sentinels to promote a replica"
        )
        bench.sut = next(r for r in replicas if r.port == new)
        phase.facts["failover_seconds"] = time.monotonic() - at
        log(
            f"sentinel: master {master.port} SIGKILLed, replica {new} promoted after "
            f"{phase.facts['failover_seconds']:.1f} s"
        )
        found = wait_producers(producers, seconds * 4 + 120)
        phase.check("producers that failed", len(found), "0", found)
        tail, oldest = unreplicated_tail(bench, wall)
        phase.facts["unreplicated_tail"] = len(tail)
        phase.check(
            "acknowledged enqueues lost with the killed master's unreplicated writes (Redis "
            f"replicates asynchronously), each acknowledged ≤ {REPLICATION_LAG_BOUND:g} s before "
            "the SIGKILL",
            len(tail),
            f"any, ≤ {REPLICATION_LAG_BOUND:g} s old",
            []
            if oldest <= REPLICATION_LAG_BOUND
            else [
                f"one was acknowledged {oldest:.1f} s before the kill: "
                "longer than any replication lag explains"
            ],
        )
        settle(bench, phase, 180, tail)
        phase.seconds = time.monotonic() - started
        epochs = {_sentinel_epoch(s) for s in sentinels}
        phase.facts["sentinel_epochs"] = sorted(epochs)
        phase.check(
            "failovers the sentinels made (config epoch), exactly the one caused",
            max(epochs),
            "1",
            []
            if epochs == {1}
            else [f"the sentinels' config epochs are {sorted(epochs)}: an unplanned failover"],
        )
        duplicate_check(phase, [checks.Fault("Sentinel failover (master SIGKILLed)", wall)], 2)
        leader_checks(bench, phase)
        stop_everything(bench, phase)
    finally:
        bench.cleanup()
    return phase


def _info(server: Any, section: str) -> dict:
    client = redis.Redis(port=server.port, socket_timeout=2)
    try:
        return client.info(section)
    except redis.RedisError:
        return {}
    finally:
        client.close()


def _sentinel_sees(sentinel: Any, others: int, replicas: int) -> bool:
    client = redis.Redis(port=sentinel.port, socket_timeout=2, decode_responses=True)
    try:
        state = client.sentinel_master("mymaster")
        return state["num-other-sentinels"] >= others and state["num-slaves"] >= replicas
    except redis.RedisError:
        return False
    finally:
        client.close()


def _sentinel_epoch(sentinel: Any) -> int:
    client = redis.Redis(port=sentinel.port, socket_timeout=2, decode_responses=True)
    try:
        return int(client.sentinel_master("mymaster")["config-epoch"])
    finally:
        client.close()


def _promoted(sentinels: list[Any], old: int) -> int | None:
    ports = set()
    for sentinel in sentinels:
        client = redis.Redis(port=sentinel.port, socket_timeout=2)
        try:
            ports.add(
                int(client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")[1])
            )
        except (redis.RedisError, TypeError):
            return None
        finally:
            client.close()
    return ports.pop() if len(ports) == 1 and old not in ports else None


# -- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="about 2,000 tasks, 3 kills, one Redis restart, a failover (about two minutes here)",
    )
    parser.add_argument("--tasks", type=int, help="tasks of the chaos phase")
    parser.add_argument("--kills", type=int, help="worker SIGKILLs of the chaos phase")
    parser.add_argument("--rate", type=float, help="tasks per second per producer")
    parser.add_argument(
        "--report",
        type=Path,
        help="where to write the report (default: docs/chaos-report.md; --quick: the work "
        "directory)",
    )
    parser.add_argument(
        "--phases", default="calm,chaos,sentinel", help="the phases to run (default: %(default)s)"
    )
    parser.add_argument(
        "--source",
        help="where the code under test came from, for the report (default: git describe)",
    )
    parser.add_argument(
        "--render-from",
        type=Path,
        help="only write the report again, from the phases.json of an earlier run",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the work directory (subjects' logs) even when every check passed",
    )
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.tasks:
        plan.chaos_tasks = args.tasks
    if args.kills is not None:
        plan.worker_kills = args.kills
    if args.rate:
        plan.rate = args.rate
    workdir = (
        args.render_from.parent
        if args.render_from
        else Path(tempfile.mkdtemp(prefix="redcoord-soak-"))
    )
    target = args.report or (
        workdir / "chaos-report.md" if args.quick else ROOT / "docs" / "chaos-report.md"
    )
    log(f"work directory {workdir}; report to {target}")
    servers: list[Any] = []
    began, phases, load_at_start = time.time(), [], os.getloadavg()
    if args.render_from:
        saved = json.loads(args.render_from.read_text())
        began, ended, phases = (
            saved["began"],
            saved["ended"],
            [Phase.load(p) for p in saved["phases"]],
        )
        plan = Plan(**saved["plan"])
        args.quick, args.source = saved["quick"], saved["source"]
    try:
        runs = {"calm": calm_phase, "chaos": chaos_phase, "sentinel": sentinel_phase}
        for run in [] if args.render_from else [runs[name] for name in args.phases.split(",")]:
            log(f"phase {run.__name__.split('_')[0]}")
            phases.append(run(plan, workdir, servers))
            failed = [c for c in phases[-1].checks if c.violations]
            log(
                f"phase {phases[-1].name} done in {phases[-1].seconds:.0f} s: {len(failed)} failed "
                "assertion(s)"
            )
    finally:
        for server in servers:
            server.cleanup()
    if not args.render_from:
        ended = time.time()
        source = args.source or report.git_source()
        saved = {
            "began": began,
            "ended": ended,
            "plan": asdict(plan),
            "quick": args.quick,
            "source": source,
            "load": [load_at_start, os.getloadavg()],
            "phases": [asdict(p) for p in phases],
        }
        (workdir / "phases.json").write_text(json.dumps(saved, default=str))
    text = report.render(
        phases,
        plan=plan,
        quick=args.quick,
        began=began,
        ended=ended,
        source=saved["source"],
        load=saved.get("load", [os.getloadavg()] * 2),
        reclaim_bound=RECLAIM_BOUND,
        lock_ttl=LOCK_TTL,
        policy=POLICY,
        workdir=workdir,
        sentinel_down_after=SENTINEL_DOWN_AFTER,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    failed = [c for p in phases for c in p.checks if c.violations]
    for check in failed:
        log(
            f"FAILED [{check.phase}] {check.name}: {check.count}\n  "
            + "\n  ".join(v[:400] for v in check.violations[:5])
        )
    log(f"report written to {target}: {'FAILED' if failed else 'every assertion holds'}")
    if failed or args.keep or args.render_from:
        log(f"subjects' logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


def _interrupted(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through every `finally`: subjects and servers stopped


if __name__ == "__main__":
    os.chdir(ROOT)
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(
        signal.SIGINT, _interrupted
    )  # also when started in the background (SIGINT ignored)
    sys.exit(main())
