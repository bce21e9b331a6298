"""Reading read-write locks from outside their holders: the admin's side."""

from __future__ import annotations

from typing import Any

from ..indexes import read_index
from ..transport.clients import key_builder
from ..transport.commands import as_text, execute_pipeline
from ..transport.errors import unavailable_as_ours
from .rwlock import INSPECT, state_from_reply


def read_rwlocks(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every read-write lock with live holders (from the index; no scan), with its holders: two round trips."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list read-write locks"):
        entries = read_index(client, builder, "rwlocks")
    names = sorted(as_text(n) for n, bound in entries.items() if int(bound) * 1000 >= now_ms)
    if not names:
        return []
    keys = [builder.rwlock(name) for name in names]

    def build(pipe: Any) -> None:
        for k in keys:
            INSPECT.queue(pipe, [k.state, k.readers, k.queue], [])

    replies = execute_pipeline(client, build, operation="inspect read-write locks")
    return [{"name": name, **state_from_reply(reply)} for name, reply in zip(names, replies, strict=True)]
