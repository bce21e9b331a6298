"""One scenario, two drivers: the sync API called directly, or the asyncio API awaited.

A contract test is an ``async def scenario(d)``. With the sync driver the
scenario calls ``obj.acquire()``... directly (blocking: its loop only hosts
it) and runs concurrent parties in threads; with the async driver it awaits
``obj.aacquire()``... on a ``redis.asyncio`` client and runs parties as tasks
of one loop. ``await d.call(obj, "acquire", ...)`` picks the method.

``KINDS`` adds runs on other topologies: ``sync-sentinel`` and
``async-sentinel``, both APIs on the clients ``REDCOORD["SENTINEL"]`` builds
(``sentinel_client``, ``async_sentinel_client``), against a master found
through a real sentinel (the session's ``sentinel_topology``), and two more,
``sync-cluster`` and ``async-cluster``: both APIs on the clients
``REDCOORD["CLUSTER"]`` builds, against a real 3-primary, 3-replica Redis
Cluster (the session's ``cluster_topology``). So every contract suite also
runs on those topologies.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import redis.asyncio

from django_redcoord.core.transport import drivers as steps
from django_redcoord.core.transport.clients import client_from_url

# : The runs of every contract suite: the sync and the asyncio API on one server, through Sentinel,
# on a Cluster.
KINDS = ("sync", "async", "sync-sentinel", "async-sentinel", "sync-cluster", "async-cluster")


class Driver:
    """Runs a scenario through the sync or the asyncio API (``kind``)."""

    def __init__(
        self, kind: str, url: str, sentinel: dict | None = None, cluster: dict | None = None
    ) -> None:
        self.kind, self.url, self.sentinel, self.cluster = kind, url, sentinel, cluster
        self.client = None

    @classmethod
    def for_param(cls, request, redis_url: str):
        """The driver a ``params=KINDS`` fixture asks for (``url``: where the objects' data is)."""
        kind, _, topology = request.param.partition("-")
        if topology == "sentinel":
            topo = request.getfixturevalue("sentinel_topology")
            client = client_from_url(topo.master_url)
            client.flushall()
            client.close()
            return cls(kind, topo.master_url, sentinel=topo.config)
        if topology == "cluster":
            topo = request.getfixturevalue("cluster_topology")
            topo.flush()
            return cls(kind, topo.urls[0], cluster=topo.config)
        return cls(kind, redis_url)

    def __repr__(self) -> str:
        return self.kind + ("-sentinel" if self.sentinel else "-cluster" if self.cluster else "")

    def open(self, url: str | None = None):
        if url is None and self.cluster is not None:
            from django_redcoord.core.transport.clients import async_cluster_client, cluster_client

            return (cluster_client if self.kind == "sync" else async_cluster_client)(self.cluster)
        if url is None and self.sentinel is not None:
            from django_redcoord.core.transport.clients import (
                async_sentinel_client,
                sentinel_client,
            )

            return (sentinel_client if self.kind == "sync" else async_sentinel_client)(
                self.sentinel
            )
        if self.kind == "sync":
            return client_from_url(url or self.url)
        return redis.asyncio.Redis.from_url(
            url or self.url, socket_timeout=5, socket_connect_timeout=2
        )

    def sync_client(self):
        """A synchronous client of the same topology (for the admin's side, inspection and
        damage)."""
        if self.cluster is not None:
            from django_redcoord.core.transport.clients import cluster_client

            return cluster_client(self.cluster)
        return client_from_url(self.url)

    def flushall(self) -> None:
        """Lose every key, as a restart without persistence does (every primary of a Cluster)."""
        client = self.sync_client()
        try:
            if self.cluster is not None:
                client.flushall(target_nodes=client.PRIMARIES)
            else:
                client.flushall()
        finally:
            client.close()

    async def call(self, obj, method, *args, **kwargs):
        """``obj.method(...)`` (sync) or ``await obj.amethod(...)`` (async)."""
        if self.kind == "async":
            return await getattr(obj, "a" + method)(*args, **kwargs)
        return getattr(obj, method)(*args, **kwargs)

    async def acquire(self, lock, *args):
        return await lock.aacquire(*args) if self.kind == "async" else lock.acquire(*args)

    async def release(self, lock):
        return await lock.arelease() if self.kind == "async" else lock.release()

    async def extend(self, lock, *args):
        return await lock.aextend(*args) if self.kind == "async" else lock.extend(*args)

    async def locked(self, lock):
        return await lock.alocked() if self.kind == "async" else lock.locked()

    async def owned(self, lock):
        return await lock.aowned() if self.kind == "async" else lock.owned()

    async def ttl(self, lock):
        return await lock.attl_remaining() if self.kind == "async" else lock.ttl_remaining()

    @contextlib.asynccontextmanager
    async def holding(self, lock):
        if self.kind == "async":
            async with lock as held:
                yield held
        else:
            with lock as held:
                yield held

    def spawn(self, scenario):
        """Run ``scenario()`` concurrently: a task, or a thread with its own loop."""
        if self.kind == "async":
            return asyncio.ensure_future(scenario())
        return asyncio.get_running_loop().run_in_executor(None, lambda: asyncio.run(scenario()))

    async def sleep(self, seconds):
        if self.kind == "async":
            await asyncio.sleep(seconds)
        else:
            time.sleep(seconds)

    def play(self, scenario):
        async def main():
            self.client = self.open()
            try:
                return await scenario(self)
            finally:
                close = self.client.aclose() if self.kind == "async" else None
                if close is not None:
                    await close
                else:
                    self.client.close()

        return asyncio.run(main())


def cancel_at(monkeypatch, target: dict):
    """Cancel ``target['task']`` at its ``target['at']``-th round trip, ``target['when']``.

    ``when``: "before" it is sent, "during" (``target['delay']`` seconds after
    it was sent, 0.05 by default: while a blocking wait blocks, or while the
    server is held up by ``target['stall']()``, called just before) or "after"
    its reply was read.
    """
    seen = {"n": 0}
    originals = {cls: cls.arun for cls in (steps.Run, steps.Blpop, steps.Command, steps.Batch)}

    def patched(cls):
        async def arun(self, client):
            real = originals[cls]
            if asyncio.current_task() is not target.get("task"):
                return await real(self, client)
            n = seen["n"]
            seen["n"] += 1
            if n != target["at"]:
                return await real(self, client)
            target["hit"] = True
            me = asyncio.current_task()
            if target["when"] == "before":
                me.cancel()
                await asyncio.sleep(0)
            if target["when"] == "during":
                if target.get("stall"):
                    target["stall"]()  # e.g. pause the server, so the reply is surely awaited
                loop = asyncio.get_running_loop()
                loop.call_later(target.get("delay", 0.05), me.cancel)
                return await real(self, client)
            reply = await real(self, client)
            target["reply"] = reply
            me.cancel()
            await asyncio.sleep(0)
            return reply

        return arun

    for cls in originals:
        monkeypatch.setattr(cls, "arun", patched(cls))
    return seen
