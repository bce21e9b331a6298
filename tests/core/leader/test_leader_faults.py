"""Leader election and periodic jobs with real OS processes and real signals.

Three ``manage.py run_leader`` processes (tests/support/leader_settings.py: lease
1.5 s, renew deadline 1 s, retry 0.25 s) run ``tests.support.leader_jobs.tick`` every
0.5 s with misfire="catchup"; each run appends {slot, pid, term} to a Redis
list. The oracle, checked after every scenario:

* every slot between the first and the last recorded appears exactly once
  (no duplicates, no gaps), whatever was killed, stopped or terminated;
* one leader per term: sampled every few ms, the Redis record maps each term
  to one identity, and terms never go down; every run of a term came from
  the process that held that term, while it believed it still led.

Leaders are killed right after a run was recorded: a leader killed between
claiming a slot and running it loses that run by design (at most once), so
the kill lands where that cannot happen.

The negative control runs the same checker over two runners that both
believe they lead, once with the term-fenced claim and once with the claim
bypassed: only the bypassed one produces duplicates.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic.jobs import Job, current_job
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.transport.clients import client_from_url

from ...support import multiproc
from ...support.leader_jobs import SLOTS_KEY

ROOT = Path(__file__).resolve().parents[3]
LEASE, RENEW_DEADLINE, RETRY = 1.5, 1.0, 0.25
EVERY_MS = 500
PREFIX = "leadertest"


def check_exactly_once(slots: list[int], every_ms: int = EVERY_MS) -> tuple[list[int], list[int]]:
    """(duplicated slots, missing slots between the first and the last)."""
    counts = Counter(slots)
    duplicates = sorted(s for s, n in counts.items() if n > 1)
    if not counts:
        return duplicates, []
    first, last = min(counts), max(counts)
    return duplicates, [s for s in range(first, last + every_ms, every_ms) if s not in counts]


class Fleet:
    """run_leader processes on one Redis, plus a sampler of the leader record."""

    def __init__(self, url: str, logs: Path) -> None:
        self.url, self.logs = url, logs
        self.client = client_from_url(url)
        self.keys = KeyBuilder(PREFIX).leader("default")
        self.procs: dict[str, subprocess.Popen] = {}
        self.killed: set[str] = set()  # SIGKILLed by the test: its exit status is -9, not ours
        self.samples: list[tuple[float, str, int]] = []
        self._sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def spawn(self, n: int = 1, **settings: str) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.support.leader_settings",
            "REDCOORD_REDIS_URL": self.url,
            "REDCOORD_KEY_PREFIX": PREFIX,
            **settings,
        }
        for _ in range(n):
            name = f"p{len(self.procs)}"
            with open(self.logs / f"{name}.log", "w") as log:
                self.procs[name] = subprocess.Popen(
                    [sys.executable, "manage.py", "run_leader", "--identity", name],
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
        if not self._sampler.is_alive():
            self._sampler.start()

    def _sample(self) -> None:
        client = client_from_url(self.url)
        while not self._sampling.wait(0.005):
            identity, term = client.hmget(self.keys.record, "identity", "term")
            if identity is not None:
                self.samples.append((time.monotonic(), identity.decode(), int(term)))

    def leader(self) -> tuple[str, int] | None:
        identity, term = self.client.hmget(self.keys.record, "identity", "term")
        return None if identity is None else (identity.decode(), int(term))

    def wait_leader(self, above: int = 0, timeout: float = 20.0) -> tuple[str, int, float]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.leader()
            if found and found[1] > above:
                return found[0], found[1], time.monotonic()
            time.sleep(0.002)
        raise AssertionError(
            f"no leader with a term above {above} within {timeout} s:\n{self.tail()}"
        )

    def wait_runs(self, n: int = 1, timeout: float = 15.0) -> None:
        """Wait until ``n`` more runs were recorded; returns right after the last one."""
        target = self.client.llen(SLOTS_KEY) + n
        deadline = time.monotonic() + timeout
        while self.client.llen(SLOTS_KEY) < target:
            if time.monotonic() > deadline:
                raise AssertionError(f"fewer than {n} runs within {timeout} s:\n{self.tail()}")
            time.sleep(0.002)

    def signal(self, name: str, signum: int) -> None:
        if signum == signal.SIGKILL:
            self.killed.add(name)
        os.kill(self.procs[name].pid, signum)

    def entries(self) -> list[dict]:
        return [json.loads(e) for e in self.client.lrange(SLOTS_KEY, 0, -1)]

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()

    def tail(self) -> str:
        return "\n".join(
            f"--- {n}\n" + "\n".join(self.log(n).splitlines()[-8:]) for n in self.procs
        )

    def wait_ready(self, name: str, timeout: float = 20.0) -> None:
        """Wait until ``name`` campaigns (before that, SIGTERM just kills a booting Python)."""
        deadline = time.monotonic() + timeout
        while "campaigning in election" not in self.log(name):
            if time.monotonic() > deadline or self.procs[name].poll() is not None:
                raise AssertionError(f"{name} did not start:\n{self.log(name)[-2000:]}")
            time.sleep(0.01)

    def stop_all(self, timeout: float = 15.0) -> None:
        """SIGTERM every process still running and expect each to exit 0 (one the test SIGKILLed
        may still be dying on a loaded machine: it must end with -9)."""
        for name in self.killed:
            code = self.procs[name].wait(timeout)
            assert code == -signal.SIGKILL, f"{name} was SIGKILLed but exited with {code}"
        alive = {n: p for n, p in self.procs.items() if n not in self.killed and p.poll() is None}
        for name in alive:
            self.wait_ready(name)
        for proc in alive.values():
            proc.send_signal(signal.SIGCONT)
            proc.send_signal(signal.SIGTERM)
        for name, proc in alive.items():
            assert proc.wait(timeout) == 0, (
                f"{name} exited with {proc.returncode}:\n{self.log(name)[-2000:]}"
            )

    def kill_all(self) -> None:
        self._sampling.set()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            proc.wait(10)
        self.client.close()

    def check(self) -> list[dict]:
        """The oracle: exactly once per slot, one leader per term. Returns the entries."""
        self._sampling.set()
        entries = self.entries()
        duplicates, gaps = check_exactly_once([e["slot"] for e in entries])
        assert not duplicates and not gaps, f"duplicates {duplicates}, gaps {gaps}"
        holder: dict[int, str] = {}
        last_term = 0
        for _, identity, term in self.samples:
            assert term >= last_term, f"the term went down: {last_term} -> {term}"
            assert holder.setdefault(term, identity) == identity, (
                f"term {term} held by two identities"
            )
            last_term = term
        pids = {name: proc.pid for name, proc in self.procs.items()}
        terms_in_slot_order = [e["term"] for e in sorted(entries, key=lambda e: e["slot"])]
        assert terms_in_slot_order == sorted(terms_in_slot_order), (
            "a later slot ran under an older term"
        )
        for entry in entries:
            assert entry["leader"], f"a run did not lead any more when it ran: {entry}"
            if entry["term"] in holder:
                assert entry["pid"] == pids[holder[entry["term"]]], (
                    f"run of term {entry['term']} by another process"
                )
        return entries


@pytest.fixture
def fleet(redis_url, tmp_path):
    fleet = Fleet(redis_url, tmp_path)
    try:
        yield fleet
    finally:
        fleet.kill_all()


def test_sigkilled_leader_is_replaced_within_lease_plus_retry_by_a_higher_term(fleet):
    fleet.spawn(3)
    leader, term, _ = fleet.wait_leader()
    fleet.wait_runs(2)
    fleet.signal(leader, signal.SIGKILL)
    killed_at = time.monotonic()
    new, new_term, elected_at = fleet.wait_leader(above=term)
    assert new != leader and new_term > term
    assert elected_at - killed_at <= LEASE + RETRY + 0.5, elected_at - killed_at
    fleet.wait_runs(5)  # the slots missed during the failover are caught up, then more
    fleet.stop_all()
    entries = fleet.check()
    assert {e["term"] for e in entries} == {term, new_term}


def test_sigstopped_leader_runs_nothing_under_its_old_term_and_stands_down(fleet):
    fleet.spawn(3)
    leader, term, _ = fleet.wait_leader()
    fleet.wait_runs(2)
    fleet.signal(leader, signal.SIGSTOP)
    stopped_at = time.time()
    new, new_term, _ = fleet.wait_leader(above=term, timeout=LEASE + RETRY + 2)
    assert new != leader
    fleet.wait_runs(3)
    fleet.signal(leader, signal.SIGCONT)
    time.sleep(4 * RETRY)
    fleet.wait_runs(3)
    assert fleet.leader() == (new, new_term)  # the incumbent kept leading
    fleet.stop_all()
    entries = fleet.check()
    late_old_term = [e for e in entries if e["term"] == term and e["at"] > stopped_at]
    assert not late_old_term, late_old_term
    assert f"{leader} stepped down from term {term}" in fleet.log(leader)


def test_sigterm_hands_leadership_to_a_standby_long_before_the_lease_would_end(fleet):
    # A lease of 6 s: a standby that took over only when the resigned lease ran out would come in
    # after 5.75 s at the earliest (the lease less one retry period); a resignation hands over at
    # once (a few ms; 2.5 s leaves room for a machine loaded by other tests).
    lease = 6.0
    fleet.spawn(3, LEADER_TEST_LEASE=str(lease), LEADER_TEST_RENEW_DEADLINE="4")
    leader, term, _ = fleet.wait_leader()
    fleet.wait_runs(2)
    fleet.signal(leader, signal.SIGTERM)
    signalled_at = time.monotonic()
    new, new_term, elected_at = fleet.wait_leader(above=term, timeout=lease + 5)
    assert elected_at - signalled_at < 2.5, elected_at - signalled_at
    assert new != leader and new_term > term
    assert fleet.procs[leader].wait(10) == 0
    assert f"{leader} stepped down from term {term}: resigned" in fleet.log(leader)
    fleet.wait_runs(3)
    fleet.stop_all()
    fleet.check()


def test_every_slot_runs_exactly_once_across_repeated_failovers(fleet):
    fleet.spawn(3)
    _, term, _ = fleet.wait_leader()
    fleet.wait_runs(2)
    for signum in (signal.SIGKILL, signal.SIGTERM, signal.SIGKILL, signal.SIGTERM):
        leader, term = fleet.leader()
        fleet.wait_runs(1)
        fleet.signal(leader, signum)
        fleet.spawn(1)  # keep three candidates
        _, term, _ = fleet.wait_leader(above=term)
        fleet.wait_runs(2)
    fleet.stop_all()
    entries = fleet.check()
    assert len({e["term"] for e in entries}) == 5
    assert len(entries) >= 12


def test_the_checker_finds_duplicates_and_gaps():
    assert check_exactly_once([0, 500, 1000, 1500]) == ([], [])
    assert check_exactly_once([0, 500, 500, 1000]) == ([500], [])
    assert check_exactly_once([0, 500, 1500]) == ([], [1000])


# --- negative control: a leader of an old term that still believes it leads -------------


def _record_run(url: str, key: str) -> None:
    job = current_job()
    client = client_from_url(url)
    client.rpush(key, json.dumps({"slot": job.slot_ms, "pid": os.getpid(), "term": job.term}))
    client.close()


class ClaimBypassed(Scheduler):
    """The same runner without periodic/claim.lua: it trusts its own belief that it leads."""

    def _claim(self, job, mode, slot, missed, term, token):
        self._last[job.name] = slot
        if mode != "skip":
            self._start(job, str(slot), slot, term)
        return True


def believer(index: int, url: str, bypass: bool, seconds: float, ready) -> int:
    """index 1 leads first, then believes it leads forever without renewing (a paused
    leader that resumed); index 0 is elected once that record expires. Both tick."""
    client = client_from_url(url)
    election = LeaderElection(
        "nc",
        lease=LEASE,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY,
        identity=f"n{index}",
        client=client,
        prefix="nc",
    )
    job = Job(
        "tick", lambda: _record_run(url, "nc:slots"), EVERY_MS, None, None, 0.0, False, "catchup"
    )
    scheduler = (ClaimBypassed if bypass else Scheduler)(election, [job])
    if index == 1:
        assert election.campaign()
        election._lead = election._lead._replace(valid_until=math.inf)  # never notices
        ready.put("leading")
    else:
        election.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        wait = scheduler.tick(time.time())
        time.sleep(min(wait, 0.02))
    scheduler.wait_idle(5)
    election.stop()
    return 0


def _split_brain(redis_url: str, redis_client, bypass: bool) -> list[dict]:
    ready = multiproc.queue()
    old = multiproc.start(believer, redis_url, bypass, 4.0, ready, index=1)
    new = None
    try:
        assert ready.get(timeout=10) == "leading"
        new = multiproc.start(believer, redis_url, bypass, 3.5, ready, index=0)
        old.result(30)
        new.result(30)
    finally:
        old.stop()
        if new is not None:
            new.stop()
    return [json.loads(e) for e in redis_client.lrange("nc:slots", 0, -1)]


def test_negative_control_bypassing_the_claim_runs_slots_twice(redis_url, redis_client):
    entries = _split_brain(redis_url, redis_client, bypass=True)
    duplicates, _ = check_exactly_once([e["slot"] for e in entries])
    assert len(duplicates) >= 2, (
        "the checker failed to catch a runner without the term-fenced claim"
    )
    assert len({e["term"] for e in entries}) == 2


def test_the_claim_fences_the_same_split_brain(redis_url, redis_client):
    entries = _split_brain(redis_url, redis_client, bypass=False)
    duplicates, gaps = check_exactly_once([e["slot"] for e in entries])
    assert not duplicates and not gaps and len(entries) >= 3
    terms = sorted({e["term"] for e in entries})
    assert len(terms) <= 2 and all(e["term"] == terms[-1] for e in entries[-3:])
