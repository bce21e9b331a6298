"""The dashboard's ModelAdmin and its views (see the package's docstring)."""

from __future__ import annotations

import re
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.functional import cached_property

from .. import conf
from ..core import CoordinationUnavailable, RedcoordError, validate_name
from ..models import Dashboard
from ..panels import panels
from .actions import ACTIONS, Call, our_task_backends
from .rows import lock_rows, lock_wait_rows, queue_rows
from .schedules import schedule_urls

#: The page's fixed sections around the families' panels: (element id, fragment, CSS class).
_HEAD = (("rc-asof", "asof", "rc-asof rc-muted"),)
#: Groups a queue's groups page lists (the busiest of the first this many read).
GROUPS_SHOWN = 500
#: Running workflows the workflows page lists (the longest unmoved first).
WORKFLOWS_SHOWN = 200
_TROUBLE = ("rc-section-trouble", "trouble", "module rc-section rc-trouble-panel")


def sections() -> tuple[tuple[str, str, str], ...]:
    """The page's sections, in order: (element id, fragment template, CSS class): the time of
    the reading, the trouble list, then each registered panel (:mod:`django_redcoord.panels`).
    The page includes each template in an element of that id; the live refresh swaps in what
    ``fragments/`` renders from the same templates."""
    from .. import dashboard  # noqa: F401  (registers the built-in panels)

    fixed = tuple(
        (section_id, f"admin/django_redcoord/fragments/{name}.html", css)
        for section_id, name, css in (*_HEAD, _TROUBLE)
    )
    return fixed + tuple((p.section_id, p.template, p.css) for p in panels())


@admin.register(Dashboard)
class DashboardAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        user = request.user
        return user.is_active and (
            user.has_perm("django_redcoord.view_dashboard") or self.has_change_permission(request)
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.has_perm("django_redcoord.change_dashboard")

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        base = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("", wrap(self.dashboard_view), name=f"{base}_changelist"),
            path("data.json", wrap(self.data_view), name=f"{base}_data"),
            path("fragments/", wrap(self.fragments_view), name=f"{base}_fragments"),
            path("trouble/", wrap(self.trouble_view), name=f"{base}_trouble"),
            path("action/<slug:action>/", wrap(self.action_view), name=f"{base}_action"),
            # the queue name is a query parameter, not a path segment: names may
            # hold "/" and ".", which browsers rewrite in paths ("a/../b")
            path("dead-letters/", wrap(self.dead_letters_view), name=f"{base}_dead_letters"),
            path("groups/", wrap(self.groups_view), name=f"{base}_groups"),
            path("workflows/", wrap(self.workflows_view), name=f"{base}_workflows"),
            path("task-result/", wrap(self.task_result_view), name=f"{base}_task_result"),
            *schedule_urls(
                self
            ),  # schedule/?name=<job>&election=<election>: the "Edit schedule" page
        ]

    # -- views ----------------------------------------------------------------

    def _overview(self, request: HttpRequest) -> dict[str, Any]:
        from ..core import get_client
        from ..dashboard import overview

        contains = request.GET.get("q", "").strip()[:200]
        try:
            page = max(1, int(request.GET.get("page", "1")))
        except ValueError:
            page = 1
        return overview(get_client(), conf.get_config()["KEY_PREFIX"], contains=contains, page=page)

    def _section_context(self, request: HttpRequest, data: dict[str, Any] | None) -> dict[str, Any]:
        """What the section templates need, the page's and ``fragments/``'s alike."""
        shown = _for_display(data) if data else None
        can_change = self.has_change_permission(request)
        return {
            "data": shown,
            "can_change": can_change,
            "q": request.GET.get("q", ""),
            "rows": _Rows(shown, can_change),
        }

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        error = None
        try:
            data = self._overview(request)
        except RedcoordError as exc:
            data, error = None, str(exc)
        context = {
            **self.admin_site.each_context(request),
            **self._section_context(request, data),
            "opts": self.opts,
            "title": "Coordination dashboard",
            "error": error,
            "sections": [
                {"id": section_id, "template": template, "css": css}
                for section_id, template, css in sections()
            ],
        }
        return TemplateResponse(request, "admin/django_redcoord/dashboard.html", context)

    def fragments_view(self, request: HttpRequest) -> JsonResponse:
        """Every section of the page rendered again, ``{section id: html}``, for the live refresh.

        The same query as the page (``q``, ``page``) and the same templates,
        so the rows cannot differ from a reload. 503 ``{error}`` when Redis
        cannot be read.
        """
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            data = self._overview(request)
        except RedcoordError as exc:
            return JsonResponse({"error": str(exc)}, status=503)
        context = self._section_context(request, data)
        return JsonResponse(
            {
                section_id: render_to_string(template, context, request)
                for section_id, template, _ in sections()
            }
        )

    def trouble_view(self, request: HttpRequest) -> JsonResponse:
        """The trouble panel alone, ``{"rc-section-trouble": html}`` as ``fragments/`` gives it,
        from
        only what it judges (``overview(only=TROUBLE_ONLY)``: no lock page, lock waits or
        charts)."""
        from ..core import get_client
        from ..dashboard import TROUBLE_ONLY, overview

        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            data = overview(get_client(), conf.get_config()["KEY_PREFIX"], only=TROUBLE_ONLY)
        except RedcoordError as exc:
            return JsonResponse({"error": str(exc)}, status=503)
        context = self._section_context(request, data)
        return JsonResponse(
            {
                s: render_to_string(t, context, request)
                for s, t, _ in sections()
                if s == "rc-section-trouble"
            }
        )

    def data_view(self, request: HttpRequest) -> JsonResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            return JsonResponse(self._overview(request))
        except RedcoordError as exc:
            return JsonResponse({"error": str(exc)}, status=503)

    def action_view(self, request: HttpRequest, action: str) -> HttpResponse:
        """Any registered action (:mod:`.actions`): a confirmation page on GET, done on POST."""
        act = ACTIONS.get(action)
        if not self.has_change_permission(request):
            raise PermissionDenied
        if act is None:
            raise Http404(f"no dashboard action {action!r}")
        params = request.POST if request.method == "POST" else request.GET
        try:
            # a job's name is part of its state key: no {tag} (registration refuses one too)
            call = Call(
                name=validate_name(
                    params.get("name", ""), "job name" if act.job else "name", tag=not act.job
                ),
                fence=_fence(params.get("fence", "0")) if "fence" in act.needs else None,
                key=validate_name(params.get("key", ""), "key") if "key" in act.needs else None,
                id=validate_name(params.get("id", ""), act.id_label) if "id" in act.needs else None,
                election=(
                    validate_name(params.get("election", "default"), "election")
                    if "election" in act.needs
                    else None
                ),
                by=request.user.get_username(),
            )
        except (TypeError, ValueError) as exc:
            messages.error(request, f"Not done: {exc}")
            return redirect(self._home())
        description = act.describe.format(
            name=call.name, fence=call.fence, key=call.key, id=call.id, election=call.election
        )
        if act.back == "dead_letters":
            back = self._dead_letters_url(call.name)
        elif act.back == "task_result":
            back = f"{self._task_result_url(call.id or '')}&{urlencode({'backend': call.name})}"
        else:
            back = self._home()
        if request.method != "POST":
            context = {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": "Are you sure?",
                "description": description,
                "consequence": act.consequence,
                "action": action,
                "name": call.name,
                "fence": call.fence,
                "key": call.key,
                "message_id": call.id,
                "election": call.election,
                "home": self._home(),
                "back": back,
            }
            return TemplateResponse(request, "admin/django_redcoord/confirm.html", context)
        try:
            outcome = act.run(call)
        except CoordinationUnavailable as exc:
            if not exc.sent:
                messages.error(request, f"Not done: {exc}")
                return redirect(back)
            # Sent, and no answer: a paused Redis runs it once it answers again. Said so on the
            # page and in the history, as the schedule page does.
            self.log_change(
                request,
                Dashboard(pk=1),
                f"Tried: {description}; unknown whether Redis did it ({type(exc).__name__}: {exc})",
            )
            messages.error(
                request,
                f"Unknown whether it was done: {exc}. Redis may still do it when it answers "
                "again: reload the page to see.",
            )
            return redirect(back)
        except (
            RedcoordError,
            TypeError,
            ValueError,
        ) as exc:  # a name a primitive refuses: say so, never a 500
            messages.error(request, f"Not done: {exc}")
            return redirect(back)
        self.log_change(request, Dashboard(pk=1), f"{description}: {outcome}")
        messages.success(request, f"{description}: {outcome}.")
        return redirect(back)

    def dead_letters_view(self, request: HttpRequest) -> HttpResponse:
        """A page of one queue's dead letters (newest first), with their errors and tracebacks."""
        from ..core import Queue
        from ..dashboard import PAGE_SIZE, list_dead_letters

        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            name = validate_name(request.GET.get("name", ""), "queue name")
        except (TypeError, ValueError) as exc:
            messages.error(request, f"No such queue: {exc}")
            return redirect(self._home())
        page = _page(request)
        error, data = None, None
        try:
            data = list_dead_letters(Queue(name), page=page, per_page=PAGE_SIZE)
        except RedcoordError as exc:
            error = str(exc)
        if data:
            for item in data["items"]:
                for field in ("summary", "error", "exception", "traceback"):
                    if isinstance(item.get(field), str):
                        item[field] = _visible(item[field])
                item["died_at"] = _local(item["died_ms"])
                item["enqueued_at"] = _local(item["enqueued_ms"])
                if item["result_id"]:
                    item["result_url"] = self._task_result_url(item["result_id"])
        here = self._dead_letters_url(name)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Dead letters of queue {name}",
            "queue": name,
            "data": data,
            "error": error,
            "can_change": self.has_change_permission(request),
            "home": self._home(),
            "previous_url": f"{here}&page={page - 1}" if page > 1 else None,
            "next_url": f"{here}&page={page + 1}" if data and page < data["pages"] else None,
        }
        return TemplateResponse(request, "admin/django_redcoord/dead_letters.html", context)

    def groups_view(self, request: HttpRequest) -> HttpResponse:
        """One queue's groups (core/queues/groups.py), busiest first: in line, claimed, waiting
        behind, and how long until its rate lets the next one start."""
        from ..core import Queue

        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            name = validate_name(request.GET.get("name", ""), "queue name")
        except (TypeError, ValueError) as exc:
            messages.error(request, f"No such queue: {exc}")
            return redirect(self._home())
        error, rows, total = None, None, 0
        try:
            queue = Queue(name)
            rows = queue.groups(limit=GROUPS_SHOWN)
            total = queue.depths().groups
        except RedcoordError as exc:
            error = str(exc)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Groups of queue {name}",
            "queue": name,
            "rows": rows,
            "total": total,
            "shown": GROUPS_SHOWN,
            "error": error,
            "home": self._home(),
        }
        return TemplateResponse(request, "admin/django_redcoord/groups.html", context)

    def workflows_view(self, request: HttpRequest) -> HttpResponse:
        """The running workflows of a Tasks backend, or one workflow (``?id=``) with its
        members, each linked to its task result."""
        from ..tasks.workflows import get_workflow, list_workflows

        if not self.has_view_permission(request):
            raise PermissionDenied
        aliases = our_task_backends()
        alias = request.GET.get("backend", "") or (aliases[0] if aliases else "")
        workflow_id = request.GET.get("id", "").strip()[:200]
        error, rows, workflow = None, None, None
        if alias not in aliases:
            error = (
                f"No Redis Tasks backend {alias!r} in TASKS."
                if alias
                else "No Redis Tasks backend in TASKS."
            )
        else:
            from ..tasks.backend import task_backends_for

            try:
                if workflow_id:
                    workflow = get_workflow(workflow_id, backend=alias)
                    for m in [
                        *workflow.members,
                        *([workflow.callback] if workflow.callback else []),
                    ]:
                        # a member not started (waiting, skipped) has no result to link to
                        started = m["state"] in ("started", "succeeded", "failed")
                        m["url"] = self._task_result_url(m["id"]) if started else ""
                else:
                    rows = list_workflows(task_backends_for(alias), limit=WORKFLOWS_SHOWN)
                    for row in rows:
                        row["created_at"] = _local(row["created_ms"])
            except (TypeError, ValueError) as exc:
                error = f"No such workflow: {exc}"
            except RedcoordError as exc:
                error = str(exc)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Workflow {workflow_id}" if workflow_id else "Running workflows",
            "alias": alias,
            "workflow_id": workflow_id,
            "workflow": workflow,
            "rows": rows,
            "shown": WORKFLOWS_SHOWN,
            "error": error,
            "home": self._home(),
        }
        return TemplateResponse(request, "admin/django_redcoord/workflows.html", context)

    def task_result_view(self, request: HttpRequest) -> HttpResponse:
        """Look a Django Task's result up by id, through its backend's ``get_result``."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        aliases = our_task_backends()
        result_id = request.GET.get("id", "").strip()[:300]
        alias = request.GET.get("backend", "") or (aliases[0] if aliases else "")
        result, problem, status = None, None, 200
        if result_id:
            if alias not in aliases:
                problem = (
                    f"No Redis Tasks backend {alias!r} in TASKS."
                    if alias
                    else "No Redis Tasks backend in TASKS."
                )
                status = 404
            else:
                result, problem, status = _read_result(alias, result_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Task result",
            "result_id": result_id,
            "alias": alias,
            "aliases": aliases,
            "result": result,
            "problem": problem,
            "can_cancel": bool(result)
            and result["status"] in ("READY", "RUNNING")
            and self.has_change_permission(request),
            "cancel_url": reverse(
                "admin:django_redcoord_dashboard_action",
                args=["cancel-task"],
                current_app=self.admin_site.name,
            )
            + "?"
            + urlencode({"name": alias, "id": result_id}),
            "home": self._home(),
        }
        return TemplateResponse(
            request, "admin/django_redcoord/task_result.html", context, status=status
        )

    def _dead_letters_url(self, name: str) -> str:
        url = reverse(
            "admin:django_redcoord_dashboard_dead_letters", current_app=self.admin_site.name
        )
        return f"{url}?{urlencode({'name': name})}"

    def _task_result_url(self, result_id: str) -> str:
        url = reverse(
            "admin:django_redcoord_dashboard_task_result", current_app=self.admin_site.name
        )
        return f"{url}?{urlencode({'id': result_id})}"

    def _home(self) -> str:
        return reverse(
            "admin:django_redcoord_dashboard_changelist", current_app=self.admin_site.name
        )


#: Control characters but newline and tab, and the invisible format characters (bidirectional
#: overrides, zero-width) that make a line read differently from what it holds.
_INVISIBLE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    r"\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def _visible(text: str) -> str:
    """``text`` from a message (anyone who can push can write it) with each character of
    :data:`_INVISIBLE` written as an escape (``\\x1b``, ``\\u202e``), as the CLI prints it."""
    return _INVISIBLE.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) <= 0xFF else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def _fence(text: str) -> int:
    """A fencing token from a form: ASCII digits, at most 20 (a token is below 2**64)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 20):
        raise ValueError(
            f"the fence must be a whole number of at most 20 digits (0-9), not {text[:40]!r}: "
            "reload the page"
        )
    return int(text)


def _page(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def _local(ms: int | None) -> datetime | None:
    """A time in ms since the epoch as an aware datetime in the current time zone (TIME_ZONE)."""
    if not ms:
        return None
    return timezone.localtime(datetime.fromtimestamp(ms / 1000, tz=dt_timezone.utc))


def _for_display(data: dict[str, Any]) -> dict[str, Any]:
    """The overview with what the templates show beside the JSON: times as aware
    datetimes in TIME_ZONE (``*_at``) and the charts (``charts``) of each queue and lock name
    waited for."""
    from ..dashboard import sparkline

    now_ms = data["server_time_ms"]
    data = {**data, "server_time": _local(now_ms)}
    data["locks"] = {
        **data["locks"],
        "items": [{**x, "acquired_at": _local(x["acquired_ms"])} for x in data["locks"]["items"]],
    }

    def charted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                **x,
                "charts": {
                    series: sparkline(points, now_ms=now_ms)
                    for series, points in x.get("history", {}).items()
                },
            }
            for x in rows
        ]

    data["queues"] = charted(data["queues"])
    data["lock_waits"] = {**data["lock_waits"], "items": charted(data["lock_waits"]["items"])}
    data["leaders"] = [
        {
            **e,
            "leader": e["leader"] and {**e["leader"], "since_at": _local(e["leader"]["since_ms"])},
            "jobs": [
                {
                    **j,
                    "last_start_at": _local(_ms(j.get("last_start"))),
                    "next_due_at": _local(_ms(j.get("next_due"))),
                }
                for j in e["jobs"]
            ],
        }
        for e in data["leaders"]
    ]
    return data


class _Rows:
    """The big tables' rows (:mod:`.admin_rows`), each written when a template first asks for it
    (the trouble panel alone asks for none)."""

    def __init__(self, data: dict[str, Any] | None, can_change: bool) -> None:
        self._data, self._can_change = data or {}, can_change

    @cached_property
    def locks(self) -> str:
        return lock_rows(self._data.get("locks", {}).get("items", ()), self._can_change)

    @cached_property
    def lock_waits(self) -> str:
        return lock_wait_rows(self._data.get("lock_waits", {}).get("items", ()))

    @cached_property
    def queues(self) -> str:
        return queue_rows(self._data.get("queues", ()), self._can_change)


def _ms(value: Any) -> int | None:
    """A time field of a job's state (ms since the epoch), or None if it is not one."""
    return value if isinstance(value, int) and value > 0 else None


def _unique_of(backend: Any, result_id: str) -> str | None:
    """``key (holds it)`` / ``key (freed)`` for a unique task, else None (or why it is unknown)."""
    try:
        found = backend.unique_of(result_id)
    except Exception as exc:  # noqa: BLE001 - the page shows the rest all the same
        return f"unknown ({exc})"
    if found is None:
        return None
    key, holds = found
    return f"{key} ({'holds it' if holds else 'freed'})"


def _workflow_of(backend: Any, result_id: str) -> dict[str, Any]:
    """The workflow a task is a member of (``workflow``, ``workflow_member``) and its group,
    when it has them: one read."""
    try:
        values = backend.client.hmget(
            backend._result_key(result_id), ["workflow", "workflow_member", "group"]
        )
    except Exception:  # noqa: BLE001 - the page shows the rest all the same
        return {}
    workflow, member, group = (v.decode() if isinstance(v, bytes) else v for v in values)
    return {"workflow": workflow, "workflow_member": member, "group": group}


def _read_result(alias: str, result_id: str) -> tuple[dict[str, Any] | None, str | None, int]:
    """(what the page shows of a task result, None, 200) or (None, why there is none, its HTTP
    status)."""
    import json

    from ..tasks.backend import task_backends_for
    from ..tasks.compat import TaskResultDoesNotExist, TaskResultStatus

    try:
        backend = task_backends_for(alias)
    except Exception as exc:  # a misconfigured backend: say so on the page
        return None, f"The Tasks backend {alias!r} is not usable: {exc}", 503
    try:
        result = backend.get_result(result_id)
    except TaskResultDoesNotExist as exc:
        why = str(exc).strip("'\"")
        detail = "" if why in ("", result_id) else f" ({why})"
        return (
            None,
            (
                f"No such result: {result_id!r}{detail}. Results are kept {backend.result_ttl} s "
                "(RESULT_TTL) after they finish (or are due): it may have expired, or the id is "
                "not one of this backend's."
            ),
            404,
        )
    except RedcoordError as exc:
        return None, f"The result could not be read: {exc}", 503
    task = result.task

    def short(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 500 else text[:499] + "…"

    shown = {
        "id": result.id,
        "status": str(result.status),
        "task": task.module_path,
        "queue": task.queue_name,
        "priority": task.priority,
        "args": short(result.args),
        "kwargs": short(result.kwargs),
        "attempts": len(result.worker_ids),
        "worker_ids": list(result.worker_ids),
        "unique": _unique_of(backend, result.id),
        **_workflow_of(backend, result.id),
        "errors": [
            {"exception": e.exception_class_path, "traceback": e.traceback} for e in result.errors
        ],
        "enqueued_at": result.enqueued_at and timezone.localtime(result.enqueued_at),
        "started_at": result.started_at and timezone.localtime(result.started_at),
        "last_attempted_at": result.last_attempted_at
        and timezone.localtime(result.last_attempted_at),
        "finished_at": result.finished_at and timezone.localtime(result.finished_at),
        "run_after": task.run_after and timezone.localtime(task.run_after),
        "return_value": short(result.return_value)
        if result.status == TaskResultStatus.SUCCESSFUL
        else None,
    }
    return shown, None, 200
