"""Reading and freeing locks from outside their holder: the admin's side.

Live locks are listed from the index buckets (see ``core/lua/locks/common.lua``);
:func:`read_holders` reads the holders of a page of them in one round trip,
and :func:`force_release` frees one grant (an operator's action).
"""

from __future__ import annotations

from typing import Any

from ..transport.clients import get_client, key_builder
from ..transport.commands import execute_pipeline
from .lock import FORCE_RELEASE, INSPECT, holder_from_reply


def read_holders(client: Any, names: list[str], *, prefix: str | None = None) -> list[dict[str, Any] | None]:
    """The holders of several locks (see :meth:`Lock.holder`), in one pipelined round trip."""
    builder = key_builder(prefix, client)
    lock_keys = [builder.lock(name) for name in names]

    def build(pipe: Any) -> None:
        for k in lock_keys:
            INSPECT.queue(pipe, [k.lock, k.queue], [])

    replies = execute_pipeline(client, build, operation="inspect locks") if names else []
    return [holder_from_reply(reply) for reply in replies]


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
