"""Wake-ups are prompt: a waiter never waits for its re-check chunk to learn what happened.

Signals, events (and latches, barriers: tests/core/latches) wake their waiters
through one wake stream per primitive (issue 31, defect 27: no script writes a
key it did not declare). Every waiter here blocks in chunks of up to 10 s (the
default ``max_block``), so a wake-up that only arrived by a re-check would take
seconds: the bounds below (0.5 s, 1 s) catch it.
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.signals import Event, Signal
from django_redcoord.core.transport.clients import client_from_url

from ...support.redis_servers import blocked_clients


class Waiter:
    """``call`` run in a thread; when it returned (time.monotonic()) and what."""

    def __init__(self, call) -> None:
        self.result, self.error, self.when = None, None, None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # the test looks at it
            self.error = exc
        self.when = time.monotonic()


def _until(condition, bound: float = 10.0) -> None:
    end = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < end, "the waiters did not all start waiting"
        time.sleep(0.02)


def _blocked(client) -> int:
    return blocked_clients(client.connection_pool.connection_kwargs["port"])


@pytest.fixture
def client(redis_url):
    c = client_from_url(redis_url)
    yield c
    c.close()


def test_send_wakes_the_oldest_of_five_waiters_within_half_a_second_and_broadcast_the_rest(client):
    before = _blocked(client)
    sender = Signal("prompt", client=client)
    waiters = []
    for i in range(5):
        waiters.append(Waiter(lambda: Signal("prompt", client=client).wait(30)))
        _until(lambda n=i + 1: client.llen(sender.keys.waiters) == n)  # queued in this order
        time.sleep(0.05)
    _until(lambda: _blocked(client) - before >= 5)
    sent = time.monotonic()
    assert sender.send("first") == 1
    for w in waiters:
        w.thread.join(0.5 if w is waiters[0] else 0.01)
    assert waiters[0].result == "first" and waiters[0].when - sent < 0.5, (
        waiters[0].result,
        waiters[0].when,
    )
    time.sleep(0.3)
    assert [w.when for w in waiters[1:]] == [None] * 4, "send() woke more than one waiter"
    _until(lambda: _blocked(client) - before >= 4)
    sent = time.monotonic()
    assert sender.broadcast("all") == 4
    for w in waiters[1:]:
        w.thread.join(1.0)
    late = [round(w.when - sent, 3) if w.when else None for w in waiters[1:]]
    assert all(w.result == "all" for w in waiters[1:]), [(w.result, w.error) for w in waiters[1:]]
    assert all(t is not None and t < 0.5 for t in late), late


def test_five_sends_reach_five_waiters_in_turn_each_within_half_a_second(client):
    """Each send wakes the oldest waiter then; the others, woken by an entry naming another,
    block again."""
    before = _blocked(client)
    sender = Signal("turns", client=client)
    waiters = []
    for i in range(5):
        waiters.append(Waiter(lambda: Signal("turns", client=client).wait(30)))
        _until(lambda n=i + 1: client.llen(sender.keys.waiters) == n)
        time.sleep(0.05)
    for i, w in enumerate(waiters):
        _until(lambda n=5 - i: _blocked(client) - before >= n)
        sent = time.monotonic()
        assert sender.send(i) == 1
        w.thread.join(1.0)
        assert w.result == i and w.when - sent < 0.5, (i, w.result, w.when and w.when - sent)


def test_an_event_set_wakes_fifty_waiters_within_a_second(client):
    before = _blocked(client)
    event = Event("prompt-event", client=client)
    waiters = [Waiter(lambda: Event("prompt-event", client=client).wait(30)) for _ in range(50)]
    _until(
        lambda: client.zcard(event.keys.waiters) == 50 and _blocked(client) - before >= 50, bound=30
    )
    set_at = time.monotonic()
    assert event.set() == 50
    for w in waiters:
        w.thread.join(max(0.01, set_at + 2 - time.monotonic()))
    late = sorted(round(w.when - set_at, 3) for w in waiters if w.when)
    assert len(late) == 50 and all(w.result is True for w in waiters), (
        len(late),
        [w.error for w in waiters if w.error][:1],
    )
    assert late[-1] < 1.0, late[-5:]


def test_negative_control_a_waiter_that_misses_its_wake_up_is_late(client):
    """The bounds can fail: a waiter whose wake-up entry is gone (the stream deleted between its
    look and its block, as a failover may lose it) learns only at its chunk's end."""
    event = Event("prompt-missed", client=client)
    waiter = Waiter(lambda: Event("prompt-missed", client=client).wait(30))
    _until(lambda: client.zcard(event.keys.waiters) == 1)
    time.sleep(0.2)
    client.hset(event.keys.state, mapping={"set": "1", "gen": "1"})  # set, without the wake-up
    set_at = time.monotonic()
    waiter.thread.join(0.5)
    assert waiter.when is None, "woken without a wake-up: the promptness checks above prove nothing"
    event.set()  # a real set ends it at once
    waiter.thread.join(1.0)
    assert waiter.result is True and waiter.when - set_at < 1.5
