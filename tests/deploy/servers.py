"""The deployment matrix's servers: gunicorn, uvicorn and nginx as real processes, and an HTTP
client.

A :class:`Deployment` is one way the site is served:

* ``wsgi-tcp``: gunicorn (2 processes x 4 threads) bound on 127.0.0.1 and [::1];
* ``wsgi-uds``: the same on a Unix socket, behind nginx (a trusted proxy);
* ``asgi-tcp``: uvicorn (2 processes) on ``::``, dual-stack: IPv4 clients
  arrive as ``::ffff:a.b.c.d``;
* ``asgi-uds``: uvicorn ``--uds`` behind nginx.

Clients are real peers: 127.0.0.2 and 127.0.0.3 (the whole of 127/8 is
local on Linux, so a socket bound to either is a different client) and ::1.
Behind nginx a second listener stands for a load balancer on loopback in
front of it: nginx takes the client from that balancer's ``X-Forwarded-For``
(its realip module), so a test can be any IPv6 address of any /64.

Every process is started in its own session and stopped by its process
group id; nothing else is touched.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETTINGS = "tests.deploy.site.settings"
V4A, V4B, V6 = "127.0.0.2", "127.0.0.3", "::1"  # three different clients
CHUNK = 16  # bytes per streamed chunk (views.CHUNK)


def free_port() -> int:
    """A port free on 127.0.0.1 and ::1 alike."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket(socket.AF_INET6) as s6:
                s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s6.bind(("::1", port))
        except OSError:
            continue
        return port
    raise RuntimeError("no port free on both 127.0.0.1 and ::1")


def site_env(redis_url: str, db: str, *, behind_proxy: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
    env.update(
        DJANGO_SETTINGS_MODULE=SETTINGS,
        DEPLOY_REDIS_URL=redis_url,
        DEPLOY_DB=db,
        DEPLOY_BEHIND_PROXY="1" if behind_proxy else "0",
        PYTHONPATH=str(REPO),
        PYTHONUNBUFFERED="1",
    )
    return env


def prepare_db(path: str) -> None:
    """Create the site's SQLite database (auth tables) in a separate process."""
    code = (
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('migrate', verbosity=0)"
    )
    env = site_env("redis://127.0.0.1:1/0", path, behind_proxy=False)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrate failed:\n{done.stdout}\n{done.stderr}")


class Process:
    """A subprocess in its own session, with its output in a log file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], workdir: str) -> None:
        self.name, self.argv, self.env = name, argv, env
        self.log_path = Path(workdir) / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Process:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.argv,
            cwd=REPO,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(
                    self.proc.pid, signal.SIGTERM
                )  # our own session: the server and its workers
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # workers that outlived their master
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.poll() is None:
            self.proc.wait(5)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    cookies: dict[str, str] = field(default_factory=dict)  # every Set-Cookie: name -> value

    def json(self):
        return json.loads(self.body)


def _connection(
    host: str, port: int, source: str | None, timeout: float
) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(
        host, port, timeout=timeout, source_address=(source, 0) if source else None
    )


def request(
    host: str,
    port: int,
    path: str,
    *,
    source: str | None = None,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    timeout: float = 60,
    body: bytes | None = None,
) -> Reply:
    conn = _connection(host, port, source, timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        cookies = dict(
            c.split(";", 1)[0].split("=", 1)
            for k, c in resp.getheaders()
            if k.lower() == "set-cookie"
        )
        return Reply(
            resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read(), cookies
        )
    finally:
        conn.close()


class Stream:
    """A streamed request held open: read a chunk at a time, to the end, or hang up."""

    def __init__(
        self, host: str, port: int, path: str, *, source: str | None, headers: dict[str, str]
    ) -> None:
        self.conn = _connection(host, port, source, 60)
        self.conn.request("GET", path, headers=headers)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status

    def chunk(self) -> bytes:
        return self.resp.read(CHUNK)

    def rest(self) -> bytes:
        try:
            return self.resp.read()
        finally:
            self.conn.close()

    def hang_up(self) -> None:
        """Close the connection mid-body (RST-free: an ordinary close, as a browser tab does)."""
        sock = self.conn.sock
        self.resp.close()
        self.conn.close()
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
{user}
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {dir}/tmp-body;
    proxy_temp_path {dir}/tmp-proxy;
    fastcgi_temp_path {dir}/tmp-fastcgi;
    uwsgi_temp_path {dir}/tmp-uwsgi;
    scgi_temp_path {dir}/tmp-scgi;
    upstream app {{ server unix:{socket}; }}
    # the edge: clients connect here; their address is appended to X-Forwarded-For
    server {{
        listen 127.0.0.1:{edge};
        listen [::1]:{edge};
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;
        }}
    }}
    # behind a load balancer on 127.0.0.1: nginx takes the client from its header
    server {{
        listen 127.0.0.1:{lb};
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Forwarded-For;
        real_ip_recursive on;
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_buffering off;
        }}
    }}
}}
"""


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(p)), None
    )


class SiteBroken(RuntimeError):
    """The server started and answers, with errors: starting it again will not help."""


@dataclass
class Deployment:
    """One way of serving the site, started by :meth:`start` and stopped by :meth:`stop`."""

    name: str
    server: str  # "gunicorn" | "uvicorn"
    socket: bool  # on a Unix socket behind nginx (else TCP, clients connect directly)
    trusted: bool = True  # behind nginx: REDCOORD["TRUSTED_PROXIES"] names it
    workers: int = 2
    redis_url: str = ""
    db: str = ""
    workdir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="redcoord-deploy-"))
    port: int = 0  # TCP port (direct) or nginx's edge port
    lb_port: int = 0
    processes: list[Process] = field(default_factory=list)

    @property
    def is_async(self) -> bool:
        return self.server == "uvicorn"

    def _app_argv(self, sock: str) -> list[str]:
        if self.server == "gunicorn":
            bind = (
                ["-b", f"unix:{sock}"]
                if self.socket
                else ["-b", f"127.0.0.1:{self.port}", "-b", f"[::1]:{self.port}"]
            )
            return [
                sys.executable,
                "-m",
                "gunicorn",
                "--preload",
                "-w",
                str(self.workers),
                "-k",
                "gthread",
                "--threads",
                "4",
                "--timeout",
                "120",
                "--graceful-timeout",
                "2",
                "--log-level",
                "warning",
                *bind,
                "tests.deploy.site.wsgi:application",
            ]
        bind = (
            ["--uds", sock]
            if self.socket
            else ["--host", "::", "--port", str(self.port), "--no-proxy-headers"]
        )
        return [
            sys.executable,
            "-m",
            "uvicorn",
            "--workers",
            str(self.workers),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
            "--timeout-graceful-shutdown",
            "2",
            *bind,
            "tests.deploy.site.asgi:application",
        ]

    def start(self, attempts: int = 3) -> Deployment:
        """Start the server (and nginx) and wait until they answer; on fresh ports again if they
        do not.

        A port found free can be taken by another process before the server
        binds it (other test workers pick ports too). Whatever started is
        stopped before the next attempt, and after the last the error is raised.
        """
        for attempt in range(attempts):
            try:
                return self._start()
            except BaseException as exc:
                for process in reversed(self.processes):
                    process.stop()
                self.processes = []
                if (
                    not isinstance(exc, RuntimeError)
                    or isinstance(exc, SiteBroken)
                    or attempt + 1 == attempts
                ):
                    shutil.rmtree(self.workdir, ignore_errors=True)
                    raise
                for leftover in Path(self.workdir).glob("*.sock"):
                    leftover.unlink()
        raise AssertionError("unreachable")

    def _start(self) -> Deployment:
        sock = os.path.join(self.workdir, "app.sock")
        self.port = free_port()
        env = site_env(self.redis_url, self.db, behind_proxy=self.socket and self.trusted)
        self.processes.append(Process(self.server, self._app_argv(sock), env, self.workdir).start())
        if self.socket:
            self.lb_port = free_port()
            binary = nginx_binary()
            if binary is None:
                raise RuntimeError(
                    "nginx is not installed (apt-get install nginx; .ci/run installs it)"
                )
            user = (
                "user root root;" if os.geteuid() == 0 else ""
            )  # its workers must reach our 0700 workdir
            conf = NGINX_CONF.format(
                dir=self.workdir, user=user, socket=sock, edge=self.port, lb=self.lb_port
            )
            conf_path = os.path.join(self.workdir, "nginx.conf")
            Path(conf_path).write_text(conf)
            argv = [
                binary,
                "-p",
                self.workdir,
                "-c",
                conf_path,
                "-e",
                os.path.join(self.workdir, "nginx-error.log"),
            ]
            self.processes.append(Process("nginx", argv, dict(os.environ), self.workdir).start())
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 35) -> None:
        deadline = time.monotonic() + timeout
        last: object = None
        pids: set[int] = set()
        while time.monotonic() < deadline:
            dead = [p for p in self.processes if not p.alive()]
            if dead:
                raise RuntimeError(
                    f"{self.name}: {dead[0].name} exited at start-up:\n{dead[0].log()}"
                )
            try:
                reply = self.get("/ping/", timeout=5)
                if (
                    reply.status == 500
                ):  # the site runs and fails (its settings?): waiting will not help
                    raise SiteBroken(f"{self.name}: /ping/ answers 500:\n{self.logs()}")
                if reply.status == 200:
                    pids.add(int(reply.body.split()[1]))
                    if len(pids) >= self.workers or time.monotonic() > deadline - timeout / 2:
                        # every worker answers (or half the time is gone: go on with those that do)
                        return
                    continue
                last = reply.status
            except OSError as exc:
                last = exc
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} not ready after {timeout} s ({last!r}):\n{self.logs()}")

    def logs(self) -> str:
        text = "\n".join(f"--- {p.name}\n{p.log()}" for p in self.processes)
        err = Path(self.workdir, "nginx-error.log")
        if err.exists():
            text += "\n--- nginx-error.log\n" + err.read_text(errors="replace")[-3000:]
        return text

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # -- talking to it ------------------------------------------------------------------

    def _where(self, client: str) -> tuple[str, int]:
        return ("::1" if ":" in client else "127.0.0.1"), self.port

    def get(
        self,
        path: str,
        *,
        client: str = V4A,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        cookie: str | None = None,
        timeout: float = 60,
        body: bytes | None = None,
    ) -> Reply:
        """``path`` requested by ``client`` (a real peer address), as the deployment's clients
        reach it."""
        host, port = self._where(client)
        headers = dict(headers or {})
        if cookie:
            headers["Cookie"] = cookie
        return request(
            host,
            port,
            path,
            source=client,
            method=method,
            headers=headers,
            timeout=timeout,
            body=body,
        )

    def get_as(self, path: str, claimed: str, *, cookie: str | None = None) -> Reply:
        """``path`` from the client ``claimed`` (any address) as a load balancer in front of
        nginx names it."""
        assert self.socket, "only behind nginx"
        headers = {"X-Forwarded-For": claimed}
        if cookie:
            headers["Cookie"] = cookie
        return request("127.0.0.1", self.lb_port, path, source="127.0.0.1", headers=headers)

    def stream(self, path: str, *, client: str = V4A, cookie: str | None = None) -> Stream:
        host, port = self._where(client)
        return Stream(host, port, path, source=client, headers={"Cookie": cookie} if cookie else {})

    def sign_in(self, username: str, *, client: str = V4A) -> str:
        """Sign ``username`` in; the session cookie to send with its requests."""
        reply = self.get(f"/signin/{username}/", client=client)
        assert reply.status == 200, (reply.status, reply.body)
        cookie = reply.headers.get("set-cookie", "")
        return cookie.split(";", 1)[0]
