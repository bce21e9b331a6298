"""One fault under many waits of a process is one warning, not one per wait."""

from __future__ import annotations

import logging
import time

from django_redcoord.core.holds import steps


def test_a_fault_seen_by_a_thousand_waits_is_one_warning_then_a_count(monkeypatch, caplog):
    monkeypatch.setattr(steps, "WARN_EVERY", 0.5)
    logger = logging.getLogger("django_redcoord.test-warnings")
    message = "%s: the wait lost its server (%s); issuing it again (test %s)"
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        for i in range(1000):
            steps.warn_now_and_then(logger, message, f"lock {i}", "killed", id(caplog))
        time.sleep(0.6)
        steps.warn_now_and_then(logger, message, "lock again", "killed", id(caplog))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, [r.getMessage() for r in warnings]
    assert "(and 999 more like it" in warnings[1].getMessage()
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 999  # none is lost


def test_a_full_pool_met_after_a_waits_time_ran_out_does_not_ask_for_a_larger_pool():
    import redis

    from django_redcoord.core.transport import commands

    client = redis.Redis(max_connections=4)
    share = commands._share(client.connection_pool)
    late = commands._exhausted(client, share, commands.ENDING, 0.0, "leave the wait")
    assert "the wait's time had run out" in str(late) and "MAX_CONNECTIONS" not in str(late)
    slow = commands._exhausted(client, share, commands.ENDING, 5.0, "look")
    assert "within 5 s" in str(slow) and "Raise REDCOORD['MAX_CONNECTIONS']" in str(slow)
