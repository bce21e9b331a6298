"""Per-task options (task_options): attempts, backoff, timeout; result retention TTLs."""

import threading
import time

import pytest
from django.core.management import CommandError, call_command

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import task_backends_for
from django_redcoord.tasks.options import exponential, fixed, linear, options_of, task_options

try:
    from django.tasks import TaskResultStatus, task
except ImportError:
    from django_tasks import TaskResultStatus, task

RELEASE = threading.Event()  # lets a task stuck past its timeout end (the test's cleanup)


@task_options(max_attempts=2)
@task()
def fails_with_two_attempts(label):
    get_client().rpush("ran", label)
    raise RuntimeError(f"{label} failed")


@task()
@task_options(backoff=linear(10))  # below @task works too
def fails_with_linear_backoff():
    get_client().rpush("ran", "linear")
    raise ValueError("try later")


@task_options(max_attempts=5, backoff=lambda exception, task_result: None)
@task()
def fails_without_retry():
    get_client().rpush("ran", "no-retry")
    raise KeyError("permanent")


@task_options(timeout=0.3, backoff=fixed(60))
@task()
def hangs():
    get_client().rpush("ran", "hangs")
    RELEASE.wait(10)
    return "late"


@task_options(timeout=0.3, max_attempts=1)
@task()
def hangs_on_its_last_attempt():
    RELEASE.wait(10)


@task()
def succeeds():
    return 1


@task_options(max_attempts=1)
@task()
def fails_once():
    raise RuntimeError("no")


@pytest.fixture(autouse=True)
def _fast_retries_and_release(settings):
    settings.REDCOORD = {
        **settings.REDCOORD,
        "QUEUE_RETRY_DELAY": 0.01,
        "QUEUE_RETRY_MAX_DELAY": 0.02,
    }
    RELEASE.clear()
    yield
    RELEASE.set()
    for thread in threading.enumerate():  # stuck worker threads end once released
        if thread.name.startswith("redcoord-worker-"):
            thread.join(5)


def work():
    call_command("run_worker", "--burst", verbosity=0)


def delayed_in(redis_client):
    """Seconds until the due time of each delayed message, by the server's clock."""
    seconds, micros = redis_client.time()
    now_ms = seconds * 1000 + micros // 1000
    key = task_backends_for("default").queue("default").keys.delayed
    return [
        (score - now_ms) / 1000 for _, score in redis_client.zrange(key, 0, -1, withscores=True)
    ]


def make_due(redis_client):
    key = task_backends_for("default").queue("default").keys.delayed
    for member in redis_client.zrange(key, 0, -1):
        redis_client.zadd(key, {member: 0})


def dead_letters():
    return task_backends_for("default").queue("default").dead_letters()


# -- max_attempts ---------------------------------------------------------------------


def test_max_attempts_travels_in_the_message_and_dead_letters_after_two(redis_client):
    result = fails_with_two_attempts.enqueue("a")
    [envelope] = redis_client.zrange(
        task_backends_for("default").queue("default").keys.ready, 0, -1
    )
    assert envelope.split(b"|")[1] == b"2"  # max attempts in the envelope, not the default 3
    for _ in range(20):
        work()
        result.refresh()
        if result.is_finished:
            break
        time.sleep(0.03)
    assert result.status == TaskResultStatus.FAILED and len(result.errors) == 2
    assert redis_client.lrange("ran", 0, -1) == [b"a", b"a"]
    [(message, error)] = dead_letters()
    assert message.id == result.id and error["attempts"] == 2


def test_options_survive_using_and_either_decorator_order():
    assert options_of(fails_with_two_attempts.using(priority=5)).max_attempts == 2
    assert options_of(fails_with_linear_backoff).backoff is not None
    assert options_of(succeeds).max_attempts is None


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_attempts": 0}, ValueError),
        ({"max_attempts": 2.0}, TypeError),
        ({"timeout": -1}, ValueError),
        ({"backoff": 5}, TypeError),
    ],
)
def test_bad_options_are_refused_at_decoration(kwargs, error):
    with pytest.raises(error):
        task_options(**kwargs)


# -- backoff -----------------------------------------------------------------------------


def test_backoff_delay_is_the_due_time_of_the_retry(redis_client):
    """linear(10): 10 s after the first attempt, 20 s after the second (measured in Redis)."""
    result = fails_with_linear_backoff.enqueue()
    work()
    [due] = delayed_in(redis_client)
    assert 9.0 <= due <= 10.0
    result.refresh()
    assert result.status == TaskResultStatus.READY and len(result.errors) == 1
    make_due(redis_client)
    work()
    [due] = delayed_in(redis_client)
    assert 19.0 <= due <= 20.0
    assert redis_client.lrange("ran", 0, -1) == [b"linear", b"linear"]


def test_backoff_returning_none_dead_letters_at_once(redis_client):
    result = fails_without_retry.enqueue()
    work()
    result.refresh()
    assert result.status == TaskResultStatus.FAILED and len(result.errors) == 1
    assert result.errors[0].exception_class is KeyError
    assert redis_client.lrange("ran", 0, -1) == [b"no-retry"] and delayed_in(redis_client) == []
    [(message, error)] = dead_letters()
    assert (
        message.id == result.id
        and error["attempts"] == 1
        and "backoff returned None" in error["error"]
    )


def test_backoff_helpers():
    class Attempts:
        def __init__(self, n):
            self.attempts = n

    exc = RuntimeError()
    assert [exponential(base=2, cap=10, jitter=False)(exc, Attempts(n)) for n in (1, 2, 3, 4)] == [
        2,
        4,
        8,
        10,
    ]
    assert all(4 <= exponential(base=2, cap=300)(exc, Attempts(3)) <= 8 for _ in range(50))
    assert [linear(5, cap=12)(exc, Attempts(n)) for n in (1, 2, 3)] == [5, 10, 12]
    assert fixed(7)(exc, Attempts(9)) == 7


def test_backend_backoff_option_as_a_dotted_path(settings, redis_client):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"BACKOFF": "tests.django.test_task_options.BACKEND_BACKOFF"},
        }
    }
    fails_once_per_backend.enqueue()
    work()
    [due] = delayed_in(redis_client)
    assert 40.0 <= due <= 42.0


BACKEND_BACKOFF = fixed(42)


@task()
def fails_once_per_backend():
    raise RuntimeError("retry me")


# -- timeout -----------------------------------------------------------------------------


def test_a_task_past_its_timeout_is_retried_and_the_worker_exits_non_zero(redis_client):
    result = hangs.enqueue()
    started = time.monotonic()
    with pytest.raises(CommandError, match="ran past its timeout of 0.3 s"):
        work()
    assert time.monotonic() - started < 3  # not held up by the stuck thread
    # The attempt is recorded as timed out and its message is already back,
    # due after the task's backoff (60 s), while the thread is still stuck.
    result.refresh()
    assert result.status == TaskResultStatus.READY
    assert result.errors[-1].exception_class.__name__ == "TaskTimedOut"
    [due] = delayed_in(redis_client)
    assert 58.0 <= due <= 60.0
    queue = task_backends_for("default").queue("default")
    assert queue.depths().processing == 0
    # The stuck thread ends later: its success is not recorded, its message stays put.
    RELEASE.set()
    for thread in threading.enumerate():
        if thread.name.startswith("redcoord-worker-"):
            thread.join(5)
    result.refresh()
    assert result.status == TaskResultStatus.READY and len(delayed_in(redis_client)) == 1


def test_a_timeout_on_the_last_attempt_fails_the_task():
    result = hangs_on_its_last_attempt.enqueue()
    with pytest.raises(CommandError, match="timeout"):
        work()
    result.refresh()
    assert result.status == TaskResultStatus.FAILED
    assert result.errors[-1].exception_class.__name__ == "TaskTimedOut"
    [(message, error)] = dead_letters()
    assert message.id == result.id and "TaskTimedOut" in error["error"]


# -- retention -----------------------------------------------------------------------------


def test_results_expire_by_outcome(settings, redis_client):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"RESULT_TTL": 1000, "RESULT_TTL_SUCCESSFUL": 100, "RESULT_TTL_FAILED": 500},
        }
    }
    backend = task_backends_for("default")
    ok, failed, retried = (
        succeeds.enqueue(),
        fails_once.enqueue(),
        fails_with_linear_backoff.enqueue(),
    )
    ttl = lambda result: redis_client.ttl(backend._result_key(result.id))  # noqa: E731
    assert 990 <= ttl(ok) <= 1000
    # one batch: the success is held back and lands with the failure (two TTLs, one round trip)
    work()
    assert 90 <= ttl(ok) <= 100
    assert 490 <= ttl(failed) <= 500
    # waiting for its retry (linear(10): due in 10 s): not final yet, kept RESULT_TTL past the retry
    assert 1000 <= ttl(retried) <= 1010


def test_bad_retention_options_are_reported(settings):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default"],
            "OPTIONS": {"RESULT_TTL_FAILED": 0, "TIMEOUT": "x", "MAX_ATTEMPTS": 0},
        }
    }
    errors = [e.msg for e in task_backends_for("default").check()]
    assert any("RESULT_TTL_FAILED" in m for m in errors) and any("TIMEOUT" in m for m in errors)
    assert any("MAX_ATTEMPTS" in m for m in errors)
