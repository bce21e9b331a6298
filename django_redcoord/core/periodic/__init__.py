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

__all__ = [
    "Job",
    "JobContext",
    "RunRequest",
    "Scheduler",
    "cancel_request",
    "current_job",
    "get_jobs",
    "pause_job",
    "pending_requests",
    "periodic",
    "read_job_states",
    "request_run",
    "resume_job",
]
