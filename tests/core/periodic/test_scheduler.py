"""The leader's loop body with an injected clock: claims, misfire policies, overlap, timeouts,
the term fence."""

import threading
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic.jobs import Job, current_job
from django_redcoord.core.periodic.scheduler import Scheduler, read_job_states, slot_when
from django_redcoord.core.transport.clients import client_from_url

from .test_periodic import make_job, ms

T0 = 1_700_000_000.0  # seconds since the epoch; a multiple of 10 s


def leader(client, identity="a", name="sched"):
    election = LeaderElection(
        name,
        lease=60,
        renew_deadline=40,
        retry_period=1,
        identity=identity,
        client=client,
        prefix="t",
    )
    assert election.campaign()
    return election


class Recorder:
    """A job body that records the slot and context of every run."""

    def __init__(self, block: threading.Event | None = None, fail: bool = False):
        self.slots, self.contexts, self.block, self.fail = [], [], block, fail
        self.lock = threading.Lock()

    def __call__(self):
        job = current_job()
        with self.lock:
            self.slots.append(job.slot_ms)
            self.contexts.append(job)
        if self.block is not None:
            self.block.wait(10)
        if self.fail:
            raise RuntimeError("boom")


def drive(scheduler, now, rounds=300):
    """Tick at ``now`` until nothing more is due, letting every run end in between."""
    for _ in range(rounds):
        wait = scheduler.tick(now)
        if scheduler.running():
            scheduler.wait_idle(10)
        elif wait > 0:
            return wait
    raise AssertionError("the scheduler kept claiming")


def state(election, name="t.job"):
    return read_job_states(election, also=[name])[name]


def at(seconds):
    return int((T0 + seconds) * 1000)


def test_a_new_job_starts_with_its_next_slot_then_runs_each_slot_once(redis_client):
    election, body = leader(redis_client), Recorder()
    job = make_job(body, every=10)
    scheduler = Scheduler(election, [job])
    assert drive(scheduler, T0 + 1) == pytest.approx(9.0)  # the 0 s slot is the starting point
    assert body.slots == [] and state(election)["last_slot"] == at(0)
    drive(scheduler, T0 + 10.2)
    drive(scheduler, T0 + 10.9)  # same slot again: nothing
    assert body.slots == [at(10)]
    st = state(election)
    assert (st["runs"], st["outcome"], st["last_slot"], st["next_due"]) == (1, "ok", at(10), at(20))
    assert st["runner"] == "a" and "running" not in st and st["last_end"] >= st["last_start"]
    assert redis_client.smembers(election.keys.jobs) == {b"t.job"}


def test_coalesce_runs_missed_slots_once_for_the_latest(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10.5)
    drive(scheduler, T0 + 55)  # slots 20, 30, 40, 50 came due while nobody ran them
    assert body.slots == [at(10), at(50)]
    st = state(election)
    assert (st["runs"], st["missed"], st["last_slot"]) == (2, 3, at(50))


def test_catchup_runs_each_missed_slot_once_in_order(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10, misfire="catchup")])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 55)
    assert body.slots == [at(10), at(20), at(30), at(40), at(50)]
    assert state(election)["runs"] == 5 and "missed" not in state(election)


def test_catchup_is_capped_and_counts_what_it_dropped(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10, misfire="catchup")], catchup_limit=3)
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 100.5)
    assert body.slots == [at(80), at(90), at(100)]
    assert state(election)["missed"] == 7


def test_skip_drops_late_slots_and_runs_the_ones_reached_in_time(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10, misfire="skip")])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10.5)  # 0.5 s late: within the 1 s grace
    drive(scheduler, T0 + 45)  # 20, 30, 40 missed (40 is 5 s late)
    drive(scheduler, T0 + 50.2)
    assert body.slots == [at(10), at(50)]
    st = state(election)
    assert (st["runs"], st["missed"], st["last_slot"]) == (2, 3, at(50))


def test_misfire_with_cron_in_a_half_hour_time_zone(redis_client, settings):
    settings.TIME_ZONE = "Asia/Kolkata"
    kolkata = ZoneInfo("Asia/Kolkata")
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, cron="0 9 * * *")])
    drive(scheduler, ms(datetime(2024, 1, 1, 10, 0, tzinfo=kolkata)) / 1000)
    drive(scheduler, ms(datetime(2024, 1, 3, 9, 0, 5, tzinfo=kolkata)) / 1000)  # Jan 2 missed
    assert [datetime.fromtimestamp(s / 1000, kolkata).strftime("%d %H:%M") for s in body.slots] == [
        "03 09:00"
    ]
    assert state(election)["missed"] == 1
    assert body.contexts[0].slot == datetime(2024, 1, 3, 9, 0, tzinfo=kolkata)


def test_a_run_knows_its_slot_and_the_term_to_use_as_a_fencing_token(redis_client):
    election, body = leader(redis_client), Recorder()
    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    (context,) = body.contexts
    assert (context.name, context.slot_ms, context.term, context.identity) == (
        "t.job",
        at(10),
        election.term,
        "a",
    )
    assert context.is_leader()
    election.resign()
    assert not context.is_leader()
    assert current_job() is None


def test_a_running_job_does_not_overlap_itself_and_waiting_slots_follow_misfire(redis_client):
    release = threading.Event()
    election, body = leader(redis_client), Recorder(block=release)
    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10)
    assert scheduler.tick(T0 + 35) == float("inf")  # busy: woken when the run ends
    time.sleep(0.1)
    assert body.slots == [at(10)] and state(election)["running"] == str(at(10))
    release.set()
    drive(scheduler, T0 + 35)
    assert body.slots == [at(10), at(30)] and state(election)["missed"] == 1


def test_overlap_true_starts_a_run_while_the_previous_one_runs(redis_client):
    release = threading.Event()
    election, body = leader(redis_client), Recorder(block=release)
    scheduler = Scheduler(election, [make_job(body, every=10, overlap=True)])
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10)
    scheduler.tick(T0 + 20)
    time.sleep(0.1)
    try:
        assert sorted(body.slots) == [at(10), at(20)] and len(scheduler.running()) == 2
    finally:
        release.set()
    assert not scheduler.wait_idle(5)


def test_an_older_run_ending_late_never_overwrites_a_newer_runs_state(redis_client):
    release = threading.Event()

    def body():
        if current_job().slot_ms == at(10):
            release.wait(10)
            raise RuntimeError("slot 10 failed, late")

    election = leader(redis_client)
    scheduler = Scheduler(election, [make_job(body, every=10, overlap=True)])
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10)  # runs until released
    scheduler.tick(T0 + 20)  # ends at once
    deadline = time.monotonic() + 5
    while len(scheduler.running()) > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert state(election)["outcome"] == "ok"
    release.set()
    assert not scheduler.wait_idle(5)
    st = state(election)
    assert (
        st["outcome"] == "ok"
        and st["last_slot"] == at(20)
        and st["runs"] == 2
        and "failures" not in st
    )


def test_errors_are_recorded_with_their_message(redis_client, caplog):
    election, body = leader(redis_client), Recorder(fail=True)
    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    with caplog.at_level("INFO", logger="django_redcoord.periodic"):
        drive(scheduler, T0 + 10)
    st = state(election)
    assert (st["outcome"], st["error"], st["failures"]) == ("error", "RuntimeError: boom", 1)
    (line,) = [r for r in caplog.records if r.name == "django_redcoord.periodic"]
    assert line.getMessage().startswith(
        f"job t.job slot {slot_when(at(10))} term {election.term}: error in "
    )
    assert slot_when(at(10)).endswith("Z") and "T" in slot_when(
        at(10)
    )  # a time people read, not ms
    assert line.exc_info is not None


def test_a_timeout_is_recorded_while_the_job_still_counts_as_running(redis_client):
    release = threading.Event()
    election, body = leader(redis_client), Recorder(block=release)
    scheduler = Scheduler(election, [make_job(body, every=10, timeout=0.2)])
    drive(scheduler, T0 + 1)
    wait = scheduler.tick(T0 + 10)
    assert 0 < wait <= 0.2
    time.sleep(0.3)
    assert scheduler.tick(T0 + 25) == float("inf")  # still busy: slot 20 is not claimed
    st = state(election)
    assert st["outcome"] == "timeout" and st["running"] == str(at(10)) and st["failures"] == 1
    assert "still running after its timeout of 0.2 s" in st["error"]
    release.set()
    scheduler.wait_idle(5)
    st = state(election)
    assert st["outcome"] == "timeout" and "running" not in st and st["failures"] == 1
    assert st["error"].startswith("timed out after 0.2 s; ended after") and st["duration"] >= 300
    drive(scheduler, T0 + 25)
    assert body.slots == [at(10), at(20)]


def test_a_leader_whose_term_is_over_cannot_claim_even_if_its_clock_says_it_leads(redis_client):
    old_body, new_body = Recorder(), Recorder()
    a = leader(redis_client, "a")
    old = Scheduler(a, [make_job(old_body, every=10)])
    drive(old, T0 + 1)
    # a is paused past its lease: its record expires and b is elected.
    redis_client.delete(a.keys.record)
    b = leader(redis_client, "b")
    new = Scheduler(b, [make_job(new_body, every=10)])
    assert a.is_leader()  # a's clock has not noticed yet
    drive(old, T0 + 10)  # a resumes and tries slot 10
    drive(new, T0 + 10.5)
    assert old_body.slots == [] and new_body.slots == [at(10)]
    assert state(b)["runner"] == "b" and state(b)["runs"] == 1
    assert old.tick(T0 + 20.5) == b.retry_period and old_body.slots == []


def test_a_standby_claims_nothing(redis_client):
    a, body = leader(redis_client, "a"), Recorder()
    b = LeaderElection(
        "sched",
        lease=60,
        renew_deadline=40,
        retry_period=1,
        identity="b",
        client=redis_client,
        prefix="t",
    )
    assert not b.campaign()
    scheduler = Scheduler(b, [make_job(body, every=10)])
    assert scheduler.tick(T0 + 1) == float("inf")
    assert scheduler.tick(T0 + 30) == float("inf")
    assert body.slots == [] and read_job_states(a) == {}


def test_a_task_job_is_enqueued_not_run(redis_client):
    calls = []

    class FakeTask:
        def func(self):
            calls.append("ran")

        def enqueue(self):
            calls.append(("enqueued", current_job().slot_ms))

    election = leader(redis_client)
    scheduler = Scheduler(election, [make_job(FakeTask(), every=10)])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    assert calls == [("enqueued", at(10))]


def test_run_now_runs_once_without_touching_the_schedule(redis_client):
    election, body = leader(redis_client), Recorder()
    job = make_job(body, every=10)
    scheduler = Scheduler(election, [job])
    drive(scheduler, T0 + 1)
    run = scheduler.run_now(job)
    assert run.outcome == "ok" and run.slot_ms is None and body.slots == [None]
    st = state(election)
    assert st["last_slot"] == at(0) and st["runs"] == 1 and st["outcome"] == "ok"
    drive(scheduler, T0 + 10)
    assert body.slots == [None, at(10)]


def test_a_job_whose_schedule_breaks_does_not_stop_the_others(redis_client, caplog):
    election, body = leader(redis_client), Recorder()
    broken = Job(
        "broken", lambda: None, None, "0 0 30 2 *", None, 0.0, False, "coalesce"
    )  # never matches
    scheduler = Scheduler(election, [broken, make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    drive(scheduler, T0 + 10)
    assert body.slots == [at(10)]
    assert caplog.text.count("job broken: its schedule cannot be computed; skipped") == 1


def test_an_outcome_redis_did_not_take_is_recorded_at_the_next_tick(redis_url, redis_client):
    """A run that ends while Redis does not answer (here writes are paused past the socket
    timeout, so the write is dropped with its connection) is not shown as running until the
    job's next run: its outcome is written again at the next tick."""
    client = client_from_url(redis_url, socket_timeout=0.3)
    election = leader(client)

    def body():
        redis_client.execute_command("CLIENT", "PAUSE", 800, "WRITE")

    scheduler = Scheduler(election, [make_job(body, every=10)])
    drive(scheduler, T0 + 1)
    scheduler.tick(T0 + 10.2)
    scheduler.wait_idle(10)
    time.sleep(1.0)  # the pause is over
    st = state(election)
    assert st.get("running") and st.get("outcome") is None  # the write was lost with the pause
    scheduler.tick(T0 + 10.5)
    st = state(election)
    assert st.get("running") is None and st["outcome"] == "ok" and st["runs"] == 1
    assert scheduler.record_late() == 0
