"""A queue's groups in the admin and in ``redcoord queue show``: the dashboard links a queue
that has groups to its groups page, which lists each group's counts, escaped."""

from io import StringIO

import pytest
from django.core.management import call_command

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.groups import Group

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client, staff):
    client.force_login(staff("view_dashboard"))
    return client


def test_the_groups_page_lists_each_groups_counts_busiest_first(viewer, redis_client):
    queue = Queue("tenants", client=redis_client, prefix="test")
    odd = '<b>"t&1"</b>|x'
    queue.push_many(range(4), group=Group(odd, concurrency=1, rate="1/m"))
    queue.push("x", group="quiet")
    consumer = queue.consumer("c")
    consumer.claim(10)  # one of each group claimed: odd has 3 waiting behind
    page = viewer.get(URL)
    assert page.status_code == 200
    assert 'href="groups/?name=tenants"' in page.content.decode()
    assert "2 groups" in page.content.decode()
    listed = viewer.get(URL + "groups/", {"name": "tenants"})
    html = listed.content.decode()
    assert listed.status_code == 200 and 'id="rc-groups-total">2<' in html
    assert odd not in html and "&lt;b&gt;&quot;t&amp;1&quot;&lt;/b&gt;|x" in html
    row = html[html.index("&lt;b&gt;") :]
    cells = [c.split("<")[0] for c in row.split('class="rc-num">')[1:5]]
    assert cells[:3] == ["0", "1", "3"] and cells[3].endswith(" s")
    assert html.index("&lt;b&gt;") < html.index(">quiet<"), "busiest first"


def test_a_bad_queue_name_redirects_with_a_message(viewer):
    response = viewer.get(URL + "groups/", {"name": "bad name"})
    assert response.status_code == 302


def test_redcoord_queue_show_prints_the_groups(redis_client, settings):
    queue = Queue("shown", client=redis_client, prefix="test")
    queue.push_many(range(3), group=Group("acct:1", concurrency=1))
    out = StringIO()
    call_command("redcoord", "queue", "show", "shown", stdout=out)
    text = out.getvalue()
    assert "groups with messages: 1" in text and "acct:1: 1 / 0 / 2" in text
