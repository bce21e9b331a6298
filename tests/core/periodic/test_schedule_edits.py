"""Schedule edits: the store (periodic/edit_schedule.lua), the leader applying them under its
term, revert.

Edits take effect at Redis's clock, so these tests drive the scheduler with
times read from the server (``redis_now``) rather than a fixed T0.
"""

import logging
import threading
import time

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic.control import pause_job, request_run
from django_redcoord.core.periodic.jobs import current_job
from django_redcoord.core.periodic.scheduler import (
    _CLAIM,
    STALE_SCHEDULE,
    Scheduler,
    read_job_states,
)
from django_redcoord.core.periodic.schedules import (
    MAX_KEPT_VERSIONS,
    EditConflict,
    TooManyEdits,
    Version,
    _store,
    edit_schedule,
    editable_params,
    parse_param,
    read_versions,
    revert_schedule,
)

from .test_periodic import make_job


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


def redis_now(client) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def wait_redis_past(client, moment_ms, timeout=5.0):
    """Wait until Redis's clock is past ``moment_ms`` (an edit's window needs time to hold
    slots)."""
    deadline = time.monotonic() + timeout
    while redis_now(client) <= moment_ms:
        assert time.monotonic() < deadline, "Redis's clock did not move"
        time.sleep(0.005)


class Recorder:
    """A job body taking two editable arguments; records (slot, batch, label) of every run."""

    def __init__(self):
        self.runs = []
        self.lock = threading.Lock()

    def __call__(self, batch: int = 1, label: str = "code", ratio: float = 0.5, dry: bool = False):
        with self.lock:
            self.runs.append((current_job().slot_ms, batch, label))

    @property
    def slots(self):
        return [r[0] for r in self.runs]


def recorder_job(body, **kwargs):
    kwargs.setdefault("misfire", "catchup")

    def job(batch: int = 1, label: str = "code", ratio: float = 0.5, dry: bool = False):
        body(batch=batch, label=label, ratio=ratio, dry=dry)

    return make_job(job, **kwargs)


def drive(scheduler, now_s, rounds=400):
    for _ in range(rounds):
        wait = scheduler.tick(now_s)
        if scheduler.running():
            scheduler.wait_idle(10)
        elif wait > 0:
            return wait
    raise AssertionError("the scheduler kept claiming")


def grid(every_ms, after, until):
    """Slots of an interval in (after, until]."""
    first = (after // every_ms + 1) * every_ms
    return list(range(first, until + 1, every_ms))


# --- the store ----------------------------------------------------------------------------------


def test_an_edit_is_stored_as_a_new_version_from_redis_time_and_revert_is_another(redis_client):
    election, job = leader(redis_client), recorder_job(Recorder(), every=60)
    before = redis_now(redis_client)
    stored = edit_schedule(election, job, every=5, params={"batch": 7}, by="alice")
    assert stored.version == 1 and before <= stored.since_ms <= redis_now(redis_client)
    versions = read_versions(election, "t.job")
    assert versions.head == 1 and [v.version for v in versions.kept] == [0, 1]
    current = versions.current
    assert (current.every_ms, current.cron, current.params, current.by, current.edited) == (
        5000,
        None,
        {"batch": 7},
        "alice",
        True,
    )
    assert (
        read_job_states(election, also=["t.job"])["t.job"]["schedule_edit"] == "every 5s, batch=7"
    )
    cron = edit_schedule(election, job, cron="*/5  * * * *", by="bob")
    assert cron.version == 2 and cron.since_ms >= stored.since_ms
    assert read_versions(election, "t.job").current.cron == "*/5 * * * *"
    back = revert_schedule(election, job, by="carol")
    versions = read_versions(election, "t.job")
    assert back.version == 3 and versions.current.revert and not versions.current.edited
    assert "schedule_edit" not in read_job_states(election, also=["t.job"])["t.job"]
    assert redis_client.smembers(election.keys.jobs) == {b"t.job"}


def test_arguments_only_keep_the_code_schedule(redis_client):
    election, job = leader(redis_client), recorder_job(Recorder(), every=60)
    edit_schedule(election, job, params={"label": "x|y", "ratio": 2, "dry": True})
    current = read_versions(election, "t.job").current
    assert (current.every_ms, current.cron) == (None, None)
    assert current.params == {"dry": True, "label": "x|y", "ratio": 2.0}
    assert (
        read_job_states(election, also=["t.job"])["t.job"]["schedule_edit"]
        == 'dry=true, label="x|y", ratio=2.0'
    )


def test_the_editable_arguments_are_the_keyword_defaults_of_json_types():
    def body(a, b=None, c: int = 3, *args, d: str = "x", e=1.5, f=True, g=(1,), **kw):
        pass

    params = editable_params(make_job(body, every=60))
    assert {n: (p.type, p.default) for n, p in params.items()} == {
        "c": (int, 3),
        "d": (str, "x"),
        "e": (float, 1.5),
        "f": (bool, True),
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"every": 0.05}, ValueError, "every must be at least 0.1 seconds, not 0.05"),
        ({"every": "5"}, TypeError, "every must be a number of seconds or a timedelta, not '5'"),
        (
            {"every": 1e30},
            ValueError,
            r"every must be at most 3.456e\+07 seconds \(400 days; use cron= for a yearly job\)",
        ),
        ({"every": 5, "cron": "* * * * *"}, TypeError, "give at most one of every="),
        ({"cron": "61 * * * *"}, ValueError, "is not a valid crontab expression: use five fields"),
        ({"cron": "0 0 30 2 *"}, ValueError, "never matches a date"),
        (
            {"params": {"nope": 1}},
            ValueError,
            "job 't.job' has no argument 'nope' an edit may set; it has batch, dry, label, ratio",
        ),
        (
            {"params": {"batch": True}},
            TypeError,
            "argument batch of job 't.job' must be an integer .its default is 1., not True",
        ),
        ({"params": {"batch": "5"}}, TypeError, "must be an integer"),
        (
            {"params": {"ratio": float("nan")}},
            TypeError,
            "argument ratio of job 't.job' must be a number",
        ),
        ({"params": {"dry": 1}}, TypeError, "argument dry of job 't.job' must be true or false"),
        (
            {"params": {"label": "x" * 1001}},
            ValueError,
            "is 1001 characters long; at most 1000 are allowed",
        ),
        ({"params": [("batch", 1)]}, TypeError, "params must be a dict"),
        ({"by": "x" * 201}, ValueError, "by must be a str of at most 200 characters"),
    ],
)
def test_a_bad_edit_is_refused_saying_what_is_allowed_and_nothing_is_stored(
    redis_client, kwargs, error, message
):
    election, job = leader(redis_client), recorder_job(Recorder(), every=60)
    with pytest.raises(error, match=message):
        edit_schedule(election, job, **kwargs)
    assert not redis_client.exists(election.keys.schedule("t.job"))


def test_typed_arguments_are_parsed_by_their_type():
    job = recorder_job(Recorder(), every=60)
    params = editable_params(job)
    assert parse_param(job, params["batch"], " 12 ") == 12
    assert parse_param(job, params["ratio"], "2") == 2.0
    assert (
        parse_param(job, params["dry"], "On") is True
        and parse_param(job, params["dry"], "0") is False
    )
    assert parse_param(job, params["label"], " a b ") == " a b "
    with pytest.raises(
        ValueError,
        match="argument batch of job 't.job' must be an integer .its default is 1., not 'x'",
    ):
        parse_param(job, params["batch"], "x")
    with pytest.raises(ValueError, match="must be true or false"):
        parse_param(job, params["dry"], "maybe")
    with pytest.raises(TypeError, match="must be a number"):
        parse_param(job, params["ratio"], "inf")


def test_an_edit_from_an_old_version_is_refused_as_a_conflict(redis_client):
    election, job = leader(redis_client), recorder_job(Recorder(), every=60)
    edit_schedule(election, job, every=5, expected_version=0)
    with pytest.raises(
        EditConflict, match=r"was edited since version 0 \(it is at version 1 now\): reload"
    ):
        edit_schedule(election, job, every=6, expected_version=0)
    assert read_versions(election, "t.job").current.every_ms == 5000
    assert revert_schedule(election, job, expected_version=1).version == 2


def test_edits_no_leader_passes_are_capped_and_passed_ones_are_dropped(redis_client):
    election, job = leader(redis_client), recorder_job(Recorder(), every=60)
    for _ in range(MAX_KEPT_VERSIONS - 1):  # with version 0: MAX_KEPT_VERSIONS kept
        edit_schedule(election, job, every=5)
    with pytest.raises(
        TooManyEdits,
        match="20 versions are waiting for a leader to pass them .at most 20.; is a leader",
    ):
        edit_schedule(election, job, every=5)
    # A leader passes them: the next edit drops every version whose window ended at or before
    # last_slot.
    scheduler = Scheduler(election, [job])
    drive(
        scheduler, read_versions(election, "t.job").current.since_ms / 1000 + 5.5
    )  # a 5 s slot after them all
    stored = edit_schedule(election, job, every=7)
    versions = read_versions(election, "t.job")
    assert [v.version for v in versions.kept] == [MAX_KEPT_VERSIONS - 1, stored.version]
    assert (
        redis_client.hlen(election.keys.schedule("t.job")) == 2 + 2 * 2
    )  # version, first, spec+since of each


# --- the leader applies them -------------------------------------------------------------------


def test_the_leader_follows_an_edit_from_the_moment_redis_stored_it_with_its_arguments(
    redis_client,
):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=60)
    scheduler = Scheduler(election, [job], request_interval=0)
    start = redis_now(redis_client)
    drive(scheduler, start / 1000)
    last = read_job_states(election, also=["t.job"])["t.job"]["last_slot"]
    stored = edit_schedule(election, job, every=0.5, params={"batch": 5, "label": "edited"})
    now = stored.since_ms + 2600
    drive(scheduler, now / 1000)
    old = grid(
        60_000, last, stored.since_ms
    )  # slots of the code schedule before the edit (usually none)
    assert body.runs == [(s, 1, "code") for s in old] + [
        (s, 5, "edited") for s in grid(500, stored.since_ms, now)
    ]
    st = read_job_states(election, also=["t.job"])["t.job"]
    assert st["schedule"] == "every 0.5s (edited, v1)" and st["schedule_version"] == "1"
    assert st["next_due"] == grid(500, now, now + 500)[0]


def test_old_slots_due_before_the_edit_still_run_and_each_version_keeps_its_window(redis_client):
    """Two edits while no leader ticks (a failover): the next term runs each version's slots in
    its window."""
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.2)
    first = Scheduler(election, [job])
    drive(first, redis_now(redis_client) / 1000)
    last = read_job_states(election, also=["t.job"])["t.job"]["last_slot"]
    wait_redis_past(redis_client, last + 700)  # code slots (every 0.2 s) come due, nobody runs them
    one = edit_schedule(election, job, every=0.3, params={"batch": 2})
    wait_redis_past(redis_client, one.since_ms + 1000)
    two = edit_schedule(election, job, every=0.25, params={"batch": 3})
    election.resign()
    successor = leader(redis_client, identity="b")
    now = two.since_ms + 1100
    drive(Scheduler(successor, [job]), now / 1000)
    expected = (
        [(s, 1, "code") for s in grid(200, last, one.since_ms)]
        + [(s, 2, "code") for s in grid(300, one.since_ms, two.since_ms)]
        + [(s, 3, "code") for s in grid(250, two.since_ms, now)]
    )
    assert body.runs == expected
    assert len(body.slots) == len(set(body.slots))


def test_coalesce_folds_missed_slots_across_versions_into_the_latest(redis_client):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.2, misfire="coalesce")
    scheduler = Scheduler(election, [job])
    drive(scheduler, redis_now(redis_client) / 1000)
    wait_redis_past(
        redis_client, read_job_states(election, also=["t.job"])["t.job"]["last_slot"] + 500
    )
    stored = edit_schedule(election, job, every=0.3, params={"batch": 4})
    now = stored.since_ms + 1000
    drive(scheduler, now / 1000)
    assert body.runs == [(grid(300, stored.since_ms, now)[-1], 4, "code")]
    assert read_job_states(election, also=["t.job"])["t.job"]["missed"] >= 3


def test_a_leader_with_a_stale_read_of_the_edits_is_refused_and_reads_again(redis_client, caplog):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.2)
    scheduler = Scheduler(
        election, [job], request_interval=3600
    )  # reads the edits only when refused
    drive(scheduler, redis_now(redis_client) / 1000)
    last = read_job_states(election, also=["t.job"])["t.job"]["last_slot"]
    stored = edit_schedule(election, job, every=0.3, params={"batch": 9})
    now = stored.since_ms + 1000
    with caplog.at_level(logging.INFO, logger="django_redcoord.periodic"):
        drive(scheduler, now / 1000)
    assert (
        "of schedule version 0 refused (version 1 is the newest): reading the edits again"
        in caplog.text
    )
    assert body.runs == (
        [(s, 1, "code") for s in grid(200, last, stored.since_ms)]
        + [(s, 9, "code") for s in grid(300, stored.since_ms, now)]
    )


def test_the_claim_checks_the_version_window(redis_client):
    """periodic/claim.lua itself: the negative control of the leader's recomputation."""
    election, job = leader(redis_client), recorder_job(Recorder(), every=0.1)
    keys = election.keys
    term, token = election.fence()

    def claim(slot, version, mode="run", since=None):
        if since is None:
            since = (
                ""
                if version == 0
                else redis_client.hget(keys.schedule("t.job"), f"since:{version}") or "0"
            )
        code, value = _CLAIM(
            redis_client,
            [keys.record, keys.job("t.job"), keys.jobs, keys.schedule("t.job")],
            [token, term, "t.job", mode, slot, 0, 0, "w", "a", version, since],
            operation="claim",
        )
        return int(code), int(value)

    one = edit_schedule(election, job, every=1)
    edit_schedule(election, job, every=2)
    since2 = read_versions(election, "t.job").current.since_ms
    assert claim(one.since_ms + 1, 0) == (STALE_SCHEDULE, 2)  # version 0 ended at since:1
    assert claim(one.since_ms, 1) == (STALE_SCHEDULE, 2)  # not after version 1 took effect
    assert claim(one.since_ms, 0, mode="skip") == (1, one.since_ms)  # version 0's last slot
    assert claim(since2 + 1, 1) == (STALE_SCHEDULE, 2)  # after version 1 ended
    assert claim(since2 + 1, 3) == (STALE_SCHEDULE, 2)  # no such version
    assert claim(since2 + 1, 2, since=str(since2 - 1)) == (
        STALE_SCHEDULE,
        2,
    )  # another edit numbered 2
    assert claim(since2 + 1, 2) == (1, since2 + 1)
    assert read_job_states(election, also=["t.job"])["t.job"]["last_slot"] == since2 + 1


def test_an_edit_takes_effect_after_a_slot_a_leader_ahead_of_redis_already_claimed(redis_client):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=1)
    scheduler = Scheduler(election, [job])
    ahead = redis_now(redis_client) / 1000 + 30  # this leader's clock is 30 s ahead of Redis's
    drive(scheduler, ahead)
    drive(scheduler, ahead + 1)
    claimed = body.slots[-1]
    stored = edit_schedule(election, job, every=0.5)
    assert (
        stored.since_ms == claimed
    )  # not before: the slots (now, claimed] of the new schedule cannot run
    drive(scheduler, ahead + 2.2)
    assert body.slots[1:] == grid(500, claimed, int((ahead + 2.2) * 1000))


def test_revert_puts_the_code_schedule_and_defaults_back(redis_client):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.5)
    scheduler = Scheduler(election, [job])
    drive(scheduler, redis_now(redis_client) / 1000)
    edit = edit_schedule(election, job, every=0.3, params={"batch": 2})
    wait_redis_past(redis_client, edit.since_ms + 700)
    back = revert_schedule(election, job)
    now = back.since_ms + 1200
    drive(scheduler, now / 1000)
    tail = [r for r in body.runs if r[0] > back.since_ms]
    assert tail == [(s, 1, "code") for s in grid(500, back.since_ms, now)]
    assert [r for r in body.runs if edit.since_ms < r[0] <= back.since_ms] == [
        (s, 2, "code") for s in grid(300, edit.since_ms, back.since_ms)
    ]
    st = read_job_states(election, also=["t.job"])["t.job"]
    assert st["schedule"] == "every 0.5s" and "schedule_edit" not in st


def test_run_now_and_requests_use_the_arguments_in_force(redis_client):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=3600)
    edit_schedule(election, job, params={"batch": 11})
    scheduler = Scheduler(election, [job], request_interval=0)
    run = scheduler.run_now(job, 5)
    assert run.outcome == "ok" and body.runs == [(None, 11, "code")]
    request_run(election, "t.job")
    drive(scheduler, redis_now(redis_client) / 1000)
    assert body.runs[-1] == (None, 11, "code")


def test_a_paused_job_skips_the_slots_of_an_edited_schedule_too(redis_client):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.5)
    scheduler = Scheduler(election, [job])
    drive(scheduler, redis_now(redis_client) / 1000)
    pause_job(election, "t.job")
    stored = edit_schedule(election, job, every=0.2)
    drive(scheduler, (stored.since_ms + 1000) / 1000)
    assert body.runs == []
    assert read_job_states(election, also=["t.job"])["t.job"]["paused_slots"] >= 1


def test_an_edit_the_leaders_code_cannot_apply_falls_back_to_the_code_and_is_logged(
    redis_client, caplog
):
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.5)
    # Written by a newer deploy: a cron this croniter refuses and an argument this job does not
    # take.
    _store(
        election,
        job,
        Version(0, None, None, "61 * * * *", {"batch": 3, "gone": 1}, "x"),
        "odd",
        None,
    )
    scheduler = Scheduler(election, [job])
    with caplog.at_level(logging.INFO, logger="django_redcoord.periodic"):
        start = redis_now(redis_client)
        drive(scheduler, start / 1000)
        drive(scheduler, start / 1000 + 1.1)
    assert (
        "is not a valid crontab expression" in caplog.text
        and "the job takes no argument 'gone'" in caplog.text
    )
    assert body.runs and all(run[1:] == (3, "code") for run in body.runs)
    assert all(s % 500 == 0 for s in body.slots)


def test_a_version_number_redis_forgot_and_gave_again_is_not_mistaken_for_the_old_one(redis_client):
    """The edits are lost (restart without persistence, eviction) and a new edit is numbered 1
    again:
    a leader still holding the old version 1 is refused by its `since` and reads again."""
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.5)
    scheduler = Scheduler(
        election, [job], request_interval=3600
    )  # reads the edits only when refused
    old = edit_schedule(election, job, every=0.3, params={"batch": 1})
    drive(scheduler, (old.since_ms + 100) / 1000)  # loads version 1 (and starts the job)
    redis_client.delete(election.keys.schedule("t.job"))
    wait_redis_past(redis_client, old.since_ms + 5)
    new = edit_schedule(election, job, every=0.7, params={"batch": 2})
    assert new.version == 1 and new.since_ms > old.since_ms
    now = new.since_ms + 2200
    drive(scheduler, now / 1000)
    after = [r for r in body.runs if r[0] > new.since_ms]
    assert after == [(s, 2, "code") for s in grid(700, new.since_ms, now)]


def test_a_new_job_with_an_edit_in_force_starts_after_the_edit_not_with_older_slots(redis_client):
    """A job never run yet, edited to run hourly: its first leader runs nothing of the code's 0.5 s
    schedule from before the edit (a new job starts with its next slot)."""
    election, body = leader(redis_client), Recorder()
    job = recorder_job(body, every=0.5)
    stored = edit_schedule(election, job, every=3600)
    drive(Scheduler(election, [job]), (stored.since_ms + 2000) / 1000)
    assert body.runs == []
    st = read_job_states(election, also=["t.job"])["t.job"]
    assert (
        st["last_slot"] == stored.since_ms
        and st["next_due"] == (stored.since_ms // 3_600_000 + 1) * 3_600_000
    )
