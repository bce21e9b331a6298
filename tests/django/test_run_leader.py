"""manage.py run_leader in this process: --list, --run, bad options, and a SIGTERM-ed serve loop."""

import io
import json
import os
import signal
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from itertools import pairwise

import pytest
from django.core.management import CommandError, call_command

from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
from django_redcoord.core.periodic.jobs import get_jobs, periodic, unregister
from django_redcoord.core.periodic.scheduler import Scheduler, read_job_states

from ..support.leader_jobs import SLOTS_KEY

FAST = ["--lease", "1.5", "--renew-deadline", "1", "--retry-period", "0.25"]


@pytest.fixture(autouse=True)
def _jobs(settings, redis_url):
    settings.REDCOORD = {
        "URL": redis_url,
        "KEY_PREFIX": "test",
        "JOBS": ["tests.support.leader_jobs"],
        "LEADER_SHUTDOWN_TIMEOUT": 5,
    }
    # Each test discovers the jobs afresh, as a new process would.
    for name in ("tick", "demo.heartbeat", "demo.market_report"):
        unregister(name)
    for module in ("tests.support.leader_jobs", "testproject.demo.jobs"):
        sys.modules.pop(module, None)


def run(*args):
    out = io.StringIO()
    call_command("run_leader", *args, stdout=out)
    return out.getvalue()


def election(redis_client, identity="other"):
    return LeaderElection(
        DEFAULT_ELECTION,
        lease=30,
        renew_deadline=20,
        retry_period=1,
        identity=identity,
        client=redis_client,
        prefix="test",
    )


def test_serve_runs_jobs_as_leader_and_resigns_on_sigterm(redis_client):
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGTERM))
    before = signal.getsignal(signal.SIGTERM)
    timer.start()
    started = time.monotonic()
    try:
        run("--identity", "in-test", *FAST)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 4.0
    assert signal.getsignal(signal.SIGTERM) is before
    assert redis_client.exists(election(redis_client).keys.record) == 0  # resigned
    entries = [json.loads(e) for e in redis_client.lrange(SLOTS_KEY, 0, -1)]
    assert len(entries) >= 2 and {e["pid"] for e in entries} == {os.getpid()}
    assert len({e["term"] for e in entries}) == 1 and all(
        e["term"] > 0 and e["leader"] for e in entries
    )
    slots = [e["slot"] for e in entries]
    assert slots == sorted(set(slots)) and all(b - a == 500 for a, b in pairwise(slots))


def test_list_shows_the_leader_and_every_job(redis_client):
    other = election(redis_client, "box-1:123")
    assert other.campaign()
    out = run("--list")
    lines = out.splitlines()
    assert lines[0].startswith(f"leader: box-1:123 (term {other.term}, since ")
    assert lines[1].split() == [
        "JOB",
        "SCHEDULE",
        "MISFIRE",
        "NEXT",
        "DUE",
        "LAST",
        "SLOT",
        "OUTCOME",
        "RUNS",
        "RUNNING",
    ]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert set(rows) == {"demo.heartbeat", "demo.market_report", "tick"}
    assert "every 0.5s" in rows["tick"] and "catchup" in rows["tick"]
    assert "cron */1 * * * * (Europe/Paris)" in rows["demo.market_report"]


def test_run_runs_one_job_now_when_nobody_leads(redis_client):
    out = run("--run", "tick", *FAST)
    (entry,) = [json.loads(e) for e in redis_client.lrange(SLOTS_KEY, 0, -1)]
    assert out.startswith("job tick: ok in ") and out.strip().endswith(f"(term {entry['term']})")
    assert entry["slot"] is None and entry["term"] > 0
    assert redis_client.exists(election(redis_client).keys.record) == 0  # resigned afterwards
    listed = run("--list")
    assert "leader: none" in listed
    tick_row = next(line for line in listed.splitlines() if line.startswith("tick "))
    assert " ok " in tick_row and tick_row.split()[-2:] == ["1", "-"]


def test_list_and_slot_follow_a_schedule_edit(redis_client):
    # --list showed the code's schedule after an edit, and --slot refused the edited schedule's
    # slots (only the code's were accepted)
    from django_redcoord import discovery
    from django_redcoord.core import edit_schedule

    edit_schedule(election(redis_client), discovery.autodiscover()["tick"], every=0.7)
    row = next(line for line in run("--list").splitlines() if line.startswith("tick "))
    assert "every 0.7s" in row, row
    edited_at = time.time() * 1000
    deadline = time.monotonic() + 10
    while True:  # a past slot of the edited schedule, after the edit, not one of the code's
        slot = (int(time.time() * 1000) // 700 - 1) * 700
        if slot > edited_at and slot % 500:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    out = run("--run", "tick", "--slot", str(slot), *FAST)
    assert out.startswith("job tick: ok in ")


def test_run_refuses_while_another_process_leads(redis_client):
    other = election(redis_client, "box-2:9")
    assert other.campaign()
    with pytest.raises(
        CommandError, match=rf"cannot run 'tick': box-2:9 leads \(term {other.term}\)"
    ):
        run("--run", "tick", *FAST)
    assert redis_client.llen(SLOTS_KEY) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--run", "nope"],
            "no periodic job named 'nope'; registered jobs: demo.heartbeat, demo.market_report, "
            "tick",
        ),
        (["--list", "--run", "tick"], "--list and --run cannot be combined"),
        (
            ["--lease", "1", "--renew-deadline", "2"],
            r"bad leader timing or identity: lease \(1 s\) must be longer",
        ),
        (
            ["--retry-period", "9"],
            r"renew_deadline \(10 s\) must be longer than 1.2 × retry_period",
        ),
        (["--identity", " "], "--identity must not be empty"),
        (["--lease", "nan"], "argument --lease: 'nan' is not a finite number of seconds"),
        (
            ["--request", "tick", "--expires", "inf"],
            "argument --expires: 'inf' is not a finite number of seconds",
        ),
        (["--retry-period", "soon"], "argument --retry-period: 'soon' is not a number"),
        # a traceback (TypeError, OSError, OverflowError) before
        (["--request", "tick", "--slot", "1960-01-01T00:00Z"], "is out of range: give a time"),
        (["--request", "tick", "--slot", "99999999999999999999"], "is out of range"),
        (["--run", "tick", "--slot", "1960-01-01T00:00Z"], "is out of range"),
        # an empty JOB (a script's unset variable) started a whole leader before
        (["--run", ""], "no periodic job named ''"),
        (["--request", ""], "no periodic job named ''"),
        (["--pause", ""], "no periodic job named ''"),
        (["--resume", ""], "no periodic job named ''"),
        (["--run", "", "--request", "tick"], "--run and --request cannot be combined"),
        (["--slot", "1", "--run", ""], "no periodic job named ''"),
    ],
)
def test_bad_options_raise_command_error(args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def failing_job():
    raise ValueError("no rates today")


def test_a_failing_job_run_by_hand_raises_command_error(redis_client):
    periodic(every=60, name="fails")(failing_job)
    try:
        with pytest.raises(CommandError, match="job 'fails' failed: ValueError: no rates today"):
            run("--run", "fails", *FAST)
    finally:
        unregister("fails")
    st = read_job_states(election(redis_client), also=["fails"])["fails"]
    assert st["outcome"] == "error" and st["failures"] == 1


def slow_job():
    time.sleep(0.6)


def test_a_job_run_by_hand_past_its_timeout_is_reported_timeout(redis_client):
    # --run waited for the job and printed "ok": its timeout was never checked
    periodic(every=60, name="slow", timeout=0.2)(slow_job)
    try:
        with pytest.raises(CommandError, match="job 'slow' failed: timed out after 0.2 s"):
            run("--run", "slow", *FAST)
    finally:
        unregister("slow")
    assert read_job_states(election(redis_client), also=["slow"])["slow"]["outcome"] == "timeout"


def test_an_unreachable_redis_raises_command_error_naming_it(settings):
    settings.REDCOORD = {**settings.REDCOORD, "URL": "redis://127.0.0.1:1/0"}
    with pytest.raises(
        CommandError, match=r"Redis at redis://127.0.0.1:1/0 could not be reached during campaign"
    ):
        run("--run", "tick", *FAST)


# --- operating jobs without stopping leaders: --slot, --request, --pause/--resume -----------------


def past_slot(seconds_ago=5.0, every_ms=500):
    return (int((time.time() - seconds_ago) * 1000) // every_ms) * every_ms


def test_run_with_a_slot_redoes_that_slot_and_the_job_sees_it(redis_client):
    slot = past_slot()
    iso = datetime.fromtimestamp(slot / 1000, timezone(timedelta(hours=2))).isoformat(
        timespec="milliseconds"
    )
    out = run("--run", "tick", "--slot", iso, *FAST)
    run("--run", "tick", "--slot", str(slot - 500), *FAST)  # epoch ms
    first, second = [json.loads(e) for e in redis_client.lrange(SLOTS_KEY, 0, -1)]
    assert (first["slot"], second["slot"]) == (slot, slot - 500)
    assert out.startswith("job tick: ok in ") and f"(term {first['term']}, slot " in out
    assert (
        "last_slot" not in read_job_states(election(redis_client), also=["tick"])["tick"]
    )  # schedule untouched


def test_request_queues_a_run_that_the_current_leader_runs_once_with_its_slot(redis_client):
    other = election(redis_client, "box-3:7")
    assert other.campaign()
    slot = past_slot()
    out = run("--request", "tick", "--slot", str(slot))
    assert "is queued; box-3:7 (term" in out and out.startswith("request ")
    request_id = out.split()[1].rstrip(":")
    assert "pending run requests (1):" in run("--list")
    scheduler = Scheduler(other, [get_jobs()["tick"]], request_interval=0)
    now = (
        time.time()
    )  # one instant: ticks straddling a 0.5 s slot boundary would run a scheduled slot too
    for _ in range(3):
        scheduler.tick(now)
        assert not scheduler.wait_idle(5)
    (entry,) = [json.loads(e) for e in redis_client.lrange(SLOTS_KEY, 0, -1)]
    assert (entry["slot"], entry["term"], entry["pid"]) == (slot, other.term, os.getpid())
    st = read_job_states(other, also=["tick"])["tick"]
    assert st["last_request"] == request_id and st["outcome"] == "ok" and st["runs"] == 1
    assert "pending run requests" not in run("--list")


def test_run_while_another_leads_points_to_request(redis_client):
    other = election(redis_client, "box-4:1")
    assert other.campaign()
    with pytest.raises(CommandError, match="use --request tick to have the leader run it"):
        run("--run", "tick", *FAST)


def test_pause_and_resume_show_in_the_list_and_the_state(redis_client):
    assert run("--pause", "tick").startswith("job tick: paused; its slots are skipped until")
    assert run("--pause", "tick").strip() == "job tick: already paused"
    row = next(line for line in run("--list").splitlines() if line.startswith("tick "))
    assert row.split()[:5] == ["tick", "every", "0.5s", "catchup", "paused"]
    assert isinstance(read_job_states(election(redis_client), also=["tick"])["tick"]["paused"], int)
    assert run("--resume", "tick").startswith("job tick: resumed")
    assert run("--resume", "tick").strip() == "job tick: was not paused"
    row = next(line for line in run("--list").splitlines() if line.startswith("tick "))
    assert "paused" not in row


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--run", "tick", "--slot", "yesterday"],
            r"--slot 'yesterday' is not a time: give ISO 8601 with an offset",
        ),
        (
            ["--run", "tick", "--slot", "2024-01-01T00:00:00"],
            r"--slot '2024-01-01T00:00:00' has no UTC offset",
        ),
        (
            ["--request", "tick", "--slot", "2024-01-01T00:00:00.200Z"],
            r"is not a slot of job 'tick' \(every 0.5s\)",
        ),
        (
            ["--run", "tick", "--slot", "99999999999999"],
            "is in the future: only past slots can be redone",
        ),
        (["--request", "nope"], "no periodic job named 'nope'; registered jobs: demo.heartbeat"),
        (["--pause", "nope"], "no periodic job named 'nope'"),
        (["--resume", "nope"], "no periodic job named 'nope'"),
        (["--slot", "1"], "--slot goes with --run JOB or --request JOB"),
        (["--run", "tick", "--expires", "5"], "--expires goes with --request JOB"),
        (["--run", "tick", "--request", "tick"], "--run and --request cannot be combined"),
        (["--pause", "tick", "--resume", "tick"], "--pause and --resume cannot be combined"),
        (["--request", "tick", "--expires", "0"], "expires must be > 0 seconds"),
    ],
)
def test_bad_run_now_options_raise_command_error(args, message, redis_client):
    with pytest.raises(CommandError, match=message) as caught:
        run(*args)
    assert caught.value.returncode == 2  # a usage error, as argparse's own (1: the rest)
    assert redis_client.llen(SLOTS_KEY) == 0
    assert redis_client.exists(election(redis_client).keys.requests) == 0


def test_run_once_records_an_outcome_redis_did_not_take_before_it_exits(
    settings, redis_url, redis_client, tmp_path, monkeypatch
):
    """--run has no later tick to write the outcome again: it tries for a few seconds itself
    (it used to exit, and --list showed the run as running until the job's next run)."""
    (tmp_path / "pausing_jobs.py").write_text(
        "import redis\n"
        "from django_redcoord.core.periodic.jobs import periodic\n"
        "@periodic(every=3600, name='pausing')\n"
        "def pausing():\n"
        f"    admin = redis.Redis.from_url({redis_url!r})\n"
        "    admin.execute_command('CLIENT', 'PAUSE', 1500, 'WRITE')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    unregister("pausing")
    sys.modules.pop("pausing_jobs", None)
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["pausing_jobs"], "SOCKET_TIMEOUT": 0.5}
    try:
        run("--run", "pausing")
    except CommandError:
        pass  # (resigning may meet the pause too: the outcome is what this is about)
    finally:
        unregister("pausing")
    state = read_job_states(election(redis_client))["pausing"]
    assert state.get("outcome") == "ok" and not state.get("running"), state
