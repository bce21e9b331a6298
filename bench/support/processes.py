"""The processes a benchmark starts: programs that die with it, forked children, its ``main``.

Every program started here is killed by the kernel if the benchmark dies
(PR_SET_PDEATHSIG), and ``run_main`` turns SIGTERM and Ctrl-C into a normal
exit, so the ``finally`` blocks and ``with`` blocks stop children and servers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import multiprocessing as mp
import os
import queue
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1

#: Every benchmark forks its children (they inherit the imported modules).
CTX = mp.get_context("fork")


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Ask the kernel to send ``signum`` to this process when its parent dies (a
    ``preexec_fn``, or the first call of a spawned child)."""
    _libc().prctl(_PR_SET_PDEATHSIG, signum)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def spawn(
    args: Sequence[str],
    *,
    cwd: str | Path,
    env: dict[str, str] | None = None,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    session: bool = True,
) -> subprocess.Popen[bytes]:
    """Start a program that dies with us; with ``session`` in a session of its own, so
    Ctrl-C reaches us, not it (we stop it)."""
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=session,
        preexec_fn=die_with_parent,
    )


def terminate(*procs: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """SIGTERM programs we started (all at once) and reap them; SIGKILL any that outlives
    ``timeout`` s."""
    running = [proc for proc in procs if proc.poll() is None]
    for proc in running:
        proc.terminate()
    for proc in running:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # run the finally blocks: stop children and servers


def run_main(main: Callable[[], int | None]) -> None:
    """Run a benchmark's ``main``; SIGTERM and Ctrl-C still stop its children and servers."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)


# --- forked children -----------------------------------------------------------------------


def child_setup() -> None:
    """First thing in a forked child: SIGTERM kills it (the parent's handler is not ours)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def child_exit(out: Any) -> None:
    """Last thing in a forked child: flush what it put on ``out``, then leave at once (no
    waiting for stray pool threads at exit: pottery's, retrying dead masters)."""
    out.close()
    out.join_thread()
    os._exit(0)


def describe(exc: BaseException) -> str:
    """How a child reports a failure: ``TypeName: message``."""
    return f"{type(exc).__name__}: {exc}"


def _child_main(target: Callable[..., Any], args: tuple[Any, ...], out: Any) -> None:
    child_setup()
    try:
        out.put(("ok", target(*args)))
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        out.put(("error", describe(exc)))
    child_exit(out)


def run_in_child(target: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any:
    """Run ``target(*args)`` in a forked child; return its result or raise RuntimeError."""
    out = CTX.Queue()
    proc = CTX.Process(target=_child_main, args=(target, args, out), daemon=True)
    proc.start()
    try:
        status, value = out.get(timeout=timeout)
    except queue.Empty:
        raise RuntimeError(f"no answer within {timeout:g} s") from None
    finally:
        stop_process(proc)
    if status == "error":
        raise RuntimeError(value)
    return value


def stop_process(proc: Any) -> None:
    """Join a child we started; terminate, then kill it (by its Process object) if it hangs."""
    proc.join(timeout=5)
    if proc.is_alive():
        proc.terminate()
        proc.join(timeout=5)
    if proc.is_alive():
        proc.kill()
