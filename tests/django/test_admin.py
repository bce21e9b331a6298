"""The coordination dashboard in the admin, its JSON feed, actions, and `redcoord status`."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import call_command

from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.clients import client_from_url

from ..support import multiproc
from ..support.admin_support import hold_from_a_thread_named

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_the_login_page(client):
    for url in (URL, URL + "data.json", URL + "action/purge-queue/?name=x"):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_staff_without_our_permission_gets_403(client, staff):
    client.force_login(staff())
    assert client.get(URL).status_code == 403
    assert client.get(URL + "data.json").status_code == 403


def test_view_permission_sees_but_cannot_act(client, staff):
    client.force_login(staff("view_dashboard"))
    assert client.get(URL).status_code == 200
    assert client.get(URL + "data.json").status_code == 200
    assert client.get(URL + "action/purge-queue/?name=q").status_code == 403
    assert client.post(URL + "action/purge-queue/", {"name": "q"}).status_code == 403
    assert b"Force release" not in client.get(URL).content


def test_dashboard_is_listed_on_the_admin_index(client, staff):
    client.force_login(staff("view_dashboard"))
    page = client.get("/admin/").content.decode()
    assert "Coordination dashboard" in page and URL in page


def hold(index, url, name, ready):
    lock = Lock(name, ttl=60, wait=0, client=client_from_url(url), prefix="test")
    assert lock.acquire()
    ready.put(lock.token)
    time.sleep(60)


def test_numbers_shown_equal_the_state_created(client, staff, redis_url, redis_client):
    ready = multiproc.queue()
    holder = multiproc.start(hold, redis_url, "invoice:42", ready)
    try:
        token = ready.get(timeout=10)
        waiter = Lock("invoice:42", wait=0.01, client=redis_client, prefix="test")
        redis_client.rpush(
            waiter.keys.queue, "a", "b"
        )  # two queued waiters, as the admin counts them
        q = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
        q.push_many(range(7))
        q.push("later", delay=300)
        consumer = q.consumer("w1")
        claimed, _ = consumer.claim(3)  # 3 processing
        consumer.nack(claimed[0], "boom")  # 1 dead, 2 processing
        client.force_login(staff("view_dashboard"))
        data = client.get(URL + "data.json").json()
        [lock] = data["locks"]["items"]
        assert lock["name"] == "invoice:42" and lock["fence"] == token and lock["pid"] == holder.pid
        assert lock["waiters"] == 2 and 50 < lock["ttl_left"] <= 60
        [emails] = [x for x in data["queues"] if x["name"] == "emails"]
        assert (emails["ready"], emails["delayed"], emails["processing"], emails["dead"]) == (
            4,
            1,
            2,
            1,
        )
        html = client.get(URL).content.decode()
        assert "invoice:42" in html and f"{holder.pid}" in html
    finally:
        holder.stop()


def test_filter_and_pagination_of_locks(client, staff, redis_client):
    locks = [
        Lock(f"order:{i}", ttl=60, wait=0, client=redis_client, prefix="test") for i in range(120)
    ]
    for lock in locks:
        lock.acquire()
    Lock("invoice:1", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    client.force_login(staff("view_dashboard"))
    data = client.get(URL + "data.json?page=3").json()["locks"]
    assert data["total"] == 121 and data["pages"] == 3 and len(data["items"]) == 21
    data = client.get(URL + "data.json?q=INVOICE").json()["locks"]
    assert [x["name"] for x in data["items"]] == ["invoice:1"]


def test_listing_never_uses_keys_or_scan(client, staff, redis_client):
    Lock("a", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    client.force_login(staff("view_dashboard"))
    before = redis_client.info("commandstats")
    client.get(URL)
    after = redis_client.info("commandstats")
    for command in ("cmdstat_keys", "cmdstat_scan"):
        assert after.get(command, {}).get("calls", 0) == before.get(command, {}).get("calls", 0)


def test_force_release_confirms_then_acts_and_is_logged(client, staff, redis_client):
    lock = Lock("invoice:7", ttl=60, wait=0, client=redis_client, prefix="test")
    lock.acquire()
    client.force_login(staff("view_dashboard", "change_dashboard"))
    confirm = client.get(URL + f"action/force-release/?name=invoice:7&fence={lock.token}")
    assert confirm.status_code == 200 and b"Are you sure?" in confirm.content and lock.locked()
    done = client.post(URL + "action/force-release/", {"name": "invoice:7", "fence": lock.token})
    assert done.status_code == 302 and not lock.locked()
    entry = LogEntry.objects.latest("action_time")
    assert (
        "Force-release lock invoice:7" in entry.change_message
        and "released" in entry.change_message
    )
    from django_redcoord.core.exceptions import LockLost

    with pytest.raises(LockLost):
        lock.release()


def test_force_release_of_a_grant_that_changed_hands_does_nothing(client, staff, redis_client):
    first = Lock("invoice:8", ttl=60, wait=0, client=redis_client, prefix="test")
    first.acquire()
    seen = first.token
    first.release()
    second = Lock("invoice:8", ttl=60, wait=0, client=redis_client, prefix="test")
    second.acquire()
    client.force_login(staff("view_dashboard", "change_dashboard"))
    client.post(URL + "action/force-release/", {"name": "invoice:8", "fence": seen})
    assert second.owned()
    assert "not-held" in LogEntry.objects.latest("action_time").change_message


def test_queue_actions(client, staff, redis_client):
    q = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
    q.push_many(range(3))
    consumer = q.consumer("w")
    for m in consumer.claim(2)[0]:
        consumer.nack(m, "boom")
    client.force_login(staff("view_dashboard", "change_dashboard"))
    client.post(URL + "action/requeue-dead/", {"name": "emails"})
    assert q.depths().ready == 3 and q.depths().dead == 0
    client.post(URL + "action/purge-queue/", {"name": "emails"})
    assert q.depths().ready == 0
    messages = [e.change_message for e in LogEntry.objects.order_by("action_time")]
    assert any(
        "Requeue the dead letters of queue emails: 2 message(s) requeued" in m for m in messages
    )
    assert any("queue purged: 3 waiting messages dropped" in m for m in messages), messages


def test_actions_need_a_csrf_token(staff, redis_client):
    from django.test import Client

    Queue("emails", client=redis_client, prefix="test").push(1)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(staff("view_dashboard", "change_dashboard"))
    assert browser.post(URL + "action/purge-queue/", {"name": "emails"}).status_code == 403
    assert Queue("emails", client=redis_client, prefix="test").depths().ready == 1


def test_bad_action_input_is_refused_with_a_message(client, staff):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    response = client.post(URL + "action/purge-queue/", {"name": "bad name*"}, follow=True)
    assert "Not done" in response.content.decode()
    assert client.get(URL + "action/drop-everything/?name=x").status_code == 404  # no such action


@pytest.mark.parametrize("fence", ["abc", "١٢", "9" * 5000, "-1"])
def test_a_fence_that_is_not_plain_digits_is_refused_saying_what_is_allowed(client, staff, fence):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    text = client.post(
        URL + "action/force-release/", {"name": "x", "fence": fence}, follow=True
    ).content.decode()
    assert "Not done: the fence must be a whole number of at most 20 digits (0-9)" in text


def test_an_action_redis_did_not_answer_says_its_outcome_is_unknown_and_is_in_the_history(
    client, staff, redis_client, settings
):
    """A purge sent to a Redis that stopped answering runs once it answers again: the page said
    "Not done" and the history had no trace of it."""
    settings.REDCOORD = {**settings.REDCOORD, "SOCKET_TIMEOUT": 0.5}
    queue = Queue("emails", client=redis_client, prefix="test")
    queue.push_many(range(5))
    queue.purge()  # (the purge script is cached: the one below is what gets no answer)
    queue.push_many(range(5))
    client.force_login(staff("view_dashboard", "change_dashboard"))
    redis_client.execute_command("CLIENT", "PAUSE", 3000, "WRITE")  # the purge script waits
    try:
        text = client.post(URL + "action/purge-queue/", {"name": "emails"}, follow=True)
    finally:
        redis_client.execute_command("CLIENT", "UNPAUSE")
    html = text.content.decode()
    assert "Unknown whether it was done: Redis at " in html and "Not done" not in html
    entry = LogEntry.objects.latest("action_time")
    assert entry.change_message.startswith("Tried: ") and "unknown whether Redis did it" in (
        entry.change_message
    )
    # (whether it then ran depends on the server: a SIGSTOPped one runs what it had read when it
    # resumes; a paused client that went away meanwhile is dropped)


def test_redcoord_status_prints_tables_and_json(capsys, redis_client):
    import threading

    Lock("invoice:9", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    holder = Lock("invoice:8", ttl=60, wait=0, client=redis_client, prefix="test")
    assert holder.acquire()
    releaser = threading.Timer(0.3, holder.release)
    releaser.start()
    assert Lock(
        "invoice:8", wait=5, client=redis_client, prefix="test"
    ).acquire()  # one wait of ~300 ms
    releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    Queue("emails", client=redis_client, prefix="test").push(1)
    from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection

    keys = LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test").keys
    now_ms = int(redis_client.time()[0]) * 1000
    redis_client.sadd(keys.jobs, "report")
    redis_client.hset(
        keys.job("report"),
        mapping={
            "schedule": "every 60 s",
            "runs": 3,
            "outcome": "ok",
            "last_start": now_ms - 5000,
            "duration": 1500,
            "next_due": now_ms + 3_725_000,
        },
    )
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Live locks: 2" in out and "invoice:9" in out and "emails" in out
    assert "Lock waits, last hour: 1 names" in out and re.search(
        r"invoice:8 +1 +(\d{3}) ms +\1 ms +\1 ms", out
    ), out
    # times as people read them: spans with units, moments with date, zone and distance
    assert re.search(r"invoice:9 .* (5\d|60)\.\d s ", out), (
        out
    )  # a 60 s TTL, read seconds later on a loaded machine
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+"
    assert re.search(
        rf"report .*{stamp} \(\d\.\d s ago\)\s+1\.5 s\s+{stamp} \(in 1 h 2 min\)", out
    ), out
    call_command("redcoord", "status", "--json")
    data = json.loads(capsys.readouterr().out)
    assert [x["name"] for x in data["locks"]["items"]] == ["invoice:8", "invoice:9"] and data[
        "queues"
    ][0]["ready"] == 1
    assert data["lock_waits"]["items"][0]["name"] == "invoice:8"


def test_redcoord_takes_djangos_common_options_after_the_subcommand(capsys, redis_client):
    Queue("emails", client=redis_client, prefix="test").push(1)
    call_command(
        "redcoord", "status", "--json", "--skip-checks", "--no-color", "-v", "2", "--traceback"
    )
    assert json.loads(capsys.readouterr().out)["queues"][0]["ready"] == 1
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "nowhere.settings",
    }  # the option after the subcommand wins
    done = subprocess.run(
        [sys.executable, "manage.py", "redcoord", "status", "--settings=tests.no_such_settings"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "No module named 'tests.no_such_settings'" in done.stderr, (
        done.stderr
    )
    assert "unrecognized arguments" not in done.stderr


def test_semaphores_are_shown_and_a_permit_can_be_revoked(client, staff, redis_client, capsys):
    from django_redcoord.core.exceptions import LockLost
    from django_redcoord.core.semaphores import Semaphore

    holders = [
        Semaphore("exports|pdf", 3, ttl=60, wait=0, client=redis_client, prefix="test")
        for _ in range(2)
    ]
    for sem in holders:
        assert sem.acquire()
    waiter = Semaphore("exports|pdf", 3, client=redis_client, prefix="test")
    redis_client.rpush(waiter.keys.queue, "a")  # one queued waiter, as the admin counts them
    client.force_login(staff("view_dashboard", "change_dashboard"))
    [sem] = client.get(URL + "data.json").json()["semaphores"]
    assert (sem["name"], sem["limit"], sem["used"], sem["queued"]) == ("exports|pdf", 3, 2, 1)
    assert sorted(h["fence"] for h in sem["holders"]) == sorted(s.token for s in holders)
    html = client.get(URL).content.decode()
    assert "exports|pdf" in html and "2 / 3" in html and f"fence={holders[0].token}" in html
    confirm = client.get(URL + f"action/revoke-permit/?name=exports|pdf&fence={holders[0].token}")
    assert confirm.status_code == 200 and b"Are you sure?" in confirm.content and holders[0].owned()
    done = client.post(
        URL + "action/revoke-permit/", {"name": "exports|pdf", "fence": holders[0].token}
    )
    assert done.status_code == 302 and not holders[0].owned() and holders[1].owned()
    assert "revoked" in LogEntry.objects.latest("action_time").change_message
    with pytest.raises(LockLost):
        holders[0].release()
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Semaphores" in out and "exports|pdf" in out and "1 / 3" in out


def test_read_write_locks_are_shown_with_who_waits(client, staff, redis_client, capsys):
    from django_redcoord.core.rwlocks import ReadWriteLock

    rw = ReadWriteLock("catalog|1", ttl=60, wait=0, client=redis_client, prefix="test")
    readers = [rw.read(), rw.read()]
    for hold in readers:
        assert hold.acquire()
    client.force_login(staff("view_dashboard"))
    [shown] = client.get(URL + "data.json").json()["rwlocks"]
    assert shown["name"] == "catalog|1" and sorted(h["kind"] for h in shown["holders"]) == [
        "r",
        "r",
    ]
    assert sorted(h["fence"] for h in shown["holders"]) == sorted(h.token for h in readers)
    html = client.get(URL).content.decode()
    assert "catalog|1" in html and "reading" in html
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Read-write locks" in out and "catalog|1" in out and "reading" in out
    for hold in readers:
        hold.release()
    assert client.get(URL + "data.json").json()["rwlocks"] == []


def test_latches_and_barriers_are_shown(client, staff, redis_client, capsys):
    from django_redcoord.core.exceptions import BrokenError
    from django_redcoord.core.latches import Barrier, CountDownLatch

    latch = CountDownLatch("import|9", 3, client=redis_client, prefix="test")
    latch.count_down()
    party = latch.party(auto_renew=False)
    party.join()
    broken = CountDownLatch("import|10", 2, client=redis_client, prefix="test")
    broken.count_down()
    broken.abort("the upload was cancelled")
    barrier = Barrier("meet|9", 2, client=redis_client, prefix="test")
    with pytest.raises(BrokenError, match="timed out"):
        barrier.wait(0)  # arrives alone and gives up at once: broken until reset
    client.force_login(staff("view_dashboard"))
    rows = {(x["kind"], x["name"]): x for x in client.get(URL + "data.json").json()["latches"]}
    assert (
        rows[("latch", "import|9")]["state"] == "2 of 3 to go"
        and rows[("latch", "import|9")]["parties"] == 1
    )
    assert rows[("latch", "import|10")]["broken"] == "the upload was cancelled"
    assert rows[("barrier", "meet|9")]["state"] == "generation 0"
    assert rows[("barrier", "meet|9")]["broken"] == "a party timed out waiting"
    assert "import|9" in client.get(URL).content.decode()
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Latches and barriers" in out and "the upload was cancelled" in out


def test_events_signals_and_topics_are_shown(client, staff, redis_client, capsys):
    import threading

    from django_redcoord.core.signals import Event, Signal, Topic

    Event("import|ok", client=redis_client, prefix="test").set({"rows": 1})
    waiter = Signal("work|1", client=redis_client, prefix="test")
    thread = threading.Thread(target=lambda: waiter.wait(10))
    thread.start()
    topic = Topic("orders|1", client=redis_client, prefix="test")
    mail = topic.subscribe("mail")
    mail.receive(timeout=0)  # creates the group
    topic.publish({"id": 1})
    topic.publish({"id": 2})
    mail.receive(count=1, timeout=0)  # one pending
    client.force_login(staff("view_dashboard"))
    deadline = (
        time.monotonic() + 5
    )  # until the waiter's thread has queued itself (slow on a loaded machine)
    while True:
        rows = {(x["kind"], x["name"]): x for x in client.get(URL + "data.json").json()["signals"]}
        if rows[("signal", "work|1")]["waiting"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    Signal("work|1", client=redis_client, prefix="test").send("done")
    thread.join()
    assert rows[("event", "import|ok")]["state"] == "set"
    assert rows[("signal", "work|1")]["waiting"] == 1
    assert rows[("topic", "orders|1")]["state"] == "2 message(s)"
    assert rows[("group", "orders|1 / mail")]["state"].startswith("1 subscriber(s), 1 pending")
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Events, signals and topics" in out and "orders|1 / mail" in out


def test_the_busiest_rate_limited_keys_are_shown_and_a_key_can_be_reset(
    client, staff, redis_client, capsys
):
    from django_redcoord.core.ratelimit import RateLimiter

    api = RateLimiter("3/m", name="api", client=redis_client, prefix="test")
    for _ in range(5):
        api.hit("ip:10.0.0.1")  # 3 pass, 2 refused: 5 hits
    api.hit("ip:10.0.0.2")
    client.force_login(staff("view_dashboard", "change_dashboard"))
    rows = client.get(URL + "data.json").json()["rate_limits"]
    assert [(r["name"], r["key"], r["hits"], r["remaining"]) for r in rows] == [
        ("api", "ip:10.0.0.1", 5, 0),
        ("api", "ip:10.0.0.2", 1, 2),
    ]
    assert rows[0]["retry_after"] > 0 and rows[0]["policies"] == "3/m"
    html = client.get(URL).content.decode()
    assert "ip:10.0.0.1" in html and "action/reset-ratelimit/" in html
    confirm = client.get(URL + "action/reset-ratelimit/?name=api&key=ip:10.0.0.1")
    assert confirm.status_code == 200 and b"Are you sure?" in confirm.content
    assert not api.peek("ip:10.0.0.1").allowed
    done = client.post(URL + "action/reset-ratelimit/", {"name": "api", "key": "ip:10.0.0.1"})
    assert done.status_code == 302 and api.peek("ip:10.0.0.1").remaining == 3
    assert (
        "Reset what key ip:10.0.0.1 counted in rate limit api"
        in LogEntry.objects.latest("action_time").change_message
    )
    call_command("redcoord", "status")
    assert "Rate limits: busiest keys" in capsys.readouterr().out


SECTION_IDS = {
    "rc-asof",
    "rc-section-trouble",
    "rc-section-locks",
    "rc-section-lockwaits",
    "rc-section-semaphores",
    "rc-section-rwlocks",
    "rc-section-latches",
    "rc-section-signals",
    "rc-section-ratelimits",
    "rc-section-queues",
    "rc-section-workers",
    "rc-leaders",
}


def _rows(html, body_id):
    """The data-name of each row of the tbody ``body_id`` in ``html``, in order."""
    body = re.search(rf'<tbody id="{body_id}">(.*?)</tbody>', html, re.S).group(1)
    return re.findall(r'<tr data-name="([^"]*)"', body)


def test_fragments_need_the_dashboards_view_permission(client, staff, redis_client):
    response = client.get(URL + "fragments/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    client.force_login(staff())
    assert client.get(URL + "fragments/").status_code == 403
    client.force_login(staff("view_dashboard"))
    response = client.get(URL + "fragments/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert set(response.json()) == SECTION_IDS
    assert "Force release" not in json.dumps(response.json())  # seeing is not acting


def test_fragments_render_the_same_rows_as_the_page(client, staff, redis_client):
    for i in range(60):
        Lock(f"order:{i:02d}", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    q = Queue("emails|eu", client=redis_client, prefix="test")
    q.push_many(range(4))
    Queue("receipts", client=redis_client, prefix="test").push(1)
    client.force_login(staff("view_dashboard", "change_dashboard"))
    page = client.get(URL + "?q=order&page=2").content.decode()
    fragments = client.get(URL + "fragments/?q=order&page=2").json()
    for section_id in SECTION_IDS - {"rc-asof"}:  # each section of the page is its fragment
        assert f'id="{section_id}"' in page
    locks = _rows(fragments["rc-section-locks"], "rc-locks")
    assert (
        locks == _rows(page, "rc-locks") == [f"order:{i}" for i in range(50, 60)]
    )  # the page's filter and page
    assert (
        _rows(fragments["rc-section-queues"], "rc-queues")
        == _rows(page, "rc-queues")
        == ["emails|eu", "receipts"]
    )
    assert "action/purge-queue/?name=emails%7Ceu" in fragments["rc-section-queues"]
    assert re.search(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T", fragments["rc-section-locks"]
    )  # date, time, zone
    q.push(5)
    again = client.get(URL + "fragments/").json()["rc-section-queues"]
    row = re.search(r'<tr data-name="emails\|eu">(.*?)</tr>', again, re.S).group(1)
    assert re.findall(r'<td class="rc-num">(\d+)</td>', row)[0] == "5"  # ready


def test_one_sample_a_minute_whatever_the_workers_and_it_equals_the_depths(redis_client):
    from django_redcoord.core.queues import Worker
    from django_redcoord.core.queues.queue import read_history

    q = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
    q.push_many(range(7))
    q.push("later", delay=300)
    consumer = q.consumer("c1")
    claimed, _ = consumer.claim(3)
    consumer.nack(claimed[0], "boom")  # ready 4, delayed 1, processing 2, dead 1
    first = Worker([q], handler=lambda m: None, worker_id="w1")
    second = Worker(
        [q, Queue("other", client=redis_client, prefix="test")],
        handler=lambda m: None,
        worker_id="w2",
    )
    for stats, outcome, queue, n in (
        (first.stats, "ok", "emails", 3),
        (second.stats, "ok", "emails", 4),
        (second.stats, "failed", "emails", 1),
        (second.stats, "ok", "other", 2),
    ):
        for _ in range(n):
            stats.add(outcome, queue)
    if time.time() % 60 > 58:  # both reports in one minute of the server's clock (same machine)
        time.sleep(2.5)
    now = time.time()
    assert first._sample(now, (-1, {})) == (int(now // 60), {"emails": 3})
    reported = second._sample(now, (-1, {}))
    assert second._sample(now + 1, reported) == reported  # no second report this minute
    [sample] = read_history([q])["emails"]
    d = q.depths()
    assert sample.depth == d.ready + d.delayed + d.processing == 7
    server_minute = int(redis_client.time()[0]) // 60
    assert sample.minute in (server_minute, server_minute - 1)
    counts = redis_client.hgetall(q.key_builder.queue_counts("emails"))
    assert int(counts[b"done"]) == 3 + 5  # both reported; one sampled
    # each delivery counts toward its own queue only
    assert read_history([Queue("other", client=redis_client, prefix="test")])["other"][0].done == 2


def test_each_queue_has_a_chart_of_its_last_hour_with_a_point_per_sample(
    client, staff, redis_client
):
    from django_redcoord.core.keys import KeyBuilder

    q = Queue("emails", client=redis_client, prefix="test")
    q.push_many(range(3))
    if redis_client.time()[0] % 60 > 50:  # the page must be read in the minute the samples end
        time.sleep(61 - redis_client.time()[0] % 60)
    minute = int(redis_client.time()[0]) // 60
    history = KeyBuilder("test").queue_history("emails")
    # two hours of samples (61 kept), one minute missing: the hour shows 59 depths, and 59
    # rates (the first one's from the sample before the hour; the gap's over two minutes)
    for m in range(minute - 120, minute + 1):
        if m != minute - 10:
            redis_client.lpush(history, f"{m} {m % 7} {10 * (m - minute + 200)}")
    redis_client.ltrim(history, 0, 60)
    client.force_login(staff("view_dashboard"))
    html = client.get(URL).content.decode()
    row = re.search(r'<tr data-name="emails">(.*?)</tr>', html, re.S).group(1)
    charts = dict(
        re.findall(
            r'<td class="rc-chart" data-series="(\w+)"[^>]*>'
            r'<svg class="rc-spark" data-points="(\d+)"',
            row,
        )
    )
    assert charts == {"depth": "59", "done": "59"}
    polylines = re.findall(r'<polyline [^>]*points="([^"]*)"', row)
    assert [len(p.split(" ")) for p in polylines] == [59, 59]
    svg = re.search(r"<svg.*</svg>", row, re.S).group(0)
    assert not re.search(r"<script|href=|src=|url\(", svg)  # inline: no script, no external asset
    data = client.get(URL + "data.json").json()
    [emails] = data["queues"]
    assert [v for _, v in emails["history"]["depth"]][-3:] == [
        (minute - 2) % 7,
        (minute - 1) % 7,
        minute % 7,
    ]
    assert {v for _, v in emails["history"]["done_per_minute"]} == {
        10.0
    }  # 10 a minute, across the gap too


def test_lock_names_waited_for_have_a_chart_of_their_waits_and_the_busiest_come_first(
    client, staff, redis_client
):
    import threading

    from django_redcoord.core.keys import KeyBuilder

    # two real waits on "invoice:1" (about 0.3 s and 0.1 s), one on "invoice:2"; a lock
    # nobody waited for ("free") is not listed
    for name, hold in (("invoice:1", 0.3), ("invoice:1", 0.1), ("invoice:2", 0.05)):
        holder = Lock(name, client=redis_client, prefix="test", ttl=10)
        waiter = Lock(name, client=redis_client, prefix="test", wait=5)
        assert holder.acquire()
        releaser = threading.Timer(hold, holder.release)
        releaser.start()
        assert waiter.acquire()
        waiter.release()
        releaser.join()  # (its release returned too: nothing of it outlives the test's client)
    with Lock("free", client=redis_client, prefix="test"):
        pass
    # an hour and more of earlier minutes on a third name: 60 in the last hour
    keys = KeyBuilder("test")
    minute = int(redis_client.time()[0]) // 60
    old = keys.lock("report|monthly").waits
    redis_client.rpush(
        old, *(f"{m} 2 {4 * m % 1000} {3 * m % 1000}" for m in range(minute - 1, minute - 71, -1))
    )
    redis_client.hset(keys.lock("report|monthly").wait_index, "report|monthly", minute - 1)

    client.force_login(staff("view_dashboard"))
    data = client.get(URL + "data.json").json()["lock_waits"]
    rolled = (
        int(redis_client.time()[0]) // 60 - minute
    )  # a minute may have begun since (a loaded machine)
    assert data["total"] == 3
    names = [row["name"] for row in data["items"]]
    assert names == ["report|monthly", "invoice:1", "invoice:2"]  # most waited in total first
    report, invoice1, invoice2 = data["items"]
    hour = (
        59 - rolled
    )  # minute - 1 back to minute - 59: the last hour only (one fewer per minute begun)
    assert report["grants"] in (2 * hour, 2 * (hour + 1)) and len(
        report["history"]["max_wait"]
    ) in (hour, hour + 1)
    assert report["grants"] == 2 * len(report["history"]["max_wait"])
    assert (
        invoice1["grants"] == 2
        and 0.25 <= invoice1["max_wait"] < 2
        and invoice1["mean_wait"] < invoice1["max_wait"]
    )
    assert (
        invoice2["grants"] == 1
        and invoice2["max_wait"] == invoice2["mean_wait"] == invoice2["total_wait"]
    )
    html = client.get(URL).content.decode()
    section = re.search(r'<tbody id="rc-lockwaits">(.*?)</tbody>', html, re.S).group(1)
    row = re.search(r'<tr data-name="invoice:1">(.*?)</tr>', section, re.S).group(1)
    charts = dict(
        re.findall(
            r'<td class="rc-chart" data-series="(\w+)"[^>]*>'
            r'<svg class="rc-spark" data-points="(\d+)"',
            row,
        )
    )
    assert charts == {"max_wait": "1", "mean_wait": "1"}
    row = re.search(r'<tr data-name="report\|monthly">(.*?)</tr>', section, re.S).group(1)
    series = re.findall(
        r'<td class="rc-chart" data-series="(\w+)"[^>]*><svg class="rc-spark" data-points="(\d+)"',
        row,
    )
    rolled = int(redis_client.time()[0]) // 60 - minute  # again: the page was read later
    assert [name for name, _ in series] == ["max_wait", "mean_wait"]
    assert series[0][1] == series[1][1] and 59 - rolled <= int(series[0][1]) <= 59, series
    assert 'data-name="free"' not in section
    # the page's name filter applies to the waits too
    filtered = client.get(URL + "data.json?q=invoice").json()["lock_waits"]
    assert [row["name"] for row in filtered["items"]] == ["invoice:1", "invoice:2"] and filtered[
        "total"
    ] == 2


def test_the_rows_escape_what_a_holder_wrote_and_show_nothing_for_a_viewer_to_act_on(
    client, staff, redis_client
):
    # The rows are written in Python (admin/rows.py): what a holder's process wrote (its thread's
    # name, here markup) is escaped as a template would; a viewer's rows have no action links.
    hostile = "<script>alert('x')</script>&\""
    hold_from_a_thread_named(hostile, "order:x", redis_client)
    Queue("q:a/b", client=redis_client, prefix="test").push(1)
    client.force_login(staff("view_dashboard"))
    fragments = client.get(URL + "fragments/").json()
    locks, queues = fragments["rc-section-locks"], fragments["rc-section-queues"]
    assert (
        hostile not in locks
        and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;" in locks
    )
    assert _rows(locks, "rc-locks") == ["order:x"] and _rows(queues, "rc-queues") == ["q:a/b"]
    assert "action/" not in locks and "action/" not in queues  # seeing is not acting
