"""Reading and operating semaphores from outside their holders: the admin's side."""

from __future__ import annotations

from typing import Any

from ..indexes import live_names, read_index, read_records
from ..transport.clients import get_client, key_builder
from ..transport.errors import unavailable_as_ours
from .semaphore import INSPECT, REVOKE, state_from_reply


def read_semaphores(client: Any, *, prefix: str | None = None, now_ms: int) -> list[dict[str, Any]]:
    """Every semaphore with live holders (from the index; no scan), with its holders: two round
    trips.

    A semaphore whose keys hold what we did not write is left out (logged and counted, see
    :func:`~django_redcoord.core.indexes.read_records`)."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list semaphores"):
        entries = read_index(client, builder, "semaphores")
    names = live_names(entries, now_ms)

    def queue(pipe: Any, name: str) -> None:
        k = builder.semaphore(name)
        INSPECT.queue(pipe, [k.state, k.holders, k.queue], [""])

    found = read_records(
        client,
        names,
        queue,
        lambda name, reply: {"name": name, **state_from_reply(reply)},
        what="semaphores",
        operation="inspect semaphores",
    )
    return [x for x in found if x is not None]


def revoke_permit(name: str, fence: int, *, client: Any = None, prefix: str | None = None) -> str:
    """Take back the permit granted with fencing token ``fence`` (an operator's action).

    Its holder's next release or extend raises LockLost; the permit goes to
    the oldest live waiter. Returns "revoked", "handed-off" or "not-held".
    """
    if client is None:
        client = get_client()
    k = key_builder(prefix, client).semaphore(name)
    result = REVOKE(
        client,
        [k.state, k.holders, k.queue, k.index, k.first()],
        [name, int(fence), ""],
        operation=f"revoke a permit of {name!r}",
    )
    return {0: "not-held", 1: "revoked", 2: "handed-off"}[int(result)]
