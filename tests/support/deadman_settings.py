"""Settings of the run_leader processes of tests/django/test_deadman.py, and the constants the test
shares with them.

The demo site's settings (its app left out: its jobs would run too) with the
dead-man's jobs (tests/support/deadman_jobs.py) and a lease long enough to see a
stopped leader still hold its record. Importable without the environment
(the test process reads the constants; nothing here connects or registers).
"""

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import INSTALLED_APPS

# : The election timing of the leaders, also given to the probes of the test process (REDCOORD
# there).
TIMING = {"LEADER_LEASE": 3.0, "LEADER_RENEW_DEADLINE": 2.0, "LEADER_RETRY_PERIOD": 0.25}
#: Seconds between two slots of every dead-man's job.
EVERY = 0.3
#: The lock ``deadman.locked`` takes without waiting.
RESOURCE = "deadman:resource"
NAMES = ("deadman.fails", "deadman.locked", "deadman.tick")

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "testproject.demo"]
# The demo's URLs import the demo app's views; run_leader's system checks load the URLconf.
ROOT_URLCONF = __name__
urlpatterns: list = []

REDCOORD = {
    "URL": os.environ.get("REDCOORD_REDIS_URL", "redis://127.0.0.1:1/0"),
    "KEY_PREFIX": os.environ.get("REDCOORD_KEY_PREFIX", "test"),
    "JOBS": ["tests.support.deadman_jobs"],
    "LEADER_SHUTDOWN_TIMEOUT": 5.0,
    "SOCKET_TIMEOUT": 2.0,
    **TIMING,
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
