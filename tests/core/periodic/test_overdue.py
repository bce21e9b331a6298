"""The dead-man's switch: job_health() over the state a real scheduler wrote, with an injected
clock.

The causes that need a leader in a given condition (stopped, renewing but
not claiming) are also judged by ``assess()`` on hand-made records; the real
processes (SIGSTOP, a held lock) are in tests/django/test_deadman.py.
"""

import threading
import time
from datetime import timedelta

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.leader.records import Leadership
from django_redcoord.core.locks import Lock
from django_redcoord.core.periodic.control import pause_job, resume_job
from django_redcoord.core.periodic.jobs import periodic
from django_redcoord.core.periodic.overdue import (
    MIN_MAX_LATE,
    STATUSES,
    JobHealth,
    assess,
    default_max_late,
    job_health,
)
from django_redcoord.core.periodic.scheduler import Scheduler, read_job_states

from .test_periodic import make_job
from .test_scheduler import Recorder, at, drive

T0 = 1_700_000_000.0  # as in test_scheduler: a multiple of 10 s


def elect(client, identity="a"):
    election = LeaderElection(
        "sched",
        lease=60,
        renew_deadline=40,
        retry_period=1,
        identity=identity,
        client=client,
        prefix="t",
    )
    assert election.campaign()
    return election


def health(election, job, seconds, **kwargs):
    (found,) = job_health(election, {job.name: job}, now_ms=at(seconds), **kwargs)
    assert isinstance(found, JobHealth) and found.status in STATUSES and found.name == job.name
    return found


# -- the default allowed lateness ---------------------------------------------------------------


def test_default_max_late_is_one_interval_plus_retry_and_at_least_a_failover():
    assert (
        default_max_late(300, lease=15, retry_period=2) == 302
    )  # one slot missed, and a retry period
    assert default_max_late(5, lease=15, retry_period=2) == 17  # a failover alone is not late
    assert default_max_late(0.1, lease=0.5, retry_period=0.1) == MIN_MAX_LATE
    assert default_max_late(None, lease=15, retry_period=2) == 17


def test_periodic_max_late_is_validated_with_a_clear_error():
    with pytest.raises(ValueError, match=r"max_late must be > 0 seconds, not -1"):
        periodic(every=10, max_late=-1)
    with pytest.raises(
        TypeError, match=r"max_late must be a number of seconds or a timedelta, not 'soon'"
    ):
        periodic(every=10, max_late="soon")
    with pytest.raises(
        ValueError, match=r"max_late must be at most 3.456e\+07 seconds \(400 days\)"
    ):
        periodic(every=10, max_late=timedelta(days=401))
    assert make_job(every=10, max_late=timedelta(minutes=2)).max_late == 120.0
    assert make_job(every=10).max_late is None


def test_job_health_refuses_bad_arguments(redis_client):
    election, job = elect(redis_client), make_job(every=10)
    with pytest.raises(
        ValueError, match=r"max_late names no registered job: nope \(registered: t.job\)"
    ):
        job_health(election, {job.name: job}, max_late={"nope": 5})
    with pytest.raises(ValueError, match=r"max_late of job 't.job' must be > 0 seconds"):
        job_health(election, {job.name: job}, max_late={"t.job": 0})
    with pytest.raises(ValueError, match=r"max_failures must be an int >= 1"):
        job_health(election, {job.name: job}, max_failures=0)


# -- from the state a scheduler wrote ------------------------------------------------------------


def test_a_job_on_time_is_ok_and_overdue_once_its_slot_goes_unclaimed_past_max_late(redis_client):
    election, body = elect(redis_client), Recorder()
    job = make_job(body, every=10)
    scheduler = Scheduler(election, [job])
    drive(scheduler, T0 + 1)
    found = health(election, job, 5)
    assert (found.status, found.ok, found.late) == ("never_ran", True, 0.0)
    assert found.reason.startswith("no run yet: its first slot is due ")
    drive(scheduler, T0 + 10.2)
    found = health(election, job, 12)
    assert (found.status, found.ok, found.late, found.due) == ("ok", True, 0.0, T0 + 20)
    assert found.max_late == 61.0  # lease 60 + retry 1 > interval 10 + retry 1
    assert "last ok run ended" in found.reason and "allowed lateness 61 s" in found.reason
    # slot 20 never claimed: the leader still renews but ticks no more
    assert health(election, job, 81).ok and health(election, job, 81).late == 61.0
    found = health(election, job, 81.5)
    assert (found.status, found.ok, found.late) == ("overdue", False, 61.5)
    assert (
        found.reason.startswith("due ")
        and "not claimed for 62 s (allowed 61 s): a leader is alive but not claiming"
        in found.reason
    )
    # a per-call override wins over the default and over @periodic(max_late=)
    assert health(election, job, 24, max_late={"t.job": 5}).ok
    assert health(election, job, 25.5, max_late={"t.job": 5}).status == "overdue"
    # claiming the slot makes it healthy again
    drive(scheduler, T0 + 81.5)
    assert health(election, job, 82).status == "ok"


def test_periodic_max_late_is_the_jobs_own_allowance(redis_client):
    election = elect(redis_client)
    job = make_job(every=10, max_late=3)
    drive(Scheduler(election, [job]), T0 + 1)
    assert health(election, job, 12.9).ok
    found = health(election, job, 13.5)
    assert (found.status, found.max_late) == ("overdue", 3.0)


def test_no_leader_is_named_as_the_cause(redis_client):
    election = elect(redis_client)
    job = make_job(every=10, max_late=2)
    drive(Scheduler(election, [job]), T0 + 1)
    election.resign()
    found = health(election, job, 15)
    assert found.status == "overdue" and found.reason.endswith(
        "no leader is claiming (no run_leader process holds the lease, or none reaches this Redis)"
    )


def test_a_run_still_going_on_holds_the_next_slots_back(redis_client):
    election, release = elect(redis_client), threading.Event()
    body = Recorder(block=release)
    job = make_job(body, every=10, max_late=2)
    scheduler = Scheduler(election, [job])
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10)
    try:
        found = health(election, job, 25)  # slot 20 waits for the run of slot 10
        assert found.status == "overdue"
        assert (
            "is still going on" in found.reason
            and "no slot is claimed while it runs (overlap=False)" in found.reason
        )
    finally:
        release.set()
        scheduler.wait_idle(10)


def test_failing_runs_are_counted_in_a_row_and_reset_by_a_success(redis_client):
    election, body = elect(redis_client), Recorder(fail=True)
    job = make_job(body, every=10)
    scheduler = Scheduler(election, [job])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    drive(scheduler, T0 + 20)
    st = read_job_states(election, also=[job.name])[job.name]
    assert (st["consecutive_failures"], st["failures"], "last_ok" in st) == (2, 2, False)
    found = health(election, job, 21)
    assert (found.status, found.ok, found.consecutive_failures, found.blocked) == (
        "failing",
        False,
        2,
        False,
    )
    assert found.reason == "the last 2 runs failed (RuntimeError: boom); last ok run: never"
    assert health(election, job, 21, max_failures=3).status == "ok"  # fewer in a row than asked for
    body.fail = False
    drive(scheduler, T0 + 30)
    st = read_job_states(election, also=[job.name])[job.name]
    assert (st["consecutive_failures"], st["failures"], isinstance(st["last_ok"], int)) == (
        0,
        2,
        True,
    )
    found = health(election, job, 31)
    assert (found.status, found.consecutive_failures, found.last_ok) == (
        "ok",
        0,
        st["last_ok"] / 1000,
    )


def test_a_run_refused_its_lock_is_reported_blocked(redis_client):
    holder = Lock("report", ttl=60, wait=0, client=redis_client, prefix="t")
    assert holder.acquire()

    def report():
        with Lock("report", ttl=10, wait=0, client=redis_client, prefix="t"):
            pass

    election = elect(redis_client)
    job = make_job(report, every=10)
    scheduler = Scheduler(election, [job])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    found = health(election, job, 11)
    assert (found.status, found.ok, found.blocked) == ("failing", False, True)
    assert found.reason.startswith(
        "blocked: the last run failed because a lock or semaphore the job takes was held"
    )
    assert "LockNotAcquired: lock 'report' could not be acquired within 0 s" in found.reason
    holder.release()
    drive(scheduler, T0 + 20)
    assert health(election, job, 21).status == "ok"


def test_a_paused_job_is_healthy_and_not_checked_for_lateness(redis_client):
    election = elect(redis_client)
    job = make_job(every=10, max_late=2)
    drive(Scheduler(election, [job]), T0 + 1)
    assert pause_job(election, job.name)
    found = health(election, job, 500)
    assert (found.status, found.ok, found.late) == ("paused", True, 0.0)
    assert found.reason.startswith("paused since ")
    assert resume_job(election, job.name)
    assert health(election, job, 500).status == "overdue"


def test_a_job_no_leader_ever_scheduled(redis_client):
    job = make_job(every=10)
    election = LeaderElection(
        "sched", lease=60, renew_deadline=40, retry_period=1, client=redis_client, prefix="t"
    )
    (found,) = job_health(election, {job.name: job})
    assert (found.status, found.ok) == ("never_ran", False)
    assert found.reason.startswith("never scheduled: no leader is running")
    assert election.campaign()
    (found,) = job_health(election, {job.name: job})  # Redis's clock: the leader just took office
    assert (found.status, found.ok) == ("never_ran", True) and found.reason.startswith(
        "not scheduled yet: "
    )


# -- the causes, on hand-made records ------------------------------------------------------------

NOW = at(100)
STATE = {"last_slot": at(40), "next_due": at(50), "runs": 4, "outcome": "ok", "last_ok": at(40.2)}


def lead(renewed_ago, since_ago=300.0, term=7):
    return Leadership("box-1:42", term, NOW / 1000 - since_ago, NOW / 1000 - renewed_ago, 3.0)


def judge(state=STATE, leader=None, job=None, **kwargs):
    return assess(
        "t.job", job, state, leader=leader, now_ms=NOW, lease=15, retry_period=2, **kwargs
    )


def test_a_leader_that_stopped_renewing_is_named_stopped_or_stuck():
    found = judge(leader=lead(renewed_ago=12.0))
    assert (
        found.status == "overdue" and found.late == 50.0 and found.max_late == 17.0
    )  # interval 10 from the record
    assert found.reason.endswith(
        "a leader is alive but not claiming: box-1:42 (term 7) last renewed its lease 12 s ago (3 "
        "s left): it is stopped or stuck (SIGSTOP, a long pause, a frozen host) or cannot reach "
        "Redis"
    )


def test_a_leader_renewing_but_not_claiming_is_told_apart():
    found = judge(leader=lead(renewed_ago=0.5))
    assert (
        "box-1:42 (term 7) renews its lease but does not claim this job: its code does not have it"
        in found.reason
    )


def test_a_stale_running_marker_of_an_ended_term_is_not_blamed():
    state = {**STATE, "running": "x", "running_since": at(41), "running_term": 6}
    assert "still going on" not in judge(state, leader=lead(renewed_ago=0.5)).reason
    state = {**state, "running_term": 7}
    assert "still going on" in judge(state, leader=lead(renewed_ago=0.5)).reason


def test_a_leader_in_office_for_long_that_never_scheduled_the_job():
    found = judge({}, leader=lead(renewed_ago=0.5, since_ago=600))
    assert (found.status, found.ok, found.late) == ("never_ran", False, 600.0)
    assert (
        "box-1:42 (term 7) has led for 10 min 0 s (allowed 17 s) without claiming a slot of it"
        in found.reason
    )
    assert judge({}, leader=lead(renewed_ago=0.5, since_ago=5)).ok


def test_state_written_before_consecutive_failures_counts_the_last_outcome():
    state = {
        "last_slot": at(90),
        "next_due": at(100),
        "runs": 3,
        "outcome": "timeout",
        "error": "timed out",
    }
    found = judge(state, leader=lead(0.5))
    assert (found.status, found.consecutive_failures, found.reason) == (
        "failing",
        1,
        "the last run failed (timed out); last ok run: never",
    )


def test_overdue_wins_over_failing_and_the_dict_is_json_ready():
    import json

    found = judge(
        {**STATE, "outcome": "error", "consecutive_failures": 4, "error": "E"}, leader=None
    )
    assert found.status == "overdue"
    assert json.loads(json.dumps(found.as_dict()))["consecutive_failures"] == 4


def test_a_stopped_leader_is_blamed_before_the_run_it_stopped_with_it():
    state = {**STATE, "running": "x", "running_since": at(41), "running_term": 7}
    assert "it is stopped or stuck" in judge(state, leader=lead(renewed_ago=12.0)).reason


def test_a_next_due_no_clock_can_show_is_judged_not_raised():
    # An every=1e30 edit (refused since) made the leader record a next_due of 1e33 ms: time.gmtime
    # overflowed and the health view, the command and the admin badge raised OverflowError.
    found = judge({**STATE, "next_due": 10**33}, leader=lead(renewed_ago=0.5))
    assert found.status == "ok" and f"due at {10**33} ms since the epoch" in found.reason


def test_periodic_refuses_an_interval_past_400_days():
    with pytest.raises(ValueError, match=r"every must be at most 3.456e\+07 seconds \(400 days"):
        periodic(every=1e30)
    with pytest.raises(ValueError, match=r"every must be at most"):
        periodic(every=timedelta(days=401))


def test_an_edit_to_a_longer_interval_is_not_reported_overdue_before_its_first_slot(redis_client):
    # The state's next_due is written by the last claim: after an edit from every 10 s to every hour
    # it
    # still named the next 10 s slot, which no leader will ever claim, and the job was "overdue"
    # until the
    # first slot of the new schedule (up to an hour) while its leader followed the edit correctly.
    from django_redcoord.core.periodic.schedules import edit_schedule, revert_schedule

    def redis_ms():
        seconds, micros = redis_client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    election = elect(redis_client)
    job = make_job(every=10, max_late=3)
    scheduler = Scheduler(election, [job], request_interval=0)
    while (
        redis_ms() % 10_000 > 5_000
    ):  # the claim and the edit in one 10 s period: no old slot in between
        time.sleep(0.05)
    drive(scheduler, redis_ms() / 1000)
    stored = edit_schedule(election, job, every=3600)
    later = stored.since_ms + 20_000  # the next 10 s slot was due 10 to 15 s ago
    drive(scheduler, later / 1000)
    hour = (stored.since_ms // 3_600_000 + 1) * 3_600_000
    hour += (
        3_600_000 if hour <= later else 0
    )  # (an hour struck meanwhile: claimed, the next one awaited)
    (found,) = job_health(election, {job.name: job}, now_ms=later)
    assert (found.ok, found.due) == (True, hour / 1000), (
        found.reason
    )  # (never_ran: a new job skips its past slot)
    # negative control: the new schedule's own slot, unclaimed past max_late, is overdue
    (found,) = job_health(election, {job.name: job}, now_ms=hour + 4000)
    assert found.status == "overdue" and found.due == hour / 1000
    # reverted: the 10 s slots are back, and one not claimed is overdue again
    back = revert_schedule(election, job)
    (found,) = job_health(election, {job.name: job}, now_ms=back.since_ms + 14_000)
    assert found.status == "overdue" and found.due * 1000 <= back.since_ms + 10_000, found.reason
