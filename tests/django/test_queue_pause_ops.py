"""Pausing a queue from where operators work: the admin (confirmed, audited), ``redcoord queue``,
the metrics, the trouble list, and a Django task that waits out the pause."""

from __future__ import annotations

import io

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import CommandError, call_command
from django.test import RequestFactory

from django_redcoord.core.queues import Queue
from django_redcoord.metrics import metrics_view

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db


@task()
def adds(a, b):
    return a + b


def test_the_admin_pauses_and_resumes_a_queue_confirmed_and_audited(client, staff, redis_client):
    emails = Queue("emails|eu", client=redis_client, prefix="test")
    emails.push_many(range(3))
    client.force_login(staff("view_dashboard", "change_dashboard"))
    row = client.get(URL + "fragments/").json()["rc-section-queues"]
    assert "action/pause-queue/?name=emails%7Ceu" in row and "rc-paused" not in row
    confirm = client.get(URL + "action/pause-queue/", {"name": "emails|eu"})
    assert confirm.status_code == 200 and "claim nothing new" in confirm.content.decode()
    assert emails.paused() is None  # a GET only asks
    done = client.post(URL + "action/pause-queue/", {"name": "emails|eu"})
    assert done.status_code == 302
    paused = emails.paused()
    assert paused and paused["reason"].startswith("paused in the admin by staff")
    assert LogEntry.objects.filter(
        change_message__contains="Pause queue emails|eu: paused"
    ).exists()
    fragments = client.get(URL + "fragments/").json()
    assert 'class="rc-paused"' in fragments["rc-section-queues"]
    assert "action/resume-queue/?name=emails%7Ceu" in fragments["rc-section-queues"]
    trouble = client.get(URL + "data.json").json()["trouble"]["items"]
    [item] = [x for x in trouble if x["resource"] == "emails|eu"]
    assert (
        item["severity"] == "warning"
        and "paused" in item["reason"]
        and "3 ready wait" in item["reason"]
    )
    assert client.post(URL + "action/resume-queue/", {"name": "emails|eu"}).status_code == 302
    assert emails.paused() is None
    assert LogEntry.objects.filter(
        change_message__contains="Resume queue emails|eu: resumed"
    ).exists()
    # resumed and no worker: the usual error again, not the pause's warning
    trouble = client.get(URL + "data.json").json()["trouble"]["items"]
    assert [x["severity"] for x in trouble if x["resource"] == "emails|eu"] == ["error"]


def test_a_viewer_sees_the_pause_and_cannot_act(client, staff, redis_client):
    Queue("emails", client=redis_client, prefix="test").pause("night")
    client.force_login(staff("view_dashboard"))
    row = client.get(URL + "fragments/").json()["rc-section-queues"]
    assert 'title="night">paused</span>' in row and "action/" not in row
    assert client.post(URL + "action/resume-queue/", {"name": "emails"}).status_code == 403
    assert Queue("emails", client=redis_client, prefix="test").paused() is not None


def test_the_command_pauses_shows_and_resumes(redis_client):
    def run(*args):
        out = io.StringIO()
        call_command("redcoord", "queue", *args, stdout=out)
        return out.getvalue()

    assert "paused: its workers claim nothing new" in run("pause", "emails", "--reason", "deploy")
    assert "was already paused" in run("pause", "emails") and "(deploy)" in run("show", "emails")
    assert Queue("emails", client=redis_client, prefix="test").paused()["reason"] == "deploy"
    assert "resumed" in run("resume", "emails") and "not paused" in run("show", "emails")
    assert "was not paused" in run("resume", "emails")
    Queue("emails", client=redis_client, prefix="test").pause("night run")
    status = io.StringIO()
    call_command("redcoord", "status", stdout=status)
    [row] = [line for line in status.getvalue().splitlines() if line.strip().startswith("emails")]
    assert "paused, since" in row and "(night run)" in row
    with pytest.raises(CommandError, match="allowed characters"):
        run("pause", "a b")
    with pytest.raises(CommandError, match="at most 500 characters"):
        run("pause", "emails", "--reason", "x" * 501)


def test_the_metrics_say_which_queue_is_paused(redis_client):
    Queue("emails", client=redis_client, prefix="test").pause()
    Queue("thumbs", client=redis_client, prefix="test").push(1)
    text = metrics_view(RequestFactory().get("/metrics/")).content.decode()
    assert 'redcoord_queue_paused{queue="emails"} 1.0' in text
    assert 'redcoord_queue_paused{queue="thumbs"} 0.0' in text


@pytest.mark.django_db(
    transaction=True
)  # (ENQUEUE_ON_COMMIT: sent when the test's transaction commits)
def test_a_task_enqueued_on_a_paused_queue_waits_and_runs_once_resumed(redis_client):
    Queue("default", client=redis_client, prefix="test").pause("maintenance")
    result = adds.enqueue(2, 3)
    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert result.status == TaskResultStatus.READY  # not lost, not run
    Queue("default", client=redis_client, prefix="test").resume()
    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 5
