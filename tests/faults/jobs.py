"""The periodic job of the fault suite (REDCOORD["JOBS"] of tests/faults/settings.py).

Every 0.5 s the leader runs ``tick``, which records on the oracle the slot,
its term, its process, when it started and ended (the oracle's clock) and
whether it still led at the end.
"""

import os
import time

from django_redcoord.core.periodic.jobs import current_job, periodic

from .oracle import RUNS_KEY, now_us, record


@periodic(every=0.5, name="faults.tick")
def tick():
    job = current_job()
    started = now_us()
    time.sleep(0.05)
    record(
        RUNS_KEY,
        slot=job.slot_ms,
        term=job.term,
        pid=os.getpid(),
        start=started,
        end=now_us(),
        leader=job.is_leader(),
    )
