"""Tasks used by test_tasks (module level, as the Tasks framework requires)."""

import os

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client


@task()
def add(a, b):
    return a + b


@task()
def record(label):
    get_client().rpush("ran", label)
    return label


@task(priority=10)
def record_high(label):
    return record.func(label)


@task(priority=-10)
def record_low(label):
    return record.func(label)


@task()
def always_fails(reason):
    raise RuntimeError(reason)


#: what fails_while_told does: tests flip it between runs of the same message
TOLD = {"fail": True}


@task()
def fails_while_told(label):
    if TOLD["fail"]:
        raise RuntimeError(f"told to fail: {label}")
    return label


@task(takes_context=True)
def knows_its_attempt(context, fail_first):
    if fail_first and context.attempt == 1:
        raise ValueError("first attempt fails")
    return {"attempt": context.attempt, "id": context.task_result.id}


@task()
async def async_add(a, b):
    return a + b


@task()
def sleepy(seconds):
    import time

    get_client().set(f"sleepy-started:{os.getpid()}", 1)
    time.sleep(seconds)
    return os.getpid()


@task()
def returns_a_set():
    return {1, 2}


@task()
def periodic_tick():
    return record.func("periodic")


@task()
def exits(code):
    import sys

    sys.exit(code)


@task()
def counted_then_returns(label, value_kind):
    """Counts its runs, then returns something that is not strict JSON."""
    get_client().hincrby("runs", label, 1)
    return {"set": {1, 2}, "nan": float("nan"), "object": object()}[value_kind]


@task()
def returns_a_tuple():
    return (1, 2)


def run_until_finished(result, rounds=20):
    """``run_worker --burst`` until ``result`` is finished (a retry may be due a moment later)."""
    import time

    from django.core.management import call_command

    for _ in range(rounds):
        call_command("run_worker", "--burst", verbosity=0)
        result.refresh()
        if result.is_finished:
            return
        time.sleep(0.03)


@task()
def dies_at_once_the_first_time():
    """SIGKILLs its worker process at its first attempt, at once (before the runner's own
    writes); returns the pid of the worker of the next one."""
    import signal

    client = get_client()
    if client.incr("dies-at-once") == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return os.getpid()
