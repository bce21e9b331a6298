"""The worker's side of Django Tasks: import the task, run it, record its outcome.

``manage.py run_worker`` drives a :class:`~django_redcoord.core.queues.Worker`
whose handler is a :class:`TaskRunner`; result writes ride on round trips the
worker makes anyway (see the class).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from datetime import datetime, timezone
from inspect import iscoroutinefunction
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.db import close_old_connections
from django.utils.module_loading import import_string

from ..core import (
    REQUEUED,
    Cancelled,
    CoordinationUnavailable,
    DeadLetter,
    DeliveryFailed,
    Message,
    Queue,
    Retry,
    commands,
    execute_pipeline,
    queue_defaults,
    to_json,
    write_records,
)
from .cancel import Attempt, RedisTaskContext, _current, cancel_error
from .compat import (
    Task,
    TaskError,
    TaskResult,
    TaskResultDoesNotExist,
    TaskResultStatus,
    iso,
    normalize_json,
    task_finished,
    task_started,
    utcnow,
    valid_id,
)
from .options import TaskOptions, TaskTimedOut
from .workflows import Workflow
from .workflows import _current as _in_workflow

if TYPE_CHECKING:
    from .backend import RedisTaskBackend


log = logging.getLogger("django_redcoord.tasks")


class TaskRunner:
    """The worker's handler for task messages: import, run, record the result.

    Result writes ride on round trips the worker makes anyway, so a quick
    task costs no round trip of its own:

    * RUNNING is recorded by a small status thread for a task still running
      after ``RUNNING_AFTER`` seconds (a quicker task goes from READY to its
      outcome; nobody could have seen it running). A late RUNNING mark never
      overwrites an outcome (tasks/results.lua checks).
    * Successes' outcomes are held back and written in one command just
      before the worker's next claim (which carries the acknowledgements, so
      a result always lands before its acknowledgement), or before the next
      task starts once they have waited ``FLUSH_AFTER`` seconds.
      ``task_finished`` is sent once an outcome has landed.
    * Failures are written at once (a retry may start elsewhere soon).

    The outcome of delivery N is written only while the record holds no
    outcome and no error of delivery N (guard N of tasks/results.lua): a
    delivery that timed out, or whose message a reaper took back, cannot
    overwrite what was recorded for it since.

    The TaskResult given to the signals is built locally on a first delivery;
    a retry reads the record once (earlier errors, attempts).

    Per-task options (``options_for``): ``max_attempts`` travels in the
    message; a failure asks ``backoff`` for the delay of the retry (None:
    dead-letter now); ``job_timeout`` / ``timed_out`` give the worker the
    task's timeout and record an attempt that ran past it.
    """

    RUNNING_AFTER = 0.05
    FLUSH_AFTER = 0.05
    #: seconds between two sweeps of the running workflows (see :meth:`sweep`)
    SWEEP_EVERY = 1.0
    #: seconds between two looks at whether the tasks this worker holds were cancelled
    CANCEL_POLL = 0.5

    def __init__(self, backend: RedisTaskBackend, worker_id: str) -> None:
        self.backend = backend
        self.worker_id = worker_id
        self._local = threading.local()  # per worker thread: outcomes held back
        self._running: dict[int, Attempt] = {}  # thread -> its running attempt
        self._running_lock = threading.Lock()
        self._waiting: dict[str, str] = {}  # record key -> message id: claimed, not started
        self._cancelled: set[str] = set()  # record keys of claimed, unstarted tasks found cancelled
        self._worker: Any = None  # the Worker (attach): cuts a cancelled job's time short
        self._closed = threading.Event()
        self._marker: threading.Thread | None = None
        self._resolved: dict[str, tuple[Task, float | None, bool]] = {}  # path -> see _resolve

    def attach(self, worker: Any) -> None:
        """The worker that runs us (it calls this as it starts): see :meth:`_poll_cancels`."""
        self._worker = worker

    # -- the worker's write-behind protocol -----------------------------------------

    def _pending(self) -> list[tuple[str, dict[str, Any], TaskResult, float, int]]:
        pending = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    def has_pending(self) -> bool:
        return bool(getattr(self._local, "pending", None))

    def flush(self) -> None:
        """Write the held-back outcomes now (the worker calls it before a claim)."""
        self._write(None, {})

    def written(self, landed: list[int] | None = None) -> None:
        """The held-back outcomes reached Redis: announce those that landed (``landed``: 1 or 0
        for each, in order; a guard refuses the outcome of a task cancelled meanwhile), then
        move on the workflows whose members they ended."""
        pending, self._local.pending = self._pending(), []
        for i, (_, _, result, _, _) in enumerate(pending):
            if landed is None or landed[i]:
                task_finished.send(type(self.backend), task_result=result)
        triggers = getattr(self._local, "workflows", None)
        if triggers:
            self._local.workflows = []
            self._move_on(triggers)

    def _ended_member(self, body: dict[str, Any]) -> None:
        """A workflow member's outcome is about to be written: move its workflow on once it
        landed (see :meth:`written`)."""
        member = body.get("workflow")
        if isinstance(member, dict):
            if getattr(self._local, "workflows", None) is None:
                self._local.workflows = []
            self._local.workflows.append((member, body.get("result")))

    def _move_on(self, triggers: list[tuple[dict[str, Any], Any]]) -> None:
        """Move on the workflows of members that ended: one call per workflow, with every
        member of it that ended here and the ones they know of next."""
        from .workflows import advance

        calls: dict[str, tuple[list[str], dict[str, tuple[str, str]]]] = {}
        for member, result_id in triggers:
            try:
                members, known = calls.setdefault(str(member["id"]), ([], {}))
                x = str(member["x"])
                for y, v in member.get("next", {}).items():
                    known[str(y)] = (str(v[0]), str(v[1]))
                if member.get("queue"):
                    known[x] = (str(result_id), str(member["queue"]))
                members.extend([x, *map(str, member.get("next", {}))])
            except (KeyError, TypeError, ValueError, IndexError):
                log.warning("a workflow member's message is unreadable: %r", member)
        for wid, (members, known) in calls.items():
            try:
                advance(self.backend, wid, list(dict.fromkeys(members)), known=known)
            except CoordinationUnavailable as exc:
                log.warning("workflow %s: not moved on now (%s); a sweep will", wid, exc)
            except Exception:  # noqa: BLE001 - a sweep moves it on; the worker goes on
                log.exception("workflow %s: moving it on failed; a sweep will", wid)

    def sweep(self) -> None:
        """Between the worker's beats: move on the workflows no call moved on for a while
        (a member whose worker died, a dead letter settled elsewhere, a cancel)."""
        from .workflows import sweep

        now = time.monotonic()
        if now < getattr(self, "_next_sweep", 0.0):
            return
        self._next_sweep = now + self.SWEEP_EVERY
        sweep(self.backend)

    def claimed(self, messages: list[Message]) -> None:
        """The worker claimed ``messages``: record each delivery's worker before any of them starts,
        in one write for the batch, so that ``TaskResult.attempts`` (Django counts ``worker_ids``)
        equals the deliveries, an attempt killed at once included. Guard N: never over an outcome
        or a later delivery's error. An outage here is logged, not raised: the attempts' own writes
        record them as they run."""
        keyed = self._keyed(messages)
        self._local.keys = {message.id: key for message, key in keyed}  # (__call__ takes them)
        self._mark(keyed, None, "record the attempts of claimed tasks")
        with self._running_lock:
            for message, key in keyed:
                self._waiting[key] = message.id

    def handed_back(self, messages: list[Message]) -> None:
        """The worker gives ``messages`` back unstarted (stopping, or the rest of a batch after a
        job timeout): take back the worker ids :meth:`claimed` recorded for them (only ours, only
        while the record holds no outcome). Logged, not raised: the next claim overwrites them."""
        keyed = self._keyed(messages)
        self._mark(keyed, "unclaim", "take back the attempts of unstarted tasks")
        with self._running_lock:
            for _, key in keyed:
                self._waiting.pop(key, None)
                self._cancelled.discard(key)

    def _keyed(self, messages: list[Message]) -> list[tuple[Message, str]]:
        """(message, its record's key) for each task message with a result id of ours."""
        keyed = []
        for message in messages:
            body = message.body
            result_id = body.get("result") if isinstance(body, dict) else None
            if isinstance(result_id, str) and valid_id(result_id):
                keyed.append((message, self.backend._result_key(result_id)))
        return keyed

    def _mark(self, keyed: list[tuple[Message, str]], guard: str | None, operation: str) -> None:
        """``worker.N = this worker`` in the record of each task message (guard: N when None)."""
        if not keyed:
            return
        ttl, worker = self.backend.result_ttl, self.worker_id
        writes = []
        for message, key in keyed:
            delivery = message.attempt + 1
            writes.append((ttl, guard or delivery, key, {f"worker.{delivery}": worker}))
        try:
            self._send(writes, operation)
        except Exception as exc:  # noqa: BLE001 - see claimed() and handed_back()
            log.warning("could not %s (%d): %s", operation, len(writes), exc)

    def close(self) -> None:
        """Stop the status thread (the worker is done)."""
        self._closed.set()

    def settle_dead(self, queue: Queue, entries: list[tuple[str, dict[str, Any], Any]]) -> None:
        """Mark FAILED the results of messages dead-lettered without us (a reaper
        found their worker dead on the last attempt), unless they hold an outcome."""
        writes: list[tuple[int, Any, str, dict[str, Any]]] = []
        for result_id, detail, _ in entries:
            if not valid_id(result_id):
                continue
            failed_ms = detail.get("failed_ms")
            finished = (
                datetime.fromtimestamp(failed_ms / 1000, timezone.utc)
                if isinstance(failed_ms, int)
                else utcnow()
            )
            attempts = detail.get("attempts") if isinstance(detail.get("attempts"), int) else 1
            if (
                "replaced_by" in detail
            ):  # a waiting unique task a newer one replaced (queues/push_unique.lua)
                error = cancel_error(str(detail.get("error", "replaced")))
            else:
                error = json.dumps(
                    {
                        "exception_class_path": (
                            f"{DeliveryFailed.__module__}.{DeliveryFailed.__qualname__}"
                        ),
                        "traceback": str(detail.get("error", "dead-lettered")),
                    }
                )
            fields = {
                "status": str(TaskResultStatus.FAILED),
                "finished_at": iso(finished),
                f"error.{max(1, attempts)}": error,
            }
            writes.append(
                (
                    self.backend.result_ttl_failed,
                    "dead",
                    self.backend._result_key(result_id),
                    fields,
                )
            )
        self._send(writes, f"mark dead letters of {queue.name!r} failed")
        self._move_on_dead([key for _, _, key, _ in writes])

    def _move_on_dead(self, keys: list[str]) -> None:
        """Move on the workflows of dead letters just marked FAILED (one read for the batch:
        which of them are workflow members)."""
        if not keys:
            return
        try:
            found = commands(
                self.backend.client,
                tuple(("HMGET", key, "workflow", "workflow_member", "queue") for key in keys),
                operation="read the workflows of dead letters",
            )
        except Exception as exc:  # noqa: BLE001 - a sweep moves them on
            log.warning("dead letters' workflows not moved on now (%s); a sweep will", exc)
            return
        for key, (workflow, member, queue_name) in zip(keys, found, strict=True):
            if workflow is not None and member is not None:
                result_id = key.rsplit("{", 1)[-1].rstrip("}")
                x = member.decode() if isinstance(member, bytes) else str(member)
                trigger = {
                    "id": workflow.decode() if isinstance(workflow, bytes) else str(workflow),
                    "x": x,
                    "queue": queue_name.decode() if isinstance(queue_name, bytes) else "",
                }
                self._move_on([(trigger, result_id)])

    # -- one delivery ---------------------------------------------------------------

    def __call__(self, message: Message) -> None:
        body = message.body
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("task"), str)
            or not isinstance(body.get("result"), str)
            or not isinstance(body.get("args"), list)
            or not isinstance(body.get("kwargs"), dict)
        ):
            raise DeadLetter(f"not a task message: {str(body)[:200]}")
        path, result_id = body["task"], body["result"]
        keys = getattr(self._local, "keys", None)
        key = keys.pop(message.id, None) if keys else None  # (built at the claim)
        if key is None:
            if not valid_id(result_id):  # no record could hold its outcome: it can never run
                raise DeadLetter(
                    f"not a task message: result id {result_id[:200]!r} is not one of ours"
                )
            key = self.backend._result_key(result_id)
        delivery = message.attempt + 1
        with self._running_lock:
            self._waiting.pop(key, None)
            if key in self._cancelled:
                self._cancelled.discard(key)
                raise Cancelled("cancelled before it started")
        try:
            task, _, coroutine = self._resolve(path)
        except ImportError as exc:
            self._write(
                key,
                {
                    "status": str(TaskResultStatus.FAILED),
                    "finished_at": iso(utcnow()),
                    f"error.{delivery}": _error_json(exc),
                },
                ttl=self.backend.result_ttl_failed,
            )
            raise DeadLetter(f"task {path!r} cannot be imported: {exc}") from None
        started = utcnow()
        stamp = iso(started)
        attempt = {"last_attempted_at": stamp, f"worker.{delivery}": self.worker_id}
        if delivery == 1 and message.flags & REQUEUED:
            # a dead letter requeued by an operator: its record holds the old
            # outcome, which would refuse this run's; start it afresh
            result = self._reopen(key, attempt, stamp, task, message, started)
        elif delivery == 1:
            attempt["started_at"] = stamp
            pending = self._pending()
            if pending and time.monotonic() - pending[0][3] >= self.FLUSH_AFTER:
                self.flush()  # outcomes waited long enough: land them now
            result = self._local_result(task, message, started)
        else:  # a retry: mark it running now, and read earlier errors and workers
            # guard=delivery: a retry that stalled (SIGSTOP, GC) past WORKER_TIMEOUT before this
            # write was reaped and dead-lettered meanwhile; its mark must not overwrite the
            # FAILED the settle pass recorded (found by core/lua/queues/delivery.pml)
            marked = self._write(
                key, {"status": str(TaskResultStatus.RUNNING), **attempt}, guard=delivery
            )
            try:
                result = self.backend.get_result(result_id)
            except (
                TaskResultDoesNotExist
            ):  # expired (RESULT_TTL) or unreadable: run it all the same
                result = self._local_result(task, message, started)
            if not marked and message.flags & REQUEUED and result.status == TaskResultStatus.FAILED:
                # A requeued dead letter whose first delivery was reaped before it reopened the
                # record: the FAILED is the old outcome. Reopened here, and run.
                result = self._reopen(key, attempt, stamp, task, message, started)
            elif result.status in (TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED):
                # An earlier delivery ended it after this one was requeued (its worker stalled
                # past WORKER_TIMEOUT, the reaper requeued the message, and it then finished):
                # acknowledged without running again (the mark above was refused).
                log.info(
                    "job %s (%s): its result is %s already (an earlier delivery ended it): not "
                    "run again",
                    message.id,
                    path,
                    result.status,
                )
                return
        state = self._mark_running(key, delivery, attempt, message.id)
        task_started.send(type(self.backend), task_result=result)
        close_old_connections()
        token = _current.set(state)
        member = body.get("workflow")
        in_workflow = (
            _in_workflow.set(Workflow(str(member["id"]), self.backend.alias))
            if isinstance(member, dict) and "id" in member
            else None
        )
        try:
            args = (
                (RedisTaskContext(task_result=result, attempt_state=state), *body["args"])
                if task.takes_context
                else body["args"]
            )
            if coroutine:  # run here, so that a cancel can reach its asyncio task
                value = async_to_sync(_cancellable(task.func, state))(*args, **body["kwargs"])
            else:
                value = task.call(*args, **body["kwargs"])
        except BaseException as exc:  # SystemExit included: the task failed, not the worker
            self._unmark_running()
            if state.cancelled:  # its record is final already (tasks/cancel.lua): nothing to write
                raise Cancelled(f"cancelled; it ended with {type(exc).__qualname__}") from None
            self._failed(task, key, result, message, attempt, exc, body)
        finally:
            _current.reset(token)
            if in_workflow is not None:
                _in_workflow.reset(in_workflow)
            close_old_connections()
        self._unmark_running()
        if state.cancelled:
            raise Cancelled("cancelled; its return value was dropped")
        try:
            value = normalize_json(value)
            encoded = to_json(value, f"the return value of task {path}")
        except (TypeError, ValueError, RecursionError) as exc:
            # The task ran: running it again would repeat its side effects for
            # a value that can never be stored. It fails once, for good.
            error = _error_json(exc)
            self._ended_member(body)
            self._write(
                key,
                {
                    **attempt,
                    f"error.{delivery}": error,
                    "status": str(TaskResultStatus.FAILED),
                    "finished_at": iso(utcnow()),
                },
                guard=delivery,
                ttl=self.backend.result_ttl_failed,
            )
            _settle(result, TaskResultStatus.FAILED, utcnow(), error=TaskError(**json.loads(error)))
            task_finished.send(type(self.backend), task_result=result)
            raise DeadLetter(
                f"the return value of task {path} cannot be stored as JSON: {exc}"
            ) from None
        finished = utcnow()
        _settle(result, TaskResultStatus.SUCCESSFUL, finished, value=value)
        outcome = {
            **attempt,
            "status": str(TaskResultStatus.SUCCESSFUL),
            "finished_at": iso(finished),
            "return_value": encoded,
        }
        self._ended_member(body)
        self._pending().append((key, outcome, result, time.monotonic(), delivery))

    def _reopen(
        self,
        key: str,
        attempt: dict[str, Any],
        stamp: str,
        task: Task,
        message: Message,
        started: datetime,
    ) -> TaskResult:
        """Start a requeued dead letter's record afresh (its old outcome would refuse this run's),
        unless it was cancelled: then Cancelled."""
        attempt["started_at"] = stamp
        if not self._write(
            key, {"status": str(TaskResultStatus.RUNNING), **attempt}, guard="reopen"
        ) and self.backend.client.hexists(key, "cancelled"):
            raise Cancelled("cancelled before it started (a requeued dead letter)")
        return self._local_result(task, message, started)

    # -- failures: backoff, timeouts -------------------------------------------------

    def _failed(
        self,
        task: Task,
        key: str,
        result: TaskResult,
        message: Message,
        attempt: dict[str, Any],
        exc: BaseException,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Record a failed attempt, then raise what tells the worker how to nack it."""
        delivery = message.attempt + 1
        error = _error_json(exc)
        result.errors.append(TaskError(**json.loads(error)))
        delay: float | None = None
        final = delivery >= message.max_attempts
        stopped = False
        if not final:
            delay, stopped = self._backoff(self.backend.options_for(task), exc, result, message)
        final = final or stopped
        status = TaskResultStatus.FAILED if final else TaskResultStatus.READY
        fields = {**attempt, f"error.{delivery}": error, "status": str(status)}
        if final:
            fields["finished_at"] = iso(utcnow())
            ttl = self.backend.result_ttl_failed
        else:  # the record must outlive the wait for the retry (a backoff may be days)
            wait = delay if delay is not None else queue_defaults()["QUEUE_RETRY_MAX_DELAY"]
            ttl = self.backend.result_ttl + math.ceil(wait)
        if final and body is not None:
            self._ended_member(body)
        self._write(key, fields, guard=delivery, ttl=ttl)
        if final:
            _settle(result, status, utcnow())
            task_finished.send(type(self.backend), task_result=result)
        text = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
        if stopped:
            raise DeadLetter(f"{text} (backoff returned None: no retry)") from exc
        if delay is not None:
            raise Retry(text, delay=delay) from exc
        raise exc

    def _backoff(
        self, options: TaskOptions, exc: BaseException, result: TaskResult, message: Message
    ) -> tuple[float | None, bool]:
        """(delay, stop) from the task's backoff; (None, False): the queue's own retry delay."""
        if options.backoff is None:
            return None, False
        try:
            delay = options.backoff(exc, result)
        except Exception as error:  # noqa: BLE001 - a broken backoff must not lose the retry
            log.warning(
                "task %s: backoff %r failed (%s); using the queue's retry delay",
                message.id,
                options.backoff,
                error,
            )
            return None, False
        if delay is None:
            return None, True
        if (
            isinstance(delay, bool)
            or not isinstance(delay, (int, float))
            or not 0 <= delay < float("inf")
        ):
            log.warning(
                "task %s: backoff %r returned %r, not seconds >= 0 or None; using the queue's "
                "retry delay",
                message.id,
                options.backoff,
                delay,
            )
            return None, False
        return float(delay), False

    def job_timeout(self, message: Message) -> float | None:
        """The worker asks: seconds this message's task may run (None: no limit)."""
        body = message.body
        path = body.get("task") if isinstance(body, dict) else None
        if not isinstance(path, str):
            return None
        try:
            return self._resolve(path)[1]
        except ImportError:
            return None  # the handler dead-letters it at once

    def _resolve(self, path: str) -> tuple[Task, float | None, bool]:
        """The task at ``path``, its timeout and whether its function is a coroutine function,
        resolved once per runner. Raises ImportError if there is no Task there."""
        found = self._resolved.get(path)
        if found is None:
            task = import_string(path)
            if not isinstance(task, Task):
                raise ImportError(f"{path} is a {type(task).__name__}, not a Task")
            found = (task, self.backend.options_for(task).timeout, iscoroutinefunction(task.func))
            self._resolved = {**self._resolved, path: found}
        return found

    def timed_out(self, message: Message, seconds: float) -> None:
        """The worker abandoned this message's attempt at its timeout: record it as failed.

        Called from the worker's own thread while the task's thread is still
        running (it cannot be stopped). Raises :class:`Retry` or
        :class:`DeadLetter`, as a failure of the task would.
        """
        body = message.body
        path, result_id = body["task"], body["result"]
        if not valid_id(result_id):
            raise DeadLetter(
                f"not a task message: result id {str(result_id)[:200]!r} is not one of ours"
            )
        key = self.backend._result_key(result_id)
        delivery = message.attempt + 1
        exc = TaskTimedOut(
            f"task {path} ran past its timeout of {seconds:g} s; its thread was abandoned"
        )
        with self._running_lock:  # the attempt as it started, if its thread registered it
            running = [a for a in self._running.values() if a.key == key and a.delivery == delivery]
        if running and running[0].cancelled:  # its record is final already (tasks/cancel.lua)
            raise DeadLetter(
                f"cancelled, and still running {self.backend.cancel_grace:g} s later: its thread "
                "was abandoned"
            )
        started = [a.fields for a in running]
        attempt = (
            started[0]
            if started
            else {"last_attempted_at": iso(utcnow()), f"worker.{delivery}": self.worker_id}
        )
        try:
            task = import_string(path)
            result = self.backend.get_result(result_id)
        except (ImportError, TaskResultDoesNotExist):
            task, result = None, None
        if not isinstance(task, Task) or result is None:  # cannot ask its backoff: record and retry
            fields = {
                **attempt,
                f"error.{delivery}": _error_json(exc),
                "status": str(TaskResultStatus.READY),
            }
            self._write_now(key, fields, guard=delivery)
            raise Retry(
                f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}", delay=0
            ) from None
        self._failed(task, key, result, message, attempt, exc)

    def _local_result(self, task: Task, message: Message, started: datetime) -> TaskResult:
        """The TaskResult given to signals and the context, built without a round trip."""
        body = message.body
        if (
            task.queue_name != message.queue or task.priority != message.priority
        ):  # (a copy only when they differ)
            try:
                task = task.using(queue_name=message.queue, priority=message.priority)
            except Exception:  # noqa: BLE001 - the options validated at enqueue; settings may have changed
                pass
        return TaskResult(
            task=task,
            id=body["result"],
            status=TaskResultStatus.RUNNING,
            enqueued_at=message.enqueued_at,
            started_at=started,
            finished_at=None,
            last_attempted_at=started,
            args=body["args"],
            kwargs=body["kwargs"],
            backend=self.backend.alias,
            errors=[],
            worker_ids=[self.worker_id],
        )

    # -- writes -----------------------------------------------------------------------

    def _write(
        self, key: str | None, fields: dict[str, Any], *, guard: Any = "", ttl: int | None = None
    ) -> bool:
        """Write now, with the held-back outcomes (``key`` None: only those), in one round trip.
        Returns whether ``key``'s write landed (its guard let it).

        ``ttl``: seconds the record then lives (default ``RESULT_TTL``);
        successes get ``RESULT_TTL_SUCCESSFUL``.
        """
        backend = self.backend
        writes = [
            (backend.result_ttl_successful, delivery, k, f)
            for k, f, _, _, delivery in self._pending()
        ]
        if key is not None:
            writes.append((ttl or backend.result_ttl, guard, key, fields))
        landed = self._send(writes, "record task results")
        self.written(landed)
        return bool(landed[-1]) if key is not None else True

    def _write_now(self, key: str, fields: dict[str, Any], *, guard: Any = "") -> None:
        """Write one record now, leaving the held-back outcomes alone (any thread)."""
        self._send([(self.backend.result_ttl, guard, key, fields)], "record task results")

    def _send(
        self, writes: list[tuple[int, Any, str, dict[str, Any]]], operation: str
    ) -> list[int]:
        """``writes`` (ttl, guard, key, fields) in one round trip (see
        :func:`~django_redcoord.core.queues.records.write_records`): 1 for each that landed."""
        return write_records(self.backend.client, writes, operation=operation)

    # -- RUNNING, for tasks that take a while --------------------------------------------

    def _mark_running(
        self, key: str, delivery: int, attempt: dict[str, Any], message_id: str
    ) -> Attempt:
        state = Attempt(key, delivery, attempt, message_id)
        state.started = time.monotonic()
        with self._running_lock:
            self._running[threading.get_ident()] = state
            if self._marker is None:
                self._marker = threading.Thread(
                    target=self._marker_loop, name="redcoord-task-status", daemon=True
                )
                self._marker.start()
        return state

    def _unmark_running(self) -> None:
        with self._running_lock:
            self._running.pop(threading.get_ident(), None)

    def _marker_loop(self) -> None:
        polled = time.monotonic()
        while not self._closed.wait(self.RUNNING_AFTER / 2):
            now = time.monotonic()
            with self._running_lock:
                due = [
                    a
                    for a in self._running.values()
                    if not a.marked and now - a.started >= self.RUNNING_AFTER
                ]
                for state in due:
                    state.marked = True
            if now - polled >= self.CANCEL_POLL:
                polled = now
                self._poll_cancels()
            if not due:
                continue
            writes = [
                (
                    self.backend.result_ttl,
                    a.delivery,
                    a.key,
                    {"status": str(TaskResultStatus.RUNNING), **a.fields},
                )
                for a in due
            ]
            try:
                self._send(writes, "mark tasks running")
            except Exception as exc:  # the status is cosmetic; the outcome will land anyway
                log.warning("could not record RUNNING for %d task(s): %s", len(due), exc)

    def _poll_cancels(self) -> None:
        """Look whether the tasks we hold were cancelled (tasks/cancel.lua sets ``cancelled`` in
        their records): one round trip for all. A running one is told (``context.cancelled()``,
        ``CancelledError`` for an async task) and has ``CANCEL_GRACE`` seconds to end; an
        unstarted one is skipped when its turn comes."""
        with self._running_lock:
            running = [a for a in self._running.values() if not a.cancelled]
            waiting = [k for k in self._waiting if k not in self._cancelled]
        keys = [a.key for a in running] + waiting
        if not keys:
            return
        try:
            flags = execute_pipeline(
                self.backend.client,
                lambda pipe: [pipe.hexists(key, "cancelled") for key in keys],
                operation="look for cancelled tasks",
            )
        except Exception as exc:  # noqa: BLE001 - the next look tries again
            log.warning("could not look for cancelled tasks (%d): %s", len(keys), exc)
            return
        found = {key for key, flag in zip(keys, flags, strict=True) if flag}
        for state in running:
            if state.key in found:
                log.info(
                    "task %s was cancelled while it ran: telling it (it has %g s to end)",
                    state.message_id,
                    self.backend.cancel_grace,
                )
                state.cancel()
                if self._worker is not None:
                    self._worker.cut_short(
                        state.message_id,
                        self.backend.cancel_grace,
                        f"was cancelled and still ran {self.backend.cancel_grace:g} s later",
                    )
        with self._running_lock:
            self._cancelled.update(k for k in waiting if k in found and k in self._waiting)


def _cancellable(func: Any, state: Attempt) -> Any:
    """``func`` (a coroutine function) run as a task a cancel can reach: ``state.cancel()`` from
    any thread cancels it at its next await (CancelledError inside the task)."""

    async def run(*args: Any, **kwargs: Any) -> Any:
        loop, me = asyncio.get_running_loop(), asyncio.current_task()
        state.on_cancel(lambda: loop.call_soon_threadsafe(me.cancel))
        return await func(*args, **kwargs)

    return run


def _settle(
    result: TaskResult, status: Any, finished: datetime, *, value: Any = None, error: Any = None
) -> None:
    """Set the outcome on the local TaskResult (``error`` appended, unless None)."""
    object.__setattr__(result, "status", status)
    object.__setattr__(result, "finished_at", finished)
    if error is not None:
        result.errors.append(error)
    elif status == TaskResultStatus.SUCCESSFUL:
        object.__setattr__(result, "_return_value", value)


def _error_json(exc: BaseException) -> str:
    import traceback

    return json.dumps(
        {
            "exception_class_path": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "traceback": "".join(traceback.format_exception(exc)),
        }
    )
