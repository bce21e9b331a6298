"""Settings of the demo site (also used by the test suite).

Redis: ``REDCOORD_REDIS_URL`` from the environment, else the embedded
development Redis (a private redis-server on a unix socket in ./.redcoord).
"""

import os
from pathlib import Path

import django

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "demo-only-insecure-key-do-not-deploy")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_redcoord",
    "django_redcoord.outbox",  # the task outbox's table (used when a backend sets OUTBOX)
    "testproject.demo",
]
if django.VERSION < (6, 0):
    INSTALLED_APPS.append("django_tasks")  # the Tasks API backport (built in from Django 6)

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "testproject.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "testproject.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DEMO_DB_PATH", BASE_DIR / "db.sqlite3"),
        # Concurrent demo buyers write at once: wait for SQLite's write lock.
        "OPTIONS": {"timeout": 30},
    }
}

REDIS_URL = os.environ.get("REDCOORD_REDIS_URL", "")

REDCOORD = {
    "URL": REDIS_URL or "embedded",
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "demo"),
}

if REDIS_URL:
    # A django-redis cache on the same server: the way most projects run.
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "demo-cache",
        }
    }

# Django Tasks run by `manage.py run_worker` from the Redis queues.
TASKS = {
    "default": {
        "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
        "QUEUES": ["default", "receipts"],
    }
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "admin:login"

# Seconds the demo's buy view "thinks" between reading and writing (a call to
# a payment service, say): it makes the race that the lock prevents visible.
DEMO_MARKET_THINK_TIME = float(os.environ.get("DEMO_MARKET_THINK_TIME", "0.02"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django_redcoord": {"handlers": ["console"], "level": "INFO"},
        "testproject": {"handlers": ["console"], "level": "INFO"},
    },
}
