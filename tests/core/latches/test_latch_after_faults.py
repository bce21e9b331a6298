"""Latches and barriers after Redis faults: a killed connection, a paused server,
a restart with and without its data, a cancelled waiter, an open latch's surplus party.

Each test runs against a server of its own (``redis_servers``) that it kills,
pauses or restarts. The waits run in threads (sync API) or tasks (asyncio API)
and must end with the outcome the README promises: a connection blip or a
short pause is ridden out; a restart without data breaks the latch or
barrier with a reason that says the data was lost (never a silent new count,
never a hang); an open latch stays open.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio

from django_redcoord.core.exceptions import BarrierBroken, LatchBroken, LockLost
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.transport.clients import client_from_url

from ...support.waits_under_faults import NAME, Outcome, client, kill_waiters

PREFIX = "lf"


def wait_registered(latch: CountDownLatch, n: int, bound: float = 10.0) -> None:
    end = time.monotonic() + bound
    while latch.state()["waiters"] < n:
        assert time.monotonic() < end, "the waiters did not register"
        time.sleep(0.02)


def wait_arrived(barrier: Barrier, n: int, bound: float = 10.0) -> None:
    end = time.monotonic() + bound
    while len(barrier.state()["waiting"]) < n:
        assert time.monotonic() < end, "the parties did not arrive"
        time.sleep(0.02)


# -- one connection killed ----------------------------------------------------------------


def test_a_latch_wait_rides_out_a_killed_connection(redis_servers):
    (server,) = redis_servers(1)
    latch = CountDownLatch(NAME, 1, client=client_from_url(server.url), prefix=PREFIX)
    waiter = Outcome(lambda: CountDownLatch(NAME, 1, client=client(server), prefix=PREFIX).wait(30))
    wait_registered(latch, 1)
    time.sleep(0.2)  # blocked in BLPOP
    assert kill_waiters(server) >= 1
    time.sleep(0.3)
    latch.count_down()
    waiter.join(10)
    assert waiter.error is None and waiter.result is True


def test_a_barrier_wait_rides_out_a_killed_connection_for_every_party(redis_servers):
    (server,) = redis_servers(1)
    parties = [
        Outcome(lambda: Barrier(NAME, 3, client=client(server), prefix=PREFIX).wait(30))
        for _ in range(2)
    ]
    barrier = Barrier(NAME, 3, client=client_from_url(server.url), prefix=PREFIX)
    wait_arrived(barrier, 2)
    time.sleep(0.2)
    assert kill_waiters(server) >= 2
    time.sleep(0.3)
    assert barrier.state()["broken"] == ""
    assert barrier.wait(10) == 2
    indexes = sorted(p.join(10).result for p in parties)
    assert [p.error for p in parties] == [None, None] and indexes == [0, 1]


def test_an_async_barrier_wait_rides_out_a_killed_connection(redis_servers):
    (server,) = redis_servers(1)

    async def scenario():
        aclient = redis.asyncio.Redis.from_url(server.url, socket_timeout=5, client_name="waiter")
        waiting = asyncio.ensure_future(Barrier(NAME, 2, client=aclient, prefix=PREFIX).await_(30))
        barrier = Barrier(NAME, 2, client=client_from_url(server.url), prefix=PREFIX)
        while len(barrier.state()["waiting"]) < 1:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        assert kill_waiters(server) >= 1
        await asyncio.sleep(0.3)
        assert await asyncio.to_thread(barrier.wait, 10) == 1
        assert await asyncio.wait_for(waiting, 10) == 0
        await aclient.aclose()

    asyncio.run(scenario())


# -- a paused server ------------------------------------------------------------------------


def test_a_latch_wait_rides_out_a_server_paused_past_the_socket_timeout(redis_servers):
    (server,) = redis_servers(1)
    latch = CountDownLatch(NAME, 1, client=client_from_url(server.url), prefix=PREFIX)
    waiter = Outcome(
        lambda: CountDownLatch(
            NAME, 1, client=client(server, socket_timeout=1.0), prefix=PREFIX
        ).wait(30)
    )
    wait_registered(latch, 1)
    server.pause()
    time.sleep(2.5)  # the waiter's BLPOP and its re-checks time out meanwhile
    server.resume()
    time.sleep(0.5)
    latch.count_down()
    waiter.join(10)
    assert waiter.error is None and waiter.result is True


def test_a_barrier_wait_rides_out_a_pause_shorter_than_its_lease(redis_servers):
    (server,) = redis_servers(1)
    party = Outcome(
        lambda: Barrier(
            NAME, 2, ttl=10, client=client(server, socket_timeout=1.0), prefix=PREFIX
        ).wait(30)
    )
    barrier = Barrier(NAME, 2, ttl=10, client=client_from_url(server.url), prefix=PREFIX)
    wait_arrived(barrier, 1)
    server.pause()
    time.sleep(2.5)
    server.resume()
    assert barrier.wait(10) == 1
    assert party.join(10).error is None and party.result == 0


# -- a restart without the data, and with it ---------------------------------------------------


def test_a_latch_waiter_without_timeout_learns_that_redis_lost_the_data(redis_servers):
    (server,) = redis_servers(1)
    latch = CountDownLatch(NAME, 2, client=client_from_url(server.url), prefix=PREFIX)
    latch.count_down()  # one of two: a restart must not silently start again at two
    waiter = Outcome(
        lambda: CountDownLatch(NAME, 2, client=client(server), prefix=PREFIX).wait(None)
    )
    wait_registered(latch, 1)
    server.restart()  # empty: nothing persisted
    waiter.join(15)
    assert isinstance(waiter.error, LatchBroken), waiter.error or waiter.result
    assert "lost" in waiter.error.reason
    # and it stays broken (with the reason) for everyone who comes later
    with pytest.raises(LatchBroken, match="lost"):
        CountDownLatch(NAME, 2, client=client_from_url(server.url), prefix=PREFIX).wait(0)


def test_a_latch_party_counting_down_after_the_data_was_lost_breaks_the_latch(redis_servers):
    (server,) = redis_servers(1)
    latch = CountDownLatch(NAME, 2, client=client_from_url(server.url), prefix=PREFIX)
    party = latch.party(auto_renew=False)
    party.join()
    server.restart()
    newcomer = CountDownLatch(NAME, 2, client=client_from_url(server.url), prefix=PREFIX)
    assert newcomer.wait(0) is False  # it looks like a new latch...
    with pytest.raises(LockLost):
        party.count_down()  # ...until the party that joined before the loss comes back
    with pytest.raises(LatchBroken, match="lost"):
        newcomer.wait(0)


def test_a_party_alive_through_the_data_loss_breaks_the_latch_for_those_who_come_after(
    redis_servers,
):
    (server,) = redis_servers(1)
    latch = CountDownLatch(NAME, 3, ttl=1.5, client=client_from_url(server.url), prefix=PREFIX)
    party = latch.party()  # renewed every 0.5 s by its watchdog
    party.join()
    latch.count_down()
    server.restart()
    newcomer = CountDownLatch(NAME, 3, client=client_from_url(server.url), prefix=PREFIX)
    # Within one renewal of the surviving party, a waiter that came after the loss learns it...
    with pytest.raises(LatchBroken, match="lost"):
        newcomer.wait(10)
    with pytest.raises(LatchBroken, match="lost"):
        newcomer.count_down()  # ...and so does an anonymous count-down: never a silent new count
    # The party itself learns it from the reply to that renewal (its watchdog thread may be a
    # moment behind the waiter that the break woke).
    deadline = time.monotonic() + 2.0
    while not party.lost and time.monotonic() < deadline:
        time.sleep(0.01)
    assert party.lost
    with pytest.raises(LockLost):
        party.count_down()


# -- one key evicted of several: an evicting maxmemory-policy picks keys one at a time, and
# dropped the state hash while the parties set stayed (4 runs in 10 under allkeys-lru) -------


def test_a_latch_whose_state_alone_was_evicted_breaks_at_its_parties_next_call(redis_client):
    # Before: the parties' next renewals and count-downs found their entries, recreated the
    # count at its initial value and went on: the latch ended at 1, never opened, and nobody
    # was told.
    latch = CountDownLatch(NAME, 3, client=redis_client, prefix=PREFIX)
    parties = [latch.party(auto_renew=False) for _ in range(3)]
    for party in parties:
        party.join()
    parties[0].count_down()
    redis_client.delete(latch.keys.state)  # what eviction does to that one key
    with pytest.raises(LockLost):
        parties[1].extend()  # a renewal finds its entry without its record
    with pytest.raises(LockLost):
        parties[2].count_down()
    with pytest.raises(LatchBroken, match="lost"):
        latch.wait(0)


def test_a_latch_party_counting_down_first_after_its_state_was_evicted_breaks_it(redis_client):
    latch = CountDownLatch(NAME, 2, client=redis_client, prefix=PREFIX)
    party = latch.party(auto_renew=False)
    party.join()
    redis_client.delete(latch.keys.state)
    with pytest.raises(LockLost):
        party.count_down()
    with pytest.raises(LatchBroken, match="lost"):
        latch.wait(0)


def test_a_barrier_whose_state_alone_was_evicted_never_lets_a_party_pass_alone(redis_url):
    # Before: the third party's arrival recreated the state, counted the two arrivals of the
    # parties set and passed, while those two then raised BarrierBroken ("Redis lost the
    # barrier's data"): one passed alone.
    import threading

    def make() -> Barrier:
        return Barrier(NAME, 3, client=client_from_url(redis_url), prefix=PREFIX)

    outcomes: dict[int, str] = {}

    def arrive(i: int) -> None:
        try:
            outcomes[i] = f"passed {make().wait(10)}"
        except BarrierBroken as exc:
            outcomes[i] = f"broken: {exc}"

    waiting = [threading.Thread(target=arrive, args=(i,)) for i in range(2)]
    for thread in waiting:
        thread.start()
    wait_arrived(make(), 2)
    client_from_url(redis_url).delete(make().keys.state)
    arrive(2)
    for thread in waiting:
        thread.join(15)
    assert len(outcomes) == 3
    assert all(o.startswith("broken") and "lost" in o for o in outcomes.values()), outcomes


def test_a_party_that_counted_down_does_not_break_the_latch_by_a_late_renewal(redis_client):
    # The tombstone a count-down leaves tells a renewal that was in flight meanwhile from a data
    # loss.
    from django_redcoord.core.latches.latch import RENEW

    latch = CountDownLatch(NAME, 2, client=redis_client, prefix=PREFIX)
    party = latch.party(auto_renew=False)
    party.join()
    token = party._owner
    party.count_down()
    k = latch.keys
    assert (
        RENEW(
            redis_client,
            [k.state, k.parties, k.index, k.waiters, k.wake, k.probe],
            [token, 1000, NAME, 2, 60000],
            operation="renew",
        )
        == 0
    )
    assert latch.state()["broken"] == "" and latch.state()["count"] == 1


def test_a_latch_wait_rides_out_a_restart_with_the_data(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    latch = CountDownLatch(NAME, 2, client=admin, prefix=PREFIX)
    latch.count_down()
    waiter = Outcome(lambda: CountDownLatch(NAME, 2, client=client(server), prefix=PREFIX).wait(30))
    wait_registered(latch, 1)
    admin.save()
    server.restart()  # loads the snapshot
    assert latch.state()["count"] == 1
    latch.count_down()
    waiter.join(10)
    assert waiter.error is None and waiter.result is True


def test_barrier_parties_learn_that_redis_lost_the_data(redis_servers):
    (server,) = redis_servers(1)
    parties = [
        Outcome(lambda: Barrier(NAME, 3, client=client(server), prefix=PREFIX).wait(None))
        for _ in range(2)
    ]
    wait_arrived(Barrier(NAME, 3, client=client_from_url(server.url), prefix=PREFIX), 2)
    server.restart()
    for party in parties:
        party.join(15)
        assert isinstance(party.error, BarrierBroken), party.error or party.result
        assert "lost" in party.error.reason


def test_a_barrier_wait_rides_out_a_restart_with_the_data(redis_servers):
    (server,) = redis_servers(1)
    admin = client_from_url(server.url)
    party = Outcome(lambda: Barrier(NAME, 2, client=client(server), prefix=PREFIX).wait(30))
    barrier = Barrier(NAME, 2, client=admin, prefix=PREFIX)
    wait_arrived(barrier, 1)
    admin.save()
    server.restart()
    assert barrier.wait(10) == 1
    assert party.join(10).error is None and party.result == 0


# -- open stays open ------------------------------------------------------------------------------


def test_an_open_latch_stays_open_when_a_surplus_party_fails(redis_client):
    latch = CountDownLatch(NAME, 1, client=redis_client, prefix=PREFIX)
    with pytest.raises(RuntimeError):
        with latch.party():  # the surplus party
            with latch.party():
                pass  # counts down: open
            assert latch.wait(0) is True
            raise RuntimeError("the surplus party failed")
    assert latch.wait(0) is True and latch.state()["broken"] == ""
    latch.abort("an operator's abort")
    assert latch.wait(0) is True


def test_an_open_latch_stays_open_when_a_surplus_partys_lease_lapses(redis_client):
    latch = CountDownLatch(NAME, 1, client=redis_client, prefix=PREFIX)
    surplus = latch.party(ttl=0.3, auto_renew=False)
    surplus.join()
    latch.count_down()
    time.sleep(0.6)  # the surplus party's lease lapses after the latch opened
    assert latch.wait(0) is True and latch.state()["broken"] == ""
    assert latch.state()["parties"] == []  # forgotten, not kept as dead


def test_negative_control_a_latch_that_is_not_open_still_breaks_when_a_party_fails(redis_client):
    latch = CountDownLatch(NAME, 2, client=redis_client, prefix=PREFIX)
    with pytest.raises(RuntimeError):
        with latch.party():
            raise RuntimeError("a party failed")
    with pytest.raises(LatchBroken, match="a party failed"):
        latch.wait(0)


# -- a cancelled waiter ----------------------------------------------------------------------------


@pytest.mark.parametrize("after", [0.0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.3])
def test_a_cancelled_latch_waiter_leaves_nothing_registered(redis_client, redis_url, after):
    async def scenario():
        aclient = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        task = asyncio.ensure_future(
            CountDownLatch(NAME, 1, client=aclient, prefix=PREFIX).await_(30)
        )
        await asyncio.sleep(after)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await aclient.aclose()

    asyncio.run(scenario())
    latch = CountDownLatch(NAME, 1, client=redis_client, prefix=PREFIX)
    assert latch.state()["waiters"] == 0
    assert not [k for k in redis_client.scan_iter(f"{PREFIX}:*wake*")], (
        "a wake list was left behind"
    )
    assert all(
        redis_client.pttl(k) > 0 for k in redis_client.scan_iter(f"{PREFIX}:*") if b"index" not in k
    )


def test_every_latch_key_has_a_ttl_also_after_abort_and_a_look(redis_client):
    CountDownLatch(NAME, 1, client=redis_client, prefix=PREFIX).wait(0)
    CountDownLatch(NAME + "2", 1, client=redis_client, prefix=PREFIX).abort("why")
    Barrier(NAME, 2, client=redis_client, prefix=PREFIX).reset()
    Barrier(NAME + "2", 2, client=redis_client, prefix=PREFIX).abort()
    keys = [k for k in redis_client.scan_iter(f"{PREFIX}:*") if b"index" not in k]
    assert keys and {k: redis_client.pttl(k) for k in keys if redis_client.pttl(k) < 0} == {}


@pytest.mark.parametrize("after", [0.0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.3])
def test_a_cancelled_barrier_party_leaves_no_arrival_behind(redis_client, redis_url, after):
    # Cancelled while arriving or while waiting: its arrival is undone (and,
    # once it was recorded, the barrier breaks as threading.Barrier's does);
    # never a ghost arrival that a later party would count.
    async def scenario():
        aclient = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
        task = asyncio.ensure_future(Barrier(NAME, 2, client=aclient, prefix=PREFIX).await_(30))
        await asyncio.sleep(after)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await aclient.aclose()

    asyncio.run(scenario())
    assert Barrier(NAME, 2, client=redis_client, prefix=PREFIX).state()["waiting"] == []
