"""The coordination dashboard inside the Django admin.

``/admin/django_redcoord/dashboard/`` shows live locks, semaphores, queues,
workers, the leader and periodic jobs; ``data.json`` feeds the live refresh. Seeing needs
``django_redcoord.view_dashboard``; acting needs ``change_dashboard``. Every
action is confirmed on a GET page and done by a POST with a CSRF token, and
is written to the admin's LogEntry history.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from . import conf
from .core.exceptions import RedcoordError
from .core.keys import validate_name
from .models import Dashboard

ACTIONS = {
    "force-release": "Force-release lock {name} (fencing token {fence})",
    "revoke-permit": "Revoke the permit of semaphore {name} with fencing token {fence}",
    "reset-ratelimit": "Reset what key {key} counted in rate limit {name}",
    "requeue-dead": "Requeue the dead letters of queue {name}",
    "purge-dead": "Delete the dead letters of queue {name}",
    "purge-queue": "Delete every ready and delayed message of queue {name}",
}
CONSEQUENCES = {
    "force-release": "The holder keeps running but its lock is gone: its next release or extend "
    "raises LockLost. The oldest waiter, if any, gets the lock now. Nothing happens if the "
    "lock has changed hands since you looked.",
    "revoke-permit": "Its holder keeps running but its permit is gone: its next release or extend "
    "raises LockLost. The oldest waiter, if any, gets the permit now. Nothing happens if that "
    "grant has ended since you looked.",
    "reset-ratelimit": "The key's counts are forgotten: its next requests pass as if it had made none "
    "(up to the policy's burst). Other keys are not touched.",
    "requeue-dead": "The dead letters go back to the ready queue with their attempts reset; "
    "workers will run them again.",
    "purge-dead": "The dead letters and their errors are deleted for good.",
    "purge-queue": "Every message waiting in the queue (ready or delayed) is deleted for good. "
    "Messages being processed and dead letters stay.",
}


@admin.register(Dashboard)
class DashboardAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        user = request.user
        return user.is_active and (user.has_perm("django_redcoord.view_dashboard") or self.has_change_permission(request))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.has_perm("django_redcoord.change_dashboard")

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        base = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("", wrap(self.dashboard_view), name=f"{base}_changelist"),
            path("data.json", wrap(self.data_view), name=f"{base}_data"),
            path("action/<slug:action>/", wrap(self.action_view), name=f"{base}_action"),
        ]

    # -- views ----------------------------------------------------------------

    def _overview(self, request: HttpRequest) -> dict[str, Any]:
        from .core.transport.clients import get_client
        from .dashboard import overview

        contains = request.GET.get("q", "").strip()[:200]
        try:
            page = max(1, int(request.GET.get("page", "1")))
        except ValueError:
            page = 1
        return overview(get_client(), conf.get_config()["KEY_PREFIX"], contains=contains, page=page)

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
            "opts": self.opts,
            "title": "Coordination dashboard",
            "data": data,
            "error": error,
            "can_change": self.has_change_permission(request),
            "q": request.GET.get("q", ""),
        }
        return TemplateResponse(request, "admin/django_redcoord/dashboard.html", context)

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
            name = validate_name(params.get("name", ""), "name")
            fence = int(params.get("fence", "0")) if action in ("force-release", "revoke-permit") else None
            key = validate_name(params.get("key", ""), "key") if action == "reset-ratelimit" else None
        except (TypeError, ValueError) as exc:
            messages.error(request, f"Not done: {exc}")
            return redirect(self._home())
        description = ACTIONS[action].format(name=name, fence=fence, key=key)
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
                "home": self._home(),
            }
            return TemplateResponse(request, "admin/django_redcoord/confirm.html", context)
        try:
            outcome = self._act(action, name, fence, key)
        except RedcoordError as exc:
            messages.error(request, f"Not done: {exc}")
            return redirect(self._home())
        self.log_change(request, Dashboard(pk=1), f"{description}: {outcome}")
        messages.success(request, f"{description}: {outcome}.")
        return redirect(self._home())

    def _act(self, action: str, name: str, fence: int | None, key: str | None = None) -> str:
        from .core.locks import force_release
        from .core.queues import Queue

        if action == "force-release":
            return force_release(name, fence or 0)
        if action == "reset-ratelimit":
            from .core.ratelimit import reset_key

            try:
                return f"{reset_key(name, key or '')} key(s) deleted"
            except ValueError as exc:
                return f"nothing done: {exc}"
        if action == "revoke-permit":
            from .core.semaphores import revoke_permit

            return revoke_permit(name, fence or 0)
        queue = Queue(name)
        if action == "requeue-dead":
            return f"{queue.requeue_dead(limit=100_000)} message(s) requeued"
        if action == "purge-dead":
            queue.purge_dead()
            return "dead letters deleted"
        queue.purge()
        return "queue purged"

    def _home(self) -> str:
        return reverse("admin:django_redcoord_dashboard_changelist", current_app=self.admin_site.name)
