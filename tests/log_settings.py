"""run_leader as in a project whose LOGGING configures nothing (tests/test_logs.py)."""

from tests.leader_settings import *  # noqa: F403

LOGGING: dict = {}
