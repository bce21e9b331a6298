"""Tasks of the group tests (module level, as the Tasks framework requires). Each records its
run in Redis (the test's own server), so the order within a group can be checked."""

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks import task_options


def by_tenant(tenant, step):
    """The group of a call: its tenant."""
    return f"tenant:{tenant}"


def no_group(tenant, step):
    """A group function that answers with no group for tenant 0, and a bad one for tenant -1."""
    return None if tenant == 0 else ("" if tenant == -1 else f"t{tenant}")


@task(group=by_tenant, group_concurrency=1)
def tenant_step(tenant, step):
    get_client().rpush(f"gt:runs:{tenant}", step)
    return step


@task_options(group=no_group)
@task()
def maybe_grouped(tenant, step):
    get_client().rpush(f"gt:runs:{tenant}", step)
    return step


@task(group_rate="1000/s", group="shared", group_concurrency=2)
def shared_step(step):
    get_client().rpush("gt:runs:shared", step)
    return step


def _overlap(label, seconds):
    """Count the tasks running at once (the most seen lands in ``gt:most``)."""
    import time

    client = get_client()
    now = client.incr("gt:running")
    client.rpush("gt:seen", now)
    try:
        time.sleep(seconds)
    finally:
        client.decr("gt:running")
    return label


@task()
def slow_step(label, seconds):
    return _overlap(label, seconds)


def by_tenant_slowly(tenant, step, seconds):
    return f"tenant:{tenant}"


@task_options(group=by_tenant_slowly, group_concurrency=1)
@task()
def slow_tenant_step(tenant, step, seconds):
    get_client().rpush(f"gt:runs:{tenant}", step)
    return _overlap(step, seconds)
