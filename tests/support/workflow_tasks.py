"""Tasks of the workflow tests (module level, as the Tasks framework requires). Each records
its run in Redis (the test's own server) under the label it is given, so the order of a
workflow's members and how often each ran can be checked."""

import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import current_workflow


def _ran(label):
    client = get_client()
    client.rpush("wt:runs", label)
    client.hincrby("wt:count", label, 1)


@task()
def record(label, seconds=0.0):
    if seconds:
        time.sleep(seconds)
    _ran(label)
    return label


@task(max_attempts=1)
def fail(label):
    _ran(label)
    raise RuntimeError(f"{label} failed")


@task()
def collect(label):
    """A callback: what its workflow's members ended as, as it sees them."""
    workflow = current_workflow()
    assert workflow is not None, "a callback runs inside its workflow"
    workflow.refresh()
    _ran(label)
    get_client().set(
        f"wt:seen:{label}", ",".join(m["state"] for m in workflow.members) + f"|{os.getpid()}"
    )
    return [r.status for r in workflow.results()]
