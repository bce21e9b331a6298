"""What a cell of the fault matrix works with: the server under test and its nemeses,
clients, parties in threads and in real processes, and the shared checks."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from django_redcoord.core.exceptions import CoordinationUnavailable, RedcoordError
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc
from ...support.redis_servers import (
    RedisServer,
    RestartableServer,
    blocked_clients,
    kill_connections,
)

#: The cells' clients: a paused server shows as an outage within half a second.
SOCKET_TIMEOUT = 0.5
#: How long a paused-server cell keeps the server stopped (well past SOCKET_TIMEOUT).
PAUSE = 1.2
#: The short leases of the holder-killed cells (seconds).
LEASE = 1.0


class Party:
    """``func()`` in a thread: ``.result(timeout)`` returns its value or re-raises its exception."""

    def __init__(self, func: Callable[[], Any], name: str = "party") -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.ended_at: float | None = None
        self._thread = threading.Thread(target=self._main, args=(func,), name=name, daemon=True)
        self._thread.start()

    def _main(self, func: Callable[[], Any]) -> None:
        try:
            self.value = func()
        except BaseException as exc:  # handed to the cell
            self.error = exc
        self.ended_at = time.monotonic()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def outcome(self, timeout: float) -> tuple[str, Any]:
        """("ok", value), ("error", exception) or ("hung", None) if still running after
        ``timeout``."""
        if not self.join(timeout):
            return "hung", None
        return ("error", self.error) if self.error is not None else ("ok", self.value)


def describe(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__name__}: {exc}"


def raw_error(exc: BaseException | None) -> str | None:
    """A violation if ``exc`` is not one of ours (a raw redis-py error, a KeyError...)."""
    if exc is None or isinstance(exc, RedcoordError):
        return None
    return "an error that is not ours escaped: " + "".join(traceback.format_exception(exc)[-3:])


def outage_claim(exc: BaseException | None) -> str | None:
    """A violation if ``exc`` says Redis could not be reached (for a cell where Redis was fine)."""
    if isinstance(exc, CoordinationUnavailable) and (
        exc.sent or "could not be reached" in str(exc)
    ):
        return f"pool exhaustion read as an outage: {describe(exc)}"
    return raw_error(exc)


@dataclass
class Ctx:
    """One cell's world: ``server`` (restartable, with an AOF), ``others`` (two more
    masters, for Redlock), a key prefix of its own."""

    server: RestartableServer
    others: list[RedisServer]
    prefix: str
    clients: list[Any] = field(default_factory=list)
    procs: list[multiproc.Proc] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, url: str | None = None, **kwargs: Any) -> Any:
        kwargs.setdefault("socket_timeout", SOCKET_TIMEOUT)
        made = client_from_url(url or self.url, **kwargs)
        self.clients.append(made)
        return made

    def admin(self, port: int | None = None) -> redis.Redis:
        made = redis.Redis(port=port or self.server.port, socket_timeout=5)
        self.clients.append(made)
        return made

    # -- nemeses ----------------------------------------------------------------------------

    def restart(self, *, keep_data: bool) -> None:
        if keep_data:
            self.server.restart_keeping_data()
        else:
            self.server.restart_losing_data()

    def pause(self, seconds: float = PAUSE) -> threading.Thread:
        """SIGSTOP the server now, SIGCONT it ``seconds`` later (from a thread; returned)."""
        self.server.pause()

        def resume() -> None:
            time.sleep(seconds)
            thread.resumed_at = time.monotonic()  # type: ignore[attr-defined]  # (no later than)
            self.server.resume()

        thread = threading.Thread(target=resume, daemon=True)
        thread.resumed_at = None  # type: ignore[attr-defined]  # (a call begun after it ran no pause)
        thread.start()
        return thread

    def kill_connections(self, port: int | None = None) -> int:
        return kill_connections(port or self.server.port)

    def wait_blocked(self, n: int = 1, timeout: float = 10.0, port: int | None = None) -> None:
        """Until ``n`` connections block in a command (the waiters are in their wait)."""
        deadline = time.monotonic() + timeout
        while blocked_clients(port or self.server.port) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"{n} waiter(s) did not block within {timeout:g} s")
            time.sleep(0.01)

    # -- parties ----------------------------------------------------------------------------

    def process(self, func: Callable[..., Any], *args: Any) -> multiproc.Proc:
        """``func(0, *args)`` in a forked OS process (for SIGKILL and SIGSTOP)."""
        proc = multiproc.start(func, *args)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            proc.stop()
        for made in self.clients:
            try:
                made.close()
            except Exception:  # a client of a killed server
                pass


def pool_exhaustion(
    ctx: Any,
    parties: list[Callable[[], Any]],
    finisher: Callable[[], Any],
    *,
    settle: float = 0.5,
    bound: float = 15.0,
) -> tuple[list[str], list[tuple[str, Any]]]:
    """Run ``parties`` at once (threads sharing one small-pool client), then ``finisher``
    (the call that serves them: a release, a count-down, a set...) on the same client.

    Violations: the finisher failed (the share of the pool kept for it did not hold),
    a party's error is raw or reads as an outage, a party hangs past ``bound``.
    Returns (violations, outcomes).
    """
    running = [Party(p, f"party-{i}") for i, p in enumerate(parties)]
    time.sleep(settle)
    found = []
    try:
        finisher()
    except BaseException as exc:
        found.append(f"the finishing call failed while the pool was busy: {describe(exc)}")
    outcomes = [p.outcome(bound) for p in running]
    for i, (status, value) in enumerate(outcomes):
        if status == "hung":
            found.append(f"party {i} still running {bound:g} s after the finishing call")
        elif status == "error" and (problem := outage_claim(value)):
            found.append(f"party {i}: {problem}")
    return found, outcomes


def keys_tagged_by(client: Any, prefix: str, name: str) -> list[str]:
    """Keys under ``prefix`` that mention ``name`` outside their hash tag (the first ``{...}``):
    such a key is not in its resource's slot on a Cluster. One server's shared admin
    indexes (``<prefix>:index:...`` without a tag) are left out, as in
    tests/support/key_slots.py."""
    from django_redcoord.core.transport.commands import as_text

    found = []
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        key = as_text(key)
        if name not in key or (key.startswith(f"{prefix}:index:") and "{" not in key):
            continue
        start = key.find("{")
        end = key.find("}", start + 1)
        if start < 0 or end < 0 or name not in key[start + 1 : end]:
            found.append(f"{key}: the name is in the key but not in its hash tag")
    return found


def no_ttl_keys(client: Any, prefix: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """Keys under ``prefix`` that never expire (a leak), but those containing one of ``allowed``."""
    from django_redcoord.core.transport.commands import as_text

    found = []
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        key = as_text(key)
        if any(a in key for a in allowed):
            continue
        if client.ttl(key) == -1:
            found.append(f"{key} has no TTL")
    return found


def async_party(ctx: Any, use: Callable[[Any], Any]) -> Party:
    """``await use(client)`` on a ``redis.asyncio`` client of the cell's server, in a
    thread with its own event loop (the asyncio API under the same nemesis)."""
    import asyncio

    import redis.asyncio

    async def main() -> Any:
        client = redis.asyncio.Redis.from_url(
            ctx.url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=2.0
        )
        try:
            return await use(client)
        finally:
            await client.aclose()

    return Party(lambda: asyncio.run(main()), "async-party")
