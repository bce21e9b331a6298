"""Lock semantics in one process (threads where waiting is needed), real Redis."""

import math
import os
import secrets
import threading
import time

import pytest

from django_redcoord.core.exceptions import LockError, LockLost, LockNotAcquired, LockNotOwned
from django_redcoord.core.locks import Lock

from ...support.multiproc import run_python_without_settings


def make(client, name="res", **kwargs):
    kwargs.setdefault("wait", 0)
    return Lock(name, client=client, prefix="t", **kwargs)


def test_acquire_records_holder_metadata_and_the_admin_index(redis_client):
    lock = make(redis_client, ttl=5)
    assert lock.acquire()
    holder = lock.holder()
    assert (
        holder["fence"] == lock.token > 0
        and holder["depth"] == 1
        and holder["token"] == lock._owner
    )
    assert holder["pid"] == os.getpid() and holder["host"] and holder["thread"] == "MainThread"
    now_ms = time.time() * 1000
    assert now_ms + 4000 < holder["expires_ms"] <= now_ms + 5100
    # the index entry bounds the expiry (expiry + ttl, in seconds), so handoffs rarely rewrite it
    assert int(redis_client.hget(lock.keys.index, "res")) == math.ceil(
        (holder["expires_ms"] + 5000) / 1000
    )
    assert 4.5 < lock.ttl_remaining() <= 5 and lock.locked() and lock.owned()
    lock.release()
    assert not lock.locked() and lock.ttl_remaining() is None
    assert redis_client.hget(lock.keys.index, "res") is None
    # a released lock leaves only its last fence, for a minute
    assert (
        redis_client.get(lock.keys.lock) is not None
        and 0 < redis_client.pttl(lock.keys.lock) <= 60_000
    )


def test_second_owner_cannot_take_a_held_lock(redis_client):
    a, b = make(redis_client), make(redis_client)
    assert a.acquire()
    assert not b.acquire()
    assert b.retry_after and b.retry_after <= 30
    assert not b.owned() and b.token is None
    a.release()
    assert b.acquire()
    b.release()


def test_release_after_expiry_raises_lock_lost_and_spares_the_new_holder(redis_client):
    a = make(redis_client, ttl=0.2)
    b = make(redis_client, ttl=5)
    assert a.acquire()
    time.sleep(0.3)
    assert a.lost
    assert b.acquire()
    with pytest.raises(LockLost, match="'res' was lost before release"):
        a.release()
    assert b.owned()
    assert not a.held
    b.release()


def test_extend_after_expiry_raises_lock_lost(redis_client):
    a, b = make(redis_client, ttl=0.2), make(redis_client, ttl=5)
    assert a.acquire()
    time.sleep(0.3)
    assert b.acquire()
    with pytest.raises(LockLost, match="could not be extended"):
        a.extend()
    assert b.owned() and b.ttl_remaining() > 4
    b.release()


def test_extend_resets_the_ttl(redis_client):
    lock = make(redis_client, ttl=1)
    lock.acquire()
    lock.extend(10)
    assert 9 < lock.ttl_remaining() <= 10 and not lock.lost
    lock.release()


def test_fencing_tokens_strictly_increase_across_holders_and_expiry(redis_client):
    tokens = []
    for _ in range(3):
        lock = make(redis_client, ttl=0.05)
        assert lock.acquire()
        tokens.append(lock.token)
        lock.release()
    lock = make(redis_client, ttl=0.05)
    lock.acquire()
    tokens.append(lock.token)
    time.sleep(0.1)  # expires without release
    other = make(redis_client)
    other.acquire()
    tokens.append(other.token)
    assert tokens == sorted(set(tokens)) and len(tokens) == 5


def test_blocking_acquire_is_woken_by_release_not_by_polling(redis_client):
    holder = make(redis_client, ttl=30)
    holder.acquire()
    releaser = threading.Timer(0.3, holder.release)
    releaser.start()
    waiter = make(redis_client, wait=5)
    calls_before = _calls(redis_client)
    started = time.monotonic()
    assert waiter.acquire()
    elapsed = time.monotonic() - started
    assert 0.25 < elapsed < 1.0
    # acquire (queued) + BLPOP + the holder's release: no polling loop
    releaser.join()  # the holder's release returned too (it ran in the timer thread)
    assert _calls(redis_client) - calls_before <= 4
    waiter.release()


def _calls(client):
    """Round trips of the lock API: scripts and BLPOPs (commands run inside a script not
    counted)."""
    stats = client.info("commandstats")
    return sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval", "blpop"))


def test_wait_none_waits_forever_and_wait_zero_tries_once(redis_client):
    holder = make(redis_client, ttl=30)
    holder.acquire()
    started = time.monotonic()
    assert not make(redis_client, wait=0).acquire()
    assert time.monotonic() - started < 1.0  # one look (a wait would last its default 10 s)
    releaser = threading.Timer(0.5, holder.release)
    releaser.start()
    forever = make(redis_client, wait=None)
    assert forever.acquire() and forever.token > holder._fence
    forever.release()
    releaser.join()


def test_wait_runs_out_and_leaves_the_queue(redis_client):
    holder = make(redis_client, ttl=30)
    holder.acquire()
    waiter = make(redis_client, wait=0.3)
    started = time.monotonic()
    assert not waiter.acquire()
    assert 0.25 < time.monotonic() - started < 1.0
    assert redis_client.llen(holder.keys.queue) == 0
    holder.release()
    assert not holder.locked()


def test_waiters_are_served_in_arrival_order(redis_client):
    holder = make(redis_client, ttl=30)
    holder.acquire()
    order, threads = [], []
    for i in range(5):
        t = threading.Thread(target=_take_and_record, args=(redis_client, i, order))
        t.start()
        threads.append(t)
        _wait_for(lambda n=i + 1: redis_client.llen(holder.keys.queue) == n)
    holder.release()
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]


def _take_and_record(client, i, order):
    lock = make(client, wait=10)
    assert lock.acquire()
    order.append(i)
    time.sleep(0.01)
    lock.release()


def _wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_a_releaser_does_not_barge_ahead_of_queued_waiters(redis_client):
    a = make(redis_client, ttl=30)
    a.acquire()
    got = []
    t = threading.Thread(target=lambda: got.append(make(redis_client, wait=5).acquire()))
    t.start()
    _wait_for(lambda: redis_client.llen(a.keys.queue) == 1)
    a.release()
    again = make(redis_client, wait=0)
    assert not again.acquire(), "the queued waiter was handed the lock; a newcomer must not take it"
    t.join(5)
    assert got == [True]


def test_lock_of_a_crashed_holder_passes_to_a_queued_waiter_soon_after_its_ttl(redis_client):
    crashed = make(redis_client, ttl=0.5)
    crashed.acquire()  # never released: as if the process died
    waiter = make(redis_client, wait=5)
    started = time.monotonic()
    assert waiter.acquire()
    assert 0.3 < time.monotonic() - started < 1.0
    assert waiter.token > crashed._fence


def test_reentrant_nests_for_the_same_thread_only(redis_client):
    outer = make(redis_client, reentrant=True)
    inner = make(redis_client, reentrant=True)
    assert outer.acquire() and inner.acquire()
    assert outer.token == inner.token > 0
    assert outer.holder()["depth"] == 2
    other_thread = []
    t = threading.Thread(
        target=lambda: other_thread.append(make(redis_client, reentrant=True).acquire())
    )
    t.start()
    t.join()
    assert other_thread == [False]
    inner.release()
    assert outer.owned()
    outer.release()
    assert not outer.locked()


def test_non_reentrant_lock_refuses_to_nest(redis_client):
    lock = make(redis_client)
    lock.acquire()
    with pytest.raises(LockError, match="already held by this Lock object"):
        lock.acquire()
    lock.release()


def test_acquire_retried_with_the_same_owner_is_idempotent(redis_client):
    lock = make(redis_client, ttl=5)
    assert lock.acquire()
    # The reply of an acquire can be lost to a timeout; the same owner asks again.
    again = lock._acquire_call("queue", 1.0).run(redis_client)
    assert list(again) == [1, lock.token, 1]
    assert lock.holder()["fence"] == lock.token
    lock.release()
    assert not lock.locked()


def test_context_manager_raises_lock_not_acquired_when_busy(redis_client):
    with make(redis_client, ttl=5) as held:
        assert held.token > 0
        with pytest.raises(
            LockNotAcquired, match=r"'res' could not be acquired within 0.1 s"
        ) as info:
            with make(redis_client, wait=0.1):
                pass
        assert info.value.name == "res" and info.value.wait == 0.1
    assert not held.locked()


def test_release_of_a_lock_never_acquired_raises_lock_not_owned(redis_client):
    with pytest.raises(LockNotOwned):
        make(redis_client).release()
    with pytest.raises(LockNotOwned):
        make(redis_client).extend()


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"name": ""}, ValueError, "lock name must not be empty"),
        ({"name": None}, TypeError, "lock name must be a str, not NoneType"),
        ({"name": "a{b"}, ValueError, "allowed characters are"),
        ({"ttl": 0}, ValueError, "ttl must be between 0.001 and"),
        ({"ttl": -1}, ValueError, "ttl must be between"),
        ({"ttl": "5"}, TypeError, "ttl must be a number of seconds > 0"),
        ({"ttl": True}, TypeError, "ttl must be a number"),
        ({"wait": -1}, ValueError, "wait must be seconds >= 0 (0 tries once) or None (forever)"),
        ({"wait": "1"}, TypeError, "wait must be seconds >= 0 or None"),
        ({"auto_renew": "yes"}, TypeError, "auto_renew and reentrant must be True or False"),
        ({"on_lost": 3}, TypeError, "on_lost must be a callable"),
    ],
)
def test_bad_arguments_fail_at_the_call_with_what_is_allowed(redis_client, kwargs, error, message):
    kwargs = {"name": "ok", **kwargs}
    with pytest.raises(error) as info:
        Lock(client=redis_client, **kwargs)
    assert message in str(info.value)


def test_auto_renew_keeps_a_lock_held_past_its_ttl(redis_client):
    with make(redis_client, ttl=1.5, auto_renew=True) as lock:
        time.sleep(4.5)  # 3 x TTL (a TTL long enough for a loaded 2-core machine)
        assert not lock.lost and lock.owned()
        assert not make(redis_client).acquire()
    assert not lock.locked()


def test_auto_renew_reports_a_lock_taken_away(redis_client):
    seen = []
    lock = make(redis_client, ttl=0.6, auto_renew=True, on_lost=seen.append)
    lock.acquire()
    redis_client.delete(lock.keys.lock)  # an operator force-released it
    _wait_for(lambda: seen, timeout=2)
    assert seen == [lock] and lock.lost
    with pytest.raises(LockLost):
        lock.release()


def test_a_reentrant_hold_whose_thread_ended_is_no_longer_renewed(redis_client):
    """A reentrant hold belongs to its thread (no other thread can release it):
    when that thread ends holding it, the watchdog stops and the lock expires."""
    kept = make(
        redis_client, ttl=0.6, auto_renew=True, reentrant=True
    )  # the object outlives the thread
    plain = make(
        redis_client, name="plain-renewed", ttl=0.6, auto_renew=True
    )  # control: any thread may release
    thread = threading.Thread(target=lambda: (kept.acquire(), plain.acquire()))
    thread.start()
    thread.join()
    assert kept.held and plain.held
    _wait_for(lambda: not kept.locked(), timeout=3)
    time.sleep(1.2)  # two TTLs: the non-reentrant one is still renewed
    assert plain.locked() and not plain.lost
    plain.release()
    assert make(redis_client).acquire(wait=0)


def test_default_ttl_and_wait_come_from_settings(settings, redis_client):
    settings.REDCOORD = {**settings.REDCOORD, "LOCK_TTL": 7, "LOCK_WAIT": 0}
    lock = Lock("from-settings", client=redis_client)
    assert lock.ttl == 7.0 and lock.wait == 0.0
    assert lock.keys.lock.startswith("test:")


def test_locks_work_without_django_settings_given_a_client(redis_url):
    """Plain Python: a Lock with a client needs no settings; without one, the error says what to
    do."""
    code = (
        "import redis\n"
        "from django.conf import settings\n"
        "from django_redcoord import Lock\n"
        "from django_redcoord.core.exceptions import ConfigurationError\n"
        f"lock = Lock('plain', client=redis.Redis.from_url({redis_url!r}), prefix='plain')\n"
        "assert not settings.configured and (lock.ttl, lock.wait) == (30.0, 10.0)\n"
        "with lock:\n"
        "    assert lock.token > 0 and lock.owned()\n"
        "try:\n"
        "    Lock('plain', wait=0).acquire()\n"
        "except ConfigurationError as exc:\n"
        "    assert 'pass client=' in str(exc), exc\n"
        "    print('ok')\n"
    )
    out = run_python_without_settings(code)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_script_with_django_settings_module_gets_the_projects_settings_before_setup(redis_url):
    """settings.configured is False until a setting is read; the project's REDCOORD still
    applies."""
    code = (
        "from django.conf import settings\n"
        "from django_redcoord import Lock\n"
        "assert not settings.configured\n"
        "lock = Lock('script', wait=0)\n"
        "print(lock.keys.lock.split(':')[0], lock.ttl)\n"
        "with lock:\n"
        "    print(lock.token)\n"
    )
    out = run_python_without_settings(
        code,
        DJANGO_SETTINGS_MODULE="tests.support.leader_settings",
        REDCOORD_REDIS_URL=redis_url,
        REDCOORD_KEY_PREFIX="fromsettings",
    )
    words = out.stdout.split()
    assert words[:2] == ["fromsettings", "30.0"] and int(words[2]) > 0, out.stderr


HOSTILE = "n|a,m:e/@=+#~._-"  # every punctuation character a name may have


def test_a_name_with_every_allowed_character_hands_off_at_once_and_keeps_its_keys_together(
    redis_client,
):
    holder = make(redis_client, HOSTILE, ttl=30)
    assert holder.acquire()
    waiter = make(redis_client, HOSTILE, wait=5)
    got = []
    t = threading.Thread(target=lambda: got.append((waiter.acquire(), time.monotonic())))
    t.start()
    time.sleep(0.3)
    released_at = time.monotonic()
    holder.release()
    t.join(5)
    assert got and got[0][0] and got[0][1] - released_at < 0.5  # a handoff, not a lease running out
    # every key of this lock carries the name as its hash tag (one Cluster slot)
    keys = {k.decode() for k in redis_client.scan_iter("t:*")}
    assert keys and all("{" + HOSTILE + "}" in k or k.startswith("t:index:") for k in keys), keys
    holder_meta = waiter.holder()
    assert holder_meta["pid"] == os.getpid() and holder_meta["thread"] == t.name
    waiter.release()


def test_a_release_reaches_a_live_waiter_behind_hundreds_of_dead_places(redis_client):
    """Waiters that died leave places that lapse; however many, the next live one is served."""
    holder = make(redis_client, ttl=10)
    assert holder.acquire()
    for _ in range(300):  # places taken with a 1 ms lease by owners that never come back
        ghost = make(redis_client, ttl=10)
        ghost._owner = secrets.token_urlsafe(9)
        ghost._acquire_call("queue", -0.999).run(redis_client)
    time.sleep(0.05)
    waiter = make(redis_client, ttl=10, wait=3)
    got = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire()))
    thread.start()
    time.sleep(0.3)
    released = time.monotonic()
    holder.release()
    thread.join()
    assert got == [True] and time.monotonic() - released < 1.0
    waiter.release()


def _waits(client, lock):
    """The lock's wait list as [(minute, grants, sum_ms, max_ms)], newest first."""
    return [tuple(int(x) for x in e.split()) for e in client.lrange(lock.keys.waits, 0, -1)]


def test_a_grant_that_waited_is_recorded_for_the_admin_and_a_free_one_is_not(redis_client):
    if time.time() % 60 > 55:  # both waits below in one minute of the server's clock (same machine)
        time.sleep(60.5 - time.time() % 60)
    holder, waiter = make(redis_client, ttl=10), make(redis_client, wait=5)
    assert holder.acquire()
    holder.release()
    assert _waits(redis_client, holder) == []  # free: no wait, nothing written
    assert redis_client.hgetall(holder.keys.wait_index) == {}
    assert holder.acquire()
    releaser = threading.Timer(0.3, holder.release)
    releaser.start()
    assert waiter.acquire()
    waiter.release()
    releaser.join(
        10
    )  # the waiter can be granted before the releasing thread has finished its release
    [(minute, grants, total, longest)] = _waits(redis_client, waiter)
    server_minute = int(redis_client.time()[0]) // 60
    assert minute in (server_minute, server_minute - 1) and grants == 1
    assert 250 <= total == longest < 2000
    assert int(redis_client.hget(waiter.keys.wait_index, "res")) == minute
    assert 3000 < redis_client.ttl(waiter.keys.waits) <= 3720
    # a second wait in the same minute is added to the same entry
    assert holder.acquire()
    releaser = threading.Timer(0.1, holder.release)
    releaser.start()
    assert waiter.acquire()
    waiter.release()
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    [(_, grants, total2, longest2)] = _waits(redis_client, waiter)
    assert grants == 2 and total2 > total and longest2 == longest


def test_a_wait_counts_from_taking_the_place_not_from_its_last_renewal(redis_client):
    # The holder's short TTL (renewed by its watchdog) makes the waiter re-check,
    # and so renew its place, several times during its wait: the recorded wait
    # must still be the whole wait (the place keeps the time it was taken).
    holder = make(redis_client, ttl=0.4, auto_renew=True)
    waiter = make(redis_client, wait=10)
    assert holder.acquire()
    releaser = threading.Timer(1.5, holder.release)
    releaser.start()
    assert waiter.acquire()
    waiter.release()
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    [(_, grants, total, _)] = _waits(redis_client, waiter)
    assert grants == 1 and 1400 <= total < 5000


def test_the_wait_index_drops_names_not_waited_for_in_an_hour(redis_client):
    lock = make(redis_client)
    index = lock.keys.wait_index
    minute = int(redis_client.time()[0]) // 60
    redis_client.hset(index, "stale", minute - 61)  # the only other entry: the probe must pick it
    holder, waiter = make(redis_client, ttl=10), make(redis_client, wait=5)
    assert holder.acquire()
    releaser = threading.Timer(0.05, holder.release)
    releaser.start()
    assert waiter.acquire()
    waiter.release()
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    assert set(redis_client.hgetall(index)) == {b"res"}


def _server_calls(client):
    """Every command the server ran (inside scripts too), by name."""
    stats = client.info("commandstats")
    return {name[8:]: v["calls"] for name, v in stats.items() if name.startswith("cmdstat_")}


def test_an_uncontended_pair_reads_neither_the_queue_nor_the_clock_twice(redis_client):
    """No waiter was ever queued: the record says so (queue_until_ms 0, kept in the tombstone), so
    neither the acquire nor the release reads the queue, and the index's pruning is amortised."""
    lock = make(redis_client, "alone", ttl=5)
    for _ in range(5):
        lock.acquire()
        lock.release()
    before, pairs = _server_calls(redis_client), 200
    for _ in range(pairs):
        lock.acquire()
        lock.release()
    after = _server_calls(redis_client)
    ran = {name: after[name] - before.get(name, 0) for name in after}
    ran.pop("info", None)
    assert ran.get("lrange", 0) == 0, ran
    assert ran["time"] == pairs, ran  # one clock read per pair: the grant's
    # evalsha 2, get 2, set 2, time 1, hset 1, hdel 1; hrandfield in about one grant in 8
    assert sum(ran.values()) <= 9.5 * pairs, ran


def test_a_lost_record_leaves_the_queue_in_charge(redis_client):
    """The record (and its queue_until_ms) is lost while two waiters are queued: a try-acquire
    reads the queue (nothing known) and hands the lock to the oldest; that grant bounds the queue
    anew, so its release hands on to the next waiter instead of leaving the lock to whoever tries
    first."""
    holder = make(redis_client, "lost", ttl=30)
    holder.acquire()
    order, threads, held, go = [], [], {}, threading.Event()

    def wait_then_hold(i):
        waiter = make(redis_client, "lost", ttl=30, wait=20)
        assert waiter.acquire()
        order.append(i)
        held[i] = waiter
        go.wait(20)
        waiter.release()

    for i in range(2):
        threads.append(threading.Thread(target=wait_then_hold, args=(i,)))
        threads[-1].start()
        _wait_for(lambda n=i + 1: redis_client.llen(holder.keys.queue) == n)
    redis_client.delete(holder.keys.lock)  # lost (evicted, or a partial restore): the queue stays
    barger = make(redis_client, "lost", ttl=30)
    assert not barger.acquire()  # the oldest waiter got it
    # and its grant bounds the queue anew (else a release before the next waiter's next look would
    # skip the queue): queue_until_ms, the record's 8th field, as far out as the queue's TTL
    bound = redis_client.eval(
        "return cmsgpack.unpack(redis.call('GET', KEYS[1]))[8]", 1, holder.keys.lock
    )
    assert bound >= time.time() * 1000 + redis_client.pttl(holder.keys.queue) - 1000
    _wait_for(lambda: order == [0], timeout=15)  # (it finds out at its next look)
    go.set()  # it releases: the next waiter must be handed it, not the barger
    _wait_for(lambda: order == [0, 1] or barger.acquire(), timeout=15)
    assert order == [0, 1], "a try-acquire barged ahead of a queued waiter"
    for t in threads:
        t.join(20)
