"""What the commands print when the project configured no logging: text or JSON lines, at INFO."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.logs import LOGGERS, log_to_console

ROOT = Path(__file__).resolve().parents[2]


def run_leader(redis_url, *args, seconds=2.5):
    """A real `manage.py run_leader` process, SIGTERM-ed after ``seconds``: (exit code, stderr
    lines)."""
    prefix = f"logs{time.monotonic_ns()}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.log_settings",
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": prefix,
        "LEADER_TEST_JOBS": "",
    }
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "run_leader", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Up and campaigning (its first key written) before the clock starts: a loaded machine can
        # take seconds to start Django, and a SIGTERM before the handler is installed kills it
        # (-15).
        client = client_from_url(redis_url)
        deadline = time.monotonic() + 30
        while (
            next(client.scan_iter(match=f"{prefix}:*", count=1000), None) is None
            and proc.poll() is None
        ):
            assert time.monotonic() < deadline, "run_leader wrote nothing in 30 s"
            time.sleep(0.05)
        client.close()
        time.sleep(seconds)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return proc.returncode, [line for line in err.splitlines() if line.strip()]


def test_run_leader_tells_what_it_does_without_any_logging_setting(redis_url):
    code, lines = run_leader(redis_url)
    assert code == 0, lines
    stamped = re.compile(
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4} (INFO|WARNING|ERROR) (django_redcoord[.\w]*): "
    )
    assert lines and all(stamped.match(line) for line in lines), lines
    text = "\n".join(lines)
    assert "INFO django_redcoord.leader: run_leader:" in text and "campaigning" in text
    assert re.search(r"INFO django_redcoord.leader: .* elected, term \d+", text), text
    assert "stopped" in lines[-1]
    assert {stamped.match(line).group(2) for line in lines} <= set(LOGGERS)  # only documented names


def test_json_lines_on_request_and_quiet_at_verbosity_0(redis_url):
    code, lines = run_leader(redis_url, "--log-format", "json")
    assert code == 0, lines
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "message", "process"} <= set(r) for r in records)
    assert any(
        r["logger"] == "django_redcoord.leader" and "elected" in r["message"] for r in records
    ), records
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$", records[0]["time"])
    code, lines = run_leader(redis_url, "--verbosity", "0", seconds=1.5)
    assert code == 0 and not [line for line in lines if " INFO " in line], lines


@pytest.fixture
def bare_logging():
    """The django_redcoord and root loggers as a project with no LOGGING leaves them; restored
    after."""
    ours, root = logging.getLogger("django_redcoord"), logging.getLogger()
    saved = (ours.handlers[:], ours.level, root.handlers[:])
    ours.handlers[:], root.handlers[:] = [], []
    ours.setLevel(logging.NOTSET)
    yield ours, root
    ours.handlers[:], root.handlers[:] = saved[0], saved[2]
    ours.setLevel(saved[1])


def test_the_projects_own_logging_is_left_alone(bare_logging):
    ours, root = bare_logging
    root.addHandler(logging.NullHandler())  # the project configured the root logger
    assert log_to_console(1, "text") is False and ours.handlers == []
    root.handlers[:] = []
    ours.setLevel(logging.ERROR)  # the project set only a level on ours
    assert log_to_console(1, "json") is True and ours.level == logging.ERROR
    assert log_to_console(1, "text") is False and len(ours.handlers) == 1  # never a second handler
    assert isinstance(ours.handlers[0].formatter, logging.Formatter)
