"""Leaving a write hold's ``with`` block after ``downgrade()`` ends what is held then.

Red-team finding: ``with rw.write() as w: r = w.downgrade()`` raised LockNotOwned
when the block ended (the write hold was gone), and the read hold stayed. Now the
block releases the read hold if it is still held, and does nothing if it was
released already.
"""

from __future__ import annotations

import asyncio

from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.transport.clients import client_from_url


def rwlock(client):
    return ReadWriteLock("cat", ttl=30, wait=0, client=client, prefix="dg")


def test_leaving_the_block_after_a_downgrade_releases_the_read_hold(redis_client):
    rw = rwlock(redis_client)
    with rw.write() as w:
        r = w.downgrade()
        assert [h["kind"] for h in rw.holders()["holders"]] == ["r"]
    assert not r.held
    assert rw.holders()["holders"] == []
    with rw.write():  # the lock is free again: a writer gets in at once
        pass


def test_leaving_the_block_after_the_read_hold_was_released_does_nothing(redis_client):
    rw = rwlock(redis_client)
    with rw.write() as w:
        r = w.downgrade()
        r.release()
    assert rw.holders()["holders"] == []
    with rw.write() as w:
        with w.downgrade() as r:  # the read hold in its own block: held already, not taken again
            assert [h["kind"] for h in rw.holders()["holders"]] == ["r"]
        assert not r.held
    assert rw.holders()["holders"] == []
    with rw.write() as w:
        w.downgrade().release()
    assert rw.holders()["holders"] == []


def test_the_block_releases_the_read_hold_after_an_error_in_it(redis_client):
    rw = rwlock(redis_client)
    try:
        with rw.write() as w:
            w.downgrade()
            raise ValueError("boom")
    except ValueError:
        pass
    assert rw.holders()["holders"] == []


def test_a_write_hold_taken_again_after_a_downgrade_is_released_by_its_block(redis_client):
    rw = rwlock(redis_client)
    w = rw.write()
    with w:
        w.downgrade()
    with w:  # the same object, acquired again: its block releases the write hold
        assert [h["kind"] for h in rw.holders()["holders"]] == ["w"]
    assert rw.holders()["holders"] == []


def test_async_leaving_the_block_after_adowngrade_releases_the_read_hold(redis_url):
    async def scenario():
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            rw = rwlock(client)
            async with rw.write() as w:
                r = await w.adowngrade()
                assert [h["kind"] for h in (await rw.aholders())["holders"]] == ["r"]
            assert not r.held
            assert (await rw.aholders())["holders"] == []
            async with rw.write() as w:
                await (await w.adowngrade()).arelease()
            async with rw.write() as w:
                async with await w.adowngrade():
                    pass
            assert (await rw.aholders())["holders"] == []
        finally:
            await client.aclose()

    asyncio.run(scenario())
    sync = client_from_url(redis_url)
    try:
        assert rwlock(sync).holders()["holders"] == []
    finally:
        sync.close()
