"""Settings for the run_leader processes of tests/test_leader_faults.py and bench/bench_leader.py.

The demo site's settings, with the REDCOORD election timing, key prefix and
jobs modules taken from the environment (the demo app is left out: its jobs
would run in the background of the tests).
"""

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "testproject.demo"]
# The demo's URLs import the demo app's views; run_leader's system checks load the URLconf.
ROOT_URLCONF = __name__
urlpatterns: list = []

REDCOORD = {
    "URL": os.environ["REDCOORD_REDIS_URL"],
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "leadertest"),
    "JOBS": [
        m for m in os.environ.get("LEADER_TEST_JOBS", "tests.support.leader_jobs").split(",") if m
    ],
    "LEADER_LEASE": float(os.environ.get("LEADER_TEST_LEASE", "1.5")),
    "LEADER_RENEW_DEADLINE": float(os.environ.get("LEADER_TEST_RENEW_DEADLINE", "1.0")),
    "LEADER_RETRY_PERIOD": float(os.environ.get("LEADER_TEST_RETRY_PERIOD", "0.25")),
    "LEADER_SHUTDOWN_TIMEOUT": float(os.environ.get("LEADER_TEST_SHUTDOWN_TIMEOUT", "10")),
    "SOCKET_TIMEOUT": 2.0,
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
