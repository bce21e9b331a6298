"""Benchmark what a Redis Sentinel failover costs django_redcoord's users, and what it loses.

The script starts its own Sentinel topology on 127.0.0.1 (ports from 20000 to
32000: below 55000 and outside the kernel's ephemeral range): one master and
two replicas (``redis-server``, no persistence, ``repl-diskless-sync-delay
0``) and three sentinels (``sentinel monitor mymaster 127.0.0.1 <port> 2``,
``down-after-milliseconds 1000``, ``failover-timeout 3000``: tuned timeouts;
Sentinel's defaults are 30 s and 180 s, with which a failover starts about
30 s after the master's death rather than 1 s; ``--down-after`` sets another
value). Every process is stopped at the end, also on error, Ctrl-C or
SIGTERM, and dies with this process (PR_SET_PDEATHSIG).

This process configures django_redcoord once with ``REDCOORD['SENTINEL']``
naming the three sentinels (SOCKET_TIMEOUT 1 s, CONNECT_TIMEOUT 0.5 s), so
every object below finds the master through the sentinels, as an
application would. Each of ``--failovers`` rounds (default 5, ``--quick``
2):

1. some candidate of an election (two ``LeaderElection`` candidates, lease
   2 s, renew deadline 1.5 s, retry period 0.2 s) campaigns until one leads;
2. load for 0.5 s: one thread acquires and releases the lock ``fenced``
   (ttl 5 s, wait 0) in a loop; two threads push messages in a loop to
   queues of their own: one plain ``push()``, one ``push()`` followed by
   ``WAIT 1 100`` on the same connection (a client and pool of its own,
   built from the same settings, used by that thread only);
3. the lock thread is stopped (its last release has returned), the leader
   renews once, and the master is killed with SIGKILL; the two pushers keep
   pushing until their first error, so the last acknowledged pushes are
   microseconds older than the kill;
4. three probe threads, started before the kill and let go right after it,
   each retry every 20 ms until their first success: (a) ``lock``: acquire
   (wait=0) and release the lock ``fenced``; (b) ``task``: push a new message
   to a fresh queue, claim it, ack it and flush the ack; (c) ``leader term``:
   both candidates campaign; done when one of them leads after a campaign
   that reached the new master. Time = ``time.monotonic()`` after the
   success minus just before the SIGKILL;
5. the messages the pushers had acknowledged are looked up on the promoted
   replica;
6. the killed server is restarted on its port as a replica of the new
   master while a fourth pusher pushes (plain ``push()``, one every 2 ms)
   until the topology has settled: the master all three sentinels name has
   2 synced replicas online, and every sentinel sees it as a master with no
   failover in progress, two healthy replicas (link ok) and two other
   sentinels, all of it unchanged for 3 s. The next round then starts.
   The acknowledged messages of all three pushers are looked up again on
   that master.

Rows (median, max and every sample over the rounds, in seconds):

* ``lock``, ``task``, ``leader term``: the three probes above;
* reference rows (not django_redcoord): when the first and when all three
  sentinels named the new master (``SENTINEL GET-MASTER-ADDR-BY-NAME``
  polled every 10 ms by the main thread). Nearly all of a probe's time is
  Sentinel's: detection (down-after), then the election and the promotion.

Leader term: the row counts a campaign that renewed the old term as well
(marked ``renewed``; ``new`` otherwise). The old leader keeps its term if
the new master answers before its renew deadline (1.5 s after its last
renewal) and while its record (lease 2 s, replicated) lives; otherwise it
stepped down by its own clock, or the record expired, and a campaign starts
a new term at once. Waiting for a term above the old one even when the old
leader renewed would measure nothing a user waits for.

What the rows leave out: the probes retry every 20 ms, far faster than
django_redcoord's own loops (a Worker waits its retry period, a background
campaign thread ``retry_period``, a blocked lock waiter its re-check), so an
application sees up to one of its own retry intervals more. A lock held at
the moment of the failover is not covered: its release fails, and the grant
(replicated) then blocks others on the new master until its TTL. Killing a
replica or a sentinel, and network partitions (where a cut-off old master
keeps taking writes that are then lost) are not measured; SIGKILL on one
machine means the client sees refused connections at once, not timeouts.

Follow-up failovers: with a down-after this short, a sentinel sometimes
marks the newly promoted master down about 1 s after the switch (it has not
pinged it yet: redis/redis#8607 reports the same at 500 ms), two of them
agree, and they fail over again to another replica. The old new master
keeps its master role until a sentinel converts it to a replica about 10 s
later, and clients connected to it keep writing there: those writes are
lost when it resyncs. The script counts these (``+failover-end`` lines in
the sentinels' logs), waits them out, and the fourth pusher shows what they
cost; the times in the table are those of the first failover.

Safety checks (printed after the table):

* fencing: every grant of ``fenced`` (the load thread's and the probe's, all
  rounds, in the order they returned) must carry a token strictly greater
  than every earlier one. Violations must be 0.
* lock releases lost: rounds in which the probe found ``fenced`` held after
  the failover (the last acknowledged release did not reach the promoted
  replica before the kill, so the grant lives there until its TTL).
* messages lost: of the pushes acknowledged before the kill, how many are
  missing from the master once settled (and, in brackets, from the
  promoted replica right after the failover). Sentinel replicates
  asynchronously, so the last acknowledged writes can be lost; with
  ``WAIT 1 100`` a push counts only once a replica has confirmed it
  (Sentinel promotes the replica with the most data, so these should
  survive; a WAIT that returned 0 is counted separately). A push whose reply
  was lost (an error at the kill) is an unknown outcome and not counted as
  acknowledged. Then the same for the pushes made after the failover.
* leader terms: every new term must be above every earlier one.

Run from the repository root::

    .venv/bin/python bench/bench_failover.py [--quick] [--failovers N] [--down-after MS]

The default run takes about 45 s on 2 cores, plus about 20 s per follow-up
failover; ``--quick`` about 20 s.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from support import ledgers
from support.cli import Options
from support.ledgers import PROBE_TIMEOUT, RETRY, Fences, Probe, Pushes, seconds
from support.processes import run_main
from support.sentinel import SentinelTopology
from support.servers import SERVICE, RedisServer
from support.tables import header, print_table, versions

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.messages import Message
from django_redcoord.core.runtime import runtime
from django_redcoord.core.transport.clients import build_client

QUORUM = 2
DOWN_AFTER_MS = 1000  # Sentinel's default: 30000
FAILOVER_TIMEOUT_MS = 3000  # Sentinel's default: 180000
PORTS = (20000, 32000)  # below the ephemeral range (32768-60999 here) and 55000
PREFIX = "bench"
LOCK_NAME = "fenced"
LOCK_TTL = 5.0
LEASE, RENEW_DEADLINE, RETRY_PERIOD = 2.0, 1.5, 0.2
LOAD = 0.5  # seconds of load before each kill
SETTLE_TIMEOUT = 60.0  # seconds the topology may take to settle after a restart
STABLE = 3.0  # seconds the topology must stay settled before the next kill
AFTER_PAUSE = 0.002  # seconds between the pushes made while the topology settles

LIBRARIES = ("django-redcoord", "redis", "hiredis")

log = logging.getLogger("bench.failover")


# --- one failover --------------------------------------------------------------------


def leader_attempt(candidates: Sequence[LeaderElection], before: int) -> Callable[[Probe], bool]:
    def attempt(result: Probe) -> bool:
        for candidate in candidates:
            if candidate.campaign():
                term = candidate.term or 0
                result.note = "new" if term > before else "renewed"
                return True
        result.errors["another leads"] += 1
        return False

    return attempt


def hammer(round_no: int, fences: Fences, stop: threading.Event) -> threading.Thread:
    """Acquire and release the fenced lock until ``stop`` (or an error)."""

    def loop() -> None:
        lock = Lock(LOCK_NAME, ttl=LOCK_TTL, wait=0)
        while not stop.is_set():
            try:
                if lock.acquire():
                    fences.add(round_no, "load", lock.token)
                    lock.release()
            except Exception as exc:
                log.warning("lock load thread: %s", exc)
                return

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def still_there(node: RedisServer, queue: Queue, out: Pushes) -> int:
    """Count the acknowledged messages found in ``queue`` on ``node`` (a master); return the
    lost."""
    raws = node.client.zrange(queue.keys.ready, 0, -1)
    ids = {Message.parse(raw, queue.name).id for raw in raws}
    acked = set(out.acked)
    out.present = len(ids & acked)
    out.stray = len(ids - acked)
    return len(acked) - out.present


@dataclass
class Round:
    killed: int
    promoted: int
    lock: Probe
    task: Probe
    leader: Probe
    term_before: int
    term_after: int | None
    first_named: float | None
    all_named: float | None
    plain: Pushes
    waited: Pushes
    lost_at_promotion: tuple[int, int]  # (plain, WAIT) lost on the promoted replica
    after: Pushes  # pushed from the probes' success until the topology settled
    followups: int  # failovers after the first one before the topology settled
    final: int  # the master once settled
    settle: float


def one_round(
    topo: SentinelTopology,
    round_no: int,
    fences: Fences,
    candidates: Sequence[LeaderElection],
    terms: list[int],
) -> Round:
    old = topo.master
    ended = topo.failovers_ended()
    term_before = ledgers.elect(candidates)
    if not terms or term_before != terms[-1]:
        terms.append(term_before)

    go, t0 = threading.Event(), [0.0]
    probes = {
        "lock": ledgers.probe(
            go, t0, ledgers.lock_attempt(Lock(LOCK_NAME, ttl=LOCK_TTL, wait=0), round_no, fences)
        ),
        "task": ledgers.probe(
            go,
            t0,
            ledgers.task_attempt(
                Queue(f"probe-{round_no}"), f"probe-{round_no}", round_no, repush_after=10
            ),
        ),
        "leader": ledgers.probe(go, t0, leader_attempt(candidates, term_before)),
    }
    stop_lock, stop_push = threading.Event(), threading.Event()
    wait_client = build_client(runtime.config)  # a client (and pool) of its own, same settings
    plain_q = Queue(f"durable-plain-{round_no}")
    wait_q = Queue(f"durable-wait-{round_no}", client=wait_client)
    plain_out, wait_out = Pushes(), Pushes()
    load = [
        hammer(round_no, fences, stop_lock),
        ledgers.pusher(plain_q.push, f"p{round_no}", stop_push, plain_out),
        ledgers.pusher(wait_q.push, f"w{round_no}", stop_push, wait_out, wait_client),
    ]
    time.sleep(LOAD)
    stop_lock.set()
    load[0].join()
    for candidate in candidates:  # the leader renews (a fresh lease) right before the kill
        if candidate.is_leader():
            candidate.campaign()

    t0[0] = time.monotonic()
    topo.data[old].kill()
    go.set()

    # Reference: when the sentinels name another master (first one, all three).
    first = every = None
    new = old
    deadline = t0[0] + PROBE_TIMEOUT
    while time.monotonic() < deadline:
        named = topo.named_masters()
        now = time.monotonic() - t0[0]
        moved = [p for p in named if p is not None and p != old]
        if moved and first is None:
            first = now
        if len(moved) == len(named) and len(set(moved)) == 1:
            every, new = now, moved[0]
            break
        time.sleep(0.01)
    for thread, _ in probes.values():
        thread.join(max(0.0, t0[0] + PROBE_TIMEOUT + 1 - time.monotonic()))
    stop_push.set()
    for thread in load[1:]:
        thread.join(5)

    if new == old:
        raise RuntimeError(
            f"no failover within {PROBE_TIMEOUT:g} s (the sentinels name {topo.named_masters()})"
        )
    at_promotion = (
        still_there(topo.data[new], plain_q, plain_out),
        still_there(topo.data[new], wait_q, wait_out),
    )
    wait_client.connection_pool.disconnect()
    lead = probes["leader"][1]
    term_after = next((c.term for c in candidates if c.is_leader()), None)
    if lead.note == "new" and term_after is not None:
        terms.append(term_after)

    # Writes go on while the killed server rejoins and the sentinels settle.
    after_q, after_out, stop_after = (
        Queue(f"durable-after-{round_no}"),
        Pushes(),
        threading.Event(),
    )
    after = ledgers.pusher(after_q.push, f"a{round_no}", stop_after, after_out, pause=AFTER_PAUSE)
    topo.rejoin(old, new)
    topo.master = new
    try:
        settle = topo.wait_settled()
    finally:
        stop_after.set()
        after.join(5)
    still_there(topo.data[topo.master], after_q, after_out)
    # A follow-up failover (see the module docstring) may have promoted a replica
    # that missed writes: look again, on the master the sentinels settled on.
    still_there(topo.data[topo.master], plain_q, plain_out)
    still_there(topo.data[topo.master], wait_q, wait_out)
    followups = topo.failovers_ended() - ended - 1
    return Round(
        old,
        new,
        probes["lock"][1],
        probes["task"][1],
        lead,
        term_before,
        term_after,
        first,
        every,
        plain_out,
        wait_out,
        at_promotion,
        after_out,
        followups,
        topo.master,
        settle,
    )


# --- reporting -----------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="2 failovers (~20 s)")
    cli.number("--failovers", 5, 2, "failovers to measure", least=1)
    cli.number(
        "--down-after",
        DOWN_AFTER_MS,
        None,
        "the sentinels' down-after-milliseconds",
        least=100,
        unit="milliseconds",
    )
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    logs = ledgers.LogCounter("django_redcoord", "bench.failover")
    if shutil.which("redis-server") is None:
        print("redis-server is not on PATH", file=sys.stderr)
        return 2
    topology = SentinelTopology(
        args.down_after,
        quorum=QUORUM,
        failover_timeout=FAILOVER_TIMEOUT_MS,
        stable=STABLE,
        settle_timeout=SETTLE_TIMEOUT,
        span=PORTS,
    )
    with topology as topo:
        print(header("Failover benchmark", topo.version(), versions(LIBRARIES)))
        print(
            "Sentinel: master + 2 replicas (repl-diskless-sync-delay 0, no persistence), 3 "
            f"sentinels, quorum {QUORUM}; tuned down-after-milliseconds {args.down_after} and "
            f"failover-timeout {FAILOVER_TIMEOUT_MS} (Sentinel's defaults: 30000 and 180000). "
            "Client: REDCOORD['SENTINEL'], SOCKET_TIMEOUT 1 s, CONNECT_TIMEOUT 0.5 s; probes "
            f"retry every {RETRY * 1000:g} ms; lock ttl {LOCK_TTL:g} s; leader lease {LEASE:g} / "
            f"renew deadline {RENEW_DEADLINE:g} / retry period {RETRY_PERIOD:g} s; {LOAD:g} s of "
            f"load before each SIGKILL, next kill once settled for {STABLE:g} s; ports "
            f"{min(topo.data)}-{min(topo.data) + 5}"
        )
        runtime.configure(
            {
                "SENTINEL": {"HOSTS": topo.sentinel_hosts, "SERVICE": SERVICE},
                "KEY_PREFIX": PREFIX,
                "SOCKET_TIMEOUT": 1.0,
                "CONNECT_TIMEOUT": 0.5,
            }
        )
        fences = Fences()
        candidates = [
            LeaderElection("failover", LEASE, RENEW_DEADLINE, RETRY_PERIOD, identity=name)
            for name in ("A", "B")
        ]
        terms: list[int] = []
        rounds: list[Round] = []
        print("\n## Rounds (seconds after SIGKILL of the master)\n")
        for i in range(1, args.failovers + 1):
            r = one_round(topo, i, fences, candidates, terms)
            rounds.append(r)
            print(
                f"round {i}: killed :{r.killed}, promoted :{r.promoted}; sentinels "
                f"{seconds(r.first_named)}/{seconds(r.all_named)}; lock {seconds(r.lock.elapsed)}, "
                f"task {seconds(r.task.elapsed)}, leader {seconds(r.leader.elapsed)} (term "
                f"{r.term_before} -> {r.term_after}, {r.leader.note}); lost "
                f"{len(r.plain.acked) - r.plain.present}/{len(r.plain.acked)} plain, "
                f"{len(r.waited.acked) - r.waited.present}/{len(r.waited.acked)} with WAIT, "
                f"{len(r.after.acked) - r.after.present}/{len(r.after.acked)} after; settled in "
                f"{r.settle:.1f} s"
                + (
                    f" after {r.followups} follow-up failover(s), master :{r.final}"
                    if r.followups
                    else ""
                ),
                flush=True,
            )
        runtime.clear()

    n = len(rounds)
    print(f"\n## Time from SIGKILL of the master to the first success ({n} failovers)\n")
    print_table(
        ledgers.ELAPSED_HEADERS,
        [
            *ledgers.probe_rows(rounds, "leader term"),
            ledgers.elapsed_row(
                "(ref.) first sentinel names the new master", [r.first_named for r in rounds]
            ),
            ledgers.elapsed_row("(ref.) all 3 sentinels name it", [r.all_named for r in rounds]),
        ],
    )
    print("\n" + ledgers.failed_attempts(ledgers.probe_errors(rounds)))

    print("\n## Safety\n")
    load = sum(1 for g in fences.grants if g[1] == "load")
    print(
        f"fencing: {len(fences.grants)} grants of lock {LOCK_NAME!r} ({load} by the load thread, "
        f"{len(fences.grants) - load} by the probe), {fences.verdict()}"
    )
    held = sum(1 for r in rounds if r.lock.errors.get("held by another"))
    print(
        f"lock releases lost (the probe found the lock held after the failover): {held} of {n} "
        "rounds"
    )
    followups = [r.followups for r in rounds]
    print(
        "follow-up failovers (the sentinels failed the newly promoted master over again before "
        f"the topology settled): {sum(followups)}, in {sum(1 for f in followups if f)} of {n} "
        "rounds"
    )
    for k, (label, get) in enumerate(
        (("plain push()", lambda r: r.plain), ("push() + WAIT 1 100", lambda r: r.waited))
    ):
        acked = [len(get(r).acked) for r in rounds]
        lost = [len(get(r).acked) - get(r).present for r in rounds]
        early = sum(r.lost_at_promotion[k] for r in rounds)
        extra = ""
        if label.startswith("push() +"):
            extra = (
                f"; WAIT returned 0 for {sum(len(get(r).unconfirmed) for r in rounds)} pushes (not "
                "counted)"
            )
        stray = sum(get(r).stray for r in rounds)
        print(
            f"messages lost, {label}: {sum(lost)} of {sum(acked)} acknowledged before the kill "
            f"(per round: {', '.join(f'{a}/{b}' for a, b in zip(lost, acked, strict=True))}; on "
            f"the promoted replica right after the failover: {early} lost); "
            f"{sum(len(get(r).unknown) for r in rounds)} pushes failed at the kill (unknown "
            f"outcome); found on the new master though not acknowledged: {stray}{extra}"
        )
    after_acked = sum(len(r.after.acked) for r in rounds)
    after_lost = [len(r.after.acked) - r.after.present for r in rounds]
    print(
        "messages lost, plain push() after the failover (from the probes' success until the "
        f"topology settled, one every {AFTER_PAUSE * 1000:g} ms): {sum(after_lost)} of "
        f"{after_acked} acknowledged (per round: {', '.join(map(str, after_lost))}); "
        f"{sum(len(r.after.unknown) for r in rounds)} pushes failed (unknown outcome)"
    )
    bad_terms = ledgers.terms_not_rising(terms)
    renewed = sum(1 for r in rounds if r.leader.note == "renewed")
    print(
        f"leader terms: {len(terms)} won in all ({terms[0]} ... {terms[-1]}; a term is a hybrid "
        f"logical clock in µs), {n - renewed} failovers began a new term, {renewed} kept the old "
        f"leader's term; terms not above the last: {len(bad_terms)}"
        + (f" {bad_terms}" if bad_terms else "")
    )
    logs.report()
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
