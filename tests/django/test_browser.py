"""The dashboard in a real headless Chromium (Debian's chromium, driven by Playwright).

Logs in, sees the trouble panel at the top (a queue with no worker, a
rate-limit key at its limit), sees a lock held by another process, watches a queue depth change
through the live refresh (no reload: the server's sections swapped in),
sees the queue charts drawn, force-releases the lock through the
confirmation page, and saves a screenshot (docs/dashboard.png when
REDCOORD_UPDATE_SCREENSHOT=1).
"""

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock, read_holders
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.transport.clients import client_from_url

from ..support import multiproc

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]


def hold(index, url, name, ready):
    lock = Lock(name, ttl=120, wait=0, client=client_from_url(url), prefix="test")
    assert lock.acquire()
    ready.put(lock.token)
    time.sleep(120)


@pytest.fixture
def browser(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test's own
    # ORM calls (creating the user) are still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    assert os.path.exists(CHROMIUM), (
        ".ci/run installs Debian's chromium; it is needed for this test"
    )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.django_db(transaction=True)
def test_dashboard_in_a_real_browser(
    browser, live_server, django_user_model, redis_url, redis_client, tmp_path
):
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")
    ready = multiproc.queue()
    holder = multiproc.start(hold, redis_url, "invoice:42", ready)
    try:
        token = ready.get(timeout=10)
        for name in ("report:q3", "import:catalog"):
            Lock(name, ttl=90, wait=0, client=redis_client, prefix="test").acquire()
        emails = Queue("emails", client=redis_client, prefix="test")
        emails.push_many(range(12))
        emails.push("tomorrow", delay=86400)
        Queue("receipts", client=redis_client, prefix="test").push_many(range(3))
        worker = Worker(
            [Queue("receipts", client=redis_client, prefix="test")],
            handler=lambda m: None,
            timeout=3600,
        )  # one beat lasts the test, however slow
        worker._beat()  # registered and heartbeating, as a running worker is
        from django_redcoord.core.ratelimit import RateLimiter

        api = RateLimiter("3/m", name="api", client=redis_client, prefix="test")
        for _ in range(4):  # at its limit: a warning at the top of the page
            api.hit("ip:203.0.113.7")
        election = LeaderElection(
            "default",
            lease=30,
            renew_deadline=20,
            retry_period=5,
            identity="web-1:4242",
            client=redis_client,
            prefix="test",
        )
        assert election.campaign()
        from django_redcoord.core.periodic.jobs import get_jobs, periodic, unregister
        from django_redcoord.core.periodic.scheduler import Scheduler

        periodic(every=300, name="refresh_rates")(lambda: time.sleep(0.02))
        job = get_jobs()["refresh_rates"]
        unregister("refresh_rates")
        assert Scheduler(election, [job]).run_now(job, timeout=5).outcome == "ok"

        page = browser.new_page(viewport={"width": 1280, "height": 1100})
        page.goto(f"{live_server.url}/admin/login/?next=/admin/django_redcoord/dashboard/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "admin")
        page.click("input[type=submit]")
        page.wait_for_selector("#rc-locks")
        lock_row = page.locator("#rc-locks tr[data-name='invoice:42']")
        assert lock_row.count() == 1 and str(token) in lock_row.inner_text()
        emails_ready = page.locator("#rc-queues tr[data-name='emails'] td").nth(1)
        assert emails_ready.inner_text() == "12"
        assert f"web-1:4242, term {election.term}" in page.locator("#rc-leaders").inner_text()
        assert "refresh_rates" in page.locator("#rc-leaders .rc-jobs").inner_text()
        # the trouble panel first: emails has ready messages and no worker (receipts has one)
        trouble = page.locator("#rc-section-trouble")
        assert trouble.locator("li[data-kind='queue']").count() == 1
        assert (
            "12 ready"
            in trouble.locator("li[data-kind='queue'][data-resource='emails']").inner_text()
        )
        assert (
            trouble.locator(
                "li[data-kind='rate_limit'][data-resource='api / ip:203.0.113.7']"
            ).count()
            == 1
        )

        emails.push_many(range(5))  # the page must show 17 without a reload
        page.wait_for_function(
            "document.querySelector(\"#rc-queues tr[data-name='emails'] "
            "td:nth-child(2)\").textContent === '17'",
            timeout=6000,
        )
        page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
        if os.environ.get("REDCOORD_UPDATE_SCREENSHOT") == "1":
            shutil.copy(tmp_path / "dashboard.png", ROOT / "docs" / "dashboard.png")

        page.locator("#rc-locks tr[data-name='invoice:42'] a", has_text="Force release").click()
        page.wait_for_selector("#rc-confirm")
        assert "Force-release lock invoice:42" in page.content()
        page.click("#rc-confirm")
        page.wait_for_selector(".messagelist")
        assert "released" in page.locator(".messagelist").inner_text()
        assert not Lock("invoice:42", client=redis_client, prefix="test").locked()
        assert page.locator("#rc-locks tr[data-name='invoice:42']").count() == 0
        assert (tmp_path / "dashboard.png").stat().st_size > 10_000
    finally:
        holder.stop()


@pytest.mark.django_db(transaction=True)
def test_a_dashboard_opened_during_an_outage_recovers_without_a_reload(
    browser, live_server, django_user_model, redis_servers, settings
):
    """Opened while Redis is down, then Redis returns: the page fills in by
    itself. While Redis is paused (requests hang), one request at a time."""
    server = redis_servers(1)[0]
    settings.REDCOORD = {
        "URL": server.url,
        "KEY_PREFIX": "test",
        "SOCKET_TIMEOUT": 2.5,
        "CONNECT_TIMEOUT": 0.5,
    }
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")
    page = browser.new_page()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/django_redcoord/dashboard/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin")
    server.stop()  # Redis goes away before the dashboard opens
    page.click("input[type=submit]")
    page.wait_for_selector("#rc-locks")
    assert (
        page.locator("#rc-error").is_visible()
        and "could not be reached" in page.locator("#rc-error").inner_text()
    )

    in_flight, most = [0], [0]

    def started(request):
        if "/fragments/" in request.url:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])

    def ended(request):
        if "/fragments/" in request.url:
            in_flight[0] -= 1

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)
    page.wait_for_timeout(2500)  # a refresh or two fail while Redis is down
    server.start()
    server.pause()  # now every request hangs for the socket timeout (2.5 s > the 2 s refresh)
    page.wait_for_timeout(6000)
    server.resume()
    assert most[0] == 1, f"{most[0]} fragments/ requests were in flight at once"

    with Lock("back:1", ttl=60, wait=0, client=client_from_url(server.url), prefix="test"):
        page.wait_for_selector("#rc-locks tr[data-name='back:1']", timeout=10_000)
        page.wait_for_function(
            "document.getElementById('rc-error').style.display === 'none'", timeout=5000
        )
        page.wait_for_function(
            "document.getElementById('rc-locks-total').textContent === '1'", timeout=5000
        )
        assert "live" in page.locator("#rc-status").inner_text()


@pytest.mark.django_db(transaction=True)
def test_a_dead_letter_is_requeued_from_its_page(
    browser, live_server, django_user_model, redis_client
):
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")
    queue = Queue("emails", client=redis_client, prefix="test", max_attempts=1)
    queue.push({"to": "a@example.com"}, id="mail|7")
    consumer = queue.consumer("w")
    [message], _ = consumer.claim(1)
    consumer.nack(message, "SMTPError: 554 refused")

    page = browser.new_page()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/django_redcoord/dashboard/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin")
    page.click("input[type=submit]")
    page.wait_for_function(
        "document.getElementById('rc-status').textContent.includes('updated')", timeout=6000
    )
    # the dead count links to the page (as the live refresh swapped the section in)
    page.locator("#rc-queues tr[data-name='emails'] a[href^='dead-letters/']").click()
    row = page.locator("#rc-dead-letters tr[data-id='mail|7']")
    row.wait_for()
    assert "SMTPError: 554 refused" in row.inner_text() and "a@example.com" in row.inner_text()
    row.locator("a", has_text="Requeue").click()
    page.wait_for_selector("#rc-confirm")
    assert "Requeue dead letter mail|7 of queue emails" in page.content()
    page.click("#rc-confirm")
    page.wait_for_selector(".messagelist")
    assert "1 message requeued" in page.locator(".messagelist").inner_text()
    assert page.locator("#rc-dead-letters tr[data-id='mail|7']").count() == 0
    assert (queue.depths().ready, queue.depths().dead) == (1, 0)


def _log_in(page, live_server):
    page.goto(f"{live_server.url}/admin/login/?next=/admin/django_redcoord/dashboard/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin")
    page.click("input[type=submit]")
    page.wait_for_selector("#rc-queues")


def _release_once_queued(holder, client, after):
    """Release ``holder`` ``after`` seconds after a waiter queued for it (the wait the server
    records starts there: a timer started before the waiter's call measured less on a loaded
    machine)."""
    deadline = time.monotonic() + 10
    while (
        not read_holders(client, [holder.name], prefix="test")[0]["queued"]
        and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    time.sleep(after)
    holder.release()


@pytest.mark.django_db(transaction=True)
def test_the_live_refresh_swaps_in_the_servers_sections_and_the_charts_render(
    browser, live_server, django_user_model, redis_client
):
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")
    emails = Queue("emails", client=redis_client, prefix="test")
    emails.push_many(range(3))
    worker = Worker([emails], handler=lambda m: None)
    worker._beat()
    worker._sample(time.time(), (-1, {}))  # this minute's sample, as its heartbeat takes it
    history = emails.key_builder.queue_history("emails")
    minute = int(redis_client.time()[0]) // 60
    redis_client.rpush(
        history, *(f"{m} {m % 5} {m}" for m in range(minute - 1, minute - 6, -1))
    )  # 5 earlier ones
    holder = Lock("invoice:7", client=redis_client, prefix="test", ttl=10)
    assert holder.acquire()
    threading.Thread(target=_release_once_queued, args=(holder, redis_client, 0.2)).start()
    assert Lock(
        "invoice:7", client=redis_client, prefix="test", wait=5
    ).acquire()  # one real wait, charted

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    fetched, errors = [], []
    page.on("request", lambda request: fetched.append(request.url))
    page.on("pageerror", lambda error: errors.append(error))
    _log_in(page, live_server)
    row = "#rc-queues tr[data-name='emails']"
    depth = page.locator(f"{row} td[data-series='depth'] svg.rc-spark")
    assert depth.get_attribute("data-points") == "6"
    box = depth.bounding_box()
    assert box and box["width"] > 50 and box["height"] > 10  # drawn, inline
    assert len(depth.locator("polyline").get_attribute("points").split(" ")) == 6
    wait_chart = page.locator(
        "#rc-lockwaits tr[data-name='invoice:7'] td[data-series='max_wait'] svg.rc-spark"
    )
    assert wait_chart.get_attribute("data-points") == "1"
    box = wait_chart.bounding_box()
    assert box and box["width"] > 50 and box["height"] > 10
    assert (
        float(page.locator("#rc-lockwaits tr[data-name='invoice:7'] td:nth-child(4)").inner_text())
        >= 0.15
    )
    page.evaluate(
        "document.getElementById('rc-queues').dataset.before = 'yes'"
    )  # gone once the section is swapped
    emails.push_many(range(4))
    page.wait_for_function(
        "document.querySelector(\"#rc-queues tr[data-name='emails'] "
        "td:nth-child(2)\").textContent === '7'",
        timeout=6000,
    )
    assert page.evaluate("document.getElementById('rc-queues').dataset.before") is None
    assert (
        page.locator(f"{row} td[data-series='depth'] svg.rc-spark").get_attribute("data-points")
        == "6"
    )
    assert any("/fragments/" in url for url in fetched) and not any(
        "data.json" in url for url in fetched
    )
    assert (
        "updated" in page.locator("#rc-status").inner_text()
        and not page.locator("#rc-error").is_visible()
    )
    assert errors == []
