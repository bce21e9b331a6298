"""Dashboard listing at scale: our index against the SCAN every peer uses.

Builds, on a private redis-server: 10,000 live locks (taken with our Lock, so
the index is the one the scripts maintain), 100,000 unrelated keys, 100
queues with messages (and no worker: every one is trouble), 200 lock names
with an hour of waits (a wait entry every minute, written as the hand-off
script writes them: real waits would take the hour), dead letters in 10
queues and 20 rate-limit keys (10 at their limit). Then measures (median and
95th percentile of several runs, milliseconds; wall time, and this process's
CPU time: the machine may be shared, its load average is printed):

* listing the names of all live locks: our index (256 HGETALLs) vs
  ``SCAN MATCH <prefix>:lock:*`` with COUNT 1000 and with the default COUNT,
  which is how redis-py/python-redis-lock/pottery users list locks;
* one page of the lock list with holders (one pipelined round trip);
* the whole overview (locks page, lock waits, 100 queues, workers, leader,
  and the trouble list), and the trouble list alone (``find_trouble`` on what
  the overview read: the lock-age book warm, and cold: its first call in a
  process, which reads LOCK_READS_PER_REFRESH lock records);
* the admin page (with the trouble panel at its top), the live refresh
  (``fragments/``: every section, the trouble panel first), the trouble panel
  alone (``trouble/``) and the JSON, through Django's test client; the page
  warm (what an operator gets on each refresh: the process's books of lock
  ages, lock waits, queue histories and charts are filled), on a refresh that
  begins a round of the whole lock-age book (every 10 s: the group medians and
  a fifth of the names), on a refresh at the turn of a minute (every queue's
  history parsed and every chart drawn again, as if each queue had a new
  sample), and cold (every book emptied before each run: the first page a
  process serves).

Every queue has an hour of samples (61, as its workers' ``queues/sample.lua``
writes them), so each queue's two charts have a point a minute.

Targets (issue 6): listing ≤ 5 ms; page and JSON < 100 ms. Issue 30: the page
with its trouble panel < 50 ms (median, warm) at 10,000 live locks and 100 queues.

Run: ``.venv/bin/python bench/bench_dashboard.py [--quick] [--locks N] [--other N] [--queues N]``
(``--quick``: fewer runs of each measurement and no SCAN with the default COUNT, ~20 s).
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from support.cli import Options  # noqa: E402
from support.processes import run_main  # noqa: E402
from support.servers import RedisServer  # noqa: E402
from support.tables import header  # noqa: E402

#: Runs of each measurement (``--quick``: fewer).
RUNS = {"timed": 7, "spread": 30, "cold": 10}


def timed(fn, runs: int | None = None) -> float:
    """Median wall time of ``fn`` in milliseconds."""
    return spread(fn, runs or RUNS["timed"])[0]


def spread(fn, runs: int | None = None, *, before=None) -> tuple[float, float, float]:
    """(median wall ms, 95th percentile wall ms, median CPU ms of this process) of ``fn``.

    ``before`` runs untimed before each run (e.g. to empty a cache)."""
    runs = runs or RUNS["spread"]
    fn()  # warm up (script load, connections)
    walls, cpus = [], []
    for _ in range(runs):
        if before is not None:
            before()
        started, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    walls.sort()
    p95 = walls[min(len(walls) - 1, math.ceil(0.95 * len(walls)) - 1)]
    return statistics.median(walls), p95, statistics.median(cpus)


def build_state(
    url: str, locks: int, other: int, queues: int, prefix: str, waited: int = 200
) -> None:
    from django_redcoord.core.keys import KeyBuilder
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.queues import Queue
    from django_redcoord.core.transport.clients import client_from_url

    client = client_from_url(url)
    pipe = client.pipeline(transaction=False)
    for i in range(other):
        pipe.set(f"app:cache:{i}", "x" * 20)
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    held = []
    for i in range(locks):
        lock = Lock(f"invoice:{i}", ttl=600, wait=0, client=client, prefix=prefix)
        lock.acquire()
        held.append(lock)
    for i in range(min(10, queues)):  # dead letters, as a failing handler leaves them
        q = Queue(f"queue-{i:02d}", client=client, prefix=prefix, max_attempts=1)
        q.push_many(range(3))
        consumer = q.consumer("bench")
        for message in consumer.claim(3)[0]:
            consumer.nack(message, "bench: boom")
        assert q.depths().dead == 3
    for i in range(queues):
        Queue(f"queue-{i:02d}", client=client, prefix=prefix).push_many(range(i % 7 + 1))
    from django_redcoord.core.ratelimit import RateLimiter

    limiter = RateLimiter("5/m", name="api", client=client, prefix=prefix)
    for i in range(20):
        for _ in range(5 if i % 2 else 2):
            limiter.hit(f"ip:10.0.0.{i}")
    minute = int(client.time()[0]) // 60
    builder = KeyBuilder(prefix)
    for i in range(
        queues
    ):  # an hour of samples each, as the workers' sample.lua writes them (newest first)
        pipe.lpush(
            builder.queue_history(f"queue-{i:02d}"),
            *(
                f"{m} {(m * 7 + i) % 40} {(m - minute + 60) * (i % 5 + 1)}"
                for m in range(minute - 60, minute + 1)
            ),
        )
    for i in range(waited):
        k = builder.lock(f"report:{i}")
        pipe.lpush(
            k.waits,
            *(
                f"{m} {1 + m % 4} {(m % 9) * 40} {(m % 9) * 30}"
                for m in range(minute - 59, minute + 1)
            ),
        )
        pipe.hset(k.wait_index, f"report:{i}", minute)
    pipe.execute()


def calibration() -> float:
    """CPU ms of a plain Python loop (3,000,000 additions), the median of 3: how fast this
    machine is now."""
    times = []
    for _ in range(3):
        started, total = time.process_time(), 0
        for i in range(3_000_000):
            total += i
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def scan_names(client, match: str, count: int | None) -> int:
    n = 0
    for _ in client.scan_iter(match=match, count=count):
        n += 1
    return n


def main() -> int:
    cli = Options(__doc__, quick="fewer runs, no SCAN with the default COUNT (~20 s)")
    cli.number("--locks", 10_000, None, "live locks", least=1)
    cli.number("--other", 100_000, None, "other keys", least=0)
    cli.number("--queues", 100, None, "queues", least=0)
    args = cli.parse()
    if args.quick:
        RUNS.update(timed=3, spread=9, cold=4)
    prefix = "benchdash"
    with RedisServer() as server:
        print(header("Dashboard benchmark", server.version()))
        started = time.monotonic()
        build_state(server.url, args.locks, args.other, args.queues, prefix)
        print(
            f"state: {args.locks:,} live locks, {args.other:,} other keys, {args.queues} queues, "
            "200 lock names waited for, dead letters in 10 queues, 20 rate-limit keys (built in "
            f"{time.monotonic() - started:.1f} s)\n"
        )

        from django_redcoord.core.indexes import read_index
        from django_redcoord.core.keys import KeyBuilder
        from django_redcoord.core.transport.clients import client_from_url
        from django_redcoord.dashboard import list_locks

        client = client_from_url(server.url)
        keys = KeyBuilder(prefix)
        now_ms = lambda: int(time.time() * 1000)  # noqa: E731

        def ours() -> list[str]:
            """Every live lock name from the index (its 256 bucket hashes in one pipeline), as
            list_locks reads it."""
            now = now_ms()
            return [
                n
                for n, bound in read_index(client, keys, "locks").items()
                if int(bound) * 1000 >= now
            ]

        assert len(ours()) == args.locks
        # SCAN also meets the fence/queue keys of each lock: count lock hashes only
        match = f"{prefix}:lock:{{*}}"
        rows = [
            ("all live lock names: our index (256 HGETALLs, one pipeline)", timed(ours)),
            (
                "all live lock names: SCAN MATCH, COUNT 1000",
                timed(lambda: scan_names(client, match, 1000), runs=5),
            ),
            *(
                []
                if args.quick
                else [
                    (
                        "all live lock names: SCAN MATCH, default COUNT",
                        timed(lambda: scan_names(client, match, None), runs=3),
                    )
                ]
            ),
            (
                "one page of locks with holders (50)",
                timed(lambda: list_locks(client, keys, now_ms=now_ms())),
            ),
            (
                "locks filtered by name (contains '99')",
                timed(lambda: list_locks(client, keys, now_ms=now_ms(), contains="99")),
            ),
        ]
        print("| measurement | median ms |")
        print("|---|---|")
        for label, ms in rows:
            print(f"| {label} | {ms:.2f} |")
        index_ms, scan_ms = rows[0][1], rows[1][1]
        setup_django(server.url, prefix)
        trouble_rows = trouble_rows_of(client, prefix) + django_rows(server.url, prefix)
        print(
            f"\nload average during the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on "
            f"{os.cpu_count()} cores; this machine's pace: {calibration():.0f} ms of CPU for "
            "3,000,000 additions in a Python loop (the shared cores' speed varies: compare runs "
            "by it)\n"
        )
        print("| with the trouble list (issue 30) | median ms | p95 ms | CPU ms (this process) |")
        print("|---|---|---|---|")
        for label, (median, p95, cpu) in trouble_rows:
            print(f"| {label} | {median:.1f} | {p95:.1f} | {cpu:.1f} |")
        print(
            f"\nour index lists {args.locks:,} locks {scan_ms / index_ms:.0f}x faster than SCAN "
            "COUNT 1000"
        )
    return 0


def warm(fn, client) -> int:
    """Call ``fn`` until the lock-age book of ``client`` has read every live lock; how many calls
    it took."""
    from django_redcoord.trouble import LOCK_READS_PER_REFRESH

    for calls in range(1, 1000):
        fn()
        books = getattr(client, "_redcoord_lock_ages", {})
        if books and all(book.last_reads < LOCK_READS_PER_REFRESH for book in books.values()):
            return calls
    return calls


def trouble_rows_of(client, prefix: str) -> list[tuple[str, tuple[float, float, float]]]:
    from django_redcoord.core.keys import KeyBuilder
    from django_redcoord.dashboard import TROUBLE_ONLY, live_locks, overview
    from django_redcoord.trouble import find_trouble

    keys = KeyBuilder(prefix)
    calls = warm(lambda: overview(client, prefix), client)
    data = overview(client, prefix)
    counts = data["trouble"]["counts"]
    print(
        f"trouble found: {counts['error']} problem(s), {counts['warning']} warning(s); "
        f"the lock-age book read every live lock in {calls} overviews"
    )

    def judge():
        now = data["server_time_ms"]
        find_trouble(
            client, keys, data, now_ms=now, live_locks=live_locks(client, keys, now_ms=now)
        )

    def cold():
        client.__dict__.pop("_redcoord_lock_ages", None)

    rows = [
        (
            "whole overview, with the trouble list (lock-age book warm)",
            spread(lambda: overview(client, prefix)),
        ),
        (
            "overview(only=TROUBLE_ONLY): what the trouble panel reads and judges",
            spread(lambda: overview(client, prefix, only=TROUBLE_ONLY)),
        ),
        ("trouble list alone, on what the overview read (book warm)", spread(judge)),
        (
            "trouble list alone, book cold (its first call in a process)",
            spread(judge, RUNS["cold"], before=cold),
        ),
    ]
    warm(lambda: overview(client, prefix), client)
    return rows


def setup_django(url: str, prefix: str) -> None:
    """The demo project's settings on this server (the overview rows run as in the web process:
    the periodic jobs it judges are the project's)."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "testproject.settings"
    os.environ["REDCOORD_REDIS_URL"] = url
    os.environ["REDCOORD_KEY_PREFIX"] = prefix
    os.environ["DEMO_DB_PATH"] = ":memory:"
    import django

    django.setup()


def django_rows(url: str, prefix: str) -> list[tuple[str, tuple[float, float, float]]]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    # (no setup_test_environment(): it instruments every template render for the test client's
    # assertions, a copy of the context per include, which tripled the page's time here)
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", "b@example.com", "pw")
    browser = Client()
    browser.force_login(user)
    page = "/admin/django_redcoord/dashboard/"
    assert browser.get(page).status_code == 200
    from django_redcoord.core.transport.clients import get_client

    warm(lambda: browser.get(page + "fragments/"), get_client())
    assert b"rc-trouble-error" in browser.get(page).content
    assert b"rc-trouble-error" in browser.get(page + "trouble/").content
    client = get_client()

    def cold():
        """Empty every book the page keeps in the process (as in a process that has served no
        page)."""
        from django_redcoord import dashboard

        for attribute in ("_redcoord_lock_ages", "_redcoord_wait_books", "_redcoord_history_books"):
            client.__dict__.pop(attribute, None)
        dashboard._charts.clear()
        dashboard._x_memos.clear()

    def judging():
        """The next refresh begins a round of the whole lock-age book (every
        LOCK_JUDGE_EVERY_MS): the
        group medians, and the first part of the round (1/LOCK_JUDGE_SLICES of the names)."""
        for book in getattr(client, "_redcoord_lock_ages", {}).values():
            book._judged_ms, book._cycle_at = -(10**15), len(book._cycle)

    def minute():
        """A refresh at the turn of a minute, as if every queue had a new sample: every queue's
        history
        parsed and worked out again, every chart drawn again."""
        from django_redcoord import dashboard

        client.__dict__.pop("_redcoord_history_books", None)
        dashboard._charts.clear()

    rows = [
        (
            "admin dashboard page (HTML), trouble panel at its top (warm: each refresh)",
            spread(lambda: browser.get(page)),
        ),
        (
            "admin fragments endpoint (the live refresh: every section)",
            spread(lambda: browser.get(page + "fragments/")),
        ),
        (
            "admin dashboard page, a refresh that begins a round of the lock-age book (every 10 s)",
            spread(lambda: browser.get(page), before=judging),
        ),
        (
            "admin dashboard page, a refresh at the turn of a minute (every queue's hour and "
            "charts again)",
            spread(lambda: browser.get(page), before=minute),
        ),
        (
            "admin trouble/ endpoint (the trouble panel alone)",
            spread(lambda: browser.get(page + "trouble/")),
        ),
        (
            "admin JSON endpoint (data.json, for scripts)",
            spread(lambda: browser.get(page + "data.json")),
        ),
        (
            "admin dashboard page, cold (the first page a process serves)",
            spread(lambda: browser.get(page), RUNS["cold"], before=cold),
        ),
    ]
    warm(lambda: browser.get(page + "fragments/"), client)
    return rows


if __name__ == "__main__":
    run_main(main)
