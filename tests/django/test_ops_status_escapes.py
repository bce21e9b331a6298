"""``manage.py redcoord status`` never sends a control character to the terminal (issue 31,
defect 23).

Holders' thread names, hosts, worker ids and job fields come from Redis,
which anyone who can write to it fills: an escape sequence there (a title
change, a cleared screen, a hidden line) must be printed as an escape.
"""

from __future__ import annotations

import re
import threading

import pytest
from django.core.management import call_command

from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.management.commands.redcoord import printable

HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eright-to-left\r\x00\x7f"
CONTROL = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]"
)  # anything but the newline ending each line

pytestmark = pytest.mark.django_db


def _held_by_a_hostile_thread(redis_client, release):
    """Hold a lock, a permit and a read lock from a thread whose name is an escape sequence."""
    ready = threading.Event()

    def hold():
        Lock("status|lock", ttl=60, wait=0, client=redis_client, prefix="test").acquire()
        Semaphore("status|sem", 2, ttl=60, wait=0, client=redis_client, prefix="test").acquire()
        ReadWriteLock("status|rw", client=redis_client, prefix="test").read(
            ttl=60, wait=0
        ).acquire()
        ready.set()
        release.wait(30)

    thread = threading.Thread(target=hold, name=HOSTILE)
    thread.start()
    assert ready.wait(10)
    return thread


def test_printable_escapes_every_control_character():
    assert printable("a\x1b[31mb") == "a\\x1b[31mb"
    assert printable("\x00\x07\x7f\x9b\u202e\u200b") == "\\x00\\x07\\x7f\\x9b\\u202e\\u200b"
    assert printable("plain é 名前 😀 |{x}%") == "plain é 名前 😀 |{x}%"


def test_status_escapes_control_characters_in_every_table(capsys, redis_client):
    from django_redcoord.core.leader.election import DEFAULT_ELECTION, LeaderElection

    release = threading.Event()
    thread = _held_by_a_hostile_thread(redis_client, release)
    try:
        keys = LeaderElection(DEFAULT_ELECTION, client=redis_client, prefix="test").keys
        redis_client.sadd(keys.jobs, "report")
        redis_client.hset(
            keys.job("report"), mapping={"schedule": HOSTILE, "outcome": HOSTILE, "runs": 1}
        )
        call_command("redcoord", "status")
        out = capsys.readouterr().out
    finally:
        release.set()
        thread.join(10)
    assert (
        out.count("evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eright-to-left\\x0d\\x00\\x7f") >= 4
    ), out
    assert CONTROL.search(out) is None, repr(CONTROL.search(out))
    assert "status|lock" in out and "status|sem" in out and "status|rw" in out


def test_status_json_escapes_control_characters(capsys, redis_client):
    release = threading.Event()
    thread = _held_by_a_hostile_thread(redis_client, release)
    try:
        call_command("redcoord", "status", "--json")
        out = capsys.readouterr().out
    finally:
        release.set()
        thread.join(10)
    assert CONTROL.search(out) is None and "\\u001b]0;pwned" in out
