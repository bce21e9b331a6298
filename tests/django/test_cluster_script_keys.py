"""Every key a script touches must be in its KEYS (issue 31, defect 27): checked at run time.

A script that writes a key it was not given is aborted mid-way by a Redis
Cluster node while its slot migrates ("non local key": what ran before the
undeclared key stays written) and refused outright by Dragonfly. Here each
script runs with ``redis.call``/``redis.pcall`` shadowed by a checker that
raises on any key argument not in ``KEYS`` (its key positions: the first
argument, all of them for DEL/EXISTS/..., both for LMOVE/RENAME, the streams
of XREADGROUP), while the hand-off paths of the held primitives and a
signal's ``send()`` run for real on a server.

:data:`KNOWN_UNDECLARED` is what still writes an undeclared key: the test fails
on any other script doing it, and when one of these stops (update the list).
It is empty: locks, semaphores and read-write locks wait in a chain of wake
lists (``core/holds/chain.py``); latches, barriers, events and signals wake
their waiters through one declared wake stream per primitive, and a signal's
``send()`` stores the payload in the signal's declared ``deliveries`` hash
(``lua/common/broadcast.lua``, ``lua/signals/signal_common.lua``).
"""

from __future__ import annotations

import gc
import threading
import time

import pytest
import redis

from django_redcoord.core.transport.scripts import Script

#: script -> the undeclared key it writes (see the module docstring)
KNOWN_UNDECLARED: dict[str, str] = {}

CHECKER = r"""
local redis = (function()
  local real, declared = redis, {}
  for _, k in ipairs(KEYS) do declared[k] = true end
  local keyless = {TIME = true, INFO = true, PING = true, ECHO = true}
  local every = {DEL = true, UNLINK = true, EXISTS = true, TOUCH = true, MGET = true}
  local two = {LMOVE = true, RPOPLPUSH = true, RENAME = true, SMOVE = true, COPY = true}
  local function check(cmd, ...)
    local name, args, keys = string.upper(cmd), {...}, {}
    if keyless[name] then return end
    if every[name] then keys = args
    elseif two[name] then keys = {args[1], args[2]}
    elseif name == 'XREADGROUP' then
      for i, a in ipairs(args) do
        if string.upper(tostring(a)) == 'STREAMS' then
          local n = (#args - i) / 2
          for j = 1, n do keys[j] = args[i + j] end
          break
        end
      end
    else keys = {args[1]} end
    for _, k in ipairs(keys) do
      if not declared[k] then error('REDCOORD-UNDECLARED-KEY ' .. name .. ' ' .. tostring(k)) end
    end
  end
  return setmetatable({
    call = function(cmd, ...) check(cmd, ...) return real.call(cmd, ...) end,
    pcall = function(cmd, ...) check(cmd, ...) return real.pcall(cmd, ...) end,
  }, {__index = real})
end)()
"""


@pytest.fixture
def checked_scripts(monkeypatch):
    """Every Script runs with the key checker; the run's offenders are collected per script."""
    import hashlib

    offenders: dict[str, list[str]] = {}
    scripts = [o for o in gc.get_objects() if isinstance(o, Script)]
    saved = {id(s): s._loaded for s in scripts}
    real_load = Script._load

    def load(self):
        if self._loaded is None:
            source, _ = real_load(self)
            flags = ""
            if source.startswith("#!lua"):
                flags, source = source.split("\n", 1)
                flags += "\n"
            source = f"{flags}{CHECKER}\n{source}"
            self._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
        return self._loaded

    real_call, real_arun = Script.__call__, Script.arun

    def call(self, client, keys, args, *, operation):
        try:
            return real_call(self, client, keys, args, operation=operation)
        except redis.exceptions.ResponseError as exc:
            if "REDCOORD-UNDECLARED-KEY" in str(exc):
                offenders.setdefault(self.name, []).append(str(exc))
            raise

    for s in scripts:
        s._loaded = None
    monkeypatch.setattr(Script, "_load", load)
    monkeypatch.setattr(Script, "__call__", call)
    yield offenders
    monkeypatch.setattr(Script, "__call__", real_call)
    monkeypatch.setattr(Script, "arun", real_arun)
    for s in [o for o in gc.get_objects() if isinstance(o, Script)]:
        s._loaded = saved.get(id(s))


def _quietly(fn):
    try:
        return fn()
    except Exception:  # noqa: BLE001 - the checker's error is collected by the fixture
        return None


def _hand_off(make_holder, make_waiter) -> None:
    """A holder, a waiter blocked behind it, then the release that hands over."""
    holder = make_holder()
    assert holder.acquire()
    waiter = make_waiter()
    got = []
    t = threading.Thread(target=lambda: got.append(_quietly(waiter.acquire)))
    t.start()
    time.sleep(0.3)
    _quietly(holder.release)
    t.join(10)
    if got and got[0]:
        _quietly(waiter.release)


def test_the_checker_catches_an_undeclared_key_and_passes_a_declared_one(redis_client):
    """Negative control: the checker must be able to fail."""
    bad = (
        f"{CHECKER}\nredis.call('SET', KEYS[1], 1)\nredis.call('LPUSH', KEYS[1] .. ':other', "
        "1)\nreturn 1"
    )
    with pytest.raises(
        redis.exceptions.ResponseError, match="REDCOORD-UNDECLARED-KEY LPUSH k:other"
    ):
        redis_client.eval(bad, 1, "k")
    good = (
        f"{CHECKER}\nredis.call('SET', KEYS[1], 1)\nredis.call('DEL', KEYS[1], KEYS[2])\nreturn "
        "redis.call('TIME')[1]"
    )
    assert redis_client.eval(good, 2, "k", "k2")


def test_every_script_of_the_hand_offs_declares_its_keys_but_the_known_ones(
    redis_client, checked_scripts
):
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.rwlocks import ReadWriteLock
    from django_redcoord.core.semaphores import Semaphore, revoke_permit
    from django_redcoord.core.signals import Event, Signal

    c = redis_client
    _hand_off(
        lambda: Lock("keys-lock", client=c, ttl=5, wait=0),
        lambda: Lock("keys-lock", client=c, ttl=5, wait=5),
    )
    _hand_off(
        lambda: Semaphore("keys-sem", 1, client=c, ttl=5),
        lambda: Semaphore("keys-sem", 1, client=c, ttl=5, wait=5),
    )
    sem = Semaphore("keys-sem", 1, client=c, ttl=5)
    assert sem.acquire(wait=0)
    queued = Semaphore("keys-sem", 1, client=c, ttl=5, wait=5)
    t = threading.Thread(target=lambda: _quietly(queued.acquire))
    t.start()
    time.sleep(0.3)
    _quietly(lambda: sem.resize(2))  # hands the new permit to the waiter
    t.join(10)
    _quietly(lambda: revoke_permit("keys-sem", sem.token, client=c))
    rw = ReadWriteLock("keys-rw", client=c, ttl=5)
    _hand_off(lambda: rw.write(wait=0), lambda: rw.read(wait=5))
    lone = Lock("keys-alone", client=c, ttl=5, wait=0)
    assert lone.acquire()
    lone.extend(5)
    lone.release()

    signal = Signal("keys-signal", client=c)
    received = []
    t = threading.Thread(target=lambda: received.append(_quietly(lambda: signal.wait(timeout=5))))
    t.start()
    time.sleep(0.3)
    _quietly(lambda: signal.send({"n": 1}))
    t.join(10)
    _wait_and(
        lambda: [Signal("keys-signal", client=c) for _ in range(2)],
        lambda s: s.wait(timeout=5),
        lambda: Signal("keys-signal", client=c).broadcast("all"),
    )
    _wait_and(
        lambda: [Event("keys-event", client=c)],
        lambda e: e.wait(timeout=5),
        Event("keys-event", client=c).set,
    )
    _quietly(Event("keys-event", client=c).clear)
    _broadcast_primitives(c)

    assert set(checked_scripts) == set(KNOWN_UNDECLARED), {
        k: v[:1] for k, v in checked_scripts.items()
    }


def _wait_and(make_waiters, wait, act) -> None:
    """Waiters blocked in ``wait``, then ``act`` (which wakes them)."""
    threads = [
        threading.Thread(target=lambda w=w: _quietly(lambda: wait(w))) for w in make_waiters()
    ]
    for t in threads:
        t.start()
    time.sleep(0.3)
    _quietly(act)
    for t in threads:
        t.join(10)


def _broadcast_primitives(c) -> None:
    """Every wake-up of latches and barriers: open, abort, a party's failure and lapse, trip,
    reset, abort."""
    from django_redcoord.core.latches import Barrier, CountDownLatch

    latch = CountDownLatch("keys-latch", 2, client=c, ttl=5)
    party = latch.party(auto_renew=False)
    _quietly(party.join)
    _quietly(lambda: party.extend(5))
    _wait_and(
        lambda: [CountDownLatch("keys-latch", 2, client=c)],
        lambda w: w.wait(timeout=5),
        lambda: (party.count_down(), latch.count_down()),
    )
    _quietly(lambda: latch.wait(0))
    for name, act in (
        ("keys-aborted", lambda w: w.abort("x")),
        ("keys-failed", None),
        ("keys-lapsed", None),
    ):
        waiter_latch = CountDownLatch(name, 2, client=c, ttl=0.3)
        p = waiter_latch.party(auto_renew=False)
        _quietly(p.join)
        if name == "keys-failed":
            act = lambda w, p=p: p.abort("a party failed")  # noqa: E731
        elif name == "keys-lapsed":
            act = lambda w: time.sleep(0.5)  # noqa: E731 - the party's lease lapses: the waiter's look breaks it
        _wait_and(
            lambda n=name: [CountDownLatch(n, 2, client=c)],
            lambda w: w.wait(timeout=2),
            lambda a=act, w=waiter_latch: a(w),
        )
        _quietly(p.count_down)
    _wait_and(
        lambda: [Barrier("keys-barrier", 2, client=c)],
        lambda b: b.wait(timeout=5),
        lambda: Barrier("keys-barrier", 2, client=c).wait(timeout=5),
    )
    _wait_and(
        lambda: [Barrier("keys-barrier", 3, client=c)],
        lambda b: b.wait(timeout=5),
        Barrier("keys-barrier", 3, client=c).reset,
    )
    _wait_and(
        lambda: [Barrier("keys-barrier", 3, client=c)],
        lambda b: b.wait(timeout=5),
        lambda: Barrier("keys-barrier", 3, client=c).abort("x"),
    )
    _quietly(Barrier("keys-barrier", 3, client=c).reset)
    _wait_and(
        lambda: [Barrier("keys-barrier", 3, client=c)], lambda b: b.wait(timeout=0.5), lambda: None
    )  # times out
    _quietly(lambda: Barrier("keys-barrier", 3, client=c).state())
    _quietly(lambda: latch.state())


@pytest.mark.parametrize("kind", ["lock", "semaphore"])
def test_a_waiter_behind_one_that_gives_up_is_handed_over_promptly(redis_client, kind):
    """FIFO through the chain of wake lists: H holds; A, B, C queue in that order; A gives
    up (it tells B to re-check); H's release reaches B at once (not after B's wait chunk),
    then B's reaches C."""
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.semaphores import Semaphore

    c = redis_client

    def make(wait):
        if kind == "lock":
            return Lock("chain", client=c, ttl=30, wait=wait)
        return Semaphore("chain", 1, client=c, ttl=30, wait=wait)

    holder = make(0)
    assert holder.acquire()
    order, when = [], {}

    def wait_for(label, wait):
        lock = make(wait)
        if lock.acquire():
            when[label] = time.monotonic()
            order.append(label)
            time.sleep(0.2)
            lock.release()

    threads = []
    for label, wait in (("a", 1.0), ("b", 20), ("c", 20)):
        threads.append(threading.Thread(target=wait_for, args=(label, wait)))
        threads[-1].start()
        time.sleep(0.3)  # queued in this order
    time.sleep(1.5)  # A gives up
    released = time.monotonic()
    holder.release()
    for t in threads:
        t.join(30)
    assert order == ["b", "c"]
    assert when["b"] - released < 1.0, (
        f"B got the lock {when['b'] - released:.2f} s after the release"
    )
    assert when["c"] - when["b"] < 1.2


def test_a_release_during_a_slot_migration_runs_whole_or_not_at_all(cluster_topology):
    """Resharding: the release names every key it touches, so the node migrating the slot
    refuses it before it runs (TRYAGAIN: an outage, the lock still ours, nobody granted) or
    runs it whole; never a raw error after the hand-off was written but before the waiter woke."""
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.keys import key_slot
    from django_redcoord.core.locks import Lock, force_release
    from django_redcoord.core.transport.clients import cluster_client

    cluster_topology.flush()
    client = cluster_client(cluster_topology.config)
    try:
        # one hand-off first, so that every key the old release declared exists (waits, wait index)
        _hand_off(
            lambda: Lock("moving", client=client, ttl=10, wait=0),
            lambda: Lock("moving", client=client, ttl=10, wait=5),
        )
        holder = Lock("moving", client=client, ttl=30, wait=0)
        assert holder.acquire()
        got = []
        waiter = threading.Thread(
            target=lambda: got.append(
                Lock(
                    "moving", client=cluster_client(cluster_topology.config), ttl=10, wait=20
                ).acquire()
            )
        )
        waiter.start()
        # the waiter has its place (it builds its own Cluster client first, which a loaded machine
        # makes slow: its first call inside the migration would be refused, and nobody would be
        # queued for the release to hand to)
        end = time.monotonic() + 30
        while not client.llen(holder.keys.queue):
            assert time.monotonic() < end, "the waiter never queued"
            time.sleep(0.02)
        time.sleep(0.2)
        slot = key_slot(holder.keys.lock)
        source = client.nodes_manager.get_node_from_slot(slot)
        target = next(n for n in client.get_primaries() if n.name != source.name)
        src, dst = client.get_redis_connection(source), client.get_redis_connection(target)
        src_id, dst_id = (
            src.execute_command("CLUSTER", "MYID"),
            dst.execute_command("CLUSTER", "MYID"),
        )
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
        fence = holder.token
        try:
            try:
                outcome = (
                    holder.release()
                )  # old scripts: a raw ResponseError ("non local key"), half done
            except CoordinationUnavailable as exc:
                outcome = exc
            if isinstance(
                outcome, CoordinationUnavailable
            ):  # refused before it ran: still held, nobody granted
                time.sleep(0.5)
                assert not got, "the waiter was granted by a release that reported an outage"
        finally:
            for node in (dst, src):
                node.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
        if isinstance(outcome, CoordinationUnavailable):
            assert "TryAgain" in str(outcome) or "rehashing" in str(outcome), outcome
            assert (
                force_release("moving", fence, client=client) == "handed-off"
            )  # the grant was intact
        waiter.join(20)
        assert got == [True], "the waiter never got the lock"
    finally:
        client.close()


def test_each_release_of_a_semaphore_reaches_the_next_waiter_promptly(redis_client):
    """Two holders, two waiters: whichever holder releases, the waiter first in line gets the
    permit at once, and the one behind it is first in line right after (told by the first)."""
    from django_redcoord.core.semaphores import Semaphore

    c = redis_client
    holders = [Semaphore("pair", 2, client=c, ttl=30, wait=0) for _ in range(2)]
    assert all(h.acquire() for h in holders)
    when = {}

    def wait_for(label):
        sem = Semaphore("pair", 2, client=c, ttl=30, wait=20)
        if sem.acquire():
            when[label] = time.monotonic()
            time.sleep(1.0)
            sem.release()

    threads = [threading.Thread(target=wait_for, args=(label,)) for label in ("a", "b")]
    for t in threads:
        t.start()
        time.sleep(0.3)
    first = time.monotonic()
    holders[1].release()
    time.sleep(0.5)
    second = time.monotonic()
    holders[0].release()
    for t in threads:
        t.join(30)
    assert when["a"] - first < 0.4, f"A got its permit {when['a'] - first:.2f} s after the release"
    assert when["b"] - second < 0.4, (
        f"B got its permit {when['b'] - second:.2f} s after the release"
    )


def _migrating(client, key):
    """Mark the slot of ``key`` as migrating to another primary; returns the undo."""
    from django_redcoord.core.keys import key_slot

    slot = key_slot(key)
    source = client.nodes_manager.get_node_from_slot(slot)
    target = next(n for n in client.get_primaries() if n.name != source.name)
    src, dst = client.get_redis_connection(source), client.get_redis_connection(target)
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)

    def stable():
        for node in (dst, src):
            node.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")

    return stable


@pytest.mark.parametrize("kind", ["send", "broadcast", "set"])
def test_a_send_or_set_during_a_slot_migration_runs_whole_or_not_at_all(cluster_topology, kind):
    """Resharding: ``send()``/``broadcast()``/``set()`` name every key they touch, so the node
    migrating the slot refuses them before they run (TRYAGAIN: CoordinationUnavailable, nobody
    woken, nothing half written) or runs them whole (the waiter gets it); never a raw
    ResponseError after part was written ("non local key", the old per-waiter wake lists)."""
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.signals import Event, Signal
    from django_redcoord.core.transport.clients import cluster_client

    cluster_topology.flush()
    client = cluster_client(cluster_topology.config)
    make = (
        (lambda c: Event("moving-event", client=c))
        if kind == "set"
        else (lambda c: Signal("moving-signal", client=c))
    )
    try:
        # one round first, so that the keys the old scripts declared exist (they ran, then failed
        # mid-way)
        if kind == "set":
            make(client).set()
            make(client).clear()
        else:
            first = []
            t = threading.Thread(
                target=lambda: first.append(make(cluster_client(cluster_topology.config)).wait(10))
            )
            t.start()
            deadline = (
                time.monotonic() + 10
            )  # send until the waiter is there (a slow start under load)
            while make(client).send(0) == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            t.join(10)
            assert first == [0]
        got = []
        own = cluster_client(cluster_topology.config)
        waiter = threading.Thread(target=lambda: got.append(make(own).wait(20)))
        waiter.start()
        primitive = make(client)
        # the waiter is registered (a first call inside the migration would be refused)
        end = time.monotonic() + 30
        registered = client.zcard if kind == "set" else client.llen  # (events: zset; signals: list)
        while not registered(primitive.keys.waiters):
            assert time.monotonic() < end, "the waiter never registered"
            time.sleep(0.02)
        time.sleep(0.2)
        stable = _migrating(client, primitive.keys.waiters)
        try:
            try:
                outcome = (
                    getattr(primitive, kind)({"n": 1}) if kind != "set" else primitive.set({"n": 1})
                )
            except CoordinationUnavailable as exc:
                outcome = exc
            if isinstance(
                outcome, CoordinationUnavailable
            ):  # refused before it ran: nobody got anything
                assert "TryAgain" in str(outcome) or "rehashing" in str(outcome), outcome
                time.sleep(0.5)
                assert not got, "a waiter got a signal from a call that reported an outage"
            else:
                assert outcome == 1, outcome
        finally:
            stable()
        if isinstance(outcome, CoordinationUnavailable):
            if kind == "set":
                assert not primitive.is_set(), "set() reported an outage but the event is set"
            assert getattr(primitive, kind)({"n": 1}) == 1  # the waiter is still there, whole
        waiter.join(20)
        assert got == [{"n": 1}] if kind != "set" else got == [True], got
        if kind != "set":
            assert (
                Signal("moving-signal", client=client).send(2) == 0
            )  # delivered once, nobody left waiting
        own.close()
    finally:
        client.close()
