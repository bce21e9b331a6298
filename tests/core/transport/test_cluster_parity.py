"""The sync and the asyncio drivers meet a Redis Cluster the same way.

Each kind of round trip a step makes (a command, a script, a batch of commands on one
node, a blocking pop) is sent through both drivers while its slot is half-migrated
(``CLUSTER SETSLOT MIGRATING/IMPORTING``, the keys already moved: the source answers
``ASK``): both must follow the redirection with ``ASKING`` and get the same reply. The
asyncio path once gave up after a second of retries ("the slot is being migrated") where
the sync path followed ``ASK``; this file is what would have caught it.
"""

from __future__ import annotations

import asyncio

import pytest

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.holds.waits import read_wake, wake_entries
from django_redcoord.core.keys import key_slot
from django_redcoord.core.transport.clients import async_cluster_client, cluster_client
from django_redcoord.core.transport.commands import acommands, commands
from django_redcoord.core.transport.drivers import Blpop, Command, Run, Transaction, arun, run
from django_redcoord.core.transport.scripts import Script

from ...support.redis_servers import SlotMigration

RAISE_FENCE = Script("locks/raise_fence", includes=("common/waiters", "locks/common"))
KEY = "parity:{moving}:list"
RECORD = "parity:{moving}:lock"
STREAM = "parity:{moving}:wake"


def _steps(kind: str):
    if kind == "command":
        return (yield Command("LRANGE", KEY, 0, -1, operation="parity command"))
    if kind == "script":  # a lock record nobody owns: 0, read on the node that has it
        return (yield Run(RAISE_FENCE, [RECORD], ["not-the-owner", 7], "parity script"))
    if kind == "blocking":
        return (yield Blpop([KEY], 1.0, "parity pop"))
    if kind == "transaction":  # a consistent read of several keys of the slot
        return (yield Transaction(("LLEN", KEY), ("EXISTS", RECORD), operation="parity read"))
    if kind == "stream":  # a broadcast wait's blocked read (holds/waits.py)
        return (yield read_wake(STREAM, "0-0", 0.5, "parity wake"))
    raise AssertionError(kind)


def _outcome(call):
    try:
        reply = call()
    except CoordinationUnavailable as exc:
        return ("unavailable", str(exc).split(":")[-1].strip()[:40])
    if isinstance(reply, list):
        return [r.decode() if isinstance(r, bytes) else r for r in reply]
    return reply.decode() if isinstance(reply, bytes) else reply


def _sync(config, kind):
    client = cluster_client(config)
    try:
        if kind == "batch":
            return commands(
                client, (("LLEN", KEY), ("LINDEX", KEY, 0)), operation="parity batch", key=KEY
            )
        return run(client, _steps(kind))
    finally:
        client.close()


def _async(config, kind):
    async def main():
        client = async_cluster_client(config)
        try:
            if kind == "batch":
                return await acommands(
                    client, (("LLEN", KEY), ("LINDEX", KEY, 0)), operation="parity batch", key=KEY
                )
            try:
                return await arun(client, _steps(kind))
            finally:
                # the client goes on serving after whatever the step met (a new async Cluster
                # client whose first call was a transaction that met ASK once broke for good in
                # redis-py 8.1: "Event loop is closed" on every later call)
                assert await client.llen(KEY) >= 0
        finally:
            await client.aclose()

    return asyncio.run(main())


def _moved_away(topology):
    """Fill the list, then begin moving its slot and move its keys: the source answers ASK."""
    seed = cluster_client(topology.config)
    try:
        seed.delete(KEY, RECORD, STREAM)
        seed.rpush(KEY, "a", "b", "c", "d")
        seed.xadd(STREAM, {"w": "1"}, id="1-1")
    finally:
        seed.close()
    migration = SlotMigration(topology, key_slot(KEY)).begin()
    assert migration.move_keys() >= 1
    return migration


@pytest.mark.parametrize(
    "kind", ["command", "script", "batch", "blocking", "transaction", "stream"]
)
def test_both_drivers_follow_ask_during_a_slot_migration(cluster_topology, kind):
    migration = _moved_away(cluster_topology)
    try:
        sync = _outcome(lambda: _sync(cluster_topology.config, kind))
        asynchronous = _outcome(lambda: _async(cluster_topology.config, kind))
    finally:
        migration.finish()
        SlotMigration(cluster_topology, key_slot(KEY), to=migration.source).begin().finish()
    expected = {
        "command": [["a", "b", "c", "d"], ["a", "b", "c", "d"]],
        "script": [0, 0],
        "batch": [[4, "a"], [4, "a"]],
        "blocking": [[KEY, "a"], [KEY, "b"]],  # each pop takes the head of the moved list
        # a transaction whose keys answered ASK was discarded whole: an outage to ride out
        "transaction": [("unavailable", "the slot is being migrated (AskError); t")] * 2,
        "stream": [[("1-1", {"w": "1"})], [("1-1", {"w": "1"})]],
    }[kind]
    if kind == "stream":
        sync, asynchronous = (
            o if isinstance(o, tuple) else wake_entries(o) for o in (sync, asynchronous)
        )
    assert [sync, asynchronous] == expected


@pytest.mark.parametrize("kind", ["script", "batch"])
def test_the_parity_check_sees_a_driver_that_gives_up_on_ask(cluster_topology, monkeypatch, kind):
    """Negative control: the asyncio path as it was (ASK retried, then an outage) fails the
    comparison above, for the round trips our transport routes itself (a plain command is
    redis-py's own routing, which follows ASK on both clients)."""
    from django_redcoord.core.transport import commands as transport

    async def gives_up(client, replies, cmds, operation):
        if any(isinstance(r, __import__("redis").exceptions.AskError) for r in replies):
            raise CoordinationUnavailable(
                f"{operation}: the slot is being migrated; try again", sent=False
            )
        return replies

    monkeypatch.setattr(transport, "_aasked", gives_up)
    migration = _moved_away(cluster_topology)
    try:
        sync = _outcome(lambda: _sync(cluster_topology.config, kind))
        asynchronous = _outcome(lambda: _async(cluster_topology.config, kind))
    finally:
        migration.finish()
        SlotMigration(cluster_topology, key_slot(KEY), to=migration.source).begin().finish()
    assert sync == {"script": 0, "batch": [4, "a"]}[kind]
    assert asynchronous[0] == "unavailable"
