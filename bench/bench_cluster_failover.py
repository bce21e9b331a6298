"""Benchmark what a Redis Cluster failover costs django_redcoord's users, and what it loses.

The Cluster counterpart of ``bench_failover.py`` (Sentinel); both take the
probe loop, the fencing-token ledger, the pusher, the election helper and the
table rows from ``support/ledgers.py``, the cluster from ``support/cluster.py``.

The script starts its own Redis Cluster on 127.0.0.1: six ``redis-server``
nodes (``--cluster-enabled yes``, ``--cluster-node-timeout 1000``,
``--cluster-replica-validity-factor 0``, diskless replication without delay,
no persistence) joined by ``redis-cli --cluster create ... --cluster-replicas
1``: 3 primaries, a replica each. Ports are 6 consecutive ones from 20000 to
22700 whose cluster bus ports (+10000) are free too: all below 55000 and
outside the kernel's ephemeral range. ``cluster-node-timeout`` is the
documented tuning: a primary is flagged PFAIL after that long without an
answer, FAIL once a majority of primaries agree, and its replica then runs
for election (Redis's default is 15000 ms, with which a failover starts about
15 s after the primary's death; ``--node-timeout`` sets another value). Every
process is stopped at the end, also on error, Ctrl-C or SIGTERM, and dies with
this process (PR_SET_PDEATHSIG).

Clients: ``cluster_client(validate({"CLUSTER": {"NODES": [two nodes]},
"SOCKET_TIMEOUT": 1.0, "CONNECT_TIMEOUT": 0.5}))``, a RedisCluster without
retries that re-reads the slot map after a connection error. One client per
thread (hammer, pusher, each probe, each candidate, the main thread), all
built once before the first kill and kept for the whole run, as an
application keeps its client.

Every measured resource sits on one primary, the one serving the hash tag
``{t}``: lock ``ledger:{t}`` (the hammer's), lock ``probe:{t}`` (the lock
probe's), queues ``jobs-<round>:{t}`` and ``probe-<round>:{t}``, election
``leader:{t}``. Each of ``--rounds`` rounds (default 5, ``--quick`` 2):

1. candidate A or B of the election (lease 2 s, renew deadline 1.5 s, retry
   period 0.3 s) campaigns until one leads; the other is the standby;
2. load for 0.5 s: a hammer thread acquires and releases ``ledger:{t}``
   (ttl 5 s, wait 0) in a loop, 1 ms apart; a pusher thread pushes to
   ``jobs-<round>:{t}``, one message every 5 ms. Both keep going through
   the failover (retrying every 20 ms / 5 ms after an error);
3. the leader renews once, then the primary serving ``{t}`` is killed with
   SIGKILL;
4. three probe threads, started before the kill and let go right after it,
   each retry every 20 ms until their first success: (a) ``lock``: acquire
   (wait=0) and release ``probe:{t}``; (b) ``task``: push a message to
   ``probe-<round>:{t}``, claim it with a consumer, ack it and flush the ack;
   (c) ``leader``: the standby campaigns; done when it leads, with a term
   that must be above the old leader's. Time = ``time.monotonic()`` after the
   success minus just before the SIGKILL. The main thread meanwhile polls
   ``CLUSTER NODES`` (every 10 ms) on the victim's replica, then on every
   surviving node, for the reference rows;
5. 0.5 s after the last probe succeeded and the hammer had its first grant
   after the kill, the hammer and the pusher stop and a burst ``Worker``
   (on the main thread's client) drains ``jobs-<round>:{t}``: every push
   whose call returned must be delivered;
6. the killed node is restarted on its port with its ``nodes.conf``: it
   rejoins as a replica of the promoted one. The next round starts once every
   node reports ``cluster_state:ok``, knows all six nodes with no ``fail``,
   ``fail?``, ``handshake`` or ``noaddr`` flag, sees 3 primaries with a
   replica each and the same owner of ``{t}``'s slot, and every replica's
   link is up, all of it unchanged for 0.5 s. The next victim is thus the
   node promoted in this round.

Rows (median, max and every sample over the rounds, in seconds after the
SIGKILL):

* ``lock``, ``task``, ``leader term``: the three probes above;
* ``hammer``: the hammer's first grant+release of ``ledger:{t}`` begun after
  the kill. It is ``lock`` plus the lock's TTL when the hammer's release in
  flight at the kill was lost (the grant, replicated, then lives on the
  promoted replica until its TTL);
* reference rows (not django_redcoord), from ``CLUSTER NODES``: when the
  victim's replica saw it flagged ``fail`` (the primaries agreed it failed),
  when that replica reported itself ``master`` (promoted), and when every
  surviving node gave ``{t}``'s slot to it (what a client re-reading the slot
  map from any node needs). Nearly all of a probe's time is the Cluster's:
  the node timeout, the failure reports' gossip, then the replica's election
  delay (500 ms plus up to 500 ms at random) and its election.

Leader term: the old leader renews right before the kill and then does
nothing (as a leader cut off from Redis would, it stops leading after its
renew deadline), so the standby wins once the old record has expired on the
promoted replica (lease 2 s after that renewal) or once the replica is
promoted, whichever is later.

What the rows leave out: the probes retry every 20 ms, faster than
django_redcoord's own loops (a Worker backs off up to 2 s, a background
campaign waits ``retry_period``), so an application sees up to one of its
retry intervals more. SIGKILL on one machine means the clients see refused
connections at once, not timeouts; network partitions (where a cut-off
primary keeps taking writes that are then lost) and killing replicas are not
measured. While the victim is flagged FAIL and not yet replaced, the other
primaries refuse every command too (``cluster-require-full-coverage yes``,
the server's default): not measured here.

Safety checks (printed after the table):

* fencing: every grant of ``ledger:{t}`` (the hammer's, all rounds, in the
  order the grants returned) must carry a token strictly greater than every
  earlier one; the same for ``probe:{t}``. Violations must be 0;
* messages lost: every push to ``jobs-<round>:{t}`` whose call returned
  (before the kill, and after it) must be delivered by the drain after the
  failover. Redis Cluster replicates asynchronously, so the last
  acknowledged writes before a kill can be lost. A push that raised is an
  unknown outcome, not counted as acknowledged;
* leader terms: every new term must be above every earlier one;
* exceptions other than ``CoordinationUnavailable`` raised by
  django_redcoord during the outage are library problems: counted, and the
  first traceback of each kind is printed.

Run from the repository root::

    .venv/bin/python bench/bench_cluster_failover.py [--quick] [--rounds N] [--node-timeout MS]

The default run takes about 30 s on 2 cores (3 s more for each round in
which the hammer waits for a lost grant's TTL), ``--quick`` about 12 s.

django_redcoord's log records (WARNING and up) are counted and printed at the
end. Expect the drain Worker's: its client (the main thread's) was idle during
the failover, so its first calls after it go to the dead node per the old slot
map, fail once with CoordinationUnavailable (no retries, by design) and make
the client re-read the map; the Worker logs the outage and retries. Expect
too the old leader's "stepped down" once it next campaigns.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from support import ledgers
from support.cli import Options
from support.cluster import Cluster, ClusterNode, owner
from support.ledgers import PROBE_TIMEOUT, RETRY, Fences, Pushes, seconds
from support.processes import run_main
from support.tables import header, print_table, versions

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import KeyBuilder, key_slot
from django_redcoord.core.leader import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.options import validate
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.transport.clients import cluster_client

NODE_TIMEOUT_MS = 1000  # Redis's default cluster-node-timeout: 15000
PRIMARIES = 3
PORTS = (20000, 22700)  # bus ports (+10000) stay below the ephemeral range (32768-60999 here)
NODE_ARGS = [
    "--cluster-replica-validity-factor",
    "0",
    "--repl-diskless-sync",
    "yes",
    "--repl-diskless-sync-delay",
    "0",
]
PREFIX = "bench"
TAG = "t"  # every measured name carries {t}: one slot, one primary
LOCK_NAME = f"ledger:{{{TAG}}}"
PROBE_LOCK = f"probe:{{{TAG}}}"
ELECTION = f"leader:{{{TAG}}}"
KEYS = KeyBuilder(PREFIX, cluster=True)
SLOT = key_slot(KEYS.lock(LOCK_NAME).lock)
LOCK_TTL = 5.0
LEASE, RENEW_DEADLINE, RETRY_PERIOD = 2.0, 1.5, 0.3
LOAD = 0.5  # seconds of load before each kill
AFTER = 0.5  # seconds the hammer and the pusher go on after the probes and the hammer succeeded
HAMMER_PAUSE = 0.001  # seconds between the hammer's grants
PUSH_PAUSE = 0.005  # seconds between pushes (also after a failed one)
POLL = 0.01  # seconds between CLUSTER NODES polls after the kill
STABLE = 0.5  # seconds the cluster must stay whole before the next kill
SETTLE_TIMEOUT = 60.0
LIBRARIES = ("django-redcoord", "redis", "hiredis")

log = logging.getLogger("bench.cluster_failover")


# --- what django_redcoord raises ---------------------------------------------------------


class Unexpected:
    """Exceptions other than CoordinationUnavailable from django_redcoord calls: counted,
    the first traceback of each kind kept (an outage should surface as CoordinationUnavailable)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.first: dict[str, str] = {}

    def watch(self, where: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except CoordinationUnavailable:
                raise
            except Exception as exc:
                kind = f"{where}: {type(exc).__module__}.{type(exc).__qualname__}"
                with self._lock:
                    self.counts[kind] += 1
                    self.first.setdefault(kind, traceback.format_exc())
                raise

        return call


# --- one failover ------------------------------------------------------------------------


class Hammer:
    """Acquire and release ``ledger:{t}`` in a loop until stopped, through the failover."""

    def __init__(
        self, client: Any, round_no: int, fences: Any, t0: list[float], unexpected: Unexpected
    ) -> None:
        self.client, self.round_no, self.fences, self.t0 = client, round_no, fences, t0
        self.unexpected = unexpected
        self.stop = threading.Event()
        self.first_after: float | None = None  # first grant+release begun after the kill
        self.busy_after = 0  # acquire attempts after the kill that found the lock held
        self.errors: Counter[str] = Counter()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _lock(self) -> Lock:
        return Lock(LOCK_NAME, client=self.client, ttl=LOCK_TTL, wait=0, prefix=PREFIX)

    def _loop(self) -> None:
        lock = self._lock()
        acquire, release = self.unexpected.watch("hammer acquire", lock.acquire), lock.release
        while not self.stop.is_set():
            begun = time.monotonic()
            after = 0 < self.t0[0] <= begun
            try:
                if acquire():
                    self.fences.add(self.round_no, "hammer", lock.token)
                    self.unexpected.watch("hammer release", release)()
                    if after and self.first_after is None:
                        self.first_after = time.monotonic() - self.t0[0]
                    time.sleep(HAMMER_PAUSE)
                    continue
                if after:
                    self.busy_after += 1
            except Exception as exc:
                self.errors[type(exc).__name__] += 1
                lock = self._lock()  # a fresh handle: the old one's state is unknown after an error
                acquire, release = (
                    self.unexpected.watch("hammer acquire", lock.acquire),
                    lock.release,
                )
            time.sleep(RETRY)


def leader_attempt(standby: LeaderElection, before: int, won: list[int]) -> Callable[[Any], bool]:
    def attempt(result: Any) -> bool:
        if not standby.campaign():
            result.errors["another leads"] += 1
            return False
        term = standby.term or 0
        won.append(term)  # read now: .term is None once the renew deadline has passed
        result.note = "" if term > before else f"TERM {term} NOT ABOVE {before}"
        return True

    return attempt


@dataclass
class Round:
    killed: int
    promoted: int | None
    lock: Any
    task: Any
    leader: Any
    hammer: float | None
    hammer_busy: int
    hammer_errors: Counter[str]
    failed_seen: float | None  # the replica sees the victim flagged fail
    promoted_seen: float | None  # the replica reports itself master
    all_agree: float | None  # every surviving node gives the slot to the promoted replica
    term_before: int
    term_after: int | None
    pushes: Any
    acked_before_kill: int
    lost_before: int
    lost_after: int
    stray: int
    duplicates: int
    settle: float
    push_errors: int = 0
    notes: list[str] = field(default_factory=list)


def watch_failover(
    cluster: Cluster, t0: float, victim_id: str, replica: ClusterNode
) -> tuple[float | None, float | None, float | None]:
    """Poll CLUSTER NODES: (victim flagged fail, replica promoted, all survivors agree), in s
    after t0."""
    failed = promoted = agreed = None
    deadline = t0 + PROBE_TIMEOUT
    while time.monotonic() < deadline:
        now = time.monotonic() - t0
        try:
            view = replica.view()
        except redis.RedisError:
            view = {}
        seen = view.get(victim_id)
        if failed is None and seen is not None and "fail" in seen.flags:
            failed = now
        if promoted is None and view and "master" in replica.myself(view).flags:
            promoted = now
        if promoted is not None:
            try:
                views = [node.view() for node in cluster.nodes.values() if node.alive]
            except redis.RedisError:
                views = []
            serving = {getattr(owner(v, SLOT), "port", None) for v in views}
            if views and serving == {replica.port}:
                agreed = now
                break
        time.sleep(POLL)
    return failed, promoted, agreed


def one_round(
    cluster: Cluster,
    clients: dict[str, Any],
    round_no: int,
    fences: Any,
    probe_fences: Any,
    candidates: Sequence[LeaderElection],
    terms: list[int],
    unexpected: Unexpected,
) -> Round:
    main = clients["main"]
    main.nodes_manager.initialize()  # the slot map as it is now (the last round moved the slot)
    victim_addr = main.nodes_manager.get_node_from_slot(SLOT).name
    victim_port = int(victim_addr.rsplit(":", 1)[1])
    victim = cluster.nodes[victim_port]
    view = victim.view()
    me = victim.myself(view)
    if owner(view, SLOT) != me:
        raise RuntimeError(
            f"the client says :{victim_port} serves slot {SLOT}, the node says otherwise"
        )
    replica = cluster.nodes[next(s.port for s in view.values() if s.master == me.id)]

    term_before = ledgers.elect(candidates)
    if not terms or term_before != terms[-1]:
        terms.append(term_before)
    leader = next(c for c in candidates if c.is_leader())
    standby = next(c for c in candidates if c is not leader)

    go, t0, won = threading.Event(), [0.0], []
    lock = Lock(PROBE_LOCK, client=clients["lock"], ttl=LOCK_TTL, wait=0, prefix=PREFIX)
    queue = Queue(f"probe-{round_no}:{{{TAG}}}", client=clients["task"], prefix=PREFIX)
    probes = {
        "lock": ledgers.probe(
            go,
            t0,
            unexpected.watch("lock probe", ledgers.lock_attempt(lock, round_no, probe_fences)),
        ),
        "task": ledgers.probe(
            go,
            t0,
            unexpected.watch(
                "task probe",
                ledgers.task_attempt(queue, f"probe-{round_no}", round_no, repush_after=1),
            ),
        ),
        "leader": ledgers.probe(
            go, t0, unexpected.watch("leader probe", leader_attempt(standby, term_before, won))
        ),
    }
    jobs = Queue(f"jobs-{round_no}:{{{TAG}}}", client=clients["pusher"], prefix=PREFIX)
    pushes, stop_push = Pushes(), threading.Event()
    pushing = ledgers.pusher(
        unexpected.watch("pusher push", jobs.push),
        f"m{round_no}",
        stop_push,
        pushes,
        pause=PUSH_PAUSE,
    )
    hammer = Hammer(clients["hammer"], round_no, fences, t0, unexpected)
    try:
        time.sleep(LOAD)
        leader.campaign()  # a fresh lease right before the kill
        t0[0] = time.monotonic()
        victim.kill()
        acked_before_kill = len(pushes.acked)  # the pushes that returned so far did before the kill
        go.set()
        failed_seen, promoted_seen, all_agree = watch_failover(cluster, t0[0], me.id, replica)
        for thread, _ in probes.values():
            thread.join(max(0.0, t0[0] + PROBE_TIMEOUT + 1 - time.monotonic()))
        while hammer.first_after is None and time.monotonic() < t0[0] + PROBE_TIMEOUT:
            time.sleep(RETRY)  # a grant lost at the kill blocks the hammer until its TTL
        time.sleep(AFTER)
    finally:  # also on error: no load thread outlives its round
        stop_push.set()
        hammer.stop.set()
        pushing.join(10)
        hammer.thread.join(10)
    if promoted_seen is None:
        raise RuntimeError(f"no failover within {PROBE_TIMEOUT:g} s\n{cluster.describe()}")

    # Every acknowledged push must be delivered now, on the promoted replica.
    delivered: Counter[str] = Counter()
    drain = Queue(jobs.name, client=main, prefix=PREFIX)
    unexpected.watch(
        "drain",
        Worker(
            [drain],
            handler=lambda m: delivered.update([m.id]),
            burst=True,
            worker_id=f"drain-{round_no}",
        ).run,
    )()
    acked = pushes.acked
    lost_before = sum(1 for mid in acked[:acked_before_kill] if mid not in delivered)
    lost_after = sum(1 for mid in acked[acked_before_kill:] if mid not in delivered)
    stray = len(set(delivered) - set(acked))
    duplicates = sum(n - 1 for n in delivered.values())

    lead = probes["leader"][1]
    term_after = won[0] if won else None
    if term_after is not None:
        terms.append(term_after)

    victim.start()  # same directory, same nodes.conf: it rejoins as a replica of the promoted node
    settle = cluster.wait_settled()
    now_view = victim.view()
    notes = []
    if "slave" not in victim.myself(now_view).flags:
        notes.append(f"the restarted :{victim_port} is not a replica")
    return Round(
        killed=victim_port,
        promoted=replica.port if promoted_seen is not None else None,
        lock=probes["lock"][1],
        task=probes["task"][1],
        leader=lead,
        hammer=hammer.first_after,
        hammer_busy=hammer.busy_after,
        hammer_errors=hammer.errors,
        failed_seen=failed_seen,
        promoted_seen=promoted_seen,
        all_agree=all_agree,
        term_before=term_before,
        term_after=term_after,
        pushes=pushes,
        acked_before_kill=acked_before_kill,
        lost_before=lost_before,
        lost_after=lost_after,
        stray=stray,
        duplicates=duplicates,
        settle=settle,
        push_errors=len(pushes.unknown),
        notes=notes,
    )


# --- reporting ---------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="2 rounds (~12 s)")
    cli.number("--rounds", 5, 2, "failovers to measure", least=1)
    cli.number(
        "--node-timeout",
        NODE_TIMEOUT_MS,
        None,
        "cluster-node-timeout in ms, Redis's default is 15000",
        least=100,
        unit="milliseconds",
    )
    return cli.parse(argv)


def build_clients(cluster: Cluster) -> dict[str, Any]:
    config = validate(
        {"CLUSTER": {"NODES": cluster.urls[:2]}, "SOCKET_TIMEOUT": 1.0, "CONNECT_TIMEOUT": 0.5}
    )
    return {
        name: cluster_client(config)
        for name in ("main", "hammer", "pusher", "lock", "task", "A", "B")
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    logs = ledgers.LogCounter("django_redcoord", "bench.cluster_failover")
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            print(f"{tool} is not on PATH", file=sys.stderr)
            return 2
    clients: dict[str, Any] = {}
    rounds: list[Round] = []
    fences, probe_fences, unexpected = Fences(), Fences(), Unexpected()
    terms: list[int] = []
    cluster = Cluster(
        PRIMARIES,
        1,
        node_timeout=args.node_timeout,
        extra=NODE_ARGS,
        span=PORTS,
        slot=SLOT,
        stable=STABLE,
        settle_timeout=SETTLE_TIMEOUT,
    )
    with cluster:
        print(header("Redis Cluster failover benchmark", cluster.version(), versions(LIBRARIES)))
        ports = sorted(cluster.nodes)
        print(
            f"Cluster: {PRIMARIES} primaries + {PRIMARIES} replicas (redis-cli --cluster create "
            f"--cluster-replicas 1), cluster-node-timeout {args.node_timeout} ms (tuned; Redis's "
            "default: 15000), cluster-replica-validity-factor 0, repl-diskless-sync yes / delay "
            f"0, no persistence; ports {ports[0]}-{ports[-1]} (bus +10000). Client: "
            "cluster_client(REDCOORD['CLUSTER'] naming 2 nodes), SOCKET_TIMEOUT 1 s, "
            "CONNECT_TIMEOUT 0.5 s, one per thread, built once. Victim: the primary serving "
            f"{{{TAG}}} (slot {SLOT}: locks {LOCK_NAME!r} and {PROBE_LOCK!r}, queues "
            f"'jobs-N:{{{TAG}}}' and 'probe-N:{{{TAG}}}', election {ELECTION!r}). Probes retry "
            f"every {RETRY * 1000:g} ms; lock ttl {LOCK_TTL:g} s; leader lease {LEASE:g} / renew "
            f"deadline {RENEW_DEADLINE:g} / retry period {RETRY_PERIOD:g} s; {LOAD:g} s of load "
            "before each SIGKILL; then the killed node restarts with its nodes.conf and rejoins "
            f"as a replica; next kill once the cluster is whole for {STABLE:g} s"
        )
        try:
            clients = build_clients(cluster)
            candidates = [
                LeaderElection(
                    ELECTION,
                    lease=LEASE,
                    renew_deadline=RENEW_DEADLINE,
                    retry_period=RETRY_PERIOD,
                    identity=name,
                    client=clients[name],
                    prefix=PREFIX,
                )
                for name in ("A", "B")
            ]
            print("\n## Rounds (seconds after SIGKILL of the primary)\n")
            for i in range(1, args.rounds + 1):
                r = one_round(
                    cluster, clients, i, fences, probe_fences, candidates, terms, unexpected
                )
                rounds.append(r)
                print(
                    f"round {i}: killed :{r.killed}, promoted :{r.promoted}; fail seen "
                    f"{seconds(r.failed_seen)}, promoted {seconds(r.promoted_seen)}, all nodes "
                    f"agree {seconds(r.all_agree)}; lock {seconds(r.lock.elapsed)}, task "
                    f"{seconds(r.task.elapsed)}, leader {seconds(r.leader.elapsed)} (term "
                    f"{r.term_before} -> "
                    f"{r.term_after}{' ' + r.leader.note if r.leader.note else ''}), hammer "
                    f"{seconds(r.hammer)}; lost {r.lost_before}/{r.acked_before_kill} acked before "
                    f"the kill, {r.lost_after}/{len(r.pushes.acked) - r.acked_before_kill} after; "
                    f"settled in {r.settle:.1f} s" + (f"; {'; '.join(r.notes)}" if r.notes else ""),
                    flush=True,
                )
        finally:
            for client in clients.values():
                client.close()

    n = len(rounds)
    print(f"\n## Time from SIGKILL of the primary to the first success ({n} failovers)\n")
    print_table(
        ledgers.ELAPSED_HEADERS,
        [
            *ledgers.probe_rows(rounds, "leader term (standby, term above the last)"),
            ledgers.elapsed_row(
                "hammer: first grant of the busy lock",
                [r.hammer for r in rounds],
                [("held until TTL" if r.hammer_busy else "") for r in rounds],
            ),
            ledgers.elapsed_row(
                "(ref.) the replica sees the primary flagged fail", [r.failed_seen for r in rounds]
            ),
            ledgers.elapsed_row(
                "(ref.) the replica is promoted (myself,master)", [r.promoted_seen for r in rounds]
            ),
            ledgers.elapsed_row(
                "(ref.) all 5 surviving nodes route the slot to it", [r.all_agree for r in rounds]
            ),
        ],
    )
    hammer_errors = [("hammer", r.hammer_errors) for r in rounds]
    print("\n" + ledgers.failed_attempts([*ledgers.probe_errors(rounds), *hammer_errors]))
    settles = [r.settle for r in rounds]
    print(
        "restart of the killed node until the cluster is whole again: median "
        f"{statistics.median(settles):.1f} s, max {max(settles):.1f} s (not in the table: no "
        "client waits for it)"
    )

    print("\n## Safety\n")
    for label, ledger in (
        (LOCK_NAME + " (hammer)", fences),
        (PROBE_LOCK + " (probe)", probe_fences),
    ):
        print(f"fencing, {label}: {len(ledger.grants)} grants, {ledger.verdict()}")
    held = sum(1 for r in rounds if r.hammer_busy)
    print(
        f"lock releases lost (the hammer found {LOCK_NAME!r} held after the failover, until its "
        f"TTL): {held} of {n} rounds"
    )
    before = sum(r.acked_before_kill for r in rounds)
    after = sum(len(r.pushes.acked) - r.acked_before_kill for r in rounds)
    print(
        "messages lost (acknowledged push, not delivered by the drain after the failover): "
        f"{sum(r.lost_before for r in rounds)} of {before} acknowledged before the kill (per "
        f"round: {', '.join(f'{r.lost_before}/{r.acked_before_kill}' for r in rounds)}), "
        f"{sum(r.lost_after for r in rounds)} of {after} acknowledged after it; "
        f"{sum(r.push_errors for r in rounds)} pushes raised (unknown outcome), of which "
        f"delivered: {sum(r.stray for r in rounds)}; delivered twice: "
        f"{sum(r.duplicates for r in rounds)}"
    )
    bad_terms = ledgers.terms_not_rising(terms)
    new_terms = sum(1 for r in rounds if r.leader.elapsed is not None and not r.leader.note)
    print(
        f"leader terms: {len(terms)} won in all ({terms[0]} ... {terms[-1]}), the standby began a "
        f"new term in {new_terms} of {n} failovers; terms not above the last: {len(bad_terms)}"
        + (f" {bad_terms}" if bad_terms else "")
    )
    if unexpected.counts:
        print(
            "\nexceptions other than CoordinationUnavailable from django_redcoord calls (library "
            "problems):"
        )
        for kind, count in unexpected.counts.most_common():
            print(f"\n{kind} x{count}; first traceback:\n{unexpected.first[kind]}")
    else:
        print("exceptions other than CoordinationUnavailable from django_redcoord calls: none")
    logs.report()
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
