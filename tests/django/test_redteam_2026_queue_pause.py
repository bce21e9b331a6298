"""Red team (2026): pausing a queue under real workers (threads), retries, delays, reaping, races.

Every test checks the counts: nothing lost, nothing run twice, nothing run
while paused beyond what was already claimed when the pause landed.
"""

from __future__ import annotations

import io
import threading
import time
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.queues.worker import Retry


def q(client, name="jobs"):
    return Queue(name, client=client, prefix="t")


def _start(queues, handler, **kwargs):
    kwargs = {"prefetch": 1, "heartbeat": 0.2, "timeout": 2.0, "shutdown_timeout": 5, **kwargs}
    worker = Worker(queues, handler, **kwargs)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    return worker, thread


def _stop(*pairs):
    for worker, _ in pairs:
        worker.stop()
    for _, thread in pairs:
        thread.join(15)
        assert not thread.is_alive()


def _until(predicate, within=8.0):
    deadline = time.monotonic() + within
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def _settled(count, quiet=1.5, within=8.0):
    """Wait until count() stops changing for ``quiet`` seconds (longer than an idle worker's 1 s
    wait)."""
    deadline = time.monotonic() + within
    last, since = count(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    raise AssertionError(f"still moving after {within} s ({last})")


def test_a_pause_mid_batch_with_prefetch_runs_the_claimed_batch_only(redis_client):
    jobs = q(redis_client)
    jobs.push_many(range(20))
    ran, lock, first, go = [], threading.Lock(), threading.Event(), threading.Event()

    def handler(message):
        with lock:
            ran.append(message.body)
        if message.body == 0:
            first.set()
            assert go.wait(10)

    pair = _start([jobs], handler, prefetch=5)
    try:
        assert first.wait(10)
        assert jobs.depths().processing == 5  # the batch claimed, the first running
        assert jobs.pause("mid-batch") is True
        go.set()
        assert _settled(lambda: len(ran)) == 5  # the batch finished, nothing new claimed
        d = jobs.depths()
        assert d.ready == 15 and d.processing == 0
        jobs.push_many(range(20, 25))
        time.sleep(1.2)
        assert len(ran) == 5
        assert jobs.resume() is True
        assert _until(lambda: len(ran) == 25)
    finally:
        go.set()
        _stop(pair)
    assert sorted(ran) == list(range(25))


def test_many_workers_paused_while_busy_run_at_most_what_they_held(redis_client):
    jobs = q(redis_client)
    total, workers, threads, prefetch = 90, 3, 2, 3
    jobs.push_many(range(total))
    runs, lock = Counter(), threading.Lock()

    def handler(message):
        time.sleep(0.01)
        with lock:
            runs[message.body] += 1

    pairs = [
        _start([jobs], handler, prefetch=prefetch, concurrency=threads) for _ in range(workers)
    ]
    try:
        assert _until(lambda: sum(runs.values()) >= 10)
        jobs.pause("busy")
        at_pause = sum(runs.values())
        after = _settled(lambda: sum(runs.values()))
        assert after - at_pause <= workers * threads * prefetch  # only what was in hand
        d = jobs.depths()
        assert d.processing == 0 and d.ready == total - after
        jobs.resume()
        assert _until(lambda: sum(runs.values()) == total, within=12)
    finally:
        _stop(*pairs)
    assert set(runs) == set(range(total)) and set(runs.values()) == {1}


def test_resume_and_pause_racing_pushes_lose_nothing_and_run_nothing_twice(redis_client):
    jobs = q(redis_client)
    runs, lock = Counter(), threading.Lock()

    def handler(message):
        with lock:
            runs[message.body] += 1

    jobs.pause("start paused")
    pairs = [_start([jobs], handler, prefetch=4, concurrency=2) for _ in range(2)]
    pushed = 300
    pusher_done = threading.Event()

    def pusher():
        other = Queue(
            "jobs",
            client=redis_client.__class__(connection_pool=redis_client.connection_pool),
            prefix="t",
        )
        for i in range(0, pushed, 3):
            other.push_many([i, i + 1, i + 2])
        pusher_done.set()

    threading.Thread(target=pusher, daemon=True).start()
    try:
        while not pusher_done.is_set():
            jobs.resume()
            time.sleep(0.005)
            jobs.pause("again")
        assert jobs.resume() in (True, False)
        jobs.resume()
        assert _until(lambda: sum(runs.values()) == pushed, within=12)
    finally:
        _stop(*pairs)
    assert set(runs) == set(range(pushed)) and set(runs.values()) == {1}
    assert jobs.depths().ready == 0 and jobs.depths().delayed == 0


def test_retries_and_delayed_messages_falling_due_wait_out_the_pause(redis_client):
    jobs = q(redis_client)
    attempts, lock = Counter(), threading.Lock()

    def handler(message):
        with lock:
            attempts[message.body] += 1
            n = attempts[message.body]
        if message.body.startswith("fail") and n == 1:
            jobs.pause("retry storm")  # an operator pauses while the first attempts fail
            raise Retry("try later", delay=0.1)

    jobs.push_many(["fail-1", "fail-2", "fail-3"])
    jobs.push("later-1", delay=0.3)
    jobs.push("later-2", delay=0.3)
    pair = _start([jobs], handler, prefetch=3)
    try:
        assert _until(lambda: attempts["fail-1"] == 1)
        _settled(lambda: sum(attempts.values()))
        # the retries and the delayed messages are due by now, and wait
        assert all(attempts[f"fail-{i}"] == 1 for i in (1, 2, 3))
        assert attempts["later-1"] == attempts["later-2"] == 0
        d = jobs.depths()
        assert d.ready + d.delayed == 5 and d.processing == 0
        jobs.resume()
        assert _until(lambda: sum(attempts.values()) == 3 + 5)
    finally:
        _stop(pair)
    assert attempts == Counter({"fail-1": 2, "fail-2": 2, "fail-3": 2, "later-1": 1, "later-2": 1})


def test_messages_of_a_dead_consumer_reaped_while_paused_wait_for_the_resume(redis_client):
    jobs = q(redis_client)
    jobs.push_many(range(4))
    # a worker that claimed 3 then was SIGKILLed: its consumer stops heartbeating
    dead = jobs.consumer("killed-worker", timeout=0.3)
    claimed, _ = dead.claim(3)
    assert len(claimed) == 3
    jobs.pause("incident")
    runs, lock = Counter(), threading.Lock()

    def handler(message):
        with lock:
            runs[message.body] += 1

    pair = _start([jobs], handler, heartbeat=0.2)  # its beater reaps the dead consumer
    try:
        assert _until(lambda: jobs.depths().processing == 0 and jobs.depths().ready == 4)
        time.sleep(1.2)
        assert sum(runs.values()) == 0  # requeued, and waiting
        jobs.resume()
        assert _until(lambda: sum(runs.values()) == 4)
    finally:
        _stop(pair)
    assert runs == Counter({0: 1, 1: 1, 2: 1, 3: 1})


def test_a_worker_serving_two_queues_goes_on_with_the_other_while_one_is_paused(redis_client):
    a, b = q(redis_client, "a{x}"), q(redis_client, "b|y/z")
    runs, lock = Counter(), threading.Lock()

    def handler(message):
        with lock:
            runs[(message.queue, message.body)] += 1

    a.pause("a only")
    a.push_many(range(5))
    pair = _start([a, b], handler, prefetch=2, concurrency=2)
    try:
        b.push_many(range(5))
        assert _until(lambda: sum(v for (n, _), v in runs.items() if n == "b|y/z") == 5)
        time.sleep(1.2)
        assert not [k for k in runs if k[0] == "a{x}"]
        a.resume()
        assert _until(lambda: sum(runs.values()) == 10)
    finally:
        _stop(pair)
    assert set(runs.values()) == {1}


def test_a_burst_worker_with_prefetch_leaves_a_paused_queue_untouched(redis_client):
    jobs = q(redis_client)
    jobs.push_many(range(7))
    jobs.pause()
    ran = []
    Worker([jobs], lambda m: ran.append(m.body), prefetch=5, burst=True, concurrency=3).run()
    assert ran == [] and jobs.depths().ready == 7
    jobs.resume()
    Worker([jobs], lambda m: ran.append(m.body), prefetch=5, burst=True, concurrency=3).run()
    assert sorted(ran) == list(range(7))


def test_a_pause_lost_with_redis_data_is_documented_and_the_queue_runs_again(redis_servers):
    from pathlib import Path

    from django_redcoord.core.transport.clients import client_from_url

    [server] = redis_servers(1)
    client = client_from_url(server.url)
    jobs = Queue("jobs", client=client, prefix="t")
    jobs.pause("before the restart")
    server.restart()  # no persistence: the data, the pause with it, are gone
    client2 = client_from_url(server.url)
    jobs2 = Queue("jobs", client=client2, prefix="t")
    assert jobs2.paused() is None
    docs = Path(__file__).resolve().parents[2].joinpath("docs", "queues.md").read_text()
    assert "a Redis that loses its data loses the pause too" in docs
    client.close()
    client2.close()


@pytest.mark.parametrize(
    "reason, error",
    [
        (None, TypeError),
        (b"bytes", TypeError),
        (5, TypeError),
        (["x"], TypeError),
        ("x" * 501, ValueError),
    ],
)
def test_bad_reasons_are_refused_and_pause_nothing(redis_client, reason, error):
    jobs = q(redis_client)
    with pytest.raises(error):
        jobs.pause(reason)
    assert jobs.paused() is None


def test_reason_limits_count_characters_not_bytes(redis_client):
    jobs = q(redis_client)
    assert jobs.pause("😀" * 500) is True
    assert jobs.paused()["reason"] == "😀" * 500


@pytest.mark.parametrize("name", ["", "a b", "{x", "x}", "{a}{b}", "x" * 201, "a\nb", "é"])
def test_the_command_refuses_hostile_names_with_a_command_error(redis_client, name):
    for action in ("pause", "resume", "show"):
        with pytest.raises(CommandError):
            call_command("redcoord", "queue", action, name, stdout=io.StringIO())


def test_the_command_escapes_a_reason_that_holds_terminal_controls(redis_client, settings):
    settings.REDCOORD = {**settings.REDCOORD, "KEY_PREFIX": "t"}
    q(redis_client).pause("\x1b[2J\x1b[31mred\u202e\nfake line")
    out = io.StringIO()
    call_command("redcoord", "queue", "show", "jobs", stdout=out)
    text = out.getvalue()
    assert (
        "\x1b" not in text
        and "\u202e" not in text
        and text.count("\n") == 1
        and "\\x1b[31mred" in text
    )


def test_pushes_to_a_paused_queue_wake_one_idle_worker_at_most_and_a_paused_claim_adds_no_wake_up(
    redis_client,
):
    """As docs/queues.md says: a push (or a retry) to a paused queue still wakes one idle worker,
    whose claim answers "paused" (one round trip); the wake-ups never pile up, and the paused
    claim itself wakes nobody, so idle workers block instead of spinning."""
    jobs = q(redis_client)
    jobs.pause("quiet")
    redis_client.delete(jobs.keys.wake)
    jobs.push_many(range(100))
    assert redis_client.llen(jobs.keys.wake) == 1  # one token, not one per push
    redis_client.delete(jobs.keys.wake)  # (taken by an idle worker's BLPOP)
    messages, hint = jobs.consumer("c").claim(10)
    assert messages == [] and hint is None and redis_client.llen(jobs.keys.wake) == 0
