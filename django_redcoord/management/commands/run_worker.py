"""``manage.py run_worker [queue ...]``: run Django Tasks from the Redis queues.

Concurrency is threads in this process (``--concurrency``); run more
processes to use more cores. SIGTERM/SIGINT: finish the jobs in hand (up to
``--shutdown-timeout``), hand back prefetched unstarted messages at once,
and exit 0.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...contrib.metrics import add_metrics_arguments, serve_metrics_for
from ...core import RedcoordError
from ...logs import add_log_format_argument, log_to_console
from .. import seconds, usage_error

_DAY = 86400  # (the most WORKER_SHUTDOWN_TIMEOUT takes)


class Command(BaseCommand):
    help = "Run tasks from the Redis queues of a django_redcoord Tasks backend."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "queues", nargs="*", help="queue names (default: every queue of the backend)"
        )
        parser.add_argument(
            "--backend", default="default", help="TASKS alias (default: %(default)s)"
        )
        parser.add_argument(
            "--concurrency", type=int, default=1, help="worker threads (default: 1)"
        )
        parser.add_argument(
            "--prefetch",
            type=int,
            default=None,
            help="messages claimed per round trip (default: REDCOORD WORKER_PREFETCH)",
        )
        parser.add_argument(
            "--burst", action="store_true", help="exit once the queues have nothing ready"
        )
        parser.add_argument(
            "--shutdown-timeout",
            type=seconds,
            default=None,
            help="seconds to finish running jobs on SIGTERM",
        )
        add_log_format_argument(parser)
        add_metrics_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        from ...core import Worker
        from ...tasks import RedisTaskBackend, TaskRunner, task_backends_for

        backend = task_backends_for(options["backend"])
        if not isinstance(backend, RedisTaskBackend):
            raise CommandError(
                f"TASKS[{options['backend']!r}] uses "
                f"{type(backend).__module__}.{type(backend).__name__}; run_worker needs "
                "django_redcoord.tasks.RedisTaskBackend"
            )
        grace = options["shutdown_timeout"]
        if grace is not None and not 0 <= grace <= _DAY:
            raise usage_error(
                f"--shutdown-timeout must be from 0 to {_DAY} seconds (a day), as "
                f"WORKER_SHUTDOWN_TIMEOUT, not {grace:g}"
            )
        names = options["queues"] or sorted(backend.queues)
        unknown = sorted(set(names) - set(backend.queues))
        if unknown:
            raise usage_error(
                f"unknown queue(s) {', '.join(unknown)}; TASKS[{options['backend']!r}] has "
                f"{', '.join(sorted(backend.queues))}"
            )
        try:
            log_to_console(options["verbosity"], options["log_format"])
        except RedcoordError as exc:  # (settings read with --skip-checks)
            raise CommandError(str(exc)) from exc
        try:
            worker = Worker(
                [backend.queue(name) for name in names],
                handler=None,  # set below: the runner needs the worker's id
                concurrency=options["concurrency"],
                prefetch=options["prefetch"],
                burst=options["burst"],
                shutdown_timeout=options["shutdown_timeout"],
            )
        except ValueError as exc:  # (--concurrency 0, --prefetch -1, ...)
            raise usage_error(str(exc)) from exc
        try:
            worker.handler = worker.write_behind = TaskRunner(backend, worker.id)
            if (
                backend.outbox is not None
            ):  # tasks whose commit found Redis away (django_redcoord.outbox)
                from ...outbox.drain import drain_until

                threading.Thread(
                    target=drain_until,
                    args=(backend, lambda: worker.stopping),
                    name="redcoord-outbox",
                    daemon=True,
                ).start()
            try:
                metrics = serve_metrics_for(options)
            except ValueError as exc:  # a bad --metrics-port/--metrics-addr, as run_leader says
                raise usage_error(str(exc)) from exc
            previous = {
                s: signal.signal(s, lambda *_: worker.stop())
                for s in (signal.SIGTERM, signal.SIGINT)
            }
            try:
                stats = worker.run()
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)
                if metrics is not None:
                    metrics.shutdown()
        except (ValueError, RedcoordError) as exc:
            raise CommandError(str(exc)) from exc
        if options["verbosity"] >= 1 and not logging.getLogger(
            "django_redcoord.queues"
        ).isEnabledFor(logging.INFO):
            # the worker's own log line says it when its logger is on: not twice
            self.stdout.write(f"worker {worker.id}: stopped: {stats.summary()}")
