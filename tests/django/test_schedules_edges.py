"""Edge cases of schedule edits: the admin page and ``manage.py redcoord schedule``.

Against the test's real Redis (tests/conftest.py), with the jobs of
tests/support/schedule_jobs.py and one job of this module whose name holds every
character a job name may. The regressions: a POST from a user without
``change_schedule`` that was redirected (302) instead of refused (403) when
the job name was unknown or invalid, and command-line usage errors that exited
1 under ``call_command`` (argparse's) or for an unknown job.
"""

from __future__ import annotations

import io
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import CommandError, call_command

from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
from django_redcoord.core.periodic.jobs import periodic, unregister
from django_redcoord.core.periodic.scheduler import read_job_states
from django_redcoord.core.periodic.schedules import read_versions

PAGE = "/admin/django_redcoord/dashboard/schedule/"
#: letters, digits and every punctuation mark a job name may hold
ODD = "red_A-z.0:1/2@3=4+5,6#7~8|9"


def odd_job(size: int = 10, label: str = "a&b <c>"):
    pass


def _forget():
    for name in ("sched.tick", "sched.billing", ODD):
        unregister(name)
    sys.modules.pop("tests.support.schedule_jobs", None)


@pytest.fixture(autouse=True)
def _jobs(settings, redis_url):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": "test",
        "JOBS": ["tests.support.schedule_jobs"],
    }
    _forget()
    periodic(every=3600, name=ODD)(odd_job)
    yield
    _forget()


def versions(redis_client, name):
    return read_versions(LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test"), name)


def redcoord(*args):
    out = io.StringIO()
    call_command("redcoord", "schedule", *args, stdout=out)
    return out.getvalue()


# --- permissions -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["not.registered", "bad name", "", ODD])
def test_a_post_without_change_schedule_is_403_whatever_the_job_named(
    client, staff, redis_client, name
):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    response = client.post(
        PAGE,
        {
            "name": name,
            "election": "default",
            "version": "0",
            "kind": "every",
            "every": "5",
            "param_size": "10",
            "param_label": "x",
        },
    )
    assert response.status_code == 403
    assert versions(redis_client, ODD).head == 0 and not LogEntry.objects.exists()


# --- every allowed character in a job name ----------------------------------------------------


@pytest.mark.django_db
def test_a_job_name_with_every_allowed_character_is_shown_edited_logged_and_reverted(
    client, staff, redis_client
):
    client.force_login(staff("view_dashboard", "change_schedule"))
    page = client.get(PAGE, {"name": ODD})
    html = page.content.decode()
    assert page.status_code == 200 and 'id="rc-schedule-form"' in html
    assert 'name="name" value="red_A-z.0:1/2@3=4+5,6#7~8|9"' in html
    assert 'value="a&amp;b &lt;c&gt;"' in html  # a str default, escaped in its field

    done = client.post(
        PAGE,
        {
            "name": ODD,
            "election": "default",
            "version": "0",
            "kind": "every",
            "every": "7.5",
            "param_size": "3",
            "param_label": "x<y>",
        },
    )
    assert done.status_code == 302, done.content.decode()[:2000]
    back = urlsplit(done["Location"])
    assert back.path == PAGE and parse_qs(back.query) == {"name": [ODD], "election": ["default"]}
    current = versions(redis_client, ODD).current
    assert (current.every_ms, current.params) == (7500, {"size": 3, "label": "x<y>"})
    assert (
        f"periodic job {ODD} of election default: every 7.5s"
        in LogEntry.objects.latest("action_time").change_message
    )
    state = read_job_states(
        LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test"), also=[ODD]
    )[ODD]
    assert state["schedule_edit"] == 'every 7.5s, label="x<y>", size=3'
    shown = client.get(done["Location"]).content.decode()
    assert "every 7.5s, label=&quot;x&lt;y&gt;&quot;, size=3" in shown

    reverted = client.post(
        PAGE, {"name": ODD, "election": "default", "version": "1", "revert": "Revert"}
    )
    assert reverted.status_code == 302
    assert versions(redis_client, ODD).current.revert


# --- the command: usage errors exit 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["sched.billing", "--every", "soon"],
            "--every must be a number of seconds (such as 30 or 2.5), not 'soon'",
        ),
        (["sched.billing", "--every", "0"], "every must be > 0 seconds"),
        (["nope", "--every", "5"], "no periodic job named 'nope'; registered jobs: "),
        (
            ["sched.billing", "--param", "batch_size=1.5"],
            "must be an integer (its default is 100), not '1.5'",
        ),
        (
            ["sched.billing", "--param", "dry_run=maybe"],
            "must be true or false (its default is False), not 'maybe'",
        ),
        (
            ["sched.billing", "--param", "ratio=inf"],
            "must be a number (its default is 0.5), not inf",
        ),
    ],
)
def test_the_command_exits_2_on_bad_input_and_changes_nothing(args, message, redis_client):
    with pytest.raises(CommandError) as raised:
        redcoord(*args)
    assert raised.value.returncode == 2 and message in str(raised.value), str(raised.value)
    assert versions(redis_client, "sched.billing").head == 0


def test_the_command_edits_a_job_whose_name_holds_every_allowed_character(redis_client):
    out = redcoord(ODD, "--every", "2.5", "--param", "label=a|b")
    assert out.startswith(f'job {ODD}: version 1: every 2.5s, label="a|b", in force from ')
    assert versions(redis_client, ODD).current.params == {"label": "a|b"}


# --- text UTF-8 cannot encode ------------------------------------------------------------------


def test_an_argument_with_an_unpaired_surrogate_is_refused_saying_why(redis_client):
    # A byte the terminal's encoding cannot decode reaches argv as "\udcff": it was stored, the job
    # got
    # a str its own writes choke on, and the admin's schedule page of the job answered 500.
    with pytest.raises(CommandError) as raised:
        redcoord(ODD, "--param", "label=caf\udcff")
    assert raised.value.returncode == 2
    assert (
        "argument label of job 'red_A-z.0:1/2@3=4+5,6#7~8|9' must be text UTF-8 can encode; it "
        "holds '\\udcff' at position 3" in str(raised.value)
    )
    from django_redcoord.core.periodic.jobs import get_jobs
    from django_redcoord.core.periodic.schedules import edit_schedule

    election = LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test")
    with pytest.raises(ValueError, match="must be text UTF-8 can encode"):
        edit_schedule(election, get_jobs()[ODD], params={"label": "\ud800"})
    with pytest.raises(ValueError, match="by must be text UTF-8 can encode"):
        edit_schedule(election, get_jobs()[ODD], every=5, by="ops\udc80")
    assert versions(redis_client, ODD).head == 0
    assert redcoord(ODD, "--param", "label=café ✓").startswith(
        f"job {ODD}: version 1: label="
    )  # (control)
    assert versions(redis_client, ODD).current.params == {"label": "café ✓"}


@pytest.mark.django_db
def test_the_page_shows_a_stored_surrogate_escaped_instead_of_failing(client, staff, redis_client):
    # (written by an older version, or by hand: the page rendered it raw and answered 500)
    key = LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test").keys.schedule(ODD)
    spec = (
        '{"by":"ops\\udc80","cron":null,"every_ms":null,'
        '"params":{"label":"caf\\udcff"},"revert":false}'
    )
    redis_client.hset(
        key, mapping={"version": 1, "first": 0, "spec:1": spec, "since:1": 1_700_000_000_000}
    )
    client.force_login(staff("view_dashboard", "change_schedule"))
    page = client.get(PAGE, {"name": ODD})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'value="caf\\udcff"' in html and "ops\\udc80" in html


# --- Redis not answering the edit ---------------------------------------------------------------


@pytest.mark.django_db
def test_an_edit_redis_did_not_answer_says_its_outcome_is_unknown_and_is_in_the_history(
    client, staff, redis_client, settings, redis_url
):
    # A timeout after the script was sent (a failover, a stalled server) said "Not done", though
    # Redis
    # may have stored the edit, and the history had no trace of it.
    settings.REDCOORD = {**settings.REDCOORD, "SOCKET_TIMEOUT": 0.5}
    client.force_login(staff("view_dashboard", "change_schedule"))
    assert client.get(PAGE, {"name": ODD}).status_code == 200
    redis_client.execute_command(
        "CLIENT", "PAUSE", 8000, "WRITE"
    )  # reads answer, the edit script waits
    try:
        response = client.post(
            PAGE,
            {
                "name": ODD,
                "election": "default",
                "version": "0",
                "kind": "every",
                "every": "9",
                "param_size": "10",
                "param_label": "x",
            },
        )
    finally:
        redis_client.execute_command("CLIENT", "UNPAUSE")
    html = response.content.decode()
    assert response.status_code == 503, html[:3000]
    assert "Unknown whether it was stored: Redis at " in html and "timed out" in html
    assert "Not done" not in html
    entry = LogEntry.objects.latest("action_time")
    assert entry.change_message.startswith(
        f"Tried to edit the schedule (every 9s with arguments label='x') of "
        f"periodic job {ODD} of election default; unknown whether Redis "
        "stored it (CoordinationUnavailable: Redis at "
    )
    assert "timed out during edit the schedule of job" in entry.change_message


def test_the_command_says_when_the_outcome_of_an_edit_is_unknown(redis_client, settings):
    settings.REDCOORD = {**settings.REDCOORD, "SOCKET_TIMEOUT": 0.5}
    redis_client.execute_command("CLIENT", "PAUSE", 8000, "WRITE")
    try:
        with pytest.raises(CommandError) as raised:
            redcoord(ODD, "--every", "9")
    finally:
        redis_client.execute_command("CLIENT", "UNPAUSE")
    assert raised.value.returncode == 1
    assert "timed out during edit the schedule of job" in str(raised.value)
    assert str(raised.value).endswith(
        f"; unknown whether Redis stored the edit: `manage.py redcoord schedule {ODD}` "
        "lists the versions kept"
    )


def test_the_command_does_not_call_an_edit_unknown_when_only_its_read_failed(settings):
    """Redis down: the read before the edit fails, nothing was sent to store it (before, the
    message said it was unknown whether Redis stored the edit)."""
    from ..support.redis_servers import free_port

    settings.REDCOORD = {**settings.REDCOORD, "URL": f"redis://127.0.0.1:{free_port()}/0"}
    with pytest.raises(CommandError) as raised:
        redcoord(ODD, "--every", "9")
    assert raised.value.returncode == 1
    assert "unknown whether" not in str(raised.value)
    assert "could not be reached" in str(raised.value)


@pytest.mark.django_db
def test_an_edit_without_the_csrf_token_is_refused_even_without_the_csrf_middleware(
    staff, redis_client, settings
):
    from django.test import Client

    settings.MIDDLEWARE = [
        m for m in settings.MIDDLEWARE if m != "django.middleware.csrf.CsrfViewMiddleware"
    ]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff("view_dashboard", "change_schedule"))
    form = {
        "name": ODD,
        "election": "default",
        "version": "0",
        "kind": "every",
        "every": "5",
        "param_size": "10",
        "param_label": "x",
    }
    assert strict.post(PAGE, form).status_code == 403
    assert versions(redis_client, ODD).head == 0
    page = strict.get(PAGE, {"name": ODD})  # (the form's token, then the same POST with it: stored)
    token = page.cookies["csrftoken"].value
    assert strict.post(PAGE, {**form, "csrfmiddlewaretoken": token}).status_code == 302
    assert versions(redis_client, ODD).head == 1
