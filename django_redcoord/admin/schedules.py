"""The admin's "Edit schedule" page of a periodic job: ``schedule/?name=<job>&election=<election>``.

GET shows the job's code-declared schedule, the versions kept in Redis (who
edited, from when) and, to whoever may edit, a form: the interval or cron
expression and the arguments the job declares (keyword defaults of type
bool, int, float, str). POST (with Django's CSRF token) stores the edit or
reverts to the code's schedule through :mod:`django_redcoord.core.periodic.schedules`,
and writes it to the admin's LogEntry history. The leader applies it under
its term (see that module for what happens to runs in progress and to missed
slots).

Seeing needs ``django_redcoord.view_dashboard`` (or ``change_dashboard``);
editing needs ``django_redcoord.change_schedule`` and, if the job names one
(``@periodic(edit_permission="billing.change_schedule")``), that permission
too. Only jobs registered with ``@periodic`` in this process can be edited.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from ..core import RedcoordError, validate_name

PERMISSION = "django_redcoord.change_schedule"
CONSEQUENCE = (
    "The edit is in force from the moment Redis stores it: the leader runs the new schedule's "
    "slots after that moment, with these arguments, under its term. A run going on now finishes "
    "as it started. Slots of the old schedule that came due before the edit and did not run yet "
    "(no leader, a long run) are handled by the job's misfire policy, as slots missed during a "
    "failover are. Each slot runs at most once."
)


def schedule_urls(model_admin: Any) -> list:
    """The URL of the page, for ``DashboardAdmin.get_urls``."""
    base = f"{model_admin.opts.app_label}_{model_admin.opts.model_name}"

    def view(request: HttpRequest) -> HttpResponse:
        return schedule_view(model_admin, request)

    return [path("schedule/", model_admin.admin_site.admin_view(view), name=f"{base}_schedule")]


def can_edit(user: Any, job: Any) -> bool:
    """True if ``user`` may edit ``job``'s schedule: change_schedule, and the job's own
    permission if it names one."""
    if not (user.is_active and user.has_perm(PERMISSION)):
        return False
    return job.edit_permission is None or user.has_perm(job.edit_permission)


class ScheduleForm(forms.Form):
    """The schedule and the arguments of one job; cleaned into ``edit_schedule`` keywords."""

    KINDS = [
        ("code", "The code's schedule"),
        ("every", "Every … seconds"),
        ("cron", "Cron expression"),
    ]

    kind = forms.ChoiceField(choices=KINDS, widget=forms.RadioSelect, label="Schedule")
    every = forms.CharField(required=False, label="Every (seconds)", max_length=40)
    cron = forms.CharField(
        required=False,
        label="Cron expression",
        max_length=200,
        help_text="five fields 'minute hour day-of-month month day-of-week', or @hourly, @daily…",
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=0)

    def __init__(self, job: Any, *args: Any, **kwargs: Any) -> None:
        from ..core import editable_params

        super().__init__(*args, **kwargs)
        self.job = job
        self.params = editable_params(job)
        for name, param in self.params.items():
            if param.type is bool:
                field: forms.Field = forms.ChoiceField(
                    choices=[("true", "true"), ("false", "false")]
                )
            else:
                field = forms.CharField(
                    max_length=1000 if param.type is str else 40,
                    strip=False,
                    required=param.type is not str,
                )
            field.label = f"{name} ({param.kind}; default {param.default!r})"
            self.fields[f"param_{name}"] = field

    def clean(self) -> dict[str, Any]:
        from ..core import check_schedule, parse_param

        data = super().clean()
        kind = data.get("kind")
        every = cron = None
        if "version" in self._errors:  # a hidden field: its own error would show nowhere
            self.add_error(
                None,
                "this page's version field is missing or not an integer >= 0: reload the page "
                "and edit again",
            )
        try:
            if kind in self._errors:
                # its field's own error (too long...) says it: not a second one about an empty value
                pass
            elif kind == "every":
                text = (data.get("every") or "").strip()
                try:
                    every = float(text)
                except ValueError:
                    raise ValueError(
                        f"every must be a number of seconds (at least 0.1), not {text!r}"
                    ) from None
                check_schedule(every, None)
            elif kind == "cron":
                cron = data.get("cron") or ""
                check_schedule(None, cron)
        except (TypeError, ValueError) as exc:
            self.add_error(kind, str(exc))
        params = {}
        for name, param in self.params.items():
            key = f"param_{name}"
            if key not in data:
                continue  # its own field error is shown
            try:
                value = parse_param(self.job, param, data[key] or "")
            except (TypeError, ValueError) as exc:
                self.add_error(key, str(exc))
                continue
            if value != param.default or type(value) is not type(param.default):
                params[name] = (
                    value  # only what differs from the code: a new default in a deploy applies
                )
        data["edit"] = {"every": every, "cron": cron, "params": params}
        return data


def schedule_view(model_admin: Any, request: HttpRequest) -> HttpResponse:
    from ..core import LeaderElection
    from ..discovery import autodiscover
    from ..models import Dashboard

    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    if request.method == "POST" and not (
        request.user.is_active and request.user.has_perm(PERMISSION)
    ):
        raise PermissionDenied  # before the job is looked up: a 403 whatever the name posted
    home = reverse(
        "admin:django_redcoord_dashboard_changelist", current_app=model_admin.admin_site.name
    )
    source = request.POST if request.method == "POST" else request.GET
    try:
        name = validate_name(source.get("name", ""), "job name", tag=False)
        election_name = validate_name(source.get("election", "default"), "election")
    except (TypeError, ValueError) as exc:
        messages.error(request, f"No such job: {exc}")
        return redirect(home)
    job = autodiscover().get(name)
    if job is None:
        messages.error(
            request,
            f"No periodic job named {name!r} is registered in this process: only jobs "
            "registered with @periodic can be edited.",
        )
        return redirect(home)
    allowed = can_edit(request.user, job)
    if request.method == "POST" and not allowed:
        raise PermissionDenied
    election = LeaderElection(election_name)  # only its client and keys: it does not campaign
    here = reverse(
        "admin:django_redcoord_dashboard_schedule", current_app=model_admin.admin_site.name
    )
    here = f"{here}?{urlencode({'name': name, 'election': election_name})}"
    error, form, status = None, None, 200
    try:
        versions, state = _read(election, name)
    except RedcoordError as exc:
        versions, state, error, status = None, {}, str(exc), 503
    if request.method == "POST" and versions is not None:
        done = _act(model_admin, request, job, election, versions.head)
        if isinstance(done, str):
            model_admin.log_change(request, Dashboard(pk=1), done)
            messages.success(request, f"{done}.")
            return redirect(here)
        if isinstance(
            done, _Unknown
        ):  # Redis did not answer: the edit may be stored; the history says so
            model_admin.log_change(request, Dashboard(pk=1), done.entry)
            done, status = done.form, 503
        else:
            status = 400 if done is not None else status
        form = done
    if form is None and versions is not None:
        form = ScheduleForm(job, initial=_initial(job, versions))
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Schedule of periodic job {name}",
        "job": job,
        "election": election_name,
        "code_schedule": job.schedule,
        "versions": versions and [_shown(v, job) for v in reversed(versions.kept)],
        "head": versions and versions.head,
        "state": state,
        "applied": versions is not None
        and state.get("schedule_version", "0") == str(versions.head),
        "form": form,
        "can_edit": allowed,
        "can_change": model_admin.has_change_permission(request),
        "needs": PERMISSION + (f" and {job.edit_permission}" if job.edit_permission else ""),
        "consequence": CONSEQUENCE,
        "error": error,
        "home": home,
        "here": here,
    }
    return TemplateResponse(
        request, "admin/django_redcoord/schedule_edit.html", context, status=status
    )


class _Unknown:
    """An edit or revert whose outcome is unknown: Redis did not answer after it was sent."""

    def __init__(self, form: ScheduleForm, entry: str) -> None:
        self.form, self.entry = form, entry


def _unknown(
    request: HttpRequest, job: Any, election: Any, form: ScheduleForm, what: str, exc: Exception
) -> _Unknown:
    """Say so on the page and in the history: the edit may be in force (every retry from this
    page is
    refused if it is: the form names the version it was read at)."""
    messages.error(
        request,
        f"Unknown whether it was stored: {exc}. Reload this page: the versions kept show "
        "whether it was (saving this page again is refused if it was).",
    )
    return _Unknown(
        form,
        f"Tried to {what} of periodic job {job.name} of election {election.name}; unknown "
        f"whether Redis stored it ({type(exc).__name__}: {exc})",
    )


def _act(
    model_admin: Any, request: HttpRequest, job: Any, election: Any, head: int
) -> str | ScheduleForm | _Unknown | None:
    """Store the POSTed edit or revert: the LogEntry message, or the form with its errors."""
    from ..core import CoordinationUnavailable, edit_schedule, revert_schedule

    by = request.user.get_username() or None
    form = ScheduleForm(job, request.POST)
    if "revert" in request.POST:
        try:
            text = request.POST.get("version", "")
            if not (text.isascii() and text.isdigit() and len(text) <= 19):
                raise ValueError(
                    f"this page's version field must be a whole number of at most 19 digits "
                    f"(0-9), not {text[:40]!r}: reload the page"
                )
            stored = revert_schedule(election, job, by=by, expected_version=int(text))
        except CoordinationUnavailable as exc:
            if exc.sent:
                return _unknown(
                    request, job, election, form, "revert the schedule to the code's", exc
                )
            messages.error(request, f"Not done: {exc}")
            return form
        except (RedcoordError, TypeError, ValueError) as exc:
            messages.error(request, f"Not done: {exc}")
            return form
        return (
            f"Reverted periodic job {job.name} of election {election.name} to its code-declared "
            f"schedule ({job.schedule}) and arguments: version {stored.version}, in force from "
            f"{_local(stored.since_ms)}"
        )
    if not form.is_valid():
        return form
    edit = form.cleaned_data["edit"]
    try:
        stored = edit_schedule(
            election, job, **edit, by=by, expected_version=form.cleaned_data["version"]
        )
    except CoordinationUnavailable as exc:
        if exc.sent:
            return _unknown(
                request, job, election, form, f"edit the schedule ({_describe(job, edit)})", exc
            )
        form.add_error(None, f"Not done: {exc}")
        return form
    except (RedcoordError, TypeError, ValueError) as exc:
        form.add_error(None, f"Not done: {exc}")
        return form
    what = _describe(job, edit)
    return (
        f"Edited the schedule of periodic job {job.name} of election {election.name}: {what}; "
        f"version {stored.version}, in force from {_local(stored.since_ms)}"
    )


def _read(election: Any, name: str) -> tuple[Any, dict[str, Any]]:
    from ..core import read_job_states, read_versions

    versions = read_versions(election, name)
    state = read_job_states(election, also=[name]).get(name, {})
    return versions, state


def _initial(job: Any, versions: Any) -> dict[str, Any]:
    from ..core import editable_params

    current = versions.current
    initial: dict[str, Any] = {"version": versions.head, "kind": "code"}
    every_ms, cron = (current.every_ms, current.cron) if not current.revert else (None, None)
    if every_ms is not None:
        initial.update(kind="every", every=_seconds(every_ms))
    elif cron is not None:
        initial.update(kind="cron", cron=_printable(cron))
    initial.setdefault("every", _seconds(job.every_ms) if job.every_ms is not None else "")
    initial.setdefault("cron", job.cron or "")
    for name, param in editable_params(job).items():
        value = current.params.get(name, param.default)
        initial[f"param_{name}"] = (
            ("true" if value else "false") if param.type is bool else _printable(str(value))
        )
    return initial


def _printable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (an unpaired surrogate stored by an older version,
    or written
    to Redis by hand) escaped: rendered as it is, it made the page a 500."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _seconds(ms: int) -> str:
    """``ms`` as seconds, exactly (``12345.678``; ``:g`` would round it to 6 digits, and a form
    saved
    for an argument alone would then change the interval)."""
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".")


def _shown(version: Any, job: Any) -> dict[str, Any]:
    if version.version == 0:
        what = f"the code's schedule ({job.schedule})"
    elif version.revert:
        what = f"reverted to the code's schedule ({job.schedule})"
    else:
        try:
            what = version.label(job) or job.schedule
        except ValueError as exc:
            what = f"unreadable here: {exc}"
    return {
        "version": version.version,
        "what": _printable(what),
        "by": _printable(version.by),
        "since": _local(version.since_ms) if version.since_ms else None,
    }


def _describe(job: Any, edit: dict[str, Any]) -> str:
    parts = [
        f"every {edit['every']:g}s"
        if edit["every"] is not None
        else f"cron {edit['cron']}"
        if edit["cron"] is not None
        else f"its code schedule ({job.schedule})"
    ]
    args = ", ".join(f"{k}={v!r}" for k, v in sorted(edit["params"].items()))
    parts.append(f"arguments {args}" if args else "the code's arguments")
    return " with ".join(parts)


def _local(ms: int) -> datetime:
    return timezone.localtime(datetime.fromtimestamp(ms / 1000, tz=dt_timezone.utc))
