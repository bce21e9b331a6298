"""Periodic jobs: the ``@periodic`` registry and the leader's scheduler (each slot runs once)."""

from .control import (
    RunRequest,
    cancel_request,
    pause_job,
    pending_requests,
    request_run,
    resume_job,
)
from .jobs import Job, JobContext, current_job, get_jobs, periodic
from .scheduler import Scheduler, read_job_states
from .schedules import (
    EditConflict,
    TooManyEdits,
    edit_schedule,
    editable_params,
    read_versions,
    revert_schedule,
)
from .server import ElectionDied, PeriodicServer

__all__ = [
    "EditConflict",
    "ElectionDied",
    "Job",
    "JobContext",
    "PeriodicServer",
    "RunRequest",
    "Scheduler",
    "TooManyEdits",
    "cancel_request",
    "current_job",
    "edit_schedule",
    "editable_params",
    "get_jobs",
    "pause_job",
    "pending_requests",
    "periodic",
    "read_job_states",
    "read_versions",
    "request_run",
    "resume_job",
    "revert_schedule",
]
