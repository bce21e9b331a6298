"""``@task(max_attempts=..., backoff=..., timeout=...)``: the backend's ``task_class`` (RedisTask).

Django 6.1's ``@task`` and the ``django-tasks`` backport pass keywords they do
not know to the backend's ``task_class``; with Django's own ``Task`` they were
a ``TypeError`` at import. The options then work as ``task_options`` gives
them, through the real ``run_worker``, and each field pickles (Django 6.1
pickles a Task).
"""

import pickle
import sys

import pytest
from django.core.management import call_command

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import (
    RedisTask,
    exponential,
    fixed,
    linear,
    task_backends_for,
    task_options,
)
from django_redcoord.tasks.options import options_of

from ..support.task_defs import run_until_finished

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task


@task(max_attempts=2, backoff=fixed(0))
def fails_twice(label):
    get_client().rpush("ran", label)
    raise RuntimeError(f"{label} failed")


@task(queue_name="default", backoff=linear(10))
def retries_in_ten_seconds():
    get_client().rpush("ran", "linear")
    raise ValueError("later")


@task_options(max_attempts=7, timeout=5)
@task(max_attempts=3)
def both_ways():
    return None


@task()
def plain():
    return None


def test_task_takes_the_options_and_the_worker_honours_them(redis_client):
    assert isinstance(fails_twice, RedisTask) and fails_twice.max_attempts == 2
    result = fails_twice.enqueue("a")
    [envelope] = redis_client.zrange(
        task_backends_for("default").queue("default").keys.ready, 0, -1
    )
    assert envelope.split(b"|")[1] == b"2"  # in the message, not the default 3
    run_until_finished(result)
    assert (
        result.status == TaskResultStatus.FAILED
        and len(result.errors) == 2
        and result.attempts == 2
    )
    assert redis_client.lrange("ran", 0, -1) == [b"a", b"a"]


def test_a_backoff_given_to_task_sets_the_retry_due_time(redis_client):
    retries_in_ten_seconds.enqueue()
    call_command("run_worker", "--burst", verbosity=0)
    key = task_backends_for("default").queue("default").keys.delayed
    seconds, micros = redis_client.time()
    [(_, due_ms)] = redis_client.zrange(key, 0, -1, withscores=True)
    assert 9.0 <= (due_ms - (seconds * 1000 + micros // 1000)) / 1000 <= 10.0


def test_using_keeps_them_and_task_wins_over_task_options_field_by_field():
    assert fails_twice.using(priority=5).max_attempts == 2
    assert options_of(fails_twice.using(queue_name="default")).backoff == fixed(0)
    options = options_of(both_ways)
    assert (options.max_attempts, options.timeout) == (
        3,
        5.0,
    )  # @task's max_attempts, task_options' timeout
    assert options_of(plain).max_attempts is None and plain.backoff is None


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"max_attempts": 0}, ValueError, "between 1 and 1000"),
        ({"max_attempts": "3"}, TypeError, "whole number"),
        ({"timeout": 0}, ValueError, "> 0 seconds"),
        ({"timeout": "5"}, TypeError, "number of seconds"),
        ({"backoff": 5}, TypeError, "callable"),
        ({"priority_boost": 1}, TypeError, "priority_boost"),
    ],
)
def test_bad_options_are_refused_when_the_task_is_declared(options, error, says):
    with pytest.raises(error, match=says):
        task(**options)(lambda: None)


def test_every_field_pickles_with_the_helpers():
    for backoff in (
        exponential(base=2, cap=60),
        linear(5, cap=30),
        fixed(3),
        exponential(jitter=False),
    ):
        copy = pickle.loads(pickle.dumps(backoff))
        assert copy == backoff and repr(copy) == repr(backoff)
    # Every field survives. Django 6.1 pickles a Task by its path and unpickles it by importing that
    # path and taking its ``func`` (Task._reconstruct), so the path must name a module-level task;
    # before 6.1 the function itself pickles by reference.
    by_path = hasattr(RedisTask, "_reconstruct")
    func = fails_twice.func if by_path else sys.modules[__name__]._a_function
    made = RedisTask(
        func=func,
        backend="default",
        queue_name="default",
        max_attempts=4,
        backoff=exponential(base=2, cap=9, jitter=False),
        timeout=2.5,
    )
    copy = pickle.loads(pickle.dumps(made))
    assert copy == made and (copy.max_attempts, copy.backoff, copy.timeout) == (
        4,
        exponential(2, 9, False),
        2.5,
    )


def _a_function():
    return None


def test_the_helpers_still_say_what_is_allowed():
    with pytest.raises(ValueError, match=">= 0 seconds"):
        linear(-1)
    with pytest.raises(TypeError, match="jitter must be True or False"):
        exponential(jitter="yes")
    assert repr(linear(5)) == "linear(5)" and repr(fixed(2.5)) == "fixed(2.5)"
