"""The fault scenario of schedule edits: real run_leader processes, edits during failovers, a
checker.

``scenario(bench, ...)`` starts three ``manage.py run_leader`` processes
running tests/support/schedule_jobs.py's ``sched.tick`` (every 0.5 s, misfire
"catchup"), then repeatedly edits its interval (and its argument ``v``, set to
the edit's version so each run says which edit it ran under) or reverts it,
while SIGKILLing or SIGSTOPping (past the lease) the leader, often with the
edits landing in the failover itself. ``schedule_violations`` then checks the
runs against the edits as Redis stored them (version, ``since``):

* no slot ran twice;
* every run is a slot of the version in force at that slot (since:v < slot <=
  since:v+1), and ran with that version's arguments;
* every slot due under the version in force, between the first and the last
  run, ran, except at most one per SIGKILLed leader (the run it had claimed
  when it died: documented, at most once).

``python -m tests.support.schedule_faults unsafe`` is the negative control: run_leader
with a scheduler that applies the newest edit at once to every slot it has
not run yet, and claims each with the version Redis expects, as a claim
without the version-window check would let it. The checker must catch it.
"""

from __future__ import annotations

import dataclasses
import importlib
import signal
import sys
import time
from typing import Any

from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection
from django_redcoord.core.periodic.jobs import get_jobs
from django_redcoord.core.periodic.scheduler import Scheduler
from django_redcoord.core.periodic.schedules import (
    Segment,
    Timeline,
    edit_schedule,
    revert_schedule,
)
from django_redcoord.core.transport.commands import as_text

from ..faults.harness import wait_for
from ..faults.oracle import entries

CODE_EVERY_MS = 500
# : Where sched.tick records its runs: tests.support.schedule_jobs.RUNS_KEY (importing that
# module registers
# its jobs).
RUNS_KEY = "schedule:runs"
#: The intervals the scenario edits to (ms), in turn.
INTERVALS = (300, 400, 700, 600, 250)


@dataclasses.dataclass(frozen=True)
class Edit:
    version: int
    since_ms: int
    every_ms: int  # the code's for a revert
    v: int  # the argument the runs of this version get (0: the code's default)


def _leader_pid(bench: Any) -> int | None:
    record = bench.client().hgetall(KeyBuilder(bench.prefix).leader(DEFAULT_ELECTION).record)
    identity = as_text(record.get(b"identity", b"")) if record else ""
    return int(identity.rsplit(":", 1)[1]) if ":" in identity else None


def _the_leader(bench: Any, timeout: float = 20.0) -> Any:
    def found() -> Any:
        pid = _leader_pid(bench)
        return next((s for s in bench.live("run_leader") if s.pid == pid), None)

    return wait_for(found, timeout, "a run_leader process to lead")


def scenario(
    bench: Any, runs_key: str, *, rounds: int = 4, unsafe: bool = False, kill: bool = True
) -> tuple[list[Edit], int, list[dict]]:
    """Run the scenario; return (the edits as stored, the SIGKILLs, the runs recorded).

    Rounds alternate SIGKILL and SIGSTOP of the leader (only SIGSTOP without ``kill``).
    """
    schedule_jobs = importlib.import_module(
        "tests.support.schedule_jobs"
    )  # registers sched.tick (the caller unregisters it)
    assert schedule_jobs.RUNS_KEY == runs_key

    job = get_jobs()["sched.tick"]
    election = LeaderElection(DEFAULT_ELECTION, client=bench.client(), prefix=bench.prefix)
    argv = (
        ["-m", "tests.support.schedule_faults", "unsafe"] if unsafe else ["manage.py", "run_leader"]
    )

    def start_leader() -> Any:
        return bench.spawn(
            "run_leader", argv, DJANGO_SETTINGS_MODULE="tests.support.schedule_settings"
        )

    for _ in range(3):
        start_leader()
    wait_for(lambda: len(entries(bench.oracle, runs_key)) >= 3, 30, "the first runs of sched.tick")
    edits: list[Edit] = []
    kills = 0

    def edit(i: int) -> None:
        if i % 5 == 4:
            stored = revert_schedule(election, job, by="fault-test")
            edits.append(Edit(stored.version, stored.since_ms, CODE_EVERY_MS, 0))
            return
        every = INTERVALS[i % len(INTERVALS)]
        version = (edits[-1].version if edits else 0) + 1
        stored = edit_schedule(
            election, job, every=every / 1000, params={"v": version}, by="fault-test"
        )
        assert stored.version == version
        edits.append(Edit(stored.version, stored.since_ms, every, version))

    def runs_after(count: int, more: int, what: str) -> None:
        wait_for(lambda: len(entries(bench.oracle, runs_key)) >= count + more, 30, what)

    step = 0
    for round_ in range(rounds):
        victim = _the_leader(bench)
        if (
            kill and round_ % 2 == 0
        ):  # SIGKILL the leader, edit twice while nobody leads, start a replacement
            victim.killed = True
            victim.signal(signal.SIGKILL)
            victim.proc.wait(5)
            kills += 1
            edit(step)
            time.sleep(0.6)
            edit(step + 1)
            start_leader()
        # SIGSTOP the leader past its lease: two edits before the next one takes over (lease 1.5 s)
        else:
            victim.signal(signal.SIGSTOP)
            edit(step)
            time.sleep(0.6)
            edit(step + 1)
            time.sleep(2.4)
            victim.signal(signal.SIGCONT)
        step += 2
        runs_after(len(entries(bench.oracle, runs_key)), 3, f"runs to go on after round {round_}")
        edit(step)  # and one while a leader runs
        step += 1
        time.sleep(0.8)
    last = edits[-1]
    wait_for(
        lambda: any(r["slot"] > last.since_ms + 1500 for r in entries(bench.oracle, runs_key)),
        30,
        "runs under the last edit",
    )
    # A replacement still importing Django has no SIGTERM handler yet: let every one start first.
    wait_for(
        lambda: all("campaigning" in s.output(100_000) for s in bench.live("run_leader")),
        30,
        "every run_leader process to start campaigning",
    )
    return edits, kills, entries(bench.oracle, runs_key)


def schedule_violations(runs: list[dict[str, Any]], edits: list[Edit], *, kills: int) -> list[str]:
    """What the runs did that the schedule in force did not say (see the module's docstring)."""
    versions = [Edit(0, -(2**62), CODE_EVERY_MS, 0), *edits]

    def version_at(slot: int) -> Edit:
        found = versions[0]
        for version in versions:
            if version.since_ms < slot:
                found = version
        return found

    found: list[str] = []
    seen: dict[int, dict[str, Any]] = {}
    for run in runs:
        slot = run["slot"]
        if slot in seen:
            found.append(f"slot {slot} ran twice: {seen[slot]} and {run}")
        seen[slot] = run
        version = version_at(slot)
        if slot % version.every_ms:
            found.append(
                f"slot {slot} ran (v={run['v']}, term {run['term']}) but is not a slot of version "
                f"{version.version} (every {version.every_ms} ms from {version.since_ms}) in force "
                "then"
            )
        elif run["v"] != version.v:
            found.append(
                f"slot {slot} ran with v={run['v']}, not version {version.version}'s v={version.v}"
            )
    if not seen:
        return ["no run recorded"]
    first, last = min(seen), max(seen)
    lost = []
    for i, version in enumerate(versions):
        ends = versions[i + 1].since_ms if i + 1 < len(versions) else last
        low, high = max(version.since_ms, first), min(ends, last)
        slot = (low // version.every_ms + 1) * version.every_ms
        while slot <= high:
            if slot not in seen:
                lost.append(
                    f"slot {slot} due under version {version.version} (every {version.every_ms} "
                    "ms) never ran"
                )
            slot += version.every_ms
    if len(lost) > kills:
        found.append(
            f"{len(lost)} slot(s) lost, more than the {kills} a SIGKILLed leader may take with it:"
        )
        found.extend(lost)
    return found


# --- the negative control: edits applied at once, without the version window --------------------


class UnsafeScheduler(Scheduler):
    """Computes every slot from the newest edit (as if it had always been in force) and claims it
    with the version whose window holds it: what a claim without the version check would accept."""

    def _timeline(self, job: Any) -> Timeline:
        real = super()._timeline(job)
        naive = object.__new__(Timeline)
        naive.job, naive.head, naive.problems = job, real.head, []
        naive.segments = (dataclasses.replace(real.current, since_ms=None, until_ms=None),)
        naive.real = real  # type: ignore[attr-defined]
        return naive

    def _claim_segment(self, job: Any, slot: int) -> Segment:
        real = self._timeline(job).real  # type: ignore[attr-defined]
        holder = real.segment_of(slot)
        return dataclasses.replace(
            self._timeline(job).current, version=holder.version, since_ms=holder.since_ms
        )


def _unsafe() -> int:
    import django
    from django.core.management import call_command

    django.setup()
    from django_redcoord.core.periodic import server

    server.Scheduler = UnsafeScheduler  # type: ignore[misc]  (run_leader serves through it)
    call_command("run_leader")
    return 0


if __name__ == "__main__":
    sys.exit({"unsafe": _unsafe}[sys.argv[1]]())
