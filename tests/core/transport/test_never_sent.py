"""An outage says whether the call was sent: a server that refuses the connection was sent
nothing (a known outcome: nothing was done), a paused one that never answered was (unknown)."""

from __future__ import annotations

import asyncio
import socket

import pytest
import redis
import redis.asyncio

from django_redcoord.core import CoordinationUnavailable, Lock, Semaphore
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.commands import acommand, command

from ...support.redis_servers import free_port


def _closed_url():
    return f"redis://127.0.0.1:{free_port()}/0"


def _listening_but_silent():
    """A socket that accepts connections and never answers (a hung proxy): the handshake's
    reply never comes, so nothing of ours is sent either."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s, f"redis://127.0.0.1:{s.getsockname()[1]}/0"


@pytest.mark.parametrize("what", ["command", "lock", "semaphore"])
def test_a_refused_connection_sent_nothing(what):
    client = client_from_url(_closed_url())
    with pytest.raises(CoordinationUnavailable) as caught:
        if what == "command":
            command(client, "SET", "k", "v", operation="set k")
        elif what == "lock":
            Lock("never", ttl=5, client=client, prefix="ns").acquire()
        else:
            Semaphore("never", permits=1, client=client, prefix="ns").acquire()
    assert caught.value.sent is False, caught.value
    assert "could not be reached" in str(caught.value)


def test_a_refused_connection_sent_nothing_asyncio():
    async def scenario():
        client = redis.asyncio.Redis.from_url(_closed_url(), socket_timeout=2)
        try:
            with pytest.raises(CoordinationUnavailable) as caught:
                await acommand(client, "SET", "k", "v", operation="set k")
            assert caught.value.sent is False
            with pytest.raises(CoordinationUnavailable) as caught:
                await Lock("never", ttl=5, client=client, prefix="ns").aacquire()
            assert caught.value.sent is False
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_server_that_goes_away_after_a_connection_was_pooled_sent_nothing_on_reconnect(
    redis_servers,
):
    (server,) = redis_servers(1)
    client = client_from_url(server.url)
    assert command(client, "PING", operation="ping")  # a connection is in the pool now
    server.stop()
    with pytest.raises(CoordinationUnavailable) as caught:
        command(client, "SET", "k", "v", operation="set k")
    # the pool's check of the idle connection found it closed and reconnecting was refused
    assert caught.value.sent is False, caught.value


def test_a_call_sent_to_a_server_that_never_answers_is_an_unknown_outcome(redis_url):
    client = client_from_url(redis_url, socket_timeout=0.5)
    assert command(client, "PING", operation="ping")
    admin = redis.Redis.from_url(redis_url)
    admin.execute_command("CLIENT", "PAUSE", 1500, "WRITE")
    try:
        with pytest.raises(CoordinationUnavailable) as caught:
            command(client, "SET", "k", "v", operation="set k")
        assert caught.value.sent is True  # it runs when the pause ends
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")


def test_a_handshake_that_never_answers_sent_nothing():
    listener, url = _listening_but_silent()
    try:
        client = client_from_url(url, socket_timeout=0.3, connect_timeout=0.3)
        with pytest.raises(CoordinationUnavailable) as caught:
            command(client, "SET", "k", "v", operation="set k")
        assert caught.value.sent is False, caught.value
    finally:
        listener.close()


def test_an_acquire_that_could_not_connect_gives_nothing_back_and_the_object_works_after(
    redis_servers, caplog
):
    (server,) = redis_servers(1)
    client = client_from_url(server.url)
    lock = Lock("after", ttl=5, client=client, prefix="ns")
    server.stop()
    with caplog.at_level("WARNING"), pytest.raises(CoordinationUnavailable) as caught:
        lock.acquire(wait=1)
    assert caught.value.sent is False
    # (nothing reached Redis: no give-back was tried, nothing left to settle later)
    assert "give back" not in caplog.text and lock.in_doubt is None
    server.start()
    assert lock.acquire(wait=1) and lock.held
    lock.release()


def test_a_release_that_could_not_connect_frees_the_object_and_the_grant_runs_out(
    redis_servers,
):
    (server,) = redis_servers(1)
    client = client_from_url(server.url)
    lock = Lock("frees", ttl=1, client=client, prefix="ns")
    assert lock.acquire()
    server.stop()
    with pytest.raises(CoordinationUnavailable) as caught:
        lock.release()
    assert caught.value.sent is False
    # not held by a release that cannot be made: the object is free for its next use
    assert not lock.held
    server.start()  # (empty: the grant went with the data; with data it runs out in 1 s)
    assert lock.acquire(wait=2)
    lock.release()
