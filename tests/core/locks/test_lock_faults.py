"""Lock safety with real OS processes and real signals (SIGKILL, SIGSTOP).

The overlap detector counts, inside each critical section, how many holders
are inside at once (an INCR/DECR pair on a separate key) and keeps a counter
with a deliberately non-atomic read-modify-write: with mutual exclusion the
counter equals the number of acquisitions, without it updates are lost. The
negative control runs the same detector over a naive GET-then-SET "lock" and
must catch overlaps.
"""

import signal
import time

import pytest

from django_redcoord.core.exceptions import CoordinationUnavailable, LockLost
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.dashboard import list_locks

from ...support import multiproc

PREFIX = "faults"


class NaiveLock:
    """Deliberately unsafe: check, then set (two round trips, no NX, no token)."""

    def __init__(self, name, client):
        self.key, self.client = f"naive:{name}", client

    def acquire(self):
        while True:
            if not self.client.get(self.key):
                time.sleep(0.0005)  # the window between check and set
                self.client.set(self.key, 1, px=5000)
                return True
            time.sleep(0.0005)

    def release(self):
        self.client.delete(self.key)


def contend(index, url, name, seconds, unsafe):
    client = client_from_url(url)
    lock = (
        NaiveLock(name, client)
        if unsafe
        else Lock(name, ttl=10, wait=None, client=client, prefix=PREFIX)
    )
    acquisitions = overlaps = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        lock.acquire()
        if client.incr("detector:inside") > 1:
            overlaps += 1
        value = int(client.get("detector:counter") or 0)  # non-atomic on purpose
        time.sleep(0.0002)
        client.set("detector:counter", value + 1)
        client.decr("detector:inside")
        acquisitions += 1
        lock.release()
    return acquisitions, overlaps


def _run_contention(redis_url, redis_client, unsafe, seconds):
    results = multiproc.run_in_processes(
        contend, 8, redis_url, "contended", seconds, unsafe, timeout=seconds + 60
    )
    acquisitions = sum(a for a, _ in results)
    overlaps = sum(o for _, o in results)
    counter = int(redis_client.get("detector:counter"))
    return results, acquisitions, overlaps, counter


def test_eight_processes_contending_never_overlap(redis_url, redis_client):
    results, acquisitions, overlaps, counter = _run_contention(redis_url, redis_client, False, 3.0)
    assert overlaps == 0
    assert counter == acquisitions
    assert acquisitions > 200
    assert min(a for a, _ in results) > 0, f"a process starved: {results}"


def test_negative_control_the_detector_catches_an_unsafe_lock(redis_url, redis_client):
    _, acquisitions, overlaps, counter = _run_contention(redis_url, redis_client, True, 1.5)
    assert overlaps > 0 or counter != acquisitions, "the detector failed to catch an unsafe lock"


def hold_until_killed(index, url, ttl, ready):
    lock = Lock("crash", ttl=ttl, wait=0, client=client_from_url(url), prefix=PREFIX)
    assert lock.acquire()
    ready.put(lock.token)
    time.sleep(120)


def wait_for_lock(index, url, wait, queued):
    lock = Lock("crash", ttl=5, wait=wait, client=client_from_url(url), prefix=PREFIX)
    queued.put(time.monotonic())
    ok = lock.acquire()
    return ok, time.monotonic(), lock.token


def test_sigkilled_holder_loses_the_lock_to_a_waiter_within_ttl_plus_one_second(redis_url):
    ttl = 2.0
    ready, queued = multiproc.queue(), multiproc.queue()
    holder = multiproc.start(hold_until_killed, redis_url, ttl, ready)
    waiter = None
    try:
        first_token = ready.get(timeout=10)
        waiter = multiproc.start(wait_for_lock, redis_url, 10.0, queued)
        queued.get(timeout=10)
        time.sleep(0.2)
        killed_at = time.monotonic()
        holder.kill()
        ok, acquired_at, token = waiter.result(timeout=20)
        assert ok
        assert acquired_at - killed_at <= ttl + 1.0
        assert token > first_token
    finally:
        holder.stop()
        if waiter:
            waiter.stop()


def paused_holder(index, url, ttl, report, go_release):
    lock = Lock("paused", ttl=ttl, wait=0, client=client_from_url(url), prefix=PREFIX)
    assert lock.acquire()
    report.put(lock.token)
    go_release.wait(60)
    lost_flag = lock.lost
    try:
        lock.release()
    except LockLost:
        return "LockLost", lost_flag
    return "released", lost_flag


def test_sigstopped_holder_past_its_ttl_gets_lock_lost_and_spares_the_next_holder(
    redis_url, redis_client
):
    ttl = 1.0
    report, go = multiproc.queue(), multiproc.event()
    first = multiproc.start(paused_holder, redis_url, ttl, report, go)
    try:
        first_token = report.get(timeout=10)
        first.signal(signal.SIGSTOP)
        time.sleep(ttl + 0.5)
        second = Lock("paused", ttl=30, wait=5, client=redis_client, prefix=PREFIX)
        assert second.acquire()
        first.signal(signal.SIGCONT)
        go.set()
        outcome, lost_flag = first.result(timeout=20)
        assert outcome == "LockLost"
        assert lost_flag, "the stalled holder could have known from lock.lost before acting"
        assert second.owned() and second.ttl_remaining() > 25
        tokens = [first_token, second.token]
        second.release()
        for _ in range(3):
            with Lock("paused", wait=5, client=redis_client, prefix=PREFIX) as later:
                tokens.append(later.token)
        assert all(a < b for a, b in zip(tokens, tokens[1:], strict=False)), (
            f"fencing tokens not strictly increasing: {tokens}"
        )
    finally:
        first.stop()


def long_job(index, url, ttl, started):
    lock = Lock("job", ttl=ttl, wait=0, auto_renew=True, client=client_from_url(url), prefix=PREFIX)
    assert lock.acquire()
    started.put(lock.token)
    time.sleep(3 * ttl)
    lost = lock.lost
    lock.release()
    return lost


def test_auto_renew_keeps_the_lock_of_a_job_running_three_ttls(redis_url, redis_client):
    ttl = 1.0
    started = multiproc.queue()
    job = multiproc.start(long_job, redis_url, ttl, started)
    try:
        started.get(timeout=10)
        stolen = 0
        end = time.monotonic() + 2.5 * ttl
        while time.monotonic() < end:
            other = Lock("job", wait=0, client=redis_client, prefix=PREFIX)
            if other.acquire():
                stolen += 1
                other.release()
            time.sleep(0.1)
        assert stolen == 0
        assert job.result(timeout=20) is False
    finally:
        job.stop()


def test_auto_renew_reports_lost_when_renewal_is_blocked(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.3, connect_timeout=0.3)
    seen = []
    lock = Lock(
        "blocked",
        ttl=1.0,
        wait=0,
        auto_renew=True,
        client=client,
        prefix=PREFIX,
        on_lost=seen.append,
    )
    assert lock.acquire()
    server.pause()  # renewals time out; the lock expires by the server's clock
    try:
        time.sleep(2.0)
    finally:
        server.resume()
    deadline = time.monotonic() + 3
    while not seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen == [lock] and lock.lost
    with pytest.raises(LockLost):
        lock.release()
    assert not lock.locked()


# -- hardening: faults the first version did not survive ---------------------------------


def test_a_release_that_fails_stops_the_renewal_so_the_lock_expires(redis_servers):
    """A release hit by a Redis blip must not leave an auto-renewed lock renewed
    for as long as the Lock object lives (nobody else could ever take it)."""
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.3, connect_timeout=0.3)
    lock = Lock("blip", ttl=1.0, wait=0, auto_renew=True, client=client, prefix=PREFIX)
    assert lock.acquire()
    server.pause()
    try:
        with pytest.raises(CoordinationUnavailable):
            lock.release()
    finally:
        server.resume()
    assert not lock.held  # the hold ended here; the object is usable again
    other = Lock("blip", ttl=5, wait=3, client=client_from_url(server.url), prefix=PREFIX)
    started = time.monotonic()
    assert other.acquire()  # within the TTL: nobody renews it any more
    assert time.monotonic() - started < 2.5
    other.release()
    assert lock.acquire() and lock.owned()  # not wedged
    lock.release()


def test_fencing_tokens_keep_growing_when_redis_loses_its_data(redis_servers):
    """A restart without persistence (or a failover to an empty replica, or
    eviction) must not restart the tokens: a fenced writer would refuse every
    write until the counter climbed back."""
    server = redis_servers(1)[0]
    before = []
    for _ in range(3):
        with Lock(
            "fenced", ttl=5, wait=1, client=client_from_url(server.url), prefix=PREFIX
        ) as lock:
            before.append(lock.token)
    server.restart()  # no persistence: every key is gone
    assert client_from_url(server.url).dbsize() == 0
    with Lock("fenced", ttl=5, wait=1, client=client_from_url(server.url), prefix=PREFIX) as lock:
        after = lock.token
    assert before == sorted(set(before)) and after > before[-1]


def test_a_lock_object_shared_by_threads_never_lets_two_of_them_in(redis_client):
    """A module-level Lock used by every request thread: threads take turns."""
    lock = Lock("shared-object", ttl=10, wait=10, client=redis_client, prefix=PREFIX)
    inside, overlaps, entries, errors = [0], [0], [0], []
    guard = __import__("threading").Lock()

    def worker():
        try:
            for _ in range(20):
                with lock:
                    with guard:
                        inside[0] += 1
                        overlaps[0] += inside[0] > 1
                    time.sleep(0.0005)
                    with guard:
                        inside[0] -= 1
                        entries[0] += 1
        except Exception as exc:
            errors.append(repr(exc))

    threads = [__import__("threading").Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and overlaps[0] == 0 and entries[0] == 160
    assert not lock.locked()


def _child_of_a_holder(index, reentrant_lock, plain_lock):
    from django_redcoord.core.exceptions import LockNotOwned

    took_reentrant = reentrant_lock.acquire(wait=0)  # the parent holds it: not ours to nest into
    try:
        plain_lock.release()
        released = True
    except LockNotOwned:
        released = False
    return took_reentrant, plain_lock.held, released


def test_a_forked_child_holds_nothing_its_parent_held(redis_url):
    client = client_from_url(redis_url)
    reentrant = Lock("forked-r", ttl=10, wait=0, reentrant=True, client=client, prefix=PREFIX)
    plain = Lock("forked-p", ttl=10, wait=0, client=client, prefix=PREFIX)
    assert reentrant.acquire() and plain.acquire()
    took, held, released = multiproc.start(_child_of_a_holder, reentrant, plain).result()
    assert (took, held, released) == (False, False, False)
    assert reentrant.owned() and plain.owned()  # the child touched neither
    assert reentrant.holder()["depth"] == 1  # no nesting into the parent's hold
    reentrant.release()
    plain.release()


def test_an_interrupted_wait_gives_back_its_place_and_any_grant(redis_client):
    """KeyboardInterrupt (or any BaseException) while waiting: the waiter leaves
    the queue, so the holder's release does not hand the lock to nobody."""
    holder = Lock("interrupted", ttl=30, wait=0, client=redis_client, prefix=PREFIX)
    assert holder.acquire()
    waiter = Lock("interrupted", ttl=30, wait=10, client=redis_client, prefix=PREFIX)
    previous = signal.signal(signal.SIGALRM, _raise_keyboard_interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            waiter.acquire()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert redis_client.llen(holder.keys.queue) == 0
    holder.release()
    assert not holder.locked()  # nobody was handed it
    assert waiter.acquire(wait=0)  # and the interrupted object works again
    waiter.release()


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt


def test_a_name_no_longer_used_leaves_nothing_behind(redis_client):
    """A crashed holder's lock expires with its TTL; its index entry is dead once
    its bound (expiry + ttl, whole seconds) has passed, is not listed, and fresh grants in its
    bucket prune it (one in eight looks at a random entry: within 300 grants, surely). A released
    lock leaves its last fence for a minute."""
    crashed = Lock("gone:1", ttl=0.2, wait=0, client=redis_client, prefix=PREFIX)
    bucket = crashed.keys.index
    neighbour = next(  # another name in the same index bucket
        n
        for n in (f"gone:{i}" for i in range(2, 10_000))
        if KeyBuilder(PREFIX).lock(n).index == bucket
    )
    assert crashed.acquire()  # never released
    assert redis_client.hexists(bucket, "gone:1")
    time.sleep(1.5)  # past its bound: expiry + ttl, rounded up to whole seconds
    assert redis_client.exists(crashed.keys.lock) == 0  # expired with its TTL
    assert (
        list_locks(redis_client, KeyBuilder(PREFIX), now_ms=int(time.time() * 1000))["total"] == 0
    )
    for grants in range(1, 301):  # noqa: B007 (reported below)
        with Lock(neighbour, ttl=5, wait=0, client=redis_client, prefix=PREFIX):
            listed = {m.decode() for m in redis_client.hkeys(bucket)}
        if listed == {neighbour}:
            break
    assert listed == {neighbour}, f"the dead entry is still there after {grants} grants"
    assert redis_client.hlen(bucket) == 0  # released: its own entry went too
    keys = {k.decode() for k in redis_client.scan_iter(f"{PREFIX}:*")}
    assert keys == {KeyBuilder(PREFIX).lock(neighbour).lock}, keys  # the tombstone only
    assert Lock(neighbour, client=redis_client, prefix=PREFIX).holder() is None
    assert 0 < redis_client.pttl(KeyBuilder(PREFIX).lock(neighbour).lock) <= 60_000
