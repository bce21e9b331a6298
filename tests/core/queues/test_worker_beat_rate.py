"""A worker's heartbeat and reaper run at a fixed rate, however long a round takes.

The chaos report (docs/chaos-report.md) once found a killed worker's messages
requeued 12.3 s after the kill against the README's bound of WORKER_TIMEOUT +
WORKER_HEARTBEAT (12 s): the beat loop slept a whole heartbeat *after* each
round of beats, reaps and dead-letter reads, so on a loaded host its period
was the heartbeat plus the round. Here a round is made slow on purpose (its
dead-letter settling sleeps) and the beats must still come every heartbeat.
"""

from __future__ import annotations

import statistics
import threading
import time

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.worker import Worker

PREFIX = "beat"
HEARTBEAT = 0.5
SLOW_ROUND = 0.3  # added to every round: a period of HEARTBEAT + SLOW_ROUND without the fixed rate


class SlowRoundWorker(Worker):
    def _settle(self, queue: Queue) -> None:
        time.sleep(SLOW_ROUND)
        super()._settle(queue)


def beat_intervals(redis_client, worker: Worker, beats: int) -> list[float]:
    """Seconds between the worker's heartbeats, read from its record's heartbeat_ms."""
    seen: list[int] = []
    deadline = time.monotonic() + 30
    while len(seen) < beats + 1:
        assert time.monotonic() < deadline, f"only {len(seen)} heartbeats in 30 s"
        raw = redis_client.hget(worker.keys.worker(worker.id), "heartbeat_ms")
        if raw is not None and (not seen or int(raw) != seen[-1]):
            seen.append(int(raw))
        time.sleep(0.01)
    return [(b - a) / 1000 for a, b in zip(seen, seen[1:], strict=False)]


def at_heartbeat_rate(intervals: list[float]) -> bool:
    """A fixed rate gives ~HEARTBEAT between beats; a pause after each round ~HEARTBEAT +
    SLOW_ROUND."""
    return statistics.median(intervals) < HEARTBEAT + SLOW_ROUND / 2


def measure(redis_client, worker_class: type[Worker], beats: int) -> list[float]:
    queue = Queue("jobs", client=redis_client, prefix=PREFIX)
    worker = worker_class([queue], lambda m: None, heartbeat=HEARTBEAT, timeout=5.0)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        return beat_intervals(redis_client, worker, beats)
    finally:
        worker.stop()
        thread.join(10)


def test_beats_come_every_heartbeat_when_rounds_are_slow(redis_client):
    intervals = measure(redis_client, SlowRoundWorker, beats=6)
    assert at_heartbeat_rate(intervals), intervals


class PauseAfterRound(SlowRoundWorker):
    """The loop this replaced: a whole heartbeat's pause after each round."""

    def _beat_loop(self) -> None:
        while not self._stopping.wait(self.heartbeat):
            self._beat()
            for queue in self.queues:
                queue.reap()
                self._settle(queue)


def test_negative_control_a_pause_after_each_round_is_caught(redis_client):
    intervals = measure(redis_client, PauseAfterRound, beats=4)
    assert not at_heartbeat_rate(intervals), intervals
