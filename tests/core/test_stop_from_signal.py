"""A stop asked from a signal handler never waits for a lock the main thread holds.

A Python signal handler runs in the main thread between two of its bytecodes.
Had it set a ``threading.Event`` while the main thread was inside that
event's ``wait()`` or ``clear()`` (holding its lock), it would wait for itself
forever: ``run_leader`` hung with its renewals going on (no standby took
over for 20 s, CI), ``run_worker`` with its heartbeat. Each case here holds
the event's lock in the main thread while a real SIGTERM's handler asks the
loop to stop; the negative control sets the event in the handler and hangs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic import PeriodicServer
from django_redcoord.core.queues import Queue, Worker

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import os, signal, sys, threading, time
from django_redcoord.core.stopping import StopRelay
event = threading.Event()
relay = StopRelay(event.set, "t")
if sys.argv[1] == "relay":
    relay.start()
    signal.signal(signal.SIGTERM, lambda *_: relay.request())
else:
    signal.signal(signal.SIGTERM, lambda *_: event.set())
with event._cond:  # the main thread inside the event, as in its wait() or clear()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)  # the handler runs here, in this thread
print("stopped" if event.wait(5) else "not stopped", flush=True)
"""


def _run(mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=5, cwd=ROOT
    )
    return done.stdout.strip() + done.stderr[-2000:]


def test_a_stop_relayed_from_a_signal_handler_does_not_wait_for_the_main_thread():
    assert _run("relay") == "stopped"


def test_negative_control_an_event_set_in_the_handler_hangs_the_process():
    with pytest.raises(subprocess.TimeoutExpired):
        _run("naive")


def _stop_by_sigterm_while_holding(event: threading.Event, stop, thread: threading.Thread) -> None:
    previous = signal.signal(signal.SIGTERM, lambda *_: stop())
    try:
        with event._cond:  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # the handler runs here
    finally:
        signal.signal(signal.SIGTERM, previous)
    thread.join(15)
    assert not thread.is_alive(), "the loop did not stop"


def test_the_leaders_serve_loop_stops_on_a_sigterm_that_lands_inside_its_wait(redis_client):
    wakeup = threading.Event()
    election = LeaderElection(
        "sig", lease=4, renew_deadline=3, retry_period=0.5, client=redis_client, prefix="sig"
    )
    server = PeriodicServer(election, [], wakeup=wakeup, shutdown_timeout=0)
    thread = threading.Thread(target=server.run)
    thread.start()
    end = time.monotonic() + 10
    while election.current() is None and time.monotonic() < end:
        time.sleep(0.02)
    _stop_by_sigterm_while_holding(wakeup, server.stop, thread)
    assert election.current() is None  # resigned


def test_a_worker_stops_on_a_sigterm_that_lands_inside_its_wait(redis_client):
    worker = Worker(
        [Queue("sig", client=redis_client, prefix="sig")],
        lambda message: None,
        heartbeat=0.2,
        timeout=2.0,
        shutdown_timeout=5,
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    time.sleep(0.3)
    _stop_by_sigterm_while_holding(worker._stopping, worker.stop, thread)


def test_a_worker_that_fails_to_start_ends_its_relay_and_threads(redis_client):
    class Refuses:
        def __call__(self, message):
            pass

        def attach(self, worker):
            raise RuntimeError("no")

    before = {t.ident for t in threading.enumerate()}
    worker = Worker([Queue("sig", client=redis_client, prefix="sig")], Refuses(), heartbeat=0.2)
    with pytest.raises(RuntimeError, match="no"):
        worker.run()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        left = [t.name for t in threading.enumerate() if t.ident not in before]
        if not left:
            break
        time.sleep(0.02)
    assert left == []  # the relay and every thread it started have ended
    worker.stop()  # (after run: called directly, not through a relay that is gone)
    assert worker.stopping
