"""The ReadWriteLock's public behaviour, run through both drivers (see tests/support/drivers.py)."""

from __future__ import annotations

import asyncio
import string
import time

import pytest

from django_redcoord.core.exceptions import LockError, LockLost
from django_redcoord.core.rwlocks import ReadWriteLock

from ...support.drivers import KINDS
from ...support.drivers import Driver as BaseDriver

HOSTILE = string.ascii_letters + string.digits + "_-.:/@=+,#~|"


class Driver(BaseDriver):
    def rw(self, name="catalog", client=None, **kwargs):
        kwargs.setdefault("wait", 0)
        kwargs.setdefault("ttl", 5)
        return ReadWriteLock(name, client=client or self.client, prefix="rw", **kwargs)

    def party(self, make, record, label, hold=0.05):
        """A concurrent party: take the hold ``make()`` makes, note when, hold, release."""

        async def go():
            if self.kind == "sync":
                client = self.open()
                hold_obj = make(client)
            else:
                hold_obj = make(None)
            assert await self.call(hold_obj, "acquire")
            record.append((label, "in", time.monotonic()))
            await self.sleep(hold)
            record.append((label, "out", time.monotonic()))
            await self.call(hold_obj, "release")

        return self.spawn(go)


@pytest.fixture(params=KINDS)
def driver(request, redis_url):
    return Driver.for_param(request, redis_url)


def test_readers_share_and_a_writer_is_alone(driver):
    async def scenario(d):
        rw = d.rw()
        r1, r2 = rw.read(), rw.read()
        assert await d.call(r1, "acquire") and await d.call(r2, "acquire")
        w = (
            d.rw().write()
        )  # another party (this thread reads through `rw`: that would be an upgrade)
        assert not await d.call(w, "acquire")
        assert 4 < w.retry_after <= 5
        state = await d.call(rw, "holders")
        assert sorted(h["kind"] for h in state["holders"]) == ["r", "r"]
        last_read = max(r1.token, r2.token)
        await d.call(r1, "release")
        await d.call(r2, "release")
        assert await d.call(w, "acquire") and w.token > last_read
        assert not await d.call(rw.read(), "acquire")  # no reader with a writer
        assert await d.call(w, "owned")
        await d.call(w, "release")
        assert (await d.call(rw, "holders"))["holders"] == []

    driver.play(scenario)


def test_a_waiting_writer_holds_back_later_readers_and_queued_readers_enter_together(driver):
    async def scenario(d):
        rw = d.rw(wait=5, ttl=10)
        first = rw.read()
        assert await d.call(first, "acquire")
        record = []

        def make(kind):
            return lambda client: (
                d.rw(wait=5, ttl=10, client=client).read
                if kind == "r"
                else d.rw(wait=5, ttl=10, client=client).write
            )()

        queue = d.sync_client()

        async def queued(
            n,
        ):  # each party in line before the next is started: the order is the test's
            deadline = time.monotonic() + 10
            while queue.llen(rw.keys.queue) < n:
                assert time.monotonic() < deadline, f"{n} waiters never queued"
                await asyncio.sleep(0.01)

        parties = [d.party(make("w"), record, "w1")]
        await queued(1)  # the writer queues behind the reader
        for n, label in enumerate(("r2", "r3"), 2):
            parties.append(d.party(make("r"), record, label))
            await queued(n)  # readers after a waiting writer queue too
        parties.append(d.party(make("w"), record, "w2"))
        await queued(4)
        assert [e[0] for e in record] == []  # nobody entered while the first reader holds
        await d.call(first, "release")
        await asyncio.gather(*parties)
        entries = [(label, what) for label, what, _ in record]
        assert entries[:2] == [("w1", "in"), ("w1", "out")]  # the writer first: it asked first
        readers_in = [
            i for i, (label, what) in enumerate(entries) if what == "in" and label in ("r2", "r3")
        ]
        assert readers_in == [2, 3]  # both readers in together, before either left
        assert entries[-2:] == [("w2", "in"), ("w2", "out")]  # the last writer after them

    driver.play(scenario)


def test_upgrade_is_refused_and_downgrade_is_atomic(driver):
    async def scenario(d):
        rw = d.rw(ttl=10)
        read = rw.read()
        assert await d.call(read, "acquire")
        with pytest.raises(LockError, match="upgrading is refused"):
            await d.call(rw.write(), "acquire")
        await d.call(read, "release")
        write = rw.write()
        assert await d.call(write, "acquire")
        waiting_reader = rw.read(wait=5)
        task = d.spawn(lambda: d.call(waiting_reader, "acquire"))
        await asyncio.sleep(0.2)
        writer_token = write.token
        reading = await d.call(write, "downgrade")
        assert reading.held and reading.token > writer_token and not write.held
        assert await task is True  # the queued reader came in with us
        state = await d.call(rw, "holders")
        assert sorted(h["kind"] for h in state["holders"]) == ["r", "r"]
        with pytest.raises(LockError, match="upgrading is refused"):  # we read again, through rw
            await d.call(rw.write(), "acquire")
        assert not await d.call(d.rw().write(), "acquire")  # and nobody else may write
        await d.call(reading, "release")
        await d.call(waiting_reader, "release")

    driver.play(scenario)


def test_a_crashed_writers_hold_ends_with_its_lease_and_its_late_release_is_lost(driver):
    async def scenario(d):
        rw = d.rw()
        crashed = rw.write(ttl=0.4)
        assert await d.call(crashed, "acquire")
        reader = rw.read(wait=3)
        started = time.monotonic()
        assert await d.call(reader, "acquire")
        assert time.monotonic() - started < 1.4
        with pytest.raises(LockLost):
            await d.call(crashed, "release")
        await d.call(reader, "release")

    driver.play(scenario)


def test_auto_renew_keeps_a_read_hold(driver):
    async def scenario(d):
        read = d.rw().read(ttl=0.6, auto_renew=True)
        assert await d.call(read, "acquire")
        await d.sleep(1.5)
        assert await d.call(read, "owned") and not read.lost
        await d.call(read, "release")

    driver.play(scenario)


def test_every_allowed_character_in_a_name(driver):
    async def scenario(d):
        rw = d.rw(name=HOSTILE)
        w = rw.write()
        assert await d.call(w, "acquire")
        reader = rw.read(wait=3)
        task = d.spawn(lambda: d.call(reader, "acquire"))
        await asyncio.sleep(0.1)
        await d.call(w, "release")
        assert await task is True
        await d.call(reader, "release")

    driver.play(scenario)
