"""The one broadcast-wait loop: look at the state, block on the wake stream, look again.

Latches, barriers, events and signals wait the same way: a script looks at
the primitive's state and, unless what the waiter waits for has happened,
registers (or renews) the waiter and returns the id of the last entry of the
primitive's wake stream (one declared key of its hash tag, see
``lua/common/broadcast.lua``); the waiter then blocks reading the entries
after that id (``XREAD BLOCK``) for at most one chunk below the socket
timeout, and looks again. An entry added after the look, however soon, ends
the block at once, and one entry wakes every waiter (nothing is consumed, so
no waiter takes another's wake-up). A wake-up is a hint, the state the
truth, so a lost wake-up (a failover losing the stream) costs at most one chunk.
A waiter woken by an entry for someone else (a signal ``send()`` names its
recipient) blocks again for the rest of its chunk without a look.

One outage policy for all of them (the lock wait's, see ``steps.py``):

* a blocked wait that loses its connection (``CLIENT KILL``, a proxy or a
  failover closing it, a restart) is issued again at once: the state lives in
  Redis, not in the connection;
* a look that fails because Redis cannot answer is tried again every
  ``OUTAGE_RETRY`` seconds while the wait lasts; the outage's error is raised
  when the wait runs out first (a wait without a timeout rides out any
  outage, as a lock's does);
* a blocked wait ended by the server (``UNBLOCKED``: its primary was demoted
  in a failover) or a look refused whole (``TRYAGAIN`` while the slot
  migrates, ``LOADING``...) is an outage like the others;
* a look refused before it was sent because no connection of the pool came
  free within the socket timeout (:class:`PoolExhausted`: every connection is
  in a call Redis has not answered, as during a pause, or the pool is too
  small) is tried again the same way, and raised when the wait runs out first.

Interrupted (an error that is not an outcome, ``KeyboardInterrupt``, an
asyncio cancellation at any ``await``), the waiter leaves: its ``leave()``
steps run (best effort; the asyncio driver runs them to the end even if the
task is cancelled again).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from ..exceptions import CoordinationUnavailable, PoolExhausted
from ..keys import KeyBuilder
from ..transport.commands import as_text
from ..transport.drivers import Pause, ReadWake, Step, Steps, Within
from ..values import check_wait
from .steps import OUTAGE_RETRY, warn_now_and_then

log = logging.getLogger("django_redcoord.waits")


@dataclass(frozen=True)
class Look:
    """What a look at the state found: ``done`` (then ``result`` is the wait's result), and
    ``block``: at most how long to block before looking again (seconds; None: one chunk)."""

    done: bool
    result: Any = None
    block: float | None = None


class BroadcastWait:
    """One wait of one waiter; a primitive subclasses it (see :func:`wait_steps`).

    ``check(final, lease)`` yields the look (registering the wake list for
    ``lease`` seconds more, or, with ``final``, the last look that
    unregisters) and returns a :class:`Look`; with ``final`` it must return
    ``done``. It may raise the primitive's outcome errors (``outcomes``),
    which end the wait without ``leave()``.
    """

    #: What the wait is, in messages ("wait for latch 'x'").
    operation: str = "wait"
    #: Errors of ``check`` that are the wait's outcome (LatchBroken...), not an interruption.
    outcomes: tuple[type[BaseException], ...] = ()

    def check(self, final: bool, lease: float) -> Steps:  # pragma: no cover - abstract
        raise NotImplementedError

    def block(self, seconds: float) -> Step:  # pragma: no cover - abstract
        """The blocked wait on the wake list (below the socket timeout)."""
        raise NotImplementedError

    def woken(self, reply: Any) -> Look | None:
        """What the blocked wait's reply means: a Look that ends the wait (done), one that blocks
        again for the rest of the chunk without a look (not done), or None to look again."""
        return None

    def block_lost(self) -> None:
        """The blocked wait lost its connection: its reply (if any) was lost with it."""

    def leave(self) -> Steps:
        """Steps that unregister the waiter after an interruption (best effort: errors are
        logged)."""
        return
        yield  # a generator


def wait_for(waiter: BroadcastWait, timeout: float | None, chunk: float) -> Steps:
    """:func:`wait_steps` for at most ``timeout`` seconds (None: no bound; checked, saying what
    is allowed), blocking at most ``chunk`` seconds at a time."""
    timeout = check_wait(timeout)
    deadline = math.inf if timeout is None else time.monotonic() + timeout
    return (yield from wait_steps(waiter, deadline, chunk))


def wait_steps(waiter: BroadcastWait, deadline: float, chunk: float) -> Steps:
    """Run ``waiter`` until its look says done or ``deadline`` (time.monotonic()) passed."""
    outage: CoordinationUnavailable | None = None
    yield Within(
        deadline
    )  # a paused server: the blocked read, the last look and the leave end by one bound
    try:
        while True:
            remaining = deadline - time.monotonic()
            final = remaining <= 0
            lease = min(max(remaining, 0.0), chunk)
            try:
                look = yield from waiter.check(final, lease)
            except CoordinationUnavailable as exc:
                if final or deadline - time.monotonic() <= 0:
                    # (refused whole, TRYAGAIN/UNBLOCKED/LOADING..., or a full pool, is an outage
                    # like any other)
                    raise
                if outage is None:
                    log.warning(
                        "%s: Redis cannot answer (%s); looking again while the wait lasts",
                        waiter.operation,
                        exc,
                    )
                outage = exc
                yield Pause(min(OUTAGE_RETRY, max(0.0, deadline - time.monotonic())))
                continue
            if outage is not None:
                log.info("%s: Redis answers again", waiter.operation)
                outage = None
            if look.done or final:
                return look.result
            block = lease if look.block is None else min(lease, look.block)
            until = time.monotonic() + block
            while True:
                try:
                    reply = yield waiter.block(block)
                except CoordinationUnavailable as exc:
                    if isinstance(exc, PoolExhausted):  # not sent: look again after a pause
                        outage, look = exc, None
                        yield Pause(min(OUTAGE_RETRY, max(0.0, deadline - time.monotonic())))
                        break
                    waiter.block_lost()
                    warn_now_and_then(
                        log,
                        "%s: the blocked wait lost its connection (%s); issuing it again",
                        waiter.operation,
                        exc,
                    )
                    outage = exc
                    look = None
                    break
                look = waiter.woken(reply)
                block = until - time.monotonic()
                if look is None or look.done or block < 0.005:
                    break  # (not done and the chunk is over: look again)
            if look is not None and look.done:
                return look.result
    except waiter.outcomes:
        raise
    except BaseException:
        try:
            yield from waiter.leave()
        except Exception as exc:  # the original error matters more
            log.warning("%s: could not unregister the interrupted wait: %s", waiter.operation, exc)
        raise


def read_wake(
    wake: str, mark: str, seconds: float, operation: str, *, hub_prefix: str = ""
) -> Step:
    """The blocked wait of a broadcast waiter: the entries of stream ``wake`` after id ``mark``
    (through the process's wake hub, ``transport/hub.py``: one connection for all such waits)."""
    return ReadWake(wake, mark, seconds, hub_prefix or KeyBuilder().wake_hub_prefix(), operation)


def wake_entries(reply: Any) -> list[tuple[str, dict[str, str]]]:
    """The entries of a :func:`read_wake` reply as ``(id, fields)`` (RESP2 or RESP3; None: none)."""
    if not reply:
        return []
    streams = reply.values() if isinstance(reply, dict) else [item[1] for item in reply]
    out = []
    for entries in streams:
        for entry in entries or []:
            if not entry:
                continue
            mid, fields = entry[0], entry[1] or []
            pairs = (
                fields.items()
                if isinstance(fields, dict)
                else zip(fields[::2], fields[1::2], strict=False)
            )
            out.append((as_text(mid), {as_text(k): as_text(v) for k, v in pairs}))
    return out
