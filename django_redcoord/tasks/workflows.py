"""Workflows of Django Tasks: chains, groups and chords that reach an end when a member fails.

::

    from django_redcoord.tasks import chain, chord, group, step

    chain(step(fetch, url), step(parse, url), step(store, url)).enqueue()
    chord([step(resize, 7, 64), step(resize, 7, 512)], then=step(publish, 7),
          on_failure="run_callback").enqueue()

A workflow's state is one hash (``core/lua/tasks/workflow.lua``). Its members are ordinary
tasks with result records; a member has ended when its record says SUCCESSFUL or FAILED,
whatever wrote it (its run, its dead letter after a SIGKILL, a cancel). One script looks at
members' records, counts each that ended once, starts what comes next (a chain's next member,
the callback) in the same step that marks it started, and ends the workflow: so a member is
counted once, started once, and the callback runs once. The worker that ran a member moves its
workflow on right after the outcome lands; every worker also sweeps the running workflows no
call moved on for ``SWEEP_AFTER`` seconds (a member whose worker was SIGKILLed, whose dead
letter another worker settled, or that was cancelled), so no workflow waits forever.
"""

from __future__ import annotations

import contextvars
import json
import secrets
import string
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from ..core import (
    HAS_RECORD,
    QUEUE_INCLUDES,
    CoordinationUnavailable,
    EncodedJSON,
    Script,
    as_text,
    command,
    commands,
    in_slot,
    is_cluster,
    key_builder,
    key_slot,
    read_index,
    unavailable_as_ours,
    valid_id,
)
from .compat import TaskResultDoesNotExist

WORKFLOW = Script("tasks/workflow", includes=QUEUE_INCLUDES)
WORKFLOW_START = Script("tasks/workflow_start")
POLICIES = ("fail_fast", "run_callback", "continue")
#: Seconds a running workflow that no call moved on waits before a worker's sweep looks at it.
SWEEP_AFTER = 2.0
#: Seconds an ended workflow's hash lives (its members' records live RESULT_TTL).
ENDED_TTL = 86_400
#: Most members a workflow takes.
MAX_MEMBERS = 10_000

_current: contextvars.ContextVar[Workflow | None] = contextvars.ContextVar(
    "redcoord_workflow", default=None
)


@dataclass(frozen=True)
class Step:
    """One call of a task in a workflow (see :func:`step`)."""

    task: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def step(task: Any, *args: Any, **kwargs: Any) -> Step:
    """``task`` called with ``args`` and ``kwargs``, as a member (or callback) of a workflow."""
    if not hasattr(task, "enqueue") or not hasattr(task, "module_path"):
        raise TypeError(f"step() takes a task (made with @task), not {task!r}")
    return Step(task, args, dict(kwargs))


@dataclass(frozen=True)
class WorkflowSpec:
    """A workflow to enqueue: a chain or a group of steps, and an optional callback."""

    kind: str
    steps: tuple[Step, ...]
    then: Step | None
    on_failure: str

    def enqueue(self) -> Workflow:
        """Start it (after the current transaction commits when the backend's
        ``ENQUEUE_ON_COMMIT``, as ``enqueue()`` does); returns its handle at once."""
        return _enqueue(self)

    async def aenqueue(self) -> Workflow:
        """``enqueue()`` from async code (its round trips in a worker thread, off the loop)."""
        from asgiref.sync import sync_to_async

        return await sync_to_async(_enqueue, thread_sensitive=True)(self)


def _spec(kind: str, steps: Sequence[Any], then: Any, on_failure: Any) -> WorkflowSpec:
    if not steps:
        raise ValueError(f"a {kind} needs at least one step")
    if len(steps) > MAX_MEMBERS:
        raise ValueError(f"a workflow takes at most {MAX_MEMBERS:,} members, not {len(steps):,}")
    for s in (*steps, *([then] if then is not None else [])):
        if not isinstance(s, Step):
            raise TypeError(f"a workflow's members are step(task, *args, **kwargs), not {s!r}")
    if on_failure not in POLICIES:
        raise ValueError(
            f"on_failure must be one of {', '.join(map(repr, POLICIES))}, not {on_failure!r}"
        )
    return WorkflowSpec(kind, tuple(steps), then, on_failure)


def chain(*steps: Step, then: Step | None = None, on_failure: str = "fail_fast") -> WorkflowSpec:
    """Steps one after another: each starts once the one before it has ended (succeeded, or
    failed under ``on_failure="continue"``); ``then`` starts after the last."""
    return _spec("chain", steps, then, on_failure)


def group(
    steps: Iterable[Step], *, then: Step | None = None, on_failure: str = "fail_fast"
) -> WorkflowSpec:
    """Steps all at once; ``then`` starts once every one has ended (a chord)."""
    return _spec("group", tuple(steps), then, on_failure)


def chord(steps: Iterable[Step], then: Step, *, on_failure: str = "fail_fast") -> WorkflowSpec:
    """A group with a callback: ``then`` starts once every step has ended."""
    if then is None:
        raise TypeError("a chord needs its callback: chord(steps, then=step(...))")
    return _spec("group", tuple(steps), then, on_failure)


# -- the handle ------------------------------------------------------------------------------


@dataclass
class Workflow:
    """A workflow that was enqueued: its id, and its state as last read (:meth:`refresh`)."""

    id: str
    backend: str = "default"
    status: str = "RUNNING"
    kind: str = ""
    on_failure: str = ""
    members: list[dict[str, str]] = field(default_factory=list)  # {id, state}, in order
    callback: dict[str, str] | None = None

    def refresh(self) -> Workflow:
        """Read its state again (one round trip). A workflow that ended ``ENDED_TTL`` ago (or
        that Redis lost) reads as status ``GONE``."""
        backend = _backend(self.backend)
        client = backend.client
        raw = command(
            client,
            "HGETALL",
            _keys(backend).workflow(self.id),
            operation=f"read workflow {self.id!r}",
        )
        state = _pairs(raw)
        if not state:
            self.status = "GONE"
            return self
        self.status = state["status"]
        self.kind, self.on_failure = state["kind"], state["policy"]
        n = int(state["n"])
        self.members = [
            {"id": state.get(f"id.{i}", ""), "state": _STATES.get(state.get(f"st.{i}", ""), "")}
            for i in range(n)
        ]
        self.callback = (
            {"id": state.get("id.then", ""), "state": _STATES.get(state.get("st.then", ""), "")}
            if state.get("has_then") == "1"
            else None
        )
        return self

    @property
    def finished(self) -> bool:
        return self.status in ("SUCCESSFUL", "FAILED")

    def results(self) -> list[Any]:
        """The TaskResults of the members that started, in order: the workflow is read again
        first (so a handle never refreshed, as ``current_workflow()`` in a callback, has its
        members), then each started member's result (one read each).

        A member whose result is gone (past ``RESULT_TTL``, or Redis lost it) raises
        ``TaskResultDoesNotExist`` naming the member.
        """
        self.refresh()
        backend = _backend(self.backend)
        results = []
        for number, m in enumerate(self.members):  # numbered from 0, as the admin shows them
            if m["state"] not in ("started", "succeeded", "failed"):
                continue
            try:
                results.append(backend.get_result(m["id"]))
            except TaskResultDoesNotExist:
                raise TaskResultDoesNotExist(
                    f"member {number} of workflow {self.id!r} ({m['id']}): its result is "
                    "gone (kept RESULT_TTL after it ended, or Redis lost it)"
                ) from None
        return results

    def cancel(self) -> str:
        """No member starts any more, the callback is skipped, the members waiting or running
        are cancelled; returns the workflow's status."""
        return advance(_backend(self.backend), self.id, cancel=True)


_STATES = {"w": "waiting", "q": "started", "ok": "succeeded", "failed": "failed"}
_STATES["skipped"] = "skipped"


def get_workflow(workflow_id: str, *, backend: str = "default") -> Workflow:
    """The workflow ``workflow_id``, read now (its status ``GONE`` when there is none)."""
    if not valid_id(workflow_id):
        raise ValueError(f"{workflow_id!r} is not a workflow id")
    return Workflow(workflow_id, backend).refresh()


def current_workflow() -> Workflow | None:
    """Inside a task run as a workflow's member or callback: its workflow (its state read when
    asked: ``refresh()``); else None."""
    return _current.get()


# -- enqueue ---------------------------------------------------------------------------------


def _backend(alias: str) -> Any:
    try:  # (not through .backend, which moves workflows on: no import circle)
        from django.tasks import task_backends
    except ImportError:
        from django_tasks import task_backends
    backend = task_backends[alias]
    if not hasattr(backend, "_cancel_call"):
        raise TypeError(f"workflows need a RedisTaskBackend, not {type(backend).__name__}")
    return backend


def _keys(backend: Any) -> Any:
    from .. import conf

    return key_builder(conf.default_prefix(), backend.client)


def _enqueue(spec: WorkflowSpec) -> Workflow:
    everyone = [*spec.steps, *([spec.then] if spec.then else [])]
    aliases = {s.task.backend for s in everyone}
    if len(aliases) != 1:
        raise ValueError(
            f"a workflow's tasks must use one backend, not {', '.join(sorted(aliases))}"
        )
    backend = _backend(aliases.pop())
    keys = _keys(backend)
    from .options import options_of

    for s in everyone:
        if options_of(s.task).unique_key(s.args, s.kwargs) is not None:
            raise ValueError(
                f"task {s.task.module_path} is unique: a workflow's member starts once, by the "
                "workflow; give the workflow a step of a task without unique="
            )
        if s.task.run_after is not None:
            raise ValueError(
                f"task {s.task.module_path} has run_after: a workflow's members start when their "
                "turn comes; leave run_after out"
            )
    slot = key_slot(backend._queue_key(everyone[0].task.queue_name))
    if is_cluster(backend.client):
        apart = [
            s.task.queue_name
            for s in everyone
            if key_slot(backend._queue_key(s.task.queue_name)) != slot
        ]
        if apart:
            raise ValueError(
                f"on a Redis Cluster a workflow's queues must share one slot: "
                f"{everyone[0].task.queue_name!r} and {apart[0]!r} do not (give them one hash "
                "tag, e.g. '{wf}:emails' and '{wf}:reports')"
            )
    alphabet = string.ascii_letters + string.digits
    wid = in_slot("".join(secrets.choice(alphabet) for _ in range(29)), slot)
    names = [str(i) for i in range(len(spec.steps))] + (["then"] if spec.then else [])
    prepared = []
    for name, s in zip(names, everyone, strict=True):
        result, encoded = backend._prepare(s.task, s.args, s.kwargs)
        prepared.append((name, s, result, encoded))
    fields: dict[str, Any] = {
        "status": "RUNNING",
        "kind": spec.kind,
        "policy": spec.on_failure,
        "n": len(spec.steps),
        "ended": 0,
        "failed": 0,
        "pushed": 0,
        "next": 0,
        "stopped": 0,
        "has_then": 1 if spec.then else 0,
        "created_ms": int(time.time() * 1000),
    }
    ids = {name: result.id for name, _, result, _ in prepared}
    queues = {name: s.task.queue_name for name, s, _, _ in prepared}
    for name, s, result, encoded in prepared:
        queue, push = backend._push(s.task, result, encoded)
        nxt = _followers(spec, name, names)
        member = {
            "id": wid,
            "x": name,
            "queue": queues[name],
            "next": {x: [ids[x], queues[x]] for x in nxt},
        }
        body = str(push["body"])
        push["body"] = EncodedJSON(f'{body[:-1]},"workflow":{json.dumps(member)}}}')
        push["record"] = {**push["record"], "workflow": wid, "workflow_member": name}
        env = queue._message_args(
            push["id"],
            push["body"],
            None,
            None,
            push["priority"],
            HAS_RECORD,
            "",
            queue._group(push.get("group")),
        )[0]
        record = [str(v) for item in push["record"].items() for v in item]
        fields[f"id.{name}"] = result.id
        fields[f"q.{name}"] = queue.name
        fields[f"st.{name}"] = "w"
        fields[f"p.{name}"] = json.dumps(
            {"env": env, "record": record, "ttl": push["ttl"], "queue": queue.name}
        )
    handle = Workflow(wid, backend.alias, "RUNNING", spec.kind, spec.on_failure)
    handle.members = [{"id": ids[x], "state": "waiting"} for x in names if x != "then"]
    if spec.then:
        handle.callback = {"id": ids["then"], "state": "waiting"}

    def send() -> None:
        wf_key = keys.workflow(wid)
        WORKFLOW_START(
            backend.client,
            [wf_key, keys.workflow_index(wf_key)],
            [wid, int(SWEEP_AFTER * 1000), *(str(x) for item in fields.items() for x in item)],
            operation=f"start workflow {wid!r}",
        )
        starting = names[: len(spec.steps)] if spec.kind == "group" else names[:1]
        try:
            advance(backend, wid, starting)
        except CoordinationUnavailable:
            return  # its members start at a worker's sweep
        for m in handle.members[: len(starting)]:
            m["state"] = "started"

    using = getattr(backend, "outbox", None) or "default"
    if backend.enqueue_on_commit and transaction.get_connection(using).in_atomic_block:
        transaction.on_commit(send, using=using)
    else:
        send()
    return handle


def _followers(spec: WorkflowSpec, name: str, names: list[str]) -> list[str]:
    """The members whose keys a member's worker passes when it moves the workflow on: a chain
    member's next one, and the callback."""
    out = []
    if spec.kind == "chain" and name != "then":
        i = int(name) + 1
        if i < len(spec.steps):
            out.append(str(i))
    if spec.then and name != "then":
        out.append("then")
    return out


# -- moving a workflow on ----------------------------------------------------------------------


def _member_keys(backend: Any, keys: Any, result_id: str, queue_name: str) -> list[str]:
    q = keys.queue(queue_name)
    return [
        backend._result_key(result_id),
        q.ready,
        q.seq,
        q.wake,
        q.index,
        q.gpend,
        q.gstate,
        q.gwait,
    ]


def advance(
    backend: Any,
    workflow_id: str,
    members: Sequence[str] | None = None,
    *,
    known: dict[str, tuple[str, str]] | None = None,
    cancel: bool = False,
    sweeping: bool = False,
) -> str:
    """Move the workflow on: look at ``members`` (None: all), start what comes next, end it.
    ``known``: member -> (result id, queue) of members whose keys are known without a read.
    Returns its status. Members it must cancel (fail_fast, or ``cancel``) are cancelled, and
    the workflow is moved on again. Idempotent; at most a few round trips."""
    keys = _keys(backend)
    wf_key = keys.workflow(workflow_id)
    index = keys.workflow_index(wf_key)
    client = backend.client
    known = dict(known or {})
    if members is None or cancel:
        state = _pairs(
            command(client, "HGETALL", wf_key, operation=f"read workflow {workflow_id!r}")
        )
        if not state:
            return "GONE"
        names = [str(i) for i in range(int(state["n"]))]
        if state.get("has_then") == "1":
            names.append("then")
        members = names
        for x in names:
            known[x] = (state[f"id.{x}"], state[f"q.{x}"])
    wanted = list(members)
    status = "RUNNING"
    for _ in range(4):
        missing = [x for x in wanted if x not in known]
        if missing:
            got = command(
                client,
                "HMGET",
                wf_key,
                *(f for x in missing for f in (f"id.{x}", f"q.{x}")),
                operation=f"read workflow {workflow_id!r}",
            )
            for i, x in enumerate(missing):
                rid, qname = got[2 * i], got[2 * i + 1]
                if rid is None or qname is None:
                    return "GONE"
                known[x] = (as_text(rid), as_text(qname))
        script_keys = [wf_key, index]
        for x in wanted:
            script_keys += _member_keys(backend, keys, *known[x])
        reply = WORKFLOW(
            client,
            script_keys,
            [
                workflow_id,
                int(SWEEP_AFTER * 1000),
                ENDED_TTL,
                "1" if cancel else ("s" if sweeping else "0"),
                *wanted,
            ],
            operation=f"move workflow {workflow_id!r} on",
        )
        reply = [as_text(r) for r in reply]
        status = reply[0]
        if status != "RUNNING":
            return status
        split = reply.index("")
        needs, cancels = reply[1:split], reply[split + 1 :]
        for result_id in cancels:
            try:
                backend._cancel(result_id)
            except Exception:  # noqa: BLE001 (gone, or finished: the next look counts it)
                pass
        if cancels:  # count the cancelled members now: a look at every member
            return advance(backend, workflow_id)
        if not needs:
            return status
        wanted = list(dict.fromkeys([*wanted, *needs]))
    return status


def sweep(backend: Any, *, limit: int = 100) -> int:
    """Move on the running workflows no call moved on for ``SWEEP_AFTER`` seconds (at most
    ``limit``); returns how many were looked at. Every worker runs it between its beats."""
    keys = _keys(backend)
    client = backend.client
    now_ms = int(time.time() * 1000)
    if keys.cluster:
        with unavailable_as_ours(client, "read the running workflows"):
            due = [w for w, at in read_index(client, keys, "workflows").items() if at <= now_ms]
    else:
        index = keys.workflow_index(keys.workflow("x"))
        due = [
            as_text(w)
            for w in command(
                client,
                "ZRANGEBYSCORE",
                index,
                "-inf",
                now_ms,
                "LIMIT",
                0,
                limit,
                operation="read the running workflows",
            )
        ]
    for wid in due[:limit]:
        if not valid_id(wid):
            continue
        try:
            if advance(backend, wid, sweeping=True) == "GONE":
                wf_key = keys.workflow(wid)
                command(
                    client,
                    "ZREM",
                    keys.workflow_index(wf_key),
                    wid,
                    operation=f"forget workflow {wid!r}",
                )
        except CoordinationUnavailable:
            raise
    return min(len(due), limit)


def list_workflows(backend: Any, *, limit: int = 200) -> list[dict[str, Any]]:
    """The running workflows (at most ``limit``, longest unmoved first): id, kind, policy,
    members, ended, failed, the callback's state, created (ms). For the admin: two round
    trips."""
    keys = _keys(backend)
    client = backend.client
    operation = "read the running workflows"
    if keys.cluster:
        with unavailable_as_ours(client, operation):
            running = sorted(read_index(client, keys, "workflows").items(), key=lambda i: i[1])
        ids = [w for w, _ in running[:limit]]
    else:
        index = keys.workflow_index(keys.workflow("x"))
        ids = [
            as_text(w) for w in command(client, "ZRANGE", index, 0, limit - 1, operation=operation)
        ]
    ids = [w for w in ids if valid_id(w)]
    if not ids:
        return []
    names = ["kind", "policy", "n", "ended", "failed", "has_then", "st.then", "created_ms"]
    replies = commands(
        client, tuple(("HMGET", keys.workflow(wid), *names) for wid in ids), operation=operation
    )
    rows = []
    for wid, values in zip(ids, replies, strict=True):
        v = dict(zip(names, (as_text(x) if x is not None else None for x in values), strict=True))
        if v["kind"] is None:
            continue  # ended and expired since the index was read
        rows.append(
            {
                "id": wid,
                "kind": v["kind"],
                "policy": v["policy"],
                "members": int(v["n"] or 0),
                "ended": int(v["ended"] or 0),
                "failed": int(v["failed"] or 0),
                "callback": _STATES.get(v["st.then"] or "", "") if v["has_then"] == "1" else None,
                "created_ms": int(v["created_ms"] or 0),
            }
        )
    return rows


def _pairs(reply: Any) -> dict[str, str]:
    """An HGETALL reply (a flat list, or a dict) as text."""
    if isinstance(reply, dict):
        return {as_text(k): as_text(v) for k, v in reply.items()}
    items = list(reply or [])
    return {as_text(items[i]): as_text(items[i + 1]) for i in range(0, len(items) - 1, 2)}
