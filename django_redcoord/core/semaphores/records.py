"""Reading and operating semaphores from outside their holders: the admin's side."""

from __future__ import annotations

from typing import Any

from ..indexes import read_index
from ..transport.clients import get_client, key_builder
from ..transport.commands import as_text, execute_pipeline
from ..transport.errors import unavailable_as_ours
from .semaphore import INSPECT, REVOKE, state_from_reply


def read_semaphores(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every semaphore with live holders (from the index; no scan), with its holders: two round trips."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list semaphores"):
        entries = read_index(client, builder, "semaphores")
    names = sorted(as_text(n) for n, bound in entries.items() if int(bound) * 1000 >= now_ms)
    if not names:
        return []
    keys = [builder.semaphore(name) for name in names]

    def build(pipe: Any) -> None:
        for k in keys:
            INSPECT.queue(pipe, [k.state, k.holders, k.queue], [""])

    replies = execute_pipeline(client, build, operation="inspect semaphores")
    return [{"name": name, **state_from_reply(reply)} for name, reply in zip(names, replies, strict=True)]


def revoke_permit(name: str, fence: int, *, client: Any = None, prefix: str | None = None) -> str:
    """Take back the permit granted with fencing token ``fence`` (an operator's action).

    Its holder's next release or extend raises LockLost; the permit goes to
    the oldest live waiter. Returns "revoked", "handed-off" or "not-held".
    """
    if client is None:
        client = get_client()
    k = key_builder(prefix, client).semaphore(name)
    result = REVOKE(
        client, [k.state, k.holders, k.queue, k.index, k.first()], [name, int(fence), ""],
        operation=f"revoke a permit of {name!r}",
    )
    return {0: "not-held", 1: "revoked", 2: "handed-off"}[int(result)]
