"""``manage.py redcoord``: operate django_redcoord.

Subcommands:
  embedded start|stop|status   the embedded development Redis of this project
  ping                         check that the configured Redis answers
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import conf, embedded
from ...exceptions import RedcoordError


class Command(BaseCommand):
    help = "Operate django_redcoord: the embedded development Redis, connectivity."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)
        emb = sub.add_parser("embedded", help="start, stop or show the embedded development Redis")
        emb.add_argument("action", choices=["start", "stop", "status"])
        sub.add_parser("ping", help="check that the configured Redis answers")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["subcommand"] == "embedded":
                self._embedded(options["action"])
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
        from ...connection import describe, get_client, unavailable_as_ours

        client = get_client()
        with unavailable_as_ours(client, "ping"):
            client.ping()
        self.stdout.write(f"Redis at {describe(client)} answered PING")
