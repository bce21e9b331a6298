"""Settings of the subject processes (run_worker, run_leader) of the fault suite.

Redis, the oracle and the key prefix come from the environment; times are
short so that faults play out in seconds.
"""

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import INSTALLED_APPS

from .names import HOSTILE_QUEUE

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "testproject.demo"]
ROOT_URLCONF = __name__
urlpatterns: list = []
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}

REDCOORD = {
    "URL": os.environ["REDCOORD_REDIS_URL"],
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "faults"),
    "SOCKET_TIMEOUT": 1.0,
    "CONNECT_TIMEOUT": 1.0,
    "WORKER_HEARTBEAT": 0.2,
    "WORKER_TIMEOUT": 1.0,
    "WORKER_SHUTDOWN_TIMEOUT": 5.0,
    "QUEUE_RETRY_DELAY": 0.01,
    "QUEUE_RETRY_MAX_DELAY": 0.05,
    "LEADER_LEASE": 1.5,
    "LEADER_RENEW_DEADLINE": 1.0,
    "LEADER_RETRY_PERIOD": 0.25,
    "LEADER_SHUTDOWN_TIMEOUT": 5.0,
    "JOBS": ["tests.faults.jobs"],
}
TASKS = {
    "default": {
        "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
        "QUEUES": ["default", HOSTILE_QUEUE],
        "OPTIONS": {"MAX_ATTEMPTS": 3, "RESULT_TTL": 3600},
    }
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "stamped": {"format": "%(created).3f %(process)d %(name)s %(levelname)s %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "stamped"}},
    "loggers": {"django_redcoord": {"handlers": ["console"], "level": "INFO"}},
}
