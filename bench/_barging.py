"""A bounded-barging variant of ``Lock``, for measuring only (issue 28, item 2): not shipped.

Go's ``sync.Mutex`` lets a running goroutine take a free mutex ahead of
sleeping waiters (barging) until a waiter has waited over 1 ms, then hands
off strictly. The same on our scripts, with a bound of ``bound_ms``:

* release: when the oldest live waiter has waited (server time since it took
  its place) less than the bound, the lock is left free instead of handed to
  it, and it is told ``moved`` (it looks again, and takes the lock if it is
  still free); past the bound, the hand-off as now;
* acquire on a free lock: a caller that is not the oldest live waiter takes
  it while that waiter has waited less than the bound (its own place, if it
  had one, is dropped); past the bound, the lock goes to that waiter as now.

Built by editing the real scripts' source (the shared helpers of
``locks/common.lua``), so it measures the same code with that one change.
Not modelled: ``locks/hold.pml``'s FIFO property (3) is exactly what it gives
up, which is why it stays a bench variant until a measured run says it pays.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django_redcoord.core.locks import Lock
from django_redcoord.core.locks import lock as lock_module
from django_redcoord.core.transport.scripts import Script

_SIGNATURE = (
    "local function hand_off(lock, queue, index, waits, windex, name, rec, clock, caller, wake, "
    "process)\n"
)
_HAND_OFF = (
    _SIGNATURE
    + """  if not queue_may_live(rec, clock) then return nil end
"""
)
_BARGE = (
    _SIGNATURE
    + """  if not queue_may_live(rec, clock) then return nil end
  local head = first_live_waiter(queue, clock)
  if head and head[1] ~= caller
      and math.floor(clock() / 1000) - (tonumber(head[9]) or 0) < BARGE_MS then
    BARGED = head
    return nil
  end
"""
)
_RELEASE_FREE = (
    (
        "  local new, here = hand_off(lock, queue, index, waits, windex, name, rec, "
        "lazy_clock_us(), nil, wake, process)\n"
    )
    + """  if here then return {2, here} end
  if new then return 2 end
"""
)
_RELEASE_TELL = (
    _RELEASE_FREE
    + """  if BARGED and wake then
    redis.call('LPUSH', wake, 'moved')
    redis.call('PEXPIRE', wake, QUEUE_KEEP_MS)
  end
"""
)
_FREE_GRANT = (
    "    new = write_grant(lock, queue, index, name, rec, token, ttl, clock(), host, pid, thread)\n"
    "    return {1, new[2], 1}"
)
_FREE_GRANT_BARGED = (
    """    if BARGED and queued_before then
      local at, raw = find_waiter(queue, token)
      if at then redis.call('LREM', queue, 1, raw) end
    end
"""
    + _FREE_GRANT
)


def _variant(script: Script, bound_ms: int, edits: list[tuple[str, str]]) -> Script:
    source = f"local BARGE_MS = {int(bound_ms)}\nlocal BARGED = nil\n" + script.source
    for old, new in edits:
        assert old in source, f"{old[:60]!r} is not in {script.name}"
        source = source.replace(old, new)
    variant = Script(script.name, includes=script.includes)
    variant._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
    return variant


def barging_lock_class(bound_ms: int) -> type[Lock]:
    """A ``Lock`` whose scripts barge while the oldest waiter has waited under ``bound_ms``."""
    acquire = _variant(
        lock_module.ACQUIRE, bound_ms, [(_HAND_OFF, _BARGE), (_FREE_GRANT, _FREE_GRANT_BARGED)]
    )
    release = _variant(
        lock_module.RELEASE, bound_ms, [(_HAND_OFF, _BARGE), (_RELEASE_FREE, _RELEASE_TELL)]
    )

    class BargingLock(Lock):
        _acquire_script = acquire
        _release_script = release

    BargingLock.__name__ = f"BargingLock{bound_ms}ms"
    return BargingLock


def barging_lock(bound_ms: int, name: str, **kwargs: Any) -> Lock:
    return barging_lock_class(bound_ms)(name, **kwargs)
