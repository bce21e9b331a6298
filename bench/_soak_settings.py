"""Settings of the soak's subject processes (bench/soak.py): the fault suite's, with
the worker command's own defaults.

Everything of tests/faults/settings.py (the oracle, the periodic job
``tests.faults.jobs.tick``, the Tasks backend, the short leader timings that
make two ``run_leader`` processes change hands within seconds) except:

* the worker timings and queue retries are REDCOORD's defaults
  (WORKER_HEARTBEAT 2 s, WORKER_TIMEOUT 10 s, WORKER_PREFETCH 32,
  QUEUE_RETRY_DELAY 1 s, SOCKET_TIMEOUT 5 s...): the soak measures
  ``run_worker`` as shipped;
* no LOGGING for django_redcoord: the commands log to the console as they do
  when a project configures nothing (INFO, one line per job);
* ``SOAK_SENTINEL`` (``host:port,host:port,...``) finds the master through
  those sentinels (service ``mymaster``) instead of REDCOORD_REDIS_URL.
"""

import os

from tests.faults.settings import *  # noqa: F403
from tests.faults.settings import REDCOORD as _FAULTS

_KEPT = (
    "URL",
    "KEY_PREFIX",
    "LEADER_LEASE",
    "LEADER_RENEW_DEADLINE",
    "LEADER_RETRY_PERIOD",
    "LEADER_SHUTDOWN_TIMEOUT",
    "JOBS",
)
REDCOORD = {key: value for key, value in _FAULTS.items() if key in _KEPT}
if os.environ.get("SOAK_SENTINEL"):
    del REDCOORD["URL"]
    REDCOORD["SENTINEL"] = {
        "HOSTS": [
            ("127.0.0.1", int(hostport.rsplit(":", 1)[1]))
            for hostport in os.environ["SOAK_SENTINEL"].split(",")
        ],
        "SERVICE": "mymaster",
    }
LOGGING = {"version": 1, "disable_existing_loggers": False}
