"""The trouble panel at the top of the dashboard, in a real headless Chromium (as
tests/django/test_browser.py).

One of each kind of trouble is set up on a real server: a periodic job overdue
(its leader gone), a queue with ready messages and no worker, dead letters that
just died, a lock renewed far past its TTL, a rate-limit key at its limit.
The panel must name each, in words as well as colours, sit at the top of the
page without scrolling, and follow the live refresh. The screenshot is saved
under the test's tmp dir (the DOM and layout assertions are the check, not pixels).
"""

from __future__ import annotations

import pytest

from django_redcoord import trouble
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker
from django_redcoord.core.ratelimit import RateLimiter

from .test_browser import browser  # noqa: F401  (the Chromium fixture)
from .test_trouble import bury, run_scheduled

VIEWPORT = {"width": 1280, "height": 1000}


def _log_in(page, live_server):
    page.goto(f"{live_server.url}/admin/login/?next=/admin/django_redcoord/dashboard/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin")
    page.click("input[type=submit]")
    page.wait_for_selector("#rc-section-trouble")


def _overdue_job(redis_client):
    """A job that ran on its schedule every second, then its leader resigned: overdue ~2 s later
    (the allowed lateness is lease + retry period with the short timing of the settings)."""
    election = LeaderElection(
        "default",
        lease=1.5,
        renew_deadline=1.0,
        retry_period=0.5,
        identity="web-1:4242",
        client=redis_client,
        prefix="test",
    )
    assert election.campaign()
    run_scheduled(election, "refresh_rates", lambda: None)
    election.resign()


@pytest.mark.django_db(transaction=True)
def test_the_trouble_panel_names_each_problem_at_the_top_of_the_page(
    browser,  # noqa: F811  (the Chromium fixture, imported)
    live_server,
    django_user_model,
    redis_client,
    redis_url,
    settings,
    monkeypatch,
    tmp_path,
):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": "test",
        "LEADER_LEASE": 1.5,
        "LEADER_RENEW_DEADLINE": 1.0,
        "LEADER_RETRY_PERIOD": 0.5,
    }
    # the live server runs in this process: the lock rule's thresholds, small enough for a test
    monkeypatch.setattr(trouble, "LOCK_MIN_AGE_S", 1.0)
    monkeypatch.setattr(trouble, "LOCK_HOLD_FACTOR", 1)
    monkeypatch.setattr(trouble, "LOCK_JUDGE_EVERY_MS", 0)
    monkeypatch.setattr(
        trouble, "LOCK_PEERS_MIN", 1000
    )  # (the group rule: tests/django/test_trouble.py)
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")

    _overdue_job(redis_client)
    emails = Queue("emails", client=redis_client, prefix="test")
    emails.push_many(range(12))
    bury(Queue("payments", client=redis_client, prefix="test", max_attempts=1), 2)
    served = Worker([Queue("payments", client=redis_client, prefix="test")], handler=lambda m: None)
    served._beat()  # payments has a worker: only its dead letters are trouble
    # renewed by its watchdog for longer than its TTL (the rule's factor is 1 here, 10 by default)
    old = Lock("import:catalog", ttl=3, wait=0, auto_renew=True, client=redis_client, prefix="test")
    assert old.acquire()
    for i in range(5):  # other import:* locks, taken at the same time, with a long TTL: not flagged
        assert Lock(
            f"import:batch-{i}", ttl=600, wait=0, client=redis_client, prefix="test"
        ).acquire()
    api = RateLimiter("3/m", name="api", client=redis_client, prefix="test")
    for _ in range(4):
        api.hit("ip:203.0.113.7")

    try:
        _check_the_panel(browser, live_server, emails, tmp_path)
    finally:
        old.release()


def _check_the_panel(browser, live_server, emails, tmp_path):  # noqa: F811
    page = browser.new_page(viewport=VIEWPORT)
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    _log_in(page, live_server)
    panel = page.locator("#rc-section-trouble")
    # the job is overdue ~2 s after its leader left, the lock flagged once held ~12 s (its TTL
    # estimate: 1.5 x (index bound - now) + 1 s): the live refresh brings them in
    page.wait_for_selector(
        "#rc-section-trouble li[data-kind='job'][data-resource='refresh_rates']", timeout=20_000
    )
    page.wait_for_selector(
        "#rc-section-trouble li[data-kind='lock'][data-resource='import:catalog']", timeout=30_000
    )
    page.click(
        "#rc-pause"
    )  # hold the page still while it is read (the ages in the reasons change every refresh)

    expected = {
        ("job", "refresh_rates", "error"): "not claimed",
        ("leader", "election default", "error"): "no leader",
        ("queue", "emails", "error"): "12 ready",
        ("dead_letters", "payments", "error"): "2 new dead letter(s)",
        ("lock", "import:catalog", "warning"): "its TTL",
        ("rate_limit", "api / ip:203.0.113.7", "warning"): "at its limit",
    }
    items = panel.locator("li.rc-trouble")
    shown = {}
    for i in range(items.count()):
        li = items.nth(i)
        shown[
            (
                li.get_attribute("data-kind"),
                li.get_attribute("data-resource"),
                li.get_attribute("data-severity"),
            )
        ] = li.inner_text()
    assert set(shown) == set(expected), shown
    for key, words in expected.items():
        text = shown[key]
        assert words in text, (key, text)
        # in words, not only in colour
        assert text.startswith("Problem" if key[2] == "error" else "Warning"), text
    assert ("queue", "payments", "error") not in shown  # served by a live worker
    heading = page.locator("#rc-trouble-heading").inner_text()
    assert "4 problems" in heading and "2 warnings" in heading

    # problems stand out: red and amber, the problems listed first
    severities = [items.nth(i).get_attribute("data-severity") for i in range(items.count())]
    assert severities == sorted(severities, key=("error", "warning").index)
    colour = page.eval_on_selector(
        "#rc-section-trouble li.rc-trouble-error", "e => getComputedStyle(e).borderLeftColor"
    )
    assert colour == "rgb(186, 33, 33)"
    colour = page.eval_on_selector(
        "#rc-section-trouble li.rc-trouble-warning", "e => getComputedStyle(e).borderLeftColor"
    )
    assert colour == "rgb(179, 107, 0)"

    # at the top, whole, without scrolling: above every other section
    assert page.evaluate("window.scrollY") == 0
    box = panel.bounding_box()
    assert box and box["y"] < 400 and box["y"] + box["height"] <= VIEWPORT["height"], (
        box
    )  # under the header and the filter bar
    assert box["y"] < page.locator("#rc-section-locks").bounding_box()["y"]

    # the links lead to the resource: the lock list filtered to the lock, the dead letters' page
    href = panel.locator("li[data-kind='lock'] a").get_attribute("href")
    assert href == "?q=import%3Acatalog#rc-section-locks"
    assert (
        panel.locator("li[data-kind='dead_letters'] a").get_attribute("href")
        == "dead-letters/?name=payments"
    )

    page.screenshot(path=str(tmp_path / "trouble.png"))
    panel.screenshot(path=str(tmp_path / "trouble-panel.png"))
    assert (tmp_path / "trouble.png").stat().st_size > 10_000

    # the live refresh follows: a worker for emails, and its problem goes without a reload
    Worker([emails], handler=lambda m: None)._beat()
    page.click("#rc-pause")  # resume
    page.wait_for_selector(
        "#rc-section-trouble li[data-kind='queue']", state="detached", timeout=8000
    )
    assert "3 problems" in page.locator("#rc-trouble-heading").inner_text()
    page.click("#rc-section-trouble li[data-kind='lock'] a")
    page.wait_for_selector("#rc-locks tr[data-name='import:catalog']")
    assert page.locator("#rc-locks tr").count() == 1
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_no_trouble_is_said_plainly(browser, live_server, django_user_model, redis_client):  # noqa: F811
    django_user_model.objects.create_superuser("admin", "admin@example.com", "admin")
    Lock("invoice:1", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
    page = browser.new_page(viewport=VIEWPORT)
    _log_in(page, live_server)
    panel = page.locator("#rc-section-trouble")
    assert page.locator("#rc-section-trouble li.rc-trouble").count() == 0
    assert "Needs a look: nothing" in " ".join(
        page.locator("#rc-trouble-heading").inner_text().split()
    )
    assert "No trouble found" in panel.inner_text() and panel.is_visible()
