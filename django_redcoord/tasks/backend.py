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
expires ``RESULT_TTL`` seconds after its last change (``RESULT_TTL_SUCCESSFUL``
/ ``RESULT_TTL_FAILED`` once it is final): a task that is due later
(``run_after``, a retry's backoff) keeps its record ``RESULT_TTL`` seconds
past the time it is due, whatever that is. Inside a transaction a task is sent
only once it commits (``ENQUEUE_ON_COMMIT``, default True).

Per task: ``max_attempts``, ``backoff`` and ``timeout`` given to ``@task(...)``
(Django 6.1 and the backport pass them to :class:`~django_redcoord.tasks.options.RedisTask`,
this backend's ``task_class``) or with :func:`~django_redcoord.tasks.options.task_options`
(Django 6.0), else the OPTIONS ``MAX_ATTEMPTS``, ``BACKOFF`` (a callable or its
dotted path) and ``TIMEOUT``.

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
import os
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.checks import Error, Warning  # noqa: A004 - the check message class
from django.db import DEFAULT_DB_ALIAS, transaction
from django.utils.module_loading import import_string

from ..core import (
    CoordinationUnavailable,
    EncodedJSON,
    KeyBuilder,
    Message,
    Queue,
    as_text,
    check_seconds,
    command,
    current_tracer,
    get_async_client,
    get_client,
    in_slot,
    key_slot,
    queue_defaults,
    to_json,
    unavailable_as_ours,
    validate_name,
)
from .cancel import CANCEL, Cancel, cancel_error
from .compat import (
    RESULTS,
    BaseTaskBackend,
    InvalidTaskError,
    Task,
    TaskError,
    TaskResult,
    TaskResultDoesNotExist,
    TaskResultStatus,
    iso,
    task_enqueued,
    until,
    utcnow,
    valid_id,
    when,
)
from .options import (
    RedisTask,
    TaskOptions,
    _check_attempts,
    _check_backoff,
    _check_timeout,
    options_of,
)
from .unique import replaced_fields, unique_push

log = logging.getLogger("django_redcoord.tasks")

#: This thread's tasks enqueued inside a transaction that has not committed yet: result id ->
#: the send that Django runs at commit (weakly: a rollback drops the send, and the entry with it).
_unsent = threading.local()


def _pending() -> weakref.WeakValueDictionary[str, Any]:
    sends = getattr(_unsent, "sends", None)
    if sends is None:
        sends = _unsent.sends = weakref.WeakValueDictionary()
    return sends


class _Unsent:
    """Tasks of one deferred send, enqueued by this thread in a transaction that has not
    committed: referenced by the send that Django holds until the commit (or drops with a
    rollback), and weakly by :func:`_pending`."""

    __slots__ = ("results", "cancelled", "__weakref__")

    def __init__(self, results: Sequence[TaskResult]) -> None:
        self.results = {result.id: result for result in results}
        self.cancelled: set[str] = set()
        for result in results:
            _pending()[result.id] = self

    def committed(self) -> set[str]:
        """The transaction committed (the send runs now): its tasks are read from Redis from
        here on; returns the ids cancelled before, which are not sent."""
        sends = _pending()
        for result_id in self.results:
            if sends.get(result_id) is self:
                del sends[result_id]
        return self.cancelled

    def result(self, result_id: str) -> TaskResult:
        """READY as enqueue() returned it; TaskResultDoesNotExist once cancelled."""
        if result_id in self.cancelled:
            raise TaskResultDoesNotExist(
                f"{result_id}: cancelled before the transaction that enqueued it committed, so "
                "it was never sent"
            )
        return self.results[result_id]


OPTION_DEFAULTS = {
    "RESULT_TTL": 86400,
    "RESULT_TTL_SUCCESSFUL": None,
    "RESULT_TTL_FAILED": None,
    "MAX_ATTEMPTS": None,
    "BACKOFF": None,
    "TIMEOUT": None,
    "ENQUEUE_ON_COMMIT": True,
    "CANCEL_GRACE": 30,
    "OUTBOX": False,
}

#: how long a claimed task's cancel waits for its message to be claimed again or acknowledged
#: (after that its entry is dropped: the message was dead-lettered, or its queue is gone)
CANCEL_KEEP_MS = 7 * 86400 * 1000


class RedisTaskBackend(BaseTaskBackend):
    """Django Tasks backend: enqueue, defer (run_after), priority, results."""

    # : ``@task(max_attempts=..., backoff=..., timeout=...)`` on Django 6.1 and the backport (see
    # RedisTask)
    task_class = RedisTask
    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict) -> None:
        super().__init__(alias, params)
        self._keys: KeyBuilder | None = None
        self._result_keys: dict[str, str] = {}  # result id -> its record's key (see _result_key)
        self._queues: dict[tuple[str, str, int], Queue] = {}
        self._ready_keys: dict[
            tuple[str, str], str
        ] = {}  # (prefix, queue) -> its ready key: the slot of its ids
        self._option_errors = [
            f"unknown option {k!r}" for k in self.options if k not in OPTION_DEFAULTS
        ]
        opts = {**OPTION_DEFAULTS, **self.options}
        self.result_ttl = opts["RESULT_TTL"]
        self.enqueue_on_commit = opts["ENQUEUE_ON_COMMIT"]
        self.max_attempts = opts["MAX_ATTEMPTS"]
        if (
            isinstance(self.result_ttl, bool)
            or not isinstance(self.result_ttl, int)
            or self.result_ttl < 1
        ):
            self._option_errors.append(
                f"RESULT_TTL must be whole seconds >= 1, not {self.result_ttl!r}"
            )
        self.result_ttl_successful = self._ttl(opts, "RESULT_TTL_SUCCESSFUL")
        self.result_ttl_failed = self._ttl(opts, "RESULT_TTL_FAILED")
        self.backoff = self.timeout = None
        outbox = opts["OUTBOX"]
        self.outbox: str | None = DEFAULT_DB_ALIAS if outbox is True else (outbox or None)
        if not isinstance(outbox, (bool, str)) or outbox == "":
            self._option_errors.append(
                f"OUTBOX must be True, False or a database alias, not {outbox!r}"
            )
            self.outbox = None
        grace = opts["CANCEL_GRACE"]
        self.cancel_grace = 30.0
        try:
            self.cancel_grace = check_seconds(grace, "CANCEL_GRACE")
        except (TypeError, ValueError) as exc:
            self._option_errors.append(str(exc))
        try:
            self.max_attempts = _check_attempts(self.max_attempts, "MAX_ATTEMPTS")
        except (TypeError, ValueError) as exc:
            self._option_errors.append(str(exc))
        try:
            self.timeout = _check_timeout(opts["TIMEOUT"], "TIMEOUT")
            backoff = opts["BACKOFF"]
            self.backoff = _check_backoff(
                import_string(backoff) if isinstance(backoff, str) else backoff, "BACKOFF"
            )
        except (ImportError, TypeError, ValueError) as exc:
            self._option_errors.append(str(exc))
        if not self.queues:
            # Django's base backend reads an empty QUEUES as "any queue", but a
            # worker serves named queues: tasks sent elsewhere would never run.
            self._option_errors.append(
                "QUEUES is empty; list the queues tasks may use (run_worker serves them), e.g. "
                "['default']"
            )
        for name in self.queues:
            try:
                validate_name(name, "queue name")
            except (TypeError, ValueError) as exc:
                self._option_errors.append(str(exc))

    def _ttl(self, opts: dict[str, Any], name: str) -> int:
        """A final result's TTL option: whole seconds >= 1, default RESULT_TTL."""
        ttl = opts[name]
        if ttl is None:
            return self.result_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 1:
            self._option_errors.append(f"{name} must be whole seconds >= 1, not {ttl!r}")
            return self.result_ttl
        return ttl

    def options_for(self, task: Task) -> TaskOptions:
        """``task``'s options (:func:`task_options`), the backend's OPTIONS filling the gaps."""
        own = options_of(task)
        return TaskOptions(
            max_attempts=own.max_attempts or self.max_attempts,
            backoff=own.backoff or self.backoff,
            timeout=own.timeout or self.timeout,
        )

    def check(self, **kwargs: Any) -> list[Error | Warning]:
        errors: list[Error | Warning] = [
            Error(
                f"TASKS[{self.alias!r}]: {msg}",
                hint="Options: " + ", ".join(OPTION_DEFAULTS),
                id="redcoord.E004",
            )
            for msg in self._option_errors
        ]
        if self.outbox is not None:
            from django.apps import apps
            from django.conf import settings

            if not apps.is_installed("django_redcoord.outbox"):
                errors.append(
                    Error(
                        f"TASKS[{self.alias!r}]: OUTBOX needs the outbox's table",
                        hint='Add "django_redcoord.outbox" to INSTALLED_APPS and run migrate.',
                        id="redcoord.E004",
                    )
                )
            elif self.outbox not in settings.DATABASES:
                errors.append(
                    Error(
                        f"TASKS[{self.alias!r}]: OUTBOX names database {self.outbox!r}, which "
                        f"DATABASES does not have",
                        hint="True uses 'default'.",
                        id="redcoord.E004",
                    )
                )
        return errors + self._shared_queues()

    def _shared_queues(self) -> list[Warning]:
        """W041 for each other TASKS alias of ours that names one of our queues: they share its
        Redis queue (one KEY_PREFIX), so a worker of either runs the other's tasks too, with its
        own alias's options."""
        from django.conf import settings
        from django.utils.module_loading import import_string

        found = []
        for alias, params in (getattr(settings, "TASKS", None) or {}).items():
            if alias == self.alias or not isinstance(params, Mapping):
                continue
            try:
                backend = import_string(params.get("BACKEND", ""))
            except ImportError:
                continue  # (Django's own check reports it)
            if not (isinstance(backend, type) and issubclass(backend, RedisTaskBackend)):
                continue
            queues = params.get("QUEUES", ["default"])
            shared = sorted(
                set(self.queues) & set(queues if isinstance(queues, (list, tuple)) else [])
            )
            if shared:
                found.append(
                    Warning(
                        f"TASKS[{self.alias!r}] and TASKS[{alias!r}] share the queue(s) "
                        f"{', '.join(map(repr, shared))} (one Redis queue per name), so "
                        f"`run_worker --backend {self.alias}` also runs the tasks sent through "
                        f"{alias!r} (with {self.alias!r}'s OPTIONS), and the other way round",
                        hint="Give each alias its own queue names in QUEUES (or use one alias).",
                        id="redcoord.W041",
                    )
                )
        return found

    # -- plumbing ----------------------------------------------------------------

    @property
    def client(self) -> Any:
        return get_client()

    def queue(self, name: str, max_attempts: int | None = None) -> Queue:
        """The Redis queue of a Tasks queue name (cached; rebuilt when settings change).

        ``max_attempts`` (default: ``MAX_ATTEMPTS``, else ``QUEUE_MAX_ATTEMPTS``)
        is what the queue writes into the messages it pushes.
        """
        from .. import conf

        attempts = max_attempts or self.max_attempts or queue_defaults()["QUEUE_MAX_ATTEMPTS"]
        cache_key = (name, conf.default_prefix(), id(get_client()), attempts)
        queue = self._queues.get(cache_key)
        if queue is None:
            queue = Queue(name, max_attempts=attempts)
            self._queues = {**self._queues, cache_key: queue}
        return queue

    def _result_key(self, result_id: str) -> str:
        from .. import conf

        prefix = conf.default_prefix()
        builder = self._keys
        if builder is None or builder.prefix != prefix:  # settings may change (tests)
            builder = self._keys = KeyBuilder(prefix)
            self._result_keys = {}
        key = self._result_keys.get(result_id)
        if key is None:  # (a worker builds each key three times: claim, start, outcome)
            key = builder.task_result(result_id)
            if len(self._result_keys) >= 4096:
                self._result_keys = {}
            self._result_keys[result_id] = key
        return key

    # -- enqueue -------------------------------------------------------------------

    def enqueue(self, task: Task, args: Any, kwargs: Any) -> TaskResult:
        """Send ``task`` (after the current transaction commits, if any).

        Everything that can be refused is refused here, at the call: bad
        options, a queue the backend does not serve, arguments that are not
        strict JSON (NaN, sets, objects, too deeply nested). Inside a
        transaction nothing can then fail at commit time but Redis itself.
        """
        result, encoded = self._prepare(task, args, kwargs)
        key = options_of(task).unique_key(result.args, result.kwargs)
        using = self.outbox or DEFAULT_DB_ALIAS
        deferred = self.enqueue_on_commit and transaction.get_connection(using).in_atomic_block
        holder: list[str] = []  # a unique task's duplicate: the id of the task holding its key
        outbox = self.outbox if deferred else None
        prepared = None  # with an outbox, the push is built now: its row holds it
        if (
            outbox is not None
        ):  # written in the caller's transaction: it commits with it, or not at all
            prepared = self._push(task, result, encoded, key)
            self._to_outbox(task, result, *prepared, key)

        unsent = _Unsent([result]) if deferred else None

        def send() -> None:
            if unsent is not None and result.id in unsent.committed():
                # Cancelled before the commit: never sent. Its outbox row goes now too (the
                # cancel's delete may have been rolled back with a savepoint; the cancel stands).
                self._from_outbox(outbox, result.id)
                return
            queue, push = prepared or self._push(task, result, encoded, key)
            try:
                if key is None:  # (with an outbox: only if a drain did not send it first)
                    queue.push_with_record(**push, only_new=outbox is not None)
                else:
                    unique = unique_push(task.module_path, key, options_of(task), deferred=deferred)
                    pushed, other, attempts = queue.push_unique_with_record(unique=unique, **push)
                    if not pushed:
                        if other != result.id:  # (itself: a drain sent it first)
                            holder.append(other)
                        self._from_outbox(outbox, result.id)
                        return
                    if other:
                        self._replaced(other, result.id, key, attempts)
            except CoordinationUnavailable as exc:
                if outbox is None:
                    raise
                log.warning(
                    "task %s: Redis cannot be reached as its transaction commits (%s); it waits in "
                    "the outbox, which run_worker drains",
                    result.id,
                    exc,
                )
                return
            self._from_outbox(outbox, result.id)
            task_enqueued.send(type(self), task_result=result)

        if deferred:
            tracer = (
                current_tracer()
            )  # the send span belongs to the trace of this call, not of the commit's
            transaction.on_commit(send if tracer is None else tracer.bind(send), using=using)
        else:
            send()
        return self._holder_result(holder[0], result) if holder else result

    def _to_outbox(
        self, task: Task, result: TaskResult, queue: Queue, push: dict[str, Any], key: str | None
    ) -> None:
        from ..outbox.models import OutboxEntry, payload

        options = options_of(task)
        unique = (
            None
            if key is None
            else {
                "path": task.module_path,
                "key": key,
                "until": options.until,
                "while_running": options.while_running,
                "unique_ttl": options.unique_ttl,
            }
        )
        OutboxEntry.objects.using(self.outbox).create(
            id=result.id,
            backend=self.alias,
            queue=task.queue_name,
            created_at=utcnow(),
            payload=payload(task.queue_name, push, queue.max_attempts, unique),
        )

    @staticmethod
    def _from_outbox(outbox: str | None, result_id: str) -> None:
        """The task was sent: its outbox entry goes (a drain deletes it later if this fails)."""
        if outbox is None:
            return
        from django.db import DatabaseError

        from ..outbox.models import OutboxEntry

        try:
            OutboxEntry.objects.using(outbox).filter(id=result_id).delete()
        except DatabaseError as exc:
            log.warning(
                "task %s was sent; its outbox entry stays until a drain finds it sent: %s",
                result_id,
                exc,
            )

    def _holder_result(self, holder: str, result: TaskResult) -> TaskResult:
        """The result of the task holding a unique key (a second read, on a duplicate only)."""
        try:
            return self.get_result(holder)
        except (
            TaskResultDoesNotExist
        ):  # its record expired while the key lives on: say who holds it
            object.__setattr__(result, "id", holder)
            return result

    def _replaced(self, old: str, new: str, key: str, attempts: int) -> None:
        """Mark FAILED (TaskCancelled) the result of a waiting unique task a new one replaced, now
        (the script's settle entry does it too, should this process die first)."""
        try:
            RESULTS(
                self.client,
                [self._result_key(old)],
                [
                    self.result_ttl_failed,
                    "dead",
                    *self._fields_args(replaced_fields(new, key, max(1, attempts))),
                ],
                operation="mark a replaced task",
            )
        except Exception as exc:  # noqa: BLE001 - the settle entry marks it later
            log.warning(
                "task %s replaced by %s: its result will be marked by a worker: %s", old, new, exc
            )

    @staticmethod
    def _fields_args(fields: dict[str, Any]) -> list[Any]:
        return [len(fields), *(item for pair in fields.items() for item in pair)]

    def enqueue_many(
        self, task: Task, calls: Iterable[tuple[Sequence[Any], Mapping[str, Any]]]
    ) -> list[TaskResult]:
        """Send ``task`` once per ``(args, kwargs)`` of ``calls``, in one round trip (after the
        current transaction commits, if any, as ``enqueue()``). Every call is refused or encoded
        first: one bad call (arguments that are not strict JSON) and nothing is sent. Returns the
        results in the order of ``calls``."""
        using = self.outbox or DEFAULT_DB_ALIAS
        deferred = self.enqueue_on_commit and transaction.get_connection(using).in_atomic_block
        if options_of(task).unique is not None or (deferred and self.outbox is not None):
            # One by one, after every call was checked (all or nothing): each unique push
            # decides on its key; with an outbox, each task gets its row in the transaction.
            checked = [self._call(call) for call in calls]
            for args, kwargs in checked:
                result, _ = self._prepare(task, args, kwargs)
                options_of(task).unique_key(result.args, result.kwargs)
            return [self.enqueue(task, args, kwargs) for args, kwargs in checked]
        prepared = [self._prepare(task, *self._call(call)) for call in calls]

        unsent = _Unsent([result for result, _ in prepared]) if deferred else None

        def send() -> None:
            cancelled = () if unsent is None else unsent.committed()
            kept = [(result, encoded) for result, encoded in prepared if result.id not in cancelled]
            if not kept:
                return
            pushes = [self._push(task, result, encoded) for result, encoded in kept]
            pushes[0][0].push_many_with_records([push for _, push in pushes])
            for result, _ in kept:
                task_enqueued.send(type(self), task_result=result)

        if deferred:
            tracer = current_tracer()
            transaction.on_commit(send if tracer is None else tracer.bind(send), using=using)
        else:
            send()
        return [result for result, _ in prepared]

    async def aenqueue_many(
        self, task: Task, calls: Iterable[tuple[Sequence[Any], Mapping[str, Any]]]
    ) -> list[TaskResult]:
        """``enqueue_many()`` on the event loop: one round trip, sent at once (async code has no
        open transaction to wait for; see ``aenqueue()``)."""
        if options_of(task).unique is not None:  # one by one, after every call was checked
            checked = [self._call(call) for call in calls]
            for args, kwargs in checked:
                result, _ = self._prepare(task, args, kwargs)
                options_of(task).unique_key(result.args, result.kwargs)
            return [await self.aenqueue(task, args, kwargs) for args, kwargs in checked]
        prepared = [self._prepare(task, *self._call(call)) for call in calls]
        if not prepared:
            return []
        pushes = [self._push(task, result, encoded) for result, encoded in prepared]
        await pushes[0][0].apush_many_with_records([push for _, push in pushes])
        asend = getattr(task_enqueued, "asend", None)  # Django >= 5.0
        for result, _ in prepared:
            if asend is not None:
                await asend(type(self), task_result=result)
            else:  # pragma: no cover - Django 4.2
                task_enqueued.send(type(self), task_result=result)
        return [result for result, _ in prepared]

    @staticmethod
    def _call(call: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
        """One ``(args, kwargs)`` of ``enqueue_many``, or a TypeError that says what is allowed."""
        if (
            not isinstance(call, (tuple, list))
            or len(call) != 2
            or not isinstance(call[0], (tuple, list))
            or not isinstance(call[1], Mapping)
            or not all(isinstance(k, str) for k in call[1])
        ):
            # (keyword names are strings: Python's ** refuses others, and JSON would turn 2 into
            # "2")
            raise TypeError(
                f"enqueue_many() takes (args, kwargs) pairs, e.g. ((7,), {{}}), not {call!r}"
            )
        return call[0], call[1]

    async def aenqueue(self, task: Task, args: Any, kwargs: Any) -> TaskResult:
        """``enqueue()`` on the event loop: the same command, with a ``redis.asyncio`` client.

        Async code has no open transaction to wait for (``atomic()`` is sync
        only), so the task is sent at once.
        """
        result, encoded = self._prepare(task, args, kwargs)
        key = options_of(task).unique_key(result.args, result.kwargs)
        queue, push = self._push(task, result, encoded, key)
        if key is None:
            await queue.apush_with_record(**push)
        else:
            unique = unique_push(task.module_path, key, options_of(task), deferred=False)
            pushed, other, attempts = await queue.apush_unique_with_record(unique=unique, **push)
            if not pushed:
                try:
                    return await self.aget_result(other)
                except TaskResultDoesNotExist:
                    object.__setattr__(result, "id", other)
                    return result
            if other:
                args = [
                    self.result_ttl_failed,
                    "dead",
                    *self._fields_args(replaced_fields(result.id, key, max(1, attempts))),
                ]
                try:
                    await RESULTS.arun(
                        get_async_client(),
                        [self._result_key(other)],
                        args,
                        operation="mark a replaced task",
                    )
                except Exception as exc:  # noqa: BLE001 - the settle entry marks it later
                    log.warning(
                        "task %s replaced by %s: a worker will mark it: %s", other, result.id, exc
                    )
        asend = getattr(task_enqueued, "asend", None)  # Django >= 5.0
        if asend is not None:
            await asend(type(self), task_result=result)
        else:  # pragma: no cover - Django 4.2
            task_enqueued.send(type(self), task_result=result)
        return result

    def validate_task(self, task: Task) -> None:
        """Django's checks, and a priority that is a number, not True or False (Django takes a
        bool for an int; the queue does not, and would refuse it only at the push)."""
        super().validate_task(task)
        if type(task.priority) is bool:
            raise InvalidTaskError(f"priority must be a whole number, not {task.priority!r}")

    def _prepare(
        self, task: Task, args: Any, kwargs: Any
    ) -> tuple[TaskResult, tuple[str, str, Any]]:
        """Refuse what can be refused, and encode the arguments: the result to return, and the
        JSON with the task's group (its ``group=`` function called here, at the call: what it
        refuses or raises is refused at ``enqueue()``, never at commit time)."""
        self.validate_task(task)
        if self._option_errors:
            raise ValueError(
                f"TASKS[{self.alias!r}] is misconfigured: {'; '.join(self._option_errors)}"
            )
        what = f"arguments of task {task.module_path}"
        try:
            result = TaskResult(
                task=task,
                id=self._new_id(task.queue_name, _random_alnum(29)),
                status=TaskResultStatus.READY,
                enqueued_at=None,
                started_at=None,
                finished_at=None,
                last_attempted_at=None,
                args=list(args),
                kwargs=dict(kwargs),
                backend=self.alias,
                errors=[],
                worker_ids=[],
            )
        except RecursionError:
            raise TypeError(f"{what} are nested too deeply to be encoded as JSON") from None
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{what} must be JSON-serialisable (dict, list, str, int, finite float, bool, "
                f"None): {exc}"
            ) from None
        group = options_of(task).group_of(result.args, result.kwargs)
        return result, (to_json(result.args, what), to_json(result.kwargs, what), group)

    def _new_id(self, queue_name: str, random: str) -> str:
        """A result id (32 letters and digits) whose record shares the queue's Cluster slot.

        The push and the record are one script; on a Redis Cluster a script's
        keys must share a slot, so the last 3 characters are chosen for it
        (``core.keys.in_slot``). Ids stay random: 29 characters of 62.
        """
        return in_slot(random, key_slot(self._queue_key(queue_name)))

    def _queue_key(self, queue_name: str) -> str:
        from .. import conf

        prefix = conf.default_prefix()
        cached = self._ready_keys.get((prefix, queue_name))
        if cached is None:
            cached = self._ready_keys[(prefix, queue_name)] = (
                KeyBuilder(prefix).queue(queue_name).ready
            )
        return cached

    def _push(
        self,
        task: Task,
        result: TaskResult,
        encoded: tuple[str, str, Any],
        unique: str | None = None,
    ) -> tuple[Queue, dict[str, Any]]:
        """The queue and the arguments of ``push_with_record`` for ``result`` (stamped enqueued
        now)."""
        now = utcnow()
        object.__setattr__(result, "enqueued_at", now)
        args, kwargs, group = encoded
        record = {
            "status": str(TaskResultStatus.READY),
            "task": task.module_path,
            "queue": task.queue_name,
            "priority": task.priority,
            "backend": self.alias,
            "enqueued_at": iso(now),
            "run_after": iso(task.run_after),
        }  # (the arguments are read from the envelope, which the push script adds as 'envelope')
        if unique is not None:
            record["unique"] = unique
        if group is not None:
            record["group"] = group.name
        body = EncodedJSON(
            f'{{"task":{json.dumps(task.module_path)},"result":{json.dumps(result.id)},"args":{args},"kwargs":{kwargs}}}'
        )
        push = {
            "body": body,
            "id": result.id,
            "record_key": self._result_key(result.id),
            "record": record,
            "ttl": self.result_ttl + until(task.run_after, now),
            "eta": task.run_after,
            "priority": task.priority,
        }
        if group is not None:
            push["group"] = group
        return self.queue(task.queue_name, options_of(task).max_attempts), push

    # -- cancel --------------------------------------------------------------------

    def cancel(self, result_id: str) -> Cancel:
        """Cancel the task of ``result_id`` in one round trip (see ``tasks/cancel.py``).

        Returns :attr:`Cancel.REMOVED` (it is never delivered again), :attr:`Cancel.REQUESTED`
        (a worker may be running it: it is told, and its outcome is dropped) or
        :attr:`Cancel.FINISHED` (it already had an outcome: nothing changed). The result is
        final at once: FAILED with a ``TaskCancelled`` error. Cancelling again changes nothing
        and answers what the first cancel did (so a cancel whose reply was lost may be sent
        again). Raises TaskResultDoesNotExist for an id that is not one of ours (or expired).
        No signal is sent: ``task_finished`` is about a run that ended, and a cancelled task's
        run (if any) ends without an outcome.
        """
        unsent = _pending().get(result_id) if isinstance(result_id, str) else None
        if unsent is not None:
            # Enqueued by this thread in a transaction that has not committed: not sent yet,
            # and now never sent (its outbox entry, if any, goes in the same transaction).
            unsent.cancelled.add(result_id)
            self._from_outbox(self.outbox, result_id)
            return Cancel.REMOVED
        outcome = self._cancel(result_id)
        if outcome is not Cancel.FINISHED:
            self._move_workflow_on(result_id)
        return outcome

    def _cancel(self, result_id: str) -> Cancel:
        """The cancel alone (a workflow that cancels its members moves itself on)."""
        keys, args = self._cancel_call(result_id)
        reply = CANCEL(self.client, keys, args, operation=f"cancel task {result_id!r}")
        return self._cancel_outcome(result_id, reply)

    def _move_workflow_on(self, result_id: str) -> None:
        """A cancelled task that is a workflow's member: its workflow moves on now (a second
        round trip, for workflow members only: the first reads whether it is one)."""
        from .workflows import advance

        try:
            workflow, member = command(
                self.client,
                "HMGET",
                self._result_key(result_id),
                "workflow",
                "workflow_member",
                operation=f"read the workflow of task {result_id!r}",
            )
            if workflow is not None and member is not None:
                advance(self, as_text(workflow), [as_text(member)])
        except CoordinationUnavailable:
            pass  # a worker's sweep moves it on

    async def acancel(self, result_id: str) -> Cancel:
        """``cancel()`` on the event loop, with a ``redis.asyncio`` client."""
        keys, args = self._cancel_call(result_id)
        reply = await CANCEL.arun(
            get_async_client(), keys, args, operation=f"cancel task {result_id!r}"
        )
        outcome = self._cancel_outcome(result_id, reply)
        if outcome is not Cancel.FINISHED:
            from asgiref.sync import sync_to_async

            await sync_to_async(self._move_workflow_on, thread_sensitive=False)(result_id)
        return outcome

    def _cancel_call(self, result_id: str) -> tuple[list[str], list[Any]]:
        """The keys and arguments of tasks/cancel.lua: the record, and each queue of ours in
        its slot (the id was made in its queue's slot; the record names the queue)."""
        if not valid_id(result_id):
            raise TaskResultDoesNotExist(result_id)
        from .. import conf

        record = self._result_key(result_id)
        slot = key_slot(record)
        builder = KeyBuilder(conf.default_prefix())
        keys, names = [record], []
        for name in self.queues:
            k = builder.queue(name)
            if key_slot(k.ready) == slot:
                keys.extend((k.ready, k.delayed, k.cancels, k.errors, k.uniq, k.uniq_ids))
                keys.extend(k.grouping()[1:])  # seq, gpend, gstate, gwait
                names.append(name)
        error = cancel_error(f"cancelled at {iso(utcnow())}")
        args = [result_id, error, iso(utcnow()), self.result_ttl_failed, CANCEL_KEEP_MS, *names]
        return keys, args

    def _cancel_outcome(self, result_id: str, reply: Any) -> Cancel:
        code = int(reply[0])
        if code == 0:
            raise TaskResultDoesNotExist(result_id)
        if code == 4:
            raise ValueError(
                f"task {result_id} is on queue {as_text(reply[2])!r}, which "
                f"TASKS[{self.alias!r}]['QUEUES'] no longer lists: add it back to cancel the task"
            )
        return {1: Cancel.FINISHED, 2: Cancel.REMOVED, 3: Cancel.REQUESTED}[code]

    def unique_of(self, result_id: str) -> tuple[str, bool] | None:
        """A unique task's key and whether it holds it now (None: not a unique task). For the
        admin's result page: two reads."""
        if not valid_id(result_id):
            raise TaskResultDoesNotExist(result_id)
        from .. import conf

        with unavailable_as_ours(self.client, f"read the unique key of task {result_id!r}"):
            key, queue = self.client.hmget(self._result_key(result_id), ["unique", "queue"])
            if key is None or queue is None:
                return None
            k = KeyBuilder(conf.default_prefix()).queue(as_text(queue))
            return as_text(key), self.client.hget(k.uniq_ids, result_id) is not None

    # -- results -------------------------------------------------------------------

    def get_result(self, result_id: str) -> TaskResult:
        """The result of ``result_id``; TaskResultDoesNotExist for any id that is not one of ours
        (whatever its characters or type), an expired one, or a record that can no longer be
        read."""
        if not valid_id(result_id):
            raise TaskResultDoesNotExist(result_id)
        unsent = _pending().get(result_id)
        if unsent is not None:
            return unsent.result(result_id)
        with unavailable_as_ours(self.client, f"read task result {result_id!r}"):
            raw = self.client.hgetall(self._result_key(result_id))
        return self._from_record(result_id, raw)

    async def aget_result(self, result_id: str) -> TaskResult:
        """``get_result()`` on the event loop, with a ``redis.asyncio`` client."""
        if not valid_id(result_id):
            raise TaskResultDoesNotExist(result_id)
        client = get_async_client()
        with unavailable_as_ours(client, f"read task result {result_id!r}"):
            raw = await client.hgetall(self._result_key(result_id))
        return self._from_record(result_id, raw)

    def _from_record(self, result_id: str, raw: dict[Any, Any]) -> TaskResult:
        if not raw:
            raise TaskResultDoesNotExist(result_id)
        try:
            return self._to_result(result_id, {as_text(k): as_text(v) for k, v in raw.items()})
        except (
            ValueError,
            TypeError,
            KeyError,
        ) as exc:  # a record this version cannot read (JSON, a status, a time)
            raise TaskResultDoesNotExist(
                f"{result_id}: the result record cannot be read ({exc})"
            ) from None

    def _to_result(self, result_id: str, rec: dict[str, str]) -> TaskResult:
        if "task" not in rec or "status" not in rec:
            raise TaskResultDoesNotExist(f"{result_id}: the result record is incomplete")
        try:
            task = import_string(rec["task"])
        except ImportError as exc:
            raise TaskResultDoesNotExist(
                f"{result_id}: task {rec['task']!r} no longer exists ({exc})"
            ) from None
        if not isinstance(task, Task):
            raise TaskResultDoesNotExist(f"{result_id}: {rec['task']!r} is no longer a task")
        # The task as it was enqueued: its queue, priority and run_after, not the defaults.
        try:
            task = task.using(
                queue_name=rec.get("queue") or None,
                priority=int(rec["priority"])
                if rec.get("priority", "").lstrip("-").isdigit()
                else None,
                run_after=when(rec.get("run_after")),
            )
        except Exception as exc:  # validated when it was enqueued; settings may have changed since
            log.warning(
                "task result %s: the task's enqueue options no longer validate: %s", result_id, exc
            )
        if "args" in rec:  # a record written before the envelope was kept in it
            args, kwargs = json.loads(rec["args"]), json.loads(rec.get("kwargs", "{}"))
        else:
            body = Message.parse(rec.get("envelope", ""), rec.get("queue", "")).body
            if (
                not isinstance(body, dict)
                or not isinstance(body.get("args"), list)
                or not isinstance(body.get("kwargs"), dict)
            ):
                raise ValueError("its message (the 'envelope' field) cannot be read")
            args, kwargs = body["args"], body["kwargs"]
        numbered = lambda prefix: [  # noqa: E731
            rec[k]
            for k in sorted(
                (k for k in rec if k.startswith(prefix)), key=lambda k: int(k.split(".")[1])
            )
        ]
        result = TaskResult(
            task=task,
            id=result_id,
            status=TaskResultStatus(rec["status"]),
            enqueued_at=when(rec.get("enqueued_at")),
            started_at=when(rec.get("started_at")),
            finished_at=when(rec.get("finished_at")),
            last_attempted_at=when(rec.get("last_attempted_at")),
            args=args,
            kwargs=kwargs,
            backend=rec.get("backend", self.alias),
            errors=[TaskError(**json.loads(e)) for e in numbered("error.")],
            worker_ids=numbered("worker."),
        )
        if "return_value" in rec:
            object.__setattr__(result, "_return_value", json.loads(rec["return_value"]))
        return result


def cancel(result: Any, *, backend: str = "default") -> Cancel:
    """Cancel a task: ``cancel(result)`` with its TaskResult, or ``cancel(result_id,
    backend="default")``. See :meth:`RedisTaskBackend.cancel`."""
    return _backend_of(result, backend).cancel(getattr(result, "id", result))


async def acancel(result: Any, *, backend: str = "default") -> Cancel:
    """``cancel()`` on the event loop."""
    return await _backend_of(result, backend).acancel(getattr(result, "id", result))


def _backend_of(result: Any, alias: str) -> RedisTaskBackend:
    backend = task_backends_for(getattr(result, "backend", None) or alias)
    if not isinstance(backend, RedisTaskBackend):
        raise TypeError(
            f"cancel() needs a task of a RedisTaskBackend, not of {type(backend).__name__}"
        )
    return backend


def task_backends_for(alias: str) -> Any:
    """The configured Tasks backend ``alias`` (django.tasks or the backport)."""
    try:
        from django.tasks import task_backends
    except ImportError:
        from django_tasks import task_backends
    try:
        return task_backends[alias]
    except Exception as exc:
        from ..management import usage_error  # (a --backend that names none: exit code 2)

        raise usage_error(f"no TASKS backend {alias!r}: {exc}") from None


def enqueue_many(task: Any, calls: Iterable[tuple[Sequence[Any], Mapping[str, Any]]]) -> list[Any]:
    """Enqueue ``task`` once per ``(args, kwargs)`` pair of ``calls``, in one round trip.

    ``enqueue_many(send_welcome, [((7,), {}), ((), {"user_id": 8})])``: the
    task's backend (``RedisTaskBackend``) sends them all together, after the
    current transaction commits when ``ENQUEUE_ON_COMMIT`` (as ``enqueue()``).
    Returns the TaskResults in order. Django's Tasks API has no batch call yet;
    this is ours until it has one.
    """
    backend = task.get_backend()
    if not isinstance(backend, RedisTaskBackend):
        raise TypeError(
            f"enqueue_many() needs a task of a RedisTaskBackend, not of {type(backend).__name__}"
        )
    return backend.enqueue_many(task, calls)


async def aenqueue_many(
    task: Any, calls: Iterable[tuple[Sequence[Any], Mapping[str, Any]]]
) -> list[Any]:
    """``enqueue_many()`` on the event loop, in one round trip, sent at once."""
    backend = task.get_backend()
    if not isinstance(backend, RedisTaskBackend):
        raise TypeError(
            f"aenqueue_many() needs a task of a RedisTaskBackend, not of {type(backend).__name__}"
        )
    return await backend.aenqueue_many(task, calls)


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _random_alnum(n: int) -> str:
    """``n`` (at most 40) random letters and digits from one read of the OS's CSPRNG: the digits
    of a
    256-bit number in base 62 (Django's get_random_string reads it once per character, a third
    of an enqueue's time; the bias of the last digits is below 2**-80)."""
    number = int.from_bytes(os.urandom(32), "big")
    out = []
    for _ in range(n):
        number, digit = divmod(number, 62)
        out.append(_ALNUM[digit])
    return "".join(out)
