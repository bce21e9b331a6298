"""The worker's side of Django Tasks: import the task, run it, record its outcome.

``manage.py run_worker`` drives a :class:`~django_redcoord.core.queues.Worker`
whose handler is a :class:`TaskRunner`; result writes ride on round trips the
worker makes anyway (see the class).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from django.db import close_old_connections
from django.utils.module_loading import import_string

from ..core.exceptions import DeliveryFailed
from ..core.queues import Message, Queue
from ..core.queues.messages import to_json
from ..core.queues.worker import DeadLetter
from .compat import (
    RESULTS,
    Task,
    TaskContext,
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

    The TaskResult given to the signals is built locally on a first delivery;
    a retry reads the record once (earlier errors, attempts).
    """

    RUNNING_AFTER = 0.05
    FLUSH_AFTER = 0.05

    def __init__(self, backend: RedisTaskBackend, worker_id: str) -> None:
        self.backend = backend
        self.worker_id = worker_id
        self._local = threading.local()  # per worker thread: outcomes held back
        self._running: dict[int, list[Any]] = {}  # thread -> [key, delivery, fields, started, marked]
        self._running_lock = threading.Lock()
        self._closed = threading.Event()
        self._marker: threading.Thread | None = None

    # -- the worker's write-behind protocol -----------------------------------------

    def _pending(self) -> list[tuple[str, dict[str, Any], TaskResult, float]]:
        pending = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    def has_pending(self) -> bool:
        return bool(getattr(self._local, "pending", None))

    def flush(self) -> None:
        """Write the held-back outcomes now (the worker calls it before a claim)."""
        self._write(None, {})

    def written(self) -> None:
        """The held-back outcomes reached Redis: announce them."""
        pending, self._local.pending = self._pending(), []
        for _, _, result, _ in pending:
            task_finished.send(type(self.backend), task_result=result)

    def close(self) -> None:
        """Stop the status thread (the worker is done)."""
        self._closed.set()

    def settle_dead(self, queue: Queue, entries: list[tuple[str, dict[str, Any], Any]]) -> None:
        """Mark FAILED the results of messages dead-lettered without us (a reaper
        found their worker dead on the last attempt), unless they hold an outcome."""
        keys: list[str] = []
        args: list[Any] = [self.backend.result_ttl]
        for result_id, detail, _ in entries:
            if not valid_id(result_id):
                continue
            failed_ms = detail.get("failed_ms")
            finished = datetime.fromtimestamp(failed_ms / 1000, timezone.utc) if isinstance(failed_ms, int) else utcnow()
            attempts = detail.get("attempts") if isinstance(detail.get("attempts"), int) else 1
            error = json.dumps({
                "exception_class_path": f"{DeliveryFailed.__module__}.{DeliveryFailed.__qualname__}",
                "traceback": str(detail.get("error", "dead-lettered")),
            })  # fmt: skip
            fields = {"status": str(TaskResultStatus.FAILED), "finished_at": iso(finished), f"error.{attempts}": error}
            keys.append(self.backend._result_key(result_id))
            args.extend(("dead", len(fields)))
            for item in fields.items():
                args.extend(item)
        if keys:
            RESULTS(self.backend.client, keys, args, operation=f"mark dead letters of {queue.name!r} failed")

    # -- one delivery ---------------------------------------------------------------

    def __call__(self, message: Message) -> None:
        body = message.body
        if (
            not isinstance(body, dict) or not isinstance(body.get("task"), str) or not isinstance(body.get("result"), str)
            or not isinstance(body.get("args"), list) or not isinstance(body.get("kwargs"), dict)
        ):  # fmt: skip
            raise DeadLetter(f"not a task message: {str(body)[:200]}")
        path, result_id = body["task"], body["result"]
        key = self.backend._result_key(result_id)
        delivery = message.attempt + 1
        try:
            task = import_string(path)
            if not isinstance(task, Task):
                raise ImportError(f"{path} is a {type(task).__name__}, not a Task")
        except ImportError as exc:
            self._write(key, {"status": str(TaskResultStatus.FAILED), "finished_at": iso(utcnow()),
                              f"error.{delivery}": _error_json(exc)})  # fmt: skip
            raise DeadLetter(f"task {path!r} cannot be imported: {exc}") from None
        started = utcnow()
        attempt = {"last_attempted_at": iso(started), f"worker.{delivery}": self.worker_id}
        if delivery == 1:
            attempt["started_at"] = iso(started)
            pending = self._pending()
            if pending and time.monotonic() - pending[0][3] >= self.FLUSH_AFTER:
                self.flush()  # outcomes waited long enough: land them now
            result = self._local_result(task, message, started)
        else:  # a retry: mark it running now, and read earlier errors and workers
            self._write(key, {"status": str(TaskResultStatus.RUNNING), **attempt})
            try:
                result = self.backend.get_result(result_id)
            except TaskResultDoesNotExist:  # expired (RESULT_TTL) or unreadable: run it all the same
                result = self._local_result(task, message, started)
        self._mark_running(key, delivery, attempt)
        task_started.send(type(self.backend), task_result=result)
        close_old_connections()
        try:
            if task.takes_context:
                value = task.call(TaskContext(task_result=result), *body["args"], **body["kwargs"])
            else:
                value = task.call(*body["args"], **body["kwargs"])
        except BaseException as exc:  # SystemExit included: the task failed, not the worker
            self._unmark_running()
            final = delivery >= message.max_attempts
            error = _error_json(exc)
            status = TaskResultStatus.FAILED if final else TaskResultStatus.READY
            fields = {**attempt, f"error.{delivery}": error, "status": str(status)}
            if final:
                fields["finished_at"] = iso(utcnow())
            self._write(key, fields)
            if final:
                _settle(result, status, utcnow(), error=TaskError(**json.loads(error)))
                task_finished.send(type(self.backend), task_result=result)
            raise
        finally:
            close_old_connections()
        self._unmark_running()
        try:
            value = normalize_json(value)
            encoded = to_json(value, f"the return value of task {path}")
        except (TypeError, ValueError, RecursionError) as exc:
            # The task ran: running it again would repeat its side effects for
            # a value that can never be stored. It fails once, for good.
            error = _error_json(exc)
            self._write(key, {**attempt, f"error.{delivery}": error, "status": str(TaskResultStatus.FAILED),
                              "finished_at": iso(utcnow())})  # fmt: skip
            _settle(result, TaskResultStatus.FAILED, utcnow(), error=TaskError(**json.loads(error)))
            task_finished.send(type(self.backend), task_result=result)
            raise DeadLetter(f"the return value of task {path} cannot be stored as JSON: {exc}") from None
        finished = utcnow()
        _settle(result, TaskResultStatus.SUCCESSFUL, finished, value=value)
        outcome = {**attempt, "status": str(TaskResultStatus.SUCCESSFUL), "finished_at": iso(finished),
                   "return_value": encoded}  # fmt: skip
        self._pending().append((key, outcome, result, time.monotonic()))

    def _local_result(self, task: Task, message: Message, started: datetime) -> TaskResult:
        """The TaskResult given to signals and the context, built without a round trip."""
        body = message.body
        try:
            task = task.using(queue_name=message.queue, priority=message.priority)
        except Exception:  # noqa: BLE001 - the options validated at enqueue; settings may have changed
            pass
        return TaskResult(
            task=task, id=body["result"], status=TaskResultStatus.RUNNING, enqueued_at=message.enqueued_at,
            started_at=started, finished_at=None, last_attempted_at=started, args=body["args"],
            kwargs=body["kwargs"], backend=self.backend.alias, errors=[], worker_ids=[self.worker_id],
        )  # fmt: skip

    # -- writes -----------------------------------------------------------------------

    def _write(self, key: str | None, fields: dict[str, Any]) -> None:
        """Write now (``key`` None: only the held-back outcomes), in one command."""
        extra = [] if key is None else [("", key, fields)]
        keys, args = self._script_args(extra)
        if keys:
            RESULTS(self.backend.client, keys, args, operation="record task results")
        self.written()

    def _script_args(self, extra: Any) -> tuple[list[str], list[Any]]:
        keys: list[str] = []
        args: list[Any] = [self.backend.result_ttl]
        for guard, key, fields in [("", k, f) for k, f, _, _ in self._pending()] + list(extra):
            keys.append(key)
            args.extend((guard, len(fields)))
            for item in fields.items():
                args.extend(item)
        return keys, args

    # -- RUNNING, for tasks that take a while --------------------------------------------

    def _mark_running(self, key: str, delivery: int, attempt: dict[str, Any]) -> None:
        with self._running_lock:
            self._running[threading.get_ident()] = [key, delivery, attempt, time.monotonic(), False]
            if self._marker is None:
                self._marker = threading.Thread(target=self._marker_loop, name="redcoord-task-status", daemon=True)
                self._marker.start()

    def _unmark_running(self) -> None:
        with self._running_lock:
            self._running.pop(threading.get_ident(), None)

    def _marker_loop(self) -> None:
        while not self._closed.wait(self.RUNNING_AFTER / 2):
            now = time.monotonic()
            with self._running_lock:
                due = [e for e in self._running.values() if not e[4] and now - e[3] >= self.RUNNING_AFTER]
                for entry in due:
                    entry[4] = True
            if not due:
                continue
            args: list[Any] = [self.backend.result_ttl]
            for _key, delivery, attempt, _, _ in due:
                fields = {"status": str(TaskResultStatus.RUNNING), **attempt}
                args.extend((delivery, len(fields)))
                for item in fields.items():
                    args.extend(item)
            try:
                RESULTS(self.backend.client, [e[0] for e in due], args, operation="mark tasks running")
            except Exception as exc:  # the status is cosmetic; the outcome will land anyway
                log.warning("could not record RUNNING for %d task(s): %s", len(due), exc)


def _settle(result: TaskResult, status: Any, finished: datetime, *, value: Any = None, error: Any = None) -> None:
    object.__setattr__(result, "status", status)
    object.__setattr__(result, "finished_at", finished)
    if error is not None:
        result.errors.append(error)
    else:
        object.__setattr__(result, "_return_value", value)


def _error_json(exc: BaseException) -> str:
    import traceback

    return json.dumps({
        "exception_class_path": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "traceback": "".join(traceback.format_exception(exc)),
    })  # fmt: skip
