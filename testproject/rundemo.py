"""Run the demo: migrate, seed, start Redis (embedded unless REDCOORD_REDIS_URL
is set), the web server and the background commands; stop all on Ctrl-C.

Called by ``make demo``. Environment: DEMO_PORT (default 8000, or a free one).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BACKGROUND_COMMANDS = ("run_leader", "run_worker")  # started once they exist


def manage(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=True, **kwargs)


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def pick_port() -> int:
    wanted = int(os.environ.get("DEMO_PORT", "8000"))
    if port_free(wanted):
        return wanted
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available_commands() -> set[str]:
    out = manage("help", "--commands", capture_output=True, text=True).stdout
    return set(out.split())


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
    embedded = not os.environ.get("REDCOORD_REDIS_URL")
    manage("migrate", "--noinput", "-v", "0")
    manage("demo_setup")
    if embedded:
        manage("redcoord", "embedded", "start")
    else:
        manage("redcoord", "ping")
    port = pick_port()
    children: list[subprocess.Popen] = []
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        children.append(subprocess.Popen(
            [PY, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT, start_new_session=True,
        ))  # fmt: skip
        commands = available_commands()
        for command in BACKGROUND_COMMANDS:
            if command in commands:
                children.append(
                    subprocess.Popen([PY, "manage.py", command], cwd=ROOT, start_new_session=True)
                )
        time.sleep(1.0)
        print(
            f"\n  Demo site:  http://127.0.0.1:{port}/\n  Market:     "
            f"http://127.0.0.1:{port}/market/  (try a stampede with and without the lock)\n  "
            f"Admin:      http://127.0.0.1:{port}/admin/  (user admin, password admin: demo "
            "only)\n  Redis:      "
            f"{'embedded, in .redcoord/' if embedded else os.environ['REDCOORD_REDIS_URL']}\n  "
            "Ctrl-C stops everything.\n",
            flush=True,
        )
        while not stopping and all(child.poll() is None for child in children):
            time.sleep(0.2)
    finally:
        for child in children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        for child in children:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
        if embedded:
            manage("redcoord", "embedded", "stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
