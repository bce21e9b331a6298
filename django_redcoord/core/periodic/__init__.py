"""Periodic jobs: the ``@periodic`` registry and the leader's scheduler (each slot runs once)."""

from .jobs import Job, JobContext, current_job, get_jobs, periodic
from .scheduler import Scheduler, read_job_states

__all__ = ["Job", "JobContext", "Scheduler", "current_job", "get_jobs", "periodic", "read_job_states"]
