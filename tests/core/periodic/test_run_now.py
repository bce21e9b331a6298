"""Operating jobs while leaders run: "run now" requests (term-fenced, once), their expiry, pause
and resume."""

import json
import os
import threading
import time
from datetime import datetime, timezone

import pytest

from django_redcoord.core.leader.election import LeaderElection, read_leader
from django_redcoord.core.periodic.control import (
    MAX_PENDING_REQUESTS,
    TooManyRequests,
    cancel_request,
    pause_job,
    pending_requests,
    request_run,
    resume_job,
)
from django_redcoord.core.periodic.jobs import Job, current_job
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc
from .test_periodic import make_job
from .test_scheduler import T0, Recorder, at, drive, leader, state


def standby(client, identity="b", name="sched"):
    return LeaderElection(
        name,
        lease=60,
        renew_deadline=40,
        retry_period=1,
        identity=identity,
        client=client,
        prefix="t",
    )


def test_a_request_runs_once_on_the_current_leader_with_the_slot_it_names(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)], request_interval=0)
    drive(scheduler, T0 + 1)
    slot = datetime(2024, 5, 1, 3, 0, tzinfo=timezone.utc)
    request_id = request_run(election, "t.job", slot, by="ops")
    (pending,) = pending_requests(election)
    assert (pending.id, pending.job, pending.slot_ms, pending.by) == (
        request_id,
        "t.job",
        1714532400000,
        "ops",
    )
    drive(scheduler, T0 + 2)
    drive(scheduler, T0 + 3)  # read again: it is gone
    (context,) = body.contexts
    assert context.slot == slot and context.term == election.term
    st = state(election)
    assert st["last_request"] == request_id and st["runs"] == 1 and st["outcome"] == "ok"
    assert st["last_slot"] == at(0)  # the schedule did not move
    assert pending_requests(election) == []
    drive(scheduler, T0 + 10)
    assert body.slots == [1714532400000, at(10)]


def test_only_the_current_term_claims_a_request_even_if_an_old_leader_still_believes(redis_client):
    old_body, new_body = Recorder(), Recorder()
    a = leader(redis_client, "a")
    old = Scheduler(a, [make_job(old_body, every=10)], request_interval=0)
    drive(old, T0 + 1)
    # a is paused past its lease: its record expires and b is elected.
    redis_client.delete(a.keys.record)
    b = leader(redis_client, "b")
    new = Scheduler(b, [make_job(new_body, every=10)], request_interval=0)
    assert a.is_leader()  # a's clock has not noticed yet
    request_run(b, "t.job")
    drive(old, T0 + 2)  # a resumes first and tries the request: refused by the fence
    assert old._term is None
    drive(new, T0 + 2)
    drive(old, T0 + 3)
    drive(new, T0 + 3)
    assert old_body.slots == [] and new_body.slots == [None]
    assert (
        new_body.contexts[0].term == b.term and state(b)["runner"] == "b" and state(b)["runs"] == 1
    )


def test_a_standby_never_reads_or_claims_requests(redis_client):
    a, body = leader(redis_client, "a"), Recorder()
    b = standby(redis_client)
    assert not b.campaign()
    scheduler = Scheduler(b, [make_job(body, every=10)], request_interval=0)
    request_id = request_run(a, "t.job")
    scheduler.tick(T0 + 1)
    assert body.slots == [] and [r.id for r in pending_requests(a)] == [request_id]


def _record_run():
    job = current_job()
    entry = {"slot": job.slot_ms, "pid": os.getpid(), "term": job.term, "leader": job.is_leader()}
    _record_run.client.rpush("rn:runs", json.dumps(entry))


def campaigning_scheduler(index, url, stop, handover, handed):
    """A leader process: campaigns, ticks every 20 ms, hands over once when told to."""
    client = client_from_url(url)
    _record_run.client = client
    job = Job("rn.job", _record_run, 3_600_000, None, None, 0.0, False, "coalesce")
    election = LeaderElection(
        "runnow",
        lease=1.5,
        renew_deadline=1.0,
        retry_period=0.25,
        identity=f"p{index}",
        client=client,
        prefix="rn",
    )
    scheduler = Scheduler(election, [job], request_interval=0.02)
    election.start()
    try:
        while not stop.is_set():
            if handover.is_set() and not handed.is_set() and election.is_leader():
                handed.set()
                election.resign()  # the other process takes over at once
                time.sleep(0.5)
                election.start()
            scheduler.tick(time.time())
            stop.wait(0.02)
    finally:
        scheduler.wait_idle(5)
        election.resign()
    return index


def test_each_request_runs_exactly_once_with_two_leader_processes_and_a_handover(
    redis_url, redis_client
):
    stop, handover, handed = multiproc.event(), multiproc.event(), multiproc.event()
    procs = [
        multiproc.start(campaigning_scheduler, redis_url, stop, handover, handed, index=i)
        for i in range(2)
    ]
    election = LeaderElection(
        "runnow", lease=1.5, renew_deadline=1.0, retry_period=0.25, client=redis_client, prefix="rn"
    )
    try:
        deadline = time.monotonic() + 10
        while read_leader(election.keys, redis_client) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        first = read_leader(election.keys, redis_client)
        assert first is not None
        slots = [(T0 + i) for i in range(10)]
        for i, slot in enumerate(slots):
            request_run(election, "rn.job", slot)
            time.sleep(0.05)
            if i == 4:
                handover.set()
                while time.monotonic() < deadline:
                    now = read_leader(election.keys, redis_client)
                    if handed.is_set() and now is not None and now.identity != first.identity:
                        break
                    time.sleep(0.02)
        while redis_client.llen("rn:runs") < len(slots) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # room for a duplicate to show up
    finally:
        stop.set()
        for proc in procs:
            proc.result(15)
    runs = [json.loads(e) for e in redis_client.lrange("rn:runs", 0, -1)]
    assert sorted(r["slot"] for r in runs) == [int(s * 1000) for s in slots]  # each exactly once
    assert all(r["leader"] for r in runs)
    assert (
        len({r["pid"] for r in runs}) == 2 and len({r["term"] for r in runs}) == 2
    )  # both terms ran some
    by_term = {}
    for r in runs:
        assert by_term.setdefault(r["term"], r["pid"]) == r["pid"]  # one process per term
    assert pending_requests(election) == []


def test_a_request_nobody_claims_expires(redis_client):
    election = standby(redis_client, "ops")
    request_run(election, "t.job", expires=0.2)
    time.sleep(0.3)
    assert pending_requests(election) == [] and redis_client.exists(election.keys.requests) == 0


def test_a_request_expired_when_the_leader_reads_it_is_dropped_not_run(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)], request_interval=0)
    drive(scheduler, T0 + 1)
    request_run(election, "t.job", expires=0.2)
    kept = request_run(election, "other.job", expires=30)  # keeps the hash alive; not ours
    time.sleep(0.3)
    drive(scheduler, T0 + 2)
    assert body.slots == [] and "runs" not in state(election)
    assert [r.id for r in pending_requests(election)] == [kept]
    assert redis_client.hkeys(election.keys.requests) == [kept.encode()]


def test_a_request_waits_while_the_job_runs_then_runs(redis_client):
    release = threading.Event()
    election, body = leader(redis_client), Recorder(block=release)
    scheduler = Scheduler(election, [make_job(body, every=10)], request_interval=0)
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10)  # slot 10 runs until released
    request_run(election, "t.job")
    scheduler.tick(T0 + 10.5)
    time.sleep(0.05)
    assert body.slots == [at(10)] and len(pending_requests(election)) == 1
    release.set()
    scheduler.wait_idle(5)
    drive(scheduler, T0 + 11)
    assert body.slots == [at(10), None] and pending_requests(election) == []


def test_a_cancelled_request_does_not_run(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)], request_interval=0)
    drive(scheduler, T0 + 1)
    request_id = request_run(election, "t.job")
    assert cancel_request(election, request_id) and not cancel_request(election, request_id)
    drive(scheduler, T0 + 2)
    assert body.slots == []


def test_requests_are_capped(redis_client):
    election = standby(redis_client, "ops")
    for _ in range(MAX_PENDING_REQUESTS):
        request_run(election, "t.job")
    with pytest.raises(
        TooManyRequests, match=r"100 requests are already pending in election 'sched'"
    ):
        request_run(election, "t.job")


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("bad{name}",), {}, ValueError, r"job name 'bad\{name\}' contains '\{\}'"),
        (("t.job", datetime(2024, 1, 1)), {}, ValueError, "slot must be an aware datetime"),
        (
            ("t.job", "yesterday"),
            {},
            TypeError,
            "slot must be an aware datetime or seconds since the epoch",
        ),
        (("t.job",), {"expires": 0}, ValueError, "expires must be > 0 seconds"),
    ],
)
def test_request_run_rejects_bad_arguments(redis_client, args, kwargs, error, message):
    with pytest.raises(error, match=message):
        request_run(standby(redis_client, "ops"), *args, **kwargs)
    assert redis_client.exists(standby(redis_client, "ops").keys.requests) == 0


# --- pause and resume -------------------------------------------------------------------------


def test_a_paused_job_skips_its_slots_until_resumed(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    assert pause_job(election, "t.job") and not pause_job(election, "t.job")
    paused_at = state(election)["paused"]
    drive(scheduler, T0 + 20)
    drive(scheduler, T0 + 30)
    st = state(election)
    assert body.slots == [at(10)]
    assert (st["paused"], st["missed"], st["paused_slots"], st["last_slot"]) == (
        paused_at,
        2,
        2,
        at(30),
    )
    assert resume_job(election, "t.job") and not resume_job(election, "t.job")
    assert "paused" not in state(election)
    drive(scheduler, T0 + 40)
    assert body.slots == [at(10), at(40)] and state(election)["missed"] == 2


def test_a_paused_catchup_job_skips_its_whole_backlog_in_one_tick(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10, misfire="catchup")])
    drive(scheduler, T0 + 1)
    pause_job(election, "t.job")
    scheduler.tick(T0 + 55)  # slots 10..50 due: all skipped at once
    st = state(election)
    assert body.slots == [] and (st["last_slot"], st["missed"], st["paused_slots"]) == (
        at(50),
        5,
        5,
    )
    resume_job(election, "t.job")
    drive(scheduler, T0 + 60)
    assert body.slots == [at(60)]


def test_pausing_a_job_with_no_state_yet_lists_it(redis_client):
    election = standby(redis_client, "ops")
    assert pause_job(election, "new|job")  # '|' is a legal name character: never split
    assert redis_client.smembers(election.keys.jobs) == {b"new|job"}
    assert isinstance(state(election, "new|job")["paused"], int)


def test_a_paused_job_still_runs_on_request(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)], request_interval=0)
    drive(scheduler, T0 + 1)
    pause_job(election, "t.job")
    request_run(election, "t.job")
    drive(scheduler, T0 + 10)
    assert body.slots == [None] and state(election)["paused_slots"] == 1
