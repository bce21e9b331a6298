"""Red team (2026): ``@task(max_attempts=..., backoff=..., timeout=...)`` (RedisTask) and
task_options.

Bad values are refused with TypeError/ValueError when the task is declared
(never another exception, never accepted to fail later); the options survive
``using()`` and pickling; the worker honours each, on a paused queue too.
"""

from __future__ import annotations

import pickle

import pytest
from django.core.management import call_command

from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import RedisTask, exponential, fixed, linear, task_options
from django_redcoord.tasks.options import options_of

from ..support.task_defs import run_until_finished

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task


def _fn():
    return None


@task(max_attempts=3, backoff=fixed(0))
def flaky(label):
    n = get_client().incr(f"rt:{label}")
    if n < 3:
        raise RuntimeError(f"{label} attempt {n}")
    return n


@task(max_attempts=5, backoff=fixed(0))
def pauses_then_fails(label):
    n = get_client().incr(f"rt:{label}")
    if n == 1:
        Queue("default").pause("an operator pauses while it fails")
        raise RuntimeError("first attempt")
    return n


@task(max_attempts=4, backoff=exponential(base=1e300, cap=1e300, jitter=False))
def fails_with_a_huge_backoff():
    get_client().incr("rt:huge")
    raise RuntimeError("try again in 1e300 s")


# -- declaring -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, error",
    [
        ({"max_attempts": 0}, ValueError),
        ({"max_attempts": 1001}, ValueError),
        ({"max_attempts": True}, TypeError),
        ({"max_attempts": 2.0}, TypeError),
        ({"max_attempts": "3"}, TypeError),
        ({"timeout": 0}, ValueError),
        ({"timeout": -1}, ValueError),
        ({"timeout": float("inf")}, TypeError),
        ({"timeout": float("nan")}, TypeError),
        ({"timeout": "5"}, TypeError),
        ({"timeout": True}, TypeError),
        ({"backoff": 5}, TypeError),
        ({"backoff": "fixed(1)"}, TypeError),
    ],
)
def test_bad_values_are_refused_when_declared(options, error):
    with pytest.raises(error):
        task(**options)(_fn)
    with pytest.raises(error):
        task_options(**options)(_fn)


@pytest.mark.parametrize("options", [{"timeout": 10**400}, {"max_attempts": 10**400}])
def test_a_huge_integer_is_refused_with_a_type_or_value_error(options):
    """Before: ``math.isfinite(10**400)`` raised OverflowError, which neither the decorator's
    contract (TypeError/ValueError) nor the backend's OPTIONS check (it catches those two) expects
    (core.values.finite_number now says such an int is not a finite number, everywhere)."""
    with pytest.raises((TypeError, ValueError)):
        task(**options)(_fn)


@pytest.mark.parametrize(
    "make",
    [
        lambda: exponential(base=10**400),
        lambda: linear(10**400),
        lambda: fixed(10**400),
        lambda: exponential(cap=10**400),
        lambda: linear(1, cap=10**400),
    ],
)
def test_a_huge_integer_given_to_a_backoff_helper_is_refused_with_a_type_or_value_error(make):
    """Before: _check_delay's math.isfinite raised OverflowError."""
    with pytest.raises((TypeError, ValueError)):
        make()


def test_a_huge_integer_in_the_backend_options_is_reported_not_raised(settings):
    """Before: TIMEOUT=10**400 in TASKS OPTIONS raised OverflowError from the backend's
    constructor instead of becoming a redcoord.E004 check error like every other bad option."""
    from django_redcoord.tasks.backend import RedisTaskBackend

    backend = RedisTaskBackend("rt", {"QUEUES": ["default"], "OPTIONS": {"TIMEOUT": 10**400}})
    assert any("TIMEOUT" in e.msg for e in backend.check())


@pytest.mark.parametrize("helper", [exponential, linear, fixed])
def test_a_backoff_helper_given_uncalled_is_refused_when_declared(helper):
    """Before: ``backoff=exponential`` (the factory, not ``exponential()``) is callable, so it was
    accepted; at the first failure it was called as ``exponential(exc, task_result)``, raised,
    and the
    runner silently fell back to the queue's retry delay: the declared backoff never applied."""
    with pytest.raises(TypeError):
        task(backoff=helper)(_fn)


def test_using_keeps_every_option_and_pickles():
    t = task(max_attempts=4, backoff=linear(2, cap=9), timeout=3)(_fn)
    for copy in (t.using(priority=7), t.using(queue_name="receipts"), t.using(run_after=None)):
        assert isinstance(copy, RedisTask)
        assert (copy.max_attempts, copy.backoff, copy.timeout) == (4, linear(2, cap=9), 3.0)
        assert options_of(copy) == options_of(t)
    for value in (linear(2, cap=9), exponential(base=0.5, cap=3, jitter=False), fixed(0)):
        assert pickle.loads(pickle.dumps(value)) == value


def test_using_cannot_smuggle_bad_values_in_through_replace():
    import dataclasses

    t = task(max_attempts=4)(_fn)
    with pytest.raises(ValueError):
        dataclasses.replace(t, max_attempts=0)
    with pytest.raises(TypeError):
        dataclasses.replace(t, timeout="x")


# -- running ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_max_attempts_and_backoff_through_using_are_honoured(redis_client):
    result = flaky.using(priority=9).enqueue("a")
    run_until_finished(result)
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 3
    assert len(result.errors) == 2 and len(result.worker_ids) == 3


@pytest.mark.django_db(transaction=True)
def test_a_retry_of_a_task_on_a_queue_paused_during_its_attempt_waits_for_the_resume(redis_client):
    result = pauses_then_fails.enqueue("p")
    for _ in range(3):
        call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert result.status == TaskResultStatus.READY and len(result.errors) == 1
    assert int(get_client().get("rt:p")) == 1  # the retry (backoff 0) waited
    Queue("default").resume()
    run_until_finished(result)
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 2
    assert int(get_client().get("rt:p")) == 2


@pytest.mark.django_db(transaction=True)
def test_a_huge_but_finite_backoff_keeps_the_task_and_its_record(redis_client):
    """Passes: a 1e300 s backoff is recorded and the message waits in delayed (nothing lost)."""
    result = fails_with_a_huge_backoff.enqueue()
    call_command("run_worker", "--burst", verbosity=0)
    result.refresh()
    assert int(get_client().get("rt:huge")) == 1
    assert (
        result.status == TaskResultStatus.READY and len(result.errors) == 1
    )  # recorded, waiting for its retry
    depths = Queue("default").depths()
    assert depths.delayed == 1 and depths.dead == 0 and depths.processing == 0


@pytest.mark.parametrize(
    "check",
    [
        lambda: __import__("django_redcoord.core.values", fromlist=["x"]).check_seconds(
            10**400, "wait"
        ),
        lambda: __import__("django_redcoord.core.values", fromlist=["x"]).check_ttl(10**400),
        lambda: (
            __import__("django_redcoord.core.queues", fromlist=["x"])
            .Queue("q")
            .push(1, delay=10**400)
        ),
    ],
)
def test_the_core_checks_refuse_a_huge_integer_with_a_type_error(check):
    """The same class in the core: every duration check goes through core.values.finite_number."""
    with pytest.raises((TypeError, ValueError)):
        check()
