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

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

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


def task_options(
    *, max_attempts: int | None = None, backoff: Backoff | None = None, timeout: float | None = None
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
            to be restarted (a thread cannot be stopped; see the README).

    Raises TypeError / ValueError at decoration for a value out of range.
    """
    options = TaskOptions(_check_attempts(max_attempts), _check_backoff(backoff), _check_timeout(timeout))

    def decorate(target: F) -> F:
        func = getattr(target, "func", target)  # a Task (above @task) or its function (below)
        try:
            setattr(func, _ATTRIBUTE, options)
        except (AttributeError, TypeError):
            raise TypeError(f"task_options() decorates a task or a function, not {target!r}") from None
        return target

    return decorate


def options_of(task: Any) -> TaskOptions:
    """The options given to ``task`` (a Task, or its function) with :func:`task_options`."""
    return getattr(getattr(task, "func", task), _ATTRIBUTE, None) or TaskOptions()


# -- backoff helpers ---------------------------------------------------------------


def exponential(base: float = 1.0, cap: float = 300.0, jitter: bool = True) -> Backoff:
    """``base`` seconds after the first attempt, doubling after each one, at most ``cap``.

    With ``jitter`` (the default) each delay is drawn uniformly from
    [delay / 2, delay], so tasks that failed together do not retry together.
    """
    base, cap = _check_delay(base, "base"), _check_delay(cap, "cap")

    def backoff(exception: BaseException, task_result: Any) -> float:
        delay = min(cap, base * 2 ** min(_attempts(task_result) - 1, 64))
        return random.uniform(delay / 2, delay) if jitter else delay

    backoff.__qualname__ = f"exponential(base={base:g}, cap={cap:g}, jitter={jitter})"
    return backoff


def linear(seconds: float, cap: float | None = None) -> Backoff:
    """``seconds`` times the number of attempts made so far (at most ``cap``)."""
    seconds = _check_delay(seconds, "seconds")
    top = math.inf if cap is None else _check_delay(cap, "cap")

    def backoff(exception: BaseException, task_result: Any) -> float:
        return min(top, seconds * _attempts(task_result))

    backoff.__qualname__ = f"linear({seconds:g}{'' if cap is None else f', cap={top:g}'})"
    return backoff


def fixed(seconds: float) -> Backoff:
    """The same ``seconds`` before every retry."""
    seconds = _check_delay(seconds, "seconds")

    def backoff(exception: BaseException, task_result: Any) -> float:
        return seconds

    backoff.__qualname__ = f"fixed({seconds:g})"
    return backoff


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
    if value is not None and not callable(value):
        raise TypeError(f"{what} must be a callable backoff(exception, task_result) -> seconds | None, not {value!r}")
    return value


def _check_timeout(value: Any, what: str = "timeout") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"{what} must be a number of seconds, not {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be > 0 seconds, not {value!r}")
    return float(value)


def _check_delay(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"{what} must be a number of seconds, not {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0 seconds, not {value!r}")
    return float(value)
