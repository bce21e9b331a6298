"""Interleaved A/B of how a coordination command reaches Redis.

Each row sends the same commands to one throwaway redis-server (no
persistence) from one thread: an EVALSHA of a two-key script (the shape of a
lock release or a queue push, which also pushes one element) and a BLPOP
that finds that element at once (the end of a handoff). Rows, interleaved in ``--rounds`` rounds
(default 7) of
``--calls`` calls each (default 3000), in rotating order:

* ``ours``: ``scripting.command``, what every lock, queue and leader call
  uses: a connection checked out of the client's pool and given back, the
  reply read by the connection class, no retry; plain arguments packed by
  hiredis and sent with the connection's ``send_packed_command``
* ``ours, redis-py packing``: the same with the client's own packer
  (``send_command``), i.e. without the packing shortcut
* ``redis-py execute_command``: the client's generic path (its retry
  wrapper, response callbacks, observability hooks), zero retries

Reported: client CPU per call (``time.process_time``: this process's user +
system time, less sensitive to the VM's neighbours than wall time) and wall
calls per second, median over rounds with the range in brackets, and each
row's ratio to ``ours``. What it leaves out: the server's time, and any
contention (one thread).

Run from the repository root::

    .venv/bin/python bench/bench_transport.py [--rounds R] [--calls N] [--quick]
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer

from django_redcoord.core.transport import commands as scripting
from django_redcoord.core.transport.clients import client_from_url

SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('RPUSH', KEYS[2], ARGV[1])"
KEYS = ("bench:{x}:a", "bench:{x}:list")


def _rows(client: Any, sha: str) -> dict[str, Callable[[int], None]]:
    def ours(i: int) -> None:
        scripting.command(client, "EVALSHA", sha, 2, *KEYS, i, operation="bench")
        scripting.command(client, "BLPOP", KEYS[1], "1", operation="bench")

    def ours_redis_py_packing(i: int) -> None:
        packer, scripting._pack = scripting._pack, None
        try:
            ours(i)
        finally:
            scripting._pack = packer

    def execute_command(i: int) -> None:
        client.execute_command("EVALSHA", sha, 2, *KEYS, i)
        client.execute_command("BLPOP", KEYS[1], "1")

    return {
        "ours": ours,
        "ours, redis-py packing": ours_redis_py_packing,
        "redis-py execute_command": execute_command,
    }


def main() -> int:
    cli = Options(__doc__, quick="smoke run: 2 rounds of 200 calls")
    cli.number("--rounds", 7, 2, "interleaved rounds", least=1)
    cli.number("--calls", 3000, 200, "iterations per row and round", least=1)
    options = cli.parse()
    with RedisServer() as server:
        client = client_from_url(server.url)
        sha = client.script_load(SCRIPT)
        rows = _rows(client, sha)
        cpu: dict[str, list[float]] = {name: [] for name in rows}
        rate: dict[str, list[float]] = {name: [] for name in rows}
        names = list(rows)
        for name in names:  # warm up: connections, scripts
            for i in range(200):
                rows[name](i)
        for r in range(options.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                run = rows[name]
                cpu0, wall0 = time.process_time(), time.perf_counter()
                for i in range(options.calls):
                    run(i)
                cpu1, wall1 = time.process_time(), time.perf_counter()
                cpu[name].append((cpu1 - cpu0) / options.calls * 1e6)
                rate[name].append(options.calls / (wall1 - wall0))
        base_cpu = statistics.median(cpu["ours"])
        print(
            f"redis-server {server.version()} | {options.rounds} interleaved rounds x "
            f"{options.calls} iterations (an EVALSHA and a BLPOP each)\n"
        )
        print("| path | client CPU us / iteration (range) | vs ours | iterations/s (range) |")
        print("|---|---|---|---|")
        for name in names:
            c, w = cpu[name], rate[name]
            print(
                f"| {name} | {statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f}) | "
                f"{statistics.median(c) / base_cpu:.2f}x | {statistics.median(w):,.0f} "
                f"({min(w):,.0f}-{max(w):,.0f}) |"
            )
    return 0


if __name__ == "__main__":
    run_main(main)
