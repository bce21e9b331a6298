"""Dashboard listing at scale: our index against the SCAN every peer uses.

Builds, on a private redis-server: 10,000 live locks (taken with our Lock, so
the index is the one the scripts maintain), 100,000 unrelated keys, 50
queues with messages, and 200 lock names with an hour of waits (a wait
entry every minute, written as the hand-off script writes them: real waits
would take the hour). Then measures (median of several runs, milliseconds):

* listing the names of all live locks: our index (256 HGETALLs) vs
  ``SCAN MATCH <prefix>:lock:*`` with COUNT 1000 and with the default COUNT,
  which is how redis-py/python-redis-lock/pottery users list locks;
* one page of the lock list with holders (one pipelined round trip);
* the whole overview (locks page, lock waits, 50 queues, workers, leader);
* the admin page and its JSON endpoint through Django's test client.

Targets (issue 6): listing ≤ 5 ms; page and JSON < 100 ms.

Run: ``.venv/bin/python bench/bench_dashboard.py [--locks N] [--other N] [--queues N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import RedisServer  # noqa: E402


def timed(fn, runs: int = 7) -> float:
    """Median wall time of ``fn`` in milliseconds."""
    fn()  # warm up (script load, connections)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def build_state(url: str, locks: int, other: int, queues: int, prefix: str, waited: int = 200) -> None:
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
    for i in range(queues):
        Queue(f"queue-{i:02d}", client=client, prefix=prefix).push_many(range(i % 7 + 1))
    minute = int(client.time()[0]) // 60
    builder = KeyBuilder(prefix)
    for i in range(waited):
        k = builder.lock(f"report:{i}")
        pipe.lpush(k.waits, *(f"{m} {1 + m % 4} {(m % 9) * 40} {(m % 9) * 30}" for m in range(minute - 59, minute + 1)))
        pipe.hset(k.wait_index, f"report:{i}", minute)
    pipe.execute()


def scan_names(client, match: str, count: int | None) -> int:
    n = 0
    for _ in client.scan_iter(match=match, count=count):
        n += 1
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locks", type=int, default=10_000)
    parser.add_argument("--other", type=int, default=100_000)
    parser.add_argument("--queues", type=int, default=50)
    args = parser.parse_args()
    prefix = "benchdash"
    with RedisServer() as server:
        print(f"# Dashboard benchmark: redis-server {server.version()}, Python {sys.version.split()[0]}, "
              f"{os.cpu_count()} cores")  # fmt: skip
        started = time.monotonic()
        build_state(server.url, args.locks, args.other, args.queues, prefix)
        print(f"state: {args.locks:,} live locks, {args.other:,} other keys, {args.queues} queues, 200 lock names waited for "
              f"(built in {time.monotonic() - started:.1f} s)\n")  # fmt: skip

        from django_redcoord.core.indexes import read_index
        from django_redcoord.core.keys import KeyBuilder
        from django_redcoord.core.transport.clients import client_from_url
        from django_redcoord.dashboard import list_locks, overview

        client = client_from_url(server.url)
        keys = KeyBuilder(prefix)
        now_ms = lambda: int(time.time() * 1000)  # noqa: E731

        def ours() -> list[str]:
            """Every live lock name from the index (its 256 bucket hashes in one pipeline), as list_locks reads it."""
            now = now_ms()
            return [n for n, bound in read_index(client, keys, "locks").items() if int(bound) * 1000 >= now]

        assert len(ours()) == args.locks
        # SCAN also meets the fence/queue keys of each lock: count lock hashes only
        match = f"{prefix}:lock:{{*}}"
        rows = [
            ("all live lock names: our index (256 HGETALLs, one pipeline)", timed(ours)),
            ("all live lock names: SCAN MATCH, COUNT 1000", timed(lambda: scan_names(client, match, 1000), runs=5)),
            ("all live lock names: SCAN MATCH, default COUNT", timed(lambda: scan_names(client, match, None), runs=3)),
            ("one page of locks with holders (50)", timed(lambda: list_locks(client, keys, now_ms=now_ms()))),
            ("locks filtered by name (contains '99')",
             timed(lambda: list_locks(client, keys, now_ms=now_ms(), contains="99"))),
            ("whole overview (locks page, lock waits, queues, workers, leader)", timed(lambda: overview(client, prefix))),
        ]  # fmt: skip
        rows.extend(django_rows(server.url, prefix))
        print("| measurement | median ms |")
        print("|---|---|")
        for label, ms in rows:
            print(f"| {label} | {ms:.2f} |")
        index_ms, scan_ms = rows[0][1], rows[1][1]
        print(f"\nour index lists {args.locks:,} locks {scan_ms / index_ms:.0f}x faster than SCAN COUNT 1000")
    return 0


def django_rows(url: str, prefix: str) -> list[tuple[str, float]]:
    os.environ["DJANGO_SETTINGS_MODULE"] = "testproject.settings"
    os.environ["REDCOORD_REDIS_URL"] = url
    os.environ["REDCOORD_KEY_PREFIX"] = prefix
    os.environ["DEMO_DB_PATH"] = ":memory:"
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", "b@example.com", "pw")
    browser = Client()
    browser.force_login(user)
    page = "/admin/django_redcoord/dashboard/"
    assert browser.get(page).status_code == 200
    return [
        ("admin dashboard page (HTML)", timed(lambda: browser.get(page))),
        ("admin fragments endpoint (the live refresh)", timed(lambda: browser.get(page + "fragments/"))),
        ("admin JSON endpoint (data.json, for scripts)", timed(lambda: browser.get(page + "data.json"))),
    ]


if __name__ == "__main__":
    sys.exit(main())
