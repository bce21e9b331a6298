"""Events, signals and topics: their public behaviour through both drivers (see
tests/support/drivers.py)."""

from __future__ import annotations

import asyncio
import string
import time

import pytest

from django_redcoord.core.signals import Event, Signal, Topic

from ...support.drivers import KINDS
from ...support.drivers import Driver as BaseDriver

HOSTILE = string.ascii_letters + string.digits + "_-.:/@=+,#~|"


class Driver(BaseDriver):
    def make(self, cls, name, client=None, **kwargs):
        return cls(name, client=client or self.client, prefix="sg", **kwargs)

    def own(self, cls, name, **kwargs):
        """An object for a concurrent party: its own client with the sync driver."""
        return cls(
            name, client=self.open() if self.kind == "sync" else self.client, prefix="sg", **kwargs
        )

    async def wait(self, obj, *args, **kwargs):
        return (
            await obj.await_(*args, **kwargs) if self.kind == "async" else obj.wait(*args, **kwargs)
        )


@pytest.fixture(params=KINDS)
def driver(request, redis_url):
    return Driver.for_param(request, redis_url)


async def registered(d, event, n, within=10.0):
    """Until ``n`` waiters are registered at ``event`` (waiters on clients of their own may take
    a while
    to get there on a loaded machine: a fixed sleep made the count a race)."""
    client, deadline = d.sync_client(), time.monotonic() + within
    while client.zcard(event.keys.waiters) < n:
        assert time.monotonic() < deadline, f"{n} waiters never registered"
        await asyncio.sleep(0.02)


async def queued(d, signal, n, within=10.0):
    """Until ``n`` places are in the signal's queue (see :func:`registered`)."""
    client, deadline = d.sync_client(), time.monotonic() + within
    while client.llen(signal.keys.waiters) < n:
        assert time.monotonic() < deadline, f"{n} waiters never queued"
        await asyncio.sleep(0.02)


def test_an_event_wakes_every_waiter_and_stays_set_for_latecomers(driver):
    async def scenario(d):
        event = d.make(Event, HOSTILE)
        assert not await d.call(event, "is_set") and await d.call(event, "get") is None
        waiters = [d.spawn(lambda: d.wait(d.own(Event, HOSTILE), 5)) for _ in range(3)]
        await registered(d, event, 3)
        started = time.monotonic()
        assert await d.call(event, "set", {"rows": 12}) == 3
        assert await asyncio.gather(*waiters) == [True, True, True]
        assert time.monotonic() - started < 0.5
        assert await d.wait(event, 0) is True  # a latecomer sees it at once
        assert await d.call(event, "get") == {"rows": 12}
        await d.call(event, "clear")
        assert await d.wait(event, 0.2) is False
        with pytest.raises(TypeError, match="data must be JSON"):
            await d.call(event, "set", {1, 2})

    driver.play(scenario)


def test_send_reaches_exactly_the_oldest_waiter_and_broadcast_every_waiter(driver):
    async def scenario(d):
        signal = d.make(Signal, "work|1")
        got = {}

        def waiter(i):
            async def go():
                got[i] = await d.wait(d.own(Signal, "work|1"), 5, default="timeout")

            return go

        tasks = []
        for i in range(3):
            tasks.append(d.spawn(waiter(i)))
            await queued(d, signal, i + 1)  # queued in this order
        assert await d.call(signal, "send", {"job": 1}) == 1
        deadline = time.monotonic() + 5
        while not got:
            assert time.monotonic() < deadline, "nobody got the signal"
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # (room for a second delivery, which must not come)
        assert got == {0: {"job": 1}}  # the oldest, and only it
        assert await d.call(signal, "broadcast", "reload") == 2
        await asyncio.gather(*tasks)
        assert got == {0: {"job": 1}, 1: "reload", 2: "reload"}
        assert await d.call(signal, "send", 1) == 0  # nobody waits now: nobody gets it
        assert await d.wait(signal, 0.2, default="timeout") == "timeout"

    driver.play(scenario)


def test_signals_that_arrive_between_two_waits_are_kept_for_the_next(driver):
    async def scenario(d):
        waiter, sender = d.own(Signal, "burst"), d.make(Signal, "burst")
        first = d.spawn(lambda: d.wait(waiter, 5))
        await queued(d, sender, 1)
        assert await d.call(sender, "broadcast", 1) == 1
        await d.call(sender, "broadcast", 2)  # nobody is queued now: not delivered
        assert await first == 1
        second = d.spawn(lambda: d.wait(waiter, 5))
        await asyncio.sleep(0.2)
        await d.call(sender, "send", 3)
        assert await second == 3

    driver.play(scenario)


def test_a_topic_gives_each_group_every_message_and_redelivers_what_was_not_acked(driver):
    async def scenario(d):
        topic = d.make(Topic, "orders|1", maxlen=1000)
        mail = topic.subscribe("mail", "a", lease=0.4)
        assert await d.call(mail, "receive", timeout=0) == []
        ids = [await d.call(topic, "publish", {"n": i}) for i in range(3)]
        got = await d.call(mail, "receive", count=10, timeout=1)
        assert [m.id for m in got] == ids and [m.data for m in got] == [
            {"n": 0},
            {"n": 1},
            {"n": 2},
        ]
        assert await d.call(mail, "ack", got[0]) == 1
        other = topic.subscribe("mail", "b", lease=0.4)
        await asyncio.sleep(0.5)  # a's lease on the two it did not ack runs out
        again = await d.call(other, "receive", count=10, timeout=0)
        assert [m.data for m in again] == [{"n": 1}, {"n": 2}] and all(m.redelivered for m in again)
        await d.call(other, "ack", *again)
        audit = topic.subscribe("audit", start="all")
        assert (
            len(await d.call(audit, "receive", count=10, timeout=0)) == 3
        )  # every group sees every message
        waiting = d.spawn(lambda: d.call(other, "receive", timeout=5))
        await asyncio.sleep(0.2)
        await d.call(topic, "publish", "late")
        assert [m.data for m in await waiting] == ["late"]

    driver.play(scenario)


def test_a_topic_keeps_about_maxlen_messages(driver):
    async def scenario(d):
        topic = d.make(Topic, "bounded", maxlen=100)
        for i in range(1000):
            await d.call(topic, "publish", i)
        length = d.client.xlen(topic.key) if d.kind == "sync" else await d.client.xlen(topic.key)
        assert 100 <= length < 300

    driver.play(scenario)


def test_a_waiter_woken_by_set_returns_true_even_if_cleared_at_once(driver):
    async def scenario(d):
        event = d.make(Event, "flash")
        waiters = [d.spawn(lambda: d.wait(d.own(Event, "flash"), 10)) for _ in range(5)]
        await registered(d, event, 5)
        assert await d.call(event, "set") == 5
        await d.call(event, "clear")  # before the waiters re-read the state
        assert await asyncio.gather(*waiters) == [True] * 5  # as threading.Event

    driver.play(scenario)


def _dead_places(client, name, n):
    """``n`` places in the signal's queue whose owners died (their lease is 1 ms)."""
    from django_redcoord.core.signals.signal import WAIT

    k = Signal(name, client=client, prefix="sg").keys
    keys = [k.waiters, k.deliveries, k.due, k.wake, k.index, k.probe]
    for i in range(n):
        WAIT(
            client,
            keys,
            [f"dead{i}", "queue", 1, name, "h", 1, "t", ""],
            operation="a place that will lapse",
        )
    time.sleep(0.01)


@pytest.mark.parametrize("how", ["send", "broadcast"])
def test_a_live_waiter_behind_hundreds_of_dead_places_is_reached(driver, redis_client, how):
    async def scenario(d):
        _dead_places(redis_client, "crowded", 300)
        waiting = d.spawn(lambda: d.wait(d.own(Signal, "crowded"), 10, default="timeout"))
        deadline = time.monotonic() + 8
        while (
            sent := await d.call(d.make(Signal, "crowded"), how, "hello")
        ) == 0:  # not queued yet: nobody got it
            assert time.monotonic() < deadline, "the live waiter was never reached"
            await asyncio.sleep(0.05)
        assert sent == 1
        assert await waiting == "hello"

    driver.play(scenario)
