"""The panel and action registries: a family added by one reader, one registration and one
template shows up everywhere the built-in ones do (the overview's JSON, the admin page's
sections, ``redcoord status``), and an action added by one function and one registration goes
through the same confirm-then-POST view, history included."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import call_command

from django_redcoord import panels
from django_redcoord.admin import ACTIONS, Action, register_action, sections
from django_redcoord.dashboard import overview

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def widgets():
    """A toy family: its reader reads a hash of widget names from Redis."""

    def read(r):
        return [{"name": n.decode()} for n in sorted(r.client.smembers(f"{r.keys.prefix}:widgets"))]

    panel = panels.register_panel(
        panels.Panel(
            key="widgets",
            what="widgets",
            read=read,
            empty=lambda r: [],
            fragment="widgets",
            section_id="rc-section-widgets",
            tables=lambda rows, now: [("Widgets", ["widget"], [[w["name"]] for w in rows])],
        )
    )
    try:
        yield panel
    finally:
        panels._PANELS.pop("widgets", None)


def test_a_registered_panel_is_read_listed_and_printed(widgets, redis_client, capsys):
    redis_client.sadd("test:widgets", "sprocket", "gear")
    data = overview(redis_client, "test")
    assert data["widgets"] == [{"name": "gear"}, {"name": "sprocket"}]
    keys = list(data)
    assert keys.index("leaders") < keys.index("widgets") < keys.index("trouble")  # in order
    assert (
        "rc-section-widgets",
        "admin/django_redcoord/fragments/widgets.html",
        "module rc-section",
    ) in sections()
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "Widgets" in out and "sprocket" in out and out.index("Queues") < out.index("Widgets")


def test_a_panel_whose_records_cannot_be_read_is_shown_empty_and_counted(redis_client):
    def broken(r):
        raise ValueError("not a widget")

    panels.register_panel(
        panels.Panel(
            key="broken",
            what="broken widgets",
            read=broken,
            empty=lambda r: ["nothing"],
            fragment="broken",
            section_id="rc-section-broken",
            tables=lambda rows, now: [],
        )
    )
    try:
        data = overview(redis_client, "test")
    finally:
        panels._PANELS.pop("broken", None)
    assert data["broken"] == ["nothing"] and data["unreadable"] == {"broken widgets": 1}


def test_a_panel_cannot_take_another_ones_fragment_or_element():
    with pytest.raises(ValueError, match="taken by panel 'queues'"):
        panels.register_panel(
            panels.Panel(
                key="impostor",
                what="x",
                read=lambda r: [],
                empty=lambda r: [],
                fragment="queues",
                section_id="rc-section-impostor",
                tables=lambda rows, now: [],
            )
        )
    assert "impostor" not in {p.key for p in panels.panels()}


def test_the_built_in_panels_are_the_page_in_order():
    assert [p.key for p in panels.panels()][:10] == [
        "locks",
        "lock_waits",
        "semaphores",
        "rwlocks",
        "latches",
        "signals",
        "rate_limits",
        "queues",
        "workers",
        "leaders",
    ]
    assert [s[0] for s in sections()][:3] == ["rc-asof", "rc-section-trouble", "rc-section-locks"]


@pytest.fixture
def polish():
    done = []

    def run(call):
        done.append((call.name, call.key, call.by))
        return f"{call.name} polished"

    register_action(
        Action(
            "polish-widget",
            "Polish widget {name} with {key}",
            "It shines; nothing else changes.",
            run=run,
            needs=("key",),
        )
    )
    try:
        yield done
    finally:
        ACTIONS.pop("polish-widget", None)


def test_a_registered_action_is_confirmed_done_and_logged(client, staff, polish):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    confirm = client.get(URL + "action/polish-widget/?name=w1&key=wax")
    assert confirm.status_code == 200
    assert b"Polish widget w1 with wax" in confirm.content and b"It shines" in confirm.content
    assert polish == []  # a GET only asks
    done = client.post(URL + "action/polish-widget/", {"name": "w1", "key": "wax"})
    assert done.status_code == 302 and polish == [("w1", "wax", done.wsgi_request.user.username)]
    assert LogEntry.objects.latest("action_time").change_message == (
        "Polish widget w1 with wax: w1 polished"
    )
    bad = client.post(URL + "action/polish-widget/", {"name": "w1", "key": "no spaces"})
    assert bad.status_code == 302 and len(polish) == 1  # refused before it ran


def test_an_action_is_refused_a_parameter_no_action_may_take():
    with pytest.raises(ValueError, match="fence, key, id and election"):
        register_action(Action("x", "x", "x", run=lambda call: "", needs=("colour",)))
    assert "x" not in ACTIONS
