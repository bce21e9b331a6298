from django.contrib import admin
from django.urls import path

from django_redcoord.health import health_view

from . import views

urlpatterns = [
    # the operators' pages: the dashboard, its panels, schedule edits, the health probe
    path("admin/", admin.site.urls),
    path("-/health", health_view),
    path("ping/", views.ping),
    path("whoami/", views.whoami),
    path("signin/<str:username>/", views.sign_in),
    # exclusion across the server's processes and threads
    path("unguarded/", views.unguarded),
    path("lock/fn/", views.lock_fn),
    path("lock/afn/", views.lock_afn),
    path("lock/cbv/", views.LockView.as_view()),
    path("lock/acbv/", views.AsyncLockView.as_view()),
    path("lock/method/", views.MethodLockView.as_view()),
    path("lock/md/<slug:slug>/", views.MethodDecoratedLockView.as_view()),
    path("lock/amd/<slug:slug>/", views.AsyncMethodDecoratedLockView.as_view()),
    path("lock/drf/<int:pk>/", views.DrfLockView.as_view()),
    path("busy/md/<slug:slug>/", views.MethodDecoratedBusyView.as_view()),
    path("busy/amd/<slug:slug>/", views.AsyncMethodDecoratedBusyView.as_view()),
    path("busy/drf/<int:pk>/", views.DrfBusyView.as_view()),
    path("sem/fn/", views.semaphore_fn),
    path("sem/afn/", views.semaphore_afn),
    path("rw/read/", views.rw_read),
    path("rw/write/", views.rw_write),
    path("rw/aread/", views.AsyncReadView.as_view()),
    path("rw/awrite/", views.AsyncWriteView.as_view()),
    # streamed responses
    path("stream/lock/", views.stream_lock),
    path("stream/alock/", views.stream_alock),
    path("stream/sem/", views.stream_semaphore),
    path("stream/rl/", views.stream_rate_limit),
    path("stream/arl/", views.stream_arate_limit),
    path("mw/stream/", views.stream_middleware),
    path("stream/naive/", views.stream_naive_lock),
    # rate limits
    path("rl/ip/", views.limited_ip),
    path("rl/aip/", views.limited_aip),
    path("rl/user/", views.limited_user),
    path("rl/auser/", views.limited_auser),
    path("rl/login/", views.LoginView.as_view()),
    path("rl/search/", views.SearchView.as_view()),
    path("rl/alogin/", views.AsyncLoginView.as_view()),
    path("rl/asearch/", views.AsyncSearchView.as_view()),
    path("mw/ip/", views.middleware_limited),
    path("mw/user/", views.middleware_limited),
    path("mw/form/", views.middleware_limited),
    # DRF
    path("drf/concurrency/", views.DrfConcurrency.as_view()),
    path("drf/user/", views.DrfUser.as_view()),
    path("drf/local/", views.DrfLocal.as_view()),
]
