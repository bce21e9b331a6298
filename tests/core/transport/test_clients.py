"""Every primitive works with any redis-py client it is handed: RESP2 or RESP3,
decoding responses or not (``client=`` is documented as "any redis-py client")."""

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.dashboard import overview

HOSTILE = "n|a,m:e/@=+#~._-"  # every punctuation character a name may have


@pytest.fixture(
    params=[(2, False), (2, True), (3, False), (3, True)], ids=lambda p: f"resp{p[0]}-decode{p[1]}"
)
def any_client(request, redis_url):
    protocol, decode = request.param
    return client_from_url(redis_url, protocol=protocol, decode_responses=decode)


def test_a_lock(any_client):
    lock = Lock(HOSTILE, ttl=5, wait=0, client=any_client, prefix="c")
    with lock:
        assert lock.owned() and lock.locked() and lock.token > 0
        assert not Lock(HOSTILE, ttl=5, wait=0, client=any_client, prefix="c").acquire()
    assert not lock.locked()


def test_a_queue_and_a_worker(any_client):
    queue = Queue(HOSTILE, client=any_client, prefix="c", max_attempts=1)
    queue.push({"n": 1}, id=HOSTILE + "|ok")
    queue.push({"n": 2}, id=HOSTILE + "|fails")
    seen = []

    def handler(message):
        seen.append(message.id)
        if message.body["n"] == 2:
            raise ValueError("no")

    stats = Worker([queue], handler, burst=True, heartbeat=0.2, timeout=1.0).run()
    assert sorted(seen) == [HOSTILE + "|fails", HOSTILE + "|ok"] and (stats.ok, stats.dead) == (
        1,
        1,
    )
    [(message, error)] = queue.dead_letters()
    assert message.id == HOSTILE + "|fails" and "ValueError: no" in error["error"]
    depths = queue.depths()
    assert (depths.ready, depths.processing, depths.dead) == (0, 0, 1)


def test_an_election(any_client):
    election = LeaderElection(
        HOSTILE,
        lease=3,
        renew_deadline=2,
        retry_period=0.5,
        identity="me|you",
        client=any_client,
        prefix="c",
    )
    other = LeaderElection(
        HOSTILE,
        lease=3,
        renew_deadline=2,
        retry_period=0.5,
        identity="other",
        client=any_client,
        prefix="c",
    )
    assert election.campaign() and not other.campaign()
    current = election.current()
    assert (current.identity, current.term) == ("me|you", election.term)
    assert election.resign() and other.campaign()
    other.resign()


def test_the_dashboard_data(any_client):
    with Lock(HOSTILE, ttl=5, wait=0, client=any_client, prefix="c"):
        Queue(HOSTILE, client=any_client, prefix="c").push({"x": 1}, id="id|1")
        data = overview(any_client, "c")
    assert [item["name"] for item in data["locks"]["items"]] == [HOSTILE]
    assert [q["name"] for q in data["queues"]] == [HOSTILE] and data["queues"][0]["ready"] == 1
