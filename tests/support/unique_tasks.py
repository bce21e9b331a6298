"""Tasks of the unique-task tests (module level, as the Tasks framework requires). Each records
its runs in Redis (the test's own server): start and end times, so runs can be checked for
overlap, and its arguments."""

import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import task_options


def _ran(label, seconds):
    client = get_client()
    start = time.time()
    client.set(f"uq:running:{label}", os.getpid())
    if seconds < 0:  # until the test says so (uq:release), at most a minute
        deadline = time.monotonic() + 60
        while not client.exists("uq:release") and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        time.sleep(seconds)
    client.rpush(f"uq:runs:{label}", f"{start} {time.time()}")
    return label


def by_report(report_id, seconds=0.0):
    """The unique key of a call: one per report."""
    return f"report:{report_id}"


@task_options(unique=by_report)
@task()
def rebuild_report(report_id, seconds=0.0):
    return _ran(f"report:{report_id}", seconds)


@task_options(unique="index")
@task()
def rebuild_index(version, seconds=0.0):
    get_client().rpush("uq:index-versions", version)
    return _ran("index", seconds)


@task_options(unique="index-started", until="started")
@task()
def rebuild_index_until_started(version, seconds=0.0):
    get_client().rpush("uq:index-versions", version)
    return _ran("index-started", seconds)


@task_options(unique="index-replace", while_running="replace")
@task()
def rebuild_index_latest(version, seconds=0.0):
    get_client().rpush("uq:index-versions", version)
    return _ran("index-replace", seconds)


@task_options(unique="index-followup", while_running="one_followup")
@task()
def rebuild_index_followup(version, seconds=0.0):
    get_client().rpush("uq:index-versions", version)
    return _ran("index-followup", seconds)


@task_options(unique="short", unique_ttl=0.3)
@task()
def short_lived_key(version):
    return _ran("short", 0.0)


@task_options(unique="fails", max_attempts=2)
@task()
def always_fails_uniquely(version):
    raise RuntimeError(f"fails {version}")


@task()
def not_unique(label, seconds=0.0):
    """The negative control: the same work without a unique key."""
    return _ran(label, seconds)
