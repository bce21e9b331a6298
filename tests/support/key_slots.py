"""Every script call's keys share one Redis Cluster hash slot (recorded over the whole test run).

Every script call the tests make in this process goes through
:func:`record`: the slot of each key is computed as Redis Cluster computes it
(CRC16 of the hash tag, the first non-empty ``{...}``, else of the whole
key). A script whose keys span several slots would answer ``CROSSSLOT`` on a
Cluster, so the run fails on one (``pytest_sessionfinish``), with one
exception: on one server (``KeyBuilder(cluster=False)``) the admin indexes
are shared keys without a hash tag (``<prefix>:index:<kind>[:<bucket>]``),
left out of the check there. On a Cluster they are per slot, and the calls
made through a Cluster client (the contract suites' ``*-cluster`` runs,
``tests/django/test_cluster.py``) are checked with every key. :data:`ON_CLUSTER`
lists the scripts run on a Cluster; the run also fails when it ran Cluster
tests and a script that writes an index never ran on one.
"""

from __future__ import annotations

import threading

from django_redcoord.core.keys import key_slot

_lock = threading.Lock()
#: script name -> one call's keys whose slots differ
SEEN: dict[str, list[str]] = {}
#: script name -> number of calls recorded
CALLS: dict[str, int] = {}
#: scripts run through a Redis Cluster client
ON_CLUSTER: set[str] = set()
#: scripts seen writing a one-server admin index key
INDEX_WRITERS: set[str] = set()
#: scripts that run only beside a module's command the test Cluster does not load (CL.THROTTLE's
#: count, with redis-cell: built for one server only, see tests/conftest.py's redis_cell_server);
#: they are left out of "never ran on the Cluster" (their keys are still checked for one slot)
NEEDS_A_MODULE = {"ratelimit/count"}


def slot(key: str | bytes) -> int:
    return key_slot(key)


def _one_server_index(key: str) -> bool:
    """A one-server admin index key: ``<prefix>:index:...`` without a hash tag."""
    return ":index:" in key and "{" not in key


def _redlock_boot(key: str) -> bool:
    """A quorum lock master's boot record (``<prefix>:redlock:boot``): a Redlock master is one
    server by definition, never a Cluster, so the key needs no hash tag."""
    return key.endswith(":redlock:boot") and "{" not in key


def record(name: str, keys: list, *, cluster: bool) -> None:
    texts = [k if isinstance(k, str) else k.decode() for k in keys]
    checked = texts
    if not cluster:
        texts = [k for k in texts if not _redlock_boot(k)]
        checked = [k for k in texts if not _one_server_index(k)]
    with _lock:
        CALLS[name] = CALLS.get(name, 0) + 1
        if cluster:
            ON_CLUSTER.add(name)
        elif len(checked) < len(texts):
            INDEX_WRITERS.add(name)
        if len({slot(k) for k in checked}) > 1 and name not in SEEN:
            SEEN[name] = texts


def problems() -> list[str]:
    """What the run's script calls must not show (see the module's docstring)."""
    found = []
    if SEEN:
        found.append(
            "scripts whose keys span several Redis Cluster hash slots (CROSSSLOT on a Cluster): "
            + "; ".join(f"{name}: {SEEN[name]}" for name in sorted(SEEN))
        )
    never = sorted(INDEX_WRITERS - ON_CLUSTER - NEEDS_A_MODULE)
    if ON_CLUSTER and never:
        found.append(
            f"scripts that write an admin index and never ran on the Cluster: {', '.join(never)}"
        )
    return found


def export() -> dict:
    """This process's record, for an xdist controller (plain lists and dicts)."""
    with _lock:
        return {
            "seen": dict(SEEN),
            "calls": dict(CALLS),
            "on_cluster": sorted(ON_CLUSTER),
            "index_writers": sorted(INDEX_WRITERS),
        }


def merge(record: dict) -> None:
    """Add a worker's :func:`export` to this process's record."""
    with _lock:
        for name, keys in record["seen"].items():
            SEEN.setdefault(name, keys)
        for name, count in record["calls"].items():
            CALLS[name] = CALLS.get(name, 0) + count
        ON_CLUSTER.update(record["on_cluster"])
        INDEX_WRITERS.update(record["index_writers"])


def _is_cluster(client) -> bool:
    return "Cluster" in type(client).__name__


def install() -> None:
    """Wrap the Script entry points (sync call, asyncio call, pipeline queueing) to record their
    keys."""
    from django_redcoord.core.transport.scripts import Script

    if getattr(Script, "_slots_recorded", False):
        return
    call, acall, queue = Script.__call__, Script.arun, Script.queue

    def __call__(self, client, keys, args, *, operation):
        record(self.name, keys, cluster=_is_cluster(client))
        return call(self, client, keys, args, operation=operation)

    async def arun(self, client, keys, args, *, operation):
        record(self.name, keys, cluster=_is_cluster(client))
        return await acall(self, client, keys, args, operation=operation)

    def queued(self, pipe, keys, args):
        record(self.name, keys, cluster=_is_cluster(pipe))
        return queue(self, pipe, keys, args)

    Script.__call__, Script.arun, Script.queue = __call__, arun, queued
    Script._slots_recorded = True
