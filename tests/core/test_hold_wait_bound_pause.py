"""A lock, semaphore or read-write lock wait ends by its deadline plus one socket timeout when
Redis is paused under it: its blocked wait (through the process's wake hub), its last look and
its give-back share one bound, rather than a socket timeout each."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest
import redis

from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.clients import client_from_url

SOCKET_TIMEOUT = 2.0
WAIT = 1.0
#: the wait, one socket timeout, and what a loaded machine adds
BOUND = WAIT + SOCKET_TIMEOUT + 1.2


def _primitive(kind, client, name):
    if kind == "lock":
        return Lock(name, ttl=30, client=client, prefix="wb")
    if kind == "semaphore":
        return Semaphore(name, permits=1, ttl=30, client=client, prefix="wb")
    return ReadWriteLock(name, ttl=30, client=client, prefix="wb").write()


class _Pause:
    """SIGSTOP the server 0.3 s from now (a new connection's handshake hangs too, as in a
    hung host; CLIENT PAUSE WRITE would let it through), SIGCONT on the way out."""

    def __init__(self, server):
        self.pid = server.proc.pid
        self.timer = threading.Timer(0.3, os.kill, (self.pid, signal.SIGSTOP))

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        os.kill(self.pid, signal.SIGCONT)


@pytest.mark.parametrize("kind", ["lock", "semaphore", "rwlock"])
def test_a_sync_wait_ends_by_its_bound_on_a_paused_server(redis_servers, kind):
    (server,) = redis_servers(1)
    client = client_from_url(server.url, socket_timeout=SOCKET_TIMEOUT)
    holder = _primitive(kind, client, "held")
    assert holder.acquire(wait=0)
    started = time.monotonic()
    with _Pause(server):
        try:
            got = _primitive(kind, client, "held").acquire(wait=WAIT)
        except Exception as exc:  # CoordinationUnavailable: the server did not answer
            got = type(exc).__name__
        took = time.monotonic() - started
    assert got in (False, "CoordinationUnavailable")
    assert took <= BOUND, f"{kind}: {took:.2f} s > {BOUND} s"


@pytest.mark.parametrize("kind", ["lock", "semaphore", "rwlock"])
def test_an_asyncio_wait_ends_by_its_bound_on_a_paused_server(redis_servers, kind):
    (server,) = redis_servers(1)

    async def scenario():
        client = redis.asyncio.Redis.from_url(server.url, socket_timeout=SOCKET_TIMEOUT)
        try:
            holder = _primitive(kind, client, "held")
            assert await holder.aacquire(wait=0)
            started = time.monotonic()
            with _Pause(server):
                try:
                    got = await _primitive(kind, client, "held").aacquire(wait=WAIT)
                except Exception as exc:
                    got = type(exc).__name__
                took = time.monotonic() - started
            assert got in (False, "CoordinationUnavailable")
            assert took <= BOUND, f"{kind}: {took:.2f} s > {BOUND} s"
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_more_waits_than_connections_still_end_by_the_bound(redis_servers):
    """A look that gets a pool slot just before the bound makes a new connection: its
    handshake is bounded by what is left too (it waited a whole socket timeout)."""
    (server,) = redis_servers(1)
    client = client_from_url(server.url, socket_timeout=SOCKET_TIMEOUT, max_connections=6)
    assert Lock("crowd", ttl=30, client=client, prefix="wb").acquire(wait=0)
    took = []

    def waiter():
        started = time.monotonic()
        try:
            Lock("crowd", ttl=5, client=client, prefix="wb").acquire(wait=WAIT)
        except Exception:  # CoordinationUnavailable (PoolExhausted among them)
            pass
        took.append(time.monotonic() - started)

    with _Pause(server):
        threads = [threading.Thread(target=waiter) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert len(took) == 16 and max(took) <= BOUND, sorted(round(t, 2) for t in took)
