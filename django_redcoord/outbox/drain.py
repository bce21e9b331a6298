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

from django.db.models import F
from redis.exceptions import DataError

from ..core import CoordinationUnavailable, EncodedJSON, Group
from ..tasks.compat import utcnow

log = logging.getLogger("django_redcoord.outbox")

#: seconds an entry is left to its own commit's send before a drain takes it
MIN_AGE = 2.0
#: how ``last_error`` begins for an entry this version cannot read or its queue refuses
REFUSED = "cannot be read: "
#: refused entries a drain tries again, after the others
RETRY_REFUSED = 10
#: what reading or pushing an entry raises when the entry itself is at fault (not Redis)
UNREADABLE = (ValueError, KeyError, TypeError, AttributeError, OverflowError, DataError)


def drain(backend: Any, *, limit: int = 500, min_age: float = MIN_AGE) -> tuple[int, int]:
    """Push the backend's entries older than ``min_age`` seconds (at most ``limit``, oldest
    first) and delete them. Returns (pushed, found pushed already). Stops at the first
    outage of Redis, leaving the rest for the next drain.

    The plain tasks of a queue go in one round trip (a pipeline), unique tasks one by one
    (each push decides on its key); the sent entries are deleted in one statement per batch.
    """
    from .models import OutboxEntry

    db = backend.outbox
    due = OutboxEntry.objects.using(db).filter(
        backend=backend.alias, created_at__lte=utcnow() - timedelta(seconds=min_age)
    )
    # rows refused before (unreadable, or refused by their queue) are tried again a few at a time
    # after the others: however many pile up, they never hold up a row behind them
    rows = list(due.exclude(last_error__startswith=REFUSED).order_by("created_at")[:limit])
    rows += list(due.filter(last_error__startswith=REFUSED).order_by("created_at")[:RETRY_REFUSED])
    pushed = found = 0
    batches: dict[tuple[str, Any], list[tuple[Any, dict[str, Any]]]] = {}
    singles: list[tuple[Any, dict[str, Any], dict[str, Any]]] = []
    for row in rows:
        try:
            push, unique = _read(backend, row)
        except UNREADABLE as exc:
            _unreadable(backend, row, exc)
            continue
        if unique:
            singles.append((row, push, unique))
        else:
            batches.setdefault((row.queue, push["max_attempts"]), []).append((row, push))
    sent: list[str] = []
    refused: set[str] = set()  # marked unreadable by this drain: an outage after it is not theirs
    try:
        for (queue_name, max_attempts), batch in batches.items():
            try:
                done = backend.queue(queue_name, max_attempts).push_many_with_records(
                    [p for _, p in batch]
                )
            except UNREADABLE:  # one the queue refuses: each alone, that one kept
                done, kept = [], []
                for row, push in batch:
                    try:
                        done += backend.queue(queue_name, max_attempts).push_many_with_records(
                            [push]
                        )
                        kept.append((row, push))
                    except UNREADABLE as exc:
                        _unreadable(backend, row, exc)
                        refused.add(row.id)
                batch = kept
            pushed += sum(done)
            found += len(done) - sum(done)
            sent += [row.id for row, _ in batch]
        for row, push, unique in singles:
            try:
                if _push_unique(backend, row.queue, push, unique):
                    pushed += 1
                else:
                    found += 1
            except UNREADABLE as exc:
                _unreadable(backend, row, exc)
                refused.add(row.id)
                continue
            sent.append(row.id)
    except CoordinationUnavailable as exc:
        done_ids = set(sent) | refused
        ready = [row.id for batch in batches.values() for row, _ in batch]
        left = [i for i in ready + [row.id for row, _, _ in singles] if i not in done_ids]
        OutboxEntry.objects.using(db).filter(id__in=left).update(
            attempts=F("attempts") + 1, last_error=str(exc)[:1000]
        )
        log.warning(
            "outbox of TASKS[%r]: Redis cannot be reached (%s); %d entr%s left for the next drain",
            backend.alias,
            exc,
            len(left),
            "y" if len(left) == 1 else "ies",
        )
    finally:
        for start in range(0, len(sent), 500):
            OutboxEntry.objects.using(db).filter(id__in=sent[start : start + 500]).delete()
    if pushed or found:
        log.info(
            "outbox of TASKS[%r]: %d task(s) sent, %d found sent already",
            backend.alias,
            pushed,
            found,
        )
    return pushed, found


def _unreadable(backend: Any, row: Any, exc: Exception) -> None:
    """An entry this version cannot read or push: kept, with its error; the others go on."""
    from .models import OutboxEntry

    OutboxEntry.objects.using(backend.outbox).filter(id=row.id).update(
        attempts=row.attempts + 1, last_error=f"{REFUSED}{type(exc).__name__}: {exc}"[:1000]
    )
    log.error(
        "outbox of TASKS[%r]: entry %s cannot be read (%s): kept, with its error; the others go on",
        backend.alias,
        row.id,
        exc,
    )


def _read(backend: Any, row: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An entry's push (keyword arguments of ``push_many_with_records``, with its queue's
    ``max_attempts``) and its unique spec, if any. Raises ValueError, KeyError or TypeError
    for an entry this version cannot read."""
    data = json.loads(row.payload)
    if not isinstance(data, dict):
        raise TypeError(f"the payload is a {type(data).__name__}, not an object")
    eta = datetime.fromisoformat(data["eta"]) if data.get("eta") else None
    push = {
        "body": EncodedJSON(data["body"]),
        "id": row.id,
        "record_key": backend._result_key(row.id),
        "record": dict(data["record"]),
        "ttl": int(data["ttl"]),
        "eta": eta,
        "priority": int(data["priority"]),
        "only_new": True,
        "max_attempts": data.get("max_attempts"),
    }
    attempts = push["max_attempts"]
    if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int)):
        raise TypeError(f"max_attempts is {attempts!r}, not a whole number")
    bad = [
        k
        for k, v in push["record"].items()
        if isinstance(v, bool) or not isinstance(v, (str, int, float))
    ]
    if bad:
        raise TypeError(f"record field(s) {', '.join(map(repr, bad))} hold no string or number")
    unique = data.get("unique")
    if unique and (not isinstance(unique, dict) or not isinstance(unique.get("key"), str)):
        raise TypeError(f"its unique spec has no key: {unique!r}")
    group = data.get("group")
    if group:
        if not isinstance(group, dict):
            raise TypeError(f"its group is {group!r}, not an object")
        push["group"] = Group(group["name"], group.get("concurrency"), group.get("rate"))
    return push, unique or None


def _push_unique(
    backend: Any, queue_name: str, push: dict[str, Any], unique: dict[str, Any]
) -> bool:
    """Push one unique task's entry: its key decides. True if this pushed it."""
    from ..tasks.options import TaskOptions
    from ..tasks.unique import unique_push

    queue = backend.queue(queue_name, push["max_attempts"])
    options = TaskOptions(
        unique=unique["key"],
        until=unique.get("until"),
        while_running=unique.get("while_running"),
        unique_ttl=unique.get("unique_ttl"),
    )
    spec = unique_push(unique["path"], unique["key"], options, deferred=True)
    fields = {k: v for k, v in push.items() if k not in ("only_new", "max_attempts")}
    done, _, _ = queue.push_unique_with_record(unique=spec, **fields)
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
