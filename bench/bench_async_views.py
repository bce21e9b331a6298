"""Async Django views under load: ``@with_lock`` on the event loop vs a sync lock in a thread.

A real ASGI server, uvicorn (one worker process, its default settings:
``uvicorn bench._asgi_site:application``), serves the Django site of
``bench/_asgi_site.py`` (``settings.configure``: app ``django_redcoord``,
``MIDDLEWARE = []``, no database, ``DEBUG=False``, ``REDCOORD = {"URL": ...}``
pointing at a throwaway redis-server started here, no persistence). Every view
has the same body: take the lock ``item:<n>`` (``<n>`` from the URL, ttl 30 s,
wait 10 s: REDCOORD's defaults), hold it 1 ms with a sleep that blocks
neither the event loop nor other requests, answer the name (a few bytes).
Rows:

* ``ref``: ``async def``, the same 1 ms ``asyncio.sleep``, no lock: what
  Django's ASGI handler and uvicorn cost on their own (load (a) only; the
  load shape means nothing to it).
* ``1``: ``async def`` with ``@with_lock``: acquired and released natively on
  the event loop (REDCOORD's ``redis.asyncio`` client), ``asyncio.sleep``.
* ``2``: ``async def`` taking a sync ``Lock`` through
  ``asgiref.sync.sync_to_async(lock.acquire / lock.release,
  thread_sensitive=False)``, ``asyncio.sleep`` in between: a sync lock in a
  worker thread. Those calls go to the event loop's default executor,
  ``min(32, cores + 4)`` threads (6 on 2 cores); each ratio is to this row.
* ``3``: a plain ``def`` view with ``@with_lock`` and ``time.sleep``, which
  Django's ASGI handler runs through ``sync_to_async(thread_sensitive=True)``:
  that is what users get. (Django wraps each request in asgiref's
  ``ThreadSensitiveContext``, so this is one new thread per request, not one
  thread for the whole server.)

Load shapes, 100 concurrent clients (``--clients``) each sending its next
request as soon as the previous answer arrives (closed loop, HTTP/1.1
keep-alive): (a) every client on a lock name of its own (uncontended: the
overhead and the concurrency of each way to lock), (b) all clients over 4
lock names, round robin (contended: ~25 requests queue for each name).

Load generator: ``wrk -c100 -t2 -d<seconds>s --latency`` with the Lua script
``bench/_asgi_wrk.lua`` (which name each request asks for, status counts, a
JSON summary). Chosen over an async Python client because the machine has 2
cores shared by everything here: wrk, in C, costs a few µs of CPU per request,
while an aiohttp/httpx client costs about as much per request as the server
does and would take half the CPU the server is measured with. wrk is closed
loop (coordinated omission: a stalled server is sent less, so its latency
percentiles look better than an open-loop client would see them) and its
default 2 s timeout applies: answers slower than 2 s are left out of the
latency percentiles and counted as timeouts. A request still unanswered
when the run ends is counted nowhere (checked: this wrk counts no timeout
for a server that never answers), so a server that answers nothing shows
0 requests/s and no errors; the notes below the tables say so.

uvicorn logs every request to stdout by default (its access log). Both are
measured: the first table with uvicorn's defaults (access log on, written
to a file, as a process manager would capture it), the second with
``--no-access-log`` (what it costs: one ``logging`` record per request on
the event loop). Both servers run the whole time (idle when not measured).

Before the rounds each server gets a few requests to every view and a 1 s
wrk run of each row (load (a)), not recorded. In ``--rounds`` interleaved rounds (default 3; each
round measures every row
under every load and logging once, in alternating order) of ``--seconds``
each (default 3), the round with the median requests/s is shown. Columns:

* requests/s: 2xx answers per second of the wrk run (wrk's ``Requests/sec``
  counts every answer; non-2xx are listed separately), and in brackets the
  ratio to row 2 taken within each round (median over the rounds; ``—``
  when row 2 answered nothing, which can happen under load (b): its blocking
  acquires can take every thread of the default executor while the releases
  that would end them, and Django's logging of a 409, wait in the same
  executor's queue).
* p50 / p99 ms: wrk's latency percentiles, request sent to answer received.
* non-2xx / errors: over all rounds: 409, 500, 503 or other answers; socket
  errors and wrk timeouts. The kinds are listed below the tables.
* cmds/req: Redis commands per answered request, from INFO commandstats
  around the wrk run (INFO excluded). Redis counts the commands run inside a
  Lua script as well, so this is server work, not round trips.
* held after: over all rounds, locks of the run's names still held (in
  REDCOORD's live-lock index) once the server is idle after the run. wrk
  closes its connections with requests in flight; Django cancels those views,
  and anything held afterwards is a lock leaked until its TTL (30 s). After
  each run the script waits up to 2 s for the server to go idle (no Redis
  client blocked, no uvicorn CPU); a server still busy then is restarted
  (noted below the tables; a few requests to each view warm the new one up)
  and its leftovers are not counted.
* CPU %: uvicorn, redis-server and wrk over the run (100 % = one core; the
  machine has ``os.cpu_count()`` cores for all of them), and "other": every
  other process on the machine (busy time in /proc/stat minus the three and
  this script). Other work on a small machine moves the numbers a lot; a
  run with "other" above 10 % is listed below the tables.

Left out: a database, middleware (Django's ``MiddlewareMixin`` classes add a
thread hop per request to async views), more than one worker process,
HTTPS, a network (everything is on 127.0.0.1), ``uvicorn[standard]`` (uvloop
and httptools are used when installed; the header says which loop and HTTP
parser ran). Every lock name is new to each run.

Run from the repository root (needs ``wrk`` on PATH and uvicorn in the venv)::

    .venv/bin/python bench/bench_async_views.py [--quick] [--seconds N] [--rounds R] [--clients N]

``--quick`` is a ~30 s smoke run (one round of 1 s runs, no 1 s warm-up
runs): its numbers are noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import redis
from support.cli import Options
from support.processes import run_main, spawn, terminate
from support.servers import HOST, RedisServer, command_calls, free_port
from support.tables import versions

ROOT = Path(__file__).resolve().parent.parent

LUA = ROOT / "bench" / "_asgi_wrk.lua"
APP = "bench._asgi_site:application"
PREFIX = "redcoord"  # REDCOORD's default KEY_PREFIX
# buckets of REDCOORD's live-lock index (LOCK_INDEX_BUCKETS in django_redcoord's keys module)
INDEX_BUCKETS = 256
SHARED_NAMES = 4
# what went wrong, as counted by the wrk script: four answers other than 2xx, then wrk's errors
KINDS = {
    "409": "s409",
    "500": "s500",
    "503": "s503",
    "other status": "sother",
    "connect": "connect",
    "read": "read",
    "write": "write",
    "timeout": "timeout",
}
SETTLE_LIMIT = 2.0  # seconds a server may take to go idle after a run before it is restarted

ROWS = {
    "ref": ("ref: `async def`, no lock", "/plain/"),
    "native": ("1. `async def` + `@with_lock` (event loop)", "/native/"),
    "thread": (
        "2. `async def` + sync `Lock` in `sync_to_async(thread_sensitive=False)`",
        "/thread/",
    ),
    "sync": (
        "3. `def` view + `@with_lock` (Django's `sync_to_async`, thread per request)",
        "/sync/",
    ),
}
SHORT = {"ref": "ref", "native": "1", "thread": "2", "sync": "3"}
SHAPES = {"own": "(a) own name", "shared": f"(b) {SHARED_NAMES} names"}
LOGS = {"on": "uvicorn defaults: access log on", "off": "`--no-access-log`"}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _machine_busy() -> float:
    """CPU seconds all processes of the machine were busy (user, nice, system, irq, softirq,
    steal)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class Uvicorn:
    """``python -m uvicorn bench._asgi_site:application`` on a free port, output to a log file."""

    def __init__(self, redis_url: str, access_log: bool, log_path: Path) -> None:
        self.redis_url = redis_url
        self.access_log = access_log
        self.log_path = log_path
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> Uvicorn:
        self.port = free_port()
        args = [sys.executable, "-m", "uvicorn", APP, "--host", HOST, "--port", str(self.port)]
        if not self.access_log:
            args.append("--no-access-log")
        env = {**os.environ, "BENCH_REDCOORD_URL": self.redis_url}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        with open(self.log_path, "ab") as log:
            self.proc = spawn(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited ({self.proc.returncode}); see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base}/plain/ready", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"uvicorn did not answer within 30 s; see {self.log_path}")

    def cpu(self) -> float:
        return _cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            terminate(proc)  # SIGKILL after 5 s: threads stuck in a blocking acquire

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()
        self.touch()

    def touch(self, requests: int = 3) -> None:
        """A few requests to every view: the first ones import code and open Redis connections."""
        for row, (_, path) in ROWS.items():
            for i in range(requests):
                url = f"{self.base}{path}warm-{row}-{self.restarts}-{i}"
                try:
                    with urllib.request.urlopen(url, timeout=15) as response:
                        response.read()
                except OSError as exc:
                    raise RuntimeError(
                        f"warm-up request {url} failed ({exc}); see {self.log_path}"
                    ) from exc


def _commands(client: redis.Redis) -> int:
    return sum(command_calls(client).values())


def _held(client: redis.Redis, tag: str) -> int:
    """Locks named ``item:<tag>-*`` in the live-lock index whose record is a live hold (no
    tombstone)."""
    names = set()
    for bucket in range(INDEX_BUCKETS):
        for name, _ in client.hscan_iter(f"{PREFIX}:index:locks:{bucket}", match=f"item:{tag}-*"):
            names.add(name.decode())
    held = 0
    for name in names:
        record = client.get(f"{PREFIX}:lock:{{{name}}}")
        # a MessagePack array; a released lock's tombstone starts with false (0xc2)
        if record and len(record) > 1 and record[1] != 0xC2:
            held += 1
    return held


def _settle(server: Uvicorn, client: redis.Redis) -> bool:
    """Wait until the server is idle (no blocked Redis client, no CPU); False after SETTLE_LIMIT."""
    deadline = time.monotonic() + SETTLE_LIMIT
    time.sleep(0.2)
    last = server.cpu()
    while True:
        time.sleep(0.1)
        now = server.cpu()
        blocked = sum(1 for c in client.client_list() if "b" in c.get("flags", ""))
        if not blocked and now - last <= 0.011:
            return True
        if time.monotonic() > deadline:
            return False
        last = now


def wrk(server: Uvicorn, path: str, tag: str, shape: str, seconds: int, clients: int) -> dict:
    names = clients // 2 + 1 if shape == "own" else SHARED_NAMES
    args = ["wrk", f"-c{clients}", "-t2", f"-d{seconds}s", "--latency", "-s", str(LUA), server.base]
    args += ["--", path, tag, shape, str(names)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 60)
    for line in out.stdout.splitlines():
        if line.startswith("BENCHJSON "):
            return json.loads(line[len("BENCHJSON ") :])
    raise RuntimeError(
        f"wrk gave no summary (exit {out.returncode}): {out.stdout[-800:]}{out.stderr[-800:]}"
    )


def measure(
    server: Uvicorn,
    client: redis.Redis,
    redis_pid: int,
    row: str,
    shape: str,
    tag: str,
    seconds: int,
    clients: int,
) -> dict:
    cmds, cpu_srv = _commands(client), server.cpu()
    cpu_redis, cpu_wrk = _cpu_seconds(redis_pid), _children_cpu()
    busy, own = _machine_busy(), time.process_time()
    started = time.monotonic()
    result = wrk(server, ROWS[row][1], tag, shape, seconds, clients)
    elapsed = time.monotonic() - started
    cmds = _commands(client) - cmds
    cpu = [
        (server.cpu() - cpu_srv) / elapsed,
        (_cpu_seconds(redis_pid) - cpu_redis) / elapsed,
        (_children_cpu() - cpu_wrk) / elapsed,
    ]
    others = _machine_busy() - busy - (time.process_time() - own)
    cpu.append(max(0.0, others / elapsed - sum(cpu)))
    duration = result["duration_us"] / 1e6
    row_result = {
        "rps": result["ok"] / duration,
        "p50": result["p50_us"] / 1000,
        "p99": result["p99_us"] / 1000,
        "kinds": Counter({kind: result[key] for kind, key in KINDS.items()}),
        "non2xx": sum(result[key] for key in list(KINDS.values())[:4]),
        "errors": sum(result[key] for key in list(KINDS.values())[4:]),
        "cmds/req": cmds / result["ok"] if result["ok"] else None,
        "cpu": cpu,
        "spilled": result["spilled"],
        "restarted": False,
    }
    if _settle(server, client):
        row_result["held"] = _held(client, tag)
    else:
        row_result["held"] = 0
        row_result["restarted"] = True
        server.restart()
    return row_result


def cells() -> list[tuple[str, str, str]]:
    return [
        (log, shape, row)
        for log in LOGS
        for shape in SHAPES
        for row in ROWS
        if not (row == "ref" and shape != "own")
    ]


def header(server: RedisServer, clients: int, seconds: int, rounds: int) -> str:
    libraries = versions(("uvicorn", "Django", "asgiref", "redis", "hiredis"))
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    wrk_version = (
        subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split(" [")[0].strip()
    )
    return (
        f"# Async views under load: uvicorn (1 worker, loop {loop}, http {http}) + Django, "
        f"{clients} clients (wrk -c{clients} -t2), hold 1 ms; median of {rounds} rounds of "
        f"{seconds} s\n\nredis-server {server.version()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores; {libraries}; {wrk_version}"
    )


def print_tables(results: dict, rounds: int) -> None:
    for log, title in LOGS.items():
        print(f"\n### {title}\n")
        print(
            "| load | view | requests/s (× row 2) | p50 / p99 ms | non-2xx / errors | cmds/req | "
            "held after | CPU % uvicorn / redis / wrk / other |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for shape, shape_title in SHAPES.items():
            for row, (label, _) in ROWS.items():
                runs = results.get((log, shape, row))
                if not runs:
                    continue
                mid = sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]
                base = results[(log, shape, "thread")]
                ratios = [
                    r["rps"] / b["rps"] if b["rps"] else float("inf")
                    for r, b in zip(runs, base, strict=True)
                ]
                ratio = statistics.median(ratios)
                ratio_text = "—" if ratio == float("inf") else f"{ratio:.2f}×"
                latency = f"{mid['p50']:,.1f} / {mid['p99']:,.1f}" if mid["rps"] else "—"
                cmds = "—" if mid["cmds/req"] is None else f"{mid['cmds/req']:.1f}"
                cpu = " / ".join(f"{c * 100:.0f}" for c in mid["cpu"])
                held = sum(r["held"] for r in runs)
                restarted = sum(r["restarted"] for r in runs)
                held_text = f"{held}" + (f" ({restarted} restarts)" if restarted else "")
                print(
                    f"| {shape_title} | {label} | {mid['rps']:,.0f} ({ratio_text}) | {latency} | "
                    f"{sum(r['non2xx'] for r in runs)} / {sum(r['errors'] for r in runs)} | "
                    f"{cmds} | {held_text} | {cpu} |"
                )


def print_notes(results: dict, servers: dict[str, Uvicorn]) -> None:
    print("\nNotes:")
    quiet = True
    every = [run for runs in results.values() for run in runs]
    busy = [run["cpu"][3] for run in every if run["cpu"][3] > 0.10]
    if busy:
        quiet = False
        print(
            f"- other processes used more than 10 % CPU during {len(busy)} of {len(every)} runs "
            f"(up to {max(busy) * 100:.0f} %): those runs are slower than the machine can do"
        )
    for (log, shape, row), runs in results.items():
        kinds = sum((r["kinds"] for r in runs), Counter())
        kinds = {k: v for k, v in kinds.items() if v}
        spilled = sum(r["spilled"] for r in runs)
        restarted = sum(r["restarted"] for r in runs)
        silent = sum(1 for r in runs if not r["rps"])
        if kinds or spilled or restarted or silent:
            quiet = False
            what = ", ".join(f"{k} ×{v}" for k, v in kinds.items())
            if silent:
                what += (
                    f"{', ' if what else ''}no 2xx answer at all in {silent} of {len(runs)} runs"
                )
                if row == "thread":
                    what += " (ratios to row 2 shown as —)"
            if spilled:
                what += f"{', ' if what else ''}{spilled} own-name requests took a fresh name"
            if restarted:
                what += (
                    f"{', ' if what else ''}server still busy {SETTLE_LIMIT:g} s after the run: "
                    f"restarted {restarted}×"
                )
            print(f"- access log {log}, {SHAPES[shape]}, row {SHORT[row]}: {what}")
    for log, server in servers.items():
        lines = server.log_path.read_text(errors="replace").splitlines()
        access = sum(1 for line in lines if line.startswith("INFO:") and '"GET ' in line)
        other = [line for line in lines if not line.startswith("INFO:") and line.strip()]
        if log == "on":
            print(f"- access log on: {access:,} access-log lines written to {server.log_path.name}")
        if other:
            quiet = False
            shapes = Counter(
                re.sub(r"item:[\w-]+|/\w+/[\w-]+|\d+", "#", line)[:220] for line in other
            )
            print(
                f"- server output with access log {log} ({len(other)} lines other than INFO), most "
                "frequent:"
            )
            for text, count in shapes.most_common(8):
                print(f"    {count:>6} × {text}")
    if quiet:
        print(
            "- no non-2xx answer, socket error, timeout, restart, server warning or busy machine "
            "in any run"
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cli = Options(__doc__, quick="~30 s smoke run (1 round of 1 s runs, no warm-up runs)")
    cli.number("--seconds", 3, 1, "wrk run per cell and round", least=1, unit="wrk's -d")
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    cli.number("--clients", 100, None, "concurrent connections", least=2, unit="two wrk threads")
    args = cli.parse(argv)
    if shutil.which("wrk") is None:
        cli.error("wrk is not on PATH (Debian/Ubuntu: apt-get install wrk)")
    if importlib.util.find_spec("uvicorn") is None:
        cli.error("uvicorn is not installed: .venv/bin/pip install uvicorn")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    results: dict[tuple[str, str, str], list[dict]] = {}
    logdir = Path(tempfile.mkdtemp(prefix="bench-uvicorn-"))
    servers: dict[str, Uvicorn] = {}
    completed = False
    try:
        with RedisServer() as redis_server:
            print(header(redis_server, args.clients, args.seconds, args.rounds))
            client = redis.Redis.from_url(redis_server.url)
            for log in LOGS:
                servers[log] = Uvicorn(
                    redis_server.url, log == "on", logdir / f"uvicorn-access-log-{log}.log"
                ).start()
            # first requests: imports, Redis connections, executor threads
            for log, server in servers.items():
                server.touch()
                if not args.quick:
                    for row in ROWS:
                        wrk(server, ROWS[row][1], f"warm{log}{row}", "own", 1, args.clients)
                _settle(server, client)
            order = cells()
            for r in range(args.rounds):
                for log, shape, row in order if r % 2 == 0 else list(reversed(order)):
                    tag = f"r{r}{log}{shape}{row}"
                    result = measure(
                        servers[log],
                        client,
                        redis_server.proc.pid,
                        row,
                        shape,
                        tag,
                        args.seconds,
                        args.clients,
                    )
                    results.setdefault((log, shape, row), []).append(result)
                    print(
                        f"round {r + 1} access log {log} {shape} {row}: {result['rps']:.0f} req/s, "
                        f"{result['non2xx']} non-2xx, {result['errors']} errors, held after "
                        f"{result['held']}, other CPU {result['cpu'][3] * 100:.0f} %"
                        + (" (server restarted)" if result["restarted"] else ""),
                        file=sys.stderr,
                    )
            for server in servers.values():
                server.stop()
            client.close()
        completed = True
    finally:
        for server in servers.values():
            server.stop()
        if not completed:
            print(f"uvicorn's output is kept in {logdir}", file=sys.stderr)
    print_tables(results, args.rounds)
    print_notes(results, servers)
    shutil.rmtree(logdir, ignore_errors=True)
    print(f"\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    run_main(main)
