"""The fault-injection harness: a system under test, an oracle, subjects, nemeses, checkers.

* ``Bench`` owns two redis-servers: ``sut``, the one the nemeses act on
  (optionally with AOF persistence, so a kill -9 and restart keeps the data),
  and ``oracle``, where subjects record what they did (see oracle.py).
* ``Subject`` is one real OS process (``manage.py run_worker``, ``manage.py
  run_leader``, or any Python command) with its output captured to a file;
  ``Bench.spawn`` starts them with the environment the subject settings read.
* A nemesis is a callable ``nemesis(bench)`` that does its harm and heals it
  (``pause_redis(3)``, ``restart_redis(keep_data=False)``,
  ``drop_connections()``, ``kill_subject(0)``, ``stop_subject(0, 2.5)``...);
  each has a ``name`` for test ids. Add one by writing such a function.
* A checker is a function returning a list of violations (strings): empty
  means the property holds. Every checker has a negative control in
  test_negative_controls.py: a deliberately unsafe subject it must catch.

Scenarios (test_*.py) combine them: start subjects, apply a nemesis while
work flows, heal, let the system settle, then run the checkers and stop the
subjects with SIGTERM (they must exit 0).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from django_redcoord.core.transport.clients import client_from_url

from ..support.redis_servers import RedisServer

ROOT = Path(__file__).resolve().parent.parent.parent
#: REDCOORD_FAULTS: "ci" (default: every nemesis once), "smoke" (one nemesis per
#: subject, no checker controls: the second CI run, on Redis 6.2), "full" (longer runs).
TIER = os.environ.get("REDCOORD_FAULTS", "ci")
FULL = TIER == "full"


def tiered(cases: list[Any], smoke: Iterable[int]) -> list[Any]:
    """The cases a tier runs: all of them, or in the smoke tier those at ``smoke``."""
    keep = set(smoke)
    return [case for i, case in enumerate(cases) if TIER != "smoke" or i in keep]


class PersistentRedis(RedisServer):
    """A redis-server with AOF on (``appendfsync always``): a kill -9 keeps the data."""

    def start(self, timeout: float = 10.0) -> PersistentRedis:
        super().start(timeout)
        client = redis.Redis(port=self.port)
        client.config_set("appendfsync", "always")
        client.config_set("appendonly", "yes")
        deadline = time.monotonic() + timeout
        while (
            client.info("persistence").get("aof_rewrite_in_progress")
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        client.close()
        return self

    def restart(self) -> PersistentRedis:
        """Start again on the same port and directory, loading the AOF."""
        self.stop()
        args_dir = self.dir
        self.proc = subprocess.Popen(
            [
                _binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                args_dir,
                "--logfile",
                os.path.join(args_dir, "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        from ..support.redis_servers import STARTED_PIDS

        STARTED_PIDS.append(self.proc.pid)
        wait_for(lambda: _pings(self.port), 10, "the restarted redis-server to load its data")
        return self


def _binary() -> str:
    from ..support.redis_servers import server_binary

    return server_binary()


def _pings(port: int) -> bool:
    client = redis.Redis(port=port, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, step: float = 0.05) -> Any:
    """Poll ``predicate`` until it is truthy; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


@dataclass
class Subject:
    """One subject process: its command, its output file, what was done to it."""

    name: str
    proc: subprocess.Popen
    log: Path
    killed: bool = False  # SIGKILLed by the test: any end is expected
    terminated: bool = False  # SIGTERMed by the test: must exit 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self, tail: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def signal(self, signum: int) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signum)


@dataclass
class Bench:
    """The system under test, the oracle, and the subjects of one scenario."""

    sut: RedisServer
    oracle_server: RedisServer
    workdir: Path
    prefix: str = "faults"
    subjects: list[Subject] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.sut.url

    def client(self, **kwargs: Any) -> Any:
        return client_from_url(self.sut.url, **kwargs)

    @property
    def oracle(self) -> Any:
        return client_from_url(self.oracle_server.url)

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.faults.settings",
            "REDCOORD_REDIS_URL": self.sut.url,
            "REDCOORD_KEY_PREFIX": self.prefix,
            "FAULTS_ORACLE_URL": self.oracle_server.url,
            "PYTHONUNBUFFERED": "1",
            **extra,
        }

    def spawn(self, name: str, argv: list[str], **env: str) -> Subject:
        """Start a subject: ``argv`` after the Python interpreter, cwd at the repository root."""
        log = self.workdir / f"{name}.{len(self.subjects)}.log"
        out = open(log, "w")  # noqa: SIM115 - closed with the process (the child keeps its copy)
        proc = subprocess.Popen(
            [sys.executable, *argv],
            cwd=ROOT,
            env=self.env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()
        subject = Subject(name, proc, log)
        self.subjects.append(subject)
        return subject

    def run_worker(self, *args: str) -> Subject:
        return self.spawn("run_worker", ["manage.py", "run_worker", *args])

    def run_leader(self, *args: str) -> Subject:
        return self.spawn("run_leader", ["manage.py", "run_leader", *args])

    def live(self, name: str | None = None) -> list[Subject]:
        return [
            s for s in self.subjects if s.proc.poll() is None and (name is None or s.name == name)
        ]

    def stop_all(self, timeout: float = 20.0) -> list[str]:
        """SIGTERM every live subject; return violations (a subject that did not exit 0)."""
        for subject in self.live():
            subject.terminated = True
            subject.signal(signal.SIGCONT)
            subject.signal(signal.SIGTERM)
        found = []
        deadline = time.monotonic() + timeout
        for subject in self.subjects:
            if not subject.terminated:
                continue
            try:
                code = subject.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                found.append(
                    f"{subject.name} pid {subject.pid} did not stop within {timeout:g} s of SIGTERM"
                )
                continue
            if code != 0:
                found.append(
                    f"{subject.name} pid {subject.pid} exited {code} after "
                    f"SIGTERM:\n{subject.output()}"
                )
        return found

    def cleanup(self) -> None:
        for subject in self.subjects:
            if subject.proc.poll() is None:
                subject.signal(signal.SIGCONT)
                subject.signal(signal.SIGKILL)
                subject.proc.wait(5)


# -- nemeses -------------------------------------------------------------------------------


def nemesis(name: str) -> Callable[[Callable[[Bench], None]], Callable[[Bench], None]]:
    def name_it(func: Callable[[Bench], None]) -> Callable[[Bench], None]:
        func.name = name  # type: ignore[attr-defined]
        return func

    return name_it


def pause_redis(seconds: float) -> Callable[[Bench], None]:
    """SIGSTOP the server for longer than the clients' socket timeout, then SIGCONT."""

    @nemesis(f"pause-redis-{seconds:g}s")
    def apply(bench: Bench) -> None:
        bench.sut.pause()
        try:
            time.sleep(seconds)
        finally:
            bench.sut.resume()

    return apply


def restart_redis(*, keep_data: bool, down: float = 1.0) -> Callable[[Bench], None]:
    """kill -9 the server and start it again after ``down`` seconds: with its
    data (AOF, the bench's sut must be a PersistentRedis) or empty."""

    @nemesis("restart-redis-keeping-data" if keep_data else "restart-redis-losing-data")
    def apply(bench: Bench) -> None:
        if keep_data:
            assert isinstance(bench.sut, PersistentRedis), "keeping data needs a PersistentRedis"
            bench.sut.kill()
            time.sleep(down)
            bench.sut.restart()
        else:
            bench.sut.kill()
            time.sleep(down)
            bench.sut.start()

    return apply


def fill_redis(seconds: float) -> Callable[[Bench], None]:
    """Redis is full (maxmemory reached, noeviction): every write is refused with
    OOM for ``seconds``, then there is room again."""

    @nemesis(f"redis-full-{seconds:g}s")
    def apply(bench: Bench) -> None:
        admin = redis.Redis(port=bench.sut.port)
        try:
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", max(1, int(admin.info("memory")["used_memory"]) - 1024))
            time.sleep(seconds)
        finally:
            admin.config_set("maxmemory", 0)
            admin.close()

    return apply


def drop_connections() -> Callable[[Bench], None]:
    """Close every client connection (as a proxy restart or an idle timeout would), twice."""

    @nemesis("drop-connections")
    def apply(bench: Bench) -> None:
        admin = redis.Redis(port=bench.sut.port)
        try:
            for _ in range(2):
                admin.client_kill_filter(_type="normal", skipme=True)
                admin.client_kill_filter(_type="pubsub", skipme=True)
                time.sleep(0.5)
        finally:
            admin.close()

    return apply


def kill_subject(
    which: str, index: int = 0, *, replace: Callable[[Bench], Any] | None = None
) -> Callable[[Bench], None]:
    """SIGKILL a live subject named ``which`` (and optionally start a replacement)."""

    @nemesis(f"sigkill-{which}")
    def apply(bench: Bench) -> None:
        victim = bench.live(which)[index]
        victim.killed = True
        victim.signal(signal.SIGKILL)
        victim.proc.wait(5)
        if replace is not None:
            replace(bench)

    return apply


def stop_subject(which: str, seconds: float, index: int = 0) -> Callable[[Bench], None]:
    """SIGSTOP a live subject for ``seconds`` (past its timeouts), then SIGCONT."""

    @nemesis(f"sigstop-{which}-{seconds:g}s")
    def apply(bench: Bench) -> None:
        victim = bench.live(which)[index]
        victim.signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            victim.signal(signal.SIGCONT)

    return apply


# -- checkers (each returns violations; empty: the property holds) ------------------------------


def processes_alive_or_failed(bench: Bench, name: str | None = None) -> list[str]:
    """Every subject not killed or stopped by the test is running, or exited non-zero.

    An exit 0 nobody asked for is how a supervisor is fooled: it does not
    restart a process that "finished".
    """
    found = []
    for subject in bench.subjects:
        if name is not None and subject.name != name:
            continue
        code = subject.proc.poll()
        if code == 0 and not subject.terminated:
            found.append(f"{subject.name} pid {subject.pid} exited 0 unasked:\n{subject.output()}")
    return found


def overlapping(intervals: Iterable[tuple[int, int, Any]]) -> list[str]:
    """Intervals (start, end, who) that overlap another: mutual exclusion broken."""
    ordered = sorted(intervals, key=lambda i: (i[0], i[1]))
    found = []
    latest_end, latest_who = -1, None
    for start, end, who in ordered:
        if start < latest_end:
            found.append(
                f"{who} entered at {start} while {latest_who} was inside until {latest_end}"
            )
        if end > latest_end:
            latest_end, latest_who = end, who
    return found


def tokens_out_of_order(sections: Iterable[tuple[int, int, int]]) -> list[str]:
    """Critical sections (enter, exit, token): a section that began after another
    ended must carry a larger token — fencing tokens grow in the order the lock
    passed on, also across a Redis that lost its data.

    Give only sections whose holder kept the lock to the end: the entry time of
    one paused right after its grant is recorded late (its token is older than
    its recorded entry), which is exactly the holder a fenced system refuses.
    """
    ordered = sorted(sections)
    by_exit = sorted(ordered, key=lambda s: s[1])
    found, done, highest = [], 0, None
    for enter, _exit, token in ordered:
        while done < len(by_exit) and by_exit[done][1] < enter:
            if highest is None or by_exit[done][2] > highest[2]:
                highest = by_exit[done]
            done += 1
        if highest is not None and token <= highest[2]:
            found.append(
                f"token {token} entering at {enter} is not above token {highest[2]}, "
                f"whose section ended at {highest[1]}"
            )
    return found


def unaccounted_tasks(
    expected: dict[str, str], runs: dict[str, int], results: dict[str, Any], dead_ids: set[str]
) -> list[str]:
    """Every task sent was run and its result agrees with its message.

    ``expected``: result id -> "ok" (must end SUCCESSFUL after running at
    least once) or "fail" (must end FAILED and be dead-lettered).
    ``runs``: result id -> times it ran (the oracle). ``results``: result id
    -> status name, or None when get_result found nothing.
    """
    found = []
    for rid, kind in expected.items():
        status = results.get(rid)
        if runs.get(rid, 0) < 1:
            found.append(f"task {rid} ({kind}) never ran (result {status})")
        if kind == "ok" and status != "SUCCESSFUL":
            found.append(f"task {rid} ran {runs.get(rid, 0)} time(s) but its result is {status}")
        if kind == "fail":
            if status != "FAILED":
                found.append(f"task {rid} always fails but its result is {status}")
            if rid not in dead_ids:
                found.append(f"task {rid} is FAILED but its message is not among the dead letters")
    return found


def leader_violations(runs: list[dict[str, Any]], *, slots_once: bool) -> list[str]:
    """Job runs recorded by tests/faults/jobs.py, checked for one leader acting at a time.

    Ordered by the oracle time they started, the terms never go down (a run
    of an older term starting after a newer term acted means two leaders);
    with ``slots_once`` each slot ran at most once.
    """
    found = [f"a run of term {v}" for v in _terms_going_down(runs)]
    if slots_once:
        seen: dict[int, dict[str, Any]] = {}
        for run in runs:
            if run["slot"] in seen:
                found.append(f"slot {run['slot']} ran twice: {seen[run['slot']]} and {run}")
            seen[run["slot"]] = run
    return found


def _terms_going_down(runs: list[dict[str, Any]]) -> list[str]:
    found = []
    highest = None
    for run in sorted(runs, key=lambda r: r["start"]):
        if highest is not None and run["term"] < highest["term"]:
            found.append(
                f"{run['term']} (pid {run['pid']}) started at {run['start']} after term "
                f"{highest['term']} (pid {highest['pid']}) had acted at {highest['start']}"
            )
        if highest is None or run["term"] > highest["term"]:
            highest = run
    return found


def held_past_owner(is_held: Callable[[], bool], ttl: float) -> list[str]:
    """Call right after a holder was killed: the lock must be free within ttl + 1 s."""
    deadline = time.monotonic() + ttl + 1.0
    while time.monotonic() < deadline:
        if not is_held():
            return []
        time.sleep(0.05)
    return [f"the lock was still held {ttl + 1:g} s after its holder was killed"]


def assert_none(violations: list[str], what: str) -> None:
    assert not violations, f"{what}: {len(violations)} violation(s):\n" + "\n".join(violations[:10])
