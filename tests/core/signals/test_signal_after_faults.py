"""Events, signals and topics after Redis faults: a killed connection, a paused
server, a restart with and without its data, a deleted consumer group, a
cancelled waiter, and keys left behind.

Each test runs against a server of its own (``redis_servers``) that it kills,
pauses or restarts, with names made of every allowed character.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio

from django_redcoord.core.signals import Event, Signal, Topic
from django_redcoord.core.transport.clients import client_from_url

from ...support.waits_under_faults import NAME, Outcome, client, kill_waiters

PREFIX = "sf"


def blocked_clients(server) -> int:
    admin = client_from_url(server.url)
    try:
        return int(admin.info("clients")["blocked_clients"])
    finally:
        admin.close()


def wait_blocked(server, n: int = 1, bound: float = 10.0) -> None:
    end = time.monotonic() + bound
    while blocked_clients(server) < n:
        assert time.monotonic() < end, "the waiter did not block"
        time.sleep(0.02)


# -- Signal: the in-flight key of a delivered signal ---------------------------------------------


def test_a_delivered_signal_leaves_no_key_without_a_ttl(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    waiter = Outcome(lambda: Signal(NAME, client=client(server), prefix=PREFIX).wait(10))
    wait_blocked(server)
    assert Signal(NAME, client=admin, prefix=PREFIX).send({"id": 7}) == 1
    assert waiter.join(10).result == {"id": 7}
    # The waiting object never waits again: nothing it left may live forever.
    forever = {
        k: admin.pttl(k)
        for k in admin.scan_iter(f"{PREFIX}:*")
        if b"index" not in k and admin.pttl(k) < 0
    }
    assert forever == {}


def test_a_signal_whose_reply_was_lost_is_still_delivered_once(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    sig = Signal(NAME, client=client(server), prefix=PREFIX)
    sender = Signal(NAME, client=admin, prefix=PREFIX)
    waiter = Outcome(lambda: sig.wait(10))
    wait_blocked(server)
    kill_waiters(server)  # the blocked BLMOVE loses its connection
    time.sleep(0.3)
    assert sender.send(1) == 1
    assert waiter.join(10).error is None and waiter.result == 1
    assert sig.wait(0.5, default="none") == "none"  # not twice


def test_a_signal_wait_rides_out_a_restart_with_the_data(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    waiter = Outcome(lambda: Signal(NAME, client=client(server), prefix=PREFIX).wait(30))
    wait_blocked(server)
    admin.save()
    server.restart()
    end = time.monotonic() + 10
    while (
        Signal(NAME, client=admin, prefix=PREFIX).send("after") == 0
    ):  # until the waiter is queued again
        assert time.monotonic() < end, "the waiter did not come back"
        time.sleep(0.05)
    assert waiter.join(10).error is None and waiter.result == "after"


def test_a_signal_wait_rides_out_a_server_paused_past_the_socket_timeout(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    waiter = Outcome(
        lambda: Signal(NAME, client=client(server, socket_timeout=1.0), prefix=PREFIX).wait(30)
    )
    wait_blocked(server)
    server.pause()
    time.sleep(2.5)
    server.resume()
    end = time.monotonic() + 10
    while Signal(NAME, client=admin, prefix=PREFIX).send("after") == 0:
        assert time.monotonic() < end, "the waiter did not come back"
        time.sleep(0.05)
    assert waiter.join(10).error is None and waiter.result == "after"


# -- Event ---------------------------------------------------------------------------------------


def test_an_event_wait_rides_out_a_server_paused_past_the_socket_timeout(redis_servers):
    (server,) = redis_servers(1)
    waiter = Outcome(
        lambda: Event(NAME, client=client(server, socket_timeout=1.0), prefix=PREFIX).wait(30)
    )
    wait_blocked(server)
    server.pause()
    time.sleep(2.5)  # the BLPOP and the re-checks after it time out
    server.resume()
    Event(NAME, client=client_from_url(server.url), prefix=PREFIX).set("x")
    assert waiter.join(10).error is None and waiter.result is True


def test_an_event_wait_rides_out_a_restart_with_the_data(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    waiter = Outcome(lambda: Event(NAME, client=client(server), prefix=PREFIX).wait(30))
    wait_blocked(server)
    admin.save()
    server.restart()
    time.sleep(0.5)
    Event(NAME, client=admin, prefix=PREFIX).set()
    assert waiter.join(10).error is None and waiter.result is True


@pytest.mark.parametrize("after", [0.0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.3])
def test_cancelled_event_and_signal_waiters_leave_nothing_behind(redis_url, redis_client, after):
    async def scenario():
        aclient = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        for obj in (
            Event(NAME, client=aclient, prefix=PREFIX),
            Signal(NAME, client=aclient, prefix=PREFIX),
        ):
            task = asyncio.ensure_future(obj.await_(30))
            await asyncio.sleep(after)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        await aclient.aclose()

    asyncio.run(scenario())
    assert Signal(NAME, client=redis_client, prefix=PREFIX).send(1) == 0  # nobody queued
    assert Event(NAME, client=redis_client, prefix=PREFIX).set() == 0  # nobody registered
    forever = [
        k
        for k in redis_client.scan_iter(f"{PREFIX}:*")
        if b"index" not in k and redis_client.pttl(k) < 0
    ]
    assert forever == []


# -- Topic ---------------------------------------------------------------------------------------


def _topic(server, **kwargs):
    return Topic(NAME, client=client_from_url(server.url, **kwargs), prefix=PREFIX)


def test_a_topic_subscriber_whose_group_was_lost_with_the_data_receives_what_comes_after(
    redis_servers,
):
    (server,) = redis_servers(1)
    topic = _topic(server)
    sub = topic.subscribe("mailer|{x}")
    assert sub.receive(timeout=0) == []  # the group exists from now
    topic.publish(1)
    (first,) = sub.receive(timeout=5)
    assert first.data == 1
    server.restart()  # empty: the stream and its group are gone
    topic.publish(2)  # published after the loss, before the subscriber comes back
    got = sub.receive(timeout=5)
    assert [m.data for m in got] == [2]
    assert sub.groups_recreated == 1
    assert (
        sub.ack(first) == 0
    )  # its pending entry went with the data: no raw NOGROUP, nothing pending
    assert sub.ack(*got) == 1


def test_a_topic_subscriber_whose_group_was_deleted_while_it_blocks_gets_the_next_message(
    redis_servers,
):
    (server,) = redis_servers(1)
    topic = _topic(server)
    sub = Topic(NAME, client=client(server), prefix=PREFIX).subscribe("mailer")
    assert sub.receive(timeout=0) == []
    topic.publish(1)
    assert [m.data for m in sub.receive(timeout=5)] == [1]
    waiter = Outcome(lambda: sub.receive(timeout=20))
    wait_blocked(server)
    client_from_url(server.url).xgroup_destroy(topic.key, "mailer")
    time.sleep(0.3)
    topic.publish(2)
    waiter.join(25)
    assert waiter.error is None and [m.data for m in waiter.result] == [
        2
    ]  # after the last one it got: not 1 again


def test_a_topic_receive_rides_out_a_killed_connection_and_a_restart_with_the_data(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    topic = _topic(server)
    sub = Topic(NAME, client=client(server), prefix=PREFIX).subscribe("mailer")
    assert sub.receive(timeout=0) == []  # the group exists from now
    waiter = Outcome(lambda: sub.receive(timeout=20))
    wait_blocked(server)
    kill_waiters(server)
    wait_blocked(server)
    admin.save()
    server.restart()
    time.sleep(0.5)
    topic.publish("after")
    waiter.join(25)
    assert waiter.error is None and [m.data for m in waiter.result] == ["after"]
    assert sub.groups_recreated == 0


def test_a_topic_receive_rides_out_a_paused_server(redis_servers):
    (server,) = redis_servers(1)
    topic = _topic(server)
    sub = Topic(NAME, client=client(server, socket_timeout=1.0), prefix=PREFIX).subscribe("mailer")
    assert sub.receive(timeout=0) == []
    waiter = Outcome(lambda: sub.receive(timeout=20))
    wait_blocked(server)
    server.pause()
    time.sleep(2.5)
    server.resume()
    topic.publish("after")
    waiter.join(25)
    assert waiter.error is None and [m.data for m in waiter.result] == ["after"]


def test_an_event_and_a_signal_wait_ride_out_a_restart_without_the_data(redis_servers):
    # The wait goes on (it registers again); what happens after the restart reaches it.
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    event = Outcome(lambda: Event(NAME, client=client(server), prefix=PREFIX).wait(30))
    signal = Outcome(lambda: Signal(NAME, client=client(server), prefix=PREFIX).wait(30))
    wait_blocked(server, 2)
    server.restart()
    end = time.monotonic() + 10
    while Signal(NAME, client=admin, prefix=PREFIX).send("after") == 0:
        assert time.monotonic() < end, "the signal waiter did not come back"
        time.sleep(0.05)
    Event(NAME, client=admin, prefix=PREFIX).set()
    assert event.join(10).error is None and event.result is True
    assert signal.join(10).error is None and signal.result == "after"


def test_a_signal_is_not_delivered_again_by_a_look_only_wait(redis_url, redis_client):
    sig = Signal(NAME, client=redis_client, prefix=PREFIX)
    waiter = Outcome(lambda: sig.wait(10))
    end = time.monotonic() + 10
    while Signal(NAME, client=redis_client, prefix=PREFIX).send("once") == 0:
        assert time.monotonic() < end
        time.sleep(0.02)
    assert waiter.join(10).result == "once"
    assert sig.wait(0, default="none") == "none"


def test_an_event_wait_rides_out_a_killed_connection(redis_servers):
    (server,) = redis_servers(1)
    waiter = Outcome(lambda: Event(NAME, client=client(server), prefix=PREFIX).wait(30))
    wait_blocked(server)
    for _ in range(3):
        assert kill_waiters(server) >= 1
        wait_blocked(server)
    Event(NAME, client=client_from_url(server.url), prefix=PREFIX).set()
    assert waiter.join(10).error is None and waiter.result is True
