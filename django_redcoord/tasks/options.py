"""Per-task options: attempts, backoff between attempts, a timeout.

In the shape proposed for Django's Tasks (django/new-features#142:
``@task(max_attempts=10, backoff=fn)`` and backend OPTIONS ``MAX_ATTEMPTS`` /
``BACKOFF``). Django's ``@task`` does not take these keywords yet, so they are
given with :func:`task_options`, above or below ``@task``::

    @task_options(max_attempts=5, backoff=exponential(base=2, cap=300), timeout=30)
    @task(queue_name="emails")
    def send_welcome(user_id): ...

The options are kept on the task's function, which every copy of the task
shares (``send_welcome.using(priority=5)`` keeps them) and which the worker
imports by the task's path. When Django's ``@task`` takes them, the same
keywords move into it unchanged.

A backoff is ``backoff(exception, task_result) -> seconds | None``: the delay
before the next attempt, or None to stop retrying (the task fails and its
message is dead-lettered at once). ``task_result.attempts`` counts the
attempts made so far, the failing one included; ``task_result.errors[-1]`` is
its error.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core import Group, check_group_name, finite_number
from .compat import Task

Backoff = Callable[[BaseException, Any], "float | None"]
F = TypeVar("F")

_ATTRIBUTE = "_redcoord_task_options"
MAX_ATTEMPTS_LIMIT = 1000  # what a queue accepts (core/queues/queue.py)


class TaskTimedOut(Exception):
    """Recorded as the error of an attempt that ran past its task's ``timeout``."""


@dataclass(frozen=True)
class TaskOptions:
    """The options of one task; None means "the backend's default"."""

    max_attempts: int | None = None
    backoff: Backoff | None = None
    timeout: float | None = None
    unique: str | Callable[..., str | None] | None = None
    until: str | None = None
    while_running: str | None = None
    unique_ttl: float | None = None
    group: str | Callable[..., str | None] | None = None
    group_concurrency: int | None = None
    group_rate: str | None = None

    def group_of(self, args: Any, kwargs: Any) -> Group | None:
        """The group of a call, with the task's group limits (None: not grouped); refuses a
        bad one."""
        if self.group is None:
            return None
        name = self.group(*args, **kwargs) if callable(self.group) else self.group
        if name is None:
            return None
        try:
            check_group_name(name)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"group function {self.group!r} must return None or a group name: {exc}"
            ) from None
        return Group(name, self.group_concurrency, self.group_rate)

    def unique_key(self, args: Any, kwargs: Any) -> str | None:
        """The unique key of a call (None: the call is not unique); refuses a bad one."""
        if self.unique is None:
            return None
        key = self.unique(*args, **kwargs) if callable(self.unique) else self.unique
        if key is None:
            return None
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_UNIQUE_KEY or not _utf8(key):
            raise TypeError(
                f"unique key function {self.unique!r} must return None or a string of 1 to "
                f"{MAX_UNIQUE_KEY} characters of valid Unicode text, not {key!r}"
            )
        return key


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


#: What a unique key may be: 1 to this many characters.
MAX_UNIQUE_KEY = 1000
UNTIL = ("finished", "started")
WHILE_RUNNING = ("skip", "replace", "one_followup")
#: Seconds a unique key is held at most (the safety net), unless the task says otherwise.
UNIQUE_TTL = 3600.0


def task_options(
    *,
    max_attempts: int | None = None,
    backoff: Backoff | None = None,
    timeout: float | None = None,
    unique: str | Callable[..., str | None] | None = None,
    until: str | None = None,
    while_running: str | None = None,
    unique_ttl: float | None = None,
    group: str | Callable[..., str | None] | None = None,
    group_concurrency: int | None = None,
    group_rate: str | None = None,
) -> Callable[[F], F]:
    """Set a task's options; use above or below ``@task``.

    Args:
        max_attempts: deliveries before the task fails and its message is
            dead-lettered (1-1000; default: the backend's ``MAX_ATTEMPTS``,
            else ``REDCOORD["QUEUE_MAX_ATTEMPTS"]``). Stored in the message
            when it is enqueued.
        backoff: ``backoff(exception, task_result) -> seconds | None`` (see
            the module); default: the backend's ``BACKOFF``, else the queue's
            retry delay (``QUEUE_RETRY_DELAY`` doubling, with jitter).
        timeout: seconds an attempt may run (> 0). Past it the attempt fails
            with :class:`TaskTimedOut` and the worker process exits non-zero
            to be restarted (a thread cannot be stopped; see docs/queues.md).
        unique, until, while_running, unique_ttl: a unique task (see
            :class:`RedisTask` and docs/queues.md, "Unique tasks").
        group, group_concurrency, group_rate: a grouped task (see
            :class:`RedisTask` and docs/queues.md, "Groups").

    Raises TypeError / ValueError at decoration for a value out of range.
    """
    options = TaskOptions(
        _check_attempts(max_attempts),
        _check_backoff(backoff),
        _check_timeout(timeout),
        *_check_unique(unique, until, while_running, unique_ttl),
        *_check_group(group, group_concurrency, group_rate),
    )

    def decorate(target: F) -> F:
        func = getattr(target, "func", target)  # a Task (above @task) or its function (below)
        try:
            setattr(func, _ATTRIBUTE, options)
        except (AttributeError, TypeError):
            raise TypeError(
                f"task_options() decorates a task or a function, not {target!r}"
            ) from None
        return target

    return decorate


_FIELDS = (
    "max_attempts",
    "backoff",
    "timeout",
    "unique",
    "until",
    "while_running",
    "unique_ttl",
    "group",
    "group_concurrency",
    "group_rate",
)


def options_of(task: Any) -> TaskOptions:
    """The options of ``task`` (a Task, or its function): the ones given to ``@task(...)`` (a
    :class:`RedisTask`'s fields), each else the one given with :func:`task_options`."""
    declared = getattr(getattr(task, "func", task), _ATTRIBUTE, None) or TaskOptions()
    if not isinstance(task, RedisTask):
        return declared
    own = {field: getattr(task, field, None) for field in _FIELDS}
    if all(v is None for v in own.values()):
        return declared
    return TaskOptions(**{k: declared.__dict__[k] if v is None else v for k, v in own.items()})


# -- backoff helpers ---------------------------------------------------------------


# Each helper is a small frozen class (so it pickles, as Django 6.1 pickles a Task with its
# fields, and compares equal to another with the same numbers); the functions build them.


@dataclass(frozen=True)
class Exponential:
    """``base`` seconds after the first attempt, doubling after each one, at most ``cap`` (see
    :func:`exponential`)."""

    base: float = 1.0
    cap: float = 300.0
    jitter: bool = True

    def __call__(self, exception: BaseException, task_result: Any) -> float:
        delay = min(self.cap, self.base * 2 ** min(_attempts(task_result) - 1, 64))
        return random.uniform(delay / 2, delay) if self.jitter else delay

    def __repr__(self) -> str:
        return f"exponential(base={self.base:g}, cap={self.cap:g}, jitter={self.jitter})"


@dataclass(frozen=True)
class Linear:
    """``seconds`` times the attempts made so far, at most ``cap`` (see :func:`linear`)."""

    seconds: float
    cap: float = math.inf

    def __call__(self, exception: BaseException, task_result: Any) -> float:
        return min(self.cap, self.seconds * _attempts(task_result))

    def __repr__(self) -> str:
        return f"linear({self.seconds:g}{'' if self.cap == math.inf else f', cap={self.cap:g}'})"


@dataclass(frozen=True)
class Fixed:
    """The same ``seconds`` before every retry (see :func:`fixed`)."""

    seconds: float

    def __call__(self, exception: BaseException, task_result: Any) -> float:
        return self.seconds

    def __repr__(self) -> str:
        return f"fixed({self.seconds:g})"


def exponential(base: float = 1.0, cap: float = 300.0, jitter: bool = True) -> Backoff:
    """``base`` seconds after the first attempt, doubling after each one, at most ``cap``.

    With ``jitter`` (the default) each delay is drawn uniformly from
    [delay / 2, delay], so tasks that failed together do not retry together.
    """
    if not isinstance(jitter, bool):
        raise TypeError(f"jitter must be True or False, not {jitter!r}")
    return Exponential(_check_delay(base, "base"), _check_delay(cap, "cap"), jitter)


def linear(seconds: float, cap: float | None = None) -> Backoff:
    """``seconds`` times the number of attempts made so far (at most ``cap``)."""
    return Linear(
        _check_delay(seconds, "seconds"), math.inf if cap is None else _check_delay(cap, "cap")
    )


def fixed(seconds: float) -> Backoff:
    """The same ``seconds`` before every retry."""
    return Fixed(_check_delay(seconds, "seconds"))


# -- validation (shared with the backend's OPTIONS) ---------------------------------------


def _attempts(task_result: Any) -> int:
    attempts = getattr(task_result, "attempts", None)
    return attempts if isinstance(attempts, int) and attempts >= 1 else 1


def _check_attempts(value: Any, what: str = "max_attempts") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    if not 1 <= value <= MAX_ATTEMPTS_LIMIT:
        raise ValueError(f"{what} must be between 1 and {MAX_ATTEMPTS_LIMIT}, not {value!r}")
    return value


def _check_backoff(value: Any, what: str = "backoff") -> Backoff | None:
    if any(value is helper for helper in (exponential, linear, fixed, Exponential, Linear, Fixed)):
        name = value.__name__.lower()
        raise TypeError(
            f"{what} must be a backoff, not the helper {name} itself: call it, e.g. "
            f"{what}={name}(...)"
        )
    if value is not None and not callable(value):
        raise TypeError(
            f"{what} must be a callable backoff(exception, task_result) -> seconds | None, not "
            f"{value!r}"
        )
    return value


def _check_timeout(value: Any, what: str = "timeout") -> float | None:
    if value is None:
        return None
    if not finite_number(value):
        raise TypeError(f"{what} must be a number of seconds, not {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be > 0 seconds, not {value!r}")
    return float(value)


def _check_unique(
    unique: Any, until: Any, while_running: Any, unique_ttl: Any
) -> tuple[Any, str | None, str | None, float | None]:
    """The unique options, checked: what each may be is in the error."""
    if unique is not None:
        if isinstance(unique, str):
            if not 1 <= len(unique) <= MAX_UNIQUE_KEY or not _utf8(unique):
                raise ValueError(
                    f"unique must be 1 to {MAX_UNIQUE_KEY} characters of valid Unicode text, "
                    f"not {unique[:50]!r}"
                )
        else:
            _check_function(unique, "unique", "a key")
    for name, value, allowed in (
        ("until", until, UNTIL),
        ("while_running", while_running, WHILE_RUNNING),
    ):
        if value is not None and value not in allowed:
            raise ValueError(
                f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}"
            )
        if value is not None and unique is None:
            raise TypeError(f"{name} is an option of a unique task: give unique=... too")
    if unique_ttl is not None:
        unique_ttl = _check_timeout(unique_ttl, "unique_ttl")
        if unique is None:
            raise TypeError("unique_ttl is an option of a unique task: give unique=... too")
    return unique, until, while_running, unique_ttl


def _check_function(value: Any, what: str, text: str) -> None:
    """An option given as a function of the task's arguments: callable, and module-level."""
    if not callable(value):
        raise TypeError(
            f"{what} must be {text} (a string) or a function of the task's arguments returning "
            f"one (or None), not {value!r}"
        )
    qualname = getattr(value, "__qualname__", "")
    if "<lambda>" in qualname or "<locals>" in qualname:
        raise TypeError(
            f"{what} must be a module-level function (Django 6.1 pickles a task with its "
            f"options, and {qualname} does not pickle), or a string"
        )


def _check_group(group: Any, concurrency: Any, rate: Any) -> tuple[Any, int | None, str | None]:
    """The group options, checked: what each may be is in the error."""
    if group is not None:
        if isinstance(group, str):
            check_group_name(group)
        else:
            _check_function(group, "group", "a group name")
    for name, value in (("group_concurrency", concurrency), ("group_rate", rate)):
        if value is not None and group is None:
            raise TypeError(f"{name} is an option of a grouped task: give group=... too")
    if concurrency is not None or rate is not None:
        Group("-", concurrency, rate)  # checks both, saying what is allowed
    return group, concurrency, rate


def _check_delay(value: Any, what: str) -> float:
    if not finite_number(value):
        raise TypeError(f"{what} must be a number of seconds, not {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0 seconds, not {value!r}")
    return float(value)


# -- the task class -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RedisTask(Task):
    """The backend's ``task_class``: a Django ``Task`` that carries this backend's options.

    Django 6.1's ``@task(...)`` (and the ``django-tasks`` backport) pass keywords
    they do not know to the backend's ``task_class``, so::

        @task(queue_name="emails", max_attempts=5, backoff=exponential(base=2), timeout=30)
        def send_welcome(user_id): ...

    ``send_welcome.using(priority=5)`` keeps them. On Django 6.0, whose
    ``@task`` takes no other keyword, :func:`task_options` gives the same
    options; where both give one, ``@task``'s wins. Each field pickles (Django
    6.1 pickles a Task declared at module level with ``@task`` by its path,
    with its fields) when its value does: the backoff helpers
    (:func:`exponential`, :func:`linear`, :func:`fixed`) do, a lambda does not.
    """

    max_attempts: int | None = None
    """Deliveries before the task fails and its message is dead-lettered (1-1000; None: the
    backend's)."""

    backoff: Backoff | None = None
    """``backoff(exception, task_result) -> seconds | None`` between attempts (None: the
    backend's)."""

    timeout: float | None = None
    """Seconds an attempt may run (> 0; None: the backend's)."""

    unique: str | Callable[..., str | None] | None = None
    """A unique task's key, or a module-level function of its arguments returning it (None: that
    call is not unique). While a task holds its key, enqueueing the same key gives its result."""

    until: str | None = None
    """When a unique task frees its key: ``"finished"`` (default) or ``"started"``."""

    while_running: str | None = None
    """What enqueueing a held key does: ``"skip"`` (default), ``"replace"``, ``"one_followup"``."""

    unique_ttl: float | None = None
    """Seconds a unique key is held at most, whatever becomes of its task (default 3600)."""

    group: str | Callable[..., str | None] | None = None
    """The task's group (a tenant, an order), or a module-level function of its arguments
    returning it (None: that call is not grouped): FIFO within a group, round-robin across groups
    (see docs/queues.md, "Groups")."""

    group_concurrency: int | None = None
    """At most this many of a group's tasks claimed at once (1: strictly in order; None: no
    limit)."""

    group_rate: str | None = None
    """How fast a group's tasks may start: one GCRA rate such as ``"10/s"`` (None: no limit)."""

    def __post_init__(self) -> None:
        _check_attempts(self.max_attempts)
        _check_backoff(self.backoff)
        object.__setattr__(self, "timeout", _check_timeout(self.timeout))
        object.__setattr__(
            self,
            "unique_ttl",
            _check_unique(self.unique, self.until, self.while_running, self.unique_ttl)[3],
        )
        _check_group(self.group, self.group_concurrency, self.group_rate)
        Task.__post_init__(
            self
        )  # (the backend validates the task; no zero-argument super() in a slotted dataclass)


def in_group(task: Any, group: str) -> Any:
    """``task`` for calls in ``group``: ``in_group(send_invoice, f"tenant:{t.id}").enqueue(...)``.

    A copy of the task (a :class:`RedisTask`, the backend's ``task_class``) whose calls join
    ``group`` with the task's group limits; the task itself is unchanged.
    """
    check_group_name(group)
    if not isinstance(task, RedisTask):
        raise TypeError(
            f"in_group() takes a task made by the backend's task_class RedisTask (Django 6.1's "
            f"@task, or django-tasks'), not {task!r}; on other versions give the task a group "
            f"function with task_options(group=...)"
        )
    return dataclasses.replace(task, group=group)
