"""REDCOORD['SENTINEL']: a master found through real sentinels, and what a failover does.

A master, a replica and a sentinel (quorum 1, down after 1 s) are real
processes; the failover is either asked for (SENTINEL FAILOVER) or forced by
SIGKILLing the master.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis
from django.core.management import call_command

from django_redcoord.checks import check_settings
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.groups import Group
from django_redcoord.core.transport.clients import client_from_url, get_client
from django_redcoord.tasks import chain, step

from ..support import workflow_tasks as wt
from ..support.redis_servers import RedisServer, SentinelServer, free_port, replicated


def _servers(settings, replicas: int):
    """A master, ``replicas`` synced replicas and a sentinel, which REDCOORD points at."""
    master = RedisServer(extra=("--repl-diskless-sync-delay", "0")).start()
    made = [
        RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start()
        for _ in range(replicas)
    ]
    deadline = time.monotonic() + 10
    for replica in made:
        while client_from_url(replica.url).info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync"
            time.sleep(0.05)
    sentinel = SentinelServer(master.port).start()
    settings.REDCOORD = {
        "SENTINEL": {"HOSTS": [("127.0.0.1", sentinel.port)], "SERVICE": "mymaster"},
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 1.0,
        "CONNECT_TIMEOUT": 0.5,
    }
    return master, made, sentinel


@pytest.fixture
def topology(settings, redis_url):
    master, (replica,), sentinel = _servers(settings, 1)
    yield master, replica, sentinel
    for server in (sentinel, replica, master):
        server.cleanup()


def _master_port(sentinel):
    return redis.Redis(port=sentinel.port).execute_command(
        "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"
    )[1]


def _failover(sentinel):
    """SENTINEL FAILOVER, once the sentinel knows the replica (it learns it from the master's
    INFO)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            return redis.Redis(port=sentinel.port).execute_command(
                "SENTINEL", "FAILOVER", "mymaster"
            )
        except redis.ResponseError as exc:
            assert "NOGOODSLAVE" in str(exc) and time.monotonic() < deadline, exc
            time.sleep(0.2)


def test_every_primitive_works_through_the_sentinels(topology):
    master, _, _ = topology
    with Lock("invoice:1", wait=0) as lock:
        assert lock.token and client_from_url(master.url).exists(lock.keys.lock)
    q = Queue("emails")
    q.push({"to": "a@example.com"})
    assert q.depths().ready == 1
    grouped = Queue("tenants")
    grouped.push_many(range(3), group=Group("t:1", concurrency=1))
    consumer = grouped.consumer("c")
    (first,), _ = consumer.claim(10)
    assert first.group == "t:1" and grouped.groups()[0]["waiting"] == 2
    consumer.ack(first)
    assert [m.body for m in consumer.claim(10)[0]] == [1]
    workflow = chain(step(wt.record, "s1"), step(wt.record, "s2")).enqueue()
    call_command("run_worker", "--burst", verbosity=0)
    assert workflow.refresh().status == "SUCCESSFUL"

    async def on_the_loop():
        async with Lock("invoice:2", wait=0) as lock:
            return lock.token

    assert asyncio.run(on_the_loop())
    assert check_settings() == []


def test_check_names_a_sentinel_that_does_not_answer_and_refuses_bad_settings(settings, topology):
    _, _, sentinel = topology
    dead = free_port()
    settings.REDCOORD = {
        "SENTINEL": {
            "HOSTS": [("127.0.0.1", sentinel.port), f"127.0.0.1:{dead}"],
            "SERVICE": "mymaster",
        }
    }
    [message] = check_settings()
    assert message.id == "redcoord.W008" and message.msg.startswith(
        f"Sentinel 2 of 2 (127.0.0.1:{dead}) did not answer"
    )
    settings.REDCOORD = {"SENTINEL": {"HOSTS": [], "SERVICE": "mymaster"}}
    assert [m.id for m in check_settings()] == ["redcoord.E003"]
    settings.REDCOORD = {
        "SENTINEL": {"HOSTS": ["localhost:26379"], "SERVICE": "", "DB": -1, "COLOR": 1}
    }
    msgs = [m.msg for m in check_settings()]
    assert any("unknown key(s) COLOR" in m for m in msgs) and any(
        "['SERVICE'] must be" in m for m in msgs
    )
    assert any("['DB'] must be a database number" in m for m in msgs)
    settings.REDCOORD = {"URL": "redis://x:6379/0", "SENTINEL": {"HOSTS": ["a:1"], "SERVICE": "m"}}
    assert any(
        "more than one of URL, CACHE, SENTINEL and CLUSTER" in m.msg for m in check_settings()
    )


def test_after_the_master_is_killed_locks_are_granted_by_the_promoted_replica(topology):
    master, replica, sentinel = topology
    with Lock("before", wait=0):
        pass
    master.kill()
    started = time.monotonic()
    errors = 0
    while True:
        try:
            with Lock("after", wait=0) as lock:
                token = lock.token
            break
        except Exception:  # an outage until the sentinel promotes the replica
            errors += 1
            assert time.monotonic() - started < 20, "no lock within 20 s of the master's death"
            time.sleep(0.1)
    assert token and errors > 0
    assert _master_port(sentinel) == str(replica.port).encode()
    assert get_client().connection_pool.get_master_address()[1] == replica.port


def test_waits_in_progress_when_the_master_dies_are_served_by_the_new_master(topology):
    """A lock waiter blocked on the killed master, and a worker waiting for messages,
    issue their waits again on the promoted replica: the waiter gets the lock when
    the holder's grant (replicated) expires there; the worker runs a message pushed
    after the failover."""
    import threading

    from django_redcoord.core.queues import Worker

    master, replica, sentinel = topology
    holder = Lock("report", ttl=4, wait=0)
    assert holder.acquire()
    replicated(client_from_url(master.url))  # the grant is on the replica
    outcome, ran = [], []
    waiter = threading.Thread(
        target=lambda: outcome.append(Lock("report", ttl=5, wait=25).acquire())
    )
    waiter.start()
    worker = Worker([Queue("jobs")], handler=lambda m: ran.append(m.body), worker_id="w-failover")
    runner = threading.Thread(target=worker.run)
    runner.start()
    try:
        time.sleep(0.5)  # both block on the master
        master.kill()
        started = time.monotonic()
        while True:
            try:
                Queue("jobs").push("after the failover")
                break
            except Exception:
                assert time.monotonic() - started < 20, "no push reached the new master"
                time.sleep(0.1)
        waiter.join(30)
        assert outcome == [True]
        deadline = time.monotonic() + 15
        while not ran:
            assert time.monotonic() < deadline, (
                "the worker never ran the message pushed after the failover"
            )
            time.sleep(0.05)
        assert ran == ["after the failover"]
        assert _master_port(sentinel) == str(replica.port).encode()
    finally:
        worker.stop()
        runner.join(15)


def test_idle_connections_to_a_former_master_are_dropped_within_a_second(topology):
    """After a failover the old master may still take writes until a sentinel demotes it
    (here: never, it is left alone). The pool asks the sentinels again at most once a
    second, drops its idle connections to the old master, and writes reach the new one."""
    master, replica, sentinel = topology
    Queue("jobs").push("before")  # an idle pooled connection to the old master
    replicated(client_from_url(master.url))  # "before" is on the replica
    client = get_client()
    assert client.connection_pool.get_master_address()[1] == master.port
    # The old master must go on answering as a master after the failover (as it does until
    # a sentinel demotes it): it refuses to be demoted, so a write sent to it would succeed
    # there and be lost.
    client_from_url(master.url).execute_command(
        "ACL", "SETUSER", "default", "-slaveof", "-replicaof"
    )
    _failover(sentinel)
    deadline = time.monotonic() + 10
    while _master_port(sentinel) != str(replica.port).encode():
        assert time.monotonic() < deadline, "the failover did not happen"
        time.sleep(0.05)
    time.sleep(1.1)  # the pool's next check is due
    assert (
        client_from_url(master.url).info("replication")["role"] == "master"
    )  # still taking writes
    Queue("jobs").push("after")
    on_new = client_from_url(replica.url)
    assert on_new.info("replication")["role"] == "master"
    assert Queue("jobs", client=on_new).depths().ready == 2  # "before" (replicated) and "after"


@pytest.fixture
def two_replicas(settings, redis_url):
    master, replicas, sentinel = _servers(settings, 2)
    yield master, replicas, sentinel
    for server in (sentinel, *replicas, master):
        server.cleanup()


def test_writes_reach_the_promoted_replica_within_a_second_of_the_sentinels_naming_it(
    two_replicas,
):
    """SENTINEL FAILOVER with two replicas: the failover ends only once the other replica is
    reconfigured, and until then ``SENTINEL MASTERS`` (what redis-py asks) still names the
    former master, which goes on taking writes that are lost when it is demoted. Pushes
    acknowledged more than a second after the sentinel names the promoted replica must all
    be there (they were lost for about 4 s more)."""
    master, replicas, sentinel = two_replicas
    acknowledged: dict[int, float] = {}
    stop = False

    def produce() -> None:
        n = 0
        while not stop:
            n += 1
            try:
                Queue("failover").push(n)
                acknowledged[n] = time.monotonic()
            except Exception:  # noqa: BLE001 - an outage refuses a push: it was never acknowledged
                pass
            time.sleep(0.01)

    producer = threading.Thread(target=produce)
    producer.start()
    try:
        time.sleep(1.0)
        _failover(sentinel)
        deadline = time.monotonic() + 15
        while _master_port(sentinel) == str(master.port).encode():
            assert time.monotonic() < deadline, "the failover did not happen"
            time.sleep(0.02)
        named = time.monotonic()
        time.sleep(4.0)
    finally:
        stop = True
        producer.join(10)
    new_port = int(_master_port(sentinel))
    (promoted,) = [r for r in replicas if r.port == new_port]
    consumer = Queue("failover", client=client_from_url(promoted.url)).consumer("reader")
    present: set[int] = set()
    while True:
        messages, _ = consumer.claim(500)
        if not messages:
            break
        present.update(m.body for m in messages)
    late = [n for n in set(acknowledged) - present if acknowledged[n] > named + 1.5]
    assert not late, (
        f"{len(late)} pushes acknowledged 1.5 s or more after the sentinel named the new master "
        f"are not on it (the last {acknowledged[max(late)] - named:.1f} s after)"
    )
    assert len(present) > 100  # (the producer ran on the new master)


def test_a_sentinel_that_is_down_or_hung_costs_a_new_client_half_a_second_at_most(topology):
    # The sentinels are asked one after the other before a connection is made, each for 0.5 s
    # at most (docs/topologies.md). redis-py's default retry made one that was down cost a new
    # client 3-4 s, and one that was hung (SIGSTOP) 8-10 s, sync and asyncio alike.
    import os
    import signal

    from django_redcoord.core.options import validate
    from django_redcoord.core.transport.clients import async_sentinel_client, sentinel_client

    master, _, sentinel = topology
    hung = SentinelServer(master.port).start()
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        for first, most in ((free_port(), 0.4), (hung.port, 0.9)):
            config = validate(
                {
                    "SENTINEL": {
                        "HOSTS": [f"127.0.0.1:{first}", f"127.0.0.1:{sentinel.port}"],
                        "SERVICE": "mymaster",
                    }
                }
            )
            client = sentinel_client(config)
            began = time.monotonic()
            assert client.ping()
            took = time.monotonic() - began
            assert took < most, f"the first sentinel ({first}) cost the call {took:.1f} s"

            async def first_call(config=config) -> float:
                aclient = async_sentinel_client(config)
                began = time.monotonic()
                assert await aclient.ping()
                took = time.monotonic() - began
                await aclient.aclose()
                return took

            took = asyncio.run(first_call())
            assert took < most, f"asyncio: the first sentinel ({first}) cost the call {took:.1f} s"
    finally:
        os.kill(hung.pid, signal.SIGCONT)
        hung.cleanup()


def test_when_no_sentinel_answers_the_error_names_each_by_address_and_reason():
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.options import validate
    from django_redcoord.core.transport.clients import sentinel_client

    dead = [free_port(), free_port()]
    config = validate(
        {"SENTINEL": {"HOSTS": [f"127.0.0.1:{p}" for p in dead], "SERVICE": "mymaster"}}
    )
    with pytest.raises(CoordinationUnavailable) as caught:
        Lock("x", wait=0, client=sentinel_client(config)).acquire()
    message = str(caught.value)
    for port in dead:  # each sentinel by its address and the error, not the client's repr
        assert f"sentinel 127.0.0.1:{port}: ConnectionError: " in message, message
    assert "redis.Redis" not in message and "<" not in message, message
    assert len(message) < 600, message
