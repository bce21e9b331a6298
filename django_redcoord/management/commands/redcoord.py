"""``manage.py redcoord``: operate django_redcoord.

Subcommands:
  status [--json]              live locks, semaphores, read-write locks, queues, workers, leader and jobs
  embedded start|stop|status   the embedded development Redis of this project
  ping                         check that the configured Redis answers
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import conf
from ...core.exceptions import RedcoordError
from ...core.transport import embedded


class Command(BaseCommand):
    help = "Operate django_redcoord: the embedded development Redis, connectivity."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)
        status = sub.add_parser("status", help="live locks, semaphores, read-write locks, queues, workers, leader and jobs")
        status.add_argument("--json", action="store_true", help="print the overview as JSON")
        status.add_argument("--contains", default="", help="only locks whose name contains this")
        status.add_argument("--page", type=int, default=1, help="page of the lock list (50 per page)")
        emb = sub.add_parser("embedded", help="start, stop or show the embedded development Redis")
        emb.add_argument("action", choices=["start", "stop", "status"])
        sub.add_parser("ping", help="check that the configured Redis answers")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["subcommand"] == "embedded":
                self._embedded(options["action"])
            elif options["subcommand"] == "status":
                self._status(options)
            else:
                self._ping()
        except RedcoordError as exc:
            raise CommandError(str(exc)) from exc

    def _embedded(self, action: str) -> None:
        directory = conf.embedded_dir(conf.get_config())
        if action == "start":
            url = embedded.ensure_running(directory)
            self.stdout.write(f"embedded Redis running at {url} (pid {embedded.running_pid(directory)})")
        elif action == "stop":
            if embedded.stop(directory):
                self.stdout.write(f"embedded Redis in {directory} stopped")
            else:
                self.stdout.write(f"no embedded Redis running in {directory}")
        else:
            pid = embedded.running_pid(directory)
            if pid:
                self.stdout.write(f"embedded Redis running at {embedded.socket_url(directory)} (pid {pid})")
            else:
                self.stdout.write(f"no embedded Redis running in {directory}")

    def _ping(self) -> None:
        from ...core.transport.clients import get_client
        from ...core.transport.errors import describe, unavailable_as_ours

        client = get_client()
        with unavailable_as_ours(client, "ping"):
            client.ping()
        self.stdout.write(f"Redis at {describe(client)} answered PING")

    def _status(self, options: dict[str, Any]) -> None:
        from ...core.transport.clients import get_client
        from ...dashboard import overview

        data = overview(
            get_client(), conf.get_config()["KEY_PREFIX"], contains=options["contains"], page=max(1, options["page"])
        )
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        locks = data["locks"]
        self._table(
            f"Live locks: {locks['total']} (page {locks['page']} of {locks['pages']})",
            ["name", "holder", "ttl left (s)", "fencing token", "waiters"],
            [[x["name"], f"{x['host']} {x['pid']} {x['thread']}", x["ttl_left"], x["fence"], x["waiters"]] for x in locks["items"]],
        )
        self._table(
            "Semaphores",
            ["semaphore", "held / limit", "waiting", "holder", "lease left (s)", "fencing token"],
            [[sem["name"], f"{sem['used']} / {sem['limit']}", sem["queued"], f"{h['host']} {h['pid']} {h['thread']}",
              h["ttl"], h["fence"]] for sem in data["semaphores"] for h in sem["holders"]],
        )  # fmt: skip
        self._table(
            "Read-write locks",
            ["lock", "held for", "holder", "lease left (s)", "fencing token", "writers / readers waiting"],
            [[rw["name"], "writing" if h["kind"] == "w" else "reading", f"{h['host']} {h['pid']} {h['thread']}",
              h["ttl"], h["fence"], f"{rw['writers_waiting']} / {rw['readers_waiting']}"]
             for rw in data["rwlocks"] for h in rw["holders"]],
        )  # fmt: skip
        self._table(
            "Latches and barriers",
            ["kind", "name", "state", "broken", "waiting", "parties with a lease"],
            [[x["kind"], x["name"], x["state"], x["broken"] or "-", x["waiting"], x["parties"]] for x in data["latches"]],
        )
        self._table(
            "Events, signals and topics",
            ["kind", "name", "state", "waiting"],
            [[x["kind"], x["name"], x["state"] or "-", _dash(x["waiting"])] for x in data["signals"]],
        )
        self._table(
            "Rate limits: busiest keys (this minute and the last)",
            ["limiter", "policies", "key", "hits", "remaining now", "retry after (s)"],
            [[x["name"], x["policies"], x["key"], x["hits"], _dash(x.get("remaining")), _dash(x.get("retry_after"))]
             for x in data["rate_limits"]],
        )  # fmt: skip
        self._table(
            "Queues",
            ["queue", "ready", "delayed", "processing", "dead", "oldest ready (s)"],
            [[q["name"], q["ready"], q["delayed"], q["processing"], q["dead"], _dash(q["head_age"])] for q in data["queues"]],
        )
        self._table(
            "Workers",
            ["worker", "queues", "current", "heartbeat age (s)", "ok/failed/dead", "state"],
            [[w["id"], ",".join(w["queues"]), ",".join(w["current"]) or "-", _dash(w["heartbeat_age"]),
              f"{w['ok']}/{w['failed']}/{w['dead_lettered']}", "DEAD" if w["dead"] else "alive"] for w in data["workers"]],
        )  # fmt: skip
        for election in data["leaders"]:
            lead = election["leader"]
            who = f"{lead['identity']} (term {lead['term']})" if lead else "none"
            self._table(
                f"Leader of {election['election']!r}: {who}",
                ["job", "schedule", "runs", "outcome", "duration (ms)", "next due (ms)"],
                [[j["name"], j.get("schedule", "-"), j.get("runs", 0), j.get("outcome", "-"), j.get("duration", "-"),
                  j.get("next_due", "-")] for j in election["jobs"]],
            )  # fmt: skip

    def _table(self, title: str, header: list[str], rows: list[list[Any]]) -> None:
        cells = [header] + [[str(c) for c in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
        self.stdout.write(self.style.MIGRATE_HEADING(title))
        for i, row in enumerate(cells):
            self.stdout.write("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if i == 0:
                self.stdout.write("  " + "  ".join("-" * w for w in widths))
        if not rows:
            self.stdout.write("  (none)")
        self.stdout.write("")


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)
