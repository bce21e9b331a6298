"""One leader among many processes: an election with terms that only grow."""

from ..values import check_timing
from .election import LeaderElection
from .records import Leadership, read_leader

__all__ = ["LeaderElection", "Leadership", "check_timing", "read_leader"]
