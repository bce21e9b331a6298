"""Throwaway redis-servers on 127.0.0.1: a plain server, a replica, a sentinel.

Each server runs in a temporary directory of its own with persistence off,
dies with this process (PR_SET_PDEATHSIG, see processes.py), and is stopped
by ``stop()`` or on leaving a ``with`` block::

    with RedisServer() as server:
        server.port, server.url, server.client.ping()
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import redis

from .processes import spawn, terminate

HOST = "127.0.0.1"
SERVICE = "mymaster"  # the master's name the sentinels monitor


def free_port() -> int:
    """A loopback TCP port nobody listens on right now (also: a 'closed port')."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    """Nobody listens on ``port`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def pick_ports(n: int, span: tuple[int, int], *, bus: bool = False) -> list[int]:
    """``n`` consecutive free ports in ``span``; with ``bus``, their cluster bus ports
    (+10000) free too. For servers that restart on their port (a span below the kernel's
    ephemeral range, 32768-60999 here, so no client socket takes one meanwhile)."""
    for _ in range(500):
        base = random.randrange(span[0], span[1] - n)
        ports = range(base, base + n)
        if all(port_free(p) and (not bus or port_free(p + 10000)) for p in ports):
            return list(ports)
    raise RuntimeError(
        f"no {n} consecutive free ports{' (and bus ports)' if bus else ''} in {span}"
    )


def plain(port: int) -> redis.Redis:
    """A plain client (replies decoded, 1 s timeouts) for a benchmark's own checks of a
    server: not the measured path."""
    return redis.Redis(
        host=HOST, port=port, socket_timeout=1, socket_connect_timeout=1, decode_responses=True
    )


def command_calls(client: redis.Redis) -> Counter[str]:
    """Calls per command since the server started, INFO itself left out."""
    stats = client.info("commandstats")
    calls = Counter({k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()})
    del calls["info"]
    return calls


class RedisServer:
    """A redis-server of our own: ``with RedisServer() as server: server.port``.

    Args:
        binary: the program.
        extra: more redis-server arguments, e.g. ``["--loadmodule", path]``.
        port: a fixed port (restartable on it after ``kill()``); default a free one.
        replicaof: the port of the master to replicate (read at each start).
        keep_dir: restarts keep the directory (a Cluster node's nodes.conf); by default each
            start begins in a new, empty one.
        ready_timeout: seconds a start may take until the server answers PING.
    """

    logfile = "redis.log"

    def __init__(
        self,
        binary: str = "redis-server",
        extra: Sequence[str] = (),
        *,
        port: int | None = None,
        replicaof: int | None = None,
        keep_dir: bool = False,
        ready_timeout: float = 5.0,
    ) -> None:
        self.binary = binary
        self.extra = list(extra)
        self.fixed_port = port
        self.port = port or 0
        self.replicaof = replicaof
        self.keep_dir = keep_dir
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False
        self._dir: str | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    @cached_property
    def client(self) -> redis.Redis:
        """A plain client of this server (see :func:`plain`), built on first use."""
        return plain(self.port)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def args(self) -> list[str]:
        """The command line of one start (on ``self.port``, in the server's directory)."""
        assert self._dir is not None
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
            self.logfile,
            *self.extra,
        ]
        if self.replicaof is not None:
            args += ["--replicaof", HOST, str(self.replicaof)]
        return args

    def start(self, attempts: int = 3) -> RedisServer:
        """Start, on a free port retried if another process grabbed it first, or on the fixed
        one; raises RuntimeError with the end of the log if it does not answer."""
        if self._dir is None or not self.keep_dir:
            self._remove_dir()
            self._dir = tempfile.mkdtemp(prefix="bench-redis-")
        for _ in range(attempts if self.fixed_port is None else 1):
            if self.fixed_port is None:
                self.port = free_port()
            self.proc = spawn(self.args(), cwd=self._dir)
            if self._wait_ready():
                return self
            self._kill()
        log = self.log_tail()
        self.stop()
        raise RuntimeError(
            f"redis-server on port {self.port} did not start; last log lines:\n{log}"
        )

    def _wait_ready(self) -> bool:
        client = redis.Redis(host=HOST, port=self.port, socket_timeout=1)
        deadline = time.monotonic() + self.ready_timeout
        try:
            while time.monotonic() < deadline:
                if not self.alive:
                    return False
                try:
                    return bool(client.ping())
                except redis.RedisError:
                    time.sleep(0.02)
            return False
        finally:
            client.close()

    def version(self) -> str:
        return str(self.client.info("server")["redis_version"])

    def log_text(self) -> str:
        path = Path(self._dir or "/nonexistent", self.logfile)
        return path.read_text(errors="replace") if path.exists() else ""

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_text()[-chars:] or "(no log)"

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False

    def kill(self) -> None:
        """SIGKILL (no shutdown: clients see their connections reset at once), and reap it;
        ``start()`` starts it again, on its port if fixed."""
        if self.alive:
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.paused = False

    def _kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        if self.paused:
            proc.send_signal(signal.SIGCONT)
            self.paused = False
        terminate(proc)

    def _remove_dir(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None

    def stop(self) -> None:
        """Stop the server (resuming it first if paused) and remove its directory."""
        self._kill()
        client = self.__dict__.pop("client", None)
        if client is not None:
            client.close()
        self._remove_dir()


class SentinelServer(RedisServer):
    """A redis-server in Sentinel mode monitoring the master on ``master_port`` as ``service``.

    Sentinel needs a writable config file as its first argument: each start
    writes it into the server's directory (times in milliseconds, as Sentinel
    takes them; the optional settings are left at Sentinel's defaults when None).
    """

    logfile = "sentinel.log"

    def __init__(
        self,
        master_port: int,
        *,
        quorum: int,
        down_after: int,
        failover_timeout: int | None = None,
        parallel_syncs: int | None = None,
        service: str = SERVICE,
        port: int | None = None,
        ready_timeout: float = 5.0,
    ) -> None:
        super().__init__(port=port, ready_timeout=ready_timeout)
        self.master_port = master_port
        self.quorum = quorum
        self.settings = {
            "down-after-milliseconds": down_after,
            "failover-timeout": failover_timeout,
            "parallel-syncs": parallel_syncs,
        }
        self.service = service

    def args(self) -> list[str]:
        assert self._dir is not None
        lines = [
            f"port {self.port}",
            f"bind {HOST}",
            f"dir {self._dir}",
            f"logfile {self.logfile}",
            f"sentinel monitor {self.service} {HOST} {self.master_port} {self.quorum}",
            *(
                f"sentinel {name} {self.service} {value}"
                for name, value in self.settings.items()
                if value is not None
            ),
        ]
        conf = Path(self._dir, "sentinel.conf")
        conf.write_text("\n".join(lines) + "\n")
        return [self.binary, str(conf), "--sentinel"]


# --- what the topologies (sentinel.py, cluster.py) share ------------------------------------


def wait_stable(
    check: Callable[[], str | None],
    *,
    stable: float,
    timeout: float,
    what: str,
    describe: Callable[[], str],
) -> float:
    """Poll ``check()`` until it has found nothing wrong for ``stable`` seconds running; the
    seconds until that period began. ``check()`` returns what is wrong ('' when nothing is), or
    None when nothing is but what it looks at just changed (the period starts again). Raises
    RuntimeError naming ``what``, the last problem and ``describe()`` after ``timeout`` s."""
    started = time.monotonic()
    since: float | None = None
    while True:
        problem = check()
        now = time.monotonic()
        if problem:
            since = None
        elif since is None or problem is None:
            since = now
        elif now - since >= stable:
            return since - started
        if now - started > timeout:
            raise RuntimeError(
                f"{what} did not settle within {timeout:g} s: {problem or ''}\n{describe()}"
            )
        time.sleep(0.05)


TopologyT = TypeVar("TopologyT", bound="Topology")


class Topology:
    """Servers started and stopped together: ``with`` starts them (stopping every one if a
    start fails) and stops them on leaving."""

    def start(self: TopologyT) -> TopologyT:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: TopologyT) -> TopologyT:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
