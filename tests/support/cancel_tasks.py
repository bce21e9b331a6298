"""Tasks of the cancel tests (module level, as the Tasks framework requires). Each says what it
did in Redis (the test's own server), so that a test can count runs across worker processes."""

import asyncio
import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import cancelled


@task()
def counted(label):
    """Counts its runs per label (a set of labels and a counter of runs)."""
    client = get_client()
    client.sadd("cancel:ran", label)
    client.incr(f"cancel:runs:{label}")
    return label


@task()
def counted_slowly(label):
    client = get_client()
    client.sadd("cancel:ran", label)
    client.incr(f"cancel:runs:{label}")
    time.sleep(0.02)
    return label


@task()
async def waits_forever(label):
    client = get_client()
    client.set(f"cancel:started:{label}", os.getpid())
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        client.set(f"cancel:saw-cancel:{label}", "CancelledError")
        raise
    return "never"


@task()
async def swallows_the_cancel(label):
    """Catches CancelledError and returns: its return value must still be dropped."""
    client = get_client()
    client.set(f"cancel:started:{label}", os.getpid())
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        client.set(f"cancel:saw-cancel:{label}", "swallowed")
    return "swallowed"


@task(takes_context=True)
def looks_at_its_context(context, label):
    client = get_client()
    client.set(f"cancel:started:{label}", os.getpid())
    deadline = time.monotonic() + 60
    while not context.cancelled():
        assert time.monotonic() < deadline, "never told"
        time.sleep(0.02)
    client.set(f"cancel:saw-cancel:{label}", f"context {cancelled()}")
    return "stopped when told"


@task()
def ignores_the_cancel(label, seconds):
    client = get_client()
    client.set(f"cancel:started:{label}", os.getpid())
    time.sleep(seconds)
    client.incr(f"cancel:finished:{label}")
    return "finished anyway"
