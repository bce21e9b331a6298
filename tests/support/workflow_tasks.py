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


@task()
def summarize(label):
    """A callback as the docs write one: its members' results straight from
    ``current_workflow().results()``, no refresh first."""
    _ran(label)
    return [r.return_value for r in current_workflow().results()]


# -- the fault matrix's workflow cells (tests/faults/matrix/cells_workflows.py) ----------------


def _hold(label):
    """Say where it runs (wt:running:<label>: the pid), then count the start (wt:starts: so a
    test that saw the start finds the pid), wait until wt:release is set (at most a minute;
    errors of a server restarting or paused meanwhile are ridden out), then count the run as
    record() does."""
    client = get_client()
    client.set(f"wt:running:{label}", os.getpid())
    client.hincrby("wt:starts", label, 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if client.exists("wt:release"):
                break
        except Exception:  # noqa: BLE001 - the server is being struck: ask again
            pass
        time.sleep(0.01)
    _ran(label)
    return label


@task()
def hold(label):
    """A member that runs until the test says so (see _hold); delivered again if its worker dies."""
    return _hold(label)


@task(max_attempts=1)
def hold_once(label):
    """As hold(), with one attempt: its worker dead, it is dead-lettered, never run again."""
    return _hold(label)


@task()
def nap(label, seconds):
    """Counts its start (wt:starts), then sleeps without a word to Redis: it ends whatever the
    server does meanwhile."""
    get_client().hincrby("wt:starts", label, 1)
    time.sleep(seconds)
    return label
