"""Schedule edits from the admin and ``manage.py redcoord schedule``, and under leader failovers.

The admin: a per-job page (GET shows, POST with CSRF acts), permissions
(view-only, ``change_schedule``, a job's own ``edit_permission``), LogEntry,
clear form errors. The fault test: three run_leader processes while the
schedule is edited during SIGKILL/SIGSTOP failovers (tests/support/schedule_faults.py),
with its negative control.
"""

import io
import re
import sys

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import CommandError, call_command
from django.test import Client

from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
from django_redcoord.core.periodic.jobs import unregister
from django_redcoord.core.periodic.scheduler import read_job_states
from django_redcoord.core.periodic.schedules import read_versions

from ..faults.harness import Bench, assert_none
from ..support.redis_servers import RedisServer
from ..support.schedule_faults import RUNS_KEY, scenario, schedule_violations

URL = "/admin/django_redcoord/dashboard/"
PAGE = URL + "schedule/"


def _forget_jobs():
    """Take tests/support/schedule_jobs.py's jobs out of the registry: other modules' tests list
    every
    job."""
    for name in ("sched.tick", "sched.billing"):
        unregister(name)
    sys.modules.pop("tests.support.schedule_jobs", None)


@pytest.fixture(autouse=True)
def _jobs(settings, redis_url):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": "test",
        "JOBS": ["tests.support.schedule_jobs"],
    }
    _forget_jobs()  # each test discovers them afresh, as a new process would
    yield
    _forget_jobs()


def election(redis_client):
    return LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test")


def versions(redis_client, name="sched.tick"):
    return read_versions(election(redis_client), name)


def edit_form(name="sched.tick", version=0, **fields):
    data = {
        "name": name,
        "election": "default",
        "version": version,
        "kind": "every",
        "every": "5",
        "cron": "",
    }
    if name == "sched.tick":
        data["param_v"] = "0"
    else:
        data.update(
            param_batch_size="100", param_dry_run="false", param_ratio="0.5", param_label="eu"
        )
    data.update(fields)
    return data


# --- permissions
# -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_view_only_user_sees_the_schedule_but_cannot_edit_it(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_dashboard"))
    page = client.get(PAGE, {"name": "sched.tick"})
    html = page.content.decode()
    assert page.status_code == 200 and "every 0.5s" in html
    assert (
        "You can see this job's schedule but not edit it: that needs the permission "
        "django_redcoord.change_schedule"
        in html
        and 'id="rc-schedule-form"' not in html
    )
    assert (
        "action/pause-job/?name=sched.tick&amp;election=default" in html
    )  # pausing: the dashboard's action
    assert client.post(PAGE, edit_form()).status_code == 403
    assert not redis_client.exists(election(redis_client).keys.schedule("sched.tick"))
    assert not LogEntry.objects.exists()


@pytest.mark.django_db
def test_staff_without_the_dashboard_permission_gets_403(client, staff):
    client.force_login(staff("change_schedule"))
    assert client.get(PAGE, {"name": "sched.tick"}).status_code == 403
    assert client.post(PAGE, edit_form()).status_code == 403


@pytest.mark.django_db
def test_a_job_naming_its_own_permission_needs_it_too(client, staff, redis_client):
    user = staff("view_dashboard", "change_schedule")
    client.force_login(user)
    html = client.get(PAGE, {"name": "sched.billing"}).content.decode()
    assert "that needs the permission django_redcoord.change_schedule and auth.change_group" in html
    assert client.post(PAGE, edit_form("sched.billing")).status_code == 403
    assert versions(redis_client, "sched.billing").head == 0
    client.force_login(staff("view_dashboard", "change_schedule", "change_group"))
    assert 'id="rc-schedule-form"' in client.get(PAGE, {"name": "sched.billing"}).content.decode()
    done = client.post(
        PAGE, edit_form("sched.billing", param_batch_size="250", param_dry_run="true")
    )
    assert done.status_code == 302
    current = versions(redis_client, "sched.billing").current
    assert (current.every_ms, current.params) == (5000, {"batch_size": 250, "dry_run": True})


@pytest.mark.django_db
def test_a_post_without_the_csrf_token_is_refused(staff, redis_client):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff("view_dashboard", "change_schedule"))
    assert strict.post(PAGE, edit_form()).status_code == 403
    assert versions(redis_client).head == 0


# --- editing
# ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_edit_is_stored_logged_and_shown_in_the_job_list(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_schedule"))
    form = client.get(PAGE, {"name": "sched.tick"}).content.decode()
    assert (
        'id="rc-schedule-form"' in form
        and "csrfmiddlewaretoken" in form
        and "v (an integer; default 0)" in form
    )
    assert versions(redis_client).head == 0  # a GET writes nothing
    done = client.post(PAGE, edit_form(every="2.5", param_v="7"))
    assert done.status_code == 302 and done["Location"].startswith(PAGE + "?name=sched.tick")
    current = versions(redis_client).current
    assert (current.version, current.every_ms, current.params, current.by) == (
        1,
        2500,
        {"v": 7},
        current.by,
    )
    assert current.by.startswith("staff")
    entry = LogEntry.objects.latest("action_time")
    assert entry.change_message.startswith(
        "Edited the schedule of periodic job sched.tick of election default: "
        "every 2.5s with arguments v=7; version 1, in force from "
    )
    page = client.get(PAGE, {"name": "sched.tick"}).content.decode()
    assert "every 2.5s, v=7" in page and 'value="2.5"' in page
    dashboard = client.get(URL).content.decode()
    assert (
        "edited: every 2.5s, v=7" in dashboard
        and "schedule/?name=sched.tick&amp;election=default" in dashboard
    )
    assert (
        read_job_states(election(redis_client))["sched.tick"]["schedule_edit"] == "every 2.5s, v=7"
    )


@pytest.mark.django_db
def test_the_form_shows_an_edited_interval_exactly_so_saving_arguments_keeps_it(
    client, staff, redis_client
):
    # The form showed every_ms / 1000 with :g (6 significant digits): an edit of every 12345.678 s
    # came
    # back as 12345.7, and saving only a changed argument silently changed the interval too.
    client.force_login(staff("view_dashboard", "change_schedule"))
    assert client.post(PAGE, edit_form(every="12345.678")).status_code == 302
    page = client.get(PAGE, {"name": "sched.tick"}).content.decode()
    assert 'value="12345.678"' in page
    assert (
        client.post(PAGE, edit_form(version=1, every="12345.678", param_v="3")).status_code == 302
    )
    assert versions(redis_client).current.every_ms == 12_345_678


@pytest.mark.django_db
def test_cron_and_arguments_only(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_schedule", "change_group"))
    assert (
        client.post(PAGE, edit_form("sched.billing", kind="cron", cron="*/5 * * * *")).status_code
        == 302
    )
    assert versions(redis_client, "sched.billing").current.cron == "*/5 * * * *"
    assert (
        client.post(
            PAGE,
            edit_form("sched.billing", version=1, kind="code", param_label="us", param_ratio="2"),
        ).status_code
        == 302
    )
    current = versions(redis_client, "sched.billing").current
    assert (current.every_ms, current.cron, current.params) == (
        None,
        None,
        {"label": "us", "ratio": 2.0},
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"every": "0.01"}, "every must be at least 0.1 seconds, not 0.01"),
        (
            {"every": "soon"},
            "every must be a number of seconds (at least 0.1), not &#x27;soon&#x27;",
        ),
        (
            {"every": "1e30"},
            "every must be at most 3.456e+07 seconds (400 days; use cron= for a yearly job)",
        ),
        ({"every": "nan"}, "every must be a number of seconds or a timedelta, not nan"),
        (
            {"kind": "cron", "cron": "every monday"},
            "is not a valid crontab expression: use five fields",
        ),
        ({"kind": "cron", "cron": "0 0 31 2 *"}, "never matches a date"),
        (
            {"param_v": "seven"},
            "argument v of job &#x27;sched.tick&#x27; must be an integer (its default is 0), "
            "not &#x27;seven&#x27;",
        ),
        ({"kind": "hourly"}, "Select a valid choice"),
        # (a field's own error alone, not a second one about an empty value; a hidden field's error
        # shown)
        ({"kind": "cron", "cron": "x" * 201}, "at most 200 characters (it has 201).</li></ul>"),
        ({"version": "-1"}, "version field is missing or not an integer &gt;= 0: reload the page"),
    ],
)
def test_a_bad_schedule_or_argument_gives_a_clear_form_error_and_stores_nothing(
    client, staff, redis_client, fields, message
):
    client.force_login(staff("view_dashboard", "change_schedule"))
    response = client.post(PAGE, edit_form(**fields))
    assert response.status_code == 400 and message in response.content.decode()
    assert versions(redis_client).head == 0 and not LogEntry.objects.exists()


@pytest.mark.django_db
def test_an_edit_made_from_a_stale_page_is_refused(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_schedule"))
    assert client.post(PAGE, edit_form(every="3")).status_code == 302
    response = client.post(PAGE, edit_form(every="4"))  # the form still says version 0
    assert response.status_code == 400
    assert (
        "was edited since version 0 (it is at version 1 now): reload and edit again"
        in response.content.decode()
    )
    assert versions(redis_client).current.every_ms == 3000


@pytest.mark.django_db
@pytest.mark.parametrize("version", ["abc", "١٢", "9" * 5000, "-1"])
def test_a_revert_with_a_garbled_version_says_what_is_allowed(client, staff, redis_client, version):
    # (it said "invalid literal for int() with base 10: 'abc'"; Arabic-Indic digits passed, and
    # 5000 digits got Python's limit on int() text)
    client.force_login(staff("view_dashboard", "change_schedule"))
    response = client.post(
        PAGE,
        {"name": "sched.tick", "election": "default", "revert": "1", "version": version},
        follow=True,
    )
    assert (
        "this page&#x27;s version field must be a whole number of at most 19 digits (0-9), not "
        in response.content.decode()
    )
    assert versions(redis_client).head == 0


@pytest.mark.django_db
def test_revert_goes_back_to_the_code_schedule_and_is_logged(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_schedule"))
    client.post(PAGE, edit_form(every="3", param_v="2"))
    assert 'id="rc-revert"' in client.get(PAGE, {"name": "sched.tick"}).content.decode()
    done = client.post(PAGE, {**edit_form(version=1), "revert": "Revert"})
    assert done.status_code == 302
    current = versions(redis_client).current
    assert current.version == 2 and current.revert and not current.edited
    assert LogEntry.objects.latest("action_time").change_message.startswith(
        "Reverted periodic job sched.tick of election default to its code-declared schedule "
        "(every 0.5s)"
    )
    assert "schedule_edit" not in read_job_states(election(redis_client))["sched.tick"]
    assert "edited:" not in client.get(URL).content.decode()


@pytest.mark.django_db
def test_an_unknown_job_is_not_editable(client, staff, redis_client):
    client.force_login(staff("view_dashboard", "change_schedule"))
    response = client.get(PAGE, {"name": "not.registered"}, follow=True)
    assert (
        "No periodic job named &#x27;not.registered&#x27; is registered in this process"
        in response.content.decode()
    )
    assert client.post(PAGE, edit_form("not.registered")).status_code == 302
    assert not redis_client.exists(election(redis_client).keys.schedule("not.registered"))


# --- manage.py redcoord schedule
# --------------------------------------------------------------------


def redcoord(*args):
    out = io.StringIO()
    call_command("redcoord", "schedule", *args, stdout=out)
    return out.getvalue()


def test_the_command_edits_shows_and_reverts(redis_client):
    out = redcoord(
        "sched.billing", "--every", "30", "--param", "batch_size=20", "--param", "dry_run=yes"
    )
    assert out.startswith(
        "job sched.billing: version 1: every 30s, batch_size=20, dry_run=true, in force from "
    )
    assert "arguments it declares: batch_size=100, dry_run=False, ratio=0.5, label='eu'" in out
    assert re.search(r"^  1 +every 30s, batch_size=20, dry_run=true +\d{4}-", out, re.M), out
    assert versions(redis_client, "sched.billing").current.params == {
        "batch_size": 20,
        "dry_run": True,
    }
    out = redcoord("sched.billing", "--revert")
    assert out.startswith("job sched.billing: version 2: back to the code's schedule (every 3600s)")
    assert versions(redis_client, "sched.billing").current.revert
    assert re.search(r"^  0 +the code's +- +-$", redcoord("sched.billing"), re.M)


def test_each_command_edit_keeps_what_it_does_not_name(redis_client):
    # --param alone put the job back on the code's schedule, and --every/--cron dropped the
    # arguments set before (each edit replaced the whole version)
    redcoord("sched.billing", "--every", "10")
    out = redcoord("sched.billing", "--param", "batch_size=100")
    assert out.startswith("job sched.billing: version 2: every 10s, batch_size=100, in force")
    out = redcoord("sched.billing", "--cron", "*/10 * * * *")
    assert out.startswith(
        "job sched.billing: version 3: cron */10 * * * * (Europe/Paris), batch_size=100, in force"
    ), out
    current = versions(redis_client, "sched.billing").current
    assert (current.cron, current.every_ms, current.params) == (
        "*/10 * * * *",
        None,
        {"batch_size": 100},
    )
    redcoord("sched.billing", "--revert")
    out = redcoord("sched.billing", "--param", "dry_run=yes")  # after a revert: the code's
    assert out.startswith("job sched.billing: version 5: dry_run=true, in force"), out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["nope", "--every", "5"],
            "no periodic job named 'nope'; registered jobs: .*sched.billing",
        ),
        (["sched.billing", "--every", "0.01"], "every must be at least 0.1 seconds"),
        (
            ["sched.billing", "--every", "1e30"],
            r"every must be at most 3.456e\+07 seconds \(400 days",
        ),
        (["sched.billing", "--cron", "* *"], "is not a valid crontab expression"),
        (["sched.billing", "--every", "5", "--cron", "* * * * *"], "give at most one of every="),
        (["sched.billing", "--param", "batch_size"], "--param takes NAME=VALUE, not 'batch_size'"),
        (
            ["sched.billing", "--param", "size=3"],
            "has no argument 'size' an edit may set; it has batch_size, dry_run",
        ),
        (
            ["sched.billing", "--param", "ratio=x"],
            r"argument ratio of job 'sched.billing' must be a number",
        ),
        (["sched.billing", "--revert", "--every", "5"], "--revert cannot be combined with --every"),
        (
            ["sched.billing", "--param", "batch_size=5", "--param", "batch_size=6"],
            "--param batch_size is given twice",
        ),
    ],
)
def test_the_command_refuses_bad_input_saying_what_is_allowed(args, message, redis_client):
    with pytest.raises(CommandError, match=message):
        redcoord(*args)
    assert versions(redis_client, "sched.billing").head == 0


# --- under faults: real run_leader processes, SIGKILL and SIGSTOP, edits during the failovers
# --------


@pytest.fixture
def bench(tmp_path):
    sut, oracle_server = RedisServer().start(), RedisServer().start()
    made = Bench(sut, oracle_server, tmp_path)
    try:
        yield made
    finally:
        made.cleanup()
        sut.cleanup()
        oracle_server.cleanup()


def test_edits_during_failovers_run_each_slot_once_and_lose_none(bench):
    edits, kills, runs = scenario(bench, RUNS_KEY, rounds=4)
    assert len(edits) == 12 and kills == 2
    assert_none(schedule_violations(runs, edits, kills=kills), "schedule edits under failovers")
    assert_none(bench.stop_all(), "SIGTERM")


def test_the_checker_catches_a_leader_applying_edits_without_the_version_window(bench):
    # SIGSTOP rounds only: two edits land before the next leader takes over, and no SIGKILL
    # excuses a lost slot (the unsafe leader runs the newest schedule over the older windows).
    edits, kills, runs = scenario(bench, RUNS_KEY, rounds=2, unsafe=True, kill=False)
    assert kills == 0
    found = schedule_violations(runs, edits, kills=kills)
    assert any("never ran" in v for v in found), (
        f"the checker missed slots lost to the unsafe leader: {found}"
    )
    assert any("is not a slot of version" in v for v in found), (
        f"the checker missed off-schedule runs: {found}"
    )
