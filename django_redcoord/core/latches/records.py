"""Reading latches and barriers from outside: the admin's side (from their indexes; no scan)."""

from __future__ import annotations

from typing import Any

from ..indexes import read_index
from ..transport.clients import key_builder
from ..transport.commands import as_text, execute_pipeline
from ..transport.errors import unavailable_as_ours
from . import barrier, latch


def _live_names(client: Any, builder: Any, kind: str, now_ms: int) -> list[str]:
    with unavailable_as_ours(client, f"list {kind}"):
        entries = read_index(client, builder, kind)
    return sorted(as_text(n) for n, bound in entries.items() if int(bound) * 1000 >= now_ms)


def read_latches(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every latch used within its ``keep`` time, with its count, parties and waiters: two round trips."""
    builder = key_builder(prefix, client)
    names = _live_names(client, builder, "latches", now_ms)
    keys = [builder.latch(name) for name in names]

    def build(pipe: Any) -> None:
        for k in keys:
            latch.INSPECT.queue(pipe, [k.state, k.parties, k.waiters], [])

    replies = execute_pipeline(client, build, operation="inspect latches") if names else []
    found = [{"name": name, **latch.state_from_reply(reply)} for name, reply in zip(names, replies, strict=True)]
    return [x for x in found if x["count"] is not None]


def read_barriers(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every barrier used within its ``keep`` time, with its generation and who waits: two round trips."""
    builder = key_builder(prefix, client)
    names = _live_names(client, builder, "barriers", now_ms)
    keys = [builder.barrier(name) for name in names]

    def build(pipe: Any) -> None:
        for k in keys:
            barrier.INSPECT.queue(pipe, [k.state, k.parties], [])

    replies = execute_pipeline(client, build, operation="inspect barriers") if names else []
    return [{"name": name, **barrier.state_from_reply(reply)} for name, reply in zip(names, replies, strict=True)]
