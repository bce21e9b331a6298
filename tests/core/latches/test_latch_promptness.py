"""Latch and barrier wake-ups are prompt (one wake stream per primitive, issue 31 defect 27):
every waiter blocks in chunks of up to 10 s, so a wake-up that only came by a re-check
would take seconds; the bounds below catch it."""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.exceptions import BarrierBroken, LatchBroken
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.transport.clients import client_from_url


class Waiter:
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


def _until(condition, bound: float = 20.0) -> None:
    end = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < end, "the waiters did not all start waiting"
        time.sleep(0.02)


@pytest.fixture
def client(redis_url):
    c = client_from_url(redis_url)
    yield c
    c.close()


def _late(waiters, since: float) -> list[float]:
    for w in waiters:
        w.thread.join(max(0.01, since + 2 - time.monotonic()))
    return sorted(round(w.when - since, 3) if w.when else 99.0 for w in waiters)


@pytest.mark.parametrize("how", ["open", "abort"])
def test_a_latch_opening_or_breaking_wakes_thirty_waiters_within_a_second(client, how):
    latch = CountDownLatch(f"prompt-{how}", 1, client=client)
    waiters = [
        Waiter(lambda: CountDownLatch(f"prompt-{how}", 1, client=client).wait(30))
        for _ in range(30)
    ]
    _until(lambda: latch.state()["waiters"] == 30)
    time.sleep(0.2)
    at = time.monotonic()
    latch.count_down() if how == "open" else latch.abort("stop")
    late = _late(waiters, at)
    if how == "open":
        assert all(w.result is True for w in waiters), [w.error for w in waiters if w.error][:1]
    else:
        assert all(isinstance(w.error, LatchBroken) for w in waiters)
    assert late[-1] < 1.0, late[-5:]


def test_the_last_arrival_trips_a_barrier_of_twenty_within_a_second(client):
    parties = [
        Waiter(lambda: Barrier("prompt-barrier", 20, client=client).wait(30)) for _ in range(19)
    ]
    barrier = Barrier("prompt-barrier", 20, client=client)
    _until(lambda: len(barrier.state()["waiting"]) == 19)
    time.sleep(0.2)
    at = time.monotonic()
    assert barrier.wait(5) == 19
    late = _late(parties, at)
    assert sorted(p.result for p in parties) == list(range(19)), [
        p.error for p in parties if p.error
    ][:1]
    assert late[-1] < 1.0, late[-5:]


def test_a_barrier_reset_breaks_every_waiting_party_within_a_second(client):
    parties = [
        Waiter(lambda: Barrier("prompt-reset", 10, client=client).wait(30)) for _ in range(5)
    ]
    barrier = Barrier("prompt-reset", 10, client=client)
    _until(lambda: len(barrier.state()["waiting"]) == 5)
    time.sleep(0.2)
    at = time.monotonic()
    barrier.reset()
    late = _late(parties, at)
    assert all(isinstance(p.error, BarrierBroken) for p in parties)
    assert late[-1] < 1.0, late[-5:]
