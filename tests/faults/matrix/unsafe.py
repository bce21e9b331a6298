"""Deliberately unsafe primitives: the matrix's negative controls.

Each is what a hand-rolled Redis recipe typically does, and each breaks exactly the
guarantee one cell checks; test_negative_controls.py runs that cell on it and
requires violations. A matrix that passes these would pass anything.
"""

from __future__ import annotations

import time
from typing import Any

import redis


class NaiveLock:
    """SET NX PX, a fencing token from a plain INCR, release by DEL (no owner check)."""

    def __init__(self, client: Any, name: str, ttl: float = 30.0) -> None:
        self.client, self.key, self.ttl = client, f"naive:lock:{name}", ttl
        self.token: int | None = None

    def acquire(self) -> bool:
        if not self.client.set(self.key, "x", nx=True, px=int(self.ttl * 1000)):
            return False
        self.token = int(self.client.incr(self.key + ":fence"))
        return True

    def release(self) -> None:
        self.client.delete(self.key)


class NaiveLatch:
    """A counter: created at ``count`` when missing, DECR to count down, polled by waiters."""

    def __init__(self, client: Any, name: str, count: int = 2) -> None:
        self.client, self.key, self.count = client, f"naive:latch:{name}", count

    def _init(self) -> None:
        self.client.set(self.key, self.count, nx=True)

    def party(self, **_: Any) -> NaiveLatch:
        return self

    def join(self) -> None:
        self._init()

    def count_down(self) -> bool:
        self._init()
        return int(self.client.decr(self.key)) <= 0

    def wait(self, timeout: float) -> bool:
        self._init()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if int(self.client.get(self.key) or 0) <= 0:
                return True
            time.sleep(0.05)
        return False


class NaiveElection:
    """SET NX PX of the leader record; the term from a plain INCR (it restarts at 1)."""

    def __init__(self, client: Any, identity: str) -> None:
        self.client, self.identity = client, identity
        self.term: int | None = None

    def campaign(self) -> bool:
        if self.client.set("naive:leader", self.identity, nx=True, px=1500):
            self.term = int(self.client.incr("naive:term"))
            return True
        return self.client.get("naive:leader") == self.identity.encode()

    def is_leader(self) -> bool:
        return self.term is not None


class NaiveTopic:
    """XADD and XREADGROUP with the group made once: a lost group is never noticed."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def publish(self, data: Any) -> str:
        return self.client.xadd("naive:topic", {"d": str(data)})

    def subscribe(self, group: str, consumer: str, **_: Any) -> NaiveTopic:
        try:
            self.client.xgroup_create("naive:topic", group, id="$", mkstream=True)
        except redis.ResponseError:
            pass
        self.group, self.consumer = group, consumer
        return self

    def receive(self, count: int = 10, timeout: float = 0) -> list[Any]:
        reply = self.client.xreadgroup(
            self.group, self.consumer, {"naive:topic": ">"}, block=max(1, int(timeout * 1000))
        )
        return [
            type("M", (), {"data": f[b"d"].decode()})()
            for _, entries in reply or []
            for _, f in entries
        ]


def naive_cancel(result: Any) -> Any:
    """A cancel that only writes the outcome into the task's result record (FAILED), leaving its
    message in the queue: what a cancel without a script of its own does."""
    from django_redcoord.core.transport.clients import get_client
    from django_redcoord.tasks import Cancel, task_backends_for

    backend = task_backends_for("default")
    get_client().hset(backend._result_key(result.id), mapping={"status": "FAILED"})
    return Cancel.REMOVED
