"""What the Tasks tests that run real ``manage.py run_worker`` processes share (cancel, unique
tasks and their red-team files): start a worker, wait for a condition, stop what is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def worker_env(
    redis_url: str, settings: str = "tests.support.worker_settings", **extra: str
) -> dict[str, str]:
    """The environment of a worker (or producer) process on the test's own server."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings,
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "test",
        "DEMO_DB_PATH": ":memory:",
        **extra,
    }


def start_worker(
    redis_url: str,
    *,
    settings: str = "tests.support.worker_settings",
    concurrency: int = 1,
    prefetch: int = 1,
    verbosity: int = 0,
    output: bool = True,
    args: tuple[str, ...] = (),
    **env: str,
) -> subprocess.Popen:
    """``manage.py run_worker`` in a process group of its own; its output piped (text) when
    ``output``, else dropped."""
    command = [
        sys.executable,
        "manage.py",
        "run_worker",
        "-v",
        str(verbosity),
        "--concurrency",
        str(concurrency),
        "--prefetch",
        str(prefetch),
        *args,
    ]
    sink: Any = subprocess.PIPE if output else subprocess.DEVNULL
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=worker_env(redis_url, settings, **env),
        stdout=sink,
        stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
        start_new_session=True,
        text=True,
    )


def wait_for(
    what: str, condition: Any, timeout: float = 30.0, proc: subprocess.Popen | None = None
) -> None:
    """Poll ``condition()`` until true; fail if ``timeout`` passes or ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"the worker exited ({proc.returncode}) before {what}: {out}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def stop(*procs: subprocess.Popen | None) -> None:
    """SIGKILL and reap what a test left running (a stopped one is continued first)."""
    for proc in procs:
        if proc is not None and proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            proc.kill()
            proc.wait(10)
