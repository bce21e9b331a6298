"""Views and plain callables decorated with @with_lock, for test_decorators."""

from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import path
from django.views import View

from django_redcoord import (
    Lock,
    current_lock,
    rate_limit,
    with_lock,
    with_read_lock,
    with_semaphore,
    with_write_lock,
)

LOCK = {"ttl": 5, "wait": 0}


def _describe(request, **extra):
    lock = request.redcoord_lock
    return JsonResponse(
        {"name": lock.name, "token": lock.token, "same": current_lock() is lock, **extra}
    )


@with_lock("invoice:{pk}", **LOCK)
def invoice(request, pk):
    return _describe(request)


@with_lock("user:{request.user.pk}", **LOCK)
def by_user(request):
    return _describe(request)


class ReportView(View):
    @with_lock("report:{kwargs[slug]}", **LOCK)
    def get(self, request, *args, **kwargs):
        return _describe(request, view="method")


@with_lock("export:{kwargs[slug]}", **LOCK)
class ExportView(View):
    def get(self, request, slug):
        return _describe(request, view="class")


@with_lock("async-export:{kwargs[slug]}", **LOCK)
class AsyncExportView(View):  # async handlers: the lock is held while they run
    async def get(self, request, slug):
        held = await Lock(f"async-export:{slug}", ttl=5).alocked()
        return JsonResponse({"name": request.redcoord_lock.name, "held_meanwhile": held})


def teapot(request, exc):
    return HttpResponse(f"busy: {exc.name}", status=418)


@with_lock("custom:{pk}", on_busy=teapot, **LOCK)
def custom_busy(request, pk):
    return _describe(request)


@with_lock("async:{pk}", **LOCK)
async def async_view(request, pk):
    return _describe(request, kind="async")


@with_lock("stream:{pk}", **LOCK)
def stream_view(request, pk):
    lock = request.redcoord_lock

    def body():
        for i in range(3):
            yield f"{i}:{'held' if lock.owned() else 'free'}\n"

    return StreamingHttpResponse(body())


@with_lock("astream:{pk}", **LOCK)
async def async_stream_view(request, pk):
    lock = request.redcoord_lock

    async def body():
        for i in range(3):
            yield f"{i}:{'held' if lock.held else 'free'}\n"

    return StreamingHttpResponse(body())


def unavailable_teapot(request, exc):
    return HttpResponse(f"down: {exc.operation}", status=418)


@with_lock("unavail:{pk}", on_unavailable=unavailable_teapot, **LOCK)
def custom_unavailable(request, pk):
    return _describe(request)


@with_semaphore("exports:{kind}", permits=2, ttl=5, wait=0)
def limited_export(request, kind):
    return _describe(request, permits=request.redcoord_lock.permits)


@with_semaphore("exports:{kind}", permits=2, ttl=5, wait=0)
async def async_limited_export(request, kind):
    return _describe(request, permits=request.redcoord_lock.permits)


@with_read_lock("catalog:{pk}", ttl=5, wait=0)
def read_catalog(request, pk):
    return _describe(request, kind=request.redcoord_lock.kind)


@with_write_lock("catalog:{pk}", ttl=5, wait=0)
async def write_catalog(request, pk):
    return _describe(request, kind=request.redcoord_lock.kind)


@with_lock("report:{request.user.pk}", ttl=5, wait=0)
async def user_report(request):  # the name reads the signed-in user, on the event loop
    return JsonResponse({"lock": request.redcoord_lock.name})


@rate_limit("3/m", key="ip", name="t-search")
def limited_search(request):
    decision = request.ratelimit  # None when Redis could not be reached (fail-open)
    return JsonResponse({"remaining": decision.remaining if decision else None})


@rate_limit("2/m", key="user", methods=["POST"], name="t-post")
async def limited_post(request):
    return JsonResponse({"ok": True})


@rate_limit("1/m", key=lambda request: request.user.username, name="t-by-name")
async def limited_by_name(request):  # a plain key function reading request.user, on an async view
    return JsonResponse({"ok": True})


async def _user_email(request):
    return (await request.auser()).email


@rate_limit("1/m", key=_user_email, name="t-by-email")
async def limited_by_email(request):  # an async key function
    return JsonResponse({"ok": True})


@rate_limit("1/m", key="ip", name="t-cbv")
class LimitedView(View):  # a whole class-based view (its dispatch)
    def get(self, request):
        return JsonResponse({"ok": True})


class LimitedMethodView(View):  # one method of a class-based view
    @rate_limit("1/m", key="ip", name="t-cbv-method")
    def post(self, request):
        return JsonResponse({"ok": True})

    def get(self, request):
        return JsonResponse({"ok": True})


@rate_limit("1/m", key="ip", name="t-async-cbv")
class AsyncLimitedView(View):  # an async class-based view
    async def get(self, request):
        return JsonResponse({"ok": True})


@rate_limit("1/m", key="ip", block=False, name="t-soft")
def soft_limit(request):
    return JsonResponse({"allowed": request.ratelimit.allowed})


@rate_limit("1/m", key="ip", on_unavailable="closed", name="t-closed")
def closed_when_down(request):
    return JsonResponse({"ok": True})


@rate_limit("concurrency=1", key="ip", name="t-one")
def one_at_a_time(request):
    return JsonResponse({"ok": True})


urlpatterns = [
    path("rl/search/", limited_search),
    path("report/", user_report),
    path("rl/post/", limited_post),
    path("rl/cbv/", LimitedView.as_view()),
    path("rl/cbv-method/", LimitedMethodView.as_view()),
    path("rl/async-cbv/", AsyncLimitedView.as_view()),
    path("rl/by-name/", limited_by_name),
    path("rl/by-email/", limited_by_email),
    path("rl/soft/", soft_limit),
    path("rl/closed/", closed_when_down),
    path("rl/one/", one_at_a_time),
    path("catalog/<int:pk>/", read_catalog),
    path("catalog/<int:pk>/write/", write_catalog),
    path("limited/<slug:kind>/", limited_export),
    path("alimited/<slug:kind>/", async_limited_export),
    path("stream/<int:pk>/", stream_view),
    path("astream/<int:pk>/", async_stream_view),
    path("unavailable/<int:pk>/", custom_unavailable),
    path("invoice/<int:pk>/", invoice),
    path("me/", by_user),
    path("report/<slug:slug>/", ReportView.as_view()),
    path("export/<slug:slug>/", ExportView.as_view()),
    path("async-export/<slug:slug>/", AsyncExportView.as_view()),
    path("custom/<int:pk>/", custom_busy),
    path("async/<int:pk>/", async_view),
]
