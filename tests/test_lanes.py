"""The lane: each thread's own connection, read and written by our code.

These run against real servers and check what a caller of ``command`` sees
matches what redis-py itself returns for the same client settings.
"""

import pytest
import redis

from django_redcoord import scripting
from django_redcoord.connection import client_from_url
from django_redcoord.exceptions import CoordinationUnavailable
from django_redcoord.locks import Lock
from django_redcoord.scripting import _lane, command

from . import multiproc


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("decode", [False, True])
def test_replies_match_redis_py_for_each_protocol_and_decoding(redis_url, protocol, decode):
    client = client_from_url(redis_url, protocol=protocol, decode_responses=decode)
    client.hset("h", mapping={"a": "1", "b": "é"})
    client.rpush("l", "x", "y")
    conn = client.connection_pool.get_connection()  # redis-py's own parser: the reference

    def theirs_for(*args):
        conn.send_command(*args)
        return conn.read_response()

    for args in (
        ("PING",),
        ("HGETALL", "h"),
        ("HGET", "h", "b"),
        ("HGET", "h", "missing"),
        ("LRANGE", "l", 0, -1),
        ("GET", "n"),
        ("EVAL", "return {1, 'two', false, {3}}", 0),
        ("BLPOP", "l", "0.01"),
        ("BLPOP", "nothing", "0.01"),
    ):
        ours = command(client, *args, operation="test")
        if args[0] == "BLPOP" and ours is not None:
            client.lpush("l", ours[1])  # put it back for redis-py's turn
        theirs = theirs_for(*args)
        assert ours == theirs, args
    assert _lane(client).reader is not None  # the hiredis path, not redis-py's read


def test_a_reply_larger_than_one_read_arrives_whole(redis_client):
    value = b"v" * 300_000  # several reads of the lane's 64 KiB buffer
    redis_client.set("big", value)
    assert command(redis_client, "GET", "big", operation="test") == value


def test_error_replies_raise_and_leave_the_lane_in_step(redis_client):
    redis_client.set("s", "text")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        command(redis_client, "LPUSH", "s", "x", operation="test")
    with pytest.raises(redis.exceptions.NoScriptError):
        command(redis_client, "EVALSHA", "0" * 40, 0, operation="test")
    assert command(redis_client, "GET", "s", operation="test") == b"text"


def test_scripts_flushed_on_the_server_are_loaded_again(redis_client):
    with Lock("flush", ttl=5, wait=1, client=redis_client):
        pass
    redis_client.script_flush()
    with Lock("flush", ttl=5, wait=1, client=redis_client) as lock:
        assert lock.token == 2


def test_a_lane_closed_by_the_server_while_idle_is_replaced(redis_client):
    before = command(redis_client, "CLIENT", "ID", operation="test")
    redis_client.client_kill_filter(_id=before)  # as an idle timeout or a restart would
    after = command(redis_client, "CLIENT", "ID", operation="test")
    assert after != before
    with Lock("after-kill", ttl=5, wait=0, client=redis_client) as lock:
        assert lock.owned()


def test_a_reply_cut_off_mid_way_is_reported_and_the_lane_starts_afresh(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.5, connect_timeout=0.5)
    command(client, "PING", operation="test")
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable, match="timed out"):
            command(client, "PING", operation="ping while paused")
    finally:
        server.resume()
    # the late PONG of the timed-out call must not be taken for this call's reply
    assert command(client, "ECHO", "fresh", operation="test") == b"fresh"


def test_without_hiredis_the_lane_uses_redis_pys_send_and_read(redis_url, monkeypatch):
    monkeypatch.setattr(scripting, "_hiredis", None)
    client = client_from_url(redis_url)  # a new pool, so a new lane
    with Lock("plain", ttl=5, wait=1, client=client) as lock:
        assert lock.owned() and lock.token == 1
    lane = _lane(client)
    assert lane is not None and lane.reader is None
    before = command(client, "CLIENT", "ID", operation="test")
    client.client_kill_filter(_id=before)
    assert command(client, "CLIENT", "ID", operation="test") != before
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        client.set("s", "x")
        command(client, "LPUSH", "s", "x", operation="test")
    assert command(client, "GET", "s", operation="test") == b"x"


def _reuse_lock_after_fork(index, lock, parent_port):
    assert lock.acquire()
    lock.release()
    return lock._pin.lane.sock.getsockname()[1] != parent_port


def test_a_lock_used_before_a_fork_uses_the_childs_own_lane_after_it(redis_client):
    lock = Lock("pinned", ttl=5, wait=1, client=redis_client)
    assert lock.acquire()
    lock.release()
    parent_port = lock._pin.lane.sock.getsockname()[1]
    assert multiproc.start(_reuse_lock_after_fork, lock, parent_port).result() is True
    assert lock.acquire()  # and the parent's lane is still in step
    lock.release()
