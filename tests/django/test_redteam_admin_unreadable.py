"""The admin's readers skip (log and count) what they cannot read; never a raw error.

Red-team finding: ``manage.py redcoord status`` died with a traceback on a
garbage value in an admin index hash (ValueError in semaphores/records.py) and
on an index key of the wrong type (a raw WRONGTYPE ResponseError).
"""

from __future__ import annotations

import logging

import pytest
from django.core.management import call_command

from django_redcoord.core.indexes import counting_unreadable, read_index
from django_redcoord.core.keys import INDEX_TYPES, KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock, read_rwlocks
from django_redcoord.core.semaphores import Semaphore, read_semaphores
from django_redcoord.dashboard import overview

pytestmark = pytest.mark.django_db

PREFIX = "test"
KEYS = KeyBuilder(PREFIX)


def _now_ms(client):
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def _hold_some(client):
    Lock("good-lock", ttl=60, wait=0, client=client, prefix=PREFIX).acquire()
    Semaphore("good-sem", 2, ttl=60, wait=0, client=client, prefix=PREFIX).acquire()
    ReadWriteLock("good-rw", client=client, prefix=PREFIX).read(ttl=60, wait=0).acquire()


def test_garbage_entries_of_an_index_are_skipped_and_counted(redis_client, caplog):
    _hold_some(redis_client)
    far = _now_ms(redis_client) // 1000 + 3600
    for kind in ("semaphores", "rwlocks"):
        index = KEYS.index_keys(kind)[0]
        redis_client.hset(index, "garbage\x1b[31m", far)  # not a name
        redis_client.hset(index, "bad-bound", "\xff\x00notmsgpack")  # not a number
    now = _now_ms(redis_client)
    with caplog.at_level(logging.WARNING), counting_unreadable() as counts:
        assert [s["name"] for s in read_semaphores(redis_client, prefix=PREFIX, now_ms=now)] == [
            "good-sem"
        ]
        assert [r["name"] for r in read_rwlocks(redis_client, prefix=PREFIX, now_ms=now)] == [
            "good-rw"
        ]
    assert counts == {"the semaphores index": 2, "the rwlocks index": 2}
    assert "skipped 2 unreadable record(s) of the semaphores index" in caplog.text


def test_a_record_key_of_another_type_is_skipped_not_raised(redis_client):
    _hold_some(redis_client)
    far = _now_ms(redis_client) // 1000 + 3600
    # in the index, but its state key is a string (not ours)
    redis_client.hset(KEYS.index_keys("semaphores")[0], "broken-sem", far)
    redis_client.set(KEYS.semaphore("broken-sem").state, "x")
    redis_client.hset(KEYS.index_keys("rwlocks")[0], "broken-rw", far)
    redis_client.set(KEYS.rwlock("broken-rw").state, "x")
    now = _now_ms(redis_client)
    with counting_unreadable() as counts:
        assert [s["name"] for s in read_semaphores(redis_client, prefix=PREFIX, now_ms=now)] == [
            "good-sem"
        ]
        assert [r["name"] for r in read_rwlocks(redis_client, prefix=PREFIX, now_ms=now)] == [
            "good-rw"
        ]
    assert counts == {"semaphores": 1, "read-write locks": 1}


def test_index_keys_of_the_wrong_type_are_skipped(redis_client):
    _hold_some(redis_client)
    for kind in INDEX_TYPES:
        for key in KEYS.index_keys(kind)[:3]:
            redis_client.delete(key)
            redis_client.set(key, "wrongtype")
    with counting_unreadable() as counts:
        assert read_index(redis_client, KEYS, "semaphores") == {}
        assert read_index(redis_client, KEYS, "queues") == set()
        data = overview(redis_client, PREFIX)
    assert data["semaphores"] == [] and data["rwlocks"] == []
    assert counts["the semaphores index"] >= 1 and counts["the queues index"] >= 1
    assert data["unreadable"]["the workers index"] == 1


def test_status_prints_what_it_skipped_without_a_traceback(redis_client, capsys):
    _hold_some(redis_client)
    far = _now_ms(redis_client) // 1000 + 3600
    redis_client.hset(KEYS.index_keys("semaphores")[0], "bad-bound", "\xff\x00notmsgpack")
    redis_client.hset(KEYS.index_keys("locks")[0], "garbage\x1b[2J", far)
    for key in KEYS.index_keys("rwlocks") + KEYS.index_keys("queues"):
        redis_client.set(key, "wrongtype")
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "good-sem" in out and "good-lock" in out
    assert "Skipped 1 unreadable record(s) of the semaphores index" in out
    assert "Skipped 1 unreadable record(s) of the rwlocks index" in out
    assert "Skipped 1 unreadable record(s) of the queues index" in out


def test_on_a_cluster_a_bucket_of_another_type_and_garbage_entries_are_skipped(cluster_topology):
    from django_redcoord.core.keys import slot_tag
    from django_redcoord.core.transport.clients import cluster_client

    cluster_topology.flush()
    client = cluster_client(cluster_topology.config)
    try:
        _hold_some(
            client
        )  # (every index writer of this file runs on the Cluster too: tests/support/key_slots.py)
        keys = KeyBuilder(PREFIX, cluster=True)
        head, tail = keys.index_parts("rwlocks")
        client.set(head + slot_tag(7) + tail, "wrongtype")  # an rwlocks bucket that is a string
        head, tail = keys.index_parts("semaphores")
        client.hset(head + slot_tag(9) + tail, "bad-bound", "nan-ish")
        with counting_unreadable() as counts:
            assert set(read_index(client, keys, "rwlocks")) == {"good-rw"}
            assert set(read_index(client, keys, "semaphores")) == {"good-sem"}
            data = overview(client, PREFIX)
        assert [s["name"] for s in data["semaphores"]] == ["good-sem"]
        assert counts["an admin index"] >= 1 and counts["the semaphores index"] >= 1
    finally:
        client.close()


def test_a_section_that_cannot_be_read_at_all_is_shown_empty_and_counted(redis_client, caplog):
    # a queue in the index whose ready key is of another type: the depths cannot be read
    Semaphore("good-sem", 2, ttl=60, wait=0, client=redis_client, prefix=PREFIX).acquire()
    redis_client.sadd(KEYS.index_keys("queues")[0], "jobs")
    redis_client.set(KEYS.queue("jobs").ready, "x")
    with caplog.at_level(logging.WARNING):
        data = overview(redis_client, PREFIX)
    assert [s["name"] for s in data["semaphores"]] == ["good-sem"]
    assert data["queues"] == [] and data["unreadable"] == {"queues": 1}
    assert "Traceback" not in caplog.text and "WRONGTYPE" in caplog.text


def test_latch_barrier_event_signal_and_topic_records_of_another_type_are_skipped(redis_client):
    from django_redcoord.core.latches import Barrier, CountDownLatch
    from django_redcoord.core.latches.records import read_barriers, read_latches
    from django_redcoord.core.signals import Event, Signal
    from django_redcoord.core.signals.records import read_signals

    CountDownLatch("good-latch", 2, client=redis_client, prefix=PREFIX).count_down()
    Barrier("good-barrier", 2, client=redis_client, prefix=PREFIX).reset()
    Event("good-event", client=redis_client, prefix=PREFIX).set()
    Signal("good-signal", client=redis_client, prefix=PREFIX).wait(0)
    far = _now_ms(redis_client) // 1000 + 3600
    for kind, key in (
        ("latches", KEYS.latch("bad").state),
        ("barriers", KEYS.barrier("bad").state),
        ("events", KEYS.event("bad").waiters),
        ("signals", KEYS.signal("bad").waiters),
    ):
        redis_client.hset(KEYS.index_keys(kind)[0], "bad", far)
        redis_client.set(key, "not ours")  # a key of another type where a record should be
    now = _now_ms(redis_client)
    with counting_unreadable() as counts:
        assert [x["name"] for x in read_latches(redis_client, prefix=PREFIX, now_ms=now)] == [
            "good-latch"
        ]
        assert "bad" not in [
            x["name"] for x in read_barriers(redis_client, prefix=PREFIX, now_ms=now)
        ]
        found = read_signals(redis_client, prefix=PREFIX, now_ms=now)
    assert [x["name"] for x in found["events"]] == ["good-event"]
    assert "bad" not in [x["name"] for x in found["signals"]]
    assert counts == {"latches": 1, "barriers": 1, "events, signals and topics": 2}
