"""The metrics scrape at scale: what one scrape costs with 20,000 live locks.

Builds, on a private redis-server, N live locks (taken with our Lock, so the
index is the one the scripts maintain; 20,000 by default) and 20 queues, then
measures one scrape of :class:`~django_redcoord.metrics.RedcoordCollector`
rendered to Prometheus's text format (median of several, milliseconds) and
the Redis time it cost (the sum of ``INFO commandstats`` usec, reset before
each scrape):

* every lock read at each scrape (what every scrape did before issue 31:
  ``METRICS_LOCK_DETAIL`` at least the number of live locks);
* the default ``METRICS_LOCK_DETAIL`` (1,000 lock records per scrape; the
  count from the index, the waiters in turn);
* ``METRICS_LOCK_DETAIL = 0`` (no lock record read).

Run: ``.venv/bin/python bench/bench_metrics.py [--locks N] [--runs N] [--quick]``
"""

from __future__ import annotations

import statistics
import time

from support.cli import Options
from support.processes import run_main
from support.servers import RedisServer
from support.tables import header


def build_state(url: str, locks: int, queues: int, prefix: str) -> None:
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.queues import Queue
    from django_redcoord.core.transport.clients import client_from_url

    client = client_from_url(url)
    for i in range(locks):
        assert Lock(f"invoice:{i}", ttl=900, wait=0, client=client, prefix=prefix).acquire()
    for i in range(queues):
        Queue(f"queue-{i:02d}", client=client, prefix=prefix).push_many(range(i % 7 + 1))


def redis_ms(client) -> float:
    return sum(stats["usec"] for stats in client.info("commandstats").values()) / 1000


def scrape_cost(client, prefix: str, detail: int, runs: int) -> tuple[float, float, float]:
    """(median wall ms, median Redis ms, the waiters gauge's exactness) of one scrape rendered as
    text."""
    from prometheus_client import CollectorRegistry, generate_latest

    from django_redcoord.metrics import RedcoordCollector

    collector = RedcoordCollector(client, prefix=prefix, lock_detail=detail)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    generate_latest(registry)  # warm up: scripts loaded, connections made
    walls, redis_times = [], []
    for _ in range(runs):
        client.config_resetstat()
        started = time.perf_counter()
        text = generate_latest(registry)
        walls.append((time.perf_counter() - started) * 1000)
        redis_times.append(redis_ms(client))
    assert b"redcoord_up 1.0" in text
    return (
        statistics.median(walls),
        statistics.median(redis_times),
        collector.read()["locks"]["complete"],
    )


def main() -> int:
    cli = Options(__doc__, quick="smoke run: 1,500 locks, 3 runs")
    cli.number("--locks", 20_000, 1500, "live locks", least=1)
    cli.number("--queues", 20, None, "queues", least=0)
    cli.number("--runs", 7, 3, "scrapes per row", least=1)
    args = cli.parse()
    prefix = "benchmetrics"
    with RedisServer() as server:
        print(header("Metrics scrape benchmark", server.version()))
        started = time.monotonic()
        build_state(server.url, args.locks, args.queues, prefix)
        print(
            f"state: {args.locks:,} live locks, {args.queues} queues (built in "
            f"{time.monotonic() - started:.1f} s)\n"
        )

        from django_redcoord.core.transport.clients import client_from_url

        client = client_from_url(server.url)
        rows = [
            (
                f"every lock read at each scrape (before; METRICS_LOCK_DETAIL >= {args.locks:,})",
                args.locks,
            ),
            ("METRICS_LOCK_DETAIL = 1,000 (the default)", 1000),
            ("METRICS_LOCK_DETAIL = 0 (no lock record read)", 0),
        ]
        print("| one scrape | median ms | Redis ms | waiters exact each scrape |")
        print("|---|---|---|---|")
        for label, detail in rows:
            wall, busy, exact = scrape_cost(client, prefix, detail, args.runs)
            kind = "yes" if exact else ("no (in turn)" if detail else "no (not counted)")
            print(f"| {label} | {wall:.1f} | {busy:.1f} | {kind} |")
    return 0


if __name__ == "__main__":
    run_main(main)
