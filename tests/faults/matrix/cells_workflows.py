"""Cells of workflows of Django Tasks (``chain``, ``group``, ``chord``: tasks/workflows.py,
core/lua/tasks/workflow.lua).

What they guarantee: every workflow reaches SUCCESSFUL or FAILED (a member has ended when its
result record is final: its run, its dead letter, a cancel, or the record gone), its members'
states agreeing with their records; each member and the callback start once, the callback as
the policy says (a member or callback no nemesis struck while it ran runs exactly once); a
member whose worker was SIGKILLed or SIGSTOPped past its lease is delivered again (or
dead-lettered, its last attempt spent) and its workflow moves on, by the worker that ran it or
by a worker's sweep. Redis restarted with its data (AOF) keeps the workflows going; restarted
empty, it loses them (documented): they read GONE, nothing of them starts any more, and no error
escapes the workers or their sweeps.

Each cell runs real Tasks workers (the worker and runner ``manage.py run_worker`` builds), in a
thread or a forked process. The members are tests/support/workflow_tasks.py's: ``record`` and
``fail`` count their runs (``wt:count``), ``hold`` runs until the cell sets ``wt:release``.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.test import override_settings

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.transport.commands import as_text
from django_redcoord.tasks import Workflow, chain, chord, get_workflow, group, step
from django_redcoord.tasks import task_backends_for as backend_for

from ...support import workflow_tasks as wt
from ..names import HOSTILE, HOSTILE_QUEUE, hostile
from .cells_tasks import _serving, _until, _worker, tasks_on
from .context import LEASE, PAUSE, Ctx, describe, keys_tagged_by, outage_claim
from .table import cell

try:
    from django.tasks.exceptions import TaskResultDoesNotExist
except ImportError:
    from django_tasks.exceptions import TaskResultDoesNotExist

FINAL = ("SUCCESSFUL", "FAILED")
#: what a member's (or the callback's) state says its result record reads
RECORD_OF = {"succeeded": "SUCCESSFUL", "failed": "FAILED"}


# -- the shared checks -----------------------------------------------------------------------


@dataclass(frozen=True)
class Want:
    """How a workflow must end: its status, its members' states (in order), its callback's
    (None: it has none), the labels that ran exactly once, those that never ran."""

    status: str
    members: tuple[str, ...]
    callback: str | None = None
    once: tuple[str, ...] = ()
    never: tuple[str, ...] = ()


def _counts(client: Any, key: str = "wt:count") -> dict[str, int]:
    return {as_text(k): int(v) for k, v in client.hgetall(key).items()}


def _show(w: Workflow) -> str:
    states = [m["state"] for m in w.members]
    callback = w.callback["state"] if w.callback else "none"
    return f"status {w.status}, members {states}, callback {callback}"


def _ended(flows: dict[str, Workflow], seconds: float) -> list[str]:
    """Wait until every workflow of ``flows`` ended (or reads GONE), at most ``seconds``;
    violations for those that did not end."""
    deadline = time.monotonic() + seconds
    left = dict(flows)
    while left:
        for name, w in list(left.items()):
            try:
                if w.refresh().status in (*FINAL, "GONE"):
                    del left[name]
            except CoordinationUnavailable:
                pass  # (the server just came back: ask again)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return [
        f"workflow {name!r} ({w.kind}) did not end within {seconds:g} s: {_show(w)}"
        for name, w in flows.items()
        if w.status not in FINAL
    ]


def _records(backend: Any, name: str, w: Workflow) -> list[str]:
    """Each member (and callback) counted as ended reads as its result record ended."""
    found = []
    for i, m in enumerate([*w.members, *([w.callback] if w.callback else [])]):
        want = RECORD_OF.get(m["state"])
        if want is None:
            continue
        try:
            status = str(backend.get_result(m["id"]).status)
        except TaskResultDoesNotExist:
            status = "gone"
        if status != want and not (want == "FAILED" and status == "gone"):
            what = "the callback" if i == len(w.members) else f"member {i}"
            found.append(
                f"workflow {name!r}: {what} was counted {m['state']}, its record reads {status}"
            )
    return found


def _check(backend: Any, client: Any, flows: dict[str, Workflow], wants: dict[str, Want]) -> list:
    """The ended workflows against what each must be (see :class:`Want`; one that did not end
    was reported by :func:`_ended`: only what must never run is checked of it)."""
    found = []
    counts = _counts(client)
    for name, want in wants.items():
        w = flows.get(name)
        if w is None:
            found.append(f"workflow {name!r} was never enqueued")
            continue
        found += [
            f"workflow {name!r}: {label!r} ran {counts[label]} time(s), it must never run"
            for label in want.never
            if counts.get(label, 0)
        ]
        if w.status not in FINAL:
            continue
        states = tuple(m["state"] for m in w.members)
        callback = w.callback["state"] if w.callback else None
        if (w.status, states, callback) != (want.status, want.members, want.callback):
            found.append(
                f"workflow {name!r} ended {_show(w)} (want status {want.status}, members "
                f"{list(want.members)}, callback {want.callback or 'none'})"
            )
        found += [
            f"workflow {name!r}: {label!r} ran {counts.get(label, 0)} time(s), not once"
            for label in want.once
            if counts.get(label, 0) != 1
        ]
        found += _records(backend, name, w)
    return found


@contextmanager
def _errors_logged() -> Iterator[list[str]]:
    """The errors with a traceback our loggers report meanwhile (an error that escaped a move
    on, a sweep or a worker's thread: each is a violation)."""
    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info and record.levelno >= logging.ERROR:
                exc = record.exc_info[1]
                seen.append(
                    f"an error escaped ({record.name}): {record.getMessage()}: "
                    f"{describe(exc) if exc else ''}"
                )

    handler = Catch(logging.ERROR)
    logger = logging.getLogger("django_redcoord")
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def _not_started(flows: dict[str, Workflow], labels: str) -> list[str]:
    """The violation of held members that never started (their workflows did not move on)."""
    states = "; ".join(f"{name}: {_show(w.refresh())}" for name, w in flows.items())
    return [f"the members {labels} did not start within the time allowed ({states})"]


def _started(client: Any, *labels: str) -> bool:
    starts = _counts(client, "wt:starts")
    return all(starts.get(x, 0) >= 1 for x in labels)


def _mix(i: int, tag: str = "", *, seeing: bool = True) -> tuple[Any, Want]:
    """The i-th of six workflows, one of each shape: a chain that succeeds, a chord whose
    callback sees its members (``seeing``; else a plain one), a chord whose member fails
    (run_callback), a chain whose middle fails (continue), a chain whose middle fails
    (fail_fast: the rest is skipped), a group without a callback."""
    p = f"{tag}{i}:"
    r, f = wt.record, wt.fail
    ok = "succeeded"
    kind = i % 6
    if kind == 0:
        labels = (f"{p}0", f"{p}1", f"{p}2")
        return chain(*(step(r, x) for x in labels)), Want("SUCCESSFUL", (ok,) * 3, None, labels)
    if kind == 1:
        labels = (f"{p}a", f"{p}b", f"{p}c")
        spec = chord([step(r, x) for x in labels], then=step(wt.collect if seeing else r, f"{p}cb"))
        return spec, Want("SUCCESSFUL", (ok,) * 3, ok, (*labels, f"{p}cb"))
    if kind == 2:
        spec = chord(
            [step(r, f"{p}a"), step(f, f"{p}b")], then=step(r, f"{p}cb"), on_failure="run_callback"
        )
        return spec, Want("FAILED", (ok, "failed"), ok, (f"{p}a", f"{p}b", f"{p}cb"))
    if kind == 3:
        spec = chain(
            step(r, f"{p}1"),
            step(f, f"{p}2"),
            step(r, f"{p}3"),
            then=step(r, f"{p}cb"),
            on_failure="continue",
        )
        return spec, Want("FAILED", (ok, "failed", ok), ok, (f"{p}1", f"{p}2", f"{p}3", f"{p}cb"))
    if kind == 4:
        spec = chain(step(r, f"{p}1"), step(f, f"{p}2"), step(r, f"{p}3"), then=step(r, f"{p}cb"))
        return spec, Want(
            "FAILED", (ok, "failed", "skipped"), "skipped", (f"{p}1", f"{p}2"), (f"{p}3", f"{p}cb")
        )
    labels = (f"{p}a", f"{p}b")
    return group([step(r, x) for x in labels]), Want("SUCCESSFUL", (ok,) * 2, None, labels)


def _workflow_ids(client: Any, prefix: str) -> list[str]:
    """The ids of the workflows whose hash is on the (one) server."""
    ids = []
    for key in client.scan_iter(f"{prefix}:workflow:*", count=1000):
        key = as_text(key)
        start = key.find("{")
        if start >= 0 and key.endswith("}"):
            ids.append(key[start + 1 : -1])
    return ids


def _release(ctx: Ctx) -> None:
    """Let the ``hold`` members end (a client of its own: the cell's may have been struck)."""
    ctx.client().set("wt:release", 1)


# -- one server ------------------------------------------------------------------------------


@cell(
    "workflow",
    "restart-with-data",
    "a chain and a chord whose members run across a kill -9 and AOF restart go on: both end "
    "SUCCESSFUL, the chain's next member and each callback start once (the chord's sees its "
    "members succeeded), no error escapes the worker, which keeps serving",
)
def workflow_restart_with_data(ctx: Ctx, *, keep_data: bool = True) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with (
        tasks_on(ctx, WORKER_PREFETCH=1) as backend,
        _errors_logged() as errors,
        _serving(backend, found, concurrency=3),
    ):
        r = wt.record
        flows = {
            "chain": chain(
                step(r, "a1"), step(wt.hold, "a2"), step(r, "a3"), then=step(r, "a-cb")
            ).enqueue(),
            "chord": chord(
                [step(r, "b1"), step(wt.hold, "b2")], then=step(wt.collect, "b-cb")
            ).enqueue(),
        }
        if not _until(lambda: _started(client, "a2", "b2"), 10):
            return found + errors + _not_started(flows, "a2 and b2")
        ctx.restart(keep_data=keep_data)
        _release(ctx)
        found += _ended(flows, 15)
        client = ctx.client()
        found += _check(
            backend,
            client,
            flows,
            {
                "chain": Want("SUCCESSFUL", ("succeeded",) * 3, "succeeded", ("a1", "a3", "a-cb")),
                "chord": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("b1", "b-cb")),
            },
        )
        seen = as_text(client.get("wt:seen:b-cb") or b"")
        if not seen.startswith("succeeded,succeeded|"):
            found.append(f"the chord's callback saw its members as {seen.split('|')[0]!r}")
    return found + errors


@cell(
    "workflow",
    "restart-without-data",
    "what Redis held is lost (documented): the workflows read GONE and a cancel of one answers "
    "GONE; nothing of them starts any more though their running members end; no error escapes "
    "the workers or their sweeps; workflows enqueued afterwards end as their policy says, each "
    "member and callback once",
)
def workflow_data_loss(ctx: Ctx) -> list[str]:
    from django_redcoord.tasks.workflows import SWEEP_AFTER

    found: list[str] = []
    client = ctx.client()
    with (
        tasks_on(ctx, WORKER_PREFETCH=1) as backend,
        _errors_logged() as errors,
        _serving(backend, found, concurrency=3),
    ):
        r = wt.record
        lost = {
            "chain": chain(
                step(r, "l1"), step(wt.hold, "l2"), step(r, "l3"), then=step(r, "l-cb")
            ).enqueue(),
            "chord": chord([step(wt.hold, "m1"), step(r, "m2")], then=step(r, "m-cb")).enqueue(),
        }
        if not _until(lambda: _started(client, "l2", "m1") and _counts(client).get("m2"), 10):
            return found + errors + _not_started(lost, "l2, m1 and m2")
        ctx.restart(keep_data=False)
        client = ctx.client()
        for name, w in lost.items():
            try:
                if (status := get_workflow(w.id).status) != "GONE":
                    found.append(f"the lost workflow {name!r} reads {status}, not GONE")
                if (status := w.cancel()) != "GONE":
                    found.append(f"a cancel of the lost workflow {name!r} answered {status}")
            except Exception as exc:
                found.append(f"reading or cancelling the lost workflow {name!r}: {describe(exc)}")
        _release(ctx)
        _until(lambda: {"l2", "m1"} <= set(_counts(client)), 5)
        time.sleep(SWEEP_AFTER + 1.5)  # the held members ended: their moves on, some sweeps
        flows = {}
        wants = {}
        for i in range(6):
            spec, want = _mix(i, "after:")
            flows[f"after {i}"], wants[f"after {i}"] = spec.enqueue(), want
        found += _ended(flows, 10)
        found += _check(backend, client, flows, wants)
        ran = _counts(client)
        found += [
            f"{x!r} of a lost workflow ran {ran[x]} time(s) after the data loss"
            for x in ("l3", "l-cb", "m-cb")
            if ran.get(x)
        ]
        for name, w in lost.items():
            if (status := w.refresh().status) != "GONE":
                found.append(f"the lost workflow {name!r} came back: {status}")
    return found + errors


@cell(
    "workflow",
    "connection-kill",
    "a Tasks worker idle on its wake list when its connections are killed goes on: a chain and "
    "a chord enqueued afterwards end within 4 s (each member moved on by the worker that ran "
    "the one before, not left to a sweep), and a chain whose running member's worker loses its "
    "connections again moves on within 4 s of the member's end; each runs once",
)
def workflow_connection_kill(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with (
        tasks_on(ctx, WORKER_PREFETCH=1) as backend,
        _errors_logged() as errors,
        _serving(backend, found, concurrency=2),
    ):
        r = wt.record
        ctx.wait_blocked(1)
        ctx.kill_connections()
        time.sleep(0.1)
        flows = {
            "chain": chain(step(r, "k1"), step(r, "k2"), step(r, "k3"), then=step(r, "k-cb")),
            "chord": chord([step(r, "j1"), step(r, "j2")], then=step(wt.collect, "j-cb")),
        }
        flows = {name: spec.enqueue() for name, spec in flows.items()}
        found += _ended(flows, 4.0)
        flows["held"] = chain(step(wt.hold, "h1"), step(r, "h2"), then=step(r, "h-cb")).enqueue()
        client = ctx.client()
        if not _until(lambda: _started(client, "h1"), 5):
            return found + errors + _not_started(flows, "h1")
        ctx.kill_connections()
        time.sleep(0.1)
        _release(ctx)
        client = ctx.client()
        _until(lambda: "h1" in _counts(client), 5)
        found += _ended(flows, 4.0)
        found += _check(
            backend,
            client,
            flows,
            {
                "chain": Want(
                    "SUCCESSFUL", ("succeeded",) * 3, "succeeded", ("k1", "k2", "k3", "k-cb")
                ),
                "chord": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("j1", "j2", "j-cb")),
                "held": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("h1", "h2", "h-cb")),
            },
        )
    return found + errors


@cell(
    "workflow",
    "paused-server",
    "a workflow's enqueue during the pause raises CoordinationUnavailable and leaves nothing "
    "that hangs (no workflow, or one that ends, each member at most once); a member that ended "
    "during the pause moves its chain on afterwards; workflows enqueued after it end; the "
    "worker rides it out",
)
def workflow_paused(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with (
        tasks_on(ctx, WORKER_PREFETCH=1) as backend,
        _errors_logged() as errors,
        _serving(backend, found, concurrency=2),
    ):
        r = wt.record
        flows = {
            "napping": chain(step(wt.nap, "p1", 0.4), step(r, "p2"), then=step(r, "p-cb")).enqueue()
        }
        if not _until(lambda: _started(client, "p1"), 5):
            return found + errors + _not_started(flows, "p1")
        resume = ctx.pause(PAUSE)
        try:
            chain(step(r, "x1"), step(r, "x2"), then=step(r, "x-cb")).enqueue()
            found.append("a workflow's enqueue on a paused server succeeded")
        except CoordinationUnavailable:
            pass
        except Exception as exc:
            found.append(f"a workflow's enqueue on a paused server raised {describe(exc)}")
        resume.join()
        client = ctx.client()
        known = {w.id for w in flows.values()}
        refused = {
            f"refused {wid}": Workflow(wid, backend.alias)
            for wid in _workflow_ids(client, ctx.prefix)
            if wid not in known
        }
        flows.update(refused)
        flows["after"] = chain(step(r, "q1"), step(r, "q2"), then=step(r, "q-cb")).enqueue()
        found += _ended(flows, 15)
        wants = {
            "napping": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("p2", "p-cb")),
            "after": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("q1", "q2", "q-cb")),
        }
        found += _check(backend, client, flows, wants)
        ran = _counts(client)
        found += [
            f"{x!r} of the refused enqueue ran {ran[x]} times"
            for x in ("x1", "x2", "x-cb")
            if ran.get(x, 0) > 1
        ]
        if not refused and any(ran.get(x) for x in ("x1", "x2", "x-cb")):
            found.append("members of the refused enqueue ran, but it left no workflow")
    return found + errors


def _worker_process(index: int, report: Any, go: Any) -> str:
    """A Tasks worker of three threads in a forked process (the parent's settings, inherited)."""
    worker, running = _worker(backend_for("default"), concurrency=3)
    report.put("up")
    go.wait(60)
    worker.stop()
    kind, value = running.outcome(10)
    return f"{kind}: {describe(value)}" if isinstance(value, BaseException) else kind


def workflow_holder(ctx: Ctx, *, stop: bool) -> list[str]:
    """A worker process runs three members (A and B of a chord, B of one attempt; C, the first
    of a chain), each held until told, and is struck; a worker of this process takes over."""
    from ...support import multiproc

    found: list[str] = []
    client = ctx.client()
    with tasks_on(ctx, WORKER_PREFETCH=1) as backend, _errors_logged() as errors:
        report, go = multiproc.queue(), multiproc.event()
        proc = ctx.process(_worker_process, report, go)
        report.get(timeout=15)
        flows = {
            "chord": chord(
                [step(wt.hold, "A"), step(wt.hold_once, "B")],
                then=step(wt.record, "AB-cb"),
                on_failure="run_callback",
            ).enqueue(),
            "chain": chain(
                step(wt.hold, "C"), step(wt.record, "C2"), then=step(wt.record, "C-cb")
            ).enqueue(),
        }
        if not _until(lambda: _started(client, "A", "B", "C"), 10):
            go.set()
            return _not_started(flows, "A, B and C (in the worker process)")
        pids = {as_text(client.get(f"wt:running:{x}")) for x in "ABC"}
        if pids != {str(proc.pid)}:
            return [f"the members ran in processes {pids}, not the worker process {proc.pid}"]
        proc.signal(signal.SIGSTOP if stop else signal.SIGKILL)
        client.delete(*(f"wt:running:{x}" for x in "ABC"))
        worker, running = _worker(backend, concurrency=3)
        try:
            if not _until(
                lambda: client.exists("wt:running:A") and client.exists("wt:running:C"), LEASE + 6
            ):
                found.append("the struck worker's members A and C were not delivered again")
            if stop:
                proc.signal(signal.SIGCONT)
            _release(ctx)
            found += _ended(flows, 15)
            # B, of one attempt, is dead-lettered: it failed, and the chord runs its callback
            found += _check(
                backend,
                client,
                flows,
                {
                    "chord": Want("FAILED", ("succeeded", "failed"), "succeeded", ("AB-cb",)),
                    "chain": Want("SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("C2", "C-cb")),
                },
            )
            starts = _counts(client, "wt:starts")
            want = {"A": 2, "B": 1, "C": 2}
            if {x: starts.get(x, 0) for x in want} != want:
                found.append(f"the held members started {starts} times (want {want})")
            if running.done():
                found.append(f"the worker that took over stopped: {running.outcome(0)}")
            if stop:
                go.set()
                if (outcome := proc.result(20)) != "ok":
                    found.append(f"the resumed worker process ended {outcome}")
        finally:
            if stop:  # (a SIGKILLed waiter would hold up set() forever)
                go.set()
            worker.stop()
            running.join(5)
    return found + errors


cell(
    "workflow",
    "holder-sigkill",
    "the members a SIGKILLed worker ran are delivered again once its lease lapsed, or "
    "dead-lettered (their last attempt spent) and counted failed; each workflow ends as its "
    "policy says (a chord's callback runs after a dead-lettered member under run_callback, a "
    "chain moves on), each callback and next member starting once",
    smoke=True,
)(lambda ctx: workflow_holder(ctx, stop=False))
cell(
    "workflow",
    "holder-sigstop",
    "as for SIGKILL, the worker SIGSTOPped past its lease and resumed: its late outcomes start "
    "nothing twice (each callback and next member once) and agree with the records the "
    "workflows counted; the resumed worker stops cleanly",
)(lambda ctx: workflow_holder(ctx, stop=True))


@cell(
    "workflow",
    "pool-exhaustion",
    "a Tasks worker with 8 threads on a pool of 6, enqueues from the same pool: 20 workflows of "
    "every shape and policy end as their policy says, each member and callback once; no error "
    "reads as an outage",
)
def workflow_pool(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    with (
        tasks_on(ctx, MAX_CONNECTIONS=6, WORKER_PREFETCH=1) as backend,
        _errors_logged() as errors,
        _serving(backend, found, concurrency=8),
    ):
        flows, wants = {}, {}
        for i in range(20):
            # (collect() counts its run before its last reads: one refused for want of a
            # connection is retried, and counted twice; record() counts last)
            spec, want = _mix(i, seeing=False)
            try:
                flows[f"w{i}"], wants[f"w{i}"] = spec.enqueue(), want
            except Exception as exc:
                found.append(f"enqueue of workflow {i}: {outage_claim(exc) or describe(exc)}")
        found += _ended(flows, 20)
        found += _check(backend, client, flows, wants)
    return found + errors


#: Members' arguments: every allowed character, JSON's own, a body's "workflow" field, the
#: hash-tag braces, control characters, non-BMP text, a long one.
HOSTILE_ARGS = [
    HOSTILE,
    HOSTILE_QUEUE,
    '"}]},"workflow":{"id":"x","x":"0","next":{}}',
    "{wf}:tag",
    "back\\slash \\n \\u0000",
    "line\nbreak\ttab\r",
    "nul\x00byte",
    "ünï ✓ 中 🙂",
    " ",
    "\x7f",
    "l" * 2000,
]


@cell(
    "workflow",
    "hostile-names",
    "a chain and a chord, each on a queue of hostile name (every allowed character), members' "
    "arguments with hostile strings (JSON's characters, a forged 'workflow' field, braces, "
    "control and non-BMP characters): both end SUCCESSFUL, each member once with its arguments "
    "intact, the chain's in order; the queues' keys are tagged by their names",
)
def workflow_names(ctx: Ctx) -> list[str]:
    found: list[str] = []
    client = ctx.client()
    # one queue per workflow: a workflow's keys share one slot (its queues' must, on a Cluster)
    names = [hostile("wf-chain"), hostile("wf-chord")]
    tasks = {"default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": names}}
    with (
        tasks_on(ctx, WORKER_PREFETCH=1),
        override_settings(TASKS=tasks),
        _errors_logged() as errors,
    ):
        backend = backend_for("default")
        first = [f"{x}#{i}" for i, x in enumerate(HOSTILE_ARGS)]
        second = [f"#{i}{x}" for i, x in enumerate(HOSTILE_ARGS)]
        on_chain, on_chord = (wt.record.using(queue_name=n) for n in names)
        flows = {
            "chain": chain(
                *(step(on_chain, x) for x in first),
                then=step(wt.collect.using(queue_name=names[0]), hostile("chain-cb")),
            ).enqueue(),
            "chord": chord(
                [step(on_chord, label=x, seconds=0.0) for x in second],
                then=step(on_chord, hostile("chord-cb")),
                on_failure="continue",
            ).enqueue(),
        }
        with _serving(backend, found, concurrency=2):
            found += _ended(flows, 15)
        n = len(HOSTILE_ARGS)
        found += _check(
            backend,
            client,
            flows,
            {
                "chain": Want(
                    "SUCCESSFUL", ("succeeded",) * n, "succeeded", (*first, hostile("chain-cb"))
                ),
                "chord": Want(
                    "SUCCESSFUL", ("succeeded",) * n, "succeeded", (*second, hostile("chord-cb"))
                ),
            },
        )
        runs = [as_text(x) for x in client.lrange("wt:runs", 0, -1)]
        if (chain_runs := [x for x in runs if x in first]) != first:
            found.append(f"the chain's members ran in the order {chain_runs[:3]}..., not pushed")
        for name, labels in (("chain", first), ("chord", second)):
            values = [res.return_value for res in flows[name].results()[: len(labels)]]
            if values != labels:
                found.append(f"the {name}'s members returned {values[:3]}..., not their arguments")
        for name in names:
            found += keys_tagged_by(ctx.admin(), ctx.prefix, name)
    return found + errors


# -- the Cluster columns -----------------------------------------------------------------------


class Workflows:
    """The Cluster adapter (see cells_cluster._run): a worker runs a chain's held second member,
    a chord's held member and the held first member of a chain to cancel, across the nemesis;
    the act is that cancel and one more workflow's enqueue. Then the held members end."""

    what = "a workflow's cancel and another's enqueue"

    def setup(self, ctx: Any) -> Any:
        stack = ExitStack()
        options = {
            **settings.REDCOORD,
            "URL": None,
            **ctx.topology.config,
            "KEY_PREFIX": ctx.prefix,
            "WORKER_HEARTBEAT": 0.2,
            "WORKER_TIMEOUT": 15.0,
            "WORKER_PREFETCH": 1,
        }
        tasks = {
            "default": {"BACKEND": "django_redcoord.tasks.RedisTaskBackend", "QUEUES": ["default"]}
        }
        found: list[str] = []
        stack.enter_context(override_settings(REDCOORD=options, TASKS=tasks))
        errors = stack.enter_context(_errors_logged())
        backend = backend_for("default")
        stack.enter_context(_serving(backend, found, concurrency=4))
        r = wt.record
        flows = {
            "chain": chain(
                step(r, "k1"), step(wt.hold, "k2"), step(r, "k3"), then=step(r, "k-cb")
            ).enqueue(),
            "chord": chord(
                [step(wt.hold, "j1"), step(wt.fail, "j2")],
                then=step(wt.collect, "j-cb"),
                on_failure="run_callback",
            ).enqueue(),
            "cancelled": chain(step(wt.hold, "d1"), step(r, "d2"), then=step(r, "d-cb")).enqueue(),
        }
        from django_redcoord.core.transport.clients import get_client

        if not _until(lambda: _started(get_client(), "k2", "j1", "d1"), 15):
            found += _not_started(flows, "k2, j1 and d1 (before the nemesis)")
        return {
            "stack": stack,
            "backend": backend,
            "flows": flows,
            "found": found,
            "errors": errors,
        }

    def act(self, state: Any) -> None:
        """Both calls are made (each once it succeeded: an act refused with nothing sent is made
        again); the worst error of the two is raised: one not ours, else one sent."""
        errors: list[BaseException] = []
        if "cancel" not in state:
            try:
                state["cancel"] = state["flows"]["cancelled"].cancel()
            except Exception as exc:
                errors.append(exc)
        if "late" not in state["flows"]:
            r = wt.record
            try:
                late = chain(step(r, "l1"), step(r, "l2"), then=step(r, "l-cb")).enqueue()
                state["flows"]["late"] = late
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise max(
                errors,
                key=lambda e: (
                    not isinstance(e, CoordinationUnavailable),
                    bool(getattr(e, "sent", True)),
                ),
            )

    def verify(self, state: Any) -> list[str]:
        from django_redcoord.core.transport.clients import get_client

        try:
            found, flows = state["found"], state["flows"]
            client = get_client()
            try:  # (what a raw error left undone: it was reported, _run does not act again)
                self.act(state)
            except Exception as exc:
                found.append(f"{self.what} once the nemesis was over: {describe(exc)}")
            if state.get("cancel") not in ("RUNNING", "FAILED"):
                found.append(f"the workflow's cancel answered {state.get('cancel')}")
            client.set("wt:release", 1)
            found += _ended(flows, 20)
            found += _check(
                state["backend"],
                client,
                flows,
                {
                    "chain": Want(
                        "SUCCESSFUL", ("succeeded",) * 3, "succeeded", ("k1", "k2", "k3", "k-cb")
                    ),
                    "chord": Want(
                        "FAILED", ("succeeded", "failed"), "succeeded", ("j1", "j2", "j-cb")
                    ),
                    "cancelled": Want(
                        "FAILED", ("failed", "skipped"), "skipped", (), ("d2", "d-cb")
                    ),
                    "late": Want(
                        "SUCCESSFUL", ("succeeded",) * 2, "succeeded", ("l1", "l2", "l-cb")
                    ),
                },
            )
            state["stack"].close()  # (the worker: it must still be running)
            return found + state["errors"]
        finally:
            state["stack"].close()


def _register_cluster_cells() -> None:
    from .cells_cluster import _run

    adapter = Workflows()
    cell(
        "workflow",
        "cluster-slot-migration",
        f"{adapter.what} on the half-migrated slot succeed or are refused with nothing sent and "
        "succeed once the slot moved; the workflows whose members ran across the migration end "
        "as their policy says, each member and callback once; the cancelled one starts nothing "
        "more; the worker keeps serving",
    )(lambda ctx: _run(ctx, adapter, "cluster-slot-migration"))
    cell(
        "workflow",
        "cluster-failover",
        f"after a coordinated failover of the workflows' primary, {adapter.what} work; the "
        "workflows end as their policy says, each member and callback once; the cancelled one "
        "starts nothing more; the worker keeps serving",
    )(lambda ctx: _run(ctx, adapter, "cluster-failover"))


_register_cluster_cells()
