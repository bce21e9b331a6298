"""Reliable queues (at least once) and the worker that drains them."""

from .queue import Consumer, Depths, Message, Queue, depths
from .worker import Worker, WorkerCrashed

__all__ = ["Consumer", "Depths", "Message", "Queue", "Worker", "WorkerCrashed", "depths"]
