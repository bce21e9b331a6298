"""What the commands print, and the logger names to configure.

``run_worker``, ``run_leader`` and ``redcoord`` log to the console (stderr)
at INFO when the project's ``LOGGING`` configures nothing for them — no
handler on ``django_redcoord`` or on the root logger — so a freshly deployed
process tells what it does without any setting. ``--verbosity 0`` keeps
warnings and errors only; ``--verbosity 3`` adds debug. A level the project
set on ``django_redcoord`` is kept. ``REDCOORD["LOG_FORMAT"] = "json"`` (or
``--log-format json``) writes one JSON object per line instead, for log
collectors.

Logger names are stable (configure these, not module paths):
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

#: logger name -> what it tells (documented in docs/operations.md, Logs)
LOGGERS = {
    "django_redcoord": "the parent of all below",
    "django_redcoord.locks": "locks, semaphores, read-write locks, latches: renewals, losses, "
    "releases that failed",
    "django_redcoord.leader": "elections: campaigns, terms won and lost, resignations (run_leader)",
    "django_redcoord.periodic": "periodic jobs: each slot run, skipped or failed",
    "django_redcoord.queues": "workers: start, stop, requeued and dead-lettered messages, "
    "heartbeats that failed",
    "django_redcoord.tasks": "the Tasks backend: task outcomes and errors",
    "django_redcoord.ratelimit": "rate limits: Redis unavailable (fail-open), slots not given back",
    "django_redcoord.metrics": "the metrics server of --metrics-port",
}

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: local time (Django sets the process's time zone to TIME_ZONE) with its UTC offset
DATE_FORMAT = "%Y-%m-%d %H:%M:%S%z"


class JsonLines(logging.Formatter):
    """One JSON object per record: time (ISO 8601 with offset), level, logger, message,
    exception."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created)
            .astimezone()
            .isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
            "thread": record.threadName,
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def formatter(fmt: str) -> logging.Formatter:
    """The console formatter for ``fmt`` ("text" or "json")."""
    if fmt == "json":
        return JsonLines()
    if fmt == "text":
        return logging.Formatter(TEXT_FORMAT, DATE_FORMAT)
    raise ValueError(f"log format must be 'text' or 'json', not {fmt!r}")


def log_to_console(verbosity: int = 1, fmt: str | None = None) -> bool:
    """Send ``django_redcoord``'s records to stderr unless the project configured logging for them.

    Returns whether a handler was added (at most one, however often called).
    """
    if fmt is None:
        from .conf import get_config

        fmt = get_config()["LOG_FORMAT"]
    logger = logging.getLogger("django_redcoord")
    ours = [h for h in logger.handlers if getattr(h, "redcoord_console", False)]
    if ours:
        ours[0].setFormatter(formatter(fmt))
    elif logger.handlers or logging.getLogger().handlers:
        return False  # the project's LOGGING decides
    else:
        handler = logging.StreamHandler()
        handler.redcoord_console = True  # type: ignore[attr-defined]
        handler.setFormatter(formatter(fmt))
        logger.addHandler(handler)
    if logger.level == logging.NOTSET or ours:
        logger.setLevel(
            logging.WARNING if verbosity < 1 else logging.DEBUG if verbosity >= 3 else logging.INFO
        )
    return not ours


def add_log_format_argument(parser: Any) -> None:
    """``--log-format text|json`` on a command (default: ``REDCOORD["LOG_FORMAT"]``)."""
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=None,
        help="console log lines as text or JSON objects (default REDCOORD['LOG_FORMAT']); "
        "used only when LOGGING configures nothing for django_redcoord",
    )
