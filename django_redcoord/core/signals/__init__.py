"""Signal/wait, events and durable topics: wake-ups that are never lost to a dropped connection."""

from .event import Event
from .records import read_signals
from .signal import Signal
from .topic import Subscription, Topic, TopicMessage

__all__ = ["Event", "Signal", "Subscription", "Topic", "TopicMessage", "read_signals"]
