"""``manage.py redcoord``: operate django_redcoord.

Subcommands:
  status [--json]              live locks, lock waits, semaphores, read-write locks, queues,
  workers, leader and jobs
  embedded start|stop|status   the embedded development Redis of this project
  ping                         check that the configured Redis answers; name its product and version
                               (Redis, Valkey), topology (one server, Sentinel, Cluster) and fast
                               paths
  health [--worker [ID]] [--leader [ELECTION]] [--queue NAME --max-age SECONDS] [--this-host]
         [--job NAME [--max-late SECONDS]] [--jobs]
                               probe checks: exit 0 when healthy, 1 when not (one OK/FAIL line
                               per check)
  schedule JOB [--every SECONDS | --cron EXPR] [--param NAME=VALUE ...] [--revert] [--election NAME]
                               show, edit or revert a periodic job's schedule and arguments (the
                               leader applies it)
  queue pause|resume|show NAME [--reason TEXT]
                               pause a queue (its workers claim nothing new from it; pushes go
                               on), resume it, or show it
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import conf
from ...core import RedcoordError, embedded, mask_url
from ...logs import log_to_console
from ...panels import pause_text, when
from .. import usage_error


def _common_options(parser: CommandParser) -> None:
    """Django's options every command takes, also after the subcommand
    (``redcoord status --settings=... -v 2``); given there, they win."""
    keep = argparse.SUPPRESS  # not given after the subcommand: the value before it stands
    parser.add_argument(
        "-v",
        "--verbosity",
        type=int,
        choices=[0, 1, 2, 3],
        default=keep,
        help="as before the subcommand",
    )
    parser.add_argument("--settings", default=keep, help="as before the subcommand")
    parser.add_argument("--pythonpath", default=keep, help="as before the subcommand")
    for flag in ("--traceback", "--no-color", "--force-color", "--skip-checks"):
        parser.add_argument(
            flag, action="store_true", default=keep, help="as before the subcommand"
        )


class Command(BaseCommand):
    help = "Operate django_redcoord: the embedded development Redis, connectivity."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)
        status = sub.add_parser(
            "status",
            help="live locks, semaphores, read-write locks, queues, workers, leader and jobs",
        )
        status.add_argument("--json", action="store_true", help="print the overview as JSON")
        status.add_argument("--contains", default="", help="only locks whose name contains this")
        status.add_argument(
            "--page", type=int, default=1, help="page of the lock list (50 per page)"
        )
        emb = sub.add_parser("embedded", help="start, stop or show the embedded development Redis")
        emb.add_argument("action", choices=["start", "stop", "status"])
        sub.add_parser("ping", help="check that the configured Redis answers")
        health = sub.add_parser(
            "health", help="checks for container probes: exit 0 when healthy, 1 when not"
        )
        health.add_argument(
            "--worker",
            action="append",
            nargs="?",
            const="",
            default=[],
            metavar="ID",
            help="this worker's heartbeat is fresh; without ID: a live worker on this host, "
            "or serving each --queue",
        )
        health.add_argument(
            "--leader",
            action="append",
            nargs="?",
            const="",
            default=[],
            metavar="ELECTION",
            help="the election (without ELECTION: 'default') has a leader whose lease has not "
            "expired",
        )
        health.add_argument(
            "--queue", action="append", default=[], metavar="NAME", help="a queue (repeatable)"
        )
        health.add_argument(
            "--max-age",
            metavar="SECONDS",
            help="each --queue's oldest waiting message is younger than this",
        )
        health.add_argument(
            "--this-host", action="store_true", help="--worker without ID: on this host only"
        )
        health.add_argument(
            "--job",
            action="append",
            default=[],
            metavar="NAME",
            help="this periodic job claimed its due slot in time and its last run did not fail "
            "(repeatable)",
        )
        health.add_argument(
            "--jobs",
            action="store_true",
            help="every registered periodic job, each against its own allowed lateness",
        )
        health.add_argument(
            "--max-late",
            metavar="SECONDS",
            help="each --job's due slot may go unclaimed this long (default: the job's max_late)",
        )
        health.add_argument(
            "--timeout",
            default="2.0",
            metavar="SECONDS",
            help="to connect to Redis and for each reply (default: %(default)s)",
        )
        schedule = sub.add_parser(
            "schedule", help="show, edit or revert the schedule and arguments of a periodic job"
        )
        schedule.add_argument("job", help="a job registered with @periodic")
        schedule.add_argument("--every", metavar="SECONDS", help="run every SECONDS from now on")
        schedule.add_argument(
            "--cron", metavar="EXPR", help="run on this crontab expression from now on"
        )
        schedule.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="call the job with this argument (one it declares; repeatable)",
        )
        schedule.add_argument(
            "--revert", action="store_true", help="back to the code's schedule and arguments"
        )
        schedule.add_argument(
            "--election", default="default", help="the election whose leader runs the job"
        )
        queue = sub.add_parser(
            "queue",
            help="pause or resume a queue (its workers claim nothing new while paused), or show it",
        )
        queue.add_argument("action", choices=["pause", "resume", "show"])
        queue.add_argument(
            "name", help="the queue's name (a Tasks queue of QUEUES, or a core Queue's)"
        )
        queue.add_argument(
            "--reason",
            default="",
            help="why, shown on the dashboard (pause; at most 500 characters)",
        )
        task = sub.add_parser(
            "task", help="cancel a Django Task (it never runs if still queued), or show its result"
        )
        task.add_argument("action", choices=["cancel", "show"])
        task.add_argument("id", help="the task's result id (TaskResult.id)")
        task.add_argument(
            "--backend", default="default", help="the alias in TASKS of its RedisTaskBackend"
        )
        outbox = sub.add_parser(
            "outbox", help="show or drain the task outbox (tasks committed while Redis was away)"
        )
        outbox.add_argument("action", choices=["show", "drain"])
        outbox.add_argument(
            "--backend", default="default", help="the alias in TASKS of its RedisTaskBackend"
        )
        for subparser in sub.choices.values():
            _common_options(subparser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            log_to_console(
                options["verbosity"]
            )  # what the embedded server, the probes... log, when LOGGING says nothing
            if options["subcommand"] == "embedded":
                self._embedded(options["action"])
            elif options["subcommand"] == "status":
                self._status(options)
            elif options["subcommand"] == "health":
                self._health(options)
            elif options["subcommand"] == "schedule":
                self._schedule(options)
            elif options["subcommand"] == "queue":
                self._queue(options["action"], options["name"], options["reason"])
            elif options["subcommand"] == "task":
                self._task(options["action"], options["id"], options["backend"])
            elif options["subcommand"] == "outbox":
                self._outbox(options["action"], options["backend"])
            else:
                self._ping()
        except RedcoordError as exc:
            raise CommandError(printable(exc)) from exc

    def _embedded(self, action: str) -> None:
        config = conf.get_config()
        directory = conf.embedded_dir(config)
        if action == "start" and config["URL"] != conf.EMBEDDED:
            raise CommandError(
                "this project does not use the embedded Redis (REDCOORD['URL'] is "
                f"{printable(repr(mask_url(config['URL']) if config['URL'] else None))}): it runs "
                f"only with REDCOORD = {{'URL': {conf.EMBEDDED!r}}}; nothing was started "
                "('embedded status' and 'embedded stop' still see one left running)"
            )
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
                self._write(
                    f"embedded Redis running at {embedded.socket_url(directory)} (pid {pid})"
                )
            else:
                self._write(f"no embedded Redis running in {directory}")

    def _outbox(self, action: str, alias: str) -> None:
        from ...tasks.backend import RedisTaskBackend, task_backends_for

        backend = task_backends_for(alias)
        if not isinstance(backend, RedisTaskBackend) or backend.outbox is None:
            raise CommandError(
                f"TASKS[{alias!r}] has no outbox: set OUTBOX in its OPTIONS "
                "and add django_redcoord.outbox to INSTALLED_APPS"
            )
        from ...outbox.drain import drain, pending

        if action == "drain":
            pushed, found = drain(backend, min_age=0)
            self._write(
                f"outbox of TASKS[{alias!r}]: {pushed} task(s) sent, {found} found sent already, "
                f"{pending(backend)} left"
            )
        else:
            self._write(f"outbox of TASKS[{alias!r}]: {pending(backend)} task(s) waiting")

    def _task(self, action: str, result_id: str, alias: str) -> None:
        from ...tasks.backend import RedisTaskBackend, task_backends_for
        from ...tasks.cancel import Cancel
        from ...tasks.compat import TaskResultDoesNotExist

        backend = task_backends_for(alias)
        if not isinstance(backend, RedisTaskBackend):
            raise CommandError(
                f"TASKS[{alias!r}] is a {type(backend).__name__}, not a RedisTaskBackend"
            )
        shown = printable(result_id)
        try:
            if action == "cancel":
                outcome = backend.cancel(result_id)
                self._write(
                    {
                        Cancel.REMOVED: f"task {shown} cancelled: taken out of its queue, it will "
                        "not run",
                        Cancel.REQUESTED: f"task {shown} cancelled: a worker holds it and was told "
                        f"to stop (within {backend.cancel_grace:g} s, "
                        "CANCEL_GRACE); its outcome will be dropped",
                        Cancel.FINISHED: f"task {shown} had finished already: nothing changed",
                    }[outcome]
                )
            else:
                result = backend.get_result(result_id)
                error = result.errors[-1].exception_class_path if result.errors else ""
                self._write(
                    f"task {shown}: {result.status}, {result.task.module_path} on queue "
                    f"{printable(result.task.queue_name)!r}, {result.attempts} attempt(s)"
                    + (f", last error {error}" if error else "")
                )
        except TaskResultDoesNotExist:
            raise CommandError(
                f"redcoord task {action}: no task result {shown} in TASKS[{alias!r}] "
                f"(results are kept RESULT_TTL = {backend.result_ttl} s)"
            ) from None
        except ValueError as exc:
            raise usage_error(f"redcoord task {action}: {exc}") from None

    def _queue(self, action: str, name: str, reason: str) -> None:
        from ...core import Queue

        try:
            queue = Queue(name)
            if action == "pause":
                if not queue.pause(reason):
                    self._write(f"queue {name!r} was already paused: {pause_text(queue.paused())}")
                    return
                self._write(
                    f"queue {name!r} paused: its workers claim nothing new from it until "
                    f"`manage.py redcoord queue resume {name}` (pushes go on; jobs in hand finish)"
                )
            elif action == "resume":
                self._write(
                    f"queue {name!r} resumed"
                    if queue.resume()
                    else f"queue {name!r} was not paused"
                )
            else:
                paused = queue.paused()
                held = queue.unique_keys(limit=20)
                self._write(
                    f"queue {name!r}: "
                    + (f"paused, {pause_text(paused)}" if paused else "not paused")
                    + (
                        f"; unique keys held: {len(held)}{'+' if len(held) == 20 else ''}"
                        if held
                        else ""
                    )
                )
                for key, holder in held.items():
                    self._write(f"  {printable(key)} held by task {printable(holder)}")
                groups = queue.groups(limit=20)
                if groups:
                    self._write(
                        f"groups with messages: {queue.depths().groups} (the busiest of the "
                        "first 20 read: in line / claimed / waiting behind)"
                    )
                for g in groups:
                    self._write(
                        f"  {printable(g['group'])}: {g['in_line']} / {g['running']} / "
                        f"{g['waiting']}"
                        + (f", next start in {g['rate_wait']:.3f} s" if g["rate_wait"] else "")
                    )
        except (TypeError, ValueError) as exc:
            raise usage_error(f"redcoord queue {action}: {exc}") from None

    def _ping(self) -> None:
        from ...core import describe, get_client, unavailable_as_ours

        client = get_client()
        with unavailable_as_ours(client, "ping"):
            client.ping()
            report = _server_report(client)
        self._write(f"Redis at {describe(client)} answered PING")
        for label, text in report:
            self._write(f"  {label + ':':<12}{text}")

    def _health(self, options: dict[str, Any]) -> None:
        from ...health import Probe, check

        try:
            # numbers parsed here, not by argparse: a bad one is a usage error (exit 2) saying what
            # is
            # allowed, also under call_command (whose argparse errors would exit 1, as "unhealthy"
            # does)
            max_age = _seconds_option(options["max_age"], "--max-age")
            max_late = _seconds_option(options["max_late"], "--max-late")
            timeout = _seconds_option(options["timeout"], "--timeout")
            probe = Probe.build(
                workers=options["worker"],
                leaders=options["leader"],
                queues=options["queue"],
                max_age=max_age,
                this_host=options["this_host"],
                jobs=options["job"],
                all_jobs=options["jobs"],
                max_late=max_late,
            )
            if timeout is None or not 0 < timeout <= 60:
                raise ValueError(f"--timeout must be between 0 and 60 seconds, not {timeout:g}")
        except (TypeError, ValueError) as exc:
            raise usage_error(str(exc)) from exc
        results = check(probe, timeout=timeout)
        for result in results:
            self._write(result.line(), self.style.SUCCESS if result.ok else self.style.ERROR)
        failed = [r.name for r in results if not r.ok]
        if failed:
            raise CommandError(
                f"unhealthy: {', '.join(failed)} failed ({len(failed)} of {len(results)} checks)"
            )

    def _status(self, options: dict[str, Any]) -> None:
        from ...core import get_client
        from ...dashboard import overview
        from ...panels import panels  # (those of the dashboard it imported)

        data = overview(
            get_client(),
            conf.get_config()["KEY_PREFIX"],
            contains=options["contains"],
            page=max(1, options["page"]),
        )
        if options["json"]:
            self.stdout.write(
                json.dumps(data, indent=2)
            )  # (JSON escapes control characters itself)
            return
        now = data["server_time_ms"]
        for panel in panels():  # each family's tables, from its part of the overview
            for title, header, rows in panel.tables(data[panel.key], now):
                self._table(title, header, rows)
        for what, count in sorted(data.get("unreadable", {}).items()):
            self._write(
                f"Skipped {count} unreadable record(s) of {what}: Redis holds there what redcoord "
                "did not write (see the log)",
                self.style.WARNING,
            )

    def _schedule(self, options: dict[str, Any]) -> None:
        """``redcoord schedule JOB``: show the versions; with --every/--cron/--param edit, with
        --revert revert."""
        import time

        from ...core import (
            CoordinationUnavailable,
            LeaderElection,
            edit_schedule,
            editable_params,
            parse_param,
            read_versions,
            revert_schedule,
        )
        from ...discovery import autodiscover

        def now_ms() -> int:
            return int(time.time() * 1000)  # only to say "2 s ago"

        jobs = autodiscover()
        job = jobs.get(options["job"])
        if job is None:  # a usage error (exit 2), as every bad argument here
            raise usage_error(
                f"no periodic job named {options['job']!r}; registered jobs: "
                f"{', '.join(sorted(jobs)) or 'none'}"
            )
        editing = options["every"] is not None or options["cron"] is not None or options["param"]
        try:
            every = _seconds_option(options["every"], "--every")
            if options["revert"] and editing:
                raise ValueError("--revert cannot be combined with --every, --cron or --param")
            election = LeaderElection(
                options["election"]
            )  # only its client and keys: it does not campaign
            declared, params = editable_params(job), {}
            for item in options["param"]:
                name, sep, text = item.partition("=")
                if not sep:
                    raise ValueError(f"--param takes NAME=VALUE, not {item!r}")
                if name not in declared:
                    raise ValueError(
                        f"job {job.name!r} has no argument {name!r} an edit may set; it has "
                        f"{', '.join(sorted(declared)) or 'none'}"
                    )
                if (
                    name in params
                ):  # (the last one silently winning hides a typo in a long command line)
                    raise ValueError(f"--param {name} is given twice; give each argument once")
                params[name] = parse_param(job, declared[name], text)
        except (TypeError, ValueError) as exc:
            raise usage_error(str(exc)) from exc
        writing = False  # the edit's own script was sent (before: only reads, nothing stored)
        try:
            if options["revert"]:
                writing = True
                stored = revert_schedule(election, job)
            elif editing:
                # An edit here changes what it names and keeps the rest of the version in force
                # (edit_schedule replaces a whole version: --param alone put the job back on the
                # code's schedule, and --every dropped the arguments set before).
                versions = read_versions(election, job.name)
                current = versions.current
                cron = options["cron"]
                if every is None and cron is None and not current.revert:
                    every = None if current.every_ms is None else current.every_ms / 1000
                    cron = current.cron
                kept = {
                    name: value
                    for name, value in ({} if current.revert else current.params).items()
                    if name in declared  # (an argument the code no longer declares goes)
                }
                writing = True
                stored = edit_schedule(
                    election,
                    job,
                    every=every,
                    cron=cron,
                    params={**kept, **params},
                    expected_version=versions.head,
                )
        except (TypeError, ValueError) as exc:
            raise usage_error(str(exc)) from exc
        except CoordinationUnavailable as exc:
            if not (exc.sent and writing):
                raise
            raise CommandError(
                f"{printable(exc)}; unknown whether Redis stored the edit: `manage.py redcoord "
                f"schedule {job.name}` lists the versions kept"
            ) from exc
        if options["revert"]:
            self._write(
                f"job {job.name}: version {stored.version}: back to the code's schedule "
                f"({job.schedule}), in force from {when(stored.since_ms, now_ms())}"
            )
        elif editing:
            label = read_versions(election, job.name).current.label(job)
            self._write(
                f"job {job.name}: version {stored.version}: {label}, "
                f"in force from {when(stored.since_ms, now_ms())}"
            )
        versions = read_versions(election, job.name)
        declared = ", ".join(f"{p.name}={p.default!r}" for p in editable_params(job).values())
        self._table(
            f"Schedule of {job.name!r} (the code's: {job.schedule}; arguments it declares: "
            f"{declared or 'none'})",
            ["version", "schedule and arguments", "in force from", "by"],
            [
                [
                    v.version,
                    "the code's" if v.version == 0 or v.revert else (v.label(job) or job.schedule),
                    when(v.since_ms, now_ms()) if v.since_ms else "-",
                    v.by or "-",
                ]
                for v in reversed(versions.kept)
            ],
        )

    def _table(self, title: str, header: list[str], rows: list[list[Any]]) -> None:
        cells = [[printable(c) for c in header]] + [[printable(c) for c in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
        self._write(title, self.style.MIGRATE_HEADING)
        for i, row in enumerate(cells):
            self._write(
                "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            )
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
_UNPRINTABLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def _server_report(client: Any) -> list[tuple[str, str]]:
    """What ``redcoord ping`` tells about the server: its product and version (INFO server), the
    topology (one server, a Sentinel service, a Cluster's nodes) and the fast paths in use."""
    import redis
    from redis.utils import HIREDIS_AVAILABLE

    from ...core import is_cluster, key_builder, native

    cluster = is_cluster(client)
    target = {"target_nodes": client.get_default_node()} if cluster else {}
    info = client.info("server", **target)
    # Valkey answers redis_version 7.2.4 (what it is compatible with) beside its own version
    if info.get("valkey_version") or info.get("server_name") == "valkey":
        product = (
            f"Valkey {info.get('valkey_version', '?')} (redis_version "
            f"{info.get('redis_version', '?')})"
        )
    elif info.get("dragonfly_version"):
        product = f"Dragonfly {info['dragonfly_version']}"
    else:
        product = f"Redis {info.get('redis_version', '?')}"
    # Valkey 8: server_mode
    product += f", {info.get('server_mode') or info.get('redis_mode', 'standalone')} mode"
    pool = getattr(client, "connection_pool", None)
    if cluster:
        nodes = (
            client.cluster_nodes()
        )  # CLUSTER NODES of one node: the replicas too ("host:port" -> fields)
        nodes = {
            addr: n
            for addr, n in nodes.items()
            if "noaddr" not in n["flags"] and "fail" not in n["flags"]
        }
        primaries = sorted(addr for addr, n in nodes.items() if "master" in n["flags"])
        replicas = sorted(addr for addr, n in nodes.items() if "master" not in n["flags"])
        topology = (
            f"Cluster of {len(nodes)} nodes: {len(primaries)} primaries ({', '.join(primaries)}), "
            f"{len(replicas)} replicas ({', '.join(replicas) or 'none'})"
        )
        kwargs = client.nodes_manager.connection_kwargs
    elif getattr(pool, "service_name", None):
        host, port = pool.get_master_address()
        replication = client.info("replication")
        sentinels = [
            f"{s.connection_pool.connection_kwargs.get('host')}:{s.connection_pool.connection_kwargs.get('port')}"
            for s in pool.sentinel_manager.sentinels
        ]
        topology = (
            f"Sentinel service {pool.service_name!r}: master {host}:{port} with "
            f"{replication.get('connected_slaves', 0)} replica(s), sentinels {', '.join(sentinels)}"
        )
        kwargs = pool.connection_kwargs
    else:
        replication = client.info("replication")
        topology = (
            f"one server ({replication.get('role', '?')}, {replication.get('connected_slaves', 0)} "
            "replica(s))"
        )
        kwargs = getattr(pool, "connection_kwargs", {})
    try:
        cell = native.probe(
            client, key_builder(None, client).rate_limit_cell("redcoord-ping", "probe")
        )
    except redis.RedisError as exc:
        cell = f"unknown ({type(exc).__name__})"
    protocol = str(kwargs.get("protocol") or 2)
    fast = (
        "CL.THROTTLE "
        f"{'yes (rate limits decided by the server)' if cell is True else cell or 'no'}; hiredis "
        f"parser {'yes' if HIREDIS_AVAILABLE else 'no'}; RESP{3 if protocol == '3' else 2}"
    )
    return [("server", product), ("topology", topology), ("fast paths", fast)]


def printable(value: Any) -> str:
    """``str(value)`` safe to print on an operator's terminal: every control or invisible format
    character written as an escape (``\\x1b``, ``\\u202e``). Names, holders' thread names, hosts and
    worker ids come from Redis, which anyone with write access to it can fill."""
    text = str(value)
    return _UNPRINTABLE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _seconds_option(value: Any, flag: str) -> float | None:
    """A number of seconds given on the command line (None when not given); ValueError saying
    what is allowed."""
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        raise ValueError(
            f"{flag} must be a number of seconds (such as 30 or 2.5), not {value!r}"
        ) from None
