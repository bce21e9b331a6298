"""The transport: every coordination command on a pooled connection, read by
the connection class itself, never retried silently.

Regression tests for the per-thread "lane" connections this replaced: they
lived outside the pool's accounting (a process stopped working after its
~100th thread) and read replies themselves (RESP3 push frames put them one
reply out of step; Sentinel's READONLY handling never ran).
"""

import asyncio
import threading
import time

import pytest
import redis
import redis.asyncio

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.commands import acommands, blpop, command, commands, max_block


def test_three_hundred_threads_one_after_another_never_run_out_of_connections(redis_url):
    """Thread-per-request servers and per-call executors: each new thread's
    calls must not take a connection that outlives the thread."""
    client = client_from_url(redis_url, max_connections=20)
    errors = []

    def one_request(i):
        try:
            with Lock(f"churn:{i % 7}", ttl=5, wait=5, client=client):
                Queue("churn", client=client).push({"i": i})
        except Exception as exc:  # collected: a failure must fail the test, not vanish in a thread
            errors.append(repr(exc))

    for batch in range(30):
        threads = [threading.Thread(target=one_request, args=(batch * 10 + i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    pool = client.connection_pool
    assert len(pool._in_use_connections) == 0
    assert pool._created_connections <= 20
    assert Queue("churn", client=client).depths().ready == 300


def test_push_frames_of_client_tracking_never_put_replies_out_of_step(redis_url):
    # One connection, so every call below uses the connection that tracks keys.
    pool = redis.BlockingConnectionPool.from_url(
        redis_url, max_connections=1, protocol=3, timeout=2
    )
    client = redis.Redis(connection_pool=pool)
    assert command(client, "CLIENT", "TRACKING", "ON", operation="test") in (b"OK", "OK", True)
    for round_ in range(5):
        command(client, "GET", "tracked", operation="test")  # the server now tracks it for us
        # Our own write invalidates it: the push frame comes just before the reply.
        assert command(client, "SET", "tracked", round_, operation="test") in (b"OK", True)
        assert command(client, "ECHO", f"a{round_}", operation="test") == f"a{round_}".encode()
    with Lock("tracked-lock", ttl=5, wait=1, client=client) as lock:
        assert lock.owned()


class CountingConnection(redis.Connection):
    reads = 0

    def read_response(self, *args, **kwargs):
        type(self).reads += 1
        return super().read_response(*args, **kwargs)


def test_replies_are_read_by_the_connection_class_itself(redis_url):
    """Sentinel's connection class turns READONLY into a reconnect to the new
    master inside read_response: our calls must pass through it."""
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    with Lock("read-by-class", ttl=5, wait=1, client=client):
        pass  # connected (its handshake reads too) and scripts loaded
    CountingConnection.reads = 0
    with Lock("read-by-class", ttl=5, wait=1, client=client):
        pass
    assert CountingConnection.reads == 2  # the acquire's reply and the release's


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("decode", [False, True])
def test_a_lock_works_for_each_protocol_and_decoding(redis_url, protocol, decode):
    client = client_from_url(redis_url, protocol=protocol, decode_responses=decode)
    with Lock("proto", ttl=5, wait=1, client=client) as lock:
        assert lock.owned() and lock.locked() and 0 < lock.ttl_remaining() <= 5
    assert not lock.locked()


def test_error_replies_raise_and_leave_the_connection_in_step(redis_client):
    redis_client.set("s", "text")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        command(redis_client, "LPUSH", "s", "x", operation="test")
    with pytest.raises(redis.exceptions.NoScriptError):
        command(redis_client, "EVALSHA", "0" * 40, 0, operation="test")
    assert command(redis_client, "GET", "s", operation="test") == b"text"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_batch_reads_every_reply_then_raises_the_first_error(redis_url, kind):
    batch = (("SET", "b:1", "x"), ("INCR", "b:1"), ("SET", "b:2", "y"), ("NOSUCHCOMMAND",))

    async def scenario():
        if kind == "sync":
            client = client_from_url(redis_url)
            with pytest.raises(redis.ResponseError, match="not an integer"):
                commands(client, batch, operation="batch")
            after = commands(client, (("MGET", "b:1", "b:2"), ("PING",)), operation="batch")
            client.close()
        else:
            client = redis.asyncio.Redis.from_url(redis_url)
            with pytest.raises(redis.ResponseError, match="not an integer"):
                await acommands(client, batch, operation="batch")
            after = await acommands(client, (("MGET", "b:1", "b:2"), ("PING",)), operation="batch")
            await client.aclose()
        # every command ran on its own, and the connection is still in step
        assert after == [[b"x", b"y"], True] or after == [[b"x", b"y"], b"PONG"]

    asyncio.run(scenario())


def test_scripts_flushed_on_the_server_are_loaded_again(redis_client):
    with Lock("flush", ttl=5, wait=1, client=redis_client) as lock:
        first = lock.token
    redis_client.script_flush()
    with Lock("flush", ttl=5, wait=1, client=redis_client) as lock:
        assert lock.token > first


def test_a_connection_closed_by_the_server_while_idle_is_replaced(redis_url, redis_client):
    before = command(redis_client, "CLIENT", "ID", operation="test")
    assert (
        client_from_url(redis_url).client_kill_filter(_id=before) == 1
    )  # as an idle timeout would
    after = command(redis_client, "CLIENT", "ID", operation="test")
    assert after != before
    with Lock("after-kill", ttl=5, wait=0, client=redis_client) as lock:
        assert lock.owned()


def test_a_reply_cut_off_by_a_timeout_is_never_read_as_the_next_reply(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.5, connect_timeout=0.5)
    command(client, "PING", operation="test")
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable, match="timed out"):
            command(client, "ECHO", "late", operation="echo while paused")
    finally:
        server.resume()
    # the late reply of the timed-out call must not be taken for this call's reply
    assert command(client, "ECHO", "fresh", operation="test") == b"fresh"


def test_a_client_with_retries_is_not_retried_silently(redis_servers):
    """Whatever retry policy the caller's client has, a coordination call fails at once."""
    server = redis_servers(1)[0]
    from redis.backoff import ConstantBackoff
    from redis.retry import Retry

    client = redis.Redis.from_url(
        server.url,
        socket_timeout=0.3,
        retry=Retry(ConstantBackoff(0.5), 5),
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
    )
    command(client, "PING", operation="test")
    server.pause()
    try:
        import time

        started = time.monotonic()
        with pytest.raises(CoordinationUnavailable):
            Lock("no-retry", ttl=5, wait=0, client=client).acquire()
        assert (
            time.monotonic() - started < 1.5
        )  # one socket timeout (+ the give-back), not 5 retries
    finally:
        server.resume()


def test_error_replies_of_a_server_that_cannot_serve_now_are_outages(redis_servers):
    """READONLY (a demoted master), UNBLOCKED (a blocked call on a demoted
    master), LOADING...: loops retry them like a connection error."""
    primary, replica = redis_servers(2)
    replica_client = client_from_url(replica.url)
    replica_client.replicaof("127.0.0.1", primary.port)
    with pytest.raises(CoordinationUnavailable, match="READONLY|read only"):
        Lock("on-a-replica", ttl=5, wait=0, client=replica_client).acquire()

    client = client_from_url(primary.url)
    blocked_id = []

    def block():
        blocked_id.append(command(client, "CLIENT", "ID", operation="test"))
        try:
            blpop(client, ["never"], 5, operation="wait")
        except CoordinationUnavailable as exc:
            blocked_id.append(exc)

    t = threading.Thread(target=block)
    t.start()
    import time

    deadline = time.monotonic() + 5
    while not (blocked_id and client.client_list(_type="normal")) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert client_from_url(primary.url).client_unblock(blocked_id[0], error=True)
    t.join(5)
    assert isinstance(blocked_id[-1], CoordinationUnavailable) and "UNBLOCKED" in str(
        blocked_id[-1]
    )


@pytest.mark.parametrize(
    "socket_timeout, expected", [(None, 10.0), (30.0, 10.0), (5.0, 4.5), (1.0, 0.5), (0.2, 0.1)]
)
def test_blocking_calls_stay_below_the_socket_timeout(redis_url, socket_timeout, expected):
    assert max_block(client_from_url(redis_url, socket_timeout=socket_timeout)) == expected


def test_a_sentinel_failover_is_an_outage_the_next_call_recovers_from(redis_servers):
    """A wait blocked on the demoted master is issued again on the new master
    (not a hang, not a crash) and served there when the holder releases; the
    next call reaches the new master, because replies go through Sentinel's
    connection class (READONLY -> reconnect)."""
    import time

    from redis.sentinel import Sentinel

    from django_redcoord.core.transport.clients import no_retry

    from ...support.redis_servers import SentinelServer, replicated

    master, replica = redis_servers(2)
    client_from_url(master.url).config_set("repl-diskless-sync-delay", 0)
    client_from_url(replica.url).replicaof("127.0.0.1", master.port)
    deadline = time.monotonic() + 10
    while client_from_url(replica.url).info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica never synced"
        time.sleep(0.05)
    sentinel = SentinelServer(master.port).start()
    try:
        sentinels = Sentinel([("127.0.0.1", sentinel.port)], socket_timeout=1)
        client = sentinels.master_for("mymaster", socket_timeout=2, retry=no_retry())
        holder = Lock("failover", ttl=30, wait=0, client=client)
        assert holder.acquire()
        replicated(client_from_url(master.url))  # the grant is on the replica
        outcome = []

        def wait_for_it():
            try:
                outcome.append(Lock("failover", ttl=30, wait=20, client=client).acquire())
            except CoordinationUnavailable as exc:
                outcome.append(exc)

        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        time.sleep(0.5)  # blocked in BLPOP on the master
        assert redis.Redis(port=sentinel.port).execute_command("SENTINEL", "FAILOVER", "mymaster")
        deadline = time.monotonic() + 10
        while sentinels.discover_master("mymaster") != ("127.0.0.1", replica.port):
            assert time.monotonic() < deadline, "the failover did not happen"
            time.sleep(0.05)
        # What Sentinel does to the old master within its next INFO period (10 s):
        client_from_url(master.url).replicaof("127.0.0.1", replica.port)
        time.sleep(0.5)  # the waiter's wait meets the demoted master and is issued again
        # the holder's idle connection still points at the old master
        client.connection_pool.disconnect()
        holder.release()  # on the new master (the grant was replicated)
        waiter.join(20)
        assert outcome == [True], outcome  # its wait, issued again on the new master, was served
        deadline = time.monotonic() + 15
        while True:
            try:
                with Lock("after-failover", ttl=5, wait=0, client=client) as lock:
                    assert lock.owned()
                break
            except CoordinationUnavailable:
                assert time.monotonic() < deadline, "no call reached the new master"
                time.sleep(0.2)
        assert sentinels.discover_master("mymaster") == ("127.0.0.1", replica.port)
    finally:
        sentinel.cleanup()


def test_waiters_never_take_the_connections_that_releases_need(redis_url):
    """A pool of 10: 6 may block in a wait, 2 more serve the other waiters' quick calls, 2 stay
    for releases. A 9th waiter is not refused: it waits for a connection (issue 31: pool
    exhaustion is never an outage); the holder's release goes through and every waiter is
    served in turn (tests/core/transport/test_pool_share.py has the rest)."""
    from django_redcoord.core.transport.commands import waiting_limit

    assert waiting_limit(10) == 6 and waiting_limit(100) == 80 and waiting_limit(1000) == 968

    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, max_connections=10)
        holder = Lock("pool|x", client=client, prefix="p", ttl=10)
        assert await holder.aacquire()
        waiters = [Lock("pool|x", client=client, prefix="p", ttl=10, wait=10) for _ in range(9)]
        tasks = [asyncio.ensure_future(w.aacquire()) for w in waiters]
        await asyncio.sleep(0.3)
        assert await client.llen(waiters[8].keys.queue) == 9  # every waiter queued
        await holder.arelease()  # needs a connection: the reserve
        served, deadline = 0, time.monotonic() + 20
        while served < 9 and time.monotonic() < deadline:
            for waiter in waiters:
                if waiter.held:  # handed the lock: release it (through the reserve) for the next
                    await waiter.arelease()
                    served += 1
            await asyncio.sleep(0.01)
        results = await asyncio.gather(*tasks)
        await client.aclose()
        return results

    assert asyncio.run(scenario()) == [True] * 9
