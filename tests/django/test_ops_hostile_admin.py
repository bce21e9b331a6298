"""The admin never answers 500, whatever the names and ids it is given (issue 31, defects 21 and
22).

Every action (its confirmation page on GET and the act on POST), the
dead-letter page, the task-result lookup and the dashboard's filter are
given hostile names: braces, quotes, unicode, %, spaces, control characters.
Each answers a page or a redirect with a clear message, never a 500; a
result that does not exist is a 404.
"""

from __future__ import annotations

import pytest

from django_redcoord.admin import ACTIONS

URL = "/admin/django_redcoord/dashboard/"
pytestmark = pytest.mark.django_db

HOSTILE = [
    "{x}",
    "{",
    "}",
    "a{b}c",
    "{}",
    "job{1}",
    "'",
    '"',
    "a'b\"c",
    "é",
    "ü:名前",
    "😀",
    "%",
    "%7B",
    "%s",
    "%(x)s",
    "a b",
    " x ",
    "\t",
    "\x00",
    "\x1b[31mred",
    "\n",
    "a\r\nb",
    "\x7f",
    "*",
    "?",
    "[a]",
    "..",
    "../x",
    "a/b",
    "<script>alert(1)</script>",
    "a" * 300,
    "",
]


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    return client


def _params(action, hostile):
    params = {"name": hostile, "election": "default", "fence": "1", "key": "k", "id": "m1"}
    if action == "reset-ratelimit":
        params["key"] = hostile
    return params


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_action_with_hostile_names_never_answers_500(admin_client, action):
    fields = ["name"] + [
        field
        for field, used in (
            ("election", action in ("run-job", "pause-job", "resume-job")),
            ("key", action == "reset-ratelimit"),
            ("id", action.endswith("-dead-letter")),
            ("fence", action in ("force-release", "revoke-permit")),
        )
        if used
    ]
    for hostile in HOSTILE:
        for field in fields:
            params = {**_params(action, "ok-name"), field: hostile}
            page = admin_client.get(URL + f"action/{action}/", params)
            assert page.status_code in (200, 302), (action, field, hostile, page.status_code)
            done = admin_client.post(URL + f"action/{action}/", params)
            assert done.status_code == 302, (action, field, hostile, done.status_code)


@pytest.mark.parametrize("action", ["run-job", "pause-job", "resume-job"])
def test_job_actions_on_a_name_with_braces_say_what_is_allowed(admin_client, action):
    """Before: Run now / Pause / Resume on a job name with braces answered 500."""
    response = admin_client.post(
        URL + f"action/{action}/", {"name": "job{1}", "election": "default"}, follow=True
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert "Not done" in text and "job name" in text and "allowed characters" in text


def test_dead_letters_and_the_dashboard_with_hostile_names_never_answer_500(admin_client):
    for hostile in HOSTILE:
        assert admin_client.get(URL + "dead-letters/", {"name": hostile}).status_code in (
            200,
            302,
        ), hostile
        assert (
            admin_client.get(URL + "dead-letters/", {"name": "q", "page": hostile}).status_code
            == 200
        ), hostile
        assert admin_client.get(URL, {"q": hostile, "page": hostile}).status_code == 200, hostile
        assert admin_client.get(URL + "data.json", {"q": hostile}).status_code == 200, hostile
        assert admin_client.get(URL + "fragments/", {"q": hostile}).status_code == 200, hostile


def test_a_task_result_lookup_of_any_odd_id_is_a_404_with_a_clear_message(admin_client):
    """Before: the lookup of "{x}" answered 500 (get_result raised ValueError)."""
    for hostile in HOSTILE:
        if not hostile.strip():
            continue  # an empty id is the empty lookup form
        response = admin_client.get(URL + "task-result/", {"id": hostile})
        assert response.status_code == 404, (hostile, response.status_code)
        assert "No such result" in response.content.decode()
        for backend in (hostile, "default"):
            other = admin_client.get(URL + "task-result/", {"id": "abc", "backend": backend})
            assert other.status_code in (200, 404), (backend, other.status_code)
    assert admin_client.get(URL + "task-result/").status_code == 200  # the form


def test_a_job_name_with_braces_is_refused_clearly_at_registration():
    from django_redcoord.core.periodic import periodic

    with pytest.raises(
        ValueError, match=r"job name 'job\{1\}' contains '\{\}'; allowed characters are"
    ):
        periodic(every=60, name="job{1}")


def test_the_dead_letters_of_messages_naming_odd_result_ids_are_listed(admin_client, redis_client):
    """A dead letter whose body looks like a task's but names a result id with braces (or any
    character our ids never have) is listed as a plain message, not a 500."""
    from django_redcoord.core.queues import Queue

    queue = Queue("odd-results", client=redis_client, prefix="test")
    for odd in ("{x}", "a{b}c", "x y", "\x1b[2J", "é"):
        queue.push({"task": "tests.support.task_defs.add", "result": odd, "args": [], "kwargs": {}})
    consumer = queue.consumer("c")
    messages, _ = consumer.claim(10)
    for message in messages:
        consumer.nack(message, "broken", dead=True)
    response = admin_client.get(URL + "dead-letters/", {"name": "odd-results"})
    assert response.status_code == 200
    assert response.content.decode().count("broken") >= 5


@pytest.mark.parametrize("action", ["run-job", "pause-job"])
def test_run_now_and_pause_of_a_job_the_project_does_not_have_say_so(admin_client, action):
    """Before: a request for a job nobody has was queued and reported done ("request ... queued
    for the leader"); only the leader's log said it had no such job, and dropped it."""
    response = admin_client.post(
        URL + f"action/{action}/", {"name": "no.such.job", "election": "default"}, follow=True
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert "Not done: no periodic job named &#x27;no.such.job&#x27;; registered jobs:" in text


def test_an_unknown_action_is_a_404_not_a_403(admin_client):
    assert admin_client.get(URL + "action/no-such-action/").status_code == 404
