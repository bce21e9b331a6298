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
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis

from .keys import INDEX_TYPES, SLOTS, KeyBuilder, slot_tag
from .transport.clients import is_cluster
from .transport.commands import as_text, command, commands
from .transport.errors import unavailable_as_ours
from .transport.scripts import Script

_READ = Script("admin/read_slots", flags="no-writes,allow-cross-slot-keys")

#: Slots read per script call on a Cluster node.
SLOTS_PER_CALL = 1024

#: (head, tail, type) of a per-slot bucket on a Cluster: its key is head + slot tag + tail.
Shape = tuple[str, str, str]


_prefetched: contextvars.ContextVar[dict[tuple[int, str, str], Any] | None] = contextvars.ContextVar(
    "redcoord_prefetched_indexes", default=None
)


@contextlib.contextmanager
def reading_all(client: Any, keys: KeyBuilder) -> Iterator[None]:
    """Within the block, :func:`read_index` answers from one read of every index (a Cluster's
    primaries are asked once for all kinds, not once per kind: the dashboard's page)."""
    if not keys.cluster:
        yield
        return
    kinds = list(INDEX_TYPES)
    shapes = [(*keys.index_parts(kind), INDEX_TYPES[kind]) for kind in kinds]
    found = read_slot_buckets(client, shapes)
    token = _prefetched.set({(id(client), keys.prefix, kind): value for kind, value in zip(kinds, found, strict=True)})
    try:
        yield
    finally:
        _prefetched.reset(token)


def read_index(client: Any, keys: KeyBuilder, kind: str) -> Any:
    """Everything the admin index ``kind`` holds, merged over its buckets, as text.

    A hash index gives ``{name: value}``, a set index ``{name, ...}``, a zset
    index ``{member: score}``.
    """
    kind_type = INDEX_TYPES[kind]
    prefetched = _prefetched.get()
    if prefetched is not None and (id(client), keys.prefix, kind) in prefetched:
        return prefetched[(id(client), keys.prefix, kind)]
    if keys.cluster:
        head, tail = keys.index_parts(kind)
        return read_slot_buckets(client, [(head, tail, kind_type)])[0]
    pipe = client.pipeline(transaction=False)
    for key in keys.index_keys(kind):
        _queue_read(pipe, key, kind_type)
    return _merge(kind_type, pipe.execute())


def read_slot_buckets(client: Any, shapes: list[Shape], *, merge: bool = True) -> Any:
    """On a Cluster: for each shape (head, tail, type), its buckets of every slot merged (see
    :func:`read_index`); with ``merge=False``, ``(shape number, flat contents)`` of each non-empty bucket."""
    if not is_cluster(client):
        raise TypeError(f"read_slot_buckets needs a Redis Cluster client, not {type(client).__name__}")
    found: list[list[Any]] = [[] for _ in shapes]
    args = [len(shapes)] + [part for shape in shapes for part in shape]
    for attempt in (1, 2):
        try:
            primaries = _slots_by_primary(client)
            with ThreadPoolExecutor(len(primaries) or 1) as pool:  # the primaries read their buckets at once
                per_node = list(pool.map(lambda item: list(_read_node(client, *item, args)), primaries.items()))
            for node_found in per_node:
                for shape_no, contents in node_found:
                    found[shape_no].append(contents)
            break
        except redis.exceptions.ResponseError as exc:  # noqa: PERF203
            # a slot moved away since we read the map (failover, resharding): read it again once
            if attempt == 2 or "non local key" not in str(exc) and "MOVED" not in str(exc):
                raise
            found = [[] for _ in shapes]
            client.nodes_manager.initialize()
    if not merge:
        return [(shape_no, contents) for shape_no, buckets in enumerate(found) for contents in buckets]
    return [_merge(shape[2], contents, flat=True) for shape, contents in zip(shapes, found, strict=True)]


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


def _read_node(client: Any, node: Any, tags: list[str], args: list[Any]) -> Iterable[tuple[int, list[Any]]]:
    """(shape number, contents) of each non-empty bucket among the slots (``tags``) of ``node``: one round trip."""
    server = client.get_redis_connection(node)
    calls = tuple(
        ("EVALSHA", _READ.sha, 0, *args, *tags[i : i + SLOTS_PER_CALL]) for i in range(0, len(tags), SLOTS_PER_CALL)
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
            yield int(reply[i]), reply[i + 1]


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
            pairs = zip(reply[0::2], reply[1::2], strict=True)
        else:
            pairs = reply.items() if isinstance(reply, dict) else reply
        for field, value in pairs:
            merged[as_text(field)] = float(value) if kind_type == "zset" else as_text(value)
    return merged

