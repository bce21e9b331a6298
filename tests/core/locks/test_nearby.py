"""Hand-offs between holds of one process (core/transport/nearby.py, issue 28 item 1).

A lock waiter whose one ahead is a hold of its own process blocks in-process,
and the release that hands it the lock tells it there instead of pushing onto
a wake list. Checked with real Redis servers and real processes: the server's
own counts (``blocked_clients``, the ``LPUSH`` calls its scripts make), an
overlap checker and the fencing tokens (each grant's above the last) for
threads, coroutines and both together; hand-offs between processes mixed in;
and the faults a wait in-process cannot see (a server restarted empty under
it, a waiter cancelled or interrupted, a fork). Each stall check has a
negative control: the same scenario with the in-process word left out must
stall.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import threading
import time

import pytest
import redis
import redis.asyncio

from django_redcoord.core.exceptions import RedcoordError
from django_redcoord.core.holds import identity
from django_redcoord.core.locks import Lock
from django_redcoord.core.locks import lock as lock_module
from django_redcoord.core.transport import nearby

from ...support import multiproc
from ...support.redis_servers import RedisServer, RestartableServer

ASYNC_RUN = pytest.mark.async_api


@pytest.fixture
def own_server():
    """A server of the test's own (its blocked clients and command counts are the test's)."""
    server = RedisServer().start()
    yield server
    server.cleanup()


def _calls(client: redis.Redis, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


class Checker:
    """Inside each critical section: who else is inside, and whether the fence grew."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.inside = self.most = self.served = 0
        self.fences: list[int] = []

    def enter(self, fence: int) -> None:
        with self.guard:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.fences.append(fence)

    def leave(self) -> None:
        with self.guard:
            self.inside -= 1
            self.served += 1

    def check(self, expected: int) -> None:
        assert self.most == 1, f"{self.most} holders at once"
        assert self.served == expected, (self.served, expected)
        assert self.fences == sorted(self.fences) and len(set(self.fences)) == len(self.fences)


# -- threads and coroutines of one process ----------------------------------------------------


def _threads(url: str, n: int, checker: Checker, waits: list[float]) -> None:
    client = redis.Redis.from_url(url)

    def one() -> None:
        started = time.monotonic()
        with Lock("near", client=client, ttl=30, wait=60) as lock:
            waits.append(time.monotonic() - started)
            checker.enter(lock.token)
            time.sleep(0.001)
            checker.leave()

    threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    client.close()


def _threads_behind_a_holder(port: int, n: int) -> dict:
    """``n`` threads of this process queued behind a holder of this process, then served: what
    the server saw while they waited (blocked connections) and during the hand-offs (pushes)."""
    admin = redis.Redis(port=port)
    client = redis.Redis(port=port)
    holder = Lock("near", client=client, ttl=30)
    assert holder.acquire()
    checker, waits = Checker(), []
    runner = threading.Thread(
        target=_threads, args=(f"redis://127.0.0.1:{port}/0", n, checker, waits)
    )
    runner.start()
    end = time.monotonic() + 30
    while admin.llen(holder.keys.queue) < n:
        assert time.monotonic() < end, "not all queued"
        time.sleep(0.02)
    time.sleep(0.2)
    blocked = int(admin.info("clients")["blocked_clients"])
    pushes = _calls(admin, "lpush")
    holder.release()
    runner.join(120)
    checker.check(n)
    seen = {"blocked": blocked, "pushes": _calls(admin, "lpush") - pushes, "longest": max(waits)}
    admin.close()
    client.close()
    return seen


def test_threads_of_one_process_hand_on_without_a_push_or_a_blocked_connection(own_server):
    seen = _threads_behind_a_holder(own_server.port, 40)
    assert seen["blocked"] == 0, f"connections blocked for waiters of this process: {seen}"
    # (the name's wait statistics push one entry a minute: at most two minutes begin here)
    assert seen["pushes"] <= 2, f"hand-offs within the process were pushed: {seen}"
    assert seen["longest"] < 30, "a waiter sat out its wait"


def test_negative_control_threads_without_in_process_hand_offs_block_connections(
    own_server, monkeypatch
):
    monkeypatch.setattr(nearby, "enabled", False)
    seen = _threads_behind_a_holder(own_server.port, 10)
    assert seen["blocked"] >= 1 and seen["pushes"] >= 10, seen  # (the checks above can fail)


@ASYNC_RUN
def test_coroutines_and_threads_of_one_process_share_a_lock_safely(own_server):
    checker = Checker()

    async def coroutines() -> None:
        client = redis.asyncio.Redis(port=own_server.port)

        async def one() -> None:
            async with Lock("near", client=client, ttl=30, wait=60) as lock:
                checker.enter(lock.token)
                await asyncio.sleep(0.001)
                checker.leave()

        await asyncio.gather(*(one() for _ in range(60)))
        await client.aclose()

    waits: list[float] = []
    runner = threading.Thread(target=_threads, args=(own_server.url, 20, checker, waits))
    runner.start()
    asyncio.run(coroutines())
    runner.join(120)
    checker.check(80)


async def _coroutines_behind_a_holder(port: int, name: str, n: int) -> tuple:
    """``n`` coroutines queued behind a holder of their loop (each, granted, checks in and out):
    (client, holder, checker, tasks; each task returns True once served)."""
    admin = redis.Redis(port=port)
    client = redis.asyncio.Redis(port=port)
    holder = Lock(name, client=client, ttl=30)
    assert await holder.aacquire()
    checker = Checker()

    async def one() -> bool:
        async with Lock(name, client=client, ttl=30, wait=60) as lock:
            checker.enter(lock.token)
            try:  # (a task cancelled here leaves too, as its hold does)
                await asyncio.sleep(0)
            finally:
                checker.leave()
        return True

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    while admin.llen(holder.keys.queue) < n:
        await asyncio.sleep(0.01)
    admin.close()
    return client, holder, checker, tasks


async def _served_coroutines(port: int, n: int) -> tuple[int, int]:
    """(connections blocked while ``n`` coroutines waited behind a holder of their loop, pushes
    while they were served)."""
    admin = redis.Redis(port=port)
    client, holder, checker, tasks = await _coroutines_behind_a_holder(port, "near", n)
    await asyncio.sleep(0.2)
    blocked = int(admin.info("clients")["blocked_clients"])
    before = _calls(admin, "lpush")
    await holder.arelease()
    await asyncio.gather(*tasks)
    checker.check(n)
    await client.aclose()
    pushes = _calls(admin, "lpush") - before
    admin.close()
    return blocked, pushes


@ASYNC_RUN
def test_coroutines_of_one_loop_hand_on_without_a_push_or_a_blocked_connection(own_server):
    blocked, pushes = asyncio.run(_served_coroutines(own_server.port, 30))
    assert blocked == 0 and pushes <= 2, (blocked, pushes)  # (see the threads' test)


@ASYNC_RUN
def test_negative_control_without_in_process_hand_offs_every_one_is_pushed(own_server, monkeypatch):
    monkeypatch.setattr(nearby, "enabled", False)
    blocked, pushes = asyncio.run(_served_coroutines(own_server.port, 30))
    assert blocked >= 1 and pushes >= 30, (blocked, pushes)  # (the checks above can fail)


def _foreign_waiters(
    index: int, url: str, n: int, seconds: float, shared: str = ""
) -> tuple[int, int, float]:
    """Threads of another process on the same lock: (acquisitions, overlaps seen, longest wait).
    ``shared``: the process id every process passes (the negative control)."""
    if shared:
        lock_module.process_nonce = lambda: shared
    client = redis.Redis.from_url(url)
    count, overlaps, longest = [0], [0], [0.0]
    guard = threading.Lock()
    end = time.monotonic() + seconds

    def one() -> None:
        while time.monotonic() < end:
            started = time.monotonic()
            with Lock("mixed", client=client, ttl=30, wait=60):
                with guard:
                    longest[0] = max(longest[0], time.monotonic() - started)
                if client.incr("inside") > 1:
                    overlaps[0] += 1
                time.sleep(0.001)
                client.decr("inside")
                count[0] += 1

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    client.close()
    return count[0], overlaps[0], longest[0]


def test_hand_offs_within_and_between_processes_interleave_without_a_stall(own_server):
    procs = [multiproc.start(_foreign_waiters, own_server.url, 6, 4.0, index=i) for i in range(2)]
    try:
        results = [p.result(120) for p in procs]
    finally:
        for p in procs:
            p.stop()
    assert all(count > 10 for count, _, _ in results), results
    assert sum(overlaps for _, overlaps, _ in results) == 0, results
    # A hand-off lost on its way (pushed where its waiter does not read, or not pushed to a
    # waiter of another process) costs its waiter the 4.5 s wait chunk, or the 30 s TTL.
    assert max(longest for _, _, longest in results) < 3.0, results


def test_negative_control_two_processes_passing_one_process_id_stall(own_server):
    # The release takes a waiter of another process for one of its own: no push, and that waiter
    # sits out its wait chunk (the stall check above catches it).
    procs = [
        multiproc.start(_foreign_waiters, own_server.url, 6, 6.0, "same", index=i) for i in range(2)
    ]
    try:
        results = [p.result(120) for p in procs]
    finally:
        for p in procs:
            p.stop()
    assert max(longest for _, _, longest in results) > 3.0, results


# -- faults a wait in-process does not see ---------------------------------------------------


def _restart_empty_under_a_waiter(server: RestartableServer) -> float:
    """A waiter of this process behind a holder of this process; the server restarts empty; the
    holder's release finds the lock gone: how long the waiter then takes to get it."""
    client = redis.Redis(port=server.port, socket_timeout=5)
    holder = Lock("restart", client=client, ttl=30)
    assert holder.acquire()
    got: list[float] = []

    def waiter() -> None:
        with Lock("restart", client=client, ttl=30, wait=60):
            got.append(time.monotonic())

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    admin = redis.Redis(port=server.port)
    end = time.monotonic() + 10
    while admin.llen(holder.keys.queue) < 1:
        assert time.monotonic() < end
        time.sleep(0.01)
    time.sleep(0.3)  # (its look done, it blocks)
    admin.close()
    server.restart_losing_data()
    released = time.monotonic()
    with pytest.raises(RedcoordError):  # LockLost: the record went with the data
        holder.release()
    thread.join(30)
    client.close()
    assert got, "the waiter never got the lock"
    return got[0] - released


def test_a_server_restarted_empty_under_an_in_process_wait_ends_it_at_the_release():
    server = RestartableServer().start()
    try:
        assert _restart_empty_under_a_waiter(server) < 1.5
    finally:
        server.cleanup()


def test_negative_control_without_the_word_after_a_lost_release_the_waiter_sits_out_its_chunk(
    monkeypatch,
):
    real = lock_module.Lock._released

    def silent(self, owner, result):
        if isinstance(result, list):
            return real(self, owner, result)
        return 0 if result is None else int(result)  # (no 'moved' for the one behind)

    monkeypatch.setattr(lock_module.Lock, "_released", silent)
    server = RestartableServer().start()
    try:
        assert _restart_empty_under_a_waiter(server) > 3.0
    finally:
        server.cleanup()


@ASYNC_RUN
def test_in_process_waiters_cancelled_at_random_leave_nothing_queued(own_server):
    admin = redis.Redis(port=own_server.port)

    async def scenario() -> tuple[int, int, list]:
        client, holder, checker, tasks = await _coroutines_behind_a_holder(
            own_server.port, "cancel", 200
        )
        await holder.arelease()
        for task in random.Random(7).sample(tasks, 100):
            task.cancel()
            await asyncio.sleep(random.random() * 0.002)
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
        await client.aclose()
        assert checker.most == 1
        return checker.served, admin.llen(holder.keys.queue), results

    served, queued, results = asyncio.run(scenario())
    done = [r for r in results if r is True]
    # (a task cancelled as it released was served, and ends cancelled all the same)
    assert served >= len(done) >= 100, (served, len(done))
    assert all(r is True or isinstance(r, asyncio.CancelledError) for r in results)
    assert queued == 0
    assert not admin.exists("redcoord:lock:cancel"), "a cancelled waiter kept the lock"


def test_an_interrupted_in_process_wait_ends_at_once(own_server):
    client = redis.Redis(port=own_server.port)
    holder = Lock("interrupt", client=client, ttl=30)
    assert holder.acquire()
    waiter = Lock("interrupt", client=client, ttl=30, wait=30)
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(waiter.acquire()), daemon=True)
    thread.start()
    admin = redis.Redis(port=own_server.port)
    while admin.llen(holder.keys.queue) < 1:
        time.sleep(0.01)
    time.sleep(0.2)
    started = time.monotonic()
    waiter._interrupt()
    thread.join(10)
    assert outcome == [False] and time.monotonic() - started < 1.0
    holder.release()


# -- the registry ---------------------------------------------------------------------------


def test_an_element_handed_before_its_wait_begins_is_kept_for_it():
    key = f"k:{secrets.token_hex(4)}"
    nearby.hand(key, "7 tok")
    assert nearby.wait([f"other:{key}", key], 5) == [key, "7 tok"]
    assert nearby.wait([key], 0.01) is None  # (taken once)
    nearby.hand(key, "moved", keep=False)  # a word nobody waits for is dropped
    assert nearby.wait([key], 0.01) is None


def test_tokens_made_here_are_recognised_and_others_are_not():
    mine = [identity.hold_token() for _ in range(200)]
    assert all(len(t) == 12 and identity.made_here(t) for t in mine)
    assert not any(identity.made_here(secrets.token_urlsafe(9)) for _ in range(200))
    assert identity.made_here(identity.thread_owner_token())
    assert not identity.made_here("r:someone:else")


def test_a_forked_child_has_none_of_its_parents_waits_or_tokens():
    key, token = f"k:{secrets.token_hex(4)}", identity.hold_token()
    nearby.hand(key, "1 x")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = nearby.wait([key], 0.01) is None and not identity.made_here(token)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert nearby.wait([key], 1) == [key, "1 x"]  # (the parent's is still there)


def _seen_by_threads_of_a_new_process(what: str) -> set:
    """In a forked child, 16 threads ask at once for the process id (``what`` "id") or the
    in-process registry ("registry"), the making of each slowed down so that every thread finds
    none made yet: what they got (ids, or the registries' ids)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            real = identity.secrets.token_urlsafe

            def slow(n: int) -> str:
                time.sleep(0.01)  # (every thread gets here before the first stores its value)
                return real(n)

            class SlowRegistry(nearby._Nearby):
                def __init__(self) -> None:
                    time.sleep(0.01)
                    super().__init__()

            identity.secrets.token_urlsafe = slow
            nearby._Nearby = SlowRegistry
            start, seen = threading.Barrier(16), set()

            def ask() -> None:
                start.wait()
                seen.add(identity.process_nonce() if what == "id" else id(nearby._registry()))

            threads = [threading.Thread(target=ask) for _ in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            os.write(write, json.dumps(sorted(seen)).encode())
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    os.close(write)
    return set(json.loads(os.read(read, 65536).decode()))


def test_the_threads_of_a_new_process_all_get_one_process_id():
    # (two ids in one process: a release took its own waiter for another process's and pushed,
    # while that waiter waited in-process: a stall of a whole wait chunk)
    assert len(_seen_by_threads_of_a_new_process("id")) == 1


def test_the_threads_of_a_new_process_all_get_one_registry():
    # (two registries: a hand into one, for a wait registered in the other, is lost)
    assert len(_seen_by_threads_of_a_new_process("registry")) == 1
