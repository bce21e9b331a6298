"""The leader's serve loop in the core (``PeriodicServer``), without Django: it campaigns,
runs each slot once while leading, stops on stop(), waits for running jobs, and resigns."""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.periodic import ElectionDied, PeriodicServer

from .test_periodic import make_job


def _election(client, identity, **kwargs):
    return LeaderElection(
        "serve",
        lease=4,
        renew_deadline=3,
        retry_period=0.5,
        identity=identity,
        client=client,
        prefix="srv",
        **kwargs,
    )


def test_it_runs_each_slot_once_while_leading_and_resigns_on_stop(redis_client):
    runs, started, release = [], threading.Event(), threading.Event()

    def body():
        runs.append(time.time())
        started.set()
        release.wait(10)

    wakeup = threading.Event()
    election = _election(redis_client, "alone", on_elected=lambda term: wakeup.set())
    server = PeriodicServer(
        election, [make_job(body, name="srv.every", every=1)], wakeup=wakeup, shutdown_timeout=10
    )
    thread = threading.Thread(target=server.run)
    thread.start()
    try:
        assert started.wait(10), "the job never ran"
        assert election.current().identity == "alone"
        server.stop()  # the running job is waited for: still the leader meanwhile
        time.sleep(0.3)
        assert thread.is_alive()
        assert election.current().identity == "alone"
    finally:
        release.set()
        thread.join(15)
    assert not thread.is_alive()
    assert election.current() is None  # resigned
    assert len(runs) == 1  # one slot of a 1 s job: the stop came while it ran


def test_a_second_stop_stops_waiting_for_running_jobs(redis_client):
    started, release = threading.Event(), threading.Event()

    def body():
        started.set()
        release.wait(30)

    wakeup = threading.Event()
    election = _election(redis_client, "stuck", on_elected=lambda term: wakeup.set())
    server = PeriodicServer(
        election, [make_job(body, name="srv.stuck", every=1)], wakeup=wakeup, shutdown_timeout=30
    )
    thread = threading.Thread(target=server.run)
    thread.start()
    try:
        assert started.wait(10)
        server.stop()
        time.sleep(0.2)
        assert thread.is_alive()  # waiting for the job
        began = time.monotonic()
        server.stop()  # as a second SIGTERM
        thread.join(10)
        assert not thread.is_alive() and time.monotonic() - began < 5
    finally:
        release.set()
        thread.join(10)


def test_a_dead_campaign_thread_stops_the_server_with_an_error(redis_client):
    election = _election(redis_client, "doomed")
    server = PeriodicServer(election, [], shutdown_timeout=0)
    election.start = lambda: None  # the campaign thread never runs: as if it had died
    with pytest.raises(ElectionDied, match="the election thread died"):
        server.run()


def test_bad_shutdown_timeouts_are_refused_with_what_is_allowed(redis_client):
    election = _election(redis_client, "picky")
    for bad in (-1, "10", float("nan")):
        with pytest.raises((TypeError, ValueError), match="shutdown_timeout"):
            PeriodicServer(election, [], shutdown_timeout=bad)
