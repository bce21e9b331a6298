"""Benchmark leader election: failover time, and what an idle election costs Redis.

Everything runs against one throwaway redis-server that this script starts on
a free 127.0.0.1 port (no persistence) and stops at the end, also on error or
Ctrl-C. The candidates are real ``manage.py run_leader`` processes
(settings: ``tests/support/leader_settings.py``, no jobs) with lease 3 s, renew
deadline 2 s, retry period 0.5 s (override with --lease/--renew/--retry).

Part A, failover: three candidates; the leader is killed (SIGKILL) or
stopped (SIGTERM) at a random moment of its renewal cycle, and we measure
from the signal until Redis holds a record with a higher term (polled every
1 ms). A replacement candidate is started after each round so three always
run. Median, min and max of ``--rounds`` rounds each. Expected bounds: after
SIGKILL at most lease + retry period (a standby's wait is cut short when the
record's remaining lifetime is shorter than a retry period, so ~lease minus
the time since the last renewal); after SIGTERM the leader resigns and a
standby blocked on the notify list campaigns at once.

Part B, idle cost: INFO commandstats over a ``--window`` second window,
first with the leader alone, then with the leader and two standbys; the cost
per standby is the difference divided by two. "sent" counts what the
candidates send (EVALSHA, BLPOP); "server" counts every command Redis runs,
the ones inside the Lua scripts included.

Run from the repository root::

    .venv/bin/python bench/bench_leader.py [--rounds 5] [--window 5] [--quick]

The default run takes about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import redis
from support.cli import Options
from support.processes import run_main, spawn, terminate
from support.servers import RedisServer, command_calls
from support.tables import header, print_table

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "bench"
RECORD = f"{PREFIX}:leader:{{default}}"  # KeyBuilder("bench").leader("default").record
SENT = ("evalsha", "eval", "blpop")


class Candidates:
    """``manage.py run_leader`` processes against one server."""

    def __init__(self, url: str, lease: float, renew: float, retry: float) -> None:
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.support.leader_settings",
            "REDCOORD_REDIS_URL": url,
            "REDCOORD_KEY_PREFIX": PREFIX,
            "LEADER_TEST_JOBS": "",
            "LEADER_TEST_LEASE": str(lease),
            "LEADER_TEST_RENEW_DEADLINE": str(renew),
            "LEADER_TEST_RETRY_PERIOD": str(retry),
        }
        self.logs = Path(tempfile.mkdtemp(prefix="bench-leader-"))
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(self) -> str:
        name = f"c{len(self.procs)}"
        with open(self.logs / f"{name}.log", "wb") as log:
            self.procs[name] = spawn(
                [sys.executable, "manage.py", "run_leader", "--identity", name],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                session=False,
            )
        return name

    def wait_ready(self, name: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while b"campaigning in election" not in (self.logs / f"{name}.log").read_bytes():
            if time.monotonic() > deadline or self.procs[name].poll() is not None:
                raise RuntimeError(
                    f"candidate {name} did not start:\n{(self.logs / f'{name}.log').read_text()}"
                )
            time.sleep(0.02)

    def stop(self) -> None:
        terminate(*self.procs.values(), timeout=10)


def leader(client: redis.Redis) -> tuple[str, int] | None:
    identity, term = client.hmget(RECORD, "identity", "term")
    return None if identity is None else (identity.decode(), int(term))


def wait_term_above(client: redis.Redis, term: int, timeout: float = 30.0) -> tuple[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = leader(client)
        if found and found[1] > term:
            return found
        time.sleep(0.001)
    raise RuntimeError(f"no new leader above term {term} within {timeout} s")


def part_a(
    client: redis.Redis, fleet: Candidates, rounds: int, retry: float
) -> dict[str, list[float]]:
    names = [fleet.spawn() for _ in range(3)]
    for name in names:
        fleet.wait_ready(name)
    wait_term_above(client, 0)
    results: dict[str, list[float]] = {"SIGKILL": [], "SIGTERM": []}
    for signum in [signal.SIGKILL] * rounds + [signal.SIGTERM] * rounds:
        identity, term = leader(client) or wait_term_above(client, 0)
        time.sleep(random.uniform(0, retry))  # any moment of the renewal cycle
        fleet.procs[identity].send_signal(signum)
        sent = time.monotonic()
        wait_term_above(client, term)
        results[signal.Signals(signum).name].append(time.monotonic() - sent)
        fleet.procs[identity].wait(15)
        fleet.wait_ready(fleet.spawn())
        time.sleep(retry)  # the newcomer has campaigned once and waits as a standby
    return results


def window(client: redis.Redis, seconds: float) -> tuple[float, float]:
    """(sent, server) commands per second during ``seconds``, INFO itself excluded."""
    before = command_calls(client)
    time.sleep(seconds)
    delta = command_calls(client) - before
    return sum(delta[k] for k in SENT) / seconds, sum(delta.values()) / seconds


def part_b(
    client: redis.Redis, fleet: Candidates, seconds: float
) -> list[tuple[str, float, float]]:
    first = fleet.spawn()
    fleet.wait_ready(first)
    wait_term_above(client, 0)
    time.sleep(1.0)
    alone = window(client, seconds)
    for name in (fleet.spawn(), fleet.spawn()):
        fleet.wait_ready(name)
    time.sleep(1.0)
    three = window(client, seconds)
    per_standby = ((three[0] - alone[0]) / 2, (three[1] - alone[1]) / 2)
    return [
        ("leader alone", *alone),
        ("leader + 2 standbys", *three),
        ("per standby", *per_standby),
    ]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(
        __doc__,
        quick="smoke run: 1 failover per signal, 1 s windows, lease 1.5 / renew 1 / retry 0.25 s",
    )
    cli.number("--rounds", 5, 1, "failovers per signal", least=1)
    cli.number("--window", 5.0, 1.0, "seconds per commandstats window", above=0)
    cli.number("--lease", 3.0, 1.5, "the election's lease, seconds", above=0)
    cli.number("--renew", 2.0, 1.0, "its renew deadline, seconds", above=0)
    cli.number("--retry", 0.5, 0.25, "its retry period, seconds", above=0)
    return cli.parse(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    with RedisServer() as server:
        client = redis.Redis(host="127.0.0.1", port=server.port)
        timing = (
            f"run_leader with lease {args.lease:g} s / renew deadline {args.renew:g} s / retry "
            f"period {args.retry:g} s"
        )
        print(header("Leader election benchmark", server.version(), timing))
        fleet = Candidates(server.url, args.lease, args.renew, args.retry)
        try:
            failovers = part_a(client, fleet, args.rounds, args.retry)
        finally:
            fleet.stop()
        print(
            f"\n## A. Failover: signal to a new term in Redis, 3 candidates ({args.rounds} rounds "
            "each)\n"
        )
        bounds = {
            "SIGKILL": f"<= lease + retry = {args.lease + args.retry:g} s",
            "SIGTERM": "immediate (resign)",
        }
        rows = []
        for name, times in failovers.items():
            rows.append(
                [
                    f"leader {name}",
                    f"{statistics.median(times):.3f}",
                    f"{min(times):.3f}",
                    f"{max(times):.3f}",
                    bounds[name],
                ]
            )
        print_table(["failover after", "median s", "min s", "max s", "expected"], rows)

        client.flushall()
        fleet = Candidates(server.url, args.lease, args.renew, args.retry)
        try:
            costs = part_b(client, fleet, args.window)
        finally:
            fleet.stop()
        print(f"\n## B. Idle election cost, INFO commandstats over {args.window:g} s, no jobs\n")
        print_table(
            ["candidates", "sent cmds/s", "server cmds/s (Lua internals incl.)"],
            [[label, f"{sent:.2f}", f"{total:.2f}"] for label, sent, total in costs],
        )
        print(
            f"\nexpected sent: leader 1/retry = {1 / args.retry:g}/s; standby 2/retry "
            f"(EVALSHA + BLPOP) = {2 / args.retry:g}/s"
        )
        client.close()
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
