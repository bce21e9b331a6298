"""Dead letters in the admin: listed a page at a time with their errors, requeued or
deleted one by one (one script each) or all at once, and a task result looked up by id."""

import re
import time

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import call_command

from django_redcoord.core.queues import Queue

from ..support import task_defs

URL = "/admin/django_redcoord/dashboard/"
ODD_ID = "a|1|2|3|0|b:c/d@e=f+g,h#i~j.k-l_m|"
pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client, staff):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    return client


def bury(queue, *ids, error="boom"):
    """Dead-letter a message per id (max_attempts=1: the first failure buries it), oldest first."""
    for mid in ids:
        queue.push({"n": mid}, id=mid)
    consumer = queue.consumer("w")
    messages, _ = consumer.claim(len(ids))
    for message in messages:
        assert consumer.nack(message, f"{error} {message.id}") == "dead"


def enqueue(task, *args, **kwargs):
    """Enqueue now: the test runs inside a transaction, and tasks are sent on commit."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        return task.enqueue(*args, **kwargs)


def fail_for_good(task, *args):
    """Enqueue a failing task and run workers until its result is FAILED (retries wait a few ms)."""
    result = enqueue(task, *args)
    for _ in range(50):
        call_command("run_worker", "--burst", verbosity=0)
        result.refresh()
        if result.is_finished:
            return result
        time.sleep(0.03)
    raise AssertionError(f"{result.id} did not finish: {result.status}")


def emails(redis_client):
    return Queue("emails", client=redis_client, prefix="test", max_attempts=1)


def last_log():
    return LogEntry.objects.latest("action_time").change_message


def test_dead_letters_are_listed_newest_first_with_errors_attempts_and_when_they_died(
    operator, redis_client
):
    queue = emails(redis_client)
    bury(queue, "m1", "m2")
    page = operator.get(URL + "dead-letters/?name=emails")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.index('data-id="m2"') < html.index('data-id="m1"')  # newest first
    assert (
        "boom m1" in html
        and "boom m2" in html
        and "1 / 1" in html
        and "{&quot;n&quot;: &quot;m1&quot;}" in html
    )
    # when it died: date, time and TIME_ZONE's zone (Europe/Paris in the test project)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T", html), html
    assert "action/requeue-dead-letter/?name=emails&amp;id=m1" in html


def test_a_tasks_dead_letter_shows_the_traceback_from_its_result_record(operator, settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }
    result = fail_for_good(task_defs.always_fails, "broken")
    html = operator.get(URL + "dead-letters/?name=default").content.decode()
    assert (
        f'data-id="{result.id}"' in html
        and "tests.support.task_defs.always_fails(&quot;broken&quot;)" in html
    )
    assert "builtins.RuntimeError: broken" in html  # the queue's error
    assert (
        "Traceback (most recent call last)" in html and "raise RuntimeError(reason)" in html
    )  # the record's
    assert "result: FAILED" in html and f"task-result/?id={result.id}" in html


def test_dead_letters_are_read_a_page_at_a_time(operator, redis_client):
    queue = emails(redis_client)
    bury(queue, *(f"m{i}" for i in range(120)))
    html = operator.get(URL + "dead-letters/?name=emails&page=3").content.decode()
    assert len(re.findall(r'<tr data-id="', html)) == 20 and "Page 3 of 3" in html
    assert 'data-id="m19"' in html and 'data-id="m0"' in html and 'data-id="m20"' not in html
    first = operator.get(URL + "dead-letters/?name=emails").content.decode()
    assert (
        len(re.findall(r'<tr data-id="', first)) == 50
        and 'data-id="m119"' in first
        and 'data-id="m69"' not in first
    )


def test_the_dashboard_links_a_queue_with_dead_letters_to_its_page(operator, redis_client):
    bury(emails(redis_client), "m1")
    Queue("quiet", client=redis_client, prefix="test").push(1)
    html = operator.get(URL).content.decode()
    assert 'href="dead-letters/?name=emails"' in html and "dead-letters/?name=quiet" not in html


def test_requeue_one_dead_letter(operator, redis_client):
    queue = emails(redis_client)
    bury(queue, "m1", "m2")
    done = operator.post(URL + "action/requeue-dead-letter/", {"name": "emails", "id": "m1"})
    assert done.status_code == 302 and done["Location"].endswith("dead-letters/?name=emails")
    assert (queue.depths().ready, queue.depths().dead) == (1, 1)
    assert [m.id for m, _ in queue.dead_letters()] == ["m2"] and not redis_client.hexists(
        queue.keys.errors, "m1"
    )
    [message], _ = queue.consumer("again").claim(5)
    assert (
        message.id == "m1" and message.attempt == 0 and message.body == {"n": "m1"}
    )  # attempts reset
    assert "Requeue dead letter m1 of queue emails: 1 message requeued" in last_log()
    operator.post(URL + "action/requeue-dead-letter/", {"name": "emails", "id": "m1"})
    assert "no longer a dead letter" in last_log() and queue.depths().dead == 1


@pytest.mark.parametrize("how", ["one", "all"])
def test_a_requeued_task_runs_again_and_its_result_tells_the_new_outcome(
    operator, redis_client, how
):
    task_defs.TOLD["fail"] = True
    try:
        result = fail_for_good(task_defs.fails_while_told, "again")
        assert result.status == "FAILED" and len(result.errors) == 3
        task_defs.TOLD["fail"] = False  # the cause was fixed: the operator requeues it
        if how == "one":
            operator.post(URL + "action/requeue-dead-letter/", {"name": "default", "id": result.id})
        else:
            operator.post(URL + "action/requeue-dead/", {"name": "default"})
        call_command("run_worker", "--burst", verbosity=0)
        result.refresh()
        assert (
            result.status == "SUCCESSFUL" and result.return_value == "again"
        )  # not the old FAILED
        assert (
            result.errors == [] and len(result.worker_ids) == 1
        )  # the earlier deliveries are gone
    finally:
        task_defs.TOLD["fail"] = True


def test_delete_one_dead_letter(operator, redis_client):
    queue = emails(redis_client)
    bury(queue, "m1", "m2")
    page = operator.post(
        URL + "action/delete-dead-letter/", {"name": "emails", "id": "m2"}, follow=True
    )
    assert "Delete dead letter m2 of queue emails: 1 dead letter deleted" in page.content.decode()
    assert [m.id for m, _ in queue.dead_letters()] == ["m1"] and queue.depths().ready == 0
    assert not redis_client.hexists(queue.keys.errors, "m2") and redis_client.hexists(
        queue.keys.errors, "m1"
    )
    assert "1 dead letter deleted" in last_log()


def test_requeue_all_and_delete_all_are_logged_with_counts(operator, redis_client):
    queue = emails(redis_client)
    bury(queue, "m1", "m2")
    operator.post(URL + "action/requeue-dead/", {"name": "emails"})
    assert (queue.depths().ready, queue.depths().dead) == (2, 0)
    assert "Requeue the dead letters of queue emails: 2 message(s) requeued" in last_log()
    queue.purge()
    bury(queue, "m3", "m4", "m5")
    done = operator.post(URL + "action/purge-dead/", {"name": "emails"})
    assert done.status_code == 302 and "dead-letters/" in done["Location"]
    assert queue.depths().dead == 0 and not redis_client.exists(queue.keys.errors)
    assert "Delete the dead letters of queue emails: 3 dead letter(s) deleted" in last_log()


def test_acting_needs_the_change_permission(client, staff, redis_client):
    queue = emails(redis_client)
    bury(queue, "m1")
    client.force_login(staff("view_dashboard"))
    assert client.get(URL + "dead-letters/?name=emails").status_code == 200
    assert b"Requeue" not in client.get(URL + "dead-letters/?name=emails").content
    for action in ("requeue-dead-letter", "delete-dead-letter", "requeue-dead", "purge-dead"):
        assert client.get(URL + f"action/{action}/?name=emails&id=m1").status_code == 403
        assert (
            client.post(URL + f"action/{action}/", {"name": "emails", "id": "m1"}).status_code
            == 403
        )
    assert queue.depths().dead == 1 and not LogEntry.objects.exists()
    client.force_login(staff())
    assert client.get(URL + "dead-letters/?name=emails").status_code == 403
    assert client.get(URL + "task-result/?id=x").status_code == 403


def test_actions_need_a_csrf_token(staff, redis_client):
    from django.test import Client

    queue = emails(redis_client)
    bury(queue, "m1")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(staff("view_dashboard", "change_dashboard"))
    assert (
        browser.post(URL + "action/delete-dead-letter/", {"name": "emails", "id": "m1"}).status_code
        == 403
    )
    assert queue.depths().dead == 1


def test_get_on_an_action_only_asks_for_confirmation(operator, redis_client):
    queue = emails(redis_client)
    bury(queue, "m1")
    for action in ("requeue-dead-letter", "delete-dead-letter"):
        confirm = operator.get(URL + f"action/{action}/?name=emails&id=m1")
        html = confirm.content.decode()
        assert (
            confirm.status_code == 200
            and "Are you sure?" in html
            and "dead letter m1 of queue emails" in html
        )
        assert (
            '<input type="hidden" name="id" value="m1">' in html
            and "dead-letters/?name=emails" in html
        )
    assert queue.depths().dead == 1 and queue.depths().ready == 0 and not LogEntry.objects.exists()


def test_an_id_with_every_odd_allowed_character_works(operator, redis_client):
    queue = emails(redis_client)
    # neighbours whose envelopes share a prefix or a suffix with the odd id
    bury(queue, "a", ODD_ID[:-1], ODD_ID, "m|" + ODD_ID)
    html = operator.get(URL + "dead-letters/?name=emails").content.decode()
    assert f'data-id="{ODD_ID}"' in html
    from urllib.parse import quote

    assert f"id={quote(ODD_ID, safe='')}" in html  # the link carries it whole
    confirm = operator.get(
        URL + f"action/requeue-dead-letter/?name=emails&id={quote(ODD_ID, safe='')}"
    )
    assert f'value="{ODD_ID}"' in confirm.content.decode()
    operator.post(URL + "action/requeue-dead-letter/", {"name": "emails", "id": ODD_ID})
    assert [m.id for m, _ in queue.dead_letters()] == ["a", ODD_ID[:-1], "m|" + ODD_ID]
    [message], _ = queue.consumer("again").claim(5)
    assert message.id == ODD_ID and message.attempt == 0
    assert redis_client.hexists(queue.keys.errors, ODD_ID[:-1]) and not redis_client.hexists(
        queue.keys.errors, ODD_ID
    )
    operator.post(URL + "action/delete-dead-letter/", {"name": "emails", "id": "m|" + ODD_ID})
    assert [m.id for m, _ in queue.dead_letters()] == ["a", ODD_ID[:-1]]


def test_the_core_methods_say_whether_the_letter_was_there(redis_client):
    queue = Queue("lifo|q", client=redis_client, prefix="test", max_attempts=1, lifo=True)
    bury(queue, "x", "y")
    assert queue.requeue_dead_letter("y") is True and queue.requeue_dead_letter("y") is False
    assert queue.delete_dead_letter("x") is True and queue.delete_dead_letter("x") is False
    assert queue.delete_dead_letter("nobody") is False and queue.depths().ready == 1
    with pytest.raises(ValueError):
        queue.requeue_dead_letter("no spaces")


def test_a_task_result_is_looked_up_by_id(operator):
    result = enqueue(task_defs.add, 2, b=3)
    html = operator.get(URL + f"task-result/?id={result.id}").content.decode()
    assert (
        "READY" in html
        and "tests.support.task_defs.add" in html
        and "[2]" in html
        and "{&quot;b&quot;: 3}" in html
    )
    assert re.search(r"Enqueued</th><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T", html), html
    call_command("run_worker", "--burst", verbosity=0)
    html = operator.get(URL + f"task-result/?id={result.id}").content.decode()
    assert "SUCCESSFUL" in html and "Return value" in html and "<code>5</code>" in html
    assert (
        'id="rc-task-lookup"' in operator.get(URL).content.decode()
    )  # the form is on the dashboard


def test_a_failed_task_result_shows_its_errors_and_workers(operator, redis_client, settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }
    result = fail_for_good(task_defs.always_fails, "broken")
    html = operator.get(URL + f"task-result/?id={result.id}").content.decode()
    assert "FAILED" in html and html.count("Traceback (most recent call last)") == 3
    assert "builtins.RuntimeError" in html and all(w in html for w in result.worker_ids)


def test_an_unknown_task_result_says_it_may_have_expired(operator):
    for rid in ("no-such-result", "not a valid id*"):
        page = operator.get(URL + "task-result/", {"id": rid})
        html = page.content.decode()
        assert page.status_code == 404 and "No such result" in html and "RESULT_TTL" in html
        assert 'id="rc-result"' not in html


def test_a_periodic_job_can_be_run_now_paused_and_resumed_from_the_dashboard(
    operator, redis_client
):
    from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
    from django_redcoord.core.periodic import pending_requests
    from django_redcoord.core.periodic.scheduler import read_job_states

    election = LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test")
    redis_client.sadd(election.keys.jobs, "nightly|report")
    redis_client.hset(
        election.keys.job("nightly|report"), mapping={"schedule": "every 60 s", "runs": 1}
    )
    html = operator.get(URL).content.decode()
    assert (
        "action/run-job/?name=nightly%7Creport&amp;election=default" in html
        and "action/pause-job/" in html
    )
    confirm = operator.get(
        URL + "action/run-job/?name=nightly|report&election=default"
    ).content.decode()
    assert (
        "Are you sure?" in confirm
        and 'name="election" value="default"' in confirm
        and not pending_requests(election)
    )
    operator.post(URL + "action/run-job/", {"name": "nightly|report", "election": "default"})
    [request] = pending_requests(election)
    assert request.job == "nightly|report" and request.by.startswith("staff2")  # who asked
    assert "to run periodic job nightly|report now: request" in last_log()
    operator.post(URL + "action/pause-job/", {"name": "nightly|report", "election": "default"})
    assert read_job_states(election)["nightly|report"].get("paused") and "paused" in last_log()
    html = operator.get(URL).content.decode()
    assert "<td>paused</td>" in html and "action/resume-job/?name=nightly%7Creport" in html
    operator.post(URL + "action/resume-job/", {"name": "nightly|report", "election": "default"})
    assert not read_job_states(election)["nightly|report"].get("paused") and last_log().endswith(
        "resumed"
    )


@pytest.mark.parametrize("page", ["99999999999999999999", "9223372036854775807", "4", "-3", "x"])
def test_a_page_number_past_any_end_shows_the_last_page_not_a_500(operator, redis_client, page):
    queue = emails(redis_client)
    bury(queue, "m1")
    answer = operator.get(URL + f"dead-letters/?name=emails&page={page}")
    assert answer.status_code == 200  # was 500: LRANGE's index out of range
    html = answer.content.decode()
    # was an empty "Page 4 of 1" (or "Page 21990232555 of 1")
    assert len(re.findall(r'<tr data-id="', html)) == 1 and "Page 1 of 1" in html


def test_control_and_bidi_characters_of_a_dead_letter_are_shown_escaped(operator, redis_client):
    queue = emails(redis_client)
    queue.push({"n": "a\x1b[31mred\u202eevil"}, id="m1")
    consumer = queue.consumer("w")
    [message], _ = consumer.claim(1)
    assert consumer.nack(message, "boom\x1b[2J\u202egnp.exe", dead=True) == "dead"
    html = operator.get(URL + "dead-letters/?name=emails").content.decode()
    assert "\x1b" not in html and "\u202e" not in html  # was shown raw
    assert "boom\\x1b[2J\\u202egnp.exe" in html and "red" in html and "evil" in html
