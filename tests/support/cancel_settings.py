"""Settings for run_worker subprocesses of the cancel tests: worker_settings, and a
CANCEL_GRACE read from the environment (default 30 s, the shipped default)."""

import os

from tests.support.worker_settings import *  # noqa: F403
from tests.support.worker_settings import TASKS

TASKS = {
    alias: {
        **config,
        "OPTIONS": {
            **config.get("OPTIONS", {}),
            "CANCEL_GRACE": float(os.environ.get("REDCOORD_CANCEL_GRACE", "30")),
        },
    }
    for alias, config in TASKS.items()
}
