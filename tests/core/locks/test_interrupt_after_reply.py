"""An exception that reaches a sync ``acquire()`` or ``release()`` just after its script's reply
(KeyboardInterrupt, a signal handler's exception such as a soft time limit) leaves nothing
behind: the grant is given back, the released level ends, and the object takes the lock again.

The exception is raised from a trace function at the first call into the code that reads the
reply (whichever of the hold's paths reads it), so the reply has arrived and been taken from the
connection: the case a real signal hits at random, made deterministic.
"""

from __future__ import annotations

import sys

import pytest

from django_redcoord.core.locks import Lock

#: The functions that first read an acquire's grant reply, and a release's reply.
GRANT_READERS = {"_plain_grant", "_grant_steps"}
RELEASE_READERS = {"_released"}


def _raise_at_first_call(names: set[str], when=lambda frame: True) -> None:
    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name in names and when(frame):
            sys.settrace(None)
            raise KeyboardInterrupt("right after the reply")
        return None

    sys.settrace(tracer)


def test_an_interrupt_after_the_grant_reply_gives_the_grant_back(redis_client):
    lock = Lock("after|reply", ttl=30, wait=0, client=redis_client)
    _raise_at_first_call(GRANT_READERS)
    try:
        with pytest.raises(KeyboardInterrupt):
            lock.acquire()
    finally:
        sys.settrace(None)
    assert not lock.held
    assert lock.holder() is None  # given back, not held by nobody for 30 s
    assert Lock("after|reply", wait=0, client=redis_client).acquire()  # anyone takes it
    redis_client.flushall()
    assert lock.acquire()  # and the object itself is not stuck
    lock.release()


def test_an_interrupt_after_the_release_reply_ends_the_level(redis_client):
    lock = Lock("after|release", ttl=30, wait=0, client=redis_client)
    assert lock.acquire()
    _raise_at_first_call(RELEASE_READERS, lambda frame: frame.f_locals.get("result") is not None)
    try:
        with pytest.raises(KeyboardInterrupt):
            lock.release()
    finally:
        sys.settrace(None)
    assert lock.holder() is None  # the release ran in Redis
    assert not lock.held  # and ended here too
    assert lock.acquire()
    lock.release()


def test_the_trace_hook_reaches_the_reply_readers(redis_client):
    """Control: the functions named above are the ones a plain acquire and release call (else
    the tests above would pass without raising anything)."""
    called: set[str] = set()

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name in GRANT_READERS | RELEASE_READERS:
            called.add(frame.f_code.co_name)
        return None

    lock = Lock("after|control", ttl=30, wait=0, client=redis_client)
    sys.settrace(tracer)
    try:
        assert lock.acquire()
        lock.release()
    finally:
        sys.settrace(None)
    assert called & GRANT_READERS and called & RELEASE_READERS
