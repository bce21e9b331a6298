"""Reliable queues (at least once) and the worker that drains them."""

from .consumer import Consumer
from .messages import Depths, Message
from .queue import Queue, depths
from .worker import Worker, WorkerCrashed

__all__ = ["Consumer", "Depths", "Message", "Queue", "Worker", "WorkerCrashed", "depths"]
