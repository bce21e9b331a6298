"""Giving back, from a thread of the process, what an outage may have left taken by nobody.

A call that timed out or lost its connection after it was sent may still run
once Redis answers again: a paused or overloaded server runs what it had
read. An acquire whose reply was lost can then land a grant, and a rate-limit
hit a concurrency slot, that no caller will ever give back: the name stays
taken for its whole TTL or lease after the outage. :func:`settle_later` asks
again from a thread of its own once Redis answers, and gives back what it
finds.

A target is anything with ``kind`` and ``name`` (for the log) and
``settle(owner)``: ask as ``owner`` and give back what is found (True: found
and given back, nothing more to do), raising CoordinationUnavailable while
Redis still does not answer. It is asked a first time ``first`` seconds
after it was queued, again every SETTLE_RETRY seconds while Redis does not
answer, and once more ``again`` seconds after the first answer (when
``again`` is set): what the server had read during the outage may run just
after our first ask (both waiting at the resume) or, for a lock that waits, a
queue place the lost acquire took may be handed the grant until it lapses.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from typing import Any

from ..exceptions import CoordinationUnavailable

log = logging.getLogger("django_redcoord.locks")

#: Seconds between two tries to give back what an outage may have left.
SETTLE_RETRY = 1.0
#: Asks once Redis answers, when a second one is due (``again``).
SETTLE_PASSES = 2
#: Most targets a process keeps asking about (beyond: they expire with their TTL or lease).
SETTLE_MOST = 1000
#: Seconds a target is asked about at most, however long Redis stays away.
SETTLE_GIVE_UP = 3600.0

_settling: tuple[int, queue.SimpleQueue] | None = None
_settling_lock = threading.Lock()


def settle_later(
    target: Any, owner: str, lasts: float, again: float = 0.0, first: float = SETTLE_RETRY
) -> None:
    """Ask ``target.settle(owner)`` from this process's settling thread, ``first`` seconds from
    now and then every SETTLE_RETRY seconds until Redis answers; a second time ``again`` seconds
    after the first answer (0: once).

    ``lasts`` (the TTL or lease) counts from the last time Redis did not answer, not from now:
    a paused server runs what it had read when it resumes, and its grant lasts from then. (At
    most SETTLE_GIVE_UP seconds in all.)"""
    global _settling
    pid = os.getpid()
    with _settling_lock:
        if _settling is None or _settling[0] != pid:  # (a forked child starts its own)
            _settling = (pid, queue.SimpleQueue())
            threading.Thread(
                target=_settle, args=(_settling[1],), name="redcoord-settle", daemon=True
            ).start()
        pending = _settling[1]
    if pending.qsize() < SETTLE_MOST:
        now = time.monotonic()
        pending.put((target, owner, now + lasts, again, now + first, lasts, now + SETTLE_GIVE_UP))


def _settle(pending: queue.SimpleQueue) -> None:
    # [target, owner, deadline, again, passes done, next try, lasts, give up at]
    waiting: list[list[Any]] = []
    while True:
        soonest = min((entry[5] for entry in waiting), default=None)
        try:
            item = pending.get(
                timeout=None if soonest is None else max(0.0, soonest - time.monotonic())
            )
        except queue.Empty:
            item = None
        while item is not None:  # every one that came meanwhile
            target, owner, deadline, again, due, lasts, give_up = item
            waiting.append([target, owner, deadline, again, 0, due, lasts, give_up])
            try:
                item = pending.get_nowait()
            except queue.Empty:
                item = None
        now = time.monotonic()
        away: set[int] = set()  # the servers that did not answer in this pass
        for entry in list(waiting):
            target, owner, deadline, again, passes, due, _, _ = entry
            if now >= deadline:  # expired by now, whatever it was
                waiting.remove(entry)
                continue
            if now < due:
                continue
            if id(_server(target)) in away:
                continue
            try:
                done = target.settle(owner)
            except CoordinationUnavailable:
                # That Redis does not answer yet: none of the others on it would get through
                # either (each would wait its socket timeout); they are asked again a second
                # from now, and what it runs when it answers lasts from then. (Targets on other
                # servers are asked as planned: one dead server holds none of them up.)
                server = _server(target)
                away.add(id(server))
                later = time.monotonic()
                for other in waiting:
                    if _server(other[0]) is server:
                        other[5] = max(other[5], later + SETTLE_RETRY)
                        other[2] = min(max(other[2], later + other[6]), other[7])
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. an async client= only: leave it to its TTL
                log.warning(
                    "%s %s: could not give back what an outage may have left: %s",
                    target.kind,
                    target.name,
                    exc,
                )
                waiting.remove(entry)
                continue
            entry[4], entry[5] = passes + 1, now + again
            if done is True or entry[4] >= SETTLE_PASSES or not again:
                waiting.remove(entry)


def _server(target: Any) -> Any:
    """What ``target`` asks: its client (its primitive's, for a rate-limit slot), else itself."""
    try:
        client = getattr(getattr(target, "limiter", target), "client", None)
    except Exception:  # noqa: BLE001 - a client that cannot be made: on its own
        client = None
    return target if client is None else client


_tasks: set[asyncio.Task] = set()  # (the loop keeps only weak references to its tasks)


def asettle_later(target: Any, owner: str, lasts: float, again: float = 0.0) -> None:
    """:func:`settle_later` for a target with only a ``redis.asyncio`` client: a task of the
    running event loop awaits ``target.asettle(owner)`` on the same schedule (a loop that closes
    first leaves what is left to its TTL)."""
    task = asyncio.get_running_loop().create_task(_asettle(target, owner, lasts, again))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


async def _asettle(target: Any, owner: str, lasts: float, again: float) -> None:
    began = time.monotonic()
    deadline = began + lasts
    passes = 0
    await asyncio.sleep(SETTLE_RETRY)
    while time.monotonic() < deadline:
        try:
            done = await target.asettle(owner)
        except CoordinationUnavailable:  # (what it runs when it answers lasts from then)
            deadline = min(max(deadline, time.monotonic() + lasts), began + SETTLE_GIVE_UP)
            await asyncio.sleep(SETTLE_RETRY)
            continue
        except Exception as exc:  # noqa: BLE001
            log.warning(
                "%s %s: could not give back what an outage may have left: %s",
                target.kind,
                target.name,
                exc,
            )
            return
        passes += 1
        if done is True or passes >= SETTLE_PASSES or not again:
            return
        await asyncio.sleep(again)
