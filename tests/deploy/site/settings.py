"""Settings of the deployment matrix's site (tests/deploy): served by real gunicorn/uvicorn
processes.

Everything that differs per deployment comes from the environment, set by
``tests/deploy/servers.py``: the Redis URL, the SQLite file, and whether the
peer on the Unix socket (nginx) is a trusted proxy.
"""

import os

# REDCOORD["TRUSTED_PROXIES"] of the deployments behind nginx on a Unix
# socket: how the site says "the peer on our Unix socket is a trusted proxy".
# The one place to change if the setting's vocabulary changes.
TRUSTED_PROXIES_BEHIND_NGINX = ["unix"]

SECRET_KEY = "deploy-matrix-test-only"
DEBUG = False
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "tests.deploy.site.urls"
WSGI_APPLICATION = "tests.deploy.site.wsgi.application"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",  # the operators' pages (dashboard, schedules) as deployed
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "rest_framework",
    "django_redcoord",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_redcoord.middleware.RateLimitMiddleware",  # after auth: key="user" sees the user
]
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"  # no session table writes
# No CsrfViewMiddleware: the admin's views (ours included) must protect themselves (admin_view)
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
STATIC_URL = "/static/"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DEPLOY_DB", ":memory:"),
        "OPTIONS": {"timeout": 30},
    }
}

REDCOORD = {
    "URL": os.environ.get("DEPLOY_REDIS_URL", "redis://127.0.0.1:1/0"),
    "KEY_PREFIX": "deploy",
    "JOBS": ["tests.deploy.site.jobs"],
    # DEPLOY_BEHIND_PROXY=1: served on a Unix socket behind nginx, which is trusted
    "TRUSTED_PROXIES": TRUSTED_PROXIES_BEHIND_NGINX
    if os.environ.get("DEPLOY_BEHIND_PROXY") == "1"
    else [],
    "RATE_LIMITS": [
        {"path": "/mw/ip/", "policy": "2/m", "key": "ip"},
        {"path": "/mw/user/", "policy": "2/m", "key": "user"},
        # one path, two rules by method: each keeps its own state
        {"path": "/mw/form/", "policy": "2/m", "key": "ip", "methods": ["POST"]},
        {"path": "/mw/form/", "policy": "20/m", "key": "ip", "methods": ["GET"]},
        {"path": "/mw/stream/", "policy": "concurrency=1;lease=60", "key": "ip"},
    ],
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django": {"handlers": ["console"], "level": "ERROR"},
        "django_redcoord": {"handlers": ["console"], "level": "WARNING"},
    },
}
