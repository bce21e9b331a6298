"""What is held and what is waiting: the data behind the admin page and ``redcoord status``.

Everything is read from indexes the scripts maintain — never ``KEYS``, never
a scan of the keyspace:

* live locks: the ``<prefix>:index:locks:<bucket>`` hashes (name -> a bound
  on the lock's expiry, in seconds), all buckets in one round trip (on one
  server HKEYS and HVALS of each in one MULTI, parsed in C loops), so locks
  that expired under a crashed holder are not shown; the page's holders come
  in one pipelined round trip;
* lock waits: the ``<prefix>:index:lockwaits:<bucket>`` hashes (name -> last
  minute a grant of it waited; read as the live locks are), then the per-minute
  wait lists of the names
  waited on in the last hour, in one pipelined round trip (only the newest
  entry of the names this process knows: :class:`WaitBook`);
* semaphores: the ``<prefix>:index:semaphores`` hash (name -> bound), their
  holders in one pipelined round trip;
* read-write locks: the ``<prefix>:index:rwlocks`` hash, likewise;
* latches and barriers: ``<prefix>:index:latches`` and ``:barriers``;
* events, signals and topics: ``<prefix>:index:events``, ``:signals`` and ``:topics``;
* rate limits: ``<prefix>:index:ratelimiters`` and each limiter's per-minute hit counts;
* queues: the ``<prefix>:index:queues`` set, depths in one pipelined round trip,
  their last hour of samples (written by the workers) in another (parsed again
  only when a list changed: :class:`HistoryBook`);
* workers: the ``<prefix>:index:workers`` sorted set (id -> heartbeat
  deadline) and each worker's hash;
* leader and jobs: the election records of the known elections;
* one queue's dead letters: a page of its dead-letter list (LRANGE of that
  page only), their errors, and the last error of each task's result record;
* what needs a look (``trouble``): judged from the above by ``trouble.py``,
  which reads little more (see there).

Plain Python over redis-py; returns JSON-ready dicts. The page is refreshed every
2 s at 10,000 live locks and 100 queues, so what is read on every refresh is parsed
in C loops, and three books per process (per client and prefix) spare parsing again
what has not changed since the last refresh: the lock waits, the queue histories and
the charts drawn from them (each compared with what was just read: never stale).
The ``[time, value]`` pairs of the queue histories are shared between refreshes (a
chart is drawn again when they are other objects): do not change them in place.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import operator
import re
import threading
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import redis

from .core import (
    HISTORY_SAMPLES,
    INDEX_TYPES,
    MAX_NAME_LENGTH,
    KeyBuilder,
    Message,
    Queue,
    Sample,
    commands,
    counting_unreadable,
    depths,
    is_passing,
    key_builder,
    read_history,
    read_holders,
    read_index,
    reading_all,
    skip_unreadable,
    unavailable_as_ours,
    validate_name,
)
from .core import as_text as _text
from .panels import Panel, Reading, Table, ago, dash, panels, pause_text, register_panel, span, when
from .trouble import find_trouble

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
    client: Any,
    keys: KeyBuilder,
    *,
    now_ms: int,
    contains: str = "",
    page: int = 1,
    per_page: int = PAGE_SIZE,
    live: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One page of live locks by name (optionally whose name contains ``contains``).

    The index buckets hold name -> a bound on the lock's expiry (see
    locks/common.lua): an entry past its bound is dead and not listed; the
    others are read from the locks themselves for the page. ``live``: what
    :func:`live_locks` returned for ``now_ms``, if the caller has it.
    """
    needle = contains.lower()
    live = sorted(live_locks(client, keys, now_ms=now_ms) if live is None else live)
    if needle:
        live = [name for name in live if needle in name.lower()]
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


register_panel(
    Panel(
        key="locks",
        what="locks",
        read=lambda r: list_locks(
            r.client, r.keys, now_ms=r.now_ms, contains=r.contains, page=r.page, live=r.live
        ),
        empty=lambda r: {
            "total": len(r.live),
            "page": r.page,
            "pages": 1,
            "contains": r.contains,
            "items": [],
        },
        fragment="locks",
        section_id="rc-section-locks",
        tables=lambda locks, now: [
            (
                f"Live locks: {locks['total']} (page {locks['page']} of {locks['pages']})",
                ["name", "holder", "ttl left", "fencing token", "waiters"],
                [
                    [
                        x["name"],
                        f"{x['host']} {x['pid']} {x['thread']}",
                        span(x["ttl_left"]),
                        x["fence"],
                        x["waiters"],
                    ]
                    for x in locks["items"]
                ],
            )
        ],
    )
)


def live_locks(client: Any, keys: KeyBuilder, *, now_ms: int) -> dict[str, int]:
    """Every live lock: name -> the bound of its index entry (s), for the entries whose bound has
    not passed.

    (:func:`list_locks`; ``trouble.py`` judges their ages.) 10,000 live locks are read on
    every refresh of the admin page, in C loops (see :func:`_read_numbers`).
    """
    since = -(-now_ms // 1000)  # bound * 1000 >= now_ms <=> bound >= ceil(now_ms / 1000)
    bounds = _read_numbers(client, keys, "locks")
    if min(bounds.values(), default=since) >= since:
        return bounds  # the usual case: a dead entry is pruned by the next grant of its bucket
    return {name: bound for name, bound in bounds.items() if bound >= since}


#: The indexes of 256 buckets (core/keys.py), read on every refresh of the page.
_BUCKETED = ("locks", "lockwaits")


def _read_numbers(client: Any, keys: KeyBuilder, kind: str) -> dict[str, int]:
    """The index ``kind`` (``locks``: name -> bound in s; ``lockwaits``: name -> minute) as name
    -> number.

    On one server the 256 buckets come in one MULTI (HKEYS and HVALS of each: flat lists,
    no dict per bucket, no Python call per entry), their names and values joined and
    checked at once. Anything we did not write there (a value that is not a whole number, a name
    that
    is not a valid name, a bucket of another type) sends the read the careful way
    (``read_index``, as on a Cluster: left out, logged and counted).
    """
    found = None if keys.cluster else _read_buckets(client, keys, kind)
    if found is None:
        index = read_index(client, keys, kind)  # values: whole numbers (read_index checked)
        found = dict(zip(index, map(int, index.values()), strict=True))
    return found


def _read_buckets(client: Any, keys: KeyBuilder, kind: str) -> dict[str, int] | None:
    """:func:`_read_numbers` on one server, or None when something there is not ours or not as
    expected."""
    # (HKEYS and HVALS: flat lists, no dict built per bucket; in one MULTI: a bucket's names and
    # values are read with nothing written between them, in the same order)
    calls = (
        ("MULTI",),
        *(call for key in keys.index_keys(kind) for call in (("HKEYS", key), ("HVALS", key))),
        ("EXEC",),
    )
    replies = commands(client, calls, operation=f"read the {kind} index", raise_errors=False)[-1]
    if not isinstance(replies, list) or not all(isinstance(reply, list) for reply in replies):
        return None  # (an error reply: a bucket of another type)
    listed: list[Any] = []
    stored: list[Any] = []
    for reply in replies[0::2]:
        listed += reply
    for reply in replies[1::2]:
        stored += reply
    if not listed:
        return {} if not stored else None
    try:
        text, joined = b"\n".join(listed).decode(), b" ".join(stored)
    except (TypeError, UnicodeDecodeError):  # str replies (decode_responses), or not UTF-8
        return None
    found, numbers = text.split("\n"), joined.split(b" ")
    if len(found) != len(listed) or len(numbers) != len(stored):
        return None  # (a name holding a newline, a value holding a space)
    if not b"".join(numbers).isdigit() or min(map(len, numbers)) < 1:
        return None  # (a value that is not a whole number)
    if (
        not _NAME_LINES.fullmatch(text)
        or min(map(len, found)) < 1
        or max(map(len, found)) > MAX_NAME_LENGTH
    ):
        return None  # (a name that is not a valid name: not ours)
    if "{" in text or "}" in text:
        try:
            for name in found:
                if "{" in name or "}" in name:
                    validate_name(name)  # (one {tag} at most, well placed)
        except ValueError:
            return None
    return dict(zip(found, map(int, numbers), strict=True))


#: Names in the allowed charset (and braces: a name holding some is checked alone), one per line.
_NAME_LINES = re.compile(r"[A-Za-z0-9_\-.:/@=+,#~|{}\n]*")


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
        (-minute, name)
        for name, minute in _read_numbers(client, keys, "lockwaits").items()
        if minute > since_minute and (not needle or needle in name.lower())
    )
    recent = [name for _, name in waited[:LOCK_WAITS_READ]]
    last = {name: -minus for minus, name in waited[:LOCK_WAITS_READ]}
    totals = []
    book = _wait_book(client, keys)
    for name, minutes in zip(
        recent, book.read(client, keys, recent, last=last, now_ms=now_ms), strict=True
    ):
        if (
            minutes and minutes[-1][0] <= since_minute
        ):  # (newest first: most lists are all in the hour)
            minutes = [m for m in minutes if m[0] > since_minute]
        if not minutes:
            continue
        _, grants_of, sums, _ = zip(*minutes, strict=True)
        grants = sum(grants_of)
        if grants:
            totals.append((-sum(sums), name, grants, minutes))
    totals.sort(key=lambda t: (t[0], t[1]))
    rows = []
    for minus_total, name, grants, minutes in totals[:limit]:
        minutes = sorted(minutes)
        rows.append(
            {
                "name": name,
                "grants": grants,
                "total_wait": round(-minus_total / 1000, 3),
                "mean_wait": round(-minus_total / grants / 1000, 3),
                "max_wait": round(max(m[3] for m in minutes) / 1000, 3),
                "history": {
                    "max_wait": [[m[0] * 60_000, round(m[3] / 1000, 3)] for m in minutes],
                    "mean_wait": [
                        [m[0] * 60_000, round(m[2] / m[1] / 1000, 3)] for m in minutes if m[1]
                    ],
                },
            }
        )
    return {"total": len(waited), "items": rows}


register_panel(
    Panel(
        key="lock_waits",
        what="lock waits",
        read=lambda r: list_lock_waits(r.client, r.keys, now_ms=r.now_ms, contains=r.contains),
        empty=lambda r: {"total": 0, "items": []},
        fragment="lockwaits",
        section_id="rc-section-lockwaits",
        tables=lambda waits, now: [
            (
                f"Lock waits, last hour: {waits['total']} names (the longest in total)",
                ["name", "grants that waited", "mean wait", "max wait", "total wait"],
                [
                    [
                        x["name"],
                        x["grants"],
                        span(x["mean_wait"]),
                        span(x["max_wait"]),
                        span(x["total_wait"]),
                    ]
                    for x in waits["items"]
                ],
            )
        ],
    )
)


class WaitBook:
    """Each lock name's wait entries as last read, for this process (one book per client and
    prefix: :func:`_wait_book`), so that a refresh reads only the newest entry of each name.

    A name's wait list is written only by ``record_wait`` (``locks/common.lua``): the newest
    entry (its minute's) is rewritten in place, a new minute's is pushed in front (and the
    list trimmed to 61), and the list expires an hour after its last wait. So the entries
    behind the newest never change once written: a refresh reads the newest entry of each
    name it knows (``LRANGE 0 0``), and the whole list only of the names it does not know
    and of those whose newest entry is of a later minute than the one it kept (once a
    minute for a name waited on every minute); a name whose last wait (the wait index says
    its minute) is in a minute that ended before its newest entry was read is not read at
    all. Whatever it holds is what a full read would give: the cache only spares reading and
    parsing the same entries again (200 lists of an hour's entries cost ~8 ms a refresh).
    """

    def __init__(self) -> None:
        self._book: dict[
            str, list[tuple[int, int, int, int]]
        ] = {}  # name -> its entries, newest first
        self._read_at: dict[
            str, int
        ] = {}  # name -> the server's minute when its newest entry was read
        self._guard = threading.Lock()
        #: whole lists and newest entries read by the last call (for the benchmark and the tests)
        self.last_full_reads = 0
        self.last_head_reads = 0

    def read(
        self,
        client: Any,
        keys: KeyBuilder,
        names: list[str],
        *,
        last: dict[str, int] | None = None,
        now_ms: int = 0,
    ) -> list[list[tuple[int, int, int, int]]]:
        """The wait entries of each of ``names`` (minute, grants, sum_ms, max_ms), newest first:
        two round trips at most.

        ``last``: name -> the minute of its last wait, as the wait index says (its newest entry's
        minute: ``record_wait`` writes both); ``now_ms``: the server's time, before this read.
        A name whose newest entry kept is of that minute, read after that minute ended, is not
        read at all: a later wait would have been of a later minute, and moved its index entry.
        """
        last = last or {}
        minute_now = now_ms // 60_000
        with self._guard:
            book, read_at = self._book, self._read_at
            if (
                len(book) > 2 * LOCK_WAITS_READ
            ):  # (pages with other filters read other names: kept a while)
                for name in book.keys() - set(names):
                    del book[name]
                    read_at.pop(name, None)
            known = [
                n
                for n in names
                if n in book
                and not (
                    book[n] and book[n][0][0] == last.get(n) and read_at.get(n, 0) > book[n][0][0]
                )
            ]
            heads = self._lrange(client, keys, known, 0, 0)
            again = [n for n in names if n not in book]
            for name, head in zip(known, heads, strict=True):
                kept = book[name]
                if head is None or not head or not kept or head[0][0] != kept[0][0]:
                    again.append(name)  # a new minute, or gone: read it whole
                else:
                    kept[0] = head[0]  # this minute's entry, rewritten in place since
                    read_at[name] = minute_now
            for name, entries in zip(again, self._lrange(client, keys, again, 0, -1), strict=True):
                book[name] = entries if entries is not None else []
                read_at[name] = minute_now
            self.last_full_reads = len(again)
            self.last_head_reads = len(known)
            return [list(book[name]) for name in names]

    def _lrange(
        self, client: Any, keys: KeyBuilder, names: list[str], start: int, stop: int
    ) -> list[Any]:
        """The entries (parsed, newest first) of each name's wait list from ``start`` to
        ``stop``, one round
        trip; None for a key of another type (skipped: logged and counted)."""
        if not names:
            return []
        operation = "read the lock waits"
        replies = commands(
            client,
            tuple(("LRANGE", keys.lock(name).waits, start, stop) for name in names),
            operation=operation,
            raise_errors=False,
        )
        out: list[Any] = []
        for name, entries in zip(names, replies, strict=True):
            if isinstance(entries, Exception):
                if isinstance(entries, redis.exceptions.RedisError) and is_passing(entries):
                    with unavailable_as_ours(client, operation):
                        raise entries
                skip_unreadable("lock waits", 1, name, str(entries))  # (a key of another type)
                out.append(None)
            else:
                out.append(_wait_minutes(entries, -1))
        return out


_books_guard = threading.Lock()


def _wait_book(client: Any, keys: KeyBuilder) -> WaitBook:
    """This process's :class:`WaitBook` for ``client`` and the prefix of ``keys`` (kept on the
    client object)."""
    return _book_of(client, "_redcoord_wait_books", keys.prefix, WaitBook)


def _book_of(client: Any, attribute: str, prefix: str, make: Any) -> Any:
    """The book ``make()`` of ``client`` for ``prefix``, kept on the client object in
    ``attribute``."""
    with _books_guard:
        books = getattr(client, attribute, None)
        if books is None:
            books = {}
            try:
                setattr(client, attribute, books)
            except AttributeError:  # a client that takes no attribute: a fresh book each time
                pass
        book = books.get(prefix)
        if book is None:
            book = books[prefix] = make()
        return book


#: Wait entries, one a line, each four whole numbers (see :func:`_wait_minutes`).
_WAIT_ENTRIES = re.compile(rb"\d+ \d+ \d+ \d+(?:\n\d+ \d+ \d+ \d+)*")


def _wait_minutes(entries: list[Any], since_minute: int) -> list[tuple[int, int, int, int]]:
    """A lock name's wait entries after ``since_minute`` as (minute, grants, sum_ms, max_ms).

    The entries are "<minute> <grants> <sum_ms> <max_ms>", numbers only
    (written by locks/common.lua); one that is not is skipped."""
    try:
        joined = b"\n".join(entries) if entries else None
    except TypeError:  # str replies (decode_responses)
        joined = None
    if joined is not None and _WAIT_ENTRIES.fullmatch(
        joined
    ):  # the usual case, in C loops: all are ours
        numbers = list(map(int, joined.split()))
        minutes = list(zip(numbers[0::4], numbers[1::4], numbers[2::4], numbers[3::4], strict=True))
        return [m for m in minutes if m[0] > since_minute]
    minutes = []
    for entry in entries:
        parts = entry.split()
        try:
            if len(parts) == 4 and int(parts[0]) > since_minute:
                minutes.append((int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])))
        except ValueError:
            continue
    return minutes


def list_semaphores(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Semaphores with live holders (from their index): name, limit, queued, and a row per
    holder."""
    from .core import read_semaphores

    return [
        {
            **sem,
            "used": len(sem["holders"]),
            "holders": [{**h, "ttl": round(h["ttl"], 3)} for h in sem["holders"]],
        }
        for sem in read_semaphores(client, prefix=keys.prefix, now_ms=now_ms)
    ]


register_panel(
    Panel(
        key="semaphores",
        what="semaphores",
        read=lambda r: list_semaphores(r.client, r.keys, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="semaphores",
        section_id="rc-section-semaphores",
        tables=lambda sems, now: [
            (
                "Semaphores",
                ["semaphore", "held / limit", "waiting", "holder", "lease left", "fencing token"],
                [
                    [
                        sem["name"],
                        f"{sem['used']} / {sem['limit']}",
                        sem["queued"],
                        f"{h['host']} {h['pid']} {h['thread']}",
                        span(h["ttl"]),
                        h["fence"],
                    ]
                    for sem in sems
                    for h in sem["holders"]
                ],
            )
        ],
    )
)


def list_rwlocks(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Read-write locks with live holders (from their index): a row per holder, and who waits."""
    from .core import read_rwlocks

    return [
        {**rw, "holders": [{**h, "ttl": round(h["ttl"], 3)} for h in rw["holders"]]}
        for rw in read_rwlocks(client, prefix=keys.prefix, now_ms=now_ms)
    ]


register_panel(
    Panel(
        key="rwlocks",
        what="read-write locks",
        read=lambda r: list_rwlocks(r.client, r.keys, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="rwlocks",
        section_id="rc-section-rwlocks",
        tables=lambda rwlocks, now: [
            (
                "Read-write locks",
                [
                    "lock",
                    "held for",
                    "holder",
                    "lease left",
                    "fencing token",
                    "writers / readers waiting",
                ],
                [
                    [
                        rw["name"],
                        "writing" if h["kind"] == "w" else "reading",
                        f"{h['host']} {h['pid']} {h['thread']}",
                        span(h["ttl"]),
                        h["fence"],
                        f"{rw['writers_waiting']} / {rw['readers_waiting']}",
                    ]
                    for rw in rwlocks
                    for h in rw["holders"]
                ],
            )
        ],
    )
)


def list_latches(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Count-down latches and barriers in use (from their indexes), a row each."""
    from .core import read_barriers, read_latches

    rows = [
        {
            "kind": "latch",
            "name": x["name"],
            "state": "open" if x["count"] == 0 else f"{x['count']} of {x['initial']} to go",
            "broken": x["broken"],
            "waiting": x["waiters"],
            "parties": len(x["parties"]),
        }
        for x in read_latches(client, prefix=keys.prefix, now_ms=now_ms)
    ] + [
        {
            "kind": "barrier",
            "name": x["name"],
            "state": f"generation {x['generation']}",
            "broken": x["broken"],
            "waiting": len(x["waiting"]),
            "parties": len(x["waiting"]),
        }
        for x in read_barriers(client, prefix=keys.prefix, now_ms=now_ms)
    ]
    return rows


register_panel(
    Panel(
        key="latches",
        what="latches and barriers",
        read=lambda r: list_latches(r.client, r.keys, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="latches",
        section_id="rc-section-latches",
        tables=lambda latches, now: [
            (
                "Latches and barriers",
                ["kind", "name", "state", "broken", "waiting", "parties with a lease"],
                [
                    [
                        x["kind"],
                        x["name"],
                        x["state"],
                        x["broken"] or "-",
                        x["waiting"],
                        x["parties"],
                    ]
                    for x in latches
                ],
            )
        ],
    )
)


def list_signals(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    """Events, signals and topics in use, a row each (topics: a row per consumer group)."""
    from .core import read_signals

    found = read_signals(client, prefix=keys.prefix, now_ms=now_ms)
    rows = [
        {
            "kind": "event",
            "name": e["name"],
            "state": "set" if e["set"] else "not set",
            "waiting": e["waiters"],
        }
        for e in found["events"]
    ]
    rows += [
        {"kind": "signal", "name": s["name"], "state": "", "waiting": s["waiters"]}
        for s in found["signals"]
    ]
    for t in found["topics"]:
        rows.append(
            {
                "kind": "topic",
                "name": t["name"],
                "state": f"{t['length']} message(s)",
                "waiting": None,
            }
        )
        rows += [
            {
                "kind": "group",
                "name": f"{t['name']} / {g['group']}",
                "state": f"{g['consumers']} subscriber(s), {g['pending']} pending, lag "
                f"{g['lag'] if g['lag'] is not None else '?'}",
                "waiting": None,
            }
            for g in t["groups"]
        ]
    return rows


register_panel(
    Panel(
        key="signals",
        what="events, signals and topics",
        read=lambda r: list_signals(r.client, r.keys, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="signals",
        section_id="rc-section-signals",
        tables=lambda signals, now: [
            (
                "Events, signals and topics",
                ["kind", "name", "state", "waiting"],
                [[x["kind"], x["name"], x["state"] or "-", dash(x["waiting"])] for x in signals],
            )
        ],
    )
)


def list_rate_limits(client: Any, keys: KeyBuilder) -> list[dict[str, Any]]:
    """Each rate limiter's busiest keys over this minute and the last, a row per key, with its
    state now."""
    from .core import busiest_keys

    return [
        {"name": limiter["name"], "policies": limiter["policies"], **entry}
        for limiter in busiest_keys(client, prefix=keys.prefix)
        for entry in limiter["keys"]
    ]


register_panel(
    Panel(
        key="rate_limits",
        what="rate limits",
        read=lambda r: list_rate_limits(r.client, r.keys),
        empty=lambda r: [],
        fragment="ratelimits",
        section_id="rc-section-ratelimits",
        for_trouble=True,
        tables=lambda limits, now: [
            (
                "Rate limits: busiest keys (this minute and the last)",
                ["limiter", "policies", "key", "hits", "remaining now", "retry after"],
                [
                    [
                        x["name"],
                        x["policies"],
                        x["key"],
                        x["hits"],
                        dash(x.get("remaining")),
                        span(x.get("retry_after")),
                    ]
                    for x in limits
                ],
            )
        ],
    )
)


def list_queues(
    client: Any, keys: KeyBuilder, *, now_ms: int | None = None
) -> list[dict[str, Any]]:
    """Each queue's depths, and (given ``now_ms``) its history over the last hour (see
    :func:`queue_history`)."""
    names = sorted(read_index(client, keys, "queues"))
    queues = [Queue(name, client=client, prefix=keys.prefix) for name in names]
    result = depths(queues, client=client)
    histories = (
        _history_book(client, keys).histories(client, keys, names, now_ms=now_ms)
        if now_ms is not None
        else {}
    )
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
            "paused": d.paused,  # {since_ms, reason} while paused, else None
            "groups": d.groups,  # groups with messages (core/queues/groups.py)
        }
        if now_ms is not None:
            row["history"] = histories.get(name) or {"depth": [], "done_per_minute": []}
        rows.append(row)
    return rows


register_panel(
    Panel(
        key="queues",
        what="queues",
        # (the charts' history only for the page: the trouble list judges depths and dead letters)
        read=lambda r: list_queues(r.client, r.keys, now_ms=r.now_ms if r.page_too else None),
        empty=lambda r: [],
        fragment="queues",
        section_id="rc-section-queues",
        for_trouble=True,
        tables=lambda queues, now: [
            (
                "Queues",
                ["queue", "ready", "delayed", "processing", "dead", "oldest ready", "state"],
                [
                    [
                        q["name"],
                        q["ready"],
                        q["delayed"],
                        q["processing"],
                        q["dead"],
                        span(q["oldest_age"]),
                        f"paused, {pause_text(q['paused'])}" if q.get("paused") else "running",
                    ]
                    for q in queues
                ],
            )
        ],
    )
)


#: Queue samples, one a line, each three whole numbers (see :func:`_parse_samples`).
_SAMPLE_LINES = re.compile(rb"\d+ \d+ \d+(?:\n\d+ \d+ \d+)*")


class HistoryBook:
    """Each queue's history as last read and worked out, for this process (one book per client
    and prefix: :func:`_history_book`).

    A queue's history list changes once a minute (``queues/sample.lua``), and the page is
    refreshed every 2 s: each refresh reads every list (one round trip), and parses and works
    out again only those whose entries differ from the ones kept (compared as read: bytes),
    or whose hour moved to another minute. What it returns is what a fresh reading gives: the
    cache only spares parsing the same 6,000 numbers again (~10 ms a refresh for 100 queues).
    """

    def __init__(self) -> None:
        # name -> (its list as read, its samples, the minute its hour starts after, its history)
        self._book: dict[
            str, tuple[list[Any], list[tuple[int, int, int]], int, dict[str, list[list[float]]]]
        ] = {}
        self._guard = threading.Lock()
        #: histories worked out again by the last call (for the benchmark and the tests)
        self.last_parsed = 0

    def histories(
        self, client: Any, keys: KeyBuilder, names: list[str], *, now_ms: int
    ) -> dict[str, dict[str, list[list[float]]]]:
        """name -> :func:`queue_history` of each queue of ``names`` at ``now_ms``: one round
        trip."""
        if not names:
            return {}
        operation = "read queue history"
        replies = commands(
            client,
            tuple(("LRANGE", keys.queue_history(n), 0, HISTORY_SAMPLES - 1) for n in names),
            operation=operation,
            raise_errors=False,
        )
        since = (now_ms - HOUR_MS) // 60_000
        out: dict[str, dict[str, list[list[float]]]] = {}
        careful: list[str] = []
        parsed = 0
        with self._guard:
            book = self._book
            for name in book.keys() - set(names):
                del book[name]
            for name, raw in zip(names, replies, strict=True):
                if isinstance(raw, Exception):
                    if isinstance(raw, redis.exceptions.RedisError) and is_passing(raw):
                        with unavailable_as_ours(client, operation):
                            raise raw
                    skip_unreadable("queue history", 1, name, str(raw))  # (a key of another type)
                    book.pop(name, None)
                    continue
                kept = book.get(name)
                if kept is None or kept[0] != raw:
                    samples = _parse_samples(raw)
                    if samples is None:
                        careful.append(name)
                        book.pop(name, None)
                        continue
                    kept = book[name] = (raw, samples, since, queue_history(samples, now_ms=now_ms))
                    parsed += 1
                elif kept[2] != since:  # the same samples, the hour moved on a minute
                    kept = book[name] = (raw, kept[1], since, queue_history(kept[1], now_ms=now_ms))
                history = kept[3]
                out[name] = {
                    series: list(points) for series, points in history.items()
                }  # (the lists: the caller's)
            self.last_parsed = parsed + len(careful)
        if careful:  # what we did not write: the careful way, one by one
            found = read_history(
                [Queue(n, client=client, prefix=keys.prefix) for n in careful], client=client
            )
            out.update({n: queue_history(found.get(n, []), now_ms=now_ms) for n in careful})
        return out


def _parse_samples(raw: list[Any]) -> list[tuple[int, int, int]] | None:
    """A queue's history list as read (newest first) as (minute, depth, done), oldest first; None if
    some entry is not three whole numbers (not ours). Parsed at once, in C loops."""
    try:
        joined = b"\n".join(reversed(raw)) if raw else b""
    except TypeError:  # str replies (decode_responses)
        return None
    if joined and not _SAMPLE_LINES.fullmatch(joined):
        return None
    numbers = list(map(int, joined.split()))
    return list(zip(numbers[0::3], numbers[1::3], numbers[2::3], strict=True))


def _history_book(client: Any, keys: KeyBuilder) -> HistoryBook:
    """This process's :class:`HistoryBook` for ``client`` and the prefix of ``keys`` (kept on the
    client object)."""
    return _book_of(client, "_redcoord_history_books", keys.prefix, HistoryBook)


def queue_history(
    samples: list[Sample] | list[tuple[int, int, int]], *, now_ms: int
) -> dict[str, list[list[float]]]:
    """A queue's samples of the last hour as ``{depth, done_per_minute}``, each ``[[time_ms,
    value], ...]``.

    ``samples``: oldest first, as :class:`Sample` or (minute, depth, done). ``depth`` is
    ready + delayed + processing at each sample; ``done_per_minute``
    is the deliveries its workers finished (ok, failed or dead-lettered) between
    a sample and the one before, per minute, at the later one's time. The
    workers write the samples once a minute from their heartbeat, whoever
    looks (see ``queues/sample.lua``): no worker, no samples.
    """
    if samples and isinstance(samples[0], Sample):
        samples = [(x.minute, x.depth, x.done) for x in samples]
    since = (
        now_ms - HOUR_MS
    ) // 60_000  # minute * 60_000 > now - HOUR <=> minute > since (whole minutes)
    kept = samples if not samples or samples[0][0] > since else [x for x in samples if x[0] > since]
    depth = [[m * 60_000, d] for m, d, _ in kept]
    # (a minute after the one before, the usual case: the difference itself, no division to round)
    done = [
        [
            bm * 60_000,
            float(max(0, b_done - a_done))
            if bm - am == 1
            else round(max(0, b_done - a_done) / (bm - am), 1),
        ]
        for (am, _, a_done), (bm, _, b_done) in pairwise(samples)
        if bm > am and bm > since
    ]
    return {"depth": depth, "done_per_minute": done}


class _Html(str):
    """Markup built here from numbers only (:func:`sparkline`): templates show it as it is."""

    __slots__ = ()

    def __html__(self) -> str:
        return self


def sparkline(
    points: list[list[float]], *, now_ms: int, width: int = 120, height: int = 28, pad: int = 2
) -> dict[str, Any]:
    """SVG polyline coordinates of ``[[time_ms, value], ...]`` over the hour before ``now_ms``.

    Returns ``{points: "x,y x,y ...", end_x, end_y, count, last, max, width, height}``: time runs
    left to right over the hour, values from 0 (bottom) to their maximum (top); and ``html``:
    the chart as the page shows it (an inline ``<svg>``, its last value and maximum beside
    it; "no samples yet" without a point), built here from those numbers only: 100 queues'
    charts are drawn on every refresh, and one template include each (or a dozen template
    variables) cost more than the rest of the row. The page's cell around it names the series.

    The hour is placed by the server's clock to :data:`CHART_CLOCK_MS` (the minute: the
    samples are a minute apart), so a chart whose points are the very same objects as last
    time (the history book keeps them while their lists do not change) is not drawn again
    within the minute.
    """
    start = now_ms // CHART_CLOCK_MS * CHART_CLOCK_MS - HOUR_MS
    key = (id(points[0]) if points else 0, len(points), start, width, height, pad)
    drawn = _charts.get(key)
    if drawn is not None and all(map(operator.is_, drawn[0], points)):
        return dict(drawn[1])
    chart = _sparkline(points, start, width, height, pad)
    if len(_charts) >= 2000:
        _charts.clear()
    _charts[key] = (tuple(points), chart)
    return dict(chart)


#: The clock of the charts (ms): the hour shown ends at the server time rounded down to it (a
#: minute: the samples are a minute apart, and a chart is drawn again once a minute at most).
CHART_CLOCK_MS = 60_000

#: Charts drawn lately: (id of the first point, points, start, size) -> (the points, the chart).
_charts: dict[tuple[int, ...], tuple[tuple[Any, ...], dict[str, Any]]] = {}


def _sparkline(
    points: list[list[float]], start: int, width: int, height: int, pad: int
) -> dict[str, Any]:
    values = [v for _, v in points]
    top = max(values, default=0) or 1
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    # The same minutes and values come back in every chart: each formatted once (a chart of an
    # hour has 61 points, and a page has 200 charts).
    xs_of = _x_memo(start, inner_w, pad)
    for t, _ in points:
        if t not in xs_of:
            xs_of[t] = f"{pad + min(max((t - start) / HOUR_MS, 0.0), 1.0) * inner_w:.1f}"
    ys_of = {v: f"{pad + (1 - v / top) * inner_h:.1f}" for v in set(values)}
    coords = [f"{xs_of[t]},{ys_of[v]}" for t, v in points]
    end_x, _, end_y = coords[-1].partition(",") if coords else ("", "", "")
    last, most = (values[-1], max(values)) if values else (None, None)
    joined = " ".join(coords)
    if not coords:
        html = _Html('<span class="rc-muted">no samples yet</span>')
    else:
        html = _Html(
            f'<svg class="rc-spark" data-points="{len(coords)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img"><title>over the last hour: last {last}, '
            f'max {most} ({len(coords)} sample(s))</title><rect width="100%" height="100%" '
            'fill="currentColor" opacity="0.08"/><polyline fill="none" stroke="currentColor" '
            f'stroke-width="1.5" stroke-linejoin="round" points="{joined}"/><circle cx="{end_x}" '
            f'cy="{end_y}" r="2" fill="currentColor"/></svg> <span class="rc-spark-label">{last} '
            f'<span class="rc-muted">max {most}</span></span>'
        )
    return {
        "points": joined,
        "end_x": end_x,  # the latest point gets a dot: a single sample draws no line
        "end_y": end_y,
        "count": len(coords),
        "last": last,
        "max": most,
        "width": width,
        "height": height,
        "html": html,
    }


_x_memos: dict[tuple[int, int, int], dict[Any, str]] = {}


def _x_memo(start: int, inner_w: int, pad: int) -> dict[Any, str]:
    """time -> its x coordinate, as text, for the charts of the hour from ``start`` (the charts of
    one page share it; the last few hours' are kept)."""
    key = (start, inner_w, pad)
    memo = _x_memos.get(key)
    if memo is None:
        if len(_x_memos) >= 8:
            _x_memos.clear()
        memo = _x_memos[key] = {}
    return memo


#: More items than a list in Redis can hold (a page beyond is past its end).
_MOST_ITEMS = 2**40


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
    # (past the end is an empty page; past what LRANGE's 64-bit indexes take, the same)
    page = min(max(1, page), _MOST_ITEMS // per_page)
    with unavailable_as_ours(client, f"read dead letters of {queue.name!r}"):
        for _ in range(2):
            pipe = client.pipeline(transaction=True)
            pipe.llen(k.dead)
            # the list is oldest first (RPUSH): the newest page is its tail
            pipe.lrange(k.dead, -page * per_page, -(page - 1) * per_page - 1)
            total, raws = pipe.execute()
            last = max(1, math.ceil(total / per_page))
            if page <= last:
                break
            page = last  # past the end: the last page, read again (never "page 4 of 3")
        letters = [Message.parse(raw, queue.name) for raw in reversed(raws)]
        pipe = client.pipeline(transaction=False)
        if letters:
            pipe.hmget(k.errors, [m.id or "-" for m in letters])
        asked = []
        for m in letters:
            task = _task_of(m)
            if (
                task
            ):  # its last error is error.<attempts>; bury() wrote that count into the envelope
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
    return {
        "total": total,
        "page": page,
        "pages": max(1, math.ceil(total / per_page)),
        "items": items,
    }


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
    """A JSON object written by us ({} when absent); whatever is there, the page never fails on
    it."""
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
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("task"), str)
        or not isinstance(body.get("result"), str)
    ):
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
        args = ", ".join(
            [
                *(_short(_dumps(a), 60) for a in (args if isinstance(args, list) else [])),
                *(
                    f"{k}={_short(_dumps(v), 60)}"
                    for k, v in (kwargs if isinstance(kwargs, dict) else {}).items()
                ),
            ]
        )
        return _short(f"{task[0]}({args})")
    return _short(message.body)


def list_workers(client: Any, keys: KeyBuilder, *, now_ms: int) -> list[dict[str, Any]]:
    since = now_ms - DEAD_WORKER_KEEP_MS
    # by heartbeat deadline, oldest first, as the one-server zset read gave them
    entries = sorted(
        ((w, d) for w, d in read_index(client, keys, "workers").items() if d >= since),
        key=lambda e: (e[1], e[0]),
    )
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
                "cancelled": _int(h.get("cancelled")),
            }
        )
    return workers


register_panel(
    Panel(
        key="workers",
        what="workers",
        read=lambda r: list_workers(r.client, r.keys, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="workers",
        section_id="rc-section-workers",
        for_trouble=True,
        tables=lambda workers, now: [
            (
                "Workers",
                ["worker", "queues", "current", "last heartbeat", "ok/failed/dead", "state"],
                [
                    [
                        w["id"],
                        ",".join(w["queues"]),
                        ",".join(w["current"]) or "-",
                        ago(w["heartbeat_age"]),
                        f"{w['ok']}/{w['failed']}/{w['dead_lettered']}",
                        "DEAD" if w["dead"] else "alive",
                    ]
                    for w in workers
                ],
            )
        ],
    )
)


#: What the trouble list judges (``overview(..., only=TROUBLE_ONLY)`` reads just that).
TROUBLE_ONLY = ("trouble",)
#: The index kinds each part of the overview reads (the trouble list: what it judges).
_INDEXES = {"trouble": ("locks", "queues", "workers", "ratelimiters")}


def overview(
    client: Any,
    prefix: str,
    *,
    contains: str = "",
    page: int = 1,
    elections: tuple[str, ...] = ("default",),
    only: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-ready data, with ``trouble`` (what needs a look,
    judged by :func:`django_redcoord.trouble.find_trouble` from the rest).

    ``unreadable`` counts the records left out because Redis held what we did
    not write there (what -> how many; each logged): a section that cannot be
    read at all is shown empty and counted, never a raw error or a traceback.

    ``only=TROUBLE_ONLY``: just what the trouble list needs (``trouble``, and the
    ``queues`` without their charts, ``workers``, ``leaders`` and ``rate_limits``
    it judged; the other parts empty): the panel alone, without the page's cost.
    """
    keys = key_builder(prefix, client)
    trouble_only = only is not None
    if trouble_only and tuple(only) != TROUBLE_ONLY:
        raise ValueError(
            f"overview(only=...) takes {TROUBLE_ONLY!r} (the trouble panel) or None (everything), "
            f"not {only!r}"
        )
    kinds = _INDEXES["trouble"] if trouble_only else tuple(INDEX_TYPES)  # (read in one round trip)
    if (
        not keys.cluster
    ):  # (one server: the indexes of 256 buckets are read apart, see _read_numbers)
        kinds = tuple(kind for kind in kinds if kind not in _BUCKETED)
    # (counting first: what the one read of every index skips is counted too)
    with (
        unavailable_as_ours(client, "read the coordination overview"),
        counting_unreadable() as unreadable,
        reading_all(client, keys, kinds=kinds),
    ):
        now_ms = _server_ms(client)

        def section(what: str, read: Any, empty: Any, *, needed: bool = True) -> Any:
            if not needed:
                return empty
            try:
                return read()
            except (
                redis.exceptions.RedisError,
                ValueError,
                TypeError,
                KeyError,
                IndexError,
                AttributeError,
            ) as exc:
                if isinstance(exc, redis.exceptions.RedisError) and is_passing(exc):
                    raise  # an outage: CoordinationUnavailable, for the whole page
                # what we did not write: logged as a warning; the traceback only at DEBUG
                # (never on the operator's terminal)
                skip_unreadable(what, 1, what, f"{type(exc).__name__}: {exc}")
                log.debug("admin: could not read the %s", what, exc_info=True)
                return empty

        page_too = not trouble_only
        live = section("locks", lambda: live_locks(client, keys, now_ms=now_ms), {})
        reading = Reading(
            client=client,
            keys=keys,
            now_ms=now_ms,
            contains=contains,
            page=page,
            elections=elections,
            live=live,
            page_too=page_too,
        )
        data: dict[str, Any] = {"server_time_ms": now_ms, "prefix": prefix}
        for panel in panels():
            data[panel.key] = section(
                panel.what,
                functools.partial(panel.read, reading),
                panel.empty(reading),
                needed=page_too or panel.for_trouble,
            )
        data["unreadable"] = dict(unreadable)
        data["trouble"] = section(
            "trouble",
            lambda: find_trouble(client, keys, data, now_ms=now_ms, live_locks=live),
            None,
        )
        if data["trouble"] is None:
            data["trouble"] = {
                "items": [],
                "counts": {"error": 0, "warning": 0},
                "unchecked": True,
                "notes": [
                    "The trouble check could not be done (see the log): look at the sections below."
                ],
            }
        data["unreadable"] = dict(unreadable)
    return data


def leaders(
    client: Any, keys: KeyBuilder, elections: tuple[str, ...], *, now_ms: int
) -> list[dict[str, Any]]:
    """The leader and periodic jobs of each election (no leader until run_leader runs).

    Each job row also carries its dead-man's switch (see
    ``core/periodic/overdue.py``): ``health`` (ok, overdue, failing,
    never_ran, paused), ``overdue`` (True when unhealthy), ``health_reason``
    (one sentence), ``late`` and ``max_late`` (seconds). The jobs registered
    in this process (discovered as ``run_leader`` does) give their own
    ``max_late``; the others are judged from their state alone.
    """
    from .core import DEFAULT_ELECTION, edited_since_claim, read_job_states, read_leader

    registry = _registered_jobs()
    out = []
    for name in elections:
        election_keys = keys.leader(name)
        lead = read_leader(election_keys, client)
        known = registry if name == DEFAULT_ELECTION else {}
        # while a leader leads, also the jobs registered here that it never claimed (its code lacks
        # them, or it is stuck): no state in Redis, yet they must show, red, as "never scheduled"
        states = read_job_states(
            SimpleNamespace(client=client, keys=election_keys),  # type: ignore[arg-type]
            also=list(known) if lead is not None else (),
        )
        edits = _schedule_edits(
            client,
            election_keys,
            [j for j, st in states.items() if j in known and edited_since_claim(st)],
        )
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
                "jobs": [
                    {
                        "name": job,
                        **state,
                        **_job_health(job, state, known.get(job), lead, now_ms, edits.get(job)),
                    }
                    for job, state in states.items()
                ],
            }
        )
    return out


def _leader_tables(elections: list[dict[str, Any]], now: int) -> list[Table]:
    tables = []
    for election in elections:
        lead = election["leader"]
        who = (
            f"{lead['identity']} (term {lead['term']}, since {when(lead['since_ms'], now)})"
            if lead
            else "none"
        )
        tables.append(
            (
                f"Leader of {election['election']!r}: {who}",
                ["job", "schedule", "runs", "outcome", "last run", "took", "next due"],
                [
                    [
                        j["name"],
                        j.get("schedule", "-"),
                        j.get("runs", 0),
                        j.get("outcome", "-"),
                        when(j.get("last_start"), now),
                        span(j["duration"] / 1000 if isinstance(j.get("duration"), int) else None),
                        "paused" if j.get("paused") else when(j.get("next_due"), now),
                    ]
                    for j in election["jobs"]
                ],
            )
        )
    return tables


register_panel(
    Panel(
        key="leaders",
        what="leaders",
        read=lambda r: leaders(r.client, r.keys, r.elections, now_ms=r.now_ms),
        empty=lambda r: [],
        fragment="leaders",
        section_id="rc-leaders",
        for_trouble=True,
        tables=_leader_tables,
    )
)


def _registered_jobs() -> dict[str, Any]:
    """The project's periodic jobs: discovered once per process as ``run_leader`` finds them
    (importing a jobs module only registers), then the registry. A jobs module that fails to
    import is logged once; the jobs are then judged from their state alone."""
    global _discovered
    from .core import get_jobs
    from .discovery import autodiscover

    if not _discovered:
        _discovered = True
        try:
            autodiscover()
        except (
            Exception
        ) as exc:  # a broken jobs module must not take the page down; run_leader reports it
            # the reason on the operator's terminal, the traceback only at DEBUG
            log.warning(
                "admin: the periodic jobs could not be discovered (%s: %s); judged from their "
                "state alone",
                type(exc).__name__,
                exc,
            )
            log.debug("admin: jobs discovery failed", exc_info=True)
    return get_jobs()


_discovered = False


def _schedule_edits(client: Any, election_keys: Any, names: list[str]) -> dict[str, Any]:
    """The schedule versions of the jobs ``names`` (edited since their last claim), one round
    trip; none: no I/O."""
    from .core import decode_versions

    if not names:
        return {}
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.hgetall(election_keys.schedule(name))
    return {
        name: decode_versions(raw or {}) for name, raw in zip(names, pipe.execute(), strict=True)
    }


def _job_health(
    name: str, state: dict[str, Any], job: Any, lead: Any, now_ms: int, versions: Any = None
) -> dict[str, Any]:
    """A job row's dead-man's switch fields (see :func:`leaders`)."""
    from .core import assess, election_timing

    lease, retry = election_timing()
    try:
        found = assess(
            name,
            job,
            state,
            leader=lead,
            now_ms=now_ms,
            lease=lease,
            retry_period=retry,
            versions=versions,
        )
    except (
        ValueError,
        TypeError,
        OverflowError,
    ) as exc:  # what we did not write: shown, never fatal
        return {
            "health": "ok",
            "overdue": False,
            "health_reason": f"not judged: {exc}",
            "late": 0.0,
            "max_late": 0.0,
        }
    return {
        "health": found.status,
        "overdue": not found.ok,
        "health_reason": found.reason,
        "late": found.late,
        "max_late": found.max_late,
    }
