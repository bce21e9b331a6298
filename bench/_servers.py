"""What the benchmarks share: throwaway redis-server processes on free 127.0.0.1 ports, forked
children, tables.

Each server runs in its own temporary directory with persistence off, is
killed by the kernel if this Python process dies (PR_SET_PDEATHSIG), and is
stopped by ``stop()`` or on leaving a ``with`` block.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing as mp
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import redis

HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def free_port() -> int:
    """A loopback TCP port nobody listens on right now (also: a 'closed port')."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class RedisServer:
    """A redis-server of our own: ``with RedisServer() as server: server.port``."""

    def __init__(self, binary: str = "redis-server", extra: Sequence[str] = ()) -> None:
        self.binary = binary
        self.extra = list(extra)  # more redis-server arguments, e.g. ["--loadmodule", path]
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False
        self._dir: str | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self, attempts: int = 3) -> RedisServer:
        """Start on a free port (retrying if another process grabbed it first)."""
        self._dir = tempfile.mkdtemp(prefix="bench-redis-")
        for _ in range(attempts):
            self.port = free_port()
            self._spawn()
            if self._wait_ready():
                return self
            self._kill()
        log = Path(self._dir, "redis.log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"redis-server did not start; last log lines:\n{log}")

    def _spawn(self) -> None:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            HOST,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self._dir,
            "--logfile",
            "redis.log",
            *self.extra,
        ]
        self.proc = subprocess.Popen(
            args,
            cwd=self._dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us, not the server; we stop it
            preexec_fn=_die_with_parent,
        )

    def _wait_ready(self, timeout: float = 5.0) -> bool:
        client = redis.Redis(host=HOST, port=self.port, socket_timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    return False
                try:
                    return bool(client.ping())
                except redis.ConnectionError:
                    time.sleep(0.02)
            return False
        finally:
            client.close()

    def version(self) -> str:
        client = redis.Redis(host=HOST, port=self.port)
        try:
            return str(client.info("server")["redis_version"])
        finally:
            client.close()

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False

    def _kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        if self.paused:
            proc.send_signal(signal.SIGCONT)
            self.paused = False
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def stop(self) -> None:
        """Stop the server (resuming it first if paused) and remove its directory."""
        self._kill()
        if self._dir is not None and os.path.isdir(self._dir):
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # run the finally blocks: stop children and servers


def run_main(main: Callable[[], int]) -> None:
    """Run a benchmark's ``main``; SIGTERM and Ctrl-C still stop its children and servers."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)


# --- forked children -----------------------------------------------------------------------

#: Every benchmark forks its children (they inherit the imported modules).
CTX = mp.get_context("fork")


def _child_main(target: Callable[..., Any], args: tuple[Any, ...], out: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
    try:
        out.put(("ok", target(*args)))
    except BaseException as exc:  # noqa: B036 - report everything to the parent
        out.put(("error", f"{type(exc).__name__}: {exc}"))
    out.close()  # then leave at once: no waiting for stray pool threads at exit
    out.join_thread()
    os._exit(0)


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


# --- tables ----------------------------------------------------------------------------------


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """A markdown table, columns padded to their widest cell, flushed at once."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    sys.stdout.flush()
