"""Reading latches and barriers from outside: the admin's side (from their indexes; no scan)."""

from __future__ import annotations

from typing import Any

from ..indexes import live_names, read_index, read_records
from ..transport.clients import key_builder
from ..transport.errors import unavailable_as_ours
from . import barrier, latch


def _live_names(client: Any, builder: Any, kind: str, now_ms: int) -> list[str]:
    with unavailable_as_ours(client, f"list {kind}"):
        entries = read_index(client, builder, kind)
    return live_names(entries, now_ms)


def read_latches(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every latch used within its ``keep`` time, with its count, parties and waiters: two round
    trips."""
    builder = key_builder(prefix, client)
    names = _live_names(client, builder, "latches", now_ms)
    keys = [builder.latch(name) for name in names]

    by_name = dict(zip(names, keys, strict=True))

    def queue(pipe: Any, name: str) -> None:
        k = by_name[name]
        latch.INSPECT.queue(pipe, [k.state, k.parties, k.waiters], [])

    replies = read_records(
        client,
        names,
        queue,
        lambda name, reply: {"name": name, **latch.state_from_reply(reply)},
        what="latches",
        operation="inspect latches",
    )
    return [x for x in replies if x is not None and x["count"] is not None]


def read_barriers(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every barrier used within its ``keep`` time, with its generation and who waits: two round
    trips."""
    builder = key_builder(prefix, client)
    names = _live_names(client, builder, "barriers", now_ms)
    keys = [builder.barrier(name) for name in names]

    by_name = dict(zip(names, keys, strict=True))

    def queue(pipe: Any, name: str) -> None:
        k = by_name[name]
        barrier.INSPECT.queue(pipe, [k.state, k.parties], [])

    replies = read_records(
        client,
        names,
        queue,
        lambda name, reply: {"name": name, **barrier.state_from_reply(reply)},
        what="barriers",
        operation="inspect barriers",
    )
    return [x for x in replies if x is not None]
