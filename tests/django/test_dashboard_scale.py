"""The dashboard at scale (docs/dashboard.md, "Speed"): what the fast reads give is what the
careful ones
give, the page's counts add up, its pagination reaches every lock, a flagged lock is among its
rows, and
the per-process books (lock waits, queue histories, charts) never show stale data."""

from __future__ import annotations

import re
import time

import pytest

from django_redcoord import dashboard, trouble
from django_redcoord.core.indexes import counting_unreadable, read_index
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.dashboard import list_lock_waits, list_locks, live_locks, overview, sparkline

KEYS = KeyBuilder("test")
URL = "/admin/django_redcoord/dashboard/"


def server_ms(client):
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def careful_live_locks(client, now_ms):
    """The live locks as read_index reads them (entry by entry), for comparison."""
    since = -(-now_ms // 1000)
    return {
        name: int(bound)
        for name, bound in read_index(client, KEYS, "locks").items()
        if int(bound) >= since
    }


def take(client, names, ttl=60):
    locks = [Lock(name, ttl=ttl, wait=0, client=client, prefix="test") for name in names]
    assert all(lock.acquire() for lock in locks)
    return locks


# -- the live-lock index -----------------------------------------------------------


def test_the_fast_read_of_the_lock_index_is_the_careful_one(redis_client, monkeypatch):
    take(
        redis_client,
        [f"invoice:{i}" for i in range(300)] + ["tagged:{cust-7}:1", "a|b=c,d#e~f@g+h/i"],
    )
    now = server_ms(redis_client)
    careful = careful_live_locks(redis_client, now)
    assert len(careful) == 302
    calls = []
    monkeypatch.setattr(dashboard, "read_index", lambda *a, **k: calls.append(a) or {})
    assert live_locks(redis_client, KEYS, now_ms=now) == careful
    assert (
        calls == []
    )  # (negative control below: the careful way is taken when something is not ours)


@pytest.mark.parametrize(
    "field, value, why",
    [
        ("bad-bound", "soon", "a bound that is not a whole number"),
        ("bad name", "9999999999", "a name that is not a valid name"),
        ("two\nlines", "9999999999", "a name holding a newline"),
        ("spaced", "1 2", "a value holding a space"),
        ("bad{tag", "9999999999", "misplaced braces"),
    ],
)
def test_what_we_did_not_write_in_the_lock_index_is_skipped_and_counted(
    redis_client, field, value, why
):
    take(redis_client, ["order:1", "order:2"])
    redis_client.hset(KEYS.index_keys("locks")[7], field, value)
    now = server_ms(redis_client)
    with counting_unreadable() as counts:
        found = live_locks(redis_client, KEYS, now_ms=now)
    assert set(found) == {"order:1", "order:2"}, why
    assert counts == {"the locks index": 1}, why


def test_a_lock_index_bucket_of_another_type_is_skipped_and_counted(redis_client):
    take(redis_client, ["order:1"])
    bucket = next(k for k in KEYS.index_keys("locks") if not redis_client.exists(k))
    redis_client.set(bucket, "not a hash")
    with counting_unreadable() as counts:
        assert set(live_locks(redis_client, KEYS, now_ms=server_ms(redis_client))) == {"order:1"}
    assert counts == {"the locks index": 1}


# -- counts, pagination, the flagged lock -------------------------------------------


@pytest.mark.django_db
def test_the_pages_counts_add_up_and_its_pagination_reaches_every_lock(client, staff, redis_client):
    names = [f"invoice:{i}" for i in range(137)] + [f"job:{i}" for i in range(24)]
    take(redis_client, names)
    client.force_login(staff("view_dashboard"))
    first = client.get(URL + "data.json").json()["locks"]
    assert first["total"] == len(names) and first["pages"] == -(-len(names) // dashboard.PAGE_SIZE)
    seen = []
    for page in range(1, first["pages"] + 1):
        listed = client.get(URL + f"data.json?page={page}").json()["locks"]
        assert listed["total"] == len(names) and len(listed["items"]) <= dashboard.PAGE_SIZE
        seen += [x["name"] for x in listed["items"]]
    assert seen == sorted(names)  # every lock once, in name order
    html = client.get(URL + f"?page={first['pages']}").content.decode()
    assert f'<span id="rc-locks-total">{len(names)}</span>' in html
    rows = re.findall(
        r'<tr data-name="([^"]+)">',
        re.search(r'<tbody id="rc-locks">(.*?)</tbody>', html, re.S).group(1),
    )
    assert rows == sorted(names)[(first["pages"] - 1) * dashboard.PAGE_SIZE :]
    jobs = client.get(URL + "data.json?q=job:").json()["locks"]
    assert jobs["total"] == 24 and [x["name"] for x in jobs["items"]] == sorted(
        f"job:{i}" for i in range(24)
    )


@pytest.mark.django_db
def test_a_lock_held_far_too_long_is_flagged_and_its_link_lists_it(
    client, staff, redis_client, monkeypatch
):
    monkeypatch.setattr(trouble, "LOCK_MIN_AGE_S", 1.0)
    monkeypatch.setattr(
        trouble, "LOCK_HOLD_FACTOR", 2
    )  # (held 4 s: flagged while its peers' median age is under 2 s)
    [old] = take(redis_client, ["batch:old"], ttl=600)
    granted = server_ms(redis_client)
    while server_ms(redis_client) - granted < 4000:
        time.sleep(0.05)
    take(
        redis_client, [f"batch:{i}" for i in range(60)] + [f"other:{i}" for i in range(80)], ttl=600
    )
    client.force_login(staff("view_dashboard"))
    for _ in range(3):  # the lock-age book of this process reads them a budget at a time
        data = client.get(URL + "data.json").json()
    flagged = [x for x in data["trouble"]["items"] if x["kind"] == "lock"]
    assert [x["resource"] for x in flagged] == ["batch:old"], data["trouble"]
    assert data["locks"]["total"] == 141 and data["trouble"]["notes"] == []
    panel = client.get(URL).content.decode()
    assert 'data-kind="lock" data-severity="warning" data-resource="batch:old"' in panel
    link = flagged[0]["href"]  # "?q=batch%3Aold#rc-section-locks"
    rows = client.get(URL + "data.json" + link.split("#")[0]).json()["locks"]["items"]
    assert [x["name"] for x in rows] == ["batch:old"]
    html = client.get(URL + link.split("#")[0]).content.decode()
    assert '<tr data-name="batch:old">' in html
    # negative control: released and taken again, the fresh grant is not flagged
    monkeypatch.setattr(trouble, "LOCK_JUDGE_EVERY_MS", 0)
    old.release()
    take(redis_client, ["batch:old"], ttl=600)
    data = client.get(URL + "data.json").json()
    assert [x for x in data["trouble"]["items"] if x["kind"] == "lock"] == []


# -- the books: never stale ---------------------------------------------------------


def record_wait(client, name, minute, grants, total_ms, max_ms, *, new_minute):
    """A wait entry as locks/common.lua writes it: the minute's entry in front, rewritten in
    place."""
    k = KEYS.lock(name)
    entry = f"{minute} {grants} {total_ms} {max_ms}"
    if new_minute:
        client.lpush(k.waits, entry)
        client.ltrim(k.waits, 0, 60)
    else:
        client.lset(k.waits, 0, entry)
    client.hset(k.wait_index, name, minute)


def test_the_lock_waits_read_only_new_entries_and_are_what_a_fresh_read_gives(redis_client):
    import unittest.mock as mock

    now = server_ms(redis_client)
    minute = now // 60_000
    for i in range(3):
        for m in range(
            minute - 62, minute + 1
        ):  # over an hour, up to this minute: the oldest fall out
            record_wait(
                redis_client, f"report:{i}", m, 1, 100 * (i + 1), 100 * (i + 1), new_minute=True
            )
    for m in range(minute - 5, minute - 1):  # a name last waited for two minutes ago
        record_wait(redis_client, "quiet:1", m, 1, 50, 50, new_minute=True)
    shown = list_lock_waits(redis_client, KEYS, now_ms=now)
    book = dashboard._wait_book(redis_client, KEYS)
    assert book.last_full_reads == 4
    assert [x["name"] for x in shown["items"]] == ["report:2", "report:1", "report:0", "quiet:1"]
    assert shown["items"][0]["grants"] == 60  # the minutes of the last hour only (61 kept)
    assert list_lock_waits(redis_client, KEYS, now_ms=now) == shown
    assert (book.last_full_reads, book.last_head_reads) == (
        0,
        3,
    )  # quiet:1's minute ended before it was read
    # this minute's entry rewritten in place (more waits this minute): read without reading the list
    # whole
    record_wait(redis_client, "report:0", minute, 5, 100_000, 90_000, new_minute=False)
    again = list_lock_waits(redis_client, KEYS, now_ms=now)
    assert book.last_full_reads == 0 and again["items"][0]["name"] == "report:0"
    # a new minute: that name is read whole again
    record_wait(redis_client, "report:1", minute + 1, 2, 500_000, 400_000, new_minute=True)
    again = list_lock_waits(redis_client, KEYS, now_ms=now + 60_000)
    assert book.last_full_reads == 1 and again["items"][0]["name"] == "report:1"
    fresh = dashboard.WaitBook()
    with mock.patch.object(dashboard, "_wait_book", lambda *a: fresh):
        assert (
            list_lock_waits(redis_client, KEYS, now_ms=now + 60_000) == again
        )  # what a fresh read gives
    assert fresh.last_full_reads == 4


def test_queue_histories_are_worked_out_again_only_when_their_list_changes(redis_client):
    q = Queue("emails", client=redis_client, prefix="test")
    q.push(1)
    history = KEYS.queue_history("emails")
    now = server_ms(redis_client)
    minute = now // 60_000
    redis_client.lpush(
        history, *(f"{m} {m % 5} {m - minute + 100}" for m in range(minute - 5, minute))
    )
    first = dashboard.list_queues(redis_client, KEYS, now_ms=now)[0]["history"]
    book = dashboard._history_book(redis_client, KEYS)
    assert book.last_parsed == 1 and len(first["depth"]) == 5
    assert (
        dashboard.list_queues(redis_client, KEYS, now_ms=now)[0]["history"] == first
        and book.last_parsed == 0
    )
    redis_client.lpush(history, f"{minute} 42 {200}")  # the next sample
    second = dashboard.list_queues(redis_client, KEYS, now_ms=now)[0]["history"]
    assert book.last_parsed == 1 and second["depth"][-1] == [minute * 60_000, 42]
    assert second == dashboard.queue_history(
        [(m, m % 5, m - minute + 100) for m in range(minute - 5, minute)] + [(minute, 42, 200)],
        now_ms=now,
    )
    redis_client.lpush(
        history, "not a sample"
    )  # not ours: read the careful way (that entry skipped)
    third = dashboard.list_queues(redis_client, KEYS, now_ms=now)[0]["history"]
    assert third == second


def test_a_chart_is_drawn_again_when_its_points_change(redis_client):
    now = server_ms(redis_client)
    points = [[now - 120_000, 1], [now - 60_000, 3]]
    chart = sparkline(points, now_ms=now)
    assert (
        chart["count"] == 2
        and 'data-points="2"' in chart["html"]
        and "last 3, max 3" in chart["html"]
    )
    assert sparkline(points, now_ms=now) == chart
    changed = [points[0], [now - 60_000, 7]]  # a point that is another object: drawn again
    assert "last 7, max 7" in sparkline(changed, now_ms=now)["html"]
    assert sparkline([], now_ms=now)["html"] == '<span class="rc-muted">no samples yet</span>'
    assert "<script" not in chart["html"] and "href" not in chart["html"]


def test_the_overview_at_scale_counts_every_lock_and_lists_a_page(redis_client):
    take(redis_client, [f"invoice:{i}" for i in range(500)])
    data = overview(redis_client, "test")
    assert data["locks"]["total"] == 500 and len(data["locks"]["items"]) == dashboard.PAGE_SIZE
    assert data["unreadable"] == {}
    assert (
        list_locks(redis_client, KEYS, now_ms=data["server_time_ms"], page=10)["items"][-1]["name"]
        == "invoice:99"
    )
