"""Steps that talk to several independent Redis servers at once (Redlock's masters).

A quorum operation's generator yields a :class:`Fanout` — one step per
server — and gets back one outcome per server: the reply, or the exception
that server's round trip raised (an unreachable master is an answer like any
other: it counts against the quorum). The sync driver sends them from a small
shared thread pool, so a paused master costs its socket timeout once, not
once per master; the asyncio driver gathers them on the loop. The "client"
the drivers pass in is the list of the masters' clients.

:class:`Pause` waits between two quorum attempts (interruptible in threads
through ``event``; a plain ``asyncio.sleep`` on the loop, which cancellation
reaches).
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..transport.drivers import Step

#: Threads of the shared pool: enough for a few quorum calls at once over up
#: to 7 masters; more calls queue for a thread (each round trip is short).
POOL_THREADS = 32

_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _executor() -> ThreadPoolExecutor:
    """The process's pool (a forked child builds its own: threads do not survive a fork)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="redcoord-redlock"))
        return _pool[1]


class Fanout(Step):
    """One step per server (``None``: nothing for that one), run concurrently.

    Returns, per server, its reply, the exception its round trip raised, or
    ``None`` where no step was given.
    """

    __slots__ = ("steps",)

    def __init__(self, steps: list[Step | None]) -> None:
        self.steps = steps

    def run(self, clients: Any) -> list[Any]:
        futures = [
            None if step is None else _executor().submit(step.run, client)
            for step, client in zip(self.steps, clients, strict=True)
        ]
        outcomes: list[Any] = []
        for future in futures:
            if future is None:
                outcomes.append(None)
                continue
            try:
                outcomes.append(future.result())
            except Exception as exc:  # one master's failure is its answer
                outcomes.append(exc)
        return outcomes

    async def arun(self, clients: Any) -> list[Any]:
        async def nothing() -> None:
            return None

        return list(
            await asyncio.gather(
                *(nothing() if step is None else step.arun(client) for step, client in zip(self.steps, clients, strict=True)),
                return_exceptions=True,
            )
        )


class Pause(Step):
    """Wait ``seconds`` between attempts; ``event`` set (from any thread) ends a sync wait early."""

    __slots__ = ("seconds", "event")

    def __init__(self, seconds: float, event: threading.Event) -> None:
        self.seconds, self.event = seconds, event

    def run(self, clients: Any) -> None:
        self.event.wait(self.seconds)

    async def arun(self, clients: Any) -> None:
        await asyncio.sleep(self.seconds)
