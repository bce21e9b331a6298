"""Reading read-write locks from outside their holders: the admin's side."""

from __future__ import annotations

from typing import Any

from ..indexes import live_names, read_index, read_records
from ..transport.clients import key_builder
from ..transport.errors import unavailable_as_ours
from .rwlock import INSPECT, state_from_reply


def read_rwlocks(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every read-write lock with live holders (from the index; no scan), with its holders: two
    round trips.

    A lock whose keys hold what we did not write is left out (logged and counted, see
    :func:`~django_redcoord.core.indexes.read_records`)."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list read-write locks"):
        entries = read_index(client, builder, "rwlocks")
    names = live_names(entries, now_ms)

    def queue(pipe: Any, name: str) -> None:
        k = builder.rwlock(name)
        INSPECT.queue(pipe, [k.state, k.readers, k.queue], [])

    found = read_records(
        client,
        names,
        queue,
        lambda name, reply: {"name": name, **state_from_reply(reply)},
        what="read-write locks",
        operation="inspect read-write locks",
    )
    return [x for x in found if x is not None]
