"""A pipeline on a Redis Cluster whose slot is half-migrated is an outage, never a raw ClusterError.

While a slot is being resharded (``CLUSTER SETSLOT MIGRATING/IMPORTING``, some of its
keys moved, some not yet), a script over several of its keys is refused with
``TRYAGAIN`` on either node. One script call (``Queue.push``) goes through our own
routing and is refused as ``CoordinationUnavailable(sent=False)``. A pipeline
(``Queue.push_many``: ``execute_pipeline``; ``Queue.apush_many_with_records``:
``aexecute_pipeline``) goes through redis-py's Cluster pipeline, which sends the refused
command again alone until its redirections run out, then raises ``ClusterError("Command
# 1 (EVALSHA ...) of pipeline caused error: TTL exhausted.")``: that escaped raw. It is
an outage now, with ``sent`` True (a pipeline whose other commands may have run, and
whose failed command may have been sent again: its outcome is unknown).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.keys import key_slot
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport import commands as transport
from django_redcoord.core.transport.clients import async_cluster_client, cluster_client
from django_redcoord.core.transport.commands import acommands, commands
from django_redcoord.core.transport.errors import is_passing, unavailable_as_ours

from ...support.redis_servers import SlotMigration


def _half_moved(topology, queue: Queue) -> SlotMigration:
    """Begin moving the queue's slot and move some of its keys, not all: a script over the
    queue's keys is refused with TRYAGAIN on both nodes."""
    migration = SlotMigration(topology, key_slot(queue.keys.ready)).begin()
    keys = migration.keys()
    assert len(keys) >= 2, keys
    migration.move_keys(keys[: len(keys) // 2])
    return migration


def _settle(topology, migration: SlotMigration) -> None:
    """Finish the move, then move the slot back where it was (the session's Cluster is shared)."""
    migration.finish()
    SlotMigration(topology, migration.slot, to=migration.source).begin().finish()


def test_push_many_on_a_half_migrated_slot_is_an_outage_of_unknown_outcome(cluster_topology):
    client = cluster_client(cluster_topology.config)
    queue = Queue(f"mig{uuid.uuid4().hex[:8]}", client=client, prefix="pipemig")
    try:
        queue.push_many([1, 2, 3])
        migration = _half_moved(cluster_topology, queue)
        try:
            # control: one script call is refused whole (nothing ran)
            with pytest.raises(CoordinationUnavailable) as single:
                queue.push("x")
            assert single.value.sent is False

            with pytest.raises(CoordinationUnavailable) as batch:
                queue.push_many(["y", "z"])
            assert batch.value.sent is True  # a pipeline: the outcome is unknown
            assert "TTL exhausted" in str(batch.value)
            assert isinstance(batch.value.__cause__, redis.exceptions.ClusterError)
        finally:
            _settle(cluster_topology, migration)
        assert len(queue.push_many(["after"])) == 1  # the client serves on once the slot moved
    finally:
        client.close()


def test_apush_many_with_records_on_a_half_migrated_slot_is_an_outage(cluster_topology):
    name = f"amig{uuid.uuid4().hex[:8]}"
    seed = cluster_client(cluster_topology.config)
    queue = Queue(name, client=seed, prefix="pipemig")
    queue.push_many([1, 2, 3])
    tag = queue.keys.ready.split("{", 1)[1].split("}", 1)[0]

    def pushes(*ids: str) -> list[dict]:
        return [
            {
                "body": i,
                "id": i,
                "record_key": f"pipemig:rec:{{{tag}}}:{i}",
                "record": {"status": "READY"},
                "ttl": 60,
            }
            for i in ids
        ]

    async def call(ids: tuple[str, ...]):
        client = async_cluster_client(cluster_topology.config)
        try:
            return await Queue(name, client=client, prefix="pipemig").apush_many_with_records(
                pushes(*ids)
            )
        finally:
            await client.aclose()

    migration = _half_moved(cluster_topology, queue)
    try:
        with pytest.raises(CoordinationUnavailable) as batch:
            asyncio.run(call(("a1", "a2")))
        assert batch.value.sent is True
        assert "TTL exhausted" in str(batch.value)
        assert isinstance(batch.value.__cause__, redis.exceptions.ClusterError)
    finally:
        _settle(cluster_topology, migration)
        seed.close()
    assert asyncio.run(call(("b1",))) == [True]


@pytest.mark.parametrize(
    "text",
    [
        "TTL exhausted.",  # one command (RedisCluster.execute_command)
        "Command # 1 (EVALSHA abc 5 k) of pipeline caused error: TTL exhausted.",  # sync pipeline
        "Command # 2 (EVALSHA abc 5 k) of pipeline caused error: ('TTL exhausted.',)",  # asyncio
    ],
)
def test_redirections_run_out_is_an_outage_whose_outcome_is_unknown(text):
    exc = redis.exceptions.ClusterError(text)
    assert is_passing(exc)
    with pytest.raises(CoordinationUnavailable) as raised, unavailable_as_ours(None, "push"):
        raise exc
    assert raised.value.sent is True
    assert "slot being migrated" in str(raised.value)


def test_other_cluster_errors_are_not_taken_for_an_outage():
    assert not is_passing(redis.exceptions.ClusterError("something else went wrong"))
    with pytest.raises(redis.exceptions.ClusterError), unavailable_as_ours(None, "push"):
        raise redis.exceptions.ClusterError("Command # 1 (GET k) of pipeline caused error: boom")


# -- the slot moving again while our own routing follows MOVED/ASK ----------------------------

KEY = "pipemig:{again}:list"


def _redirected_again(topology, cmd: tuple) -> object:
    """What a node answers while the slot keeps moving: MOVED (to a real node) for ``LLEN``,
    "OK" for ``ASKING``, 1 for anything else (it ran)."""
    port = topology.primaries()[0].port
    moved = redis.exceptions.MovedError(f"{key_slot(KEY)} 127.0.0.1:{port}")
    return moved if cmd[0] == "LLEN" else "OK" if cmd[0] == "ASKING" else 1


@pytest.mark.parametrize(
    "cmds, sent",
    [
        ((("LLEN", KEY),), False),  # refused everywhere: nothing ran
        ((("RPUSH", KEY, "x"), ("LLEN", KEY)), True),  # the RPUSH ran: unknown outcome
    ],
)
def test_a_slot_that_moves_again_while_followed_is_an_outage(
    cluster_topology, monkeypatch, cmds, sent
):
    """MOVED, MOVED again after the slot map was read, then MOVED from where it pointed: our
    own routing (``_on_node``) gives up. That raised a raw ``MovedError``."""
    monkeypatch.setattr(
        transport,
        "commands",
        lambda client, batch, **kw: [_redirected_again(cluster_topology, c) for c in batch],
    )
    client = cluster_client(cluster_topology.config)
    try:
        with pytest.raises(CoordinationUnavailable, match="the slot moved again") as raised:
            commands(client, cmds, operation="moving batch", key=KEY, raise_errors=False)
    finally:
        client.close()
    assert raised.value.sent is sent
    assert isinstance(raised.value.__cause__, redis.exceptions.MovedError)


@pytest.mark.parametrize(
    "cmds, sent",
    [((("LLEN", KEY),), False), ((("RPUSH", KEY, "x"), ("LLEN", KEY)), True)],
)
def test_a_slot_that_moves_again_while_followed_is_an_outage_on_asyncio(
    cluster_topology, monkeypatch, cmds, sent
):
    async def answered(client, node, batch, operation):
        return [_redirected_again(cluster_topology, c) for c in batch]

    monkeypatch.setattr(transport, "_aon", answered)

    async def main():
        client = async_cluster_client(cluster_topology.config)
        try:
            return await acommands(client, cmds, operation="moving batch", key=KEY)
        finally:
            await client.aclose()

    with pytest.raises(CoordinationUnavailable, match="the slot moved again") as raised:
        asyncio.run(main())
    assert raised.value.sent is sent
