"""GCRA by the server's own CL.THROTTLE (redis-cell loaded into a real redis-server), through
both drivers.

Which path decided is read from Redis: the command keeps a string under
``...:cell``, the script a hash without the suffix.
"""

from __future__ import annotations

import pytest

from django_redcoord.core.ratelimit import RateLimiter, native
from django_redcoord.core.ratelimit.records import busiest_keys
from django_redcoord.core.transport.clients import client_from_url

from ...support.drivers import Driver as BaseDriver
from ...support.redis_servers import REDIS_CELL, RedisServer


class Driver(BaseDriver):
    def limiter(self, policies, name="api", **kwargs):
        return RateLimiter(policies, name=name, client=self.client, prefix="rl", **kwargs)


@pytest.fixture(autouse=True)
def _forget_servers():
    native.forget()  # ports are reused by servers with and without the module
    yield
    native.forget()


@pytest.fixture(params=["sync", "async"])
def driver(request, redis_cell_url):
    return Driver(request.param, redis_cell_url)


def stored(url, name, key):
    client = client_from_url(url)
    try:
        base = f"rl:rl:{{{len(name)}:{name}:{key}}}"
        return client.type(base + ":cell").decode(), client.type(base).decode()
    finally:
        client.close()


def test_a_lone_gcra_policy_is_decided_by_cl_throttle(driver):
    async def scenario(d):
        # 2/s: a refill every 0.5 s, so four hits on a loaded machine (4 workers on 2 cores)
        # still come before the first refill; 10/s let one in after 100 ms
        rl = d.limiter("2/s;burst=3")
        decisions = [await d.call(rl, "hit", "u1") for _ in range(4)]
        assert [x.allowed for x in decisions] == [True, True, True, False]
        assert [x.remaining for x in decisions] == [2, 1, 0, 0]
        refused = decisions[3]
        # the command says 1 s (whole seconds, rounded up); a refused request never
        # waits longer than one interval, so that is the bound given (as the script's)
        assert refused.retry_after == 0.5 and refused.denied_by.text == "2/s;burst=3"
        assert refused.reset >= 1.0 and refused.policies[0].retry_after == 0.5
        assert stored(d.url, "api", "u1") == ("string", "none")
        peek = await d.call(rl, "peek", "u1")
        assert not peek.allowed and peek.remaining == 0 and peek.retry_after >= 1.0
        await d.sleep(
            1.0
        )  # two intervals on: two requests fit again (three if the machine was slow)
        peek = await d.call(rl, "peek", "u1")
        assert peek.allowed and peek.remaining in (2, 3) and peek.retry_after == 0
        # hits as fast as they go: two pass, then one is refused (however slow the machine, 20
        # hits outrun a refill of one per 500 ms)
        allowed = [(await d.call(rl, "hit", "u1")).allowed for _ in range(20)]
        assert allowed[:2] == [True, True] and False in allowed
        assert (await d.call(rl, "hit", "u2")).allowed  # keys are counted apart

    driver.play(scenario)


def test_cost_reset_and_tracking_with_the_command(driver):
    async def scenario(d):
        rl = d.limiter("10/m", name="costly")
        weird = "user name with spaces {and braces} |;&"
        assert (await d.call(rl, "hit", weird, 7)).remaining == 3
        assert not (await d.call(rl, "hit", weird, 4)).allowed
        with pytest.raises(ValueError, match="could never pass policy '10/m' .its burst is 10."):
            await d.call(rl, "hit", weird, 11)
        assert await d.call(rl, "reset", weird) == 1  # the command's key
        assert (await d.call(rl, "hit", weird, 10)).allowed

    driver.play(scenario)


def test_the_script_decides_what_the_command_cannot(driver):
    async def scenario(d):
        both = d.limiter("2/s & 3/m", name="both")
        assert [(await d.call(both, "hit", "k")).allowed for _ in range(3)] == [True, True, False]
        assert stored(d.url, "both", "k") == ("none", "hash")
        kept = d.limiter("2/s;burst=3", name="kept", native=False)  # a refill every 0.5 s
        refused = [await d.call(kept, "hit", "k") for _ in range(4)][-1]
        assert (
            not refused.allowed and 0.25 < refused.retry_after <= 0.5
        )  # the script's milliseconds
        assert stored(d.url, "kept", "k") == ("none", "hash")

    driver.play(scenario)


def test_the_admin_sees_keys_the_command_counts(redis_cell_url):
    client = client_from_url(redis_cell_url)
    try:
        rl = RateLimiter("5/m", name="seen", client=client, prefix="rl")
        for _ in range(7):
            rl.hit("ip:10.0.0.1")
        native.forget()  # the admin's process has not seen the server yet
        (row,) = busiest_keys(client, prefix="rl")
        (entry,) = row["keys"]
        assert (entry["key"], entry["hits"], entry["remaining"], entry["allowed"]) == (
            "ip:10.0.0.1",
            7,
            0,
            False,
        )
        assert entry["retry_after"] >= 1
    finally:
        client.close()


def test_a_server_without_the_command_falls_back_to_the_script_counting_once(redis_url):
    client = client_from_url(redis_url)
    try:
        rl = RateLimiter("10/s;burst=3", name="plain", client=client, prefix="rl")
        first = rl.hit("k")  # tries CL.THROTTLE, is told it is unknown, decides in Lua
        assert first.allowed and first.remaining == 2 and native.known(client) is False
        assert stored(redis_url, "plain", "k") == ("none", "hash")
        top = [k for k in client.scan_iter("rl:index:rl-top:*")]
        assert len(top) == 1 and client.zscore(top[0], "k") == 1.0  # counted once, not twice
    finally:
        client.close()


def test_a_restart_without_the_module_moves_decisions_to_the_script(redis_cell_server):
    server = RedisServer(extra=("--loadmodule", str(REDIS_CELL.resolve()))).start()
    client = client_from_url(server.url)
    try:
        rl = RateLimiter("10/s;burst=3", name="moved", client=client, prefix="rl", track=False)
        assert rl.hit("k").allowed and native.known(client) is True
        server.stop()
        server.extra = ()
        server.start()
        assert rl.hit("k").allowed and native.known(client) is False
        assert stored(server.url, "moved", "k") == ("none", "hash")
    finally:
        client.close()
        server.cleanup()
