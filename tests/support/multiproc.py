"""Run test scenarios in several real OS processes and collect their results.

Children are forked, so a scenario is any module-level function; it gets its
index and must build its own Redis client (never share one across fork).
Results travel back as plain data through a multiprocessing queue.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ctx = multiprocessing.get_context("fork")


def _child(func: Callable[..., Any], index: int, args: tuple, queue: Any) -> None:
    try:
        queue.put((index, "ok", func(index, *args)))
    except BaseException:  # report everything, the parent decides
        queue.put((index, "error", traceback.format_exc()))


class Proc:
    """A scenario running in its own OS process."""

    def __init__(self, func: Callable[..., Any], index: int, args: tuple) -> None:
        self.queue = _ctx.Queue()
        self.process = _ctx.Process(
            target=_child, args=(func, index, args, self.queue), daemon=True
        )
        self.process.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        try:
            self.signal(signal.SIGKILL)
        except ProcessLookupError:  # it ended on its own meanwhile (the test's checks judge how)
            pass
        self.process.join(5)

    def result(self, timeout: float = 60.0) -> Any:
        """The scenario's return value; raises if it failed or timed out."""
        index, status, value = self.queue.get(timeout=timeout)
        self.process.join(5)
        if status != "ok":
            raise AssertionError(f"process {index} failed:\n{value}")
        return value

    def stop(self) -> None:
        if self.process.is_alive():
            os.kill(self.pid, signal.SIGCONT)  # a stopped process is resumed to be reaped cleanly
            self.kill()


def start(func: Callable[..., Any], *args: Any, index: int = 0) -> Proc:
    return Proc(func, index, args)


def run_in_processes(
    func: Callable[..., Any], n: int, *args: Any, timeout: float = 60.0
) -> list[Any]:
    """Run ``func(i, *args)`` in ``n`` processes at once; return results in index order."""
    procs = [Proc(func, i, args) for i in range(n)]
    try:
        return [p.result(timeout) for p in procs]
    finally:
        for p in procs:
            p.stop()


def queue() -> Any:
    """A queue shared with processes started afterwards (pass it as an argument)."""
    return _ctx.Queue()


def event() -> Any:
    """An event shared with processes started afterwards (pass it as an argument)."""
    return _ctx.Event()


def run_python_without_settings(
    code: str, timeout: float = 30, **env_vars: str
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter at the repository root with no
    DJANGO_SETTINGS_MODULE (unless ``env_vars`` sets one)."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"} | env_vars
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
