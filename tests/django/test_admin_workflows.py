"""Workflows in the admin: the running ones listed, one shown with its members linked to their
task results, and a member's result page naming its workflow and group."""

import pytest
from django.core.management import call_command
from django.test import TestCase

from django_redcoord.tasks import chain, step
from tests.support import group_tasks as gt
from tests.support import workflow_tasks as wt

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client, staff):
    client.force_login(staff("view_dashboard"))
    return client


def test_running_workflows_are_listed_and_one_is_shown_with_its_members(viewer, redis_client):
    with TestCase.captureOnCommitCallbacks(execute=True):
        wf = chain(
            step(wt.record, "<a>"), step(gt.shared_step, 1), then=step(wt.record, "cb")
        ).enqueue()
    assert 'id="rc-workflows-link"' in viewer.get(URL).content.decode()
    listed = viewer.get(URL + "workflows/").content.decode()
    assert f'data-id="{wf.id}"' in listed and "0 / 2" in listed
    shown = viewer.get(URL + "workflows/", {"id": wf.id}).content.decode()
    assert 'id="rc-workflow-status">RUNNING<' in shown
    # only the started member links to its result: the waiting one and the callback have none
    assert shown.count("task-result/?id=") == 1 and "started" in shown and "waiting" in shown
    assert shown.count("(no result yet)") == 2
    member = viewer.get(URL + "task-result/", {"id": wf.members[1]["id"]}).content.decode()
    assert "member 1" not in member  # not pushed yet: no record
    first = viewer.get(URL + "task-result/", {"id": wf.members[0]["id"]}).content.decode()
    assert f"?id={wf.id}" in first and "member 0" in first
    call_command("run_worker", "--burst", verbosity=0)
    done = viewer.get(URL + "workflows/", {"id": wf.id}).content.decode()
    assert 'id="rc-workflow-status">SUCCESSFUL<' in done
    assert done.count("task-result/?id=") == 3 and "(no result yet)" not in done
    assert f'data-id="{wf.id}"' not in viewer.get(URL + "workflows/").content.decode()
    second = viewer.get(URL + "task-result/", {"id": wf.members[1]["id"]}).content.decode()
    assert 'id="rc-group"' in second and "shared" in second


def test_an_unknown_or_bad_workflow_id_says_so(viewer):
    assert "GONE" in viewer.get(URL + "workflows/", {"id": "nosuchone"}).content.decode()
    assert "No such workflow" in viewer.get(URL + "workflows/", {"id": "a b"}).content.decode()
