"""The coordination dashboard inside the Django admin.

``/admin/django_redcoord/dashboard/`` shows live locks, semaphores, queues
(with a chart of their last hour), workers, the leader and periodic jobs;
``fragments/`` feeds the live refresh with each section rendered again by the
same templates (``{section id: html}``); ``data.json`` is the same data for
other tools;
``dead-letters/?name=<queue>`` lists a queue's dead letters a page at a time;
``task-result/?id=<id>`` looks a Django Task's result up. Seeing needs
``django_redcoord.view_dashboard``; acting needs ``change_dashboard``. Every
action is confirmed on a GET page and done by a POST with a CSRF token, and
is written to the admin's LogEntry history.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.functional import cached_property

from . import conf
from .admin_rows import lock_rows, lock_wait_rows, queue_rows
from .admin_schedules import schedule_urls
from .core import RedcoordError, validate_name
from .models import Dashboard

ACTIONS = {
    "force-release": "Force-release lock {name} (fencing token {fence})",
    "revoke-permit": "Revoke the permit of semaphore {name} with fencing token {fence}",
    "reset-ratelimit": "Reset what key {key} counted in rate limit {name}",
    "requeue-dead": "Requeue the dead letters of queue {name}",
    "purge-dead": "Delete the dead letters of queue {name}",
    "purge-queue": "Delete every ready and delayed message of queue {name}",
    "pause-queue": "Pause queue {name}",
    "resume-queue": "Resume queue {name}",
    "requeue-dead-letter": "Requeue dead letter {id} of queue {name}",
    "delete-dead-letter": "Delete dead letter {id} of queue {name}",
    "run-job": "Ask the leader of election {election} to run periodic job {name} now",
    "pause-job": "Pause periodic job {name} of election {election}",
    "resume-job": "Resume periodic job {name} of election {election}",
    "cancel-task": "Cancel task {id} of Tasks backend {name}",
}
#: Actions on periodic jobs: they name the election too.
JOB_ACTIONS = ("run-job", "pause-job", "resume-job")
#: Actions on dead letters: they return to the queue's dead-letter page.
DEAD_LETTER_ACTIONS = ("requeue-dead", "purge-dead", "requeue-dead-letter", "delete-dead-letter")
CONSEQUENCES = {
    "force-release": "The holder keeps running but its lock is gone: its next release or extend "
    "raises LockLost. The oldest waiter, if any, gets the lock now. Nothing happens if the "
    "lock has changed hands since you looked.",
    "revoke-permit": "Its holder keeps running but its permit is gone: its next release or extend "
    "raises LockLost. The oldest waiter, if any, gets the permit now. Nothing happens if that "
    "grant has ended since you looked.",
    "reset-ratelimit": "The key's counts are forgotten: its next requests pass as if it had made "
    "none (up to the policy's burst). Other keys are not touched.",
    "requeue-dead": "The dead letters go back to the ready queue with their attempts reset; "
    "workers will run them again.",
    "purge-dead": "The dead letters and their errors are deleted for good.",
    "purge-queue": "Every message waiting in the queue (ready or delayed) is deleted for good. "
    "Messages being processed and dead letters stay.",
    "pause-queue": "Its workers claim nothing new from it until it is resumed. Pushes go on and "
    "wait in it; jobs a worker already claimed finish (each worker thread may hold "
    "up to WORKER_PREFETCH claimed messages). The pause lasts across worker "
    "restarts; the dashboard shows it.",
    "resume-queue": "Its workers claim from it again at once, in the usual order.",
    "requeue-dead-letter": "The message goes back to the ready queue with its attempts reset, and "
    "its error is forgotten; a worker will run it again. Nothing happens "
    "if it is no longer a dead letter.",
    "delete-dead-letter": "The message and its error are deleted for good (a task's result record "
    "stays until RESULT_TTL). Nothing happens if it is no longer a dead "
    "letter.",
    "run-job": "The current leader runs the job once, under its term, at its next check (within "
    "its retry period); the schedule does not move. If no leader claims the request "
    "within 5 minutes it is dropped.",
    "pause-job": "The leader skips the job's slots (counted as missed) until it is resumed. A run "
    "already going on is not stopped; Run now still works.",
    "resume-job": "The job runs again from its next slot; the slots skipped while paused are not "
    "caught up.",
    "cancel-task": "A task still waiting in its queue is taken out and never runs. One a worker "
    "already holds is told: an async task gets CancelledError, a sync task sees "
    "context.cancelled(), and one still running CANCEL_GRACE seconds later is "
    "abandoned (its worker exits to be restarted). Either way the result reads "
    "FAILED with a TaskCancelled error at once, and whatever the attempt still "
    "reports is dropped. Nothing happens if the task has finished.",
}


#: The page's sections, in order: (element id, fragment template, CSS class).
#: The page includes each template in an element of that id; the live
#: refresh swaps in what ``fragments/`` renders from the same templates.
SECTIONS = tuple(
    (section_id, f"admin/django_redcoord/fragments/{name}.html", css)
    for section_id, name, css in (
        ("rc-asof", "asof", "rc-asof rc-muted"),
        ("rc-section-trouble", "trouble", "module rc-section rc-trouble-panel"),
        ("rc-section-locks", "locks", "module rc-section"),
        ("rc-section-lockwaits", "lockwaits", "module rc-section"),
        ("rc-section-semaphores", "semaphores", "module rc-section"),
        ("rc-section-rwlocks", "rwlocks", "module rc-section"),
        ("rc-section-latches", "latches", "module rc-section"),
        ("rc-section-signals", "signals", "module rc-section"),
        ("rc-section-ratelimits", "ratelimits", "module rc-section"),
        ("rc-section-queues", "queues", "module rc-section"),
        ("rc-section-workers", "workers", "module rc-section"),
        ("rc-leaders", "leaders", "module rc-section"),
    )
)


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
            path("task-result/", wrap(self.task_result_view), name=f"{base}_task_result"),
            *schedule_urls(
                self
            ),  # schedule/?name=<job>&election=<election>: the "Edit schedule" page
        ]

    # -- views ----------------------------------------------------------------

    def _overview(self, request: HttpRequest) -> dict[str, Any]:
        from .core import get_client
        from .dashboard import overview

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
                for section_id, template, css in SECTIONS
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
                for section_id, template, _ in SECTIONS
            }
        )

    def trouble_view(self, request: HttpRequest) -> JsonResponse:
        """The trouble panel alone, ``{"rc-section-trouble": html}`` as ``fragments/`` gives it,
        from
        only what it judges (``overview(only=TROUBLE_ONLY)``: no lock page, lock waits or
        charts)."""
        from .core import get_client
        from .dashboard import TROUBLE_ONLY, overview

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
                for s, t, _ in SECTIONS
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
        if action not in ACTIONS or not self.has_change_permission(request):
            raise PermissionDenied
        params = request.POST if request.method == "POST" else request.GET
        try:
            # a job's name is part of its state key: no {tag} (registration refuses one too)
            name = validate_name(
                params.get("name", ""),
                "job name" if action in JOB_ACTIONS else "name",
                tag=action not in JOB_ACTIONS,
            )
            fence = (
                int(params.get("fence", "0"))
                if action in ("force-release", "revoke-permit")
                else None
            )
            key = (
                validate_name(params.get("key", ""), "key") if action == "reset-ratelimit" else None
            )
            mid = (
                validate_name(
                    params.get("id", ""), "message id" if action != "cancel-task" else "result id"
                )
                if action.endswith("-dead-letter") or action == "cancel-task"
                else None
            )
            election = (
                validate_name(params.get("election", "default"), "election")
                if action in JOB_ACTIONS
                else None
            )
        except (TypeError, ValueError) as exc:
            messages.error(request, f"Not done: {exc}")
            return redirect(self._home())
        description = ACTIONS[action].format(
            name=name, fence=fence, key=key, id=mid, election=election
        )
        back = self._dead_letters_url(name) if action in DEAD_LETTER_ACTIONS else self._home()
        if action == "cancel-task":
            back = f"{self._task_result_url(mid or '')}&{urlencode({'backend': name})}"
        if request.method != "POST":
            context = {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": "Are you sure?",
                "description": description,
                "consequence": CONSEQUENCES[action],
                "action": action,
                "name": name,
                "fence": fence,
                "key": key,
                "message_id": mid,
                "election": election,
                "home": self._home(),
                "back": back,
            }
            return TemplateResponse(request, "admin/django_redcoord/confirm.html", context)
        try:
            if action in JOB_ACTIONS:
                outcome = self._act_on_job(
                    action, election or "default", name, by=request.user.get_username()
                )
            elif action == "pause-queue":
                outcome = self._pause_queue(name, by=request.user.get_username())
            elif action == "cancel-task":
                outcome = self._cancel_task(name, mid or "")
            else:
                outcome = self._act(action, name, fence, key, mid)
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

    def _act_on_job(self, action: str, election: str, name: str, *, by: str) -> str:
        from .core import LeaderElection, pause_job, request_run, resume_job

        leader = LeaderElection(election)  # only its client and keys: it does not campaign
        if action == "run-job":
            return f"request {request_run(leader, name, by=by or None)} queued for the leader"
        if action == "pause-job":
            return "paused" if pause_job(leader, name) else "it was paused already"
        return "resumed" if resume_job(leader, name) else "it was not paused"

    def _cancel_task(self, alias: str, result_id: str) -> str:
        from .tasks.backend import task_backends_for
        from .tasks.cancel import Cancel
        from .tasks.compat import TaskResultDoesNotExist

        if alias not in _our_task_backends():
            raise ValueError(f"no Redis Tasks backend {alias!r} in TASKS")
        try:
            outcome = task_backends_for(alias).cancel(result_id)
        except TaskResultDoesNotExist:
            raise ValueError(f"no task result {result_id!r} (it may have expired)") from None
        return {
            Cancel.REMOVED: "taken out of its queue; it will not run",
            Cancel.REQUESTED: "a worker holds it; it was told to stop, and its outcome will be "
            "dropped",
            Cancel.FINISHED: "it had finished already; nothing changed",
        }[outcome]

    def _pause_queue(self, name: str, *, by: str) -> str:
        from .core import Queue

        return (
            "paused"
            if Queue(name).pause(f"paused in the admin by {by}"[:500])
            else "it was paused already"
        )

    def _act(
        self,
        action: str,
        name: str,
        fence: int | None,
        key: str | None = None,
        mid: str | None = None,
    ) -> str:
        from .core import Queue, force_release

        if action == "force-release":
            return force_release(name, fence or 0)
        if action == "reset-ratelimit":
            from .core import reset_key

            try:
                return f"{reset_key(name, key or '')} key(s) deleted"
            except ValueError as exc:
                return f"nothing done: {exc}"
        if action == "revoke-permit":
            from .core import revoke_permit

            return revoke_permit(name, fence or 0)
        from .dashboard import purge_dead_letters

        queue = Queue(name)
        if action == "requeue-dead":
            return f"{queue.requeue_dead(limit=100_000)} message(s) requeued"
        if action == "purge-dead":
            return f"{purge_dead_letters(queue)} dead letter(s) deleted"
        if action == "resume-queue":
            return "resumed" if queue.resume() else "it was not paused"
        gone = "0: it is no longer a dead letter (requeued, deleted or dropped since)"
        if action == "requeue-dead-letter":
            return (
                "1 message requeued"
                if queue.requeue_dead_letter(mid or "")
                else f"{gone}, nothing requeued"
            )
        if action == "delete-dead-letter":
            return (
                "1 dead letter deleted"
                if queue.delete_dead_letter(mid or "")
                else f"{gone}, nothing deleted"
            )
        queue.purge()
        return "queue purged"

    def dead_letters_view(self, request: HttpRequest) -> HttpResponse:
        """A page of one queue's dead letters (newest first), with their errors and tracebacks."""
        from .core import Queue
        from .dashboard import PAGE_SIZE, list_dead_letters

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

    def task_result_view(self, request: HttpRequest) -> HttpResponse:
        """Look a Django Task's result up by id, through its backend's ``get_result``."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        aliases = _our_task_backends()
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
    from .dashboard import sparkline

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


def _our_task_backends() -> list[str]:
    """Aliases of TASKS whose backend is ours (the others keep no results in our Redis)."""
    from django.utils.module_loading import import_string

    from .tasks.backend import RedisTaskBackend

    aliases = []
    for alias, config in (getattr(settings, "TASKS", None) or {}).items():
        try:
            backend = import_string(config["BACKEND"])
        except (ImportError, KeyError, TypeError):
            continue  # Django's own check reports it
        if isinstance(backend, type) and issubclass(backend, RedisTaskBackend):
            aliases.append(alias)
    return aliases


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


def _read_result(alias: str, result_id: str) -> tuple[dict[str, Any] | None, str | None, int]:
    """(what the page shows of a task result, None, 200) or (None, why there is none, its HTTP
    status)."""
    import json

    from .tasks.backend import task_backends_for
    from .tasks.compat import TaskResultDoesNotExist, TaskResultStatus

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
