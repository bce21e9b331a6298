"""Jobs of the schedule-edit tests (tests/django/test_schedules.py, and the run_leader processes
of its
fault test).

``sched.tick`` runs every SCHEDULE_TEST_EVERY seconds (default 0.5) with
misfire="catchup" and takes one editable argument, ``v``: the fault test sets
``v`` to the version of each edit, so a run says which edit it ran under. In
the fault test's processes (FAULTS_ORACLE_URL set) each run records its slot,
``v``, term and process on the oracle when it starts.

``sched.billing`` declares arguments of every editable type and a per-job
permission (``auth.change_group``, which exists in every test database).
"""

import os

from django_redcoord.core.periodic.jobs import current_job, periodic

#: Where sched.tick records its runs on the oracle.
RUNS_KEY = "schedule:runs"


@periodic(
    every=float(os.environ.get("SCHEDULE_TEST_EVERY", "0.5")), misfire="catchup", name="sched.tick"
)
def tick(v: int = 0):
    if "FAULTS_ORACLE_URL" not in os.environ:
        return
    from tests.faults.oracle import now_us, record

    job = current_job()
    record(RUNS_KEY, slot=job.slot_ms, v=v, term=job.term, pid=os.getpid(), start=now_us())


@periodic(every=3600, name="sched.billing", edit_permission="auth.change_group")
def billing(batch_size: int = 100, dry_run: bool = False, ratio: float = 0.5, label: str = "eu"):
    pass
