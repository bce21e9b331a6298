"""Reading the admin indexes, on one server and on a Redis Cluster.

The scripts that write a resource also keep its entry in an admin index (see
``core/keys.py``). On one server (or Sentinel) each index is one key, or 256
buckets for live locks: a pipelined read. On a Cluster each index has a
bucket per slot, in the slot of the resources it lists, so every script
touches one slot; :func:`read_index` then asks each primary for the buckets
of the slots it serves, with ``admin/read_slots.lua`` in batches of
:data:`SLOTS_PER_CALL` slots (one round trip per primary; each call keeps the
server busy ~1 ms, so lock traffic is never held up for long). Nothing is
scanned: only our buckets are read, by name.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import redis

from .keys import (
    _NAME_RE,
    INDEX_TYPES,
    MAX_NAME_LENGTH,
    SLOTS,
    KeyBuilder,
    slot_tag,
    usable_in_index,
    validate_name,
)
from .transport.clients import is_cluster
from .transport.commands import as_text, command, commands, execute_pipeline
from .transport.errors import is_passing, unavailable_as_ours
from .transport.scripts import Script

log = logging.getLogger(__name__)

_READ = Script("admin/read_slots", flags="no-writes,allow-cross-slot-keys")

#: Slots read per script call on a Cluster node.
SLOTS_PER_CALL = 1024

#: (head, tail, type) of a per-slot bucket on a Cluster: its key is head + slot tag + tail.
Shape = tuple[str, str, str]


#: Hash indexes whose values are whole numbers (a bound in s, a minute); the others hold text.
NUMERIC_INDEXES = frozenset(
    {"locks", "lockwaits", "semaphores", "rwlocks", "latches", "barriers", "events", "signals"}
)

_unreadable: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar(
    "redcoord_unreadable_records", default=None
)


@contextlib.contextmanager
def counting_unreadable() -> Iterator[dict[str, int]]:
    """Within the block, records the admin readers skip are counted in the dict yielded
    (what -> how many), besides being logged (see :func:`skip_unreadable`)."""
    counts: dict[str, int] = {}
    token = _unreadable.set(counts)
    try:
        yield counts
    finally:
        _unreadable.reset(token)


def skip_unreadable(what: str, count: int, example: Any, why: str) -> None:
    """Log (and count, see :func:`counting_unreadable`) ``count`` records of ``what`` the
    admin could not read: a key of another type or a value we did not write. They are
    left out of what the admin shows, never raised: one bad record must not hide the rest."""
    if not count:
        return
    log.warning(
        "admin: skipped %d unreadable record(s) of %s (e.g. %r: %s)", count, what, example, why
    )
    counts = _unreadable.get()
    if counts is not None:
        counts[what] = counts.get(what, 0) + count


def read_records(
    client: Any,
    names: list[str],
    queue: Callable[[Any, str], object],
    parse: Callable[[str, Any], Any],
    *,
    what: str,
    operation: str,
) -> list[Any]:
    """``parse(name, reply)`` of each record ``queue(pipe, name)`` reads, in one pipelined
    round trip; None for a record that could not be read (a key of another type, a value
    ``parse`` refuses), which is skipped (logged and counted), never raised."""
    if not names:
        return []
    try:
        replies: list[Any] = execute_pipeline(
            client, lambda pipe: [queue(pipe, name) for name in names], operation=operation
        )
    except redis.exceptions.ResponseError as exc:
        if is_passing(exc):
            raise
        # Some record could not be read (WRONGTYPE): read them one by one to skip only those.
        replies = []
        for name in names:
            try:
                replies.append(
                    execute_pipeline(client, partial(_queue_one, queue, name), operation=operation)[
                        0
                    ]
                )
            except redis.exceptions.ResponseError as one:  # noqa: PERF203
                if is_passing(one):
                    raise
                replies.append(one)
    out: list[Any] = []
    bad: list[tuple[str, str]] = []
    for name, reply in zip(names, replies, strict=True):
        if isinstance(reply, Exception):
            bad.append((name, str(reply)))
            out.append(None)
            continue
        try:
            out.append(parse(name, reply))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            bad.append((name, f"{type(exc).__name__}: {exc}"))
            out.append(None)
    if bad:
        skip_unreadable(what, len(bad), bad[0][0], bad[0][1])
    return out


_prefetched: contextvars.ContextVar[dict[tuple[int, str, str], Any] | None] = (
    contextvars.ContextVar("redcoord_prefetched_indexes", default=None)
)


@contextlib.contextmanager
def reading_all(
    client: Any, keys: KeyBuilder, *, kinds: Iterable[str] | None = None
) -> Iterator[None]:
    """Within the block, :func:`read_index` answers from one read of every index (or of
    ``kinds``): each of a Cluster's primaries asked once for all kinds, not once per kind (the
    dashboard's page, which reads them all). On one server only when ``kinds`` are named (one
    pipelined round trip for them all); without, each is read when it is first asked for."""
    if not keys.cluster and kinds is None:
        yield
        return
    kinds = list(INDEX_TYPES if kinds is None else kinds)
    if keys.cluster:
        shapes = [(*keys.index_parts(kind), INDEX_TYPES[kind]) for kind in kinds]
        found = read_slot_buckets(client, shapes)
    else:
        found = _read_raw_many(client, keys, kinds)
    token = _prefetched.set(
        {
            (id(client), keys.prefix, kind): _clean(kind, value)
            for kind, value in zip(kinds, found, strict=True)
        }
    )
    try:
        yield
    finally:
        _prefetched.reset(token)


def live_names(entries: Any, now_ms: int) -> list[str]:
    """The names of an index of bounds (name -> the second past which its entry may be dropped)
    whose bound has not passed at ``now_ms``, sorted."""
    return sorted(as_text(n) for n, bound in entries.items() if int(bound) * 1000 >= now_ms)


def read_index(client: Any, keys: KeyBuilder, kind: str) -> Any:
    """Everything the admin index ``kind`` holds, merged over its buckets, as text.

    A hash index gives ``{name: value}``, a set index ``{name, ...}``, a zset
    index ``{member: score}``. What we did not write is left out (logged and
    counted, see :func:`skip_unreadable`): a bucket of another type, a name
    that is not a valid name, a value of a numeric index that is not a whole
    number; so every name returned builds keys, and every value parses.
    """
    prefetched = _prefetched.get()
    if prefetched is not None and (id(client), keys.prefix, kind) in prefetched:
        return prefetched[(id(client), keys.prefix, kind)]
    return _clean(kind, _read_raw(client, keys, kind))


def _read_raw(client: Any, keys: KeyBuilder, kind: str) -> Any:
    if keys.cluster:
        head, tail = keys.index_parts(kind)
        return read_slot_buckets(client, [(head, tail, INDEX_TYPES[kind])])[0]
    return _read_raw_many(client, keys, [kind])[0]


def _read_raw_many(client: Any, keys: KeyBuilder, kinds: list[str]) -> list[Any]:
    """On one server: the raw contents of each index of ``kinds``, in one pipelined round trip."""
    per_kind = [(kind, keys.index_keys(kind)) for kind in kinds]
    pipe = client.pipeline(transaction=False)
    for kind, index_keys in per_kind:
        for key in index_keys:
            _queue_read(pipe, key, INDEX_TYPES[kind])
    replies = iter(pipe.execute(raise_on_error=False))
    out = []
    for kind, index_keys in per_kind:
        kind_type = INDEX_TYPES[kind]
        found = []
        for key, reply in zip(index_keys, replies, strict=False):  # replies: every kind's, in turn
            if isinstance(reply, Exception):
                if isinstance(reply, redis.exceptions.ResponseError) and "WRONGTYPE" in str(reply):
                    skip_unreadable(f"the {kind} index", 1, key, f"not a {kind_type}")
                    continue
                with unavailable_as_ours(client, f"read the {kind} index"):
                    raise reply
            found.append(reply)
        out.append(_merge(kind_type, found))
    return out


def _queue_one(queue: Callable[[Any, str], object], name: str, pipe: Any) -> None:
    """``queue(pipe, name)`` with ``name`` bound first (a pipeline builder of one record)."""
    queue(pipe, name)


def _clean(kind: str, found: Any) -> Any:
    """``found`` without the entries we did not write (see :func:`read_index`)."""
    if _all_plain(kind, found):
        return found
    bad: list[tuple[Any, str]] = []
    numeric = kind in NUMERIC_INDEXES
    plain = _NAME_RE.fullmatch  # most names: one regex (validate_name says why the others fail)
    pairs: Iterable[tuple[Any, Any]] = (
        ((name, None) for name in found) if isinstance(found, set) else found.items()
    )
    kept = []
    for name, value in pairs:
        try:
            if not (plain(name) and len(name) <= MAX_NAME_LENGTH):
                validate_name(name)
                usable_in_index(kind, name)
            if numeric:
                int(value)
        except (TypeError, ValueError) as exc:
            bad.append((name, str(exc)))
            continue
        kept.append((name, value))
    cleaned: Any = {name for name, _ in kept} if isinstance(found, set) else dict(kept)
    if bad:
        skip_unreadable(f"the {kind} index", len(bad), bad[0][0], bad[0][1])
    return cleaned


#: Every name in the allowed charset, one per line (the fast check of :func:`_all_plain`).
_PLAIN_LINES = re.compile(r"[A-Za-z0-9_\-.:/@=+,#~|\n]*")


def _all_plain(kind: str, found: Any) -> bool:
    """Whether every entry of ``found`` is one we wrote, checked at once (C loops, not a
    Python one per entry: 10,000 live locks are read on every refresh of the admin page).

    True only when each name is a plain name (allowed characters, 1 to 200 of them; a
    tagged name goes the slow way) and, for a numeric index, each value is ASCII digits.
    False says nothing: :func:`_clean` then checks entry by entry."""
    if not found:
        return True
    names = list(found)
    if min(map(len, names)) < 1 or max(map(len, names)) > MAX_NAME_LENGTH:
        return False
    text = "\n".join(names)
    if text.count("\n") != len(names) - 1 or not _PLAIN_LINES.fullmatch(text):
        return False  # (a name holding a newline would pass as two lines)
    if kind in NUMERIC_INDEXES:
        values = found.values()
        digits = "".join(values)
        return digits.isascii() and digits.isdigit() and min(map(len, values)) > 0
    return True


def read_slot_buckets(client: Any, shapes: list[Shape], *, merge: bool = True) -> Any:
    """On a Cluster: for each shape (head, tail, type), its buckets of every slot merged (see
    :func:`read_index`); with ``merge=False``, ``(shape number, flat contents)`` of each
    non-empty bucket."""
    if not is_cluster(client):
        raise TypeError(
            f"read_slot_buckets needs a Redis Cluster client, not {type(client).__name__}"
        )
    found: list[list[Any]] = [[] for _ in shapes]
    args = [len(shapes)] + [part for shape in shapes for part in shape]
    for attempt in (1, 2):
        try:
            primaries = _slots_by_primary(client)
            with ThreadPoolExecutor(
                len(primaries) or 1
            ) as pool:  # the primaries read their buckets at once
                per_node = list(
                    pool.map(
                        lambda item: list(_read_node(client, item[0], item[1], args)),
                        primaries.items(),
                    )
                )
            for node_found in per_node:
                for shape_no, contents in node_found:
                    if shape_no == -2:  # a slot in migration: missed for a moment (documented)
                        continue
                    if (
                        shape_no < 0
                    ):  # counted here, in the caller's context (not the pool's threads)
                        skip_unreadable(
                            "an admin index", 1, as_text(contents), "a key of another type"
                        )
                        continue
                    found[shape_no].append(contents)
            break
        except redis.exceptions.ResponseError as exc:  # noqa: PERF203
            # a slot moved away since we read the map (failover, resharding): read it again once
            if attempt == 2 or "non local key" not in str(exc) and "MOVED" not in str(exc):
                raise
            found = [[] for _ in shapes]
            client.nodes_manager.initialize()
    if not merge:
        return [
            (shape_no, contents) for shape_no, buckets in enumerate(found) for contents in buckets
        ]
    return [
        _merge(shape[2], contents, flat=True) for shape, contents in zip(shapes, found, strict=True)
    ]


_by_primary: tuple[Any, dict[str, list[str]]] | None = None


def _slots_by_primary(client: Any) -> dict[Any, list[str]]:
    """Each primary and the tags of the slots it serves, per the client's slot map.

    Worked out again only when the client read a new map (redis-py replaces
    the map's dict then), not on every read of the admin.
    """
    global _by_primary
    cache = client.nodes_manager.slots_cache
    known = _by_primary
    if known is None or known[0] is not cache:
        by_name: dict[str, list[str]] = {}
        for slot in range(SLOTS):
            nodes = cache.get(slot)
            if nodes:
                by_name.setdefault(nodes[0].name, []).append(slot_tag(slot))
        known = _by_primary = (cache, by_name)
    return {client.get_node(node_name=name): tags for name, tags in known[1].items()}


def _read_node(
    client: Any, node: Any, tags: list[str], args: list[Any]
) -> Iterable[tuple[int, list[Any]]]:
    """(shape number, contents) of each non-empty bucket among the slots (``tags``) of ``node``:
    one round trip."""
    server = client.get_redis_connection(node)
    calls = tuple(
        ("EVALSHA", _READ.sha, 0, *args, *tags[i : i + SLOTS_PER_CALL])
        for i in range(0, len(tags), SLOTS_PER_CALL)
    )
    operation = f"read the admin index buckets of {node.name}"
    replies = commands(server, calls, operation=operation, raise_errors=False)
    if any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
        command(server, "SCRIPT", "LOAD", _READ.source, operation=operation)
        replies = commands(server, calls, operation=operation, raise_errors=False)
    for reply in replies:
        if isinstance(reply, Exception):
            with unavailable_as_ours(server, operation):
                raise reply
        for i in range(0, len(reply), 2):
            yield (
                int(reply[i]),
                reply[i + 1],
            )  # -1 and a key: a bucket of another type; -2 and a tag: a slot in migration
            # (read_slots.lua)


def _queue_read(pipe: Any, key: str, kind_type: str) -> None:
    if kind_type == "hash":
        pipe.hgetall(key)
    elif kind_type == "set":
        pipe.smembers(key)
    else:
        pipe.zrange(key, 0, -1, withscores=True)


def _merge(kind_type: str, replies: list[Any], *, flat: bool = False) -> Any:
    """Merge bucket replies: redis-py's parsed ones, or (``flat``) the script's flat arrays."""
    if kind_type == "set":
        return {as_text(m) for reply in replies for m in reply}
    merged: dict[str, Any] = {}
    for reply in replies:
        if flat:
            fields, values = reply[0::2], reply[1::2]
        elif isinstance(reply, dict):
            fields, values = list(reply), list(reply.values())
        else:
            fields, values = [f for f, _ in reply], [v for _, v in reply]
        if len(fields) != len(values):
            raise ValueError(f"an index reply of {len(fields)} fields and {len(values)} values")
        # bytes (a client that does not decode replies): decoded in C loops, no Python call per
        # entry
        try:
            merged.update(
                zip(
                    map(bytes.decode, fields),
                    map(float, values) if kind_type == "zset" else map(bytes.decode, values),
                    strict=True,
                )
            )
        except (
            TypeError
        ):  # str replies (decode_responses) or a mix: one by one (what was merged is merged again)
            merged.update(
                zip(
                    map(as_text, fields),
                    map(float, values) if kind_type == "zset" else map(as_text, values),
                    strict=True,
                )
            )
    return merged
