"""Schedule edits: change a ``@periodic`` job's interval, cron or arguments while leaders run.

The code declares a job's schedule; an operator may replace it at run time
(the admin's "Edit schedule" page, ``manage.py redcoord schedule``) and
revert to it. Only jobs registered with ``@periodic`` can be edited, and only
what the job declares: its schedule (``every`` or ``cron``) and the keyword
arguments its function takes with a default of a JSON type (``bool``,
``int``, ``float``, ``str``)::

    @periodic(every=300)
    def refresh_rates(batch_size: int = 500, dry_run: bool = False): ...

The leader calls ``refresh_rates(batch_size=100)`` once an edit sets
``batch_size`` to 100; arguments an edit does not set keep their default.

How an edit is stored and applied (every operation is one round trip):

* :func:`edit_schedule` (and :func:`revert_schedule`) run
  ``periodic/edit_schedule.lua``: the job's schedule hash gets a new
  *version* ``v`` (1, 2, ...; the code-declared schedule is version 0) with
  the edit as JSON and ``since``, the moment Redis stored it. Nothing is
  pickled; the edit is checked against the editor's registry first (a bad
  cron, interval or argument is refused with a message saying what is allowed).
* The edit is in force **from ``since``**: the slots of a job are those of
  version ``v`` in ``(since:v, since:v+1]``. Slots are instants (ms since the
  epoch), and ``last_slot`` only grows, so a retime can never make a slot
  run twice.
* The leader reads the edits with its "run now" requests (every retry
  period) and computes the due slots across the versions. Every claim
  (``periodic/claim.lua``) names the version it was computed from (its
  number and ``since``, so a number Redis forgot and gave again is not
  mistaken for it) and is refused when the slot is outside that version's
  window: a leader whose read is stale (an edit landed since, or the reply
  of its read was lost) reads again and recomputes. With the term fence this keeps, across
  failovers and edits made during them: **each slot runs at most once, and
  every slot due under the schedule in force is run or handled by the job's
  misfire policy** (as a slot missed during a failover is).

  Timeline of the race the version check closes (the term fence alone does
  not: one leader, a stale read)::

      t=0      A leads; reads the edits: version 0 (every 60 s), last_slot 0
      t=0.5    an edit is stored: version 1 (every 10 s), since:1 = 0.5
      t=0.6    A's next read of the edits times out (or it has not come yet)
      t=10..50 A computes nothing due from version 0; slots 10, 20 ... 50 of
               version 1 come due
      t=60     A claims slot 60 under version 0: refused (60 > since:1), so
               last_slot does not jump over 10 ... 50; A reads the edits
               again and claims 10 (catchup: then 20, 30 ...), with version
               1's arguments

What happens to...

* a run in progress: it goes on, with the arguments it started with. With
  ``overlap=False`` the new schedule's slots that come due meanwhile wait for
  it and are then handled by ``misfire``.
* slots of the old schedule missed before the edit (no leader, a long run):
  they were due under the schedule then in force; the next leader handles
  them by ``misfire`` (``catchup`` runs each, ``coalesce`` runs the latest
  once, ``skip`` drops them), then follows the new schedule.
* slots of the new schedule before the edit: never due (it was not in force).
  A daily 03:00 job retimed to 05:00 at 04:00 runs at 05:00 the same day.
* an edit during a failover: it is in force from when Redis stored it, not
  from when a leader noticed it; the next leader applies it retroactively.
  Several edits during one failover each keep their window.
* a leader whose clock runs ahead of Redis's, that claimed a slot after the
  moment of the edit: the edit takes effect after that slot (``since`` is at
  least ``last_slot``), so that slot is not lost nor run twice.
* a pause: independent of edits (``pause_job``); a paused job's slots of any
  version are skipped.
* a revert: a new version that says "the code-declared schedule and
  defaults" (a deploy that changes the decorator changes what it means).
* an edit the leader's code cannot apply (a cron its croniter refuses, an
  argument its function no longer takes): the leader logs it once and runs
  that version on the code schedule, without the unknown arguments.
* Redis losing the data: the edits go with the job's state; the code schedule
  is back in force.

At most :data:`MAX_KEPT_VERSIONS` versions are kept at once; the leader
passes (and the next edit drops) the old ones. Editing a job no leader runs
for that long is refused with :class:`TooManyEdits`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
import socket
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..exceptions import RedcoordError
from ..transport.commands import as_text, command
from ..transport.scripts import Script
from ..values import finite_number
from .jobs import MAX_EVERY, Job, _check_cron, check_every

log = logging.getLogger("django_redcoord.periodic")

_EDIT = Script("periodic/edit_schedule")

#: Most versions of one job's schedule kept at once.
MAX_KEPT_VERSIONS = 20
#: Longest str argument an edit may set (characters).
MAX_STR_PARAM = 1000
PARAM_TYPES = (bool, int, float, str)
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


class TooManyEdits(RedcoordError):
    """An edit refused: MAX_KEPT_VERSIONS versions are kept, none passed by a leader."""


class EditConflict(RedcoordError):
    """An edit refused: another edit landed since the version the caller edited from."""


# --- what a job lets an edit change --------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A keyword argument an edit may set: its name, type and code default."""

    name: str
    type: type
    default: Any

    @property
    def kind(self) -> str:
        return _TYPE_WORDS[self.type]


def editable_params(job: Job) -> dict[str, Param]:
    """The arguments of ``job``'s function an edit may set: those with a default of type bool,
    int, float or str."""
    target = job.func.func if job.is_task else job.func
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return {}
    found = {}
    for p in signature.parameters.values():
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and type(p.default) in PARAM_TYPES:
            found[p.name] = Param(p.name, type(p.default), p.default)
    return found


def check_param(job: Job, param: Param, value: object) -> Any:
    """``value`` if it fits ``param`` (an int is a fine float), else a TypeError/ValueError
    saying what is allowed."""
    ok = (
        isinstance(value, bool)
        if param.type is bool
        else isinstance(value, int) and not isinstance(value, bool)
        if param.type is int
        else finite_number(value)
        if param.type is float
        else isinstance(value, str)
    )
    if not ok:
        raise TypeError(
            f"argument {param.name} of job {job.name!r} must be {param.kind} "
            f"(its default is {param.default!r}), not {value!r}"
        )
    if param.type is str and len(value) > MAX_STR_PARAM:  # type: ignore[arg-type]
        raise ValueError(
            f"argument {param.name} of job {job.name!r} is {len(value)} characters long; "  # type: ignore[arg-type]
            f"at most {MAX_STR_PARAM} are allowed"
        )
    if param.type is str:
        _check_text(value, f"argument {param.name} of job {job.name!r}")  # type: ignore[arg-type]
    return float(value) if param.type is float else value  # type: ignore[arg-type]


def _check_text(text: str, what: str) -> None:
    """Refuse text UTF-8 cannot encode: an unpaired surrogate (a command-line byte the locale
    could not decode, ``"\\udcff"``) passes JSON, then fails the job's own writes and every page
    that shows it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} must be text UTF-8 can encode; it holds {text[exc.start]!r} at position "
            f"{exc.start} (an unpaired surrogate: a byte the terminal's encoding could not "
            "decode?)"
        ) from None


def parse_param(job: Job, param: Param, text: str) -> Any:
    """An argument typed in a form or on a command line (``"500"``, ``"true"``), checked like
    :func:`check_param`."""
    text = text.strip() if param.type is not str else text
    value: Any = text
    try:
        if param.type is bool:
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise ValueError
            value = lowered in ("true", "1", "yes", "on")
        elif param.type is int:
            value = int(text)
        elif param.type is float:
            value = float(text)
    except ValueError:
        raise ValueError(
            f"argument {param.name} of job {job.name!r} must be {param.kind} "
            f"(its default is {param.default!r}), not {text!r}"
        ) from None
    return check_param(job, param, value)


def check_params(job: Job, params: dict[str, Any] | None) -> dict[str, Any]:
    """Validate the arguments of an edit: names the job declares, values of their types."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of argument name to value, not {params!r}")
    allowed = editable_params(job)
    checked = {}
    for name, value in params.items():
        if name not in allowed:
            names = (
                ", ".join(sorted(allowed))
                or "none: its function takes no keyword argument with a default "
                "of type bool, int, float or str"
            )
            raise ValueError(
                f"job {job.name!r} has no argument {name!r} an edit may set; it has {names}"
            )
        checked[name] = check_param(job, allowed[name], value)
    return checked


def check_schedule(
    every: timedelta | float | None, cron: str | None
) -> tuple[int | None, str | None]:
    """(every_ms, cron) of an edit, validated as ``@periodic`` validates them; both None: the
    code's."""
    if every is not None and cron is not None:
        raise TypeError(
            "give at most one of every= (timedelta or seconds) and cron= ('*/5 * * * *')"
        )
    if every is not None:
        return check_every(every), None
    if cron is not None:
        return None, _check_cron(cron)[0]
    return None, None


# --- one version -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One version of a job's schedule. Times are ms since the epoch (Redis's clock)."""

    version: int  # 0: the code-declared schedule, never edited
    since_ms: int | None  # when it took effect (None for version 0)
    every_ms: int | None  # None with cron None: the code's schedule
    cron: str | None
    params: dict[str, Any]
    by: str
    revert: bool = False

    @property
    def edited(self) -> bool:
        """True if it differs from the code (a schedule or an argument)."""
        return not self.revert and (
            self.every_ms is not None or self.cron is not None or bool(self.params)
        )

    def applied_to(self, job: Job) -> Job:
        """``job`` with this version's schedule (the code's if it sets none)."""
        if self.every_ms is not None:
            return dataclasses.replace(
                job, every_ms=self.every_ms, cron=None, _cron_fixed_hour=False
            )
        if self.cron is not None:
            expr, fixed = _check_cron(self.cron)
            return dataclasses.replace(job, every_ms=None, cron=expr, _cron_fixed_hour=fixed)
        return job

    def label(self, job: Job) -> str:
        """What the admin's job list shows: ``every 10s, batch_size=100``."""
        parts = []
        if self.every_ms is not None or self.cron is not None:
            parts.append(self.applied_to(job).schedule)
        parts.extend(f"{k}={json.dumps(v)}" for k, v in sorted(self.params.items()))
        return ", ".join(parts)

    def spec(self) -> str:
        return json.dumps(
            {
                "every_ms": self.every_ms,
                "cron": self.cron,
                "params": self.params,
                "by": self.by,
                "revert": self.revert,
            },
            sort_keys=True,
            allow_nan=False,
            separators=(",", ":"),
        )


CODE = Version(0, None, None, None, {}, "")


def decode_version(version: int, since: Any, spec: Any) -> Version:
    """A version as ``periodic/edit_schedule.lua`` stored it; raises ValueError if it is not one."""
    try:
        data = json.loads(as_text(spec))
        every, cron, params = data.get("every_ms"), data.get("cron"), data.get("params") or {}
        if every is not None and (
            isinstance(every, bool)
            or not isinstance(every, int)
            or not 0 < every <= MAX_EVERY * 1000
        ):
            raise ValueError(f"every_ms {every!r}")
        if (cron is not None and not isinstance(cron, str)) or not isinstance(params, dict):
            raise ValueError("cron or params")
        return Version(
            version,
            int(as_text(since)),
            every,
            cron,
            params,
            str(data.get("by", "")),
            bool(data.get("revert", False)),
        )
    except (TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a schedule edit: {exc}") from None


@dataclass(frozen=True)
class Versions:
    """The versions of one job's schedule kept in Redis, oldest first (version 0 first while
    kept)."""

    head: int  # the newest version (0: never edited)
    kept: tuple[Version, ...]
    unreadable: tuple[int, ...] = ()  # versions whose JSON is not an edit (logged by the leader)

    @property
    def current(self) -> Version:
        """The version in force now (the newest)."""
        return self.kept[-1]


def decode_versions(raw: dict[Any, Any]) -> Versions:
    """The versions in a schedule hash as HGETALL returned it (an empty hash: only version 0)."""
    fields = {as_text(k): v for k, v in raw.items()}
    try:
        head, first = int(as_text(fields.get("version", 0))), int(as_text(fields.get("first", 0)))
    except ValueError:
        head = first = 0
    kept: list[Version] = [CODE] if first == 0 else []
    unreadable = []
    for v in range(max(first, 1), head + 1):
        try:
            kept.append(decode_version(v, fields.get(f"since:{v}"), fields.get(f"spec:{v}")))
        except ValueError:
            unreadable.append(v)
            since = fields.get(f"since:{v}")
            kept.append(
                Version(
                    v,
                    int(as_text(since)) if since is not None and as_text(since).isdigit() else 0,
                    None,
                    None,
                    {},
                    "?",
                )
            )
    if (
        not kept
    ):  # a hash not written by us: the code's schedule, and every claim refused until an edit
        kept.append(CODE)
    return Versions(head, tuple(kept), tuple(unreadable))


# --- the store ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredEdit:
    """What :func:`edit_schedule` stored: its version, and when it took effect (ms since the
    epoch)."""

    version: int
    since_ms: int


def edit_schedule(
    election: Any,
    job: Job,
    *,
    every: timedelta | float | None = None,
    cron: str | None = None,
    params: dict[str, Any] | None = None,
    by: str | None = None,
    expected_version: int | None = None,
) -> StoredEdit:
    """Replace the schedule (and/or the arguments) of ``job`` from now on, for the leader of
    ``election``.

    Args:
        election: a ``LeaderElection`` (only its client and keys are used; it need not campaign).
        job: the registered job (``get_jobs()[name]``): what it declares is what may be set.
        every: the new interval (timedelta or seconds, >= 0.1 s), or
        cron: the new crontab expression; neither: the code's schedule (set only arguments).
        params: arguments to call the job with (names and types the job
            declares, see :func:`editable_params`); the others keep their defaults.
        by: who edits, kept with the edit (default ``host:pid``).
        expected_version: refuse with :class:`EditConflict` unless the newest
            version is this one (a form read before another edit landed).

    Returns the stored edit. Raises TypeError/ValueError for a bad schedule
    or argument, :class:`TooManyEdits`, :class:`EditConflict`,
    CoordinationUnavailable (the edit may or may not be stored).
    """
    every_ms, cron = check_schedule(every, cron)
    version = Version(0, None, every_ms, cron, check_params(job, params), _by(by))
    return _store(election, job, version, version.label(job), expected_version)


def revert_schedule(
    election: Any, job: Job, *, by: str | None = None, expected_version: int | None = None
) -> StoredEdit:
    """Put ``job`` back on its code-declared schedule and arguments from now on (a new version)."""
    return _store(
        election, job, Version(0, None, None, None, {}, _by(by), revert=True), "", expected_version
    )


def read_versions(election: Any, job_name: str) -> Versions:
    """The versions of ``job_name``'s schedule kept in Redis (one round trip)."""
    raw = command(
        election.client,
        "HGETALL",
        election.keys.schedule(job_name),
        operation=f"read the schedule edits of job {job_name!r}",
    )
    pairs = dict(zip(raw[::2], raw[1::2], strict=True)) if isinstance(raw, list) else raw
    return decode_versions(pairs or {})


def _by(by: str | None) -> str:
    by = by if by is not None else f"{socket.gethostname()}:{os.getpid()}"
    if not isinstance(by, str) or len(by) > 200:
        raise ValueError(f"by must be a str of at most 200 characters, not {by!r}")
    _check_text(by, "by")
    return by


def _store(
    election: Any, job: Job, version: Version, label: str, expected: int | None
) -> StoredEdit:
    if expected is not None and (
        isinstance(expected, bool) or not isinstance(expected, int) or expected < 0
    ):
        raise TypeError(f"expected_version must be an int >= 0 or None, not {expected!r}")
    keys = election.keys
    reply = _EDIT(
        election.client,
        [keys.schedule(job.name), keys.job(job.name), keys.jobs],
        [job.name, version.spec(), label, MAX_KEPT_VERSIONS, "" if expected is None else expected],
        operation=f"edit the schedule of job {job.name!r}",
    )
    code = int(reply[0])
    if code == 0:
        raise TooManyEdits(
            f"cannot edit the schedule of job {job.name!r}: {int(reply[1])} versions are waiting "
            f"for a leader to pass them (at most {MAX_KEPT_VERSIONS}); is a leader running this "
            "job?"
        )
    if code == 2:
        raise EditConflict(
            f"the schedule of job {job.name!r} was edited since version {expected} (it is at "
            f"version {int(reply[1])} now): reload and edit again"
        )
    stored = StoredEdit(int(reply[1]), int(as_text(reply[2])))
    log.info(
        "job %s: schedule version %d (%s) stored by %s, in force from %d",
        job.name,
        stored.version,
        label or "the code's schedule",
        version.by,
        stored.since_ms,
    )
    return stored


# --- the leader's view: the versions as a timeline of slots ------------------------------------


@dataclass(frozen=True)
class Segment:
    """A version as the leader runs it: the job with its schedule, for slots in (since, until]."""

    version: int
    since_ms: int | None  # None: no lower bound (version 0)
    until_ms: int | None  # None: in force now (the newest)
    job: Job
    params: dict[str, Any]
    edited: bool

    @property
    def words(self) -> str:
        """The schedule in words, for the job state (``every 10s (edited, v3)``)."""
        return (
            f"{self.job.schedule} (edited, v{self.version})" if self.edited else self.job.schedule
        )


class Timeline:
    """A job's slots across its kept versions: what the leader claims from.

    Built by :func:`timeline` from the versions read in Redis; an edit the
    code cannot apply falls back to the code's schedule or drops the
    arguments, logged once per version by the caller via ``problems``.
    """

    def __init__(self, job: Job, versions: Versions) -> None:
        self.job = job
        self.head = versions.head
        self.problems: list[str] = [
            f"version {v} is not a schedule edit redcoord wrote; the code's schedule runs instead"
            for v in versions.unreadable
        ]
        allowed = editable_params(job)
        segments = []
        kept = versions.kept
        for i, version in enumerate(kept):
            until = kept[i + 1].since_ms if i + 1 < len(kept) else None
            try:
                applied = version.applied_to(job)
            except ValueError as exc:
                self.problems.append(
                    f"version {version.version}: {exc}; the code's schedule runs instead"
                )
                applied = job
            params = {}
            for name, value in version.params.items():
                try:
                    if name not in allowed:
                        raise ValueError(f"the job takes no argument {name!r}")
                    params[name] = check_param(job, allowed[name], value)
                except (TypeError, ValueError) as exc:
                    self.problems.append(f"version {version.version}: {exc}; left out")
            segments.append(
                Segment(version.version, version.since_ms, until, applied, params, version.edited)
            )
        self.segments = tuple(segments)

    @property
    def current(self) -> Segment:
        return self.segments[-1]

    def segment_of(self, slot_ms: int) -> Segment:
        """The segment whose window holds ``slot_ms`` (since < slot <= until); the oldest kept
        for earlier slots."""
        for seg in reversed(self.segments):
            if seg.since_ms is None or seg.since_ms < slot_ms:
                return seg
        return self.segments[0]

    def due_slots(
        self, after_ms: int, now_ms: int, limit: int
    ) -> tuple[list[tuple[int, Segment]], int]:
        """Slots ``s > after_ms`` due at ``now_ms`` across the versions, oldest first, at most
        the latest ``limit``.

        Returns ([(slot, its segment)], older): ``older`` counts due slots
        left out by the limit. A slot is due when its (jittered) due time has
        come; a slot not due yet holds back every later one (slots are
        claimed in order).
        """
        found: list[tuple[int, Segment]] = []
        older = 0
        for seg in self.segments:
            low = after_ms if seg.since_ms is None else max(after_ms, seg.since_ms)
            high = now_ms if seg.until_ms is None else min(now_ms, seg.until_ms)
            if high <= low:
                if seg.since_ms is not None and seg.since_ms >= now_ms:
                    break
                continue
            slots, left_out = seg.job.due_slots(low, high, limit)
            older += left_out
            found.extend((slot, seg) for slot in slots)
            if seg.until_ms is not None and seg.until_ms < now_ms:
                # A closed window: its latest slot may be due (jittered) after the window's end.
                latest = seg.job.previous_slot(seg.until_ms)
                if latest > low and (not slots or slots[-1] < latest):
                    if seg.job.due_ms(latest) > now_ms:
                        break  # not due yet: the later versions' slots wait for it
                    found.append((latest, seg))
        if len(found) > limit:
            older += len(found) - limit
            found = found[-limit:]
        return found, older

    def next_due(self, after_ms: int) -> tuple[int, Segment] | None:
        """The first slot after ``after_ms`` (its due time, ms since the epoch) and its segment."""
        for seg in self.segments:
            low = after_ms if seg.since_ms is None else max(after_ms, seg.since_ms)
            if seg.until_ms is not None and low >= seg.until_ms:
                continue
            slot = seg.job.next_slot(low)
            if seg.until_ms is None or slot <= seg.until_ms:
                return seg.job.due_ms(slot), seg
        return None
