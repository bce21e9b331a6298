"""Two edges the Redis 6.2 run found, checked on whatever server the run uses.

* A BLPOP of a millisecond: 6.2 reads a timeout of "0.001" as 0 ms, which BLPOP takes as
  "forever"; the call then hung until the socket timeout and read as an outage.
* An error reply from inside a pipeline: redis-py puts "Command # N (...) of pipeline caused
  error: " before it, and 6.2 wraps a refusal inside a script ("Error running script ...
  -OOM ..."); the outage rules must see through both (a worker's heartbeat pipeline met OOM
  and its beat thread died of a "ResponseError").
"""

from __future__ import annotations

import time

import pytest
import redis

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.commands import blpop, execute_pipeline
from django_redcoord.core.transport.errors import is_passing, unavailable_as_ours


@pytest.mark.parametrize("wait", [0.0001, 0.001, 0.0015])
def test_a_blpop_of_a_millisecond_returns_at_once(redis_url, wait):
    client = client_from_url(redis_url, socket_timeout=3)
    try:
        began = time.monotonic()
        assert blpop(client, ["edge:empty"], wait, operation="a short wait") is None
        assert time.monotonic() - began < 1.0  # not the 3 s socket timeout of a BLPOP 0
    finally:
        client.close()


PREFIX = "Command # 2 (EVALSHA 1f0c 3 a b c 7 x) of pipeline caused error: "


@pytest.mark.parametrize(
    ("reply", "passing"),
    [
        ("TRYAGAIN Multiple keys request during rehashing of slot", True),
        ("MASTERDOWN Link with MASTER is down", True),
        (
            "Error running script (call to f_1f0c): @user_script:84: -OOM command not allowed "
            "when used memory > 'maxmemory'.",
            True,
        ),
        ("WRONGTYPE Operation against a key holding the wrong kind of value", False),
        ("Error running script (call to f_1f0c): @user_script:9: user_script:9: bad", False),
    ],
)
def test_an_error_reply_from_inside_a_pipeline_is_judged_by_the_reply(reply, passing):
    assert is_passing(redis.ResponseError(reply)) is passing
    assert is_passing(redis.ResponseError(PREFIX + reply)) is passing
    # the command's own text cannot pass for the reply
    tricky = "Command # 1 (SET k TRYAGAIN) of pipeline caused error: " + reply
    assert is_passing(redis.ResponseError(tricky)) is passing


def test_a_pipeline_refused_for_memory_is_an_outage_not_an_error(redis_url):
    """For real: a pipeline of writes against a full server raises CoordinationUnavailable
    (whatever the version wraps the refusal in), so loops ride it out."""
    client = client_from_url(redis_url)
    try:
        client.config_set("maxmemory", 1)
        client.config_set("maxmemory-policy", "noeviction")
        with pytest.raises(CoordinationUnavailable, match="refused the command for now"):
            execute_pipeline(
                client,
                lambda pipe: [
                    pipe.set("edge:a", "x"),
                    pipe.eval("return redis.call('SET', KEYS[1], 'y')", 1, "edge:b"),
                ],
                operation="write when full",
            )
        with (
            pytest.raises(CoordinationUnavailable),
            unavailable_as_ours(client, "a script when full"),
        ):
            client.eval("return redis.call('SET', KEYS[1], 'y')", 1, "edge:c")
    finally:
        client.config_set("maxmemory", 0)
        client.close()


def test_a_refusal_inside_a_pipeline_says_the_rest_may_have_run():
    """A command refused whole on its own ran nothing (sent=False, safe to send again); one
    command of a pipeline refused says nothing of the others, which may have run (sent=True)."""
    for text, sent in (
        ("TRYAGAIN Multiple keys request during rehashing of slot", False),
        (PREFIX + "TRYAGAIN Multiple keys request during rehashing of slot", True),
    ):
        with pytest.raises(CoordinationUnavailable) as caught, unavailable_as_ours(None, "a call"):
            raise redis.ResponseError(text)
        assert caught.value.sent is sent, text
