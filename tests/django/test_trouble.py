"""The trouble list at the top of the dashboard (django_redcoord/trouble.py): each rule, on a
real server,
fires when it should and stays quiet when it should not."""

from __future__ import annotations

import re
import time

import pytest

from django_redcoord import trouble
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.ratelimit import RateLimiter
from django_redcoord.dashboard import live_locks, overview

KEYS = KeyBuilder("test")


def found(client, kind=None):
    """The trouble items the dashboard's overview finds now (of ``kind``), as (kind, resource)."""
    items = overview(client, "test")["trouble"]["items"]
    return [(x["kind"], x["resource"]) for x in items if kind is None or x["kind"] == kind]


def server_ms(client):
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def wait_for(predicate, timeout=20.0, what="the state"):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_an_empty_server_has_no_trouble_and_says_so(redis_client):
    data = overview(redis_client, "test")["trouble"]
    assert data == {"items": [], "counts": {"error": 0, "warning": 0}, "notes": []}


# -- queues ---------------------------------------------------------------------


def test_ready_messages_and_no_live_worker_is_a_problem_until_a_worker_serves_the_queue(
    redis_client,
):
    emails = Queue("emails", client=redis_client, prefix="test")
    Queue("idle", client=redis_client, prefix="test").push(
        "x", delay=3600
    )  # delayed only: not ready
    assert found(redis_client, "queue") == []
    emails.push_many(range(3))
    assert found(redis_client, "queue") == [("queue", "emails")]
    [item] = [x for x in overview(redis_client, "test")["trouble"]["items"] if x["kind"] == "queue"]
    assert (
        item["severity"] == "error"
        and item["reason"].startswith("3 ready")
        and "no live worker" in item["reason"]
    )
    assert item["href"] == "#rc-section-queues"

    other = Worker([Queue("other", client=redis_client, prefix="test")], handler=lambda m: None)
    other._beat()  # a live worker of another queue does not serve this one
    assert found(redis_client, "queue") == [("queue", "emails")]
    worker = Worker([emails], handler=lambda m: None, heartbeat=0.2, timeout=0.5)
    worker._beat()
    assert found(redis_client, "queue") == []
    # its heartbeat deadline passes (it died): the queue has no live worker again
    wait_for(
        lambda: found(redis_client, "queue") == [("queue", "emails")], what="the worker to be dead"
    )


# -- dead letters ---------------------------------------------------------------


def bury(queue, n):
    consumer = queue.consumer("c")
    for i in range(n):
        queue.push({"n": i})
        [message], _ = consumer.claim(1)
        consumer.nack(message, f"boom {i}")


def test_dead_letters_that_just_died_are_growing_and_old_ones_are_not(redis_client):
    queue = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
    Queue("fine", client=redis_client, prefix="test").push(1)
    assert (
        trouble.dead_letter_trouble(
            redis_client,
            KEYS,
            overview(redis_client, "test")["queues"],
            now_ms=server_ms(redis_client),
        )
        == []
    )
    bury(queue, 3)
    queues = overview(redis_client, "test")["queues"]
    now = server_ms(redis_client)
    [item] = trouble.dead_letter_trouble(redis_client, KEYS, queues, now_ms=now)
    assert (item["kind"], item["resource"], item["severity"]) == ("dead_letters", "emails", "error")
    assert item["reason"] == "3 new dead letter(s) in the last 15 min (3 in all)"
    assert item["href"] == "dead-letters/?name=emails"
    # the same dead letters, judged 16 minutes later: none is new, nothing is growing
    assert trouble.dead_letter_trouble(redis_client, KEYS, queues, now_ms=now + 16 * 60_000) == []
    assert ("dead_letters", "emails") in found(redis_client)


def test_more_dead_letters_than_are_peeked_say_so(redis_client, monkeypatch):
    monkeypatch.setattr(trouble, "DEAD_PEEK", 2)
    queue = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
    bury(queue, 3)
    [item] = trouble.dead_letter_trouble(
        redis_client, KEYS, overview(redis_client, "test")["queues"], now_ms=server_ms(redis_client)
    )
    assert item["reason"].startswith("2+ new dead letter(s)")


# -- rate limits ----------------------------------------------------------------


def test_a_rate_limit_key_at_its_limit_is_a_warning_and_one_below_is_not(redis_client):
    api = RateLimiter("3/m", name="api", client=redis_client, prefix="test")
    api.hit("ip:10.0.0.2")
    api.hit("ip:10.0.0.1")
    api.hit("ip:10.0.0.1")
    assert found(redis_client, "rate_limit") == []  # 1 left
    api.hit("ip:10.0.0.1")
    assert found(redis_client, "rate_limit") == [("rate_limit", "api / ip:10.0.0.1")]
    [item] = [
        x for x in overview(redis_client, "test")["trouble"]["items"] if x["kind"] == "rate_limit"
    ]
    assert (
        item["severity"] == "warning"
        and "at its limit (3/m)" in item["reason"]
        and "next request allowed in" in item["reason"]
    )


# -- periodic jobs and the leader -------------------------------------------------


def leader(redis_client):
    from django_redcoord.core.leader.election import LeaderElection

    election = LeaderElection(
        "default",
        lease=30,
        renew_deadline=20,
        retry_period=5,
        identity="web-1:1",
        client=redis_client,
        prefix="test",
    )
    assert election.campaign()
    return election


def run_job(election, name, fn):
    from django_redcoord.core.periodic.jobs import get_jobs, periodic, unregister
    from django_redcoord.core.periodic.scheduler import Scheduler

    periodic(every=300, name=name)(fn)
    job = get_jobs()[name]
    unregister(name)
    return Scheduler(election, [job]).run_now(job, timeout=5).outcome


def run_scheduled(election, name, fn):
    """Run ``fn`` as a job every second on its schedule (not ad hoc) until a run has ended."""
    from django_redcoord.core.periodic.jobs import get_jobs, periodic, unregister
    from django_redcoord.core.periodic.scheduler import Scheduler, read_job_states

    periodic(every=1, name=name)(fn)
    job = get_jobs()[name]
    unregister(name)
    scheduler = Scheduler(election, [job])

    def ended():
        assert election.campaign()  # renews the lease, as run_leader's loop does
        scheduler.tick(time.time())
        scheduler.wait_idle(5)
        return bool(read_job_states(election).get(name, {}).get("outcome"))

    wait_for(ended, what=f"a scheduled run of {name}")


def boom():
    raise RuntimeError("the rates API said 503")


def test_a_failing_periodic_job_is_a_problem_and_a_passing_one_is_not(redis_client):
    election = leader(redis_client)
    run_scheduled(election, "refresh_rates", lambda: None)
    assert found(redis_client, "job") == []
    run_scheduled(election, "send_digest", boom)
    assert found(redis_client, "job") == [("job", "send_digest")]
    [item] = [x for x in overview(redis_client, "test")["trouble"]["items"] if x["kind"] == "job"]
    assert item["severity"] == "error" and "the rates API said 503" in item["reason"]
    assert found(redis_client, "leader") == []  # a leader is in office


def test_jobs_and_no_leader_is_a_problem(redis_client):
    election = leader(redis_client)
    run_scheduled(election, "refresh_rates", lambda: None)
    assert found(redis_client, "leader") == [] and found(redis_client, "job") == []
    election.resign()
    wait_for(lambda: ("leader", "election default") in found(redis_client), what="no leader")


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"name": "a", "health": "ok", "overdue": False, "late": 0}, []),
        ({"name": "a", "health": "paused", "paused": 1, "late": 0}, []),
        ({"name": "a", "health": "never_ran", "overdue": False, "late": 0}, []),
        (
            {
                "name": "a",
                "health": "never_ran",
                "overdue": True,
                "late": 0,
                "health_reason": "never scheduled: no leader",
            },
            ["never scheduled: no leader"],
        ),
        (
            {"name": "a", "health": "never_ran", "late": 90},
            ["has never run, and its first slot is 90 s late"],
        ),
        (
            {
                "name": "a",
                "health": "overdue",
                "overdue": True,
                "late": 600,
                "health_reason": "the leader stopped renewing",
            },
            ["the leader stopped renewing"],
        ),
        (
            {"name": "a", "health": "overdue", "overdue": True, "late": 600},
            ["overdue: its slot is 10 min late"],
        ),
        (
            {"name": "a", "health": "failing", "health_reason": "2 runs in a row failed"},
            ["2 runs in a row failed"],
        ),
        (
            {"name": "a", "outcome": "timeout", "error": "ran past 30 s"},
            ["its last run ended in timeout: ran past 30 s"],
        ),
        ({"name": "a", "outcome": "ok"}, []),
        # the dead-man's switch judged it: the last outcome alone does not count twice
        ({"name": "a", "health": "ok", "outcome": "error"}, []),
    ],
)
def test_the_job_rule_reads_the_dead_mans_switch_fields_and_works_without_them(row, expected):
    election = [{"election": "default", "leader": {"identity": "x"}, "jobs": [row]}]
    assert [x["reason"] for x in trouble.job_trouble(election)] == expected


# -- locks ----------------------------------------------------------------------


def judge(client, book, *, now_ms=None):
    now = server_ms(client) if now_ms is None else now_ms
    notes = []
    items = book.trouble(
        client, KEYS, live_locks(client, KEYS, now_ms=now), {}, now_ms=now, notes=notes
    )
    return [x["resource"] for x in items], notes, items


def test_a_lock_held_far_longer_than_its_group_is_a_warning_its_peers_are_not(
    redis_client, monkeypatch
):
    monkeypatch.setattr(trouble, "LOCK_MIN_AGE_S", 1.0)
    old = Lock("batch:old", ttl=600, wait=0, client=redis_client, prefix="test")
    assert old.acquire()
    granted = server_ms(redis_client)
    wait_for(lambda: server_ms(redis_client) - granted > 4000, what="4 s of the server's clock")
    peers = [
        Lock(f"batch:{i}", ttl=600, wait=0, client=redis_client, prefix="test") for i in range(5)
    ]
    assert all(p.acquire() for p in peers)
    Lock(
        "alone", ttl=600, wait=0, client=redis_client, prefix="test"
    ).acquire()  # no group, held 0 s
    now = server_ms(
        redis_client
    )  # judged as of now: the peers just taken (a loaded machine may be slow to judge)
    names, notes, [item] = judge(redis_client, trouble.LockAges(), now_ms=now)
    assert names == ["batch:old"] and notes == []
    assert (
        item["severity"] == "warning"
        and "the median age" in item["reason"]
        and "6 live batch:… locks" in item["reason"]
    )
    assert item["href"] == "?q=batch%3Aold#rc-section-locks"
    # negative control: with fewer peers than LOCK_PEERS_MIN the group says nothing
    monkeypatch.setattr(trouble, "LOCK_PEERS_MIN", 7)
    assert judge(redis_client, trouble.LockAges(), now_ms=now)[0] == []
    monkeypatch.setattr(trouble, "LOCK_PEERS_MIN", 5)
    # released and taken again: a fresh grant is not old, though the book read the old one
    book = trouble.LockAges()
    assert judge(redis_client, book, now_ms=now)[0] == ["batch:old"]
    old.release()
    assert Lock("batch:old", ttl=600, wait=0, client=redis_client, prefix="test").acquire()
    assert judge(redis_client, book)[0] == []


def test_a_lock_renewed_for_many_times_its_ttl_is_a_warning_a_long_ttl_is_not(
    redis_client, monkeypatch
):
    monkeypatch.setattr(trouble, "LOCK_MIN_AGE_S", 1.0)
    monkeypatch.setattr(trouble, "LOCK_HOLD_FACTOR", 1)
    monkeypatch.setattr(trouble, "LOCK_JUDGE_EVERY_MS", 0)  # the whole book judged on every call
    renewed = Lock(
        "import:catalog", ttl=2, wait=0, auto_renew=True, client=redis_client, prefix="test"
    )
    long_ttl = Lock("report:q3", ttl=60, wait=0, client=redis_client, prefix="test")
    assert renewed.acquire() and long_ttl.acquire()
    try:
        book = trouble.LockAges()
        assert judge(redis_client, book)[0] == []  # held under a second
        # the TTL estimate is at most 1.5 (bound - now) + 1 <= 8.5 s for a 2 s TTL: flagged within
        # ~9 s
        # (one judgement, kept: until the lock is older than the largest TTL estimate, a renewal
        # that just moved its bound can make the next judgement say "not yet")
        seen = []
        wait_for(
            lambda: seen.append(judge(redis_client, book)) or seen[-1][0] == ["import:catalog"],
            timeout=30,
            what="the renewed lock flagged",
        )
        names, _, [item] = seen[-1]
        assert "its TTL" in item["reason"] and "renewed all along" in item["reason"]
        assert long_ttl.locked()  # held as long, but well within its 60 s TTL: not flagged
    finally:
        renewed.release()
    assert judge(redis_client, book)[0] == []


def test_lock_ages_are_read_a_budget_at_a_time_and_cached(redis_client, monkeypatch):
    monkeypatch.setattr(trouble, "LOCK_READS_PER_REFRESH", 4)
    for i in range(10):
        Lock(f"order:{i}", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    book = trouble.LockAges()
    _, notes, _ = judge(redis_client, book)
    assert book.last_reads == 4 and notes == [
        "Lock ages: 4 of 10 live locks checked so far; the rest on the next refreshes (4 a "
        "refresh)."
    ]
    judge(redis_client, book)
    _, notes, _ = judge(redis_client, book)
    assert book.last_reads == 2 and notes == []
    judge(redis_client, book)
    assert book.last_reads == 0  # all known, none old: nothing read again


def test_a_round_of_the_whole_book_is_judged_a_part_a_refresh(redis_client, monkeypatch):
    for i in range(20):
        Lock(f"order:{i}", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    parts = []
    real = trouble._judge
    monkeypatch.setattr(
        trouble, "_judge", lambda names, *args: parts.append(len(list(names))) or real(names, *args)
    )
    book = trouble.LockAges()
    now = server_ms(redis_client)
    judge(redis_client, book, now_ms=now)
    assert parts == [4, 20]  # a round starts: its first fifth; then the 20 names just read (new)
    for step in range(1, 5):
        parts.clear()
        judge(redis_client, book, now_ms=now + 2000 * step)
        assert parts == [4, 0]  # the next fifth of the round; nothing read
    parts.clear()
    judge(redis_client, book, now_ms=now + 9000)
    assert parts == [0]  # the round is done; the next is due 10 s after this one began
    judge(redis_client, book, now_ms=now + 10_000)
    parts.clear()
    judge(
        redis_client, book, now_ms=now + 25_000
    )  # a round overdue before its end: the rest of it at once
    assert parts == [16, 0]


def test_the_group_medians_kept_with_the_book_are_the_ones_worked_out_from_it(redis_client):
    locks = [
        Lock(f"batch:{i}", ttl=60, wait=0, client=redis_client, prefix="test") for i in range(6)
    ]
    assert all(lock.acquire() for lock in locks)
    Lock("alone", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    book = trouble.LockAges()
    now = server_ms(redis_client)
    judge(redis_client, book, now_ms=now)
    assert set(book._group_ages(now)) == {"batch"} and book._group_ages(now) == trouble._peers(
        book._book, now
    )
    for lock in locks[:2]:
        lock.release()
    judge(redis_client, book, now_ms=server_ms(redis_client))
    assert (
        book._group_ages(now) == trouble._peers(book._book, now) == {}
    )  # 4 left: fewer than LOCK_PEERS_MIN


def test_an_expired_lock_still_in_the_index_is_not_judged(redis_client, monkeypatch):
    monkeypatch.setattr(trouble, "LOCK_MIN_AGE_S", 0.0)
    lock = Lock("gone:1", ttl=0.2, wait=0, client=redis_client, prefix="test")
    assert lock.acquire()
    wait_for(lambda: not lock.locked(), what="the lock to expire")
    book = trouble.LockAges()
    assert "gone:1" in live_locks(
        redis_client, KEYS, now_ms=server_ms(redis_client)
    )  # its entry's bound has not passed
    assert judge(redis_client, book)[0] == []
    assert book.last_reads == 1  # read, found free, not judged


# -- the whole list -------------------------------------------------------------


def test_items_are_sorted_problems_first_and_capped_per_kind(redis_client, monkeypatch):
    monkeypatch.setattr(trouble, "MAX_ITEMS_PER_KIND", 2)
    for i in range(4):
        Queue(f"q{i}", client=redis_client, prefix="test").push(1)
    api = RateLimiter("1/m", name="api", client=redis_client, prefix="test")
    api.hit("k")
    data = overview(redis_client, "test")["trouble"]
    kinds = [(x["severity"], x["kind"], x["resource"]) for x in data["items"]]
    assert kinds == [
        ("error", "queue", "q0"),
        ("error", "queue", "q1"),
        ("error", "queue", "2 more"),
        ("warning", "rate_limit", "api / k"),
    ]
    assert data["counts"] == {"error": 4, "warning": 1}


# -- the panel alone --------------------------------------------------------------

PANEL_URL = "/admin/django_redcoord/dashboard/trouble/"


@pytest.mark.django_db
def test_the_panel_alone_needs_the_view_permission_and_renders_as_the_page_does(
    client, staff, redis_client
):
    Queue("emails", client=redis_client, prefix="test").push(1)
    for i in range(3):
        Lock(f"invoice:{i}", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    response = client.get(PANEL_URL)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    client.force_login(staff())
    assert client.get(PANEL_URL).status_code == 403
    client.force_login(staff("view_dashboard"))
    alone = client.get(PANEL_URL).json()
    assert list(alone) == ["rc-section-trouble"]
    assert (
        'data-resource="emails"' in alone["rc-section-trouble"]
        and "1 problem" in alone["rc-section-trouble"]
    )
    page = client.get("/admin/django_redcoord/dashboard/fragments/").json()["rc-section-trouble"]
    items = re.compile(
        r'<li class="([^"]*)" data-kind="([^"]*)" data-severity="([^"]*)" data-resource="([^"]*)">'
    )
    assert (
        items.findall(page)
        == items.findall(alone["rc-section-trouble"])
        == [("rc-trouble rc-trouble-error", "queue", "error", "emails")]
    )  # the same items, as the page renders them


def test_the_trouble_only_overview_reads_only_what_the_list_judges(redis_client):
    from django_redcoord.dashboard import TROUBLE_ONLY

    Queue("emails", client=redis_client, prefix="test").push(1)
    Lock("invoice:1", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    full, alone = overview(redis_client, "test"), overview(redis_client, "test", only=TROUBLE_ONLY)

    def what(data):
        return [(x["severity"], x["kind"], x["resource"]) for x in data["trouble"]["items"]]

    assert what(alone) == what(full) == [("error", "queue", "emails")]
    assert (
        alone["locks"]["items"] == []
        and alone["locks"]["total"] == 1
        and "history" not in alone["queues"][0]
    )
    with pytest.raises(ValueError, match="takes"):
        overview(redis_client, "test", only=("locks",))


def test_a_lengthened_schedule_is_not_overdue_in_the_dashboard_metrics_and_badge(redis_client):
    # The job rows (the admin's badge, the trouble panel, the overdue gauges and their alert) judged
    # the
    # awaited slot from the next_due of the last claim: after an edit from every 10 s to every hour
    # they
    # showed the job overdue until the first hourly slot, while the leader followed the edit
    # correctly.
    from django_redcoord.core.leader.election import LeaderElection
    from django_redcoord.core.periodic.jobs import periodic, unregister
    from django_redcoord.core.periodic.scheduler import Scheduler
    from django_redcoord.core.periodic.schedules import edit_schedule
    from django_redcoord.dashboard import leaders

    periodic(every=10, max_late=3, name="rt.lengthened")(lambda: None)
    try:
        from django_redcoord.core.periodic.jobs import get_jobs

        job = get_jobs()["rt.lengthened"]
        election = LeaderElection(
            "default",
            lease=60,
            renew_deadline=40,
            retry_period=1,
            identity="a",
            client=redis_client,
            prefix="test",
        )
        assert election.campaign()
        scheduler = Scheduler(election, [job], request_interval=0)
        while server_ms(redis_client) % 10_000 > 5_000:  # the claim and the edit in one 10 s period
            time.sleep(0.05)
        scheduler.tick(server_ms(redis_client) / 1000)
        stored = edit_schedule(election, job, every=3600)
        later = stored.since_ms + 20_000  # the next 10 s slot was due 10 to 15 s ago
        scheduler.tick(later / 1000)
        hour = (stored.since_ms // 3_600_000 + 1) * 3_600_000
        hour += 3_600_000 if hour <= later else 0

        def row(now_ms):
            (default,) = leaders(redis_client, KEYS, ("default",), now_ms=now_ms)
            (found,) = [j for j in default["jobs"] if j["name"] == "rt.lengthened"]
            return found

        assert not row(later)["overdue"], row(later)["health_reason"]
        assert row(hour + 4000)[
            "overdue"
        ]  # negative control: the hourly slot itself, unclaimed, is overdue
    finally:
        unregister("rt.lengthened")


@pytest.mark.django_db
def test_a_registered_job_no_leader_ever_claimed_shows_as_never_ran(
    redis_client, settings, client, staff
):
    """A job deployed to the web processes but not to run_leader's: while a leader leads, the admin
    lists it with its dead-man's verdict (it had no row, so no red badge, until a leader claimed
    it)."""
    import sys

    from django_redcoord import dashboard
    from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
    from django_redcoord.core.periodic.jobs import unregister

    settings.REDCOORD = {
        "URL": settings.REDCOORD["URL"],
        "KEY_PREFIX": "test",
        "JOBS": ["tests.support.schedule_jobs"],
    }
    sys.modules.pop("tests.support.schedule_jobs", None)
    dashboard._discovered = False
    try:
        keys = KeyBuilder("test")
        rows = dashboard.leaders(
            redis_client, keys, (DEFAULT_ELECTION,), now_ms=server_ms(redis_client)
        )
        assert rows[0]["jobs"] == []  # no leader: nothing is judged yet (run_leader is not running)
        election = LeaderElection(
            DEFAULT_ELECTION, client=redis_client, prefix="test", identity="stuck"
        )
        assert election.campaign()
        rows = dashboard.leaders(
            redis_client, keys, (DEFAULT_ELECTION,), now_ms=server_ms(redis_client)
        )
        jobs = {job["name"]: job for job in rows[0]["jobs"]}
        assert {"sched.tick", "sched.billing"} <= set(jobs)
        # never run; not overdue yet: the leader was elected a moment ago and has its allowed
        # lateness
        assert (
            jobs["sched.tick"]["health"] == "never_ran" and jobs["sched.tick"]["overdue"] is False
        )
        assert jobs["sched.tick"]["health_reason"]
        client.force_login(staff("view_dashboard"))
        page = client.get("/admin/django_redcoord/dashboard/")
        assert (
            page.status_code == 200 and "sched.billing" in page.content.decode()
        )  # its row, on the page
    finally:
        for name in ("sched.tick", "sched.billing"):
            unregister(name)
        sys.modules.pop("tests.support.schedule_jobs", None)
        dashboard._discovered = False
