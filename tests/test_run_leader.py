"""manage.py run_leader in this process: --list, --run, bad options, and a SIGTERM-ed serve loop."""

import io
import json
import os
import signal
import sys
import threading
import time
from itertools import pairwise

import pytest
from django.core.management import CommandError, call_command

from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
from django_redcoord.core.periodic.jobs import periodic, unregister
from django_redcoord.core.periodic.scheduler import read_job_states

from .leader_jobs import SLOTS_KEY

FAST = ["--lease", "1.5", "--renew-deadline", "1", "--retry-period", "0.25"]


@pytest.fixture(autouse=True)
def _jobs(settings, redis_url):
    settings.REDCOORD = {"URL": redis_url, "KEY_PREFIX": "test", "JOBS": ["tests.leader_jobs"],
                         "LEADER_SHUTDOWN_TIMEOUT": 5}  # fmt: skip
    # Each test discovers the jobs afresh, as a new process would.
    for name in ("tick", "demo.heartbeat", "demo.market_report"):
        unregister(name)
    for module in ("tests.leader_jobs", "testproject.demo.jobs"):
        sys.modules.pop(module, None)


def run(*args):
    out = io.StringIO()
    call_command("run_leader", *args, stdout=out)
    return out.getvalue()


def election(redis_client, identity="other"):
    return LeaderElection(DEFAULT_ELECTION, lease=30, renew_deadline=20, retry_period=1, identity=identity,
                          client=redis_client, prefix="test")  # fmt: skip


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
    assert len({e["term"] for e in entries}) == 1 and all(e["term"] > 0 and e["leader"] for e in entries)
    slots = [e["slot"] for e in entries]
    assert slots == sorted(set(slots)) and all(b - a == 500 for a, b in pairwise(slots))


def test_list_shows_the_leader_and_every_job(redis_client):
    other = election(redis_client, "box-1:123")
    assert other.campaign()
    out = run("--list")
    lines = out.splitlines()
    assert lines[0].startswith(f"leader: box-1:123 (term {other.term}, since ")
    assert lines[1].split() == ["JOB", "SCHEDULE", "MISFIRE", "NEXT", "DUE", "LAST", "SLOT", "OUTCOME", "RUNS", "RUNNING"]
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


def test_run_refuses_while_another_process_leads(redis_client):
    other = election(redis_client, "box-2:9")
    assert other.campaign()
    with pytest.raises(CommandError, match=rf"cannot run 'tick': box-2:9 leads \(term {other.term}\)"):
        run("--run", "tick", *FAST)
    assert redis_client.llen(SLOTS_KEY) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "nope"], "no periodic job named 'nope'; registered jobs: demo.heartbeat, demo.market_report, tick"),
        (["--list", "--run", "tick"], "--list and --run cannot be combined"),
        (["--lease", "1", "--renew-deadline", "2"], r"bad leader timing or identity: lease \(1 s\) must be longer"),
        (["--retry-period", "9"], r"renew_deadline \(10 s\) must be longer than 1.2 × retry_period"),
        (["--identity", " "], "--identity must not be empty"),
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


def test_an_unreachable_redis_raises_command_error_naming_it(settings):
    settings.REDCOORD = {**settings.REDCOORD, "URL": "redis://127.0.0.1:1/0"}
    with pytest.raises(CommandError, match=r"Redis at redis://127.0.0.1:1/0 could not be reached during campaign"):
        run("--run", "tick", *FAST)
