"""Settings of the run_leader processes of tests/django/test_schedules.py's fault test: the fault
suite's, with its jobs."""

from tests.faults.settings import *  # noqa: F403

REDCOORD = {**REDCOORD, "JOBS": ["tests.support.schedule_jobs"]}  # noqa: F405
