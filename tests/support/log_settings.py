"""run_leader as in a project whose LOGGING configures nothing (tests/django/test_logs.py)."""

from tests.support.leader_settings import *  # noqa: F403

LOGGING: dict = {}
