"""Tasks of tests/django/test_tracing.py (module level, as the Tasks framework requires)."""

import json
import os

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord import Lock
from django_redcoord.core.transport.clients import get_client


def _seen(label: str) -> None:
    """Record the span the task body runs in (the worker may be another process)."""
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    get_client().rpush(
        "traced",
        json.dumps(
            {
                "label": label,
                "pid": os.getpid(),
                "trace_id": f"{ctx.trace_id:032x}",
                "span_id": f"{ctx.span_id:016x}",
            }
        ),
    )


@task()
def locked(label):
    """Take a lock, the way a real task guards a resource."""
    with Lock(f"tracing:{label}", ttl=10, wait=5):
        _seen(label)
    return label


@task()
def flaky(label):
    """Fail the first delivery, succeed the next."""
    _seen(label)
    if get_client().incr(f"tracing-flaky:{label}") == 1:
        raise RuntimeError(f"first delivery of {label} fails")
    return label
