"""A lease in its last millisecond still bounds a waiter's block.

A refused look tells the waiter how long until the earliest lease runs out;
0 means no lease bounds its wait, so it blocks a whole wait chunk (4.5 s).
A lease whose expiry is the server's current millisecond is still live (Redis
and the scripts count it until that millisecond has passed) but rounds to 0:
the waiter behind a holder killed in that millisecond blocked 4.5 s instead
of about 2 ms (seen as a semaphore waiter taking 5.8 s after two holders were
SIGKILLed). Each case pins a real holder's expiry to the server's clock and
looks at once, many times; a look that lands in that millisecond must report
at least 1 ms. The count of such looks must be positive, or the check proved
nothing.
"""

from __future__ import annotations

from django_redcoord.core.locks import Lock
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore

TRIES = 400


def _server_ms(client):
    seconds, micros = client.time()
    return seconds * 1000 + micros // 1000


def _looks_in_the_last_millisecond(pin, refused_look):
    """(looks refused while a lease was live, those told 0 ms)."""
    refused = zero = 0
    for _ in range(TRIES):
        pin()
        retry = refused_look()
        if retry is False:
            continue  # the millisecond had passed: the lease ran out and the look won
        refused += 1
        if not retry:
            zero += 1
    return refused, zero


class _Holder:
    """A real holder, taken again by a new object whenever its lease ran out."""

    def __init__(self, make):
        self.make, self.hold = make, None

    def live(self):
        if self.hold is None or not self.hold.owned():
            self.hold = self.make()
            assert self.hold.acquire()
        return self.hold


def _check(client, holder, pin_expiry, other):
    def pin():
        pin_expiry(holder.live(), _server_ms(client))

    def look():
        if other.acquire():
            other.release()
            return False
        return other.retry_after

    refused, zero = _looks_in_the_last_millisecond(pin, look)
    assert refused > 0, "no look landed in the holder's last millisecond"
    assert zero == 0, f"{zero} of {refused} refused looks were told no lease bounds their wait"


def test_a_lock_held_in_its_last_millisecond_tells_the_waiter_to_retry_within_it(redis_client):
    def make():
        return Lock("edge", ttl=30, wait=0, auto_renew=False, client=redis_client, prefix="lm")

    def pin_expiry(hold, at_ms):
        # (an expiry not after the server's now deletes the key at once: one ms later, which
        # the look lands in about half the time)
        redis_client.pexpireat(hold.keys.lock, at_ms + 1)

    _check(redis_client, _Holder(make), pin_expiry, make())


def test_a_semaphore_held_in_its_last_millisecond_tells_the_waiter_to_retry_within_it(
    redis_client,
):
    def make():
        return Semaphore(
            "edge", 1, ttl=30, wait=0, auto_renew=False, client=redis_client, prefix="lm"
        )

    def pin_expiry(hold, at_ms):
        redis_client.zadd(hold.keys.holders, {hold._owner: at_ms}, xx=True)

    _check(redis_client, _Holder(make), pin_expiry, make())


def test_a_read_lock_held_in_its_last_millisecond_tells_the_writer_to_retry_within_it(
    redis_client,
):
    def rwlock():
        return ReadWriteLock(
            "edge", ttl=30, wait=0, auto_renew=False, client=redis_client, prefix="lm"
        )

    rw = rwlock()  # (the writer's object is another: one object refuses to upgrade its reads)

    def pin_expiry(hold, at_ms):
        redis_client.zadd(rw.keys.readers, {hold._owner: at_ms}, xx=True)

    _check(redis_client, _Holder(rw.read), pin_expiry, rwlock().write())
