"""Red team (2026): the dashboard's rows written in Python (admin/rows.py) and the queue pause in
the admin.

What a client process can write reaches the page: a holder's host and thread
names, queue names of every allowed character (and a ``{tag}``), a pause's
reason. Each must be escaped, each link must carry the name quoted whole (so
following it acts on that very queue), the page and the live refresh must
show the same rows, and a viewer has nothing to act on.
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from django_redcoord.core.queues import Queue

from ..support.admin_support import hold_from_a_thread_named

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db

# every character a name may hold (validate_name), and a {tag}
EVERY_CHAR = "a_b-c.d:e/f@g=h+i,j#k~l|m"
NAMES = [EVERY_CHAR, "tag{x|y}/z", "{t}", "a+b", "a#b", "a,b=c", "x%41", "100%"[:3], "a@b~c"]
NAMES = [n for n in NAMES if "%" not in n]  # '%' is not an allowed character


def _q(redis_client, name):
    return Queue(name, client=redis_client, prefix="test")


def _tbody(text, body_id):
    return re.search(rf'<tbody id="{body_id}">(.*?)</tbody>', text, re.S).group(1)


def _links(body):
    """{action path: [name, ...]} of every link in ``body`` (the name as the server will read
    it)."""
    out: dict[str, list[str]] = {}
    for href in re.findall(r'href="([^"]*)"', body):
        parts = urlsplit(html.unescape(href))
        for name in parse_qs(parts.query, keep_blank_values=True).get("name", []):
            out.setdefault(parts.path, []).append(name)
    return out


def test_every_link_of_a_queue_row_names_that_very_queue(client, staff, redis_client):
    for name in NAMES:
        _q(redis_client, name).push(1)
    # a dead letter so the Dead link shows
    for name in NAMES:
        q = _q(redis_client, name)
        [m], _ = q.consumer("c1", timeout=5).claim(1)
        q.consumer("c1", timeout=5).nack(m, "boom", dead=True)
    client.force_login(staff("view_dashboard", "change_dashboard"))
    body = _tbody(client.get(URL + "fragments/").json()["rc-section-queues"], "rc-queues")
    links = _links(body)
    for path in (
        "action/requeue-dead/",
        "action/purge-dead/",
        "action/purge-queue/",
        "action/pause-queue/",
        "dead-letters/",
    ):
        assert sorted(links[path]) == sorted(NAMES), path
    names = [html.unescape(n) for n in re.findall(r'<tr data-name="([^"]*)"', body)]
    assert sorted(names) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_following_the_pause_link_pauses_that_queue_and_the_resume_link_resumes_it(
    client, staff, redis_client, name
):
    q = _q(redis_client, name)
    q.push(1)
    client.force_login(staff("view_dashboard", "change_dashboard"))
    body = _tbody(client.get(URL + "fragments/").json()["rc-section-queues"], "rc-queues")
    [href] = [html.unescape(h) for h in re.findall(r'href="(action/pause-queue/[^"]*)"', body)]
    confirm = client.get(URL + href)
    assert confirm.status_code == 200 and "Are you sure?" in confirm.content.decode()
    # the confirmation's form posts the name it was given
    assert client.post(URL + "action/pause-queue/", {"name": name}).status_code == 302
    assert q.paused() is not None
    body = _tbody(client.get(URL + "fragments/").json()["rc-section-queues"], "rc-queues")
    [href] = [html.unescape(h) for h in re.findall(r'href="(action/resume-queue/[^"]*)"', body)]
    assert parse_qs(urlsplit(href).query)["name"] == [name]
    assert client.post(URL + "action/resume-queue/", {"name": name}).status_code == 302
    assert q.paused() is None


REASONS = [
    "<script>alert('x')</script>",
    '" onmouseover="alert(1)',
    "a & b < c > d ' e \" f",
    "naïve café — 名前 😀",
    "line\nbreak\ttab",
    '\\u0041 \\" {} [] null',
    "/slash/ and \\ backslash",
    "x" * 500,
    "é" * 500,
    "\x00nul\x1b[31m",
]


@pytest.mark.parametrize("reason", REASONS)
def test_a_pause_reason_round_trips_and_is_escaped_everywhere(client, staff, redis_client, reason):
    q = _q(redis_client, "emails")
    q.push(1)
    assert q.pause(reason) is True
    assert q.paused()["reason"] == reason
    assert q.depths().paused["reason"] == reason
    client.force_login(staff("view_dashboard"))
    data = client.get(URL + "data.json").json()
    [row] = [x for x in data["queues"] if x["name"] == "emails"]
    assert row["paused"]["reason"] == reason and row["paused"]["since_ms"] > 0
    fragments = client.get(URL + "fragments/").json()
    body = _tbody(fragments["rc-section-queues"], "rc-queues")
    [title] = re.findall(r'<span class="rc-paused" title="([^"]*)">paused</span>', body)
    assert html.unescape(title) == reason
    for section in fragments.values():
        assert "<script>alert" not in section and 'onmouseover="alert' not in section
    page = client.get(URL).content.decode()
    assert "<script>alert('x')" not in page


def test_the_page_and_the_live_refresh_write_the_same_rows(client, staff, redis_client):
    hostile = "<b>host</b>&\"'"
    hold_from_a_thread_named(hostile, "order:{7}|x", redis_client)
    for name in NAMES:
        _q(redis_client, name).push(1)
    _q(redis_client, EVERY_CHAR).pause("<i>why</i>")
    for perms in (("view_dashboard",), ("view_dashboard", "change_dashboard")):
        client.force_login(staff(*perms))
        page = client.get(URL).content.decode()
        fragments = client.get(URL + "fragments/").json()
        for body_id, section in (
            ("rc-locks", "rc-section-locks"),
            ("rc-queues", "rc-section-queues"),
            ("rc-lockwaits", "rc-section-lockwaits"),
        ):
            same = [
                re.sub(r"\d+\.\d+", "N", x)
                for x in (_tbody(page, body_id), _tbody(fragments[section], body_id))
            ]
            assert same[0] == same[1], (
                perms,
                body_id,
            )  # (the TTL left ticks between the two reads)
        assert "<b>host</b>" not in page and "&lt;b&gt;host&lt;/b&gt;" in _tbody(page, "rc-locks")
        assert "<i>why</i>" not in page
        has_actions = "change_dashboard" in perms
        assert ("action/" in _tbody(page, "rc-queues")) is has_actions
        assert ("action/force-release/" in _tbody(page, "rc-locks")) is has_actions


def test_empty_states(client, staff, redis_client):
    client.force_login(staff("view_dashboard"))
    fragments = client.get(URL + "fragments/").json()
    assert "No queue yet." in fragments["rc-section-queues"]
    assert "No lock is held." in fragments["rc-section-locks"]
    assert "No lock was waited for in the last hour." in fragments["rc-section-lockwaits"]
    # a queue paused before its first push is listed (with its pause), so not "No queue yet."
    _q(redis_client, "later").pause("not yet")
    fragments = client.get(URL + "fragments/").json()
    assert "No queue yet." not in fragments["rc-section-queues"]
    assert 'title="not yet">paused</span>' in fragments["rc-section-queues"]


def test_a_viewer_cannot_pause_or_resume_by_post_nor_see_a_link(client, staff, redis_client):
    q = _q(redis_client, "emails")
    q.push(1)
    client.force_login(staff("view_dashboard"))
    assert "action/" not in client.get(URL + "fragments/").json()["rc-section-queues"]
    assert client.get(URL + "action/pause-queue/", {"name": "emails"}).status_code == 403
    assert client.post(URL + "action/pause-queue/", {"name": "emails"}).status_code == 403
    assert q.paused() is None
    q.pause("ops")
    assert client.post(URL + "action/resume-queue/", {"name": "emails"}).status_code == 403
    assert q.paused() is not None


def test_pause_twice_in_the_admin_keeps_the_first_reason_and_says_so(client, staff, redis_client):
    q = _q(redis_client, "emails")
    q.pause("first")
    client.force_login(staff("view_dashboard", "change_dashboard"))
    page = client.post(
        URL + "action/pause-queue/", {"name": "emails"}, follow=True
    ).content.decode()
    assert "it was paused already" in page
    assert q.paused()["reason"] == "first"
    page = client.post(
        URL + "action/resume-queue/", {"name": "emails"}, follow=True
    ).content.decode()
    assert "resumed" in page
    page = client.post(
        URL + "action/resume-queue/", {"name": "emails"}, follow=True
    ).content.decode()
    assert "it was not paused" in page


def test_a_long_username_still_pauses_with_a_reason_within_the_limit(
    client, django_user_model, redis_client
):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("<u>" + "n" * 140, password="pw", is_staff=True)
    for codename in ("view_dashboard", "change_dashboard"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)
    assert client.post(URL + "action/pause-queue/", {"name": "emails"}).status_code == 302
    reason = _q(redis_client, "emails").paused()["reason"]
    assert reason.startswith("paused in the admin by <u>") and len(reason) <= 500
    fragments = client.get(URL + "fragments/").json()
    assert (
        "<u>" not in fragments["rc-section-queues"] and "<u>" not in fragments["rc-section-trouble"]
    )
