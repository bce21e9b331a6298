"""One row per task enqueued inside a transaction, written in that transaction (see drain.py)."""

import json
from datetime import datetime
from typing import Any

from django.db import models


class OutboxEntry(models.Model):
    #: the task's result id, which is also its message id: the push's idempotency key
    id = models.CharField(max_length=64, primary_key=True)
    backend = models.CharField(max_length=100)
    queue = models.CharField(max_length=200)
    # : what the push needs, as JSON (the envelope's body, the record, TTL, due time, priority,
    # unique key)
    payload = models.TextField()
    created_at = models.DateTimeField(db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = "outbox entry"
        verbose_name_plural = "outbox entries"

    def __str__(self) -> str:
        return f"task {self.id} for queue {self.queue}"


def payload(
    queue: str, push: dict[str, Any], max_attempts: int, unique: dict[str, Any] | None
) -> str:
    """The JSON an entry keeps: what ``drain`` needs to push the task again."""
    eta = push.get("eta")
    group = push.get("group")
    return json.dumps(
        {
            "body": str(push["body"]),
            "record": push["record"],
            "ttl": push["ttl"],
            "priority": push["priority"],
            "eta": eta.isoformat() if isinstance(eta, datetime) else None,
            "max_attempts": max_attempts,
            "unique": unique,
            "queue": queue,
            "group": None
            if group is None
            else {"name": group.name, "concurrency": group.concurrency, "rate": group.rate},
        }
    )
