"""The matrix's cells catch deliberately unsafe primitives (tests/faults/matrix/unsafe.py).

Each control runs a real cell of the matrix on a hand-rolled recipe that breaks the
cell's guarantee, and requires the violation it should report. Left out of the
smoke tier with the other negative controls (tests/faults/conftest.py).
"""

from __future__ import annotations

from . import cells_holds, cells_latches, cells_rest, cells_signals, cells_tasks
from .unsafe import NaiveElection, NaiveLatch, NaiveLock, NaiveTopic, naive_cancel


def test_the_lock_cell_catches_tokens_that_restart_and_a_release_that_deletes_anyones_lock(ctx):
    found = cells_holds.restart_without_data(
        ctx, cells_holds.LOCK, make=lambda c, name: NaiveLock(c.client(), name)
    )
    assert any("is not above" in v for v in found), found
    assert any("want LockLost" in v for v in found), found


def test_the_latch_cell_catches_a_latch_that_silently_starts_again(ctx):
    found = cells_latches.latch_data_loss(ctx, make=lambda c: NaiveLatch(c.client(), "l"))
    assert any("want 'LatchBroken'" in v for v in found), found
    assert any("started again silently" in v for v in found), found


def test_the_election_cell_catches_terms_that_go_backwards(ctx):
    found = cells_rest.election_data_loss(
        ctx, make=lambda c, identity: NaiveElection(c.client(), identity)
    )
    assert any("went backwards" in v for v in found), found


def test_the_topic_cell_catches_a_raw_nogroup_error(ctx):
    found = cells_signals.topic_data_loss(ctx, make=lambda c: NaiveTopic(c.client()))
    assert any("NOGROUP" in v or "ResponseError" in v for v in found), found


def test_the_task_cell_catches_a_cancel_that_leaves_the_message_queued(ctx):
    found = cells_tasks.task_restart_with_data(ctx, cancel_with=naive_cancel)
    assert any("cancelled task p1 ran 1 time(s)" in v for v in found), found
