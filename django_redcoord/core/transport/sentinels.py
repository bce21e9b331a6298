"""Where the sentinels say the master is, as soon as a failover has promoted a replica.

redis-py finds the master with ``SENTINEL MASTERS``, whose entry keeps the
former master's address until the whole failover has ended (the other
replicas reconfigured: seconds after the promotion). Writes sent there
meanwhile are acknowledged by a server that is no longer the master and are
lost when it is turned into a replica. ``SENTINEL GET-MASTER-ADDR-BY-NAME``
names the promoted replica from the moment it is promoted, so the master
pools built here (``clients.sentinel_client``) ask both: the entry for
redis-py's health checks of a master that is not failing over (down, or seen
by too few sentinels), the address for where it is now.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio.sentinel
import redis.sentinel

#: What a sentinel that cannot answer raises (it is skipped, as redis-py skips it).
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)


def _named(reply: Any) -> tuple[str, int] | None:
    """The (host, port) of a GET-MASTER-ADDR-BY-NAME reply (None: the sentinel knows no such
    master)."""
    if not reply:
        return None
    host = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
    return host, int(reply[1])


def _failed(sentinel: Any, exc: BaseException) -> str:
    """One sentinel's failure, short: its address and the error (not the client's repr)."""
    kwargs = sentinel.connection_pool.connection_kwargs
    where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
    return f"sentinel {where}: {type(exc).__name__}: {exc}"


class _Choice:
    """What both Sentinel classes decide from one sentinel's two answers."""

    def _choose(self, state: Any, named: tuple[str, int] | None, service_name: str) -> Any:
        if not state:
            return None
        entry = (state["ip"], int(state["port"]))
        if named is not None and named != entry:
            address = named  # a failover promoted it: the entry names the former master still
        elif self.check_master_state(state, service_name):  # type: ignore[attr-defined]
            address = entry
        else:
            return None
        forced = getattr(self, "_force_master_ip", None)
        return (forced, address[1]) if forced is not None else address

    def _not_found(self, service_name: str, errors: list[str]) -> Exception:
        detail = f" : {', '.join(errors)}" if errors else ""
        return redis.sentinel.MasterNotFoundError(f"No master found for {service_name!r}{detail}")


class Sentinel(_Choice, redis.sentinel.Sentinel):
    """redis-py's Sentinel, finding the master as this module says."""

    def discover_master(self, service_name: str) -> Any:
        errors: list[str] = []
        for number, sentinel in enumerate(self.sentinels):
            try:
                state = sentinel.sentinel_masters().get(service_name)
                named = _named(sentinel.sentinel_get_master_addr_by_name(service_name))
            except _UNREACHABLE as exc:
                errors.append(_failed(sentinel, exc))
                continue
            address = self._choose(state, named, service_name)
            if address is not None:  # this sentinel is asked first next time
                self.sentinels[0], self.sentinels[number] = sentinel, self.sentinels[0]
                return address
        raise self._not_found(service_name, errors)


class AsyncSentinel(_Choice, redis.asyncio.sentinel.Sentinel):
    """:class:`Sentinel` for ``redis.asyncio``."""

    async def discover_master(self, service_name: str) -> Any:
        errors: list[str] = []
        for number, sentinel in enumerate(self.sentinels):
            try:
                state = (await sentinel.sentinel_masters()).get(service_name)
                named = _named(await sentinel.sentinel_get_master_addr_by_name(service_name))
            except _UNREACHABLE as exc:
                errors.append(_failed(sentinel, exc))
                continue
            address = self._choose(state, named, service_name)
            if address is not None:
                self.sentinels[0], self.sentinels[number] = sentinel, self.sentinels[0]
                return address
        raise self._not_found(service_name, errors)
