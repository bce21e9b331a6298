"""Django Tasks of the fault suite: each run is counted on the oracle."""

import os
import sys

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from .oracle import oracle


@task(takes_context=True)
def counted(context, n):
    oracle().hincrby("runs", context.task_result.id, 1)
    return n


@task(takes_context=True)
def slow(context, n, seconds):
    import time

    oracle().hincrby("started", context.task_result.id, 1)
    time.sleep(seconds)
    oracle().hincrby("runs", context.task_result.id, 1)
    return os.getpid()


@task(takes_context=True)
def always_fails(context, n):
    oracle().hincrby("runs", context.task_result.id, 1)
    raise RuntimeError(f"task {n} always fails")


@task(takes_context=True)
def exits(context, code):
    oracle().hincrby("runs", context.task_result.id, 1)
    sys.exit(code)
