"""Tasks of the red-team cancel tests (module level, as the Tasks framework requires). Each says
what it did in the test's own Redis, so that a test can count runs across worker processes."""

import asyncio
import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks.options import task_options


def _ran(label):
    client = get_client()
    client.sadd("rt:ran", label)
    client.incr(f"rt:runs:{label}")


@task()
def counted(label, *payload, **named):
    """Counts its runs per label; returns how much it was given (so huge arguments are cheap to
    check)."""
    _ran(label)
    return [label, len(payload), sorted(named)]


@task_options(max_attempts=1)
@task()
def fails_while_flagged(label):
    """Fails (one attempt only: dead-lettered) while the key rt:fail:<label> exists."""
    _ran(label)
    if get_client().exists(f"rt:fail:{label}"):
        raise RuntimeError(f"told to fail: {label}")
    return label


@task_options(max_attempts=1000)
@task()
def counted_many_attempts(label, blob):
    _ran(label)
    return len(blob)


@task()
def sleeps(label, seconds):
    """Marks its start, sleeps without looking at any context, counts its end."""
    client = get_client()
    client.set(f"rt:started:{label}", os.getpid())
    _ran(label)
    time.sleep(seconds)
    client.incr(f"rt:finished:{label}")
    return "slept"


@task(takes_context=True)
def polls_its_context(context, label):
    client = get_client()
    client.set(f"rt:started:{label}", os.getpid())
    _ran(label)
    deadline = time.monotonic() + 60
    while not context.cancelled():
        assert time.monotonic() < deadline, "never told"
        time.sleep(0.02)
    client.set(f"rt:saw-cancel:{label}", "1")
    return "stopped"


@task()
async def catches_and_awaits_again(label):
    """Catches CancelledError, awaits again (a cleanup), then returns a value that must be
    dropped."""
    client = get_client()
    client.set(f"rt:started:{label}", os.getpid())
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        client.set(f"rt:saw-cancel:{label}", "1")
        await asyncio.sleep(0.3)  # cleanup after the cancel
        client.set(f"rt:cleaned:{label}", "1")
    return "returned after cleanup"
