"""Which scripts touch keys of several Redis Cluster hash slots (recorded over the whole test run).

Every script call the tests make in this process goes through
:func:`record`: the slot of each key is computed as Redis Cluster computes it
(CRC16 of the hash tag, the first non-empty ``{...}``, else of the whole
key). A script whose keys span several slots would answer ``CROSSSLOT`` on a
Cluster. Today that is exactly the scripts that also write a shared admin
index (the live-lock and lock-wait buckets, the semaphore, read-write lock,
latch, signal, rate-limiter, queue and worker indexes): :data:`KNOWN` lists
them, so a new one fails the run (``pytest_sessionfinish``), and the Cluster
work removes them one by one.
"""

from __future__ import annotations

import binascii
import threading

_lock = threading.Lock()
#: script name -> one call's keys whose slots differ
SEEN: dict[str, list[str]] = {}
#: script name -> number of calls recorded
CALLS: dict[str, int] = {}


def slot(key: str | bytes) -> int:
    raw = key.encode() if isinstance(key, str) else bytes(key)
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1 : end]
    return binascii.crc_hqx(raw, 0) % 16384


def record(name: str, keys: list) -> None:
    with _lock:
        CALLS[name] = CALLS.get(name, 0) + 1
        if len({slot(k) for k in keys}) > 1 and name not in SEEN:
            SEEN[name] = [k if isinstance(k, str) else k.decode() for k in keys]


def install() -> None:
    """Wrap the Script entry points (sync call, asyncio call, pipeline queueing) to record their keys."""
    from django_redcoord.core.transport.scripts import Script

    if getattr(Script, "_slots_recorded", False):
        return
    call, acall, queue = Script.__call__, Script.arun, Script.queue

    def __call__(self, client, keys, args, *, operation):
        record(self.name, keys)
        return call(self, client, keys, args, operation=operation)

    async def arun(self, client, keys, args, *, operation):
        record(self.name, keys)
        return await acall(self, client, keys, args, operation=operation)

    def queued(self, pipe, keys, args):
        record(self.name, keys)
        return queue(self, pipe, keys, args)

    Script.__call__, Script.arun, Script.queue = __call__, arun, queued
    Script._slots_recorded = True


#: The scripts known to span several slots (the admin indexes), to be emptied by the Cluster work.
KNOWN: set[str] = {
    "latches/barrier_arrive",
    "latches/check",
    "latches/count_down",
    "latches/join",
    "latches/renew",
    "locks/acquire",
    "locks/extend",
    "locks/force_release",
    "locks/release",
    "queues/push",
    "queues/worker_beat",
    "ratelimit/hit",
    "ratelimit/reset",
    "rwlocks/acquire",
    "rwlocks/downgrade",
    "rwlocks/extend",
    "rwlocks/release",
    "semaphores/acquire",
    "semaphores/extend",
    "semaphores/release",
    "semaphores/resize",
    "semaphores/revoke",
    "signals/event_set",
    "signals/signal_wait",
    "signals/topic_publish",
    # several tasks' result records in one script: to be grouped by slot on a Cluster
    "tasks/results",
}
