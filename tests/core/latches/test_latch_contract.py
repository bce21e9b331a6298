"""CountDownLatch and Barrier: their public behaviour through both drivers (see
tests/support/drivers.py)."""

from __future__ import annotations

import asyncio
import secrets
import string
import time

import pytest

from django_redcoord.core.exceptions import BarrierBroken, LatchBroken, LockError
from django_redcoord.core.latches import Barrier, CountDownLatch

from ...support.drivers import KINDS
from ...support.drivers import Driver as BaseDriver

HOSTILE = string.ascii_letters + string.digits + "_-.:/@=+,#~|"


class Driver(BaseDriver):
    # A prefix of each test's own: a watchdog another test left running (its party never counted
    # down) renews on the flushed server, finds its entry gone and breaks a latch of the same name
    # as Redis having lost its data, which is what it must do, but not in the next test's latch.
    # It is drawn here, once: drawn lazily, two parties' threads could each draw one and wait at
    # two different barriers (the sync-sentinel flake, both parties timing out alone).

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.prefix = f"l{secrets.token_hex(3)}"

    def latch(self, count=2, name="import", client=None, **kwargs):
        return CountDownLatch(
            name, count, client=client or self.client, prefix=self._prefix(), **kwargs
        )

    def barrier(self, parties=3, name="meet", client=None, **kwargs):
        return Barrier(name, parties, client=client or self.client, prefix=self._prefix(), **kwargs)

    def _prefix(self):
        return self.prefix

    async def wait(self, obj, *args):
        return await obj.await_(*args) if self.kind == "async" else obj.wait(*args)

    def own(self, make):
        """An object for a concurrent party: its own client with the sync driver."""
        return make(self.open() if self.kind == "sync" else None)


@pytest.fixture(params=KINDS)
def driver(request, redis_url):
    return Driver.for_param(request, redis_url)


def test_a_latch_opens_for_every_waiter_at_the_last_count_down(driver):
    async def scenario(d):
        latch = d.latch(count=3)
        waiters = [
            d.spawn(lambda: d.wait(d.own(lambda c: d.latch(count=3, client=c)), 5))
            for _ in range(3)
        ]
        await asyncio.sleep(0.2)
        assert not await d.call(latch, "count_down") and not await d.call(latch, "count_down")
        assert (await d.call(latch, "state"))["count"] == 1
        opened = time.monotonic()
        party = latch.party()
        await d.call(party, "join")
        await d.call(party, "count_down")
        assert await asyncio.gather(*waiters) == [True, True, True]
        assert time.monotonic() - opened < 0.5  # woken, not polled
        assert await d.wait(latch, 0) is True  # it stays open
        with pytest.raises(LockError, match="already open"):
            await d.call(latch.party(), "join")

    driver.play(scenario)


def test_a_latch_wait_times_out_and_leaves_nothing_registered(driver):
    async def scenario(d):
        latch = d.latch(count=1)
        started = time.monotonic()
        assert await d.wait(latch, 0.3) is False
        assert 0.25 < time.monotonic() - started < 1.5
        assert (await d.call(latch, "state"))["waiters"] == 0

    driver.play(scenario)


def test_a_failing_party_breaks_the_latch_and_waiters_learn_it_at_once(driver):
    async def scenario(d):
        latch = d.latch(count=2, name=HOSTILE)
        waiter = d.spawn(
            lambda: d.wait(d.own(lambda c: d.latch(count=2, name=HOSTILE, client=c)), 5)
        )
        await asyncio.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(ValueError):
            async with d.holding(latch.party()):
                raise ValueError("the import failed")
        with pytest.raises(LatchBroken, match="a party failed: ValueError: the import failed"):
            await waiter
        assert time.monotonic() - started < 0.5
        with pytest.raises(LatchBroken):
            await d.call(latch, "count_down")
        state = await d.call(latch, "state")
        assert "ValueError" in state["broken"] and state["count"] == 2

    driver.play(scenario)


def test_a_party_that_stops_renewing_breaks_the_latch_within_its_lease(driver):
    async def scenario(d):
        # (a lease of 1 s: with 0.5 s, a CI machine under four test workers once stalled the
        # live party's renewals, every 0.17 s, past it)
        latch = d.latch(count=2, ttl=1.0)
        silent = latch.party(auto_renew=False)  # as if its process died
        await d.call(silent, "join")
        renewed = latch.party(auto_renew=True)
        await d.call(renewed, "join")
        started = time.monotonic()
        with pytest.raises(LatchBroken, match="stopped renewing its lease"):
            await d.wait(latch, 10)
        assert time.monotonic() - started < 2.0  # lease + 1 s
        assert not renewed.lost  # the live party kept its lease: only the silent one broke it
        await d.call(
            renewed, "count_down"
        )  # it leaves (its watchdog stops), and the latch stays broken
        assert "stopped renewing" in (await d.call(latch, "state"))["broken"]

    driver.play(scenario)


async def until_waiting(d, barrier, n, within=30.0, parties=()):
    """Until ``n`` parties wait at ``barrier`` (spawned parties on clients of their own may take a
    while to arrive on a loaded machine: a fixed sleep made the arrival order a race). A party
    that already ended (an error, its own timeout) is reported as what it is."""
    began = time.monotonic()
    deadline, slowest, looks = began + within, 0.0, 0
    while True:
        asked = time.monotonic()
        waiting = len((await d.call(barrier, "state"))["waiting"])
        slowest, looks = max(slowest, time.monotonic() - asked), looks + 1
        if waiting >= n:
            return
        ended = [p for p in parties if p.done()]
        # (what the looks took says whether the party or the reader was slow, if this fails)
        seen = f"{looks} looks in {time.monotonic() - began:.1f} s, the slowest {slowest:.1f} s"
        assert not ended, (
            f"a party ended before all arrived ({seen}): "
            f"{[p.exception() or p.result() for p in ended]}"
        )
        assert time.monotonic() < deadline, f"{n} parties never arrived ({seen})"
        await asyncio.sleep(0.02)


def test_a_barrier_trips_when_every_party_arrived_and_can_be_used_again(driver):
    async def scenario(d):
        for _round in range(2):
            # (a party's own wait is long: on a loaded machine the second may arrive seconds after
            # the first, whose timeout would break the barrier; the timeout has its own test)
            parties = [
                d.spawn(lambda: d.wait(d.own(lambda c: d.barrier(name=HOSTILE, client=c)), 20))
                for _ in range(2)
            ]
            await until_waiting(d, d.barrier(name=HOSTILE), 2, parties=parties)
            tripped = time.monotonic()
            mine = await d.wait(d.barrier(name=HOSTILE), 5)
            others = await asyncio.gather(*parties)
            assert sorted([mine, *others]) == [0, 1, 2] and mine == 2  # the last to arrive trips it
            assert time.monotonic() - tripped < 0.5
        assert (await d.call(d.barrier(name=HOSTILE), "state"))["generation"] == 2

    driver.play(scenario)


def test_a_party_that_times_out_breaks_the_barrier_for_the_others_until_reset(driver):
    async def scenario(d):
        barrier = d.barrier()
        other = d.spawn(lambda: d.wait(d.own(lambda c: d.barrier(client=c)), 20))
        await until_waiting(d, barrier, 1, parties=[other])
        with pytest.raises(BarrierBroken, match="timed out"):
            await d.wait(barrier, 0.3)
        with pytest.raises(BarrierBroken, match="timed out"):
            await other
        with pytest.raises(BarrierBroken):
            await d.wait(barrier, 0.1)  # broken until reset
        await d.call(barrier, "reset")
        parties = [
            d.spawn(lambda: d.wait(d.own(lambda c: d.barrier(client=c)), 20)) for _ in range(2)
        ]
        await until_waiting(d, barrier, 2, parties=parties)
        assert await d.wait(barrier, 5) == 2 and sorted(await asyncio.gather(*parties)) == [0, 1]

    driver.play(scenario)


def test_reset_breaks_the_wait_of_the_parties_waiting_now(driver):
    async def scenario(d):
        # (its own wait outlasts the arrival check: the reset, not a timeout, must end it)
        waiting = d.spawn(lambda: d.wait(d.own(lambda c: d.barrier(client=c)), 60))
        await until_waiting(d, d.barrier(), 1, within=45, parties=[waiting])
        await d.call(d.barrier(), "reset")
        with pytest.raises(BarrierBroken, match="reset"):
            await waiting

    driver.play(scenario)


def test_bad_arguments_say_what_is_allowed(redis_client):
    with pytest.raises(ValueError, match="count must be a whole number from 1"):
        CountDownLatch("x", 0, client=redis_client)
    with pytest.raises(ValueError, match="parties must be a whole number from 2"):
        Barrier("x", 1, client=redis_client)
    with pytest.raises(ValueError, match="allowed characters"):
        Barrier("a b", 2, client=redis_client)
