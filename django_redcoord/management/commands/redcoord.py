"""``manage.py redcoord``: operate django_redcoord.

Subcommands:
  status [--json]              live locks, lock waits, semaphores, read-write locks, queues, workers, leader and jobs
  embedded start|stop|status   the embedded development Redis of this project
  ping                         check that the configured Redis answers
  health [--worker [ID]] [--leader [ELECTION]] [--queue NAME --max-age SECONDS] [--this-host]
                               probe checks: exit 0 when healthy, 1 when not (one OK/FAIL line per check)
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ... import conf
from ...core.exceptions import RedcoordError
from ...core.transport import embedded
from ...logs import log_to_console


def _common_options(parser: CommandParser) -> None:
    """Django's options every command takes, also after the subcommand
    (``redcoord status --settings=... -v 2``); given there, they win."""
    keep = argparse.SUPPRESS  # not given after the subcommand: the value before it stands
    parser.add_argument("-v", "--verbosity", type=int, choices=[0, 1, 2, 3], default=keep, help="as before the subcommand")
    parser.add_argument("--settings", default=keep, help="as before the subcommand")
    parser.add_argument("--pythonpath", default=keep, help="as before the subcommand")
    for flag in ("--traceback", "--no-color", "--force-color", "--skip-checks"):
        parser.add_argument(flag, action="store_true", default=keep, help="as before the subcommand")


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
        health = sub.add_parser("health", help="checks for container probes: exit 0 when healthy, 1 when not")
        health.add_argument("--worker", action="append", nargs="?", const="", default=[], metavar="ID",
                            help="this worker's heartbeat is fresh; without ID: a live worker on this host, "
                                 "or serving each --queue")  # fmt: skip
        health.add_argument("--leader", action="append", nargs="?", const="", default=[], metavar="ELECTION",
                            help="the election (without ELECTION: 'default') has a leader whose lease has not expired")
        health.add_argument("--queue", action="append", default=[], metavar="NAME", help="a queue (repeatable)")
        health.add_argument("--max-age", type=float, metavar="SECONDS",
                            help="each --queue's oldest waiting message is younger than this")
        health.add_argument("--this-host", action="store_true", help="--worker without ID: on this host only")
        health.add_argument("--timeout", type=float, default=2.0, metavar="SECONDS",
                            help="to connect to Redis and for each reply (default: %(default)s)")
        for subparser in sub.choices.values():
            _common_options(subparser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            log_to_console(options["verbosity"])  # what the embedded server, the probes... log, when LOGGING says nothing
            if options["subcommand"] == "embedded":
                self._embedded(options["action"])
            elif options["subcommand"] == "status":
                self._status(options)
            elif options["subcommand"] == "health":
                self._health(options)
            else:
                self._ping()
        except RedcoordError as exc:
            raise CommandError(printable(exc)) from exc

    def _embedded(self, action: str) -> None:
        directory = conf.embedded_dir(conf.get_config())
        if action == "start":
            url = embedded.ensure_running(directory)
            self._write(f"embedded Redis running at {url} (pid {embedded.running_pid(directory)})")
        elif action == "stop":
            if embedded.stop(directory):
                self._write(f"embedded Redis in {directory} stopped")
            else:
                self._write(f"no embedded Redis running in {directory}")
        else:
            pid = embedded.running_pid(directory)
            if pid:
                self._write(f"embedded Redis running at {embedded.socket_url(directory)} (pid {pid})")
            else:
                self._write(f"no embedded Redis running in {directory}")

    def _ping(self) -> None:
        from ...core.transport.clients import get_client
        from ...core.transport.errors import describe, unavailable_as_ours

        client = get_client()
        with unavailable_as_ours(client, "ping"):
            client.ping()
        self._write(f"Redis at {describe(client)} answered PING")

    def _health(self, options: dict[str, Any]) -> None:
        from ...health import Probe, check

        try:
            probe = Probe.build(workers=options["worker"], leaders=options["leader"], queues=options["queue"],
                                max_age=options["max_age"], this_host=options["this_host"])  # fmt: skip
            if not 0 < options["timeout"] <= 60:
                raise ValueError(f"--timeout must be between 0 and 60 seconds, not {options['timeout']!r}")
        except (TypeError, ValueError) as exc:
            raise CommandError(str(exc), returncode=2) from exc
        results = check(probe, timeout=options["timeout"])
        for result in results:
            self._write(result.line(), self.style.SUCCESS if result.ok else self.style.ERROR)
        failed = [r.name for r in results if not r.ok]
        if failed:
            raise CommandError(f"unhealthy: {', '.join(failed)} failed ({len(failed)} of {len(results)} checks)")

    def _status(self, options: dict[str, Any]) -> None:
        from ...core.transport.clients import get_client
        from ...dashboard import overview

        data = overview(
            get_client(), conf.get_config()["KEY_PREFIX"], contains=options["contains"], page=max(1, options["page"])
        )
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))  # (JSON escapes control characters itself)
            return
        locks = data["locks"]
        self._table(
            f"Live locks: {locks['total']} (page {locks['page']} of {locks['pages']})",
            ["name", "holder", "ttl left", "fencing token", "waiters"],
            [[x["name"], f"{x['host']} {x['pid']} {x['thread']}", _span(x["ttl_left"]), x["fence"], x["waiters"]]
             for x in locks["items"]],
        )
        waits = data["lock_waits"]
        self._table(
            f"Lock waits, last hour: {waits['total']} names (the longest in total)",
            ["name", "grants that waited", "mean wait", "max wait", "total wait"],
            [[x["name"], x["grants"], _span(x["mean_wait"]), _span(x["max_wait"]), _span(x["total_wait"])]
             for x in waits["items"]],
        )  # fmt: skip
        self._table(
            "Semaphores",
            ["semaphore", "held / limit", "waiting", "holder", "lease left", "fencing token"],
            [[sem["name"], f"{sem['used']} / {sem['limit']}", sem["queued"], f"{h['host']} {h['pid']} {h['thread']}",
              _span(h["ttl"]), h["fence"]] for sem in data["semaphores"] for h in sem["holders"]],
        )  # fmt: skip
        self._table(
            "Read-write locks",
            ["lock", "held for", "holder", "lease left", "fencing token", "writers / readers waiting"],
            [[rw["name"], "writing" if h["kind"] == "w" else "reading", f"{h['host']} {h['pid']} {h['thread']}",
              _span(h["ttl"]), h["fence"], f"{rw['writers_waiting']} / {rw['readers_waiting']}"]
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
            ["limiter", "policies", "key", "hits", "remaining now", "retry after"],
            [[x["name"], x["policies"], x["key"], x["hits"], _dash(x.get("remaining")), _span(x.get("retry_after"))]
             for x in data["rate_limits"]],
        )  # fmt: skip
        self._table(
            "Queues",
            ["queue", "ready", "delayed", "processing", "dead", "oldest ready"],
            [[q["name"], q["ready"], q["delayed"], q["processing"], q["dead"], _span(q["oldest_age"])] for q in data["queues"]],
        )
        self._table(
            "Workers",
            ["worker", "queues", "current", "last heartbeat", "ok/failed/dead", "state"],
            [[w["id"], ",".join(w["queues"]), ",".join(w["current"]) or "-", _ago(w["heartbeat_age"]),
              f"{w['ok']}/{w['failed']}/{w['dead_lettered']}", "DEAD" if w["dead"] else "alive"] for w in data["workers"]],
        )  # fmt: skip
        now = data["server_time_ms"]
        for election in data["leaders"]:
            lead = election["leader"]
            who = f"{lead['identity']} (term {lead['term']}, since {_when(lead['since_ms'], now)})" if lead else "none"
            self._table(
                f"Leader of {election['election']!r}: {who}",
                ["job", "schedule", "runs", "outcome", "last run", "took", "next due"],
                [[j["name"], j.get("schedule", "-"), j.get("runs", 0), j.get("outcome", "-"), _when(j.get("last_start"), now),
                  _span(j["duration"] / 1000 if isinstance(j.get("duration"), int) else None),
                  "paused" if j.get("paused") else _when(j.get("next_due"), now)]
                 for j in election["jobs"]],
            )  # fmt: skip
        for what, count in sorted(data.get("unreadable", {}).items()):
            self._write(f"Skipped {count} unreadable record(s) of {what}: Redis holds there what redcoord "
                        "did not write (see the log)", self.style.WARNING)  # fmt: skip

    def _table(self, title: str, header: list[str], rows: list[list[Any]]) -> None:
        cells = [[printable(c) for c in header]] + [[printable(c) for c in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
        self._write(title, self.style.MIGRATE_HEADING)
        for i, row in enumerate(cells):
            self._write("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if i == 0:
                self._write("  " + "  ".join("-" * w for w in widths))
        if not rows:
            self._write("  (none)")
        self._write("")

    def _write(self, text: str, style: Any = None) -> None:
        """Print a line with every control character escaped (see :func:`printable`)."""
        self.stdout.write(printable(text), style)


#: Characters never sent to a terminal as they are: C0 and C1 controls, DEL (an escape sequence
#: starts with ESC or CSI), and the invisible format characters (bidirectional overrides,
#: zero-width) that make a line read differently from what it holds.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")


def printable(value: Any) -> str:
    """``str(value)`` safe to print on an operator's terminal: every control or invisible format
    character written as an escape (``\\x1b``, ``\\u202e``). Names, holders' thread names, hosts and
    worker ids come from Redis, which anyone with write access to it can fill."""
    text = str(value)
    return _UNPRINTABLE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _span(seconds: Any) -> str:
    """A duration as people read it: 850 ms, 12.5 s, 3 min 20 s, 2 h 5 min, 3 d 4 h."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "-"
    seconds = abs(float(seconds))
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    for unit, size, sub, subsize in (("d", 86400, "h", 3600), ("h", 3600, "min", 60), ("min", 60, "s", 1)):
        if whole >= size:
            return f"{whole // size} {unit} {whole % size // subsize} {sub}"
    return f"{whole} s"  # unreachable


def _ago(seconds: Any) -> str:
    return "-" if not isinstance(seconds, (int, float)) else f"{_span(seconds)} ago"


def _when(ms: Any, now_ms: int) -> str:
    """A time (ms since the epoch) in TIME_ZONE with its date and zone, and how far from now."""
    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        return "-"
    local = timezone.localtime(datetime.fromtimestamp(ms / 1000, tz=dt_timezone.utc))
    delta = (ms - now_ms) / 1000
    return f"{local:%Y-%m-%d %H:%M:%S %Z} ({'in ' + _span(delta) if delta >= 0 else _span(delta) + ' ago'})"
