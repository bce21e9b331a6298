"""The embedded development Redis: one server per project folder, shared."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from django_redcoord.core.locks import Lock
from django_redcoord.core.transport import embedded
from django_redcoord.core.transport.clients import client_from_url, get_client

from ...support.multiproc import run_in_processes
from ...support.redis_servers import STARTED_PIDS, pid_alive

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def folder(tmp_path_factory):
    # unix socket paths are limited to ~100 bytes: keep the folder short
    directory = Path(f"/tmp/rc-emb-{os.getpid()}-{os.urandom(3).hex()}")
    yield str(directory)
    embedded.stop(str(directory))
    assert embedded.running_pid(str(directory)) is None


def _start_and_report(index, directory):
    url = embedded.ensure_running(directory)
    return url, embedded.running_pid(directory)


def test_concurrent_processes_share_one_server(folder):
    results = run_in_processes(_start_and_report, 4, folder)
    STARTED_PIDS.extend(pid for _, pid in results)
    urls = {url for url, _ in results}
    pids = {pid for _, pid in results}
    assert urls == {embedded.socket_url(folder)}
    assert len(pids) == 1, f"two embedded servers were started: {pids}"
    assert client_from_url(urls.pop()).ping()


def test_stop_ends_the_server_and_a_later_start_makes_a_new_one(folder):
    embedded.ensure_running(folder)
    first = embedded.running_pid(folder)
    STARTED_PIDS.append(first)
    assert embedded.stop(folder) is True
    assert not pid_alive(first)
    assert embedded.stop(folder) is False
    embedded.ensure_running(folder)
    second = embedded.running_pid(folder)
    STARTED_PIDS.append(second)
    assert second != first


def test_a_stale_pid_file_does_not_block_a_start(folder):
    os.makedirs(folder)
    Path(folder, embedded.PIDFILE).write_text("999999\n")
    embedded.ensure_running(folder)
    STARTED_PIDS.append(embedded.running_pid(folder))
    assert embedded.running_pid(folder) != 999999


def test_url_embedded_setting_starts_it_on_first_use(settings, folder):
    settings.REDCOORD = {"URL": "embedded", "EMBEDDED_DIR": folder}
    assert embedded.running_pid(folder) is None
    client = get_client()
    STARTED_PIDS.append(embedded.running_pid(folder))
    with Lock("demo", client=client, wait=0) as lock:
        assert lock.token > 0


def test_management_command_starts_reports_and_stops_it(folder):
    env = {k: v for k, v in os.environ.items() if k != "REDCOORD_REDIS_URL"}
    env["DEMO_DB_PATH"] = ":memory:"
    code = (
        "import django, os, sys; os.environ['DJANGO_SETTINGS_MODULE']='testproject.settings';"
        "django.setup(); from django.conf import settings;"
        f"settings.REDCOORD['EMBEDDED_DIR']={folder!r};"
        "from django.core.management import call_command; call_command(*sys.argv[1:])"
    )

    def run(*args):
        out = subprocess.run(
            [sys.executable, "-c", code, "redcoord", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "running at unix://" in run("embedded", "start")
    pid = embedded.running_pid(folder)
    STARTED_PIDS.append(pid)
    assert f"(pid {pid})" in run("embedded", "status")
    assert "stopped" in run("embedded", "stop")
    assert not pid_alive(pid)
    assert "no embedded Redis running" in run("embedded", "status")
