"""Sixteen processes on one key: never more admitted than the policy allows, whatever the
clients' clocks say.

Bounds, computed from the Redis server's own clock (TIME) read before the
first and after the last request:

* GCRA ``rate/s;burst=b``: at most ``b + elapsed * rate`` (exact: 0 over),
  decided by the Lua script and by the server's ``CL.THROTTLE`` (redis-cell);
* sliding window ``limit/W;window``: at most ``limit`` per fixed window, so
  at most ``limit * windows touched``;
* concurrency ``n``: never more than ``n`` requests inside at once (an
  overlap counter on a second Redis).

Half of the processes run with their clocks skewed by an hour (ahead or
behind): decisions use only the server's clock, and so does the admin's
count of the busiest keys (every decision of every process is counted in
it). The negative control is a read-then-write limiter, which the same GCRA
bound catches.
"""

from __future__ import annotations

import time

import pytest

from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.core.ratelimit.records import busiest_keys
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc

PREFIX = "rlfaults"


class NaiveLimiter:
    """Deliberately unsafe: read the count, then write it back plus one."""

    def __init__(self, client, limit):
        self.client, self.limit = client, limit

    def hit(self, key):
        count = int(self.client.get("naive:" + key) or 0)
        if count >= self.limit:
            return False
        time.sleep(0.0005)  # the window between read and write
        self.client.set("naive:" + key, count + 1)
        return True


def hammer(index, url, policy, seconds, skew, unsafe, limit, start_at):
    if skew:  # this process's clock is an hour off; the limiter must not care
        real = time.time
        time.time = lambda: real() + skew
    client = client_from_url(url)
    limiter = (
        NaiveLimiter(client, limit)
        if unsafe
        else RateLimiter(policy, name="hammer", client=client, prefix=PREFIX)
    )
    admitted = contradictions = decisions = 0
    while (
        server_seconds(client) < start_at
    ):  # all 16 begin together (the negative control needs them to race)
        time.sleep(0.005)
    first = server_seconds(client)  # when this process began to hammer (the server's clock)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        decision = limiter.hit("one-key")
        decisions += 1
        allowed = decision if unsafe else decision.allowed
        admitted += bool(allowed)
        # a refusal never says a request remains (the 429 headers would contradict
        # it), nor, for GCRA, to wait longer than one interval or not at all
        if not unsafe and not allowed:
            policy = decision.denied_by
            longest = (
                policy.period / policy.limit + 0.001 if policy.kind == "gcra" else float("inf")
            )
            contradictions += decision.remaining > 0 or not 0 < decision.retry_after <= longest
    return admitted, contradictions, decisions, first, server_seconds(client)


def server_seconds(client):
    seconds, micros = client.time()
    return seconds + micros / 1e6


def _hammer(redis_url, redis_client, policy, seconds, *, unsafe=False, limit=0):
    skews = [0, 3600, -3600, 0] * 4
    start = server_seconds(redis_client)
    start_at = (
        start + 2.0
    )  # room for 16 Pythons to start on a loaded machine; a late one just begins late
    procs = [
        multiproc.start(
            hammer, redis_url, policy, seconds, skews[i], unsafe, limit, start_at, index=i
        )
        for i in range(16)
    ]
    try:
        results = [p.result(seconds + 60) for p in procs]
    finally:
        for p in procs:
            p.stop()
    end = server_seconds(redis_client)
    assert sum(r[1] for r in results) == 0, "refused decisions whose fields contradict the policy"
    if not unsafe:  # the admin saw every decision, whichever clock its process had
        (limiter,) = [
            row for row in busiest_keys(redis_client, prefix=PREFIX) if row["name"] == "hammer"
        ]
        assert limiter["keys"][0]["key"] == "one-key"
        assert limiter["keys"][0]["hits"] == sum(r[2] for r in results)
    # the upper bounds count from before the first process started to after the last ended; a
    # lower bound ("the limiter does not starve") only over the time all 16 were hammering: on a
    # loaded machine starting 16 processes can take longer than a window
    began = max(r[3] for r in results)
    start = min(
        r[3] for r in results
    )  # the upper bounds count from the first decision, not the spawn
    return (
        sum(r[0] for r in results),
        start,
        end,
        (began, max(0.0, min(r[4] for r in results) - began)),
    )


def test_gcra_never_admits_more_than_burst_plus_rate_times_elapsed(redis_url, redis_client):
    total, start, end, (began, together) = _hammer(redis_url, redis_client, "50/s;burst=10", 3.0)
    bound = 10 + (end - start) * 50
    assert total <= bound, f"{total} admitted, at most {bound:.1f} allowed"
    assert total >= 0.9 * together * 50 - 10, (
        f"only {total} admitted in {together:.1f} s of 16 hammers: the limiter starves"
    )


def test_gcra_by_the_servers_cl_throttle_keeps_the_same_exact_bound(redis_cell_url):
    client = client_from_url(redis_cell_url)
    try:
        total, start, end, (began, together) = _hammer(redis_cell_url, client, "50/s;burst=10", 3.0)
        # one more decision (after the count), so the state read is fresh: on a loaded machine the
        # hammer's last one can be older than the cell's 0.2 s lifetime
        RateLimiter("50/s;burst=10", name="hammer", client=client, prefix=PREFIX).hit("one-key")
        assert (
            client.type(f"{PREFIX}:rl:{{6:hammer:one-key}}:cell") == b"string"
        )  # CL.THROTTLE decided
        assert not client.exists(f"{PREFIX}:rl:{{6:hammer:one-key}}")  # and the script did not
    finally:
        client.close()
    bound = 10 + (end - start) * 50
    assert total <= bound, f"{total} admitted, at most {bound:.1f} allowed"
    assert total >= 0.9 * together * 50 - 10, (
        f"only {total} admitted in {together:.1f} s of 16 hammers: the limiter starves"
    )


def test_a_sliding_window_never_admits_more_than_its_limit_per_fixed_window(
    redis_url, redis_client
):
    total, start, end, (began, together) = _hammer(redis_url, redis_client, "40/s;window", 3.5)
    windows = int(end) - int(start) + 1
    assert total <= 40 * windows, f"{total} admitted in {windows} windows of 40"
    whole = int(began + together) - int(began) - 1  # whole seconds in which all 16 hammered
    assert total >= 40 * whole, (
        f"only {total} admitted over {whole} whole windows of 40: the limiter starves"
    )


def test_negative_control_the_gcra_bound_catches_a_read_then_write_limiter(redis_url, redis_client):
    total, start, end, (began, together) = _hammer(
        redis_url, redis_client, "", 1.0, unsafe=True, limit=20
    )
    assert total > 20, "the bound failed to catch a limiter that lets too many through"


def hold_slots(index, url, seconds, limit):
    client = client_from_url(url)
    checker = client_from_url(url)
    limiter = RateLimiter(f"concurrency={limit}", name="inflight", client=client, prefix=PREFIX)
    peak, admitted = 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        decision = limiter.hit("one-key")
        if not decision.allowed:
            continue
        admitted += 1
        inside = checker.incr("checker:inside")
        peak = max(peak, inside)
        time.sleep(0.005)
        checker.decr("checker:inside")
        limiter.release(decision)
    return peak, admitted


@pytest.mark.parametrize("limit", [3])
def test_a_concurrency_limit_is_never_exceeded(redis_url, redis_client, limit):
    results = multiproc.run_in_processes(hold_slots, 16, redis_url, 2.0, limit, timeout=60)
    assert max(peak for peak, _ in results) <= limit
    assert sum(admitted for _, admitted in results) > 100


@pytest.mark.parametrize("clients", ["sync", "asyncio only"])
def test_a_slot_a_timed_out_hit_took_is_given_back_once_redis_runs_it(
    redis_url, redis_client, clients
):
    """CLIENT PAUSE WRITE holds the hit's script: the caller times out, and Redis runs the hit
    when the pause ends. The slot it takes is given back then: by the settling thread (a sync
    client), or at once after the hit (an asyncio client only, which that thread cannot use:
    the give-back queues behind the hit). An asyncio-only limiter's slot stayed taken for its
    whole lease when only the thread tried."""
    import asyncio

    import redis.asyncio

    from django_redcoord.core.exceptions import CoordinationUnavailable

    name = f"paused-slot-{clients.replace(' ', '-')}"

    async def scenario() -> None:
        aclient = redis.asyncio.Redis.from_url(redis_url, socket_timeout=0.3)
        try:
            lim = RateLimiter(
                "concurrency=1;lease=60",
                name=name,
                client=aclient if clients == "asyncio only" else None,
                prefix=PREFIX,
            )
            redis_client.execute_command("CLIENT", "PAUSE", 700, "WRITE")
            with pytest.raises(CoordinationUnavailable):
                if clients == "asyncio only":
                    await lim.ahit("k")
                else:
                    await asyncio.to_thread(
                        RateLimiter(
                            "concurrency=1;lease=60",
                            name=name,
                            client=client_from_url(redis_url, socket_timeout=0.3),
                            prefix=PREFIX,
                        ).hit,
                        "k",
                    )
            deadline = time.monotonic() + 3.0
            while True:
                await asyncio.sleep(0.1)
                decision = await lim.ahit("k") if clients == "asyncio only" else None
                if decision is None:
                    decision = RateLimiter(
                        "concurrency=1;lease=60", name=name, client=redis_client, prefix=PREFIX
                    ).hit("k")
                if decision.allowed:
                    return
                assert time.monotonic() < deadline, "the slot the paused hit took is held"
        finally:
            await aclient.aclose()

    asyncio.run(scenario())
