"""Helpers of the wait-under-fault tests (latches, barriers, events, signals, topics)."""

from __future__ import annotations

import threading
import time

from django_redcoord.core.transport.clients import client_from_url

#: Every character a name may have, and a {tag}.
NAME = "a_b-c.d:e/f@g=h+i,j#k~l|m{t-1}"


class Outcome:
    """A call run in a thread: its result or its exception, and when it ended."""

    def __init__(self, call) -> None:
        self.result = self.error = self.ended = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # the test looks at it
            self.error = exc
        self.ended = time.monotonic()

    def join(self, bound: float) -> Outcome:
        self.thread.join(bound)
        assert not self.thread.is_alive(), f"still waiting after {bound} s (hung)"
        return self


def client(server, **kwargs):
    """A client of ``server`` named ``waiter`` (so a test can tell its connections apart)."""
    return client_from_url(server.url, client_name="waiter", **kwargs)


def kill_waiters(server) -> int:
    """``CLIENT KILL TYPE normal`` on ``server``: every client connection dropped at once."""
    admin = client_from_url(server.url)
    try:
        return admin.execute_command("CLIENT", "KILL", "TYPE", "normal")
    finally:
        admin.close()
