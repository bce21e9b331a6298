"""Reading and freeing locks from outside their holder: the admin's side.

Live locks are listed from the index buckets (see ``core/lua/locks/common.lua``);
:func:`read_holders` reads the holders of a page of them in one round trip,
and :func:`force_release` frees one grant (an operator's action).
"""

from __future__ import annotations

from typing import Any

from ..indexes import read_records
from ..transport.clients import get_client, key_builder
from .lock import FORCE_RELEASE, INSPECT, holder_from_reply


def read_holders(
    client: Any, names: list[str], *, prefix: str | None = None
) -> list[dict[str, Any] | None]:
    """The holders of several locks (see :meth:`Lock.holder`), in one pipelined round trip.

    None for a lock not held, or whose keys hold what we did not write (skipped:
    logged and counted, see :func:`~django_redcoord.core.indexes.read_records`)."""
    builder = key_builder(prefix, client)

    def queue(pipe: Any, name: str) -> None:
        k = builder.lock(name)
        INSPECT.queue(pipe, [k.lock, k.queue], [])

    return read_records(
        client,
        names,
        queue,
        lambda name, reply: holder_from_reply(reply),
        what="locks",
        operation="inspect locks",
    )


def force_release(name: str, fence: int, *, client: Any = None, prefix: str | None = None) -> str:
    """Free the grant ``fence`` of lock ``name`` whoever holds it (an operator's action).

    Only that grant is released: if the lock changed hands since, nothing
    happens. The oldest live waiter, if any, gets the lock. Returns
    "released", "handed-off" or "not-held".
    """
    if client is None:
        client = get_client()
    k = key_builder(prefix, client).lock(name)
    result = FORCE_RELEASE(
        client,
        [k.lock, k.queue, k.index, k.waits, k.wait_index],
        [name, int(fence)],
        operation=f"force-release lock {name!r}",
    )
    return {0: "not-held", 1: "released", 2: "handed-off"}[int(result)]
