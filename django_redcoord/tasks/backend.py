"""A backend for Django's Tasks framework on the reliable Redis queues.

``django.tasks`` on Django >= 6.0, the ``django-tasks`` backport before::

    TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "emails"],
            "OPTIONS": {"RESULT_TTL": 86400, "MAX_ATTEMPTS": 3, "ENQUEUE_ON_COMMIT": True},
        }
    }

Enqueue is one command: the push script also writes the result record
(status READY). ``manage.py run_worker`` runs the tasks; results
(status, times, return value, errors, worker ids) live in a Redis hash that
expires ``RESULT_TTL`` seconds after its last change. Inside a transaction a
task is sent only once it commits (``ENQUEUE_ON_COMMIT``, default True).

Delivery is at least once (a worker killed mid-task runs it again elsewhere):
write tasks so that running twice is harmless.

A result always ends consistent with its message: SUCCESSFUL once the task
returned (and its message is acknowledged), FAILED once its message is
dead-lettered, whoever dead-lettered it (the worker that ran it, or the
reaper after its worker died on the last attempt; see ``settle_dead``).
Arguments and return values are strict JSON: refused at ``enqueue()`` (never
at commit time), and a return value that cannot be stored fails the task
once, without running it again.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any

from django.core.checks import Error
from django.db import close_old_connections, transaction
from django.utils.module_loading import import_string

try:  # Django >= 6.0
    from django.tasks import TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import Task, TaskContext, TaskError, TaskResult
    from django.tasks.exceptions import TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
except ImportError:  # the django-tasks backport on Django 4.2 / 5.2
    from django_tasks import TaskResultStatus
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import Task, TaskContext, TaskError, TaskResult
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

from ..core.exceptions import DeliveryFailed
from ..core.keys import KeyBuilder, validate_name
from ..core.queues import Message, Queue
from ..core.queues.messages import EncodedJSON, queue_defaults, to_json
from ..core.queues.worker import DeadLetter
from ..core.transport.clients import get_client
from ..core.transport.commands import as_text
from ..core.transport.errors import unavailable_as_ours
from ..core.transport.scripts import Script

try:  # tuples to lists, bytes to str: what Django's own backends store
    from django.utils.json import normalize_json
except ImportError:  # Django < 6 with the django-tasks backport
    try:
        from django_tasks.utils import normalize_json
    except ImportError:  # pragma: no cover - an older backport

        def normalize_json(obj: Any) -> Any:
            return obj

log = logging.getLogger(__name__)

_RESULTS = Script("tasks/results")
OPTION_DEFAULTS = {"RESULT_TTL": 86400, "MAX_ATTEMPTS": None, "ENQUEUE_ON_COMMIT": True}


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _when(text: bytes | str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.decode() if isinstance(text, bytes) else text)


def _now() -> datetime:
    return datetime.now(timezone.utc)


class RedisTaskBackend(BaseTaskBackend):
    """Django Tasks backend: enqueue, defer (run_after), priority, results."""

    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict) -> None:
        super().__init__(alias, params)
        self._keys: KeyBuilder | None = None
        self._queues: dict[tuple[str, str, int], Queue] = {}
        self._option_errors = [f"unknown option {k!r}" for k in self.options if k not in OPTION_DEFAULTS]
        opts = {**OPTION_DEFAULTS, **self.options}
        self.result_ttl = opts["RESULT_TTL"]
        self.enqueue_on_commit = opts["ENQUEUE_ON_COMMIT"]
        self.max_attempts = opts["MAX_ATTEMPTS"]
        if isinstance(self.result_ttl, bool) or not isinstance(self.result_ttl, int) or self.result_ttl < 1:
            self._option_errors.append(f"RESULT_TTL must be whole seconds >= 1, not {self.result_ttl!r}")
        if self.max_attempts is not None and (
            isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1
        ):
            self._option_errors.append(f"MAX_ATTEMPTS must be a whole number >= 1, not {self.max_attempts!r}")
        if not self.queues:
            # Django's base backend reads an empty QUEUES as "any queue", but a
            # worker serves named queues: tasks sent elsewhere would never run.
            self._option_errors.append(
                "QUEUES is empty; list the queues tasks may use (run_worker serves them), e.g. ['default']"
            )
        for name in self.queues:
            try:
                validate_name(name, "queue name")
            except (TypeError, ValueError) as exc:
                self._option_errors.append(str(exc))

    def check(self, **kwargs: Any) -> list[Error]:
        return [
            Error(f"TASKS[{self.alias!r}]: {msg}", hint="Options: " + ", ".join(OPTION_DEFAULTS), id="redcoord.E004")
            for msg in self._option_errors
        ]

    # -- plumbing ----------------------------------------------------------------

    @property
    def client(self) -> Any:
        return get_client()

    def queue(self, name: str) -> Queue:
        """The Redis queue of a Tasks queue name (cached; rebuilt when settings change)."""
        from .. import conf

        cache_key = (name, conf.default_prefix(), id(get_client()))
        queue = self._queues.get(cache_key)
        if queue is None:
            queue = Queue(name, max_attempts=self.max_attempts or queue_defaults()["QUEUE_MAX_ATTEMPTS"])
            self._queues = {**self._queues, cache_key: queue}
        return queue

    def _result_key(self, result_id: str) -> str:
        from .. import conf

        prefix = conf.default_prefix()
        builder = self._keys
        if builder is None or builder.prefix != prefix:  # settings may change (tests)
            builder = self._keys = KeyBuilder(prefix)
        return builder.task_result(result_id)

    # -- enqueue -------------------------------------------------------------------

    def enqueue(self, task: Task, args: Any, kwargs: Any) -> TaskResult:
        """Send ``task`` (after the current transaction commits, if any).

        Everything that can be refused is refused here, at the call: bad
        options, a queue the backend does not serve, arguments that are not
        strict JSON (NaN, sets, objects, too deeply nested). Inside a
        transaction nothing can then fail at commit time but Redis itself.
        """
        self.validate_task(task)
        if self._option_errors:
            raise ValueError(f"TASKS[{self.alias!r}] is misconfigured: {'; '.join(self._option_errors)}")
        from django.utils.crypto import get_random_string

        what = f"arguments of task {task.module_path}"
        try:
            result = TaskResult(
                task=task, id=get_random_string(32), status=TaskResultStatus.READY,
                enqueued_at=None, started_at=None, finished_at=None, last_attempted_at=None,
                args=list(args), kwargs=dict(kwargs), backend=self.alias, errors=[], worker_ids=[],
            )  # fmt: skip
        except RecursionError:
            raise TypeError(f"{what} are nested too deeply to be encoded as JSON") from None
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{what} must be JSON-serialisable (dict, list, str, int, finite float, bool, None): {exc}"
            ) from None
        encoded = (to_json(result.args, what), to_json(result.kwargs, what))

        def send() -> None:
            self._send(task, result, encoded)

        if self.enqueue_on_commit and transaction.get_connection().in_atomic_block:
            transaction.on_commit(send)
        else:
            send()
        return result

    def _send(self, task: Task, result: TaskResult, encoded: tuple[str, str]) -> None:
        now = _now()
        object.__setattr__(result, "enqueued_at", now)
        queue = self.queue(task.queue_name)
        key = self._result_key(result.id)
        args, kwargs = encoded
        record = {
            "status": str(TaskResultStatus.READY), "task": task.module_path, "queue": task.queue_name,
            "priority": task.priority, "backend": self.alias, "enqueued_at": _iso(now),
            "run_after": _iso(task.run_after), "args": args, "kwargs": kwargs,
        }  # fmt: skip
        body = EncodedJSON(
            f'{{"task":{json.dumps(task.module_path)},"result":{json.dumps(result.id)},"args":{args},"kwargs":{kwargs}}}'
        )
        queue.push_with_record(
            body, id=result.id, record_key=key, record=record, ttl=self.result_ttl,
            eta=task.run_after, priority=task.priority,
        )  # fmt: skip
        task_enqueued.send(type(self), task_result=result)

    # -- results -------------------------------------------------------------------

    def get_result(self, result_id: str) -> TaskResult:
        with unavailable_as_ours(self.client, f"read task result {result_id!r}"):
            raw = self.client.hgetall(self._result_key(result_id)) if _valid_id(result_id) else {}
        if not raw:
            raise TaskResultDoesNotExist(result_id)
        return self._to_result(result_id, {as_text(k): as_text(v) for k, v in raw.items()})

    def _to_result(self, result_id: str, rec: dict[str, str]) -> TaskResult:
        if "task" not in rec or "status" not in rec:
            raise TaskResultDoesNotExist(f"{result_id}: the result record is incomplete")
        try:
            task = import_string(rec["task"])
        except ImportError as exc:
            raise TaskResultDoesNotExist(f"{result_id}: task {rec['task']!r} no longer exists ({exc})") from None
        if not isinstance(task, Task):
            raise TaskResultDoesNotExist(f"{result_id}: {rec['task']!r} is no longer a task")
        # The task as it was enqueued: its queue, priority and run_after, not the defaults.
        try:
            task = task.using(
                queue_name=rec.get("queue") or None,
                priority=int(rec["priority"]) if rec.get("priority", "").lstrip("-").isdigit() else None,
                run_after=_when(rec.get("run_after")),
            )
        except Exception as exc:  # validated when it was enqueued; settings may have changed since
            log.warning("task result %s: the task's enqueue options no longer validate: %s", result_id, exc)
        numbered = lambda prefix: [rec[k] for k in sorted((k for k in rec if k.startswith(prefix)), key=lambda k: int(k.split(".")[1]))]  # noqa: E731
        result = TaskResult(
            task=task, id=result_id, status=TaskResultStatus(rec["status"]),
            enqueued_at=_when(rec.get("enqueued_at")), started_at=_when(rec.get("started_at")),
            finished_at=_when(rec.get("finished_at")), last_attempted_at=_when(rec.get("last_attempted_at")),
            args=json.loads(rec.get("args", "[]")), kwargs=json.loads(rec.get("kwargs", "{}")), backend=rec.get("backend", self.alias),
            errors=[TaskError(**json.loads(e)) for e in numbered("error.")], worker_ids=numbered("worker."),
        )  # fmt: skip
        if "return_value" in rec:
            object.__setattr__(result, "_return_value", json.loads(rec["return_value"]))
        return result


def _valid_id(result_id: str) -> bool:
    try:
        validate_name(result_id)
    except (TypeError, ValueError):
        return False
    return True


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
            if not _valid_id(result_id):
                continue
            failed_ms = detail.get("failed_ms")
            finished = datetime.fromtimestamp(failed_ms / 1000, timezone.utc) if isinstance(failed_ms, int) else _now()
            attempts = detail.get("attempts") if isinstance(detail.get("attempts"), int) else 1
            error = json.dumps({
                "exception_class_path": f"{DeliveryFailed.__module__}.{DeliveryFailed.__qualname__}",
                "traceback": str(detail.get("error", "dead-lettered")),
            })  # fmt: skip
            fields = {"status": str(TaskResultStatus.FAILED), "finished_at": _iso(finished), f"error.{attempts}": error}
            keys.append(self.backend._result_key(result_id))
            args.extend(("dead", len(fields)))
            for item in fields.items():
                args.extend(item)
        if keys:
            _RESULTS(self.backend.client, keys, args, operation=f"mark dead letters of {queue.name!r} failed")

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
            self._write(key, {"status": str(TaskResultStatus.FAILED), "finished_at": _iso(_now()),
                              f"error.{delivery}": _error_json(exc)})  # fmt: skip
            raise DeadLetter(f"task {path!r} cannot be imported: {exc}") from None
        started = _now()
        attempt = {"last_attempted_at": _iso(started), f"worker.{delivery}": self.worker_id}
        if delivery == 1:
            attempt["started_at"] = _iso(started)
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
                fields["finished_at"] = _iso(_now())
            self._write(key, fields)
            if final:
                _settle(result, status, _now(), error=TaskError(**json.loads(error)))
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
                              "finished_at": _iso(_now())})  # fmt: skip
            _settle(result, TaskResultStatus.FAILED, _now(), error=TaskError(**json.loads(error)))
            task_finished.send(type(self.backend), task_result=result)
            raise DeadLetter(f"the return value of task {path} cannot be stored as JSON: {exc}") from None
        finished = _now()
        _settle(result, TaskResultStatus.SUCCESSFUL, finished, value=value)
        outcome = {**attempt, "status": str(TaskResultStatus.SUCCESSFUL), "finished_at": _iso(finished),
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
            _RESULTS(self.backend.client, keys, args, operation="record task results")
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
                _RESULTS(self.backend.client, [e[0] for e in due], args, operation="mark tasks running")
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


def task_backends_for(alias: str) -> Any:
    """The configured Tasks backend ``alias`` (django.tasks or the backport)."""
    try:
        from django.tasks import task_backends
    except ImportError:
        from django_tasks import task_backends
    try:
        return task_backends[alias]
    except Exception as exc:
        from django.core.management.base import CommandError

        raise CommandError(f"no TASKS backend {alias!r}: {exc}") from None
