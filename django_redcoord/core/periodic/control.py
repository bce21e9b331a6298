"""Operating periodic jobs while leaders run: "run now" requests, pause and resume.

Nothing here needs to lead, and no leader is stopped:

* :func:`request_run` stores a request in the election's ``requests`` hash
  (``periodic/request.lua``). The current leader's scheduler reads the hash
  on its tick (at most every ``request_interval``, by default the election's
  retry period) and claims each request with ``periodic/take_request.lua``,
  which checks the leader record's token and term and deletes the request in
  the same script. Timeline of the race this closes::

      t=0  A leads term 7 and reads the request; A is paused (GC, SIGSTOP)
      t=1  A's lease expires; B is elected, term 8, reads the request
      t=2  B claims it: the record holds B's token, the request is deleted; B runs it
      t=3  A resumes and tries to claim it: the record does not hold A's token -> refused

  So a request runs at most once, only under a term that was current when it
  was claimed, and never after that term's leader lost its record. A request
  nobody claims within ``expires`` seconds (no leader, or a leader without the
  job) is dropped: a run wanted now is not wanted tomorrow.
* :func:`pause_job` sets ``paused`` in the job's state hash; the slot claim
  (``periodic/claim.lua``) reads it in the same script, and skips the slot
  (counted in ``missed`` and ``paused_slots``) instead of running it, until
  :func:`resume_job` deletes the flag. A run already going on is not stopped.
  A requested run still runs while its job is paused: pausing stops the
  schedule, not the operator.

Every function is one round trip and takes the election (its ``client`` and
``keys``), e.g. ``LeaderElection("default", client=..., prefix=...)``: it
need not campaign.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..exceptions import RedcoordError
from ..keys import validate_name
from ..transport.commands import as_text, command
from ..transport.errors import unavailable_as_ours
from ..transport.scripts import Script
from ..values import check_seconds, finite_number, ms

_REQUEST = Script("periodic/request")
_PAUSE = Script("periodic/pause")

#: Seconds a "run now" request waits for a leader to claim it.
DEFAULT_REQUEST_TTL = 300.0
#: Most requests pending at once in one election (the leader reads them all on each check).
MAX_PENDING_REQUESTS = 100
_MAX_TTL = 7 * 24 * 3600.0


class TooManyRequests(RedcoordError):
    """``request_run`` refused: MAX_PENDING_REQUESTS requests are already pending."""


@dataclass(frozen=True)
class RunRequest:
    """A pending "run now" request. Times are ms since the epoch, by Redis's clock."""

    id: str
    job: str
    slot_ms: int | None  # the slot the run is for (current_job().slot_ms), None for none
    requested_ms: int
    expires_ms: int
    by: str


def request_run(
    election: Any,
    job_name: str,
    slot: datetime | float | None = None,
    *,
    expires: float = DEFAULT_REQUEST_TTL,
    by: str | None = None,
) -> str:
    """Ask the current leader of ``election`` to run ``job_name`` once, soon.

    Args:
        election: a ``LeaderElection`` (only its client and keys are used).
        job_name: the job's name. Not checked against a registry here: the
            leader's code decides what exists; a request for a job the
            leader does not have waits, then expires.
        slot: the slot the run is for, as the job sees it in
            ``current_job().slot``: an aware datetime or seconds since the
            epoch; None (default) for a run without a slot. The schedule
            (``last_slot``) is not moved either way.
        expires: seconds the request waits for a leader to claim it (default 300).
        by: who asked, for the logs and the admin (default ``host:pid``).

    Returns the request's id. Raises TooManyRequests when 100 requests are
    pending, ValueError/TypeError for bad arguments, CoordinationUnavailable
    when Redis cannot be reached (the request may or may not be stored).
    """
    validate_name(job_name, "job name", tag=False)
    slot_ms = slot_to_ms(slot)
    ttl = check_seconds(expires, "expires")
    if ttl > _MAX_TTL:
        raise ValueError(f"expires must be at most {_MAX_TTL:g} seconds, not {expires!r}")
    by = by if by is not None else f"{socket.gethostname()}:{os.getpid()}"
    if not isinstance(by, str) or len(by) > 200:
        raise ValueError(f"by must be a str of at most 200 characters, not {by!r}")
    request_id = secrets.token_hex(8)
    code, value = _REQUEST(
        election.client,
        [election.keys.requests],
        [
            request_id,
            job_name,
            "" if slot_ms is None else slot_ms,
            ms(ttl),
            by,
            MAX_PENDING_REQUESTS,
        ],
        operation=f"request a run of job {job_name!r}",
    )
    if int(code) != 1:
        raise TooManyRequests(
            f"cannot request a run of job {job_name!r}: {int(value)} requests are already pending "
            f"in election {getattr(election, 'name', '?')!r} (at most {MAX_PENDING_REQUESTS}); is "
            "a leader running?"
        )
    return request_id


def cancel_request(election: Any, request_id: str) -> bool:
    """Withdraw a pending request. Returns False if it was already claimed, expired or unknown."""
    return bool(
        command(
            election.client,
            "HDEL",
            election.keys.requests,
            request_id,
            operation=f"cancel run request {request_id!r}",
        )
    )


def pending_requests(election: Any) -> list[RunRequest]:
    """The requests not claimed yet and not expired, oldest first (one round trip)."""
    client = election.client
    pipe = client.pipeline(transaction=False)
    pipe.time()
    pipe.hgetall(election.keys.requests)
    with unavailable_as_ours(client, "read run requests"):
        (seconds, micros), raw = pipe.execute()
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    found = (decode_request(as_text(k), v) for k, v in raw.items())
    return sorted(
        (r for r in found if r is not None and r.expires_ms > now_ms),
        key=lambda r: (r.requested_ms, r.id),
    )


def decode_request(request_id: str, raw: Any) -> RunRequest | None:
    """A request as ``periodic/request.lua`` stored it, or None if it is not one."""
    try:
        data = json.loads(as_text(raw))
        slot = data.get("slot_ms", "")
        return RunRequest(
            request_id,
            str(data["job"]),
            int(slot) if slot not in ("", None) else None,
            int(data["requested_ms"]),
            int(data["expires_ms"]),
            str(data.get("by", "")),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def pause_job(election: Any, name: str) -> bool:
    """Pause job ``name``: the leader skips its slots (counted as missed) until :func:`resume_job`.

    Returns True if it was running on schedule, False if it was already
    paused. A run going on now is not stopped; "run now" requests still run.
    """
    validate_name(name, "job name", tag=False)
    return bool(
        _PAUSE(
            election.client,
            [election.keys.job(name), election.keys.jobs],
            [name],
            operation=f"pause job {name!r}",
        )
    )


def resume_job(election: Any, name: str) -> bool:
    """Resume a paused job from its next slot (the slots skipped meanwhile are not caught up).

    Returns True if it was paused, False if it was not.
    """
    validate_name(name, "job name", tag=False)
    return bool(
        command(
            election.client,
            "HDEL",
            election.keys.job(name),
            "paused",
            operation=f"resume job {name!r}",
        )
    )


def slot_to_ms(slot: datetime | float | None) -> int | None:
    """An aware datetime or seconds since the epoch -> ms since the epoch (None stays None)."""
    if slot is None:
        return None
    if isinstance(slot, datetime):
        if slot.tzinfo is None or slot.utcoffset() is None:
            raise ValueError(f"slot must be an aware datetime (with a time zone), not {slot!r}")
        return round(slot.timestamp() * 1000)
    if not finite_number(slot) or slot < 0:
        raise TypeError(
            f"slot must be an aware datetime or seconds since the epoch (>= 0), not {slot!r}"
        )
    return round(slot * 1000)
