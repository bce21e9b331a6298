"""Jobs of the multi-process leader tests: REDCOORD["JOBS"] of tests/support/leader_settings.py.

``tick`` runs every LEADER_TEST_EVERY seconds (default 0.5) with
misfire="catchup", and appends what it knows about its run to a Redis list:
the slot, the process, the leader's term and whether it still leads. The
tests count those entries: every slot between the first and the last must
appear exactly once.
"""

import json
import os
import time

from django_redcoord.core.periodic.jobs import current_job, periodic
from django_redcoord.core.transport.clients import get_client

SLOTS_KEY = "leadertest:slots"


@periodic(every=float(os.environ.get("LEADER_TEST_EVERY", "0.5")), misfire="catchup", name="tick")
def tick():
    job = current_job()
    entry = {
        "slot": job.slot_ms,
        "pid": os.getpid(),
        "term": job.term,
        "at": time.time(),
        "leader": job.is_leader(),
    }
    get_client().rpush(SLOTS_KEY, json.dumps(entry))
