"""A dead-man's switch for ``@periodic`` jobs: is each job's schedule kept, and if not, why.

A periodic job that silently stops firing is the failure nobody sees: no
error is raised anywhere, the last outcome stays ``ok`` for ever. This module
reads the term-fenced state the leader keeps per job (``periodic/claim.lua``
moves ``last_slot`` when a slot is claimed, ``periodic/finish.lua`` records
each outcome and ``consecutive_failures``) and judges each job:

* ``overdue``: the slot after ``last_slot`` was due more than ``max_late``
  seconds ago and no leader has claimed it. The reason names the cause,
  from the leader record and the job's state: no leader at all; a leader
  that holds the record but stopped renewing it (SIGSTOP, a GC pause, a
  frozen host, cut off from Redis); a run still going on, which holds the
  next slots back (``overlap=False``); or a leader renewing its lease but
  not claiming (its code lacks the job, or its scheduler is stuck).
* ``failing``: the last ``max_failures`` runs (default 1) ended in error or
  timeout. ``blocked`` is set when they failed because a lock or semaphore
  the job takes was held elsewhere: ``@with_lock`` and ``with Lock(...)``
  raise ``LockNotAcquired``, which the scheduler records as the run's error.
* ``never_ran``: no scheduled run yet. Healthy while the first slot is not
  late; unhealthy when no leader schedules the job at all (no leader, or a
  leader in office longer than ``max_late`` that never claimed a slot of it:
  its code does not have the job).
* ``paused``: paused by an operator (``pause_job``): healthy, not checked
  for lateness.
* ``ok``: none of the above.

Allowed lateness (``max_late``, seconds), unless given per call or with
``@periodic(max_late=...)``::

    max(one interval + retry_period, lease + retry_period, 1 s)

"One interval" is the gap between the slot last claimed and the awaited one
(the ``every=`` interval; for ``cron=`` the gap at that point of the
calendar), so a job is overdue only once it has missed a whole slot; ``lease +
retry_period`` is the longest failover (a crashed leader is replaced within
it), so a failover alone never makes a job overdue. ``lease`` and
``retry_period`` are the election's (the ``LEADER_*`` settings by default).

When the awaited slot is due is what the leader recorded with its last
claim (``next_due``: the schedule it runs, its code and any schedule edit in
force), not what this process's copy of the job would compute; the copy
only gives the job's own ``max_late`` and ``overlap``.

Times compared are Redis server times (``TIME``), as the state records them.
Nothing here writes to Redis or needs to lead. Plain Python, no Django.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..leader.records import Leadership, leader_defaults
from ..transport.commands import as_text
from ..transport.errors import unavailable_as_ours
from ..values import check_seconds, finite_number, whole_span
from .jobs import MAX_LATE_LIMIT, Job
from .schedules import Timeline, Versions, decode_versions

STATUSES = ("ok", "overdue", "failing", "never_ran", "paused")
#: The smallest default allowed lateness (seconds): a leader ticks at least every second.
MIN_MAX_LATE = 1.0
#: A job is ``failing`` once this many runs in a row ended in error or timeout.
DEFAULT_MAX_FAILURES = 1
_BLOCKED = ("LockNotAcquired:",)  # how the scheduler records a run refused a busy lock or semaphore


@dataclass(frozen=True)
class JobHealth:
    """How one periodic job keeps its schedule. Times are seconds (since the epoch for instants).

    ``ok`` is False for ``overdue``, ``failing``, and a ``never_ran`` job no
    leader schedules; ``late`` is how long the awaited slot has gone
    unclaimed (0 when on time); ``reason`` is one sentence for an operator.
    """

    name: str
    ok: bool
    status: str  # one of STATUSES
    late: float
    max_late: float
    reason: str
    due: float | None = None  # when the awaited slot was (or is) due
    consecutive_failures: int = 0
    last_ok: float | None = None  # when the last ok run ended
    blocked: bool = False  # the failing runs found a lock or semaphore held elsewhere

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (every float is finite)."""
        return asdict(self)


def job_health(
    election: Any,
    jobs: Mapping[str, Job],
    *,
    now_ms: int | None = None,
    max_late: Mapping[str, float] | None = None,
    max_failures: int = DEFAULT_MAX_FAILURES,
) -> list[JobHealth]:
    """Judge each job of ``jobs`` from its state under ``election`` (two round trips at most).

    Args:
        election: a ``LeaderElection`` (only ``client``, ``keys`` and, when
            present, ``lease`` and ``retry_period`` are used: it need not campaign).
        jobs: the jobs to judge by name, e.g. ``get_jobs()``.
        now_ms: the time to judge at, ms since the epoch (default: Redis's TIME).
        max_late: allowed lateness in seconds per job name, over the job's own
            ``max_late`` and the default rule (see the module's doc).
        max_failures: runs in a row that must have failed for ``failing`` (>= 1).

    Returns one :class:`JobHealth` per job, in name order. Raises ValueError
    or TypeError for bad arguments (a ``max_late`` naming no job of
    ``jobs``, a bad number), CoordinationUnavailable when Redis cannot be read.
    """
    overrides = check_max_late(max_late, jobs)
    if isinstance(max_failures, bool) or not isinstance(max_failures, int) or max_failures < 1:
        raise ValueError(f"max_failures must be an int >= 1, not {max_failures!r}")
    names = sorted(jobs)
    client, keys = election.client, election.keys
    with unavailable_as_ours(client, "read periodic job health"):
        if now_ms is None:
            seconds, micros = client.time()
            now_ms = int(seconds) * 1000 + int(micros) // 1000
        pipe = client.pipeline(transaction=False)
        pipe.hgetall(keys.record)
        pipe.pttl(keys.record)
        for name in names:
            pipe.hgetall(keys.job(name))
            pipe.hgetall(
                keys.schedule(name)
            )  # (the edits: an edit since the last claim moves the awaited slot)
        record, pttl, *raws = pipe.execute()
    leader = _leadership(record, pttl)
    lease, retry = election_timing(election)
    return [
        assess(
            name,
            jobs[name],
            _decode(raw),
            leader=leader,
            now_ms=now_ms,
            max_late=overrides.get(name),
            lease=lease,
            retry_period=retry,
            max_failures=max_failures,
            versions=decode_versions(_decode(edits)),
        )
        for name, raw, edits in zip(names, raws[::2], raws[1::2], strict=True)
    ]


def edited_since_claim(state: Mapping[str, Any]) -> bool:
    """Whether ``state`` shows a schedule edit (or a revert of one) the leader may not have
    claimed under yet:
    :func:`assess` then needs the job's versions (``read_versions``) to know which slot is
    awaited."""
    return "schedule_edit" in state or bool(_int(state.get("schedule_version")))


def check_max_late(
    max_late: Mapping[str, float] | None, jobs: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """Validate per-job allowed lateness (seconds, > 0, at most 400 days); return it as floats.

    With ``jobs``, every name must be one of them (the error lists them).
    """
    if max_late is None:
        return {}
    if not isinstance(max_late, Mapping):
        raise TypeError(f"max_late must be a mapping of job name -> seconds, not {max_late!r}")
    checked = {}
    for name, seconds in max_late.items():
        value = check_seconds(  # (MAX_LATE_LIMIT below)
            seconds, f"max_late of job {name!r}", timedelta_ok=True, most=math.inf
        )
        if value > MAX_LATE_LIMIT:
            raise ValueError(
                f"max_late of job {name!r} must be at most {MAX_LATE_LIMIT:g} seconds, not "
                f"{value:g}"
            )
        checked[name] = value
    if jobs is not None:
        unknown = sorted(set(checked) - set(jobs))
        if unknown:
            known = ", ".join(sorted(jobs)) or "none"
            raise ValueError(
                f"max_late names no registered job: {', '.join(unknown)} (registered: {known})"
            )
    return checked


def election_timing(election: Any = None) -> tuple[float, float]:
    """(lease, retry_period) in seconds: the election's, else the LEADER_* settings' (15 s, 2 s)."""
    lease, retry = getattr(election, "lease", None), getattr(election, "retry_period", None)
    if isinstance(lease, (int, float)) and isinstance(retry, (int, float)):
        return float(lease), float(retry)
    defaults = leader_defaults()
    return defaults[0], defaults[2]


def default_max_late(interval: float | None, *, lease: float, retry_period: float) -> float:
    """The default allowed lateness (seconds) for a job whose slots are ``interval`` seconds
    apart."""
    return max((interval or 0.0) + retry_period, lease + retry_period, MIN_MAX_LATE)


def assess(
    name: str,
    job: Job | None,
    state: Mapping[str, Any],
    *,
    leader: Leadership | None,
    now_ms: int,
    lease: float,
    retry_period: float,
    max_late: float | None = None,
    max_failures: int = DEFAULT_MAX_FAILURES,
    versions: Versions | None = None,
) -> JobHealth:
    """Judge one job from its state (as ``read_job_states`` decodes it) and the leader record; no
    I/O.

    ``versions``: the job's schedule edits (``read_versions``). When the
    newest is not the one the last claim was made under, the ``next_due``
    that claim recorded belongs to a schedule no longer in force: the awaited
    slot is computed from the edits instead (with ``job``), so lengthening a
    schedule does not make the job overdue until the new schedule's first slot.

    ``job`` is the registered job, for its own ``max_late`` and ``overlap``,
    and for the due time when the state has no ``next_due`` (None: judged
    from the state alone). ``max_late`` overrides the job's and the default
    (seconds); ``lease`` and ``retry_period`` (seconds) are the election's.
    """
    last_slot, next_due = _int(state.get("last_slot")), _int(state.get("next_due"))
    edited_interval = None
    if (
        versions is not None
        and job is not None
        and last_slot is not None
        and versions.head != (_int(state.get("schedule_version")) or 0)
    ):
        try:
            found = Timeline(job, versions).next_due(last_slot)
            if found is not None:  # the awaited slot's own schedule gives the interval, not the gap
                # since the last claim under the old one (hourly edited to every 5 s: 5 s, not up to
                # an hour)
                due_ms, segment = found
                slot = segment.job.previous_slot(
                    due_ms
                )  # (a jittered due time stays before the next slot)
                edited_interval = (slot - segment.job.previous_slot(slot - 1)) / 1000.0
        except (
            ValueError,
            TypeError,
            OverflowError,
        ):  # a cron that cannot be stepped: the record's
            found = None
        if found is not None:
            next_due = found[0]
    due, interval = _awaited(job, last_slot, next_due)
    if edited_interval is not None and edited_interval > 0:
        interval = edited_interval
    allowed = (
        max_late
        if max_late is not None
        else job.max_late
        if job is not None and job.max_late
        else None
    )
    if allowed is None:
        allowed = default_max_late(interval, lease=lease, retry_period=retry_period)
    failures = _int(state.get("consecutive_failures"))
    if failures is None:  # state written before finish.lua counted them
        failures = 1 if state.get("outcome") in ("error", "timeout") else 0
    last_ok = _int(state.get("last_ok"))
    common: dict[str, Any] = {
        "name": name,
        "max_late": allowed,
        "consecutive_failures": failures,
        "last_ok": None if last_ok is None else last_ok / 1000.0,
    }

    paused = _int(state.get("paused"))
    if paused is not None:
        skipped = _int(state.get("paused_slots")) or 0
        return JobHealth(
            status="paused",
            ok=True,
            late=0.0,
            due=None,
            **common,
            reason=f"paused since {_clock(paused, now_ms)} ({skipped} slot(s) skipped so far): "
            "not checked for lateness until resumed",
        )

    if due is None:  # no slot ever claimed: has any leader scheduled it?
        return _never_scheduled(leader, now_ms, allowed, common, retry_period)

    late_ms = max(0, now_ms - due)
    if late_ms > allowed * 1000:
        cause = _why_unclaimed(job, state, leader, now_ms, retry_period)
        return JobHealth(
            status="overdue",
            ok=False,
            late=late_ms / 1000.0,
            due=due / 1000.0,
            **common,
            reason=f"due {_clock(due, now_ms)}, not claimed for {_span(late_ms / 1000)} "
            f"(allowed {_span(allowed)}): {cause}",
        )

    if failures >= max_failures and failures > 0:
        error = str(state.get("error") or state.get("outcome") or "no error recorded")
        blocked = error.startswith(_BLOCKED)
        which = "the last run" if failures == 1 else f"the last {failures} runs"
        since = "never" if last_ok is None else _clock(last_ok, now_ms)
        if blocked:
            reason = (
                f"blocked: {which} failed because a lock or semaphore the job takes was held "
                f"elsewhere ({error}); last ok run: {since}"
            )
        else:
            reason = f"{which} failed ({error}); last ok run: {since}"
        return JobHealth(
            status="failing",
            ok=False,
            late=late_ms / 1000.0,
            due=due / 1000.0,
            blocked=blocked,
            reason=reason,
            **common,
        )

    runs = _int(state.get("runs")) or 0
    when = (
        f"due {_clock(due, now_ms)}"
        if due > now_ms
        else f"due {_clock(due, now_ms)}, {_span(late_ms / 1000)} ago"
    )
    if runs == 0 and last_ok is None and not state.get("outcome"):
        return JobHealth(
            status="never_ran",
            ok=True,
            late=late_ms / 1000.0,
            due=due / 1000.0,
            **common,
            reason=f"no run yet: its first slot is {when} (allowed lateness {_span(allowed)})",
        )
    last = "never ok" if last_ok is None else f"last ok run ended {_clock(last_ok, now_ms)}"
    return JobHealth(
        status="ok",
        ok=True,
        late=late_ms / 1000.0,
        due=due / 1000.0,
        **common,
        reason=f"{last}; next slot {when} (allowed lateness {_span(allowed)})",
    )


# -- helpers ------------------------------------------------------------------------------------


def _awaited(
    job: Job | None, last_slot: int | None, next_due: int | None
) -> tuple[int | None, float | None]:
    """(when the slot after ``last_slot`` is due, ms; seconds from that slot to the next one).

    The leader records ``next_due`` with each claim, from the schedule it runs
    (its code, and any schedule edit in force): that wins over what this
    process would compute from its own copy of the job.
    """
    if last_slot is None:
        return None, None
    if next_due is not None and next_due > last_slot:
        return next_due, (next_due - last_slot) / 1000.0
    if job is not None:
        try:
            slot = job.next_slot(last_slot)
            return job.due_ms(slot), (job.next_slot(slot) - slot) / 1000.0
        except (ValueError, TypeError, OverflowError):  # a cron that cannot be stepped
            pass
    return None, None


def _never_scheduled(
    leader: Leadership | None,
    now_ms: int,
    allowed: float,
    common: dict[str, Any],
    retry_period: float,
) -> JobHealth:
    if leader is None:
        return JobHealth(
            status="never_ran",
            ok=False,
            late=0.0,
            **common,
            reason="never scheduled: no leader is running (no run_leader process holds the "
            "lease, or none reaches this Redis)",
        )
    tenure = max(0.0, now_ms / 1000.0 - leader.since)
    if tenure <= allowed:
        return JobHealth(
            status="never_ran",
            ok=True,
            late=0.0,
            **common,
            reason=f"not scheduled yet: {leader.identity} took office {_span(tenure)} ago "
            f"(allowed {_span(allowed)})",
        )
    silent = now_ms / 1000.0 - leader.renewed
    if silent > max(
        2 * retry_period, 0.5
    ):  # a stopped leader claims nothing: not a sign its code lacks the job
        return JobHealth(
            status="never_ran",
            ok=False,
            late=tenure,
            **common,
            reason=f"never scheduled: {leader.identity} (term {leader.term}) has led for "
            f"{_span(tenure)} (allowed {_span(allowed)}) but last renewed its lease "
            f"{_span(silent)} ago ({_span(leader.expires_in)} left): it is stopped or stuck "
            "(SIGSTOP, a long pause, a frozen host) or cannot reach Redis",
        )
    return JobHealth(
        status="never_ran",
        ok=False,
        late=tenure,
        **common,
        reason=f"never scheduled: {leader.identity} (term {leader.term}) has led for "
        f"{_span(tenure)} (allowed {_span(allowed)}) without claiming a slot of it: its "
        "code does not have this job (deploy it to the run_leader processes, or list its "
        "module in REDCOORD['JOBS']), or its scheduler is stuck",
    )


def _why_unclaimed(
    job: Job | None,
    state: Mapping[str, Any],
    leader: Leadership | None,
    now_ms: int,
    retry_period: float,
) -> str:
    """Why nobody claimed a due slot, from the leader record and the job's state."""
    if leader is None:
        return (
            "no leader is claiming (no run_leader process holds the lease, or none reaches this "
            "Redis)"
        )
    who = f"{leader.identity} (term {leader.term})"
    silent = now_ms / 1000.0 - leader.renewed
    if silent > max(
        2 * retry_period, 0.5
    ):  # first: a stopped leader also stops its runs from ending
        return (
            f"a leader is alive but not claiming: {who} last renewed its lease {_span(silent)} ago "
            f"({_span(leader.expires_in)} left): it is stopped or stuck (SIGSTOP, a long pause, a "
            "frozen host) or cannot reach Redis"
        )
    since = _int(state.get("running_since"))
    if (
        state.get("running")
        and since is not None
        and _int(state.get("running_term")) == leader.term
        and not (job is not None and job.overlap)
    ):
        return (
            f"its run that started {_clock(since, now_ms)} on {who} is still going on "
            f"({_span((now_ms - since) / 1000)}), and no slot is claimed while it runs "
            "(overlap=False)"
        )
    return (
        f"a leader is alive but not claiming: {who} renews its lease but does not claim this job: "
        "its code does not have it, or its scheduler is stuck (see its log)"
    )


def _leadership(record: Any, pttl: Any) -> Leadership | None:
    """The leader record as ``read_leader`` reads it (HGETALL and PTTL of the record)."""
    if not record or _int(pttl) is None or int(pttl) < 0:
        return None
    fields = {
        as_text(k): as_text(v)
        for k, v in (
            record.items()
            if isinstance(record, dict)
            else zip(record[::2], record[1::2], strict=True)
        )
    }
    return Leadership(
        identity=fields.get("identity", ""),
        term=_int(fields.get("term")) or 0,
        since=(_int(fields.get("since_ms")) or 0) / 1000.0,
        renewed=(_int(fields.get("renewed_ms")) or 0) / 1000.0,
        expires_in=int(pttl) / 1000.0,
    )


def _decode(raw: Any) -> dict[str, str]:
    return {as_text(k): as_text(v) for k, v in (raw or {}).items()}


def _int(value: Any) -> int | None:
    """An integer field (int, or digits as text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (str, bytes)):
        text = as_text(value).strip()
        if text.lstrip("-").isdigit():
            return int(text)
    return None


def _clock(ms: int, now_ms: int) -> str:
    """``12:00:00 UTC``, with the date when it is not the day of ``now_ms``."""
    try:
        when, today = time.gmtime(ms / 1000), time.gmtime(now_ms / 1000)
    except (
        OverflowError,
        OSError,
        ValueError,
    ):  # a state field no clock can show (written by hand, or garbled)
        return f"at {ms} ms since the epoch"
    if when[:3] == today[:3]:
        return time.strftime("%H:%M:%S UTC", when)
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", when)


def _span(seconds: float) -> str:
    """A duration as people read it: 0.45 s, 3 s, 95 s, 12 min 5 s, 3 h 20 min, 2 d 4 h."""
    if not finite_number(seconds):
        return "?"
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.2f}".rstrip("0").rstrip(".") + " s"
    if seconds < 600:
        return f"{seconds:.0f} s"
    return whole_span(int(seconds))
