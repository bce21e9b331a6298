"""Workers in real OS processes, killed with real signals: nothing is lost.

Each job records its completion with HINCRBY completions <n> 1, so the test
can count jobs done zero times (lost), once, or more (duplicates).
"""

import os
import signal
import time

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc

PREFIX = "wf"


def work(index, url, name, prefetch, slow):
    client = client_from_url(url)
    queue = Queue(name, client=client, prefix=PREFIX, max_attempts=1000)

    def handler(message):
        body = message.body
        client.set(f"started:{body['n']}", message.attempt)
        if slow:
            time.sleep(slow)
        client.hincrby("completions", body["n"], 1)

    worker = Worker(
        [queue], handler, prefetch=prefetch, heartbeat=0.2, timeout=1.0, shutdown_timeout=5
    )
    signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    stats = worker.run()
    return stats.ok, stats.handed_back


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_worker_killed_mid_job_the_job_is_redelivered_and_completed(redis_url, redis_client):
    Queue("slow", client=redis_client, prefix=PREFIX).push({"n": 1})
    first = multiproc.start(work, redis_url, "slow", 1, 3.0)
    second = None
    try:
        wait_until(lambda: redis_client.exists("started:1"), 10, "the job to start")
        first.kill()
        second = multiproc.start(work, redis_url, "slow", 1, 0.01)
        wait_until(
            lambda: redis_client.hget("completions", 1), 15, "the redelivered job to complete"
        )
        assert redis_client.hget("completions", 1) == b"1"
        assert redis_client.get("started:1") == b"1"  # second delivery, attempt counted
    finally:
        first.stop()
        if second:
            second.stop()


def test_twenty_thousand_jobs_survive_a_worker_killed_every_second(redis_url, redis_client):
    total, prefetch = 20_000, 32
    # Each kill counts a failed delivery for the messages the victim held; a
    # message caught in several kills must not run out of attempts here.
    queue = Queue("bulk", client=redis_client, prefix=PREFIX, max_attempts=1000)
    queue.push_many({"n": i} for i in range(total))
    # half a millisecond of work per job keeps the run several seconds long,
    # so the victim is killed several times mid-stream
    stable = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=0)
    victim = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=1)
    kills = 0
    try:
        deadline = time.monotonic() + 100  # below pytest-timeout, for a clear message
        while redis_client.hlen("completions") < total:
            assert time.monotonic() < deadline, (
                f"only {redis_client.hlen('completions')} of {total} jobs done"
            )
            time.sleep(1.0)
            if redis_client.hlen("completions") < total:
                victim.kill()
                kills += 1
                victim = multiproc.start(work, redis_url, "bulk", prefetch, 0.0005, index=1)
    finally:
        stable.stop()
        victim.stop()
    counts = [int(v) for v in redis_client.hvals("completions")]
    duplicates = sum(counts) - total
    assert len(counts) == total and min(counts) >= 1, "a job was lost"
    assert queue.depths().dead == 0
    assert kills >= 3
    assert duplicates <= kills * prefetch, (
        f"{duplicates} duplicates for {kills} kills x prefetch {prefetch}"
    )
    print(f"\n20k jobs: {kills} kills, {duplicates} duplicate runs (bound {kills * prefetch})")


def test_sigterm_finishes_the_job_in_hand_and_hands_back_the_rest(redis_url, redis_client):
    queue = Queue("graceful", client=redis_client, prefix=PREFIX)
    queue.push_many({"n": i} for i in range(10))
    proc = multiproc.start(work, redis_url, "graceful", 10, 0.5)
    try:
        wait_until(lambda: redis_client.exists("started:0"), 10, "the first job")
        proc.signal(signal.SIGTERM)
        done, handed_back = proc.result(timeout=10)
        assert proc.process.exitcode == 0
    finally:
        proc.stop()
    d = queue.depths()
    assert done == 1 and handed_back == 9
    assert (d.ready, d.processing, d.consumers) == (9, 0, 0)
    assert redis_client.hlen("completions") == 1
    assert os.getpid()  # the test process itself was never signalled


def test_a_worker_draining_a_long_job_after_sigterm_is_not_reaped_by_another(
    redis_url, redis_client
):
    # The job has about 3 s left when SIGTERM arrives: far past WORKER_TIMEOUT (1 s) + one
    # heartbeat, the time after which a worker that stopped beating is reaped. The draining
    # worker must keep beating until its job ends, or the other worker's reaper runs the job a
    # second time while the first run is still going.
    queue = Queue("drain", client=redis_client, prefix=PREFIX)
    queue.push({"n": 1})
    first = multiproc.start(work, redis_url, "drain", 1, 4.0)
    second = None
    try:
        wait_until(lambda: redis_client.exists("started:1"), 10, "the job to start")
        second = multiproc.start(work, redis_url, "drain", 1, 0.01)
        time.sleep(1.0)  # the second worker is up and reaping
        first.signal(signal.SIGTERM)
        done, handed_back = first.result(timeout=15)
        assert first.process.exitcode == 0
        time.sleep(1.5)  # a reap that happened during the drain would have run it by now
        assert (done, handed_back) == (1, 0)
        assert redis_client.hget("completions", 1) == b"1"  # once: never redelivered
        assert redis_client.get("started:1") == b"0"  # the first delivery (attempts count from 0)
    finally:
        first.stop()
        if second is not None:
            second.stop()


# -- hardening: a worker survives every outage, and never exits 0 half-dead ----------------


def _run_worker_process(url, *args, socket_timeout="0.5"):
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.worker_settings",
        "REDCOORD_REDIS_URL": url,
        "REDCOORD_KEY_PREFIX": "test",
        "REDCOORD_SOCKET_TIMEOUT": socket_timeout,
        "REDCOORD_CONNECT_TIMEOUT": "0.5",
        "DEMO_DB_PATH": ":memory:",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", *args],
        cwd=Path(__file__).resolve().parents[3],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        text=True,
    )


def _enqueue_and_wait(url, n, label, timeout=20):
    """Push n task messages the way the Tasks backend does and wait for every result."""
    from django.test import override_settings

    from ...support import task_defs

    with override_settings(REDCOORD={"URL": url, "KEY_PREFIX": "test"}):
        results = [task_defs.add.enqueue(i, 1) for i in range(n)]
        deadline = time.monotonic() + timeout
        for result in results:
            while not result.is_finished:
                assert time.monotonic() < deadline, (
                    f"{label}: a task was never run ({result.status})"
                )
                time.sleep(0.05)
                result.refresh()
        return [r.return_value for r in results]


def test_an_idle_run_worker_survives_pauses_and_restarts_of_redis(redis_servers):
    """Idle, SOCKET_TIMEOUT 0.5 s: it must not exit (with status 0) on a healthy
    Redis, nor when Redis pauses longer than the socket timeout or restarts."""
    server = redis_servers(1)[0]
    proc = _run_worker_process(server.url)
    try:
        time.sleep(3.0)
        assert proc.poll() is None, proc.communicate()[0]
        assert _enqueue_and_wait(server.url, 3, "healthy") == [1, 2, 3]
        server.pause()
        time.sleep(3.0)  # six socket timeouts
        server.resume()
        assert proc.poll() is None, proc.communicate()[0]
        assert _enqueue_and_wait(server.url, 3, "after a pause") == [1, 2, 3]
        server.restart()  # no persistence: an empty server
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()[0]
        assert _enqueue_and_wait(server.url, 3, "after a restart") == [1, 2, 3]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_a_worker_thread_that_dies_stops_the_worker_with_a_non_zero_exit(redis_servers):
    """A fault no loop can retry (here the workers index is a string: WRONGTYPE):
    the process must exit non-zero with the reason, so a supervisor restarts it."""
    server = redis_servers(1)[0]
    client_from_url(server.url).set("test:index:workers", "not a sorted set")
    proc = _run_worker_process(server.url)
    try:
        assert proc.wait(20) != 0
        output = proc.communicate()[0]
        assert "WRONGTYPE" in output and "died" in output, output
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_a_nack_that_fails_does_not_strand_the_rest_of_the_batch(redis_servers):
    """The first job fails while Redis is paused: its nack cannot be sent. The
    rest of the batch must still run, and the nack must land afterwards."""
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.3)
    queue = Queue("blip", client=client, prefix=PREFIX)
    queue.push_many({"n": i} for i in range(6))
    ran = []

    def handler(message):
        n, attempt = message.body["n"], message.attempt
        ran.append((n, attempt))
        if n == 0 and attempt == 0:
            server.pause()  # the nack of this failure times out
            raise RuntimeError("first attempt fails")
        if n == 1:
            server.resume()

    worker = Worker([queue], handler, prefetch=6, heartbeat=0.2, timeout=2.0, shutdown_timeout=5)
    import threading

    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while (0, 1) not in ran and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        server.resume()
        worker.stop()
        thread.join(15)
    assert sorted(n for n, a in ran if a == 0) == [0, 1, 2, 3, 4, 5]  # the whole batch ran
    assert (0, 1) in ran  # the failed one was retried: its nack landed
    d = queue.depths()
    assert (d.ready, d.delayed, d.processing, d.dead) == (0, 0, 0, 0)


def test_unreadable_messages_and_ids_with_every_allowed_character_never_stop_a_worker(
    redis_url, redis_client
):
    from django_redcoord.core.queues.messages import PUSH as _PUSH

    hostile = "id|with,every:char/@=+#~._-"
    queue = Queue("h|o,s:t/i@l=e+#~._-", client=redis_client, prefix=PREFIX)
    queue.push({"n": 1}, id=hostile)
    queue.push({"n": 2}, id=hostile + "|delayed", delay=0.05)
    # A body that is not JSON and one nested deeper than any decoder takes,
    # as another producer (or a damaged write) could leave them.
    now = int(time.time() * 1000)
    for mid, body in (("bad|json", "{not json"), ("deep", "[" * 100_000 + "]" * 100_000)):
        _PUSH(
            redis_client,
            queue._push_keys,
            ["", "0", 0, 0, f"0|3|{now}|0|0|{mid}\n{body}", 0, 0],
            operation="test",
        )
    time.sleep(0.1)
    seen = []
    worker = Worker(
        [queue], lambda m: seen.append((m.id, m.body)), burst=True, heartbeat=0.2, timeout=1.0
    )
    stats = worker.run()
    assert sorted(seen) == [(hostile, {"n": 1}), (hostile + "|delayed", {"n": 2})]
    assert stats.ok == 2 and stats.dead == 2
    dead = {m.id: e["error"] for m, e in queue.dead_letters()}
    assert set(dead) == {"bad|json", "deep"} and all("unreadable" in e for e in dead.values())


def test_killed_workers_leave_the_index_ten_minutes_after_their_last_beat(redis_client):
    from django_redcoord.core.keys import KeyBuilder
    from django_redcoord.dashboard import list_workers

    keys = KeyBuilder(PREFIX)
    now_ms = int(time.time() * 1000)
    redis_client.zadd(
        keys.workers("killed-long-ago"),
        {"killed-long-ago": now_ms - 601_000, "killed-just-now": now_ms - 5_000},
    )
    queue = Queue("beats", client=redis_client, prefix=PREFIX)
    Worker(
        [queue], lambda m: None, burst=True, heartbeat=0.2, timeout=1.0
    ).run()  # beats once at least
    listed = {w["id"]: w["dead"] for w in list_workers(redis_client, keys, now_ms=now_ms)}
    assert listed == {"killed-just-now": True}
    assert redis_client.zscore(keys.workers("killed-long-ago"), "killed-long-ago") is None


def _stop_after(worker, seconds):
    import threading

    timer = threading.Timer(seconds, worker.stop)
    timer.start()
    return timer


def test_an_idle_worker_stops_at_once_when_redis_is_down(redis_servers):
    (server,) = redis_servers(1)
    queue = Queue("idle", client=client_from_url(server.url), prefix=PREFIX)
    server.stop()
    worker = Worker([queue], lambda m: None, heartbeat=0.2, timeout=1.0, shutdown_timeout=10)
    _stop_after(worker, 1.0)
    started = time.monotonic()
    worker.run()
    # nothing was in hand: its retirement is not worth the 10 s shutdown timeout
    assert time.monotonic() - started < 4.0


def test_a_worker_that_owes_an_acknowledgement_still_tries_until_its_shutdown_timeout(
    redis_servers,
):
    (server,) = redis_servers(1)
    client = client_from_url(server.url)
    queue = Queue("owes", client=client, prefix=PREFIX)
    queue.push({"n": 1})
    ran = []

    def handler(message):
        ran.append(message.body["n"])
        server.stop()  # the acknowledgement can no longer be sent
        worker.stop()

    worker = Worker([queue], handler, heartbeat=0.2, timeout=1.0, shutdown_timeout=1.5)
    started = time.monotonic()
    worker.run()
    assert ran == [1]
    assert time.monotonic() - started >= 1.4  # it tried to land the acknowledgement
