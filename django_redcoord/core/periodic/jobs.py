"""``@periodic`` jobs: registration, discovery and the slots of each schedule.

A job's *slots* are the instants it is scheduled for, in milliseconds since
the Unix epoch, so every leader computes the same ones:

* ``every=``: multiples of the interval since the epoch (UTC). ``every=300``
  runs at :00, :05, :10 ... past each hour whatever the time zone; for local
  wall-clock times use ``cron``.
* ``cron=``: a five-field crontab expression (or ``@hourly``, ``@daily`` ...)
  evaluated by croniter in Django's ``TIME_ZONE``. Across a DST change a time
  that does not exist runs at the first instant after the gap; a time that
  happens twice runs once, at its first occurrence, unless the hour field is
  a wildcard (``*``, ``*/2``...), as Vixie cron does.

Registration is all that happens at import. ``manage.py run_leader`` calls
:func:`autodiscover` and runs the jobs (see ``django_redcoord.core.periodic.scheduler``).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from ..keys import validate_name
from ..runtime import runtime
from ..values import check_seconds

MISFIRE_POLICIES = ("coalesce", "catchup", "skip")
#: misfire="catchup" runs at most this many missed slots; older ones are dropped.
CATCHUP_LIMIT = 100
MIN_EVERY = 0.1  # seconds
# : The longest every= allowed (seconds): 400 days (a slot further off overflows the clocks that
# show it).
MAX_EVERY = 400 * 24 * 3600.0
#: misfire="skip": a slot still runs if reached this late (at most half its interval).
SKIP_GRACE = 1.0  # seconds
#: The longest max_late= allowed (seconds): 400 days, longer than any cron gap (@yearly).
MAX_LATE_LIMIT = 400 * 24 * 3600.0

_registry: dict[str, Job] = {}
_registry_lock = threading.Lock()
_context = threading.local()


def _tz() -> tzinfo:
    """The zone slot times are shown in: Django's TIME_ZONE (also when USE_TZ is False), else
    UTC."""
    return runtime.timezone()


def _is_task(obj: Any) -> bool:
    """A Django Task (django.tasks or django_tasks): has ``enqueue`` and ``func``."""
    return callable(getattr(obj, "enqueue", None)) and callable(getattr(obj, "func", None))


@dataclass(frozen=True, eq=False)
class Job:
    """One registered periodic job. Times are milliseconds since the epoch unless named
    otherwise."""

    name: str
    func: Any  # a callable taking no arguments, or a Django Task (enqueued instead)
    every_ms: int | None
    cron: str | None
    timeout: float | None  # seconds
    jitter: float  # seconds
    overlap: bool
    misfire: str
    _cron_fixed_hour: bool = field(default=False, repr=False)
    #: seconds a due slot may go unclaimed before the job is overdue; None: derived from the
    #: schedule (see ``django_redcoord.core.periodic.overdue``)
    max_late: float | None = None
    # : a permission ("app_label.codename") needed, besides change_schedule, to edit the schedule in
    # the admin
    edit_permission: str | None = None

    @property
    def is_task(self) -> bool:
        return _is_task(self.func)

    @property
    def schedule(self) -> str:
        """The schedule in words, e.g. ``every 30s`` or ``cron */5 * * * * (Europe/Paris)``."""
        if self.every_ms is not None:
            return f"every {self.every_ms / 1000:g}s"
        return f"cron {self.cron} ({_tz()})"

    # -- slots -------------------------------------------------------------------

    def previous_slot(self, at_ms: int) -> int:
        """The latest slot <= ``at_ms``."""
        if self.every_ms is not None:
            return at_ms // self.every_ms * self.every_ms
        return self._cron_step(at_ms + 1, backwards=True)

    def next_slot(self, after_ms: int) -> int:
        """The earliest slot > ``after_ms``."""
        if self.every_ms is not None:
            return (after_ms // self.every_ms + 1) * self.every_ms
        return self._cron_step(after_ms, backwards=False)

    def due_ms(self, slot_ms: int) -> int:
        """When ``slot_ms`` is due: the slot plus its jitter, which is the same on
        every leader (a hash of name and slot) and stays below the next slot."""
        if not self.jitter:
            return slot_ms
        room = min(int(self.jitter * 1000), self.next_slot(slot_ms) - slot_ms - 1)
        if room <= 0:
            return slot_ms
        digest = hashlib.sha256(f"{self.name}|{slot_ms}".encode()).digest()
        return slot_ms + int.from_bytes(digest[:8], "big") % (room + 1)

    def due_slots(
        self, after_ms: int, now_ms: int, limit: int = CATCHUP_LIMIT
    ) -> tuple[list[int], int]:
        """Slots ``s > after_ms`` due at ``now_ms``, oldest first: at most the latest ``limit``.

        Returns (slots, older): ``older`` counts due slots left out by the limit
        (exact for intervals; for cron at least 1 when any was left out).
        """
        latest = self.previous_slot(now_ms)
        if latest > after_ms and self.due_ms(latest) > now_ms:
            latest = self.previous_slot(latest - 1)  # jittered: not due yet
        if latest <= after_ms:
            return [], 0
        if self.every_ms is not None:
            first = (after_ms // self.every_ms + 1) * self.every_ms
            count = (latest - first) // self.every_ms + 1
            start = max(first, latest - (limit - 1) * self.every_ms)
            return list(range(start, latest + 1, self.every_ms)), count - min(count, limit)
        slots = [latest]
        while len(slots) <= limit:
            earlier = self.previous_slot(slots[-1] - 1)
            if earlier <= after_ms:
                break
            slots.append(earlier)
        older = 1 if len(slots) > limit else 0
        return slots[:limit][::-1], older

    def grace_ms(self) -> int:
        """misfire="skip": how late a slot may be reached and still run."""
        grace = int(SKIP_GRACE * 1000)
        return min(grace, self.every_ms // 2) if self.every_ms is not None else grace

    def _cron_step(self, from_ms: int, *, backwards: bool) -> int:
        from croniter import croniter

        tz = _tz()
        start = datetime.fromtimestamp(from_ms / 1000, tz)
        it = croniter(self.cron, start)
        for _ in range(1000):
            found: datetime = it.get_prev(datetime) if backwards else it.get_next(datetime)
            if not (self._cron_fixed_hour and _second_occurrence(found)):
                return round(found.timestamp() * 1000)
        raise ValueError(f"cron {self.cron!r} of job {self.name!r} has no slot near {start}")


def _second_occurrence(moment: datetime) -> bool:
    """True if this local wall time happened already, earlier the same night (DST fall-back)."""
    naive = moment.replace(tzinfo=None)
    earlier = naive.replace(tzinfo=moment.tzinfo, fold=0)
    return earlier.utcoffset() != moment.utcoffset() and earlier.timestamp() < moment.timestamp()


# --- registration ------------------------------------------------------------------


def check_every(every: object) -> int:
    """Validate an interval (timedelta or seconds, MIN_EVERY to MAX_EVERY); return it in ms."""
    seconds = check_seconds(every, "every", timedelta_ok=True, most=math.inf)  # (MAX_EVERY)
    if seconds < MIN_EVERY:
        raise ValueError(f"every must be at least {MIN_EVERY:g} seconds, not {seconds:g}")
    if seconds > MAX_EVERY:
        raise ValueError(
            f"every must be at most {MAX_EVERY:g} seconds (400 days; use cron= for a yearly job), "
            f"not {seconds:g}"
        )
    return round(seconds * 1000)


def _check_cron(expr: object) -> tuple[str, bool]:
    """Validate a crontab expression; return it and whether its hour field is fixed."""
    from croniter import croniter

    if not isinstance(expr, str):
        raise TypeError(f"cron must be a str such as '*/5 * * * *', not {expr!r}")
    expr = " ".join(expr.split())
    fields = expr.split(" ")
    if not (
        (len(fields) == 5 or (len(fields) == 1 and expr.startswith("@")))
        and croniter.is_valid(expr)
    ):
        raise ValueError(
            f"cron {expr!r} is not a valid crontab expression: use five fields "
            "'minute hour day-of-month month day-of-week' (e.g. '*/5 * * * *') or @hourly, @daily, "
            "@weekly, @monthly, @yearly"
        )
    random = [
        field
        for field in fields
        if any(
            atom.strip().lower().startswith("r") and not atom.strip()[1:2].isalpha()
            for atom in field.replace("-", ",").replace("/", ",").split(",")
        )
    ]
    if random:  # croniter's R draws again at every call: leaders (and calls) would disagree
        raise ValueError(
            f"cron {expr!r}: a random field (R) is not allowed: every leader must compute the same "
            "slots; write the minute or hour you want"
        )
    try:  # a valid expression may still never match (e.g. February 30)
        croniter(expr, datetime.now(timezone.utc)).get_next(datetime)
    except ValueError:
        raise ValueError(
            f"cron {expr!r} never matches a date; check the day and month fields"
        ) from None
    aliases = {
        "@hourly": "*",
        "@daily": "0",
        "@midnight": "0",
        "@weekly": "0",
        "@monthly": "0",
        "@yearly": "0",
        "@annually": "0",
    }
    hour = aliases.get(expr, fields[1] if len(fields) == 5 else "*")
    return expr, not hour.startswith("*")


def periodic(
    _func: Any = None,
    /,
    *,
    every: timedelta | float | None = None,
    cron: str | None = None,
    name: str | None = None,
    timeout: timedelta | float | None = None,
    jitter: timedelta | float = 0,
    overlap: bool = False,
    misfire: str = "coalesce",
    max_late: timedelta | float | None = None,
    edit_permission: str | None = None,
) -> Callable[[Any], Any]:
    """Register a function (or a Django Task) to run on a schedule on the leader.

    Args:
        every: interval (timedelta or seconds, >= 0.1 s); slots are aligned to
            multiples of it since the Unix epoch (UTC).
        cron: a crontab expression, evaluated in Django's TIME_ZONE.
            Exactly one of ``every`` and ``cron``.
        name: the job's name (default ``<module>.<qualname>``); letters,
            digits and ``_ - . : / @ = + , # ~ |``.
        timeout: seconds after which a run is reported as ``timeout`` (it
            cannot be killed: it still counts as running until it ends).
        jitter: up to this many seconds of delay after each slot, the same on
            every leader (spreads load); below the interval for ``every``.
        overlap: allow a run to start while the previous one still runs. If
            False (default), slots that come due meanwhile wait and are then
            handled by ``misfire`` like slots missed during a failover.
        misfire: ``"coalesce"`` missed slots run once, for the latest;
            ``"catchup"`` each missed slot runs once, in order (at most the
            latest 100); ``"skip"`` missed slots are dropped.
        max_late: seconds a due slot may go unclaimed before health checks
            report the job overdue (``manage.py redcoord health --jobs``, the
            admin, ``redcoord_periodic_job_healthy``); at most 400 days.
            Default: one interval of the schedule plus the leader's retry
            period, and at least a failover (lease + retry period).

        edit_permission: a Django permission (``"billing.change_schedule"``)
            a user needs, besides ``django_redcoord.change_schedule``, to edit
            this job's schedule and arguments in the admin (see
            ``django_redcoord.core.periodic.schedules``).

    Returns the decorated object unchanged. A Django Task (``@task``) is
    enqueued by the leader instead of being run. Inside a run,
    :func:`current_job` gives the slot and the leader's term.
    """
    if _func is not None:
        raise TypeError(
            "use @periodic(every=...) or @periodic(cron=...), with parentheses and keyword "
            "arguments"
        )
    if (every is None) == (cron is None):
        raise TypeError(
            "periodic() needs exactly one of every= (timedelta or seconds) and cron= ('*/5 * * * "
            "*')"
        )
    every_ms = fixed_hour = None
    if every is not None:
        every_ms = check_every(every)
    else:
        cron, fixed_hour = _check_cron(cron)
    timeout_s = None if timeout is None else check_seconds(timeout, "timeout", timedelta_ok=True)
    jitter_s = check_seconds(jitter, "jitter", allow_zero=True, timedelta_ok=True)
    if every_ms is not None and jitter_s * 1000 >= every_ms:
        raise ValueError(
            f"jitter ({jitter_s:g} s) must be shorter than every ({every_ms / 1000:g} s)"
        )
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be True or False, not {overlap!r}")
    if misfire not in MISFIRE_POLICIES:
        raise ValueError(
            f"misfire must be one of {', '.join(map(repr, MISFIRE_POLICIES))}, not {misfire!r}"
        )
    if name is not None:
        validate_name(name, "job name", tag=False)
    if edit_permission is not None and not (
        isinstance(edit_permission, str)
        and edit_permission.count(".") == 1
        and all(edit_permission.split("."))
    ):
        raise ValueError(f"edit_permission must be 'app_label.codename', not {edit_permission!r}")
    max_late_s = (
        None
        if max_late is None
        else check_seconds(max_late, "max_late", timedelta_ok=True, most=math.inf)
    )  # (MAX_LATE_LIMIT below)
    if max_late_s is not None and max_late_s > MAX_LATE_LIMIT:
        raise ValueError(
            f"max_late must be at most {MAX_LATE_LIMIT:g} seconds (400 days), not {max_late_s:g}"
        )

    def register(func: Any) -> Any:
        if not (_is_task(func) or callable(func)):
            raise TypeError(f"@periodic decorates a function or a Django Task, not {func!r}")
        target = func.func if _is_task(func) else func
        job_name = name or f"{target.__module__}.{target.__qualname__}"
        try:
            validate_name(job_name, "job name", tag=False)
        except ValueError as exc:
            raise ValueError(f"{exc}; pass @periodic(name=...)") from None
        job = Job(
            job_name,
            func,
            every_ms,
            cron,
            timeout_s,
            jitter_s,
            overlap,
            misfire,
            bool(fixed_hour),
            max_late=max_late_s,
            edit_permission=edit_permission,
        )
        with _registry_lock:
            old = _registry.get(job_name)
            if old is not None and _origin(old.func) != _origin(func):
                raise ValueError(
                    f"a periodic job named {job_name!r} is already registered "
                    f"({_origin(old.func)}); pass a different @periodic(name=...)"
                )
            _registry[job_name] = job  # re-importing the same module replaces it
        return func

    return register


def _origin(func: Any) -> str:
    target = func.func if _is_task(func) else func
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def get_jobs() -> dict[str, Job]:
    """The registered jobs by name (a copy)."""
    with _registry_lock:
        return dict(_registry)


def unregister(name: str) -> None:
    """Forget a registered job (tests, or jobs switched off at run time)."""
    with _registry_lock:
        _registry.pop(name, None)


# --- the running job's context ---------------------------------------------------


@dataclass(frozen=True)
class JobContext:
    """What a running job knows about its run (see :func:`current_job`)."""

    name: str
    slot_ms: int | None  # the slot, ms since the epoch; None for an ad-hoc run
    term: int  # the leader's term: pass it as a fencing token to what the job writes to
    identity: str  # the leader running the job
    _is_leader: Callable[[], bool] = field(repr=False, compare=False)

    @property
    def slot(self) -> datetime | None:
        """The slot as an aware datetime in Django's TIME_ZONE (None for an ad-hoc run)."""
        return None if self.slot_ms is None else datetime.fromtimestamp(self.slot_ms / 1000, _tz())

    def is_leader(self) -> bool:
        """True while this process still leads ``term`` (local check, no round trip)."""
        return self._is_leader()


def current_job() -> JobContext | None:
    """The context of the periodic job running in this thread, or None outside a run."""
    return getattr(_context, "job", None)


def _set_current_job(context: JobContext | None) -> None:
    _context.job = context
