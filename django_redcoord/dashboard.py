"""What is held and what is waiting: the data behind the admin page and ``redcoord status``.

Everything is read from indexes the scripts maintain — never ``KEYS``, never
a scan of the keyspace:

* live locks: the ``<prefix>:index:locks:<bucket>`` hashes (name -> a bound
  on the lock's expiry, in seconds), all buckets in one pipelined round trip, so locks
  that expired under a crashed holder are not shown; the page's holders come
  in one pipelined round trip;
* lock waits: the ``<prefix>:index:lockwaits:<bucket>`` hashes (name -> last
  minute a grant of it waited), then the per-minute wait lists of the names
  waited on in the last hour, in one pipelined round trip each;
* semaphores: the ``<prefix>:index:semaphores`` hash (name -> bound), their
  holders in one pipelined round trip;
* read-write locks: the ``<prefix>:index:rwlocks`` hash, likewise;
* latches and barriers: ``<prefix>:index:latches`` and ``:barriers``;
* events, signals and topics: ``<prefix>:index:events``, ``:signals`` and ``:topics``;
* rate limits: ``<prefix>:index:ratelimiters`` and each limiter's per-minute hit counts;
* queues: the ``<prefix>:index:queues`` set, depths in one pipelined round trip,
  their last hour of samples (written by the workers) in another;
* workers: the ``<prefix>:index:workers`` sorted set (id -> heartbeat
  deadline) and each worker's hash;
* leader and jobs: the election records of the known elections;
* one queue's dead letters: a page of its dead-letter list (LRANGE of that
  page only), their errors, and the last error of each task's result record.

Plain Python over redis-py; returns JSON-ready dicts.
"""

from __future__ import annotations

import json
import logging
import math
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import redis

from .core.indexes import counting_unreadable, read_index, reading_all, skip_unreadable
from .core.keys import KeyBuilder, validate_name
from .core.locks import read_holders
from .core.queues import Message, Queue, depths
from .core.queues.queue import Sample, read_history
from .core.transport.clients import key_builder
from .core.transport.commands import as_text as _text
from .core.transport.errors import is_passing, unavailable_as_ours

log = logging.getLogger(__name__)

PAGE_SIZE = 50
#: The queue charts show this much history (ms).
HOUR_MS = 3_600_000
#: A worker whose heartbeat deadline passed this long ago is no longer listed
#: (worker_beat.lua removes it from the index after the same time).
DEAD_WORKER_KEEP_MS = 600_000
#: The admin charts the waits of this many lock names (those that waited
#: longest in total over the hour), chosen among the LOCK_WAITS_READ names
#: waited on most recently.
LOCK_WAITS_SHOWN = 10
LOCK_WAITS_READ = 200


def _int(value: Any, default: int = 0) -> int:
    """An integer field written by us; whatever is there, the page never fails on it."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _names(value: str) -> list[str]:
    """A list field of a worker: JSON (names may contain ','), or the first comma format."""
    if not value:
        return []
    try:
        names = json.loads(value)
    except ValueError:
        return [n for n in value.split(",") if n]
    return [str(n) for n in names] if isinstance(names, list) else [str(names)]


def _server_ms(client: Any) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def list_locks(
    client: Any, keys: KeyBuilder, *, now_ms: int, contains: str = "", page: int = 1, per_page: int = PAGE_SIZE
) -> dict[str, Any]:
    """One page of live locks by name (optionally whose name contains ``contains``).

    The index buckets hold name -> a bound on the lock's expiry (see
    locks/common.lua): an entry past its bound is dead and not listed; the
    others are read from the locks themselves for the page.
    """
    needle = contains.lower()
    live = [
        name
        for name, bound in read_index(client, keys, "locks").items()
        if _int(bound) * 1000 >= now_ms and (not needle or needle in name.lower())
    ]
    live.sort()
    total = len(live)
    start = (page - 1) * per_page
    names = live[start : start + per_page]
    items = []
    for name, holder in zip(names, read_holders(client, names, prefix=keys.prefix), strict=True):
        if holder is None:
            continue  # released between the two reads
        items.append(
            {
                "name": name,
                "host": holder["host"],
                "pid": holder["pid"],
                "thread": holder["thread"],
                # a fence is the grant's server time in µs unless the clock went back
                "acquired_ms": holder["fence"] // 1000,
                "ttl_left": round(holder["ttl"], 3),
                "fence": holder["fence"],
                "depth": holder["depth"],
                "waiters": holder["queued"],
            }
        )
    return {
        "total": total,
        "page": page,
        "pages": max(1, math.ceil(total / per_page)),
        "contains": contains,
        "items": items,
    }


def list_lock_waits(
    client: Any, keys: KeyBuilder, *, now_ms: int, contains: str = "", limit: int = LOCK_WAITS_SHOWN
) -> dict[str, Any]:
    """The lock names whose grants waited longest in total over the last hour, with a chart each.

    Every grant to a queued waiter adds its wait to the name's per-minute list
    (see ``locks/common.lua``); a grant that found the lock free waited for
    nothing and is not counted. Returns ``{total, items}``: ``total`` names
    waited on in the last hour (whose name contains ``contains``), and for the
    ``limit`` busiest: ``name``, ``grants`` (that waited), ``mean_wait`` and
    ``max_wait`` (seconds) over the hour, and ``history`` = ``{max_wait,
    mean_wait}``, each ``[[minute_ms, seconds], ...]``.
    """
    since_minute = (now_ms - HOUR_MS) // 60_000
    needle = contains.lower()
    waited = sorted(
        (-_int(minute), name)
        for name, minute in read_index(client, keys, "lockwaits").items()
        if _int(minute) > since_minute and (not needle or needle in name.lower())
    )
    recent = waited[:LOCK_WAITS_READ]
    pipe = client.pipeline(transaction=False)
    for _, name in recent:
        pipe.lrange(keys.lock(name).waits, 0, -1)
    rows = []
    for (_, name), entries in zip(recent, pipe.execute() if recent else [], strict=True):
        minutes = []
        for entry in entries:  # "<minute> <grants> <sum_ms> <max_ms>", numbers only (written by locks/common.lua)
            parts = entry.split()
            if len(parts) == 4 and int(parts[0]) > since_minute:
                minutes.append((int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])))
        minutes.sort()
        grants = sum(m[1] for m in minutes)
        if not grants:
            continue
        total_ms = sum(m[2] for m in minutes)
        rows.append(
            {
                "name": name,
                "grants": grants,
                "total_wait": round(total_ms / 1000, 3),
                "mean_wait": round(total_ms / grants / 1000, 3),
                "max_wait": round(max(m[3] for m in minutes) / 1000, 3),
                "history": {
                    "max_wait": [[m[0] * 60_000, round(m[3] / 1000, 3)] for m in minutes],
                    "mean_wait": [[m[0] * 60_000, round(m[2] / m[1] / 1000, 3)] for m in minutes if m[1]],
                },
            }
        )
    rows.sort(key=lambda r: (-r["total_wait"], r["name"]))
    return {"total": len(waited), "items": rows[:limit]}


def list_semaphores(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Semaphores with live holders (from their index): name, limit, queued, and a row per holder."""
    from .core.semaphores import read_semaphores

    return [
        {**sem, "used": len(sem["holders"]), "holders": [{**h, "ttl": round(h["ttl"], 3)} for h in sem["holders"]]}
        for sem in read_semaphores(client, prefix=keys.prefix, now_ms=now_ms)
    ]


def list_rwlocks(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Read-write locks with live holders (from their index): a row per holder, and who waits."""
    from .core.rwlocks import read_rwlocks

    return [
        {**rw, "holders": [{**h, "ttl": round(h["ttl"], 3)} for h in rw["holders"]]}
        for rw in read_rwlocks(client, prefix=keys.prefix, now_ms=now_ms)
    ]


def list_latches(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Count-down latches and barriers in use (from their indexes), a row each."""
    from .core.latches import read_barriers, read_latches

    rows = [
        {"kind": "latch", "name": x["name"], "state": "open" if x["count"] == 0 else f"{x['count']} of {x['initial']} to go",
         "broken": x["broken"], "waiting": x["waiters"], "parties": len(x["parties"])}
        for x in read_latches(client, prefix=keys.prefix, now_ms=now_ms)
    ] + [
        {"kind": "barrier", "name": x["name"], "state": f"generation {x['generation']}", "broken": x["broken"],
         "waiting": len(x["waiting"]), "parties": len(x["waiting"])}
        for x in read_barriers(client, prefix=keys.prefix, now_ms=now_ms)
    ]  # fmt: skip
    return rows


def list_signals(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Events, signals and topics in use, a row each (topics: a row per consumer group)."""
    from .core.signals import read_signals

    found = read_signals(client, prefix=keys.prefix, now_ms=now_ms)
    rows = [{"kind": "event", "name": e["name"], "state": "set" if e["set"] else "not set", "waiting": e["waiters"]}
            for e in found["events"]]
    rows += [{"kind": "signal", "name": s["name"], "state": "", "waiting": s["waiters"]} for s in found["signals"]]
    for t in found["topics"]:
        rows.append({"kind": "topic", "name": t["name"], "state": f"{t['length']} message(s)", "waiting": None})
        rows += [
            {"kind": "group", "name": f"{t['name']} / {g['group']}",
             "state": f"{g['consumers']} subscriber(s), {g['pending']} pending, lag {g['lag'] if g['lag'] is not None else '?'}",
             "waiting": None}
            for g in t["groups"]
        ]  # fmt: skip
    return rows


def list_rate_limits(client: Any, keys: KeyBuilder) -> list[dict[str, Any]]:
    """Each rate limiter's busiest keys over this minute and the last, a row per key, with its state now."""
    from .core.ratelimit import busiest_keys

    return [
        {"name": limiter["name"], "policies": limiter["policies"], **entry}
        for limiter in busiest_keys(client, prefix=keys.prefix)
        for entry in limiter["keys"]
    ]


def list_queues(client: Any, keys: KeyBuilder, *, now_ms: int | None = None) -> list[dict[str, Any]]:
    """Each queue's depths, and (given ``now_ms``) its history over the last hour (see :func:`queue_history`)."""
    names = sorted(read_index(client, keys, "queues"))
    queues = [Queue(name, client=client, prefix=keys.prefix) for name in names]
    result = depths(queues, client=client)
    samples = read_history(queues, client=client) if now_ms is not None else {}
    rows = []
    for name, d in result.items():
        row = {
            "name": name,
            "ready": d.ready,
            "delayed": d.delayed,
            "processing": d.processing,
            "dead": d.dead,
            "consumers": d.consumers,
            "oldest_age": d.oldest_age,
        }
        if now_ms is not None:
            row["history"] = queue_history(samples.get(name, []), now_ms=now_ms)
        rows.append(row)
    return rows


def queue_history(samples: list[Sample], *, now_ms: int) -> dict[str, list[list[float]]]:
    """A queue's samples of the last hour as ``{depth, done_per_minute}``, each ``[[time_ms, value], ...]``.

    ``depth`` is ready + delayed + processing at each sample; ``done_per_minute``
    is the deliveries its workers finished (ok, failed or dead-lettered) between
    a sample and the one before, per minute, at the later one's time. The
    workers write the samples once a minute from their heartbeat, whoever
    looks (see ``queues/sample.lua``): no worker, no samples.
    """
    since = now_ms - HOUR_MS
    depth = [[s.minute * 60_000, s.depth] for s in samples if s.minute * 60_000 > since]
    done = [
        [b.minute * 60_000, round(max(0, b.done - a.done) / (b.minute - a.minute), 1)]
        for a, b in pairwise(samples)
        if b.minute > a.minute and b.minute * 60_000 > since
    ]
    return {"depth": depth, "done_per_minute": done}


def sparkline(
    points: list[list[float]], *, now_ms: int, width: int = 120, height: int = 28, pad: int = 2
) -> dict[str, Any]:
    """SVG polyline coordinates of ``[[time_ms, value], ...]`` over the hour before ``now_ms``.

    Returns ``{points: "x,y x,y ...", end_x, end_y, count, last, max, width, height}``: time runs
    left to right over the hour, values from 0 (bottom) to their maximum (top).
    """
    top = max((v for _, v in points), default=0) or 1
    start, span = now_ms - HOUR_MS, HOUR_MS
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    coords = [
        f"{pad + min(max((t - start) / span, 0.0), 1.0) * inner_w:.1f},{pad + (1 - v / top) * inner_h:.1f}"
        for t, v in points
    ]
    end_x, _, end_y = coords[-1].partition(",") if coords else ("", "", "")
    return {
        "points": " ".join(coords),
        "end_x": end_x,  # the latest point gets a dot: a single sample draws no line
        "end_y": end_y,
        "count": len(coords),
        "last": points[-1][1] if points else None,
        "max": max((v for _, v in points), default=None),
        "width": width,
        "height": height,
    }


def list_dead_letters(queue: Queue, *, page: int = 1, per_page: int = PAGE_SIZE) -> dict[str, Any]:
    """One page of a queue's dead letters, newest first, each with its last error.

    Two round trips whatever the list's length: the count and this page's
    slice of the list (``LLEN`` + ``LRANGE`` in one ``MULTI``, so they agree),
    then the page's errors (the queue's errors hash) and, for task messages,
    the last error of their result record, which holds the traceback.

    Returns ``{total, page, pages, items}``; an item is ``{id, summary, task,
    result_id, attempts, max_attempts, died_ms, enqueued_ms, error,
    exception, traceback, status}`` (``task``/``result_id`` only for a Django
    Task's message; ``died_ms`` from the server's clock, None if unknown).
    """
    client, k = queue.client, queue.keys
    per_page = max(1, per_page)
    with unavailable_as_ours(client, f"read dead letters of {queue.name!r}"):
        pipe = client.pipeline(transaction=True)
        pipe.llen(k.dead)
        # the list is oldest first (RPUSH): the newest page is its tail
        pipe.lrange(k.dead, -page * per_page, -(page - 1) * per_page - 1)
        total, raws = pipe.execute()
        letters = [Message.parse(raw, queue.name) for raw in reversed(raws)]
        pipe = client.pipeline(transaction=False)
        if letters:
            pipe.hmget(k.errors, [m.id or "-" for m in letters])
        asked = []
        for m in letters:
            task = _task_of(m)
            if task:  # its last error is error.<attempts>; bury() wrote that count into the envelope
                pipe.hmget(queue.key_builder.task_result(task[1]), ["status", f"error.{m.attempt}"])
            asked.append(task)
        replies = pipe.execute() if letters else [[]]
    errors, records_read = replies[0], iter(replies[1:])
    items = []
    for m, raw_error, task in zip(letters, errors, asked, strict=True):
        detail = _record(raw_error)
        status, task_error = next(records_read) if task else (None, None)
        last = _record(task_error)
        items.append(
            {
                "id": m.id,
                "summary": _summary(m, task),
                "task": task[0] if task else None,
                "result_id": task[1] if task else None,
                "attempts": _int(detail.get("attempts"), m.attempt),
                "max_attempts": m.max_attempts,
                "died_ms": _int(detail.get("failed_ms")) or None,
                "enqueued_ms": m.enqueued_ms or None,
                "error": str(detail.get("error", "")),
                "exception": str(last.get("exception_class_path", "")),
                "traceback": str(last.get("traceback", "")),
                "status": _text(status) if status else None,
            }
        )
    return {"total": total, "page": page, "pages": max(1, math.ceil(total / per_page)), "items": items}


def purge_dead_letters(queue: Queue) -> int:
    """Delete every dead letter of ``queue`` and their errors; return how many there were.

    The count and the deletion are one ``MULTI``: the number is what was deleted.
    """
    k = queue.keys
    with unavailable_as_ours(queue.client, f"purge dead letters of {queue.name!r}"):
        pipe = queue.client.pipeline(transaction=True)
        pipe.llen(k.dead)
        pipe.delete(k.dead, k.errors)
        count, _ = pipe.execute()
    return int(count)


def _record(value: Any) -> dict[str, Any]:
    """A JSON object written by us ({} when absent); whatever is there, the page never fails on it."""
    if not value:
        return {}
    try:
        found = json.loads(value)
    except (TypeError, ValueError):
        return {"error": _text(value)}
    return found if isinstance(found, dict) else {"error": str(found)}


def _task_of(message: Message) -> tuple[str, str] | None:
    """(task path, result id) of a Django Task's message (see tasks/backend.py), else None."""
    body = message.body
    if not isinstance(body, dict) or not isinstance(body.get("task"), str) or not isinstance(body.get("result"), str):
        return None
    try:
        # as the record's key takes it: no {tag} (a message naming one is not a task of ours)
        return body["task"], validate_name(body["result"], "task result id", tag=False)
    except (TypeError, ValueError):
        return None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else _dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary(message: Message, task: tuple[str, str] | None) -> str:
    """What the message asks for, in a line: the task and its arguments, or the body."""
    if message.error is not None:
        return f"(unreadable: {message.error})"
    if task:
        args, kwargs = message.body.get("args"), message.body.get("kwargs")
        args = ", ".join([*(_short(_dumps(a), 60) for a in (args if isinstance(args, list) else [])),
                          *(f"{k}={_short(_dumps(v), 60)}" for k, v in (kwargs if isinstance(kwargs, dict) else {}).items())])  # fmt: skip
        return _short(f"{task[0]}({args})")
    return _short(message.body)


def list_workers(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    since = now_ms - DEAD_WORKER_KEEP_MS
    # by heartbeat deadline, oldest first, as the one-server zset read gave them
    entries = sorted(((w, d) for w, d in read_index(client, keys, "workers").items() if d >= since), key=lambda e: (e[1], e[0]))
    pipe = client.pipeline(transaction=False)
    for worker_id, _ in entries:
        pipe.hgetall(keys.worker(_text(worker_id)))
    replies = pipe.execute() if entries else []
    workers = []
    for (worker_id, deadline), info in zip(entries, replies, strict=True):
        h = {_text(k): _text(v) for k, v in info.items()}
        beat = _int(h.get("heartbeat_ms"))
        workers.append(
            {
                "id": _text(worker_id),
                "host": h.get("host", ""),
                "pid": _int(h.get("pid")),
                "queues": _names(h.get("queues", "")),
                "concurrency": _int(h.get("concurrency"), 1),
                "current": _names(h.get("current", "")),
                # (a beat written after this read's clock was taken is "now", not in the future)
                "heartbeat_age": round(max(0, now_ms - beat) / 1000.0, 1) if beat else None,
                "dead": deadline < now_ms,
                "ok": _int(h.get("ok")),
                "failed": _int(h.get("failed")),
                "dead_lettered": _int(h.get("dead")),
            }
        )
    return workers


def overview(
    client: Any,
    prefix: str,
    *,
    contains: str = "",
    page: int = 1,
    elections: tuple[str, ...] = ("default",),
) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-ready data.

    ``unreadable`` counts the records left out because Redis held what we did
    not write there (what -> how many; each logged): a section that cannot be
    read at all is shown empty and counted, never a raw error or a traceback.
    """
    keys = key_builder(prefix, client)
    with unavailable_as_ours(client, "read the coordination overview"), reading_all(client, keys), \
            counting_unreadable() as unreadable:  # fmt: skip
        now_ms = _server_ms(client)

        def section(what: str, read: Any, empty: Any) -> Any:
            try:
                return read()
            except (redis.exceptions.RedisError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
                if isinstance(exc, redis.exceptions.RedisError) and is_passing(exc):
                    raise  # an outage: CoordinationUnavailable, for the whole page
                # what we did not write: logged as a warning; the traceback only at DEBUG
                # (never on the operator's terminal)
                skip_unreadable(what, 1, what, f"{type(exc).__name__}: {exc}")
                log.debug("admin: could not read the %s", what, exc_info=True)
                return empty

        data = {
            "server_time_ms": now_ms,
            "prefix": prefix,
            "locks": section("locks", lambda: list_locks(client, keys, now_ms=now_ms, contains=contains, page=page),
                             {"total": 0, "page": page, "pages": 1, "contains": contains, "items": []}),
            "lock_waits": section("lock waits", lambda: list_lock_waits(client, keys, now_ms=now_ms, contains=contains),
                                  {"total": 0, "items": []}),
            "semaphores": section("semaphores", lambda: list_semaphores(client, keys, now_ms=now_ms), []),
            "rwlocks": section("read-write locks", lambda: list_rwlocks(client, keys, now_ms=now_ms), []),
            "latches": section("latches and barriers", lambda: list_latches(client, keys, now_ms=now_ms), []),
            "signals": section("events, signals and topics", lambda: list_signals(client, keys, now_ms=now_ms), []),
            "rate_limits": section("rate limits", lambda: list_rate_limits(client, keys), []),
            "queues": section("queues", lambda: list_queues(client, keys, now_ms=now_ms), []),
            "workers": section("workers", lambda: list_workers(client, keys, now_ms=now_ms), []),
            "leaders": section("leaders", lambda: leaders(client, keys, elections, now_ms=now_ms), []),
        }  # fmt: skip
        data["unreadable"] = dict(unreadable)
    return data


def leaders(client: Any, keys: KeyBuilder, elections: tuple[str, ...], *, now_ms: int) -> list[dict[str, Any]]:
    """The leader and periodic jobs of each election (no leader until run_leader runs)."""
    from .core.leader.election import read_leader
    from .core.periodic.scheduler import read_job_states

    out = []
    for name in elections:
        election_keys = keys.leader(name)
        lead = read_leader(election_keys, client)
        states = read_job_states(SimpleNamespace(client=client, keys=election_keys))  # type: ignore[arg-type]
        out.append(
            {
                "election": name,
                "leader": None
                if lead is None
                else {
                    "identity": lead.identity,
                    "term": lead.term,
                    "since_ms": int(lead.since * 1000),
                    "expires_in": lead.expires_in,
                },
                "jobs": [{"name": job, **state} for job, state in states.items()],
            }
        )
    return out
