"""The operators' pages as deployed: the admin dashboard, its panels, a schedule edit and the
health probe.

Through every deployment of the matrix (gunicorn and uvicorn, on TCP over IPv4
and IPv6, and on a Unix socket behind nginx): the pages answer, their JSON
parses, a staff user edits a periodic job's schedule with Django's CSRF token
(a POST without it is refused), and the edit is what the next page shows.
The site has no CsrfViewMiddleware: our admin views must protect themselves.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import pytest

from .servers import V4A, V6

pytestmark = pytest.mark.xdist_group("deploy")  # --dist loadgroup: one worker, servers started once

DASHBOARD = "/admin/django_redcoord/dashboard/"
JOB = "deploy.nightly"
SCHEDULE = f"{DASHBOARD}schedule/?{urlencode({'name': JOB, 'election': 'default'})}"


def _cookie(*jars: dict[str, str]) -> str:
    merged: dict[str, str] = {}
    for jar in jars:
        merged.update(jar)
    return "; ".join(f"{k}={v}" for k, v in merged.items())


@pytest.mark.parametrize("client", [V4A, V6], ids=["ipv4", "ipv6"])
def test_the_dashboard_and_its_panels_answer_a_signed_in_operator(site, client):
    site.redis.set("deploy:probe", "1")  # (an empty Redis is fine: the pages must not need data)
    anonymous = site.get(DASHBOARD, client=client)
    assert anonymous.status == 302 and "/admin/login/" in anonymous.headers["location"], (
        anonymous.status
    )
    cookie = site.sign_in(f"operator-{client.replace(':', '')}", client=client)
    page = site.get(DASHBOARD, client=client, cookie=cookie)
    assert page.status == 200, (page.status, page.body[-2000:], site.logs())
    html = page.body.decode()
    assert "Coordination dashboard" in html and "/static/django_redcoord/dashboard.js" in html
    data = site.get(DASHBOARD + "data.json", client=client, cookie=cookie)
    assert data.status == 200 and data.headers["content-type"].startswith("application/json")
    assert {"locks", "queues", "leaders", "trouble"} <= set(data.json())
    for panel in ("fragments/", "trouble/"):  # what the page's script fetches on each refresh
        reply = site.get(DASHBOARD + panel, client=client, cookie=cookie)
        assert reply.status == 200, (panel, reply.status, reply.body[-2000:])
        assert isinstance(reply.json(), dict) and reply.json(), panel


def test_a_schedule_edit_needs_the_csrf_token_and_then_applies(site):
    cookie = site.sign_in("operator-sched")
    form = site.get(SCHEDULE, cookie=cookie)
    assert form.status == 200, (form.status, form.body[-2000:], site.logs())
    html = form.body.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    version = re.search(r'name="version" value="(\d+)"', html).group(1)
    fields = {
        "name": JOB,
        "election": "default",
        "version": version,
        "kind": "every",
        "every": "120",
        "cron": "",
        "param_batch": "100",
    }
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    # without the token: refused, nothing stored
    refused = site.get(
        SCHEDULE,
        method="POST",
        cookie=_cookie(dict([cookie.split("=", 1)]), form.cookies),
        headers=headers,
        body=urlencode(fields).encode(),
    )
    assert refused.status == 403, (refused.status, refused.body[-1000:])
    assert (
        "every 3600s" in html
        and "every 120s" not in site.get(SCHEDULE, cookie=cookie).body.decode()
    )
    # with it: stored, and the page shows it
    done = site.get(
        SCHEDULE,
        method="POST",
        cookie=_cookie(dict([cookie.split("=", 1)]), form.cookies),
        headers=headers,
        body=urlencode({**fields, "csrfmiddlewaretoken": token}).encode(),
    )
    assert done.status == 302, (done.status, done.body[-3000:], site.logs())
    after = site.get(
        SCHEDULE, cookie=_cookie(dict([cookie.split("=", 1)]), done.cookies)
    ).body.decode()
    assert "every 120s" in after, after[-3000:]
    stored = [k for k in site.redis.scan_iter("deploy:*") if b"schedule" in k]
    assert stored, "the edit left nothing in Redis"


@pytest.mark.parametrize("client", [V4A, V6], ids=["ipv4", "ipv6"])
def test_the_health_probe_answers_json_with_the_jobs(site, client):
    reply = site.get("/-/health?jobs=1", client=client)
    assert reply.status in (200, 503), (reply.status, reply.body[-1000:])
    assert reply.headers["content-type"].startswith("application/json")
    data = json.loads(reply.body)
    assert data["checks"]["redis"]["ok"] is True
    assert f"job:{JOB}" in data["checks"]  # never run yet: reported, whatever the verdict
    bad = site.get("/-/health?jobs=maybe", client=client)
    assert bad.status == 400 and b"jobs must be 1 or 0" in bad.body
