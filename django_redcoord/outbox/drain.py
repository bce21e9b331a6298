"""Draining the outbox: send the tasks whose commit happened while Redis could not be reached.

With ``"OUTBOX": True`` (or a database alias) in a ``RedisTaskBackend``'s OPTIONS, a task
enqueued inside ``atomic()`` is also written, in that same transaction, as an
:class:`~django_redcoord.outbox.models.OutboxEntry`. When the transaction commits, the task
is pushed as usual and its entry deleted. If Redis cannot be reached then, the commit still
succeeds (nothing raises), and the entry stays. ``manage.py run_worker`` drains the outbox
of its backend every ``OUTBOX_INTERVAL`` seconds (1). It pushes each entry older than 2
seconds (younger ones are still being sent by their own commit), then deletes it.

Nothing is pushed twice: the message id is the push's idempotency key. A drain pushes only
if the task's result record does not exist yet (``queues/push.lua`` with a negative TTL; a
unique task: ``push_unique.lua``, which finds its own key held). So an entry whose push
landed but whose delete did not (the process died between the two) is only deleted.
Nothing is lost: an entry leaves the table only after its push landed, or was found landed.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

from ..core.exceptions import CoordinationUnavailable
from ..core.queues.messages import EncodedJSON
from ..tasks.compat import utcnow

log = logging.getLogger("django_redcoord.outbox")

#: seconds an entry is left to its own commit's send before a drain takes it
MIN_AGE = 2.0


def payload(
    queue: str, push: dict[str, Any], max_attempts: int, unique: dict[str, Any] | None
) -> str:
    """The JSON an entry keeps: what ``drain`` needs to push the task again."""
    eta = push.get("eta")
    return json.dumps({
        "body": str(push["body"]), "record": push["record"], "ttl": push["ttl"], "priority": push["priority"],
        "eta": eta.isoformat() if isinstance(eta, datetime) else None, "max_attempts": max_attempts,
        "unique": unique, "queue": queue,
    })  # fmt: skip


def drain(backend: Any, *, limit: int = 500, min_age: float = MIN_AGE) -> tuple[int, int]:
    """Push the backend's entries older than ``min_age`` seconds (at most ``limit``, oldest
    first) and delete them. Returns (pushed, found pushed already). Stops at the first
    outage of Redis, leaving the rest for the next drain."""
    from .models import OutboxEntry

    db = backend.outbox
    rows = list(
        OutboxEntry.objects.using(db)
        .filter(backend=backend.alias, created_at__lte=utcnow() - timedelta(seconds=min_age))
        .order_by("created_at")[:limit]
    )
    pushed = found = 0
    for row in rows:
        try:
            if _push(backend, row):
                pushed += 1
            else:
                found += 1
        except (
            ValueError,
            KeyError,
            TypeError,
        ) as exc:  # a row this version cannot read: kept, the rest go on
            OutboxEntry.objects.using(db).filter(id=row.id).update(
                attempts=row.attempts + 1,
                last_error=f"cannot be read: {type(exc).__name__}: {exc}"[:1000],
            )
            log.error("outbox of TASKS[%r]: entry %s cannot be read (%s): kept, with its error; the others go on",
                      backend.alias, row.id, exc)  # fmt: skip
            continue
        except CoordinationUnavailable as exc:
            OutboxEntry.objects.using(db).filter(id=row.id).update(
                attempts=row.attempts + 1, last_error=str(exc)[:1000]
            )
            log.warning("outbox of TASKS[%r]: Redis cannot be reached (%s); %d entr%s left for the next drain",
                        backend.alias, exc, len(rows) - pushed - found, "y" if len(rows) - pushed - found == 1 else "ies")  # fmt: skip
            break
        OutboxEntry.objects.using(db).filter(id=row.id).delete()
    if pushed or found:
        log.info(
            "outbox of TASKS[%r]: %d task(s) sent, %d found sent already",
            backend.alias,
            pushed,
            found,
        )
    return pushed, found


def _push(backend: Any, row: Any) -> bool:
    """Push one entry, only if its task was not pushed already. True if this pushed it."""
    data = json.loads(row.payload)
    queue = backend.queue(row.queue, data.get("max_attempts"))
    eta = datetime.fromisoformat(data["eta"]) if data.get("eta") else None
    push = {"body": EncodedJSON(data["body"]), "id": row.id, "record_key": backend._result_key(row.id),
            "record": data["record"], "ttl": data["ttl"], "eta": eta, "priority": data["priority"]}  # fmt: skip
    unique = data.get("unique")
    if not unique:
        return queue.push_with_record(**push, only_new=True)
    from ..tasks.options import TaskOptions
    from ..tasks.unique import unique_push

    options = TaskOptions(unique=unique["key"], until=unique.get("until"), while_running=unique.get("while_running"),
                          unique_ttl=unique.get("unique_ttl"))  # fmt: skip
    spec = unique_push(unique["path"], unique["key"], options, deferred=True)
    done, _, _ = queue.push_unique_with_record(unique=spec, **push)
    return done


def pending(backend: Any) -> int:
    """How many entries wait in the backend's outbox."""
    from .models import OutboxEntry

    return OutboxEntry.objects.using(backend.outbox).filter(backend=backend.alias).count()


def drain_until(backend: Any, stopped: Any, interval: float = 1.0) -> None:
    """Drain ``backend``'s outbox every ``interval`` seconds until ``stopped()`` (run_worker's
    thread); a failing drain (the database, Redis) is logged and tried again."""
    import time

    from django.db import close_old_connections

    while not stopped():
        try:
            drain(backend)
        except CoordinationUnavailable:
            pass  # logged by drain()
        except Exception as exc:  # noqa: BLE001 - e.g. the database away: the next turn tries again
            log.warning("outbox of TASKS[%r]: drain failed: %s", backend.alias, exc)
        finally:
            close_old_connections()
        deadline = time.monotonic() + interval
        while not stopped() and time.monotonic() < deadline:
            time.sleep(min(0.1, interval))
