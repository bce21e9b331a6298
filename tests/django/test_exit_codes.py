"""Every command says the same with its exit code: 2 for options or arguments that make no sense
(as argparse's own), 1 for the rest (settings, Redis down, a failed check or job), so a script
can tell a typo from an outage."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from django_redcoord.checks import check_jobs_modules

from ..support.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "args",
    [
        ("run_worker", "nope", "--burst"),
        ("run_worker", "--burst", "--concurrency", "0"),
        ("run_worker", "--burst", "--prefetch", "0"),
        ("run_worker", "--burst", "--shutdown-timeout", "90000"),  # (a day at most, as the setting)
        ("run_worker", "--burst", "--backend", "nope"),
        ("run_worker", "--burst", "--metrics-port", "70000"),
        ("redcoord", "task", "show", "x", "--backend", "nope"),
        ("run_leader", "--slot", "5"),
        ("run_leader", "--request", "nope"),
        ("run_leader", "--identity", " "),
        ("run_leader", "--lease", "1", "--renew-deadline", "5"),
        ("redcoord", "queue", "pause", "bad q"),
        ("redcoord", "queue", "show", "x" * 201),
        ("redcoord", "schedule", "nope", "--every", "5"),
        ("redcoord", "health", "--max-age", "5"),
    ],
)
def test_a_usage_error_exits_2(args):
    with pytest.raises(CommandError) as caught:
        call_command(*args)
    assert caught.value.returncode == 2, (args, str(caught.value))


def test_redis_down_exits_1_and_a_check_that_failed_exits_1(settings):
    settings.REDCOORD = {"URL": f"redis://127.0.0.1:{free_port()}/0", "KEY_PREFIX": "test"}
    for args in (
        ("redcoord", "ping"),
        ("redcoord", "queue", "pause", "jobs"),
        ("redcoord", "health"),
    ):
        with pytest.raises(CommandError) as caught:
            call_command(*args)
        assert caught.value.returncode == 1, (args, str(caught.value))


def test_embedded_start_refuses_a_project_that_does_not_use_it(settings, tmp_path):
    settings.REDCOORD = {**settings.REDCOORD, "EMBEDDED_DIR": str(tmp_path)}
    with pytest.raises(CommandError, match="does not use the embedded Redis") as caught:
        call_command("redcoord", "embedded", "start")
    assert caught.value.returncode == 1
    assert not (tmp_path / "redis.pid").exists()


def test_a_jobs_module_that_cannot_be_found_is_e042(settings):
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["tests.support.leader_jobs", "no.such"]}
    [message] = check_jobs_modules()
    assert message.id == "redcoord.E042" and "'no.such'" in message.msg
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["bad module!"]}
    [message] = check_jobs_modules()
    assert message.id == "redcoord.E042"
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["tests.support.leader_jobs"]}
    assert check_jobs_modules() == []


def test_run_leader_names_a_jobs_module_it_cannot_import_without_a_traceback(redis_url):
    code = (
        "import django, os, sys;"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'testproject.settings';"
        "django.setup();"
        "from django.conf import settings;"
        f"settings.REDCOORD = {{'URL': {redis_url!r}, 'JOBS': ['no.such']}};"
        "from django.core.management import execute_from_command_line;"
        "execute_from_command_line(['manage.py', 'run_leader', '--list', '--skip-checks'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert "REDCOORD['JOBS'] names 'no.such', which cannot be imported" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_metrics_address_is_named_as_such():
    with pytest.raises(CommandError, match="--metrics-addr no-such-host.invalid"):
        call_command(
            "run_worker", "--burst", "--metrics-port", "0", "--metrics-addr", "no-such-host.invalid"
        )


def test_a_jobs_module_whose_parent_raises_is_e042_not_a_crash(settings, tmp_path, monkeypatch):
    (tmp_path / "raisingpkg").mkdir()
    (tmp_path / "raisingpkg" / "__init__.py").write_text("raise RuntimeError('parent raises')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["raisingpkg.jobs"]}
    [message] = check_jobs_modules()
    assert message.id == "redcoord.E042" and "RuntimeError: parent raises" in message.msg


def test_a_jobs_module_raising_valueerror_is_named_and_exits_1(settings, tmp_path, monkeypatch):
    (tmp_path / "valuejobs.py").write_text("raise ValueError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    settings.REDCOORD = {**settings.REDCOORD, "JOBS": ["valuejobs"]}
    with pytest.raises(CommandError, match="names 'valuejobs', which cannot be imported") as caught:
        call_command("run_leader", "--list")
    assert caught.value.returncode == 1
