"""A cancellation that lands as a ``redis.asyncio`` call finishes sending is delivered at once.

redis-py sends with ``asyncio.wait_for(..., socket_timeout)``. On Python 3.11
a cancellation that arrives in the same loop turn as the send completes is
swallowed there: the send returns normally, and the read after it waits out
the whole reply; a BLPOP, its whole block. A cancelled ``aacquire()`` then kept
blocking for up to its wait (5 s in ``test_async_faults``), long enough for a
loop of such cancellations to outlast the holder's TTL; a queued waiter was
then granted the expired hold and ``aacquire()`` returned True (the intermittent
``{'cancelled': 299, 'returned True': 1}``).

The cancellation is made at every loop turn from 0 to ``TURNS`` after the
call starts, so one of them lands in that window. The call must end within
a few loop turns of its cancellation (turns, not seconds: the BLPOP blocks for
seconds), raise ``CancelledError``, and leave no reply behind for the next
call on the pool. On Python 3.12+ ``wait_for`` has no such window: there the
test passes with or without the fix.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from django_redcoord.core.transport.commands import acommand, acommands

# : Loop turns after the call starts at which it is cancelled (the send completes within the first
# few).
TURNS = 12
# : Loop turns a cancelled call may take to end (it does no I/O after the cancellation but a
# disconnect).
SETTLE = 200
#: The BLPOP's block (s): a swallowed cancellation leaves the call blocked this long.
BLOCK = 3


async def _blpop(client, kind: str):
    if kind == "command":
        return await acommand(client, "BLPOP", "nothing-ever", BLOCK, operation="blocked wait")
    return await acommands(client, (("BLPOP", "nothing-ever", BLOCK),), operation="blocked wait")


@pytest.mark.parametrize("kind", ["command", "batch"])
def test_a_cancellation_as_the_send_completes_ends_the_call_at_once(redis_url, kind):
    async def scenario():
        client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=BLOCK + 2)
        late: list[tuple[int, int]] = []
        try:
            for attempt in range(3):
                for turn in range(TURNS):
                    assert (
                        await acommand(client, "ECHO", f"warm {turn}", operation="warm")
                        == f"warm {turn}".encode()
                    )
                    task = asyncio.ensure_future(_blpop(client, kind))
                    for _ in range(turn):
                        await asyncio.sleep(0)
                    task.cancel()
                    for _ in range(SETTLE):
                        if task.done():
                            break
                        await asyncio.sleep(0)
                    if not task.done():
                        late.append((attempt, turn))
                    await asyncio.wait([task])
                    assert task.cancelled(), (
                        f"cancelled at turn {turn}, the call ended with {task!r}"
                    )
            # No cancelled call left its reply on a pooled connection for the next one to read.
            for n in range(20):
                assert (
                    await acommand(client, "ECHO", f"after {n}", operation="echo")
                    == f"after {n}".encode()
                )
        finally:
            await client.aclose()
        assert late == [], (
            f"(attempt, turn) cancellations the call did not act on for {SETTLE} loop turns: {late}"
        )

    asyncio.run(scenario())
