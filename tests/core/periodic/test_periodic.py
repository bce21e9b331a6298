"""@periodic: registration and its validation, discovery, and the slots of each schedule."""

import sys
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from django_redcoord.core.periodic import jobs as periodic_module
from django_redcoord.core.periodic.jobs import Job, get_jobs, periodic, unregister
from django_redcoord.discovery import autodiscover

UTC = timezone.utc
NY = ZoneInfo("America/New_York")
KOLKATA = ZoneInfo("Asia/Kolkata")


def make_job(func=None, **kwargs) -> Job:
    """Register a job, take it out of the registry, return it."""
    kwargs.setdefault("name", "t.job")
    periodic(**kwargs)(func or (lambda: None))
    job = get_jobs()[kwargs["name"]]
    unregister(kwargs["name"])
    return job


def ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def local(ms_value: int, tz) -> datetime:
    return datetime.fromtimestamp(ms_value / 1000, tz)


# --- registration ---------------------------------------------------------------------


def test_periodic_registers_and_returns_the_function_unchanged():
    def refresh():
        return 42

    decorated = periodic(
        every=timedelta(minutes=5),
        timeout=30,
        jitter=2,
        overlap=True,
        misfire="catchup",
        name="refresh",
    )(refresh)
    try:
        assert decorated is refresh and refresh() == 42
        job = get_jobs()["refresh"]
        assert (job.every_ms, job.timeout, job.jitter, job.overlap, job.misfire) == (
            300_000,
            30.0,
            2.0,
            True,
            "catchup",
        )
    finally:
        unregister("refresh")
    assert "refresh" not in get_jobs()


def test_the_default_name_is_module_and_qualname():
    periodic(every=60)(module_level_job)
    try:
        job = get_jobs()["tests.core.periodic.test_periodic.module_level_job"]
        assert job.func is module_level_job and job.every_ms == 60000 and job.cron is None
        assert (job.timeout, job.jitter, job.overlap, job.misfire) == (None, 0.0, False, "coalesce")
        assert job.schedule == "every 60s" and not job.is_task
    finally:
        unregister("tests.core.periodic.test_periodic.module_level_job")


def module_level_job():
    return None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, TypeError, "exactly one of every= .* and cron="),
        ({"every": 5, "cron": "* * * * *"}, TypeError, "exactly one of every="),
        ({"every": 0}, ValueError, "every must be > 0 seconds, not 0"),
        ({"every": -1}, ValueError, "every must be > 0 seconds"),
        ({"every": 0.05}, ValueError, "every must be at least 0.1 seconds, not 0.05"),
        ({"every": "5"}, TypeError, "every must be a number of seconds or a timedelta, not '5'"),
        ({"every": True}, TypeError, "every must be a number of seconds or a timedelta"),
        (
            {"cron": "bad"},
            ValueError,
            "cron 'bad' is not a valid crontab expression: use five fields",
        ),
        (
            {"cron": "* * * * * *"},
            ValueError,
            "use five fields 'minute hour day-of-month month day-of-week'",
        ),
        ({"cron": "61 * * * *"}, ValueError, "is not a valid crontab expression"),
        ({"cron": 5}, TypeError, "cron must be a str such as"),
        # croniter's random field draws again at every call: an "hourly" job ran every 2 minutes
        ({"cron": "R * * * *"}, ValueError, r"a random field \(R\) is not allowed"),
        ({"cron": "0 R(0-5) * * *"}, ValueError, r"a random field \(R\) is not allowed"),
        ({"cron": "0 0 30 2 *"}, ValueError, "cron '0 0 30 2 \\*' never matches a date"),
        (
            {"every": 10, "jitter": 10},
            ValueError,
            r"jitter \(10 s\) must be shorter than every \(10 s\)",
        ),
        ({"every": 10, "jitter": -1}, ValueError, "jitter must be >= 0 seconds"),
        ({"every": 10, "timeout": 0}, ValueError, "timeout must be > 0 seconds"),
        ({"every": 10, "overlap": "yes"}, TypeError, "overlap must be True or False"),
        (
            {"every": 10, "misfire": "later"},
            ValueError,
            "misfire must be one of 'coalesce', 'catchup', 'skip', not 'later'",
        ),
        ({"every": 10, "name": "a{b}"}, ValueError, "job name 'a{b}' contains '{}'"),
    ],
)
def test_bad_arguments_say_what_is_allowed(kwargs, error, message):
    with pytest.raises(error, match=message):
        periodic(**kwargs)(module_level_job)
    assert "tests.core.periodic.test_periodic.module_level_job" not in get_jobs()


def test_periodic_without_parentheses_explains_how_to_use_it():
    with pytest.raises(TypeError, match=r"use @periodic\(every=...\) or @periodic\(cron=...\)"):
        periodic(module_level_job)


def test_a_nested_function_needs_an_explicit_name():
    def inner():
        pass

    with pytest.raises(ValueError, match=r"contains '<>'.*pass @periodic\(name=...\)"):
        periodic(every=10)(inner)
    periodic(every=10, name="inner")(inner)
    unregister("inner")


def test_two_functions_cannot_share_a_job_name_but_re_registration_replaces():
    periodic(every=10, name="shared")(module_level_job)
    try:
        periodic(every=20, name="shared")(module_level_job)  # re-import of the same module
        assert get_jobs()["shared"].every_ms == 20000
        with pytest.raises(ValueError, match="a periodic job named 'shared' is already registered"):
            periodic(every=10, name="shared")(make_job)
    finally:
        unregister("shared")


def test_only_callables_and_tasks_can_be_decorated():
    with pytest.raises(TypeError, match="decorates a function or a Django Task, not 5"):
        periodic(every=10, name="x")(5)


def test_a_django_task_is_registered_as_a_task(settings):
    from django_tasks import task

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    digest = task()(module_level_job)
    job = make_job(digest, every=60, name="digest")
    assert job.is_task and job.func is digest


def test_nothing_but_registration_happens_at_import():
    sys.modules.pop("tests.support.leader_jobs", None)
    unregister("tick")
    import tests.support.leader_jobs  # noqa: F401

    try:
        job = get_jobs()["tick"]
        assert job.misfire == "catchup" and job.every_ms == 500
    finally:
        unregister("tick")
    assert not hasattr(periodic_module._context, "job")


def test_autodiscover_imports_app_jobs_modules_and_the_configured_ones(settings, redis_url):
    settings.REDCOORD = {"URL": redis_url, "JOBS": ["tests.support.leader_jobs"]}
    for name in ("demo.heartbeat", "demo.market_report", "tick"):
        unregister(name)
    sys.modules.pop("testproject.demo.jobs", None)
    sys.modules.pop("tests.support.leader_jobs", None)
    try:
        jobs = autodiscover()
        assert {"demo.heartbeat", "demo.market_report", "tick"} <= set(jobs)
        assert jobs["demo.market_report"].cron == "*/1 * * * *"
    finally:
        for name in ("demo.heartbeat", "demo.market_report", "tick"):
            unregister(name)


# --- interval slots ----------------------------------------------------------------------


def test_interval_slots_are_multiples_of_the_interval_since_the_epoch_in_any_time_zone(settings):
    settings.TIME_ZONE = "Asia/Kolkata"  # UTC+5:30: slots stay on UTC multiples
    job = make_job(every=timedelta(minutes=5))
    now = ms(datetime(2024, 6, 1, 12, 7, 30, tzinfo=UTC))
    assert job.previous_slot(now) == ms(datetime(2024, 6, 1, 12, 5, tzinfo=UTC))
    nxt = job.next_slot(now)
    assert nxt == ms(datetime(2024, 6, 1, 12, 10, tzinfo=UTC))
    assert local(nxt, KOLKATA).strftime("%H:%M") == "17:40"
    assert job.next_slot(nxt) == nxt + 300_000  # strictly after
    day = make_job(every=timedelta(days=1), name="daily")
    assert local(day.next_slot(now), UTC) == datetime(
        2024, 6, 2, tzinfo=UTC
    )  # midnight UTC, not local


def test_interval_slots_ignore_dst_changes(settings):
    settings.TIME_ZONE = "America/New_York"
    job = make_job(every=3600)
    before = ms(datetime(2024, 11, 3, 0, 30, tzinfo=NY))  # DST ends at 02:00 EDT
    slots = [job.next_slot(before)]
    for _ in range(3):
        slots.append(job.next_slot(slots[-1]))
    assert [b - a for a, b in pairwise(slots)] == [3_600_000] * 3
    assert [local(s, NY).strftime("%H:%M%z") for s in slots] == [
        "01:00-0400",
        "01:00-0500",
        "02:00-0500",
        "03:00-0500",
    ]


def test_due_slots_count_and_limit_missed_interval_slots():
    job = make_job(every=10)
    base = 1_700_000_000_000
    assert job.due_slots(base, base + 9_999) == ([], 0)
    assert job.due_slots(base, base + 35_000) == ([base + 10_000, base + 20_000, base + 30_000], 0)
    slots, older = job.due_slots(base, base + 1_000_000, limit=3)
    assert slots == [base + 980_000, base + 990_000, base + 1_000_000] and older == 97


def test_jitter_is_the_same_everywhere_and_stays_before_the_next_slot():
    job = make_job(every=10, jitter=4, name="jittered")
    other = make_job(every=10, jitter=4, name="jittered")
    base = 1_700_000_000_000
    offsets = [job.due_ms(base + i * 10_000) - (base + i * 10_000) for i in range(50)]
    assert offsets == [other.due_ms(base + i * 10_000) - (base + i * 10_000) for i in range(50)]
    assert all(0 <= o <= 4000 for o in offsets) and len(set(offsets)) > 10
    slot = base + 10_000
    due = job.due_ms(slot)
    assert job.due_slots(base, due - 1) == ([], 0) and job.due_slots(base, due) == ([slot], 0)


# --- cron slots ----------------------------------------------------------------------------


def test_cron_slots_follow_time_zone_with_a_half_hour_offset(settings):
    settings.TIME_ZONE = "Asia/Kolkata"
    job = make_job(cron="0 9 * * *")
    assert job.schedule == "cron 0 9 * * * (Asia/Kolkata)"
    now = ms(datetime(2024, 1, 1, 10, 0, tzinfo=KOLKATA))
    nxt = job.next_slot(now)
    assert local(nxt, UTC) == datetime(2024, 1, 2, 3, 30, tzinfo=UTC)
    assert local(job.previous_slot(now), KOLKATA) == datetime(2024, 1, 1, 9, 0, tzinfo=KOLKATA)
    assert job.previous_slot(nxt) == nxt  # a slot is its own previous slot
    quarter = make_job(cron="*/15 * * * *", name="q")
    assert local(quarter.next_slot(now + 1), UTC).strftime("%H:%M") == "04:45"


def test_cron_slots_across_spring_forward_in_new_york(settings):
    settings.TIME_ZONE = "America/New_York"
    nine = make_job(cron="0 9 * * *", name="nine")
    saturday = ms(datetime(2024, 3, 9, 12, 0, tzinfo=NY))
    sunday = nine.next_slot(saturday)
    assert local(sunday, NY).strftime("%Y-%m-%d %H:%M%z") == "2024-03-10 09:00-0400"
    assert sunday - nine.previous_slot(saturday) == 23 * 3_600_000  # a 23-hour day
    # 02:30 does not exist on 2024-03-10: the job runs once, at the first instant after the gap.
    night = make_job(cron="30 2 * * *", name="night")
    slots = [night.next_slot(saturday)]
    slots.append(night.next_slot(slots[-1]))
    assert [local(s, NY).strftime("%m-%d %H:%M%z") for s in slots] == [
        "03-10 03:00-0400",
        "03-11 02:30-0400",
    ]


def test_cron_slots_across_fall_back_in_new_york(settings):
    settings.TIME_ZONE = "America/New_York"
    start = ms(datetime(2024, 11, 2, 12, 0, tzinfo=NY))
    # A fixed hour in the repeated hour runs once, at the first 01:30.
    daily = make_job(cron="30 1 * * *", name="daily")
    slots = [daily.next_slot(start)]
    slots.append(daily.next_slot(slots[-1]))
    assert [local(s, NY).strftime("%m-%d %H:%M%z") for s in slots] == [
        "11-03 01:30-0400",
        "11-04 01:30-0500",
    ]
    assert daily.previous_slot(slots[1] - 1) == slots[0]
    # A wildcard hour runs in both 01:30s: they are different instants, 60 minutes apart.
    half = make_job(cron="*/30 * * * *", name="half")
    slots = [half.next_slot(ms(datetime(2024, 11, 3, 0, 45, tzinfo=NY)))]
    for _ in range(4):
        slots.append(half.next_slot(slots[-1]))
    assert [local(s, NY).strftime("%H:%M%z") for s in slots] == [
        "01:00-0400",
        "01:30-0400",
        "01:00-0500",
        "01:30-0500",
        "02:00-0500",
    ]
    assert {b - a for a, b in pairwise(slots)} == {1_800_000}
    due, older = half.due_slots(slots[0] - 1, slots[-1])
    assert due == slots and older == 0


def test_cron_due_slots_keep_the_latest_when_limited(settings):
    settings.TIME_ZONE = "Asia/Kolkata"
    job = make_job(cron="0 * * * *")
    start = ms(datetime(2024, 1, 1, 0, 0, tzinfo=KOLKATA))
    slots, older = job.due_slots(start, start + 10 * 3_600_000 + 5, limit=3)
    assert [local(s, KOLKATA).hour for s in slots] == [8, 9, 10] and older >= 1
