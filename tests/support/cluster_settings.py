"""Settings for run_worker / run_leader processes on a Redis Cluster
(tests/django/test_cluster_commands.py).

The demo site's settings without the demo app (its jobs would run), with
REDCOORD['CLUSTER'] naming the nodes in ``REDCOORD_CLUSTER_NODES`` (comma-separated URLs).
"""

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "testproject.demo"]
ROOT_URLCONF = __name__
urlpatterns: list = []

REDCOORD = {
    "CLUSTER": {"NODES": os.environ["REDCOORD_CLUSTER_NODES"].split(",")},
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "clustercmd"),
    "JOBS": [m for m in os.environ.get("LEADER_TEST_JOBS", "").split(",") if m],
    "WORKER_HEARTBEAT": 0.2,
    "WORKER_TIMEOUT": 1.0,
    "LEADER_LEASE": float(os.environ.get("LEADER_TEST_LEASE", "1.5")),
    "LEADER_RENEW_DEADLINE": float(os.environ.get("LEADER_TEST_RENEW_DEADLINE", "1.0")),
    "LEADER_RETRY_PERIOD": 0.25,
    "SOCKET_TIMEOUT": 2.0,
    "CONNECT_TIMEOUT": 1.0,
}

TASKS = {
    "default": {
        "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
        "QUEUES": ["default", *os.environ.get("REDCOORD_TEST_QUEUES", "q1,q2,q3").split(",")],
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
