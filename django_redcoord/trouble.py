"""What needs a look: the trouble list at the top of the admin dashboard.

:func:`find_trouble` judges what :func:`~django_redcoord.dashboard.overview`
has just read, and reads little more (measured in ``bench/bench_dashboard.py``):

* **periodic jobs** (``error``): a job the dead-man's switch
  (``core/periodic/overdue.py``) judges unhealthy: the job row's ``overdue``
  (True when unhealthy), ``health`` (``overdue``, ``failing``, or
  ``never_ran`` when no leader schedules it), ``health_reason`` and ``late``.
  Without those fields (rows from an older version), a job whose last run
  ended in ``error`` or ``timeout``.
  **leader** (``error``): an election with periodic jobs (not all paused) and
  no leader: nobody schedules them. No extra read.
* **queues with no worker** (``error``): ready messages, and no live worker
  (heartbeat deadline not passed) lists the queue. No extra read.
  **paused queues** (``warning``): each, with its reason and what waits in it
  (a pause forgotten stops a queue for good). No extra read.
* **dead letters growing** (``error``): dead letters that died in the last
  :data:`DEAD_RECENT_S`. The queues' history samples (``queue_history``)
  hold depth and deliveries done, not dead letters, so "growing" is read from
  the dead letters themselves: the :data:`DEAD_PEEK` newest of each queue
  that has any and their death times (``failed_ms`` in the queue's errors
  hash). Two pipelined round trips, only when some queue has dead letters.
  Dead letters that stopped arriving are not trouble (the Queues section
  still counts them).
* **locks held far past their usual hold** (``warning``): see
  :class:`LockAges`. Redis records, for a held lock, only when its grant
  began (the fencing token is the grant's server time in µs) and when it
  expires; it keeps nothing of earlier holds and not the TTL the holder
  asked for. So "usual" is what Redis can tell: the TTL the code chose (a
  lock is meant to be done within it; ``auto_renew`` renews it every ttl/3),
  estimated from the lock's index entry, and the ages of the other live
  locks of its group (the name up to its last ``:``). A lock is flagged once
  held :data:`LOCK_MIN_AGE_S` or more and :data:`LOCK_HOLD_FACTOR` times
  either.
* **rate-limit keys at their limit** (``warning``): a key of the busiest-keys
  view (``list_rate_limits``: this minute and the last) whose next request
  would be refused now. No extra read.

Each item is ``{severity, kind, resource, reason, href}``: ``href`` is a
link relative to the dashboard (its section's anchor, a filtered lock list or
a queue's dead-letter page). At most :data:`MAX_ITEMS_PER_KIND` items of a
kind are listed, then one that counts the rest.
"""

from __future__ import annotations

import json
import statistics
import threading
from typing import Any
from urllib.parse import urlencode

import redis

from .core import (
    KeyBuilder,
    Message,
    Script,
    as_text,
    commands,
    execute_pipeline,
    is_passing,
    unavailable_as_ours,
)

SEVERITIES = ("error", "warning")
#: kinds in the order they are listed (within a severity)
KINDS = ("leader", "job", "queue", "dead_letters", "lock", "rate_limit")

#: Dead letters that died this recently (seconds) mean a queue's dead letters are growing.
DEAD_RECENT_S = 15 * 60
#: The newest dead letters of a queue whose death time is read (so "20+ in the last 15 min").
DEAD_PEEK = 20

#: A lock held less than this (seconds) is never flagged: nothing held under a minute is
#: "far past" anything worth an operator's look.
LOCK_MIN_AGE_S = 60.0
#: ... and is flagged once held this many times its TTL, or the median age of its group.
LOCK_HOLD_FACTOR = 10
#: A group's median age counts when it has this many live locks (itself included).
LOCK_PEERS_MIN = 5
#: Lock records read per refresh at most (new names, and names whose cached grant may be
#: old): a script call each (``locks/ages.lua``, a GET and a MessagePack decode; one call
#: per key, as every script's keys share one Cluster slot), ~10 µs of client time each.
LOCK_READS_PER_REFRESH = 250
#: A cached grant time is read again after this long (ms), whatever it says (a fence only
#: grows for a name, unless the server's clock went back after Redis lost its data), at most
# : LOCK_STALE_PER_REFRESH a refresh, so the book's entries, read together, are not read together
# again.
LOCK_BOOK_KEEP_MS = 1_800_000
LOCK_STALE_PER_REFRESH = 25
#: The whole book is judged again this often (ms): the group medians, and every name by its
#: cached grant. Between, a refresh judges the names it reads (new ones, and the candidates).
LOCK_JUDGE_EVERY_MS = 10_000
#: ... a part a refresh: a round of the whole book is spread over this many refreshes (5 at the
#: page's refresh every 2 s: 10,000 names judged at once cost one refresh ~10 ms more); a round
#: still due when the next is is finished at once (pages opened seldom judge it all).
LOCK_JUDGE_SLICES = 5

#: Items listed per kind; the rest are counted in one more item.
MAX_ITEMS_PER_KIND = 10

_AGES = Script("locks/ages", includes=("common/waiters", "locks/common"))

#: Where each kind's section is on the page (element ids of admin.sections()).
_ANCHORS = {
    "leader": "#rc-leaders",
    "job": "#rc-leaders",
    "queue": "#rc-section-queues",
    "dead_letters": "#rc-section-queues",
    "lock": "#rc-section-locks",
    "rate_limit": "#rc-section-ratelimits",
}


def find_trouble(
    client: Any,
    keys: KeyBuilder,
    data: dict[str, Any],
    *,
    now_ms: int,
    live_locks: dict[str, int],
) -> dict[str, Any]:
    """The trouble in ``data`` (what :func:`~django_redcoord.dashboard.overview` read at
    ``now_ms``).

    ``live_locks``: name -> index bound of every live lock, as the caller read it with
    ``dashboard.live_locks`` (this module does not import the dashboard, which imports it).

    Returns ``{items, counts, notes}``: ``items`` sorted by severity then kind,
    ``counts`` = ``{"error": n, "warning": m}``, ``notes`` what was not checked
    in full (one sentence each).
    """
    notes: list[str] = []
    items: list[dict[str, Any]] = []
    items += job_trouble(data.get("leaders") or [])
    items += queue_trouble(data.get("queues") or [], data.get("workers") or [])
    items += dead_letter_trouble(client, keys, data.get("queues") or [], now_ms=now_ms)
    items += lock_ages(client, keys).trouble(
        client, keys, live_locks, data.get("locks") or {}, now_ms=now_ms, notes=notes
    )
    items += rate_limit_trouble(data.get("rate_limits") or [])
    unreadable = data.get("unreadable") or {}
    if unreadable:
        notes.append(
            f"Some records could not be read ({', '.join(sorted(unreadable))}): what they hold is "
            "not judged here."
        )
    items = _capped(items)
    items.sort(key=lambda x: (SEVERITIES.index(x["severity"]), KINDS.index(x["kind"])))
    counts = {
        s: sum(1 for x in items if x["severity"] == s and not x.get("more")) for s in SEVERITIES
    }
    for x in items:
        if x.get("more"):
            counts[x["severity"]] += x["more"]
    return {"items": items, "counts": counts, "notes": notes}


def _item(
    severity: str, kind: str, resource: str, reason: str, href: str | None = None
) -> dict[str, Any]:
    return {
        "severity": severity,
        "kind": kind,
        "resource": resource,
        "reason": reason,
        "href": href or _ANCHORS[kind],
    }


def _capped(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_ITEMS_PER_KIND items of each (kind, severity), then one counting the rest."""
    out, seen = [], {}
    for x in items:
        group = (x["kind"], x["severity"])
        seen[group] = seen.get(group, 0) + 1
        if seen[group] <= MAX_ITEMS_PER_KIND:
            out.append(x)
    for (kind, severity), n in seen.items():
        if n > MAX_ITEMS_PER_KIND:
            more = n - MAX_ITEMS_PER_KIND
            out.append(
                {
                    **_item(
                        severity,
                        kind,
                        f"{more} more",
                        f"{more} more of this kind: see the section.",
                    ),
                    "more": more,
                }
            )
    return out


# -- periodic jobs --------------------------------------------------------------


def job_trouble(elections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Overdue and failing periodic jobs, and elections with jobs and no leader."""
    items = []
    for e in elections:
        jobs = e.get("jobs") or []
        election = e.get("election", "default")
        where = "" if election == "default" else f" (election {election})"
        for job in jobs:
            health = job.get("health")
            name = f"{job.get('name', '?')}{where}"
            unhealthy = (
                job.get("overdue")
                if "overdue" in job
                else health == "never_ran" and (job.get("late") or 0) > 0
            )
            if health in ("overdue", "failing") or (health is not None and unhealthy):
                reason = job.get("health_reason") or {
                    "overdue": f"overdue: its slot is {_duration(job.get('late') or 0)} late",
                    "failing": "failing: its last run ended in error",
                    "never_ran": "has never run, and its first slot is "
                    f"{_duration(job.get('late') or 0)} late",
                }.get(health, f"{health}: {_duration(job.get('late') or 0)} late")
                items.append(_item("error", "job", name, reason))
            elif health is None and job.get("outcome") in ("error", "timeout"):
                error = str(job.get("error") or "").strip()
                reason = f"its last run ended in {job['outcome']}" + (
                    f": {_short(error)}" if error else ""
                )
                items.append(_item("error", "job", name, reason))
        active = [j for j in jobs if not j.get("paused")]
        if active and not e.get("leader"):
            items.append(
                _item(
                    "error",
                    "leader",
                    f"election {election}",
                    f"no leader: {len(active)} periodic job(s) are not being scheduled "
                    "(is manage.py run_leader running?)",
                )
            )
    return items


# -- queues ---------------------------------------------------------------------


def queue_trouble(
    queues: list[dict[str, Any]], workers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Queues with ready messages that no live worker serves."""
    served = {q for w in workers if not w.get("dead") for q in w.get("queues") or []}
    items = []
    for q in queues:
        paused = q.get("paused")
        if paused:  # on purpose, but a pause forgotten stops the queue for good: always shown
            why = f" ({paused['reason']})" if paused.get("reason") else ""
            waiting = f"; {q['ready']} ready wait for its resume" if q.get("ready") else ""
            items.append(_item("warning", "queue", q["name"], f"paused{why}{waiting}"))
        elif q.get("ready") and q["name"] not in served:
            oldest = q.get("oldest_age")
            waited = f", the oldest waiting {_duration(oldest)}" if oldest else ""
            items.append(
                _item(
                    "error",
                    "queue",
                    q["name"],
                    f"{q['ready']} ready{waited}; no live worker serves it",
                )
            )
    return items


def dead_letter_trouble(
    client: Any, keys: KeyBuilder, queues: list[dict[str, Any]], *, now_ms: int
) -> list[dict[str, Any]]:
    """Queues whose dead letters are growing: some died in the last DEAD_RECENT_S.

    Two pipelined round trips, only when some queue has dead letters: the
    DEAD_PEEK newest dead letters of each, then their death times.
    """
    with_dead = [q for q in queues if q.get("dead")]
    if not with_dead:
        return []
    qkeys = [keys.queue(q["name"]) for q in with_dead]
    tails = execute_pipeline(
        client,
        lambda pipe: [pipe.lrange(k.dead, -DEAD_PEEK, -1) for k in qkeys],
        operation="read the newest dead letters",
    )
    ids = [
        [m.id for m in (Message.parse(raw, q["name"]) for raw in tail) if m.id]
        for q, tail in zip(with_dead, tails, strict=True)
    ]
    asked = [(k, i) for k, i in zip(qkeys, ids, strict=True) if i]
    errors = (
        execute_pipeline(
            client,
            lambda pipe: [pipe.hmget(k.errors, i) for k, i in asked],
            operation="read when the newest dead letters died",
        )
        if asked
        else []
    )
    died_by_queue = iter(errors)
    since = now_ms - DEAD_RECENT_S * 1000
    items = []
    for q, found in zip(with_dead, ids, strict=True):
        if not found:
            continue
        recent = sum(1 for raw in next(died_by_queue) if _failed_ms(raw) >= since)
        if not recent:
            continue
        many = f"{recent}+" if recent == len(found) == DEAD_PEEK else str(recent)
        href = "dead-letters/?" + urlencode({"name": q["name"]})
        items.append(
            _item(
                "error",
                "dead_letters",
                q["name"],
                f"{many} new dead letter(s) in the last {DEAD_RECENT_S // 60} min ({q['dead']} in "
                "all)",
                href,
            )
        )
    return items


def _failed_ms(raw: Any) -> int:
    """The death time (ms) in a queue's errors hash entry (JSON {error, attempts, failed_ms}), 0
    if none."""
    if not raw:
        return 0
    try:
        value = json.loads(raw).get("failed_ms")
        return int(value) if isinstance(value, (int, float)) else 0
    except (TypeError, ValueError, AttributeError):
        return 0


# -- rate limits ----------------------------------------------------------------


def rate_limit_trouble(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Busiest keys whose next request would be refused now (``list_rate_limits`` peeked at
    them)."""
    items = []
    for x in rows:
        if x.get("allowed") is False or x.get("remaining") == 0:
            retry = x.get("retry_after")
            wait = f", next request allowed in {_duration(retry)}" if retry else ""
            items.append(
                _item(
                    "warning",
                    "rate_limit",
                    f"{x['name']} / {x['key']}",
                    f"at its limit ({x['policies']}): {x.get('hits', 0)} hit(s) this minute and "
                    f"the last{wait}",
                )
            )
    return items


# -- locks ----------------------------------------------------------------------


class LockAges:
    """When the grant of each live lock began, as last read, for this process (one book per
    client and prefix: :func:`lock_ages`).

    Reading the record of every live lock on every refresh of the page would cost a script
    call per lock (10,000 locks: tens of ms, every 2 s). A grant's fencing token only grows
    for a name (a new grant's is above the last), so a fence read earlier makes a lock look
    *older* than it is, never younger: the book keeps each name's fence as last read, and a
    refresh reads again only the names it has not read yet and those its book says may be
    held too long (to judge them on their current grant), at most LOCK_READS_PER_REFRESH,
    candidates first; what is left waits for the next refresh (and a note says so). The whole
    book is judged again (group medians, every name) every LOCK_JUDGE_EVERY_MS, a fifth of it a
    refresh (LOCK_JUDGE_SLICES: no refresh pays for 10,000 names at once); between, only the
    names just read are. An entry older than LOCK_BOOK_KEEP_MS is read again (a few a
    refresh), and one found free within LOCK_MIN_AGE_S (a new grant is not old before that).
    """

    def __init__(self) -> None:
        self._book: dict[str, tuple[int, int, str]] = {}  # name -> (fence µs, read at ms, group)
        self._guard = threading.Lock()
        self._judged_ms = -LOCK_JUDGE_EVERY_MS
        self._candidates: set[str] = set()
        self._stale: list[str] = []
        self._peers: dict[
            str, tuple[int, float]
        ] = {}  # group -> (live locks, median age s) at _judged_ms
        self._cycle: list[
            str
        ] = []  # the names of this round of the whole book, judged a part a refresh
        self._cycle_at = 0
        #: group -> {name: fence} of the names of the book held when read (kept with the book, so
        #: that the group medians need no pass over 10,000 entries)
        self._groups: dict[str, dict[str, int]] = {}
        #: records read by the last call (for the benchmark and the tests)
        self.last_reads = 0

    def _put(self, name: str, fence: int, now_ms: int) -> None:
        group = name.rpartition(":")[0]
        self._book[name] = (fence, now_ms, group)
        if group:
            members = self._groups.get(group)
            if fence:
                if members is None:
                    members = self._groups[group] = {}
                members[name] = fence
            elif members is not None:
                members.pop(name, None)

    def _drop(self, name: str) -> None:
        _, _, group = self._book.pop(name)
        members = self._groups.get(group)
        if members is not None:
            members.pop(name, None)
            if not members:
                del self._groups[group]

    def _group_ages(self, now_ms: int) -> dict[str, tuple[int, float]]:
        """:func:`_peers` of the book, from the groups kept with it."""
        now_us = now_ms * 1000
        return {
            g: (len(m), max(0.0, (now_us - statistics.median_low(m.values())) / 1_000_000))
            for g, m in self._groups.items()
            if len(m) >= LOCK_PEERS_MIN
        }

    def trouble(
        self,
        client: Any,
        keys: KeyBuilder,
        live: dict[str, int],
        locks: dict[str, Any],
        *,
        now_ms: int,
        notes: list[str],
    ) -> list[dict[str, Any]]:
        """Locks held far past their usual hold (see the module's docstring), as items, the
        oldest grant first.

        ``live``: name -> index bound (s) of every live lock (``dashboard.live_locks``);
        ``locks``: the page of locks the dashboard read (its holders' fences are taken for free).
        """
        with self._guard:
            book = self._book
            for name in book.keys() - live.keys():
                self._drop(name)
            for row in locks.get("items") or []:
                if row.get("name") in live and row.get("fence"):
                    self._put(row["name"], int(row["fence"]), now_ms)
            candidates = sorted(
                (n for n in self._candidates if n in book and book[n][0]), key=lambda n: book[n][0]
            )
            unknown = list(live.keys() - book.keys())
            unknown.sort()  # (the same order every refresh: none waits for ever)
            budget = LOCK_READS_PER_REFRESH
            to_read = candidates[:budget]
            to_read += unknown[: budget - len(to_read)]
            if len(to_read) < budget and self._stale:
                room = min(budget - len(to_read), LOCK_STALE_PER_REFRESH)
                again, self._stale = self._stale[:room], self._stale[room:]
                to_read += [n for n in again if n in book]
            for name, fence in zip(to_read, _read_fences(client, keys, to_read), strict=True):
                # 0: not held (released, or expired under a crashed holder: its entry stays in the
                # index until its bound passes), read again within LOCK_MIN_AGE_S
                self._put(name, fence, now_ms)
            self.last_reads = len(to_read)
            overdue = now_ms - self._judged_ms >= LOCK_JUDGE_EVERY_MS
            if overdue and self._cycle_at >= len(self._cycle):  # a new round of the whole book
                self._peers = self._group_ages(now_ms)
                self._cycle, self._cycle_at, self._judged_ms = list(book), 0, now_ms
                self._stale = []
                self._candidates &= book.keys()
                overdue = LOCK_JUDGE_EVERY_MS <= 0
            elif unknown and to_read:
                self._peers = self._group_ages(now_ms)  # new names: their groups' medians change
            if self._cycle_at < len(self._cycle):
                # this refresh's part of the round (all that is left of it once the round is
                # overdue)
                end = (
                    len(self._cycle)
                    if overdue
                    else self._cycle_at + -(-len(self._cycle) // LOCK_JUDGE_SLICES)
                )
                part, self._cycle_at = self._cycle[self._cycle_at : end], end
                self._candidates = (self._candidates - set(part)) | set(
                    _judge(part, live, book, now_ms, self._peers)
                )
                keep, free = now_ms - LOCK_BOOK_KEEP_MS, now_ms - LOCK_MIN_AGE_S * 1000
                self._stale += [
                    n for n in part if n in book and book[n][1] < (keep if book[n][0] else free)
                ]
            judged = _judge(to_read, live, book, now_ms, self._peers)
            self._candidates = (self._candidates - set(to_read)) | set(judged)
            items = [
                _item("warning", "lock", name, why, "?" + urlencode({"q": name}) + _ANCHORS["lock"])
                for name, why in sorted(judged.items(), key=lambda kv: book[kv[0]][0])
            ]
            unread = len(unknown) - len(set(unknown) & set(to_read))
            if unread:
                notes.append(
                    f"Lock ages: {len(live) - unread:,} of {len(live):,} live locks checked so "
                    f"far; the rest on the next refreshes ({budget:,} a refresh)."
                )
            if len(candidates) > budget:
                notes.append(
                    f"{len(candidates) - budget:,} more locks may be held far too long: "
                    "they are checked on the next refreshes."
                )
        return items


def _peers(book: dict[str, tuple[int, int, str]], now_ms: int) -> dict[str, tuple[int, float]]:
    """group -> (live locks in the book, their median age in s), for groups of LOCK_PEERS_MIN or
    more."""
    fences: dict[str, list[int]] = {}
    for fence, _, group in book.values():
        if group and fence:
            fences.setdefault(group, []).append(fence)
    now_us = now_ms * 1000
    return {
        g: (len(f), max(0.0, (now_us - statistics.median_low(f)) / 1_000_000))
        for g, f in fences.items()
        if len(f) >= LOCK_PEERS_MIN
    }


def _judge(
    names: Any,
    live: dict[str, int],
    book: dict[str, tuple[int, int, str]],
    now_ms: int,
    peers: dict[str, tuple[int, float]],
) -> dict[str, str]:
    """name -> why, for each of ``names`` (in ``book``) held far past its usual hold (the
    module's docstring)."""
    now_s = now_ms / 1000
    cutoff = (now_ms - LOCK_MIN_AGE_S * 1000) * 1000  # a fence is µs
    out = {}
    for name in names:
        entry = book.get(name)
        if entry is None or not entry[0] or entry[0] > cutoff or name not in live:
            continue  # (0: not held when read)
        age = now_s - entry[0] / 1_000_000
        # The TTL is not stored. The index bound is rewritten to expiry + ttl once a grant or a
        # renewal outlasts it, so while the lock lives 2/3 ttl <= bound - now <= 2 ttl (+1 s: whole
        # seconds), renewing every ttl/3: ttl <= 1.5 (bound - now) + 1, an estimate never too small.
        ttl = 1.5 * max(0.0, live[name] - now_s) + 1
        if age >= LOCK_HOLD_FACTOR * ttl:
            out[name] = (
                f"held {_duration(age)}, over {LOCK_HOLD_FACTOR}× its TTL (≤ {_duration(ttl)}): "
                "renewed all along"
            )
            continue
        peer = peers.get(entry[2])
        if peer and age >= LOCK_HOLD_FACTOR * peer[1]:
            out[name] = (
                f"held {_duration(age)}, over {LOCK_HOLD_FACTOR}× the median age "
                f"({_duration(peer[1])}) of the {peer[0]} live {entry[2]}:… locks"
            )
    return out


def _read_fences(client: Any, keys: KeyBuilder, names: list[str]) -> list[int]:
    """The fence of the grant each lock holds now (0: not held): one script call each, one round
    trip."""
    if not names:
        return []
    calls = tuple(("EVALSHA", _AGES.sha, 1, keys.lock(name).lock) for name in names)
    operation = "read when locks were granted"
    replies = commands(client, calls, operation=operation, raise_errors=False)
    if any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
        client.script_load(_AGES.source)  # (every primary of a Cluster)
        replies = commands(client, calls, operation=operation, raise_errors=False)
    fences = []
    for reply in replies:
        if isinstance(reply, redis.exceptions.RedisError):
            if is_passing(reply):
                with unavailable_as_ours(client, operation):
                    raise reply
            fences.append(0)  # what we did not write (the script answers 0 for that): not judged
        else:
            fences.append(int(reply))
    return fences


_books_guard = threading.Lock()


def lock_ages(client: Any, keys: KeyBuilder) -> LockAges:
    """This process's :class:`LockAges` for ``client`` and the prefix of ``keys`` (kept on the
    client object)."""
    with _books_guard:
        books = getattr(client, "_redcoord_lock_ages", None)
        if books is None:
            books = {}
            try:
                client._redcoord_lock_ages = books
            except AttributeError:  # a client that takes no attribute: a fresh book each time
                pass
        return books.setdefault(keys.prefix, LockAges())


# -- text -----------------------------------------------------------------------


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 5 min``, ``3 d 4 h``: a duration an operator reads at a
    glance."""
    s = max(0.0, float(seconds))
    if s < 10:
        return f"{s:.1f} s"
    if s < 120:
        return f"{s:.0f} s"
    m = int(s // 60)
    if m < 120:
        return f"{m} min"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} d {h} h" if h else f"{d} d"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(as_text(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
