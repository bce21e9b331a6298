"""What anyone may know about an election: its timing rules and who leads it.

Used by :class:`django_redcoord.core.leader.election.LeaderElection` (which re-exports
these names), by ``manage.py run_leader`` and by the admin dashboard. Nothing
here campaigns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..keys import LeaderKeys
from ..runtime import runtime
from ..transport.commands import as_text
from ..transport.drivers import Steps, Transaction, run


def leader_defaults() -> tuple[float, float, float]:
    """(lease, renew_deadline, retry_period) in seconds: REDCOORD's LEADER_* settings,
    or 15 / 10 / 2 s when Django settings are not configured."""
    config = runtime.config
    return (
        float(config["LEADER_LEASE"]),
        float(config["LEADER_RENEW_DEADLINE"]),
        float(config["LEADER_RETRY_PERIOD"]),
    )


@dataclass(frozen=True)
class Leadership:
    """Who leads an election, as recorded in Redis (times are the server's clock)."""

    identity: str
    term: int
    since: float  # seconds since the epoch: when this term began
    renewed: float  # seconds since the epoch: the last renewal
    expires_in: float  # seconds until the record expires unless renewed


def read_leader(keys: LeaderKeys, client: Any) -> Leadership | None:
    """The current leader of the election whose keys are ``keys``, or None (one round trip)."""
    return run(client, leader_steps(keys))


def leader_steps(keys: LeaderKeys) -> Steps:
    """Read the leader record and its remaining lease in one MULTI (see :mod:`.steps`)."""
    record, pttl = yield Transaction(
        ("HGETALL", keys.record),
        ("PTTL", keys.record),
        operation=f"read leader record {keys.record!r}",
    )
    if not record or pttl < 0:
        return None
    fields = {as_text(k): as_text(v) for k, v in _pairs(record)}
    return Leadership(
        identity=fields.get("identity", ""),
        term=int(fields.get("term", 0)),
        since=int(fields.get("since_ms", 0)) / 1000.0,
        renewed=int(fields.get("renewed_ms", 0)) / 1000.0,
        expires_in=pttl / 1000.0,
    )


def _pairs(record: Any) -> Any:
    """HGETALL's reply as (field, value) pairs: a dict (the client's callback) or a flat list."""
    if isinstance(record, dict):
        return record.items()
    return zip(record[::2], record[1::2], strict=True)
