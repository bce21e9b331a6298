"""The soak's Django Task: each run is counted on the oracle with who ran it and when.

``timed(n, enqueued)``: ``enqueued`` is the producer's ``time.time()`` just
before ``enqueue()``; one pipelined round trip to the oracle counts the run
(hash ``runs``, as tests/faults/fault_tasks.py does, so the fault suite's
checkers read it) and appends ``"<result id> <pid> <started> <enqueued>"`` to
the list ``soak:ran`` (times: seconds since the epoch, this host's clock).
"""

import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from tests.faults.oracle import oracle

from ._soak_checks import RAN_KEY


@task(takes_context=True)
def timed(context, n, enqueued):
    started = time.time()
    rid = context.task_result.id
    pipe = oracle().pipeline(transaction=False)
    pipe.hincrby("runs", rid, 1)
    pipe.rpush(RAN_KEY, f"{rid} {os.getpid()} {started:.6f} {enqueued:.6f}")
    pipe.execute()
    return n
