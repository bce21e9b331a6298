"""Stale grants of the holds that share the ``first`` wake list (semaphores, read-write locks).

Two bugs the SPIN model ``semaphores/leases.pml`` found, replayed with real
processes and real signals (SIGSTOP) on a real Redis, with 1 permit (a
semaphore) or a write hold (a read-write lock):

* ``renewal``: a waiter W, second in line, is SIGSTOPped; the hold is
  handed to it (its lease starts on the server) while it is paused; resumed
  later, W re-checks and finds the hold "ours already". The client counts a
  fresh lease from that re-check, so the server's lease must run at least as
  long: the re-check renews it. Checked: the lease the server reports is not
  shorter than what W believes is left.
* ``stale_hand_off``: the same, but W stays paused past its TTL: the lease
  runs out and another client Y takes the hold. Resumed, W queues again
  first in line and pops its own old hand-off from ``first``: it must not
  believe it holds while Y does (an overlap of two holders of one permit).

Each has a negative control: a client that counts its lease past the
server's (``renewal``), and one that accepts any hand-off of its own as the
code did before the fix (``stale_hand_off``); the checks must catch both.
``stale_hand_off`` has a second one: W resumed pops the word of X (granted)
that it is first in line now, and blocks on ``first`` without a look; a
client that does not check the lease left since its last look takes its old
hand-off there.
"""

from __future__ import annotations

import hashlib
import signal
import threading
import time
from typing import Any

from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.rwlocks.rwlock import WriteHold
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.clients import client_from_url
from django_redcoord.core.transport.scripts import Script

from ..support import multiproc

PREFIX = "stale"
NAME = "stale|grants"


class OverconfidentSemaphore(Semaphore):
    """Negative control: believes its lease runs a second past what the server counts."""

    def _grant_steps(self, fence, sent):
        return (yield from super()._grant_steps(fence, sent + 1.0))


class OverconfidentWrite(WriteHold):
    def _grant_steps(self, fence, sent):
        return (yield from super()._grant_steps(fence, sent + 1.0))


def script_variant(script: Script, old: str, new: str) -> Script:
    """``script`` with ``old`` replaced by ``new`` in its source (a negative control's)."""
    variant = Script(script.name, includes=script.includes)
    source = script.source.replace(old, new)
    assert source != script.source, f"{old!r} is not in {script.name}"
    variant._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
    return variant


def without_pending_ahead(script: Script) -> Script:
    """``script`` (a semaphore's or read-write lock's acquire) as it was before
    ``pending_ahead``: a waiter first in line blocks on ``first`` even while hand-offs there
    wait for their owners, and nothing drops a hand-off whose owner's lease ran out."""
    return script_variant(script, "if ahead == '' then", "if false then")


def without_lease_bound(script: Script) -> Script:
    """``script`` (an acquire) telling a queued waiter that no lease bounds its wait (retry 0):
    it blocks a whole wait chunk, whoever holds."""
    if "semaphores/" in script.name:
        return script_variant(
            script, "return {0, next_expiry(holders, now_ms), ahead,", "return {0, 0, ahead,"
        )
    return script_variant(
        script, "return {0, next_expiry(readers, meta, now_ms), ahead,", "return {0, 0, ahead,"
    )


class BlindSemaphore(Semaphore):
    """Negative control of ``pending_hand_off``: first in line, it blocks on ``first`` even while
    a hand-off there waits for its owner (the acquire script before ``pending_ahead``)."""

    _acquire_script = without_pending_ahead(Semaphore._acquire_script)


class BlindWrite(WriteHold):
    _acquire_script = without_pending_ahead(WriteHold._acquire_script)


class UnfencedSemaphore(BlindSemaphore):
    """Negative control: the code before the fix, which took any hand-off of its own from
    ``first``, however old. It looks again on every wake-up, as that code did, and its acquire
    script leaves old hand-offs on ``first`` (``without_pending_ahead``: the current script drops
    one whose owner's lease ran out, and a waiter told it is first in line now blocks on ``first``
    without a look, where the lease check refuses an old hand-off: see ``TrustingSemaphore``)."""

    def _fence_floor(self, reply):
        return 0

    def _now_first(self, owner, reply, popped):
        return None


class UnfencedWrite(BlindWrite):
    def _fence_floor(self, reply):
        return 0

    def _now_first(self, owner, reply, popped):
        return None


class TrustingSemaphore(Semaphore):
    """Negative control: told it is first in line, it blocks on ``first`` without a look and takes
    a hand-off of its own above its last look's floor however long ago that look was, counting
    its lease from the pop (not from that look, nor checking what is left of it)."""

    def _lease_left_enough(self, sent):
        return True

    def _grant_steps(self, fence, sent):
        return (yield from super()._grant_steps(fence, time.monotonic()))


class TrustingWrite(WriteHold):
    def _lease_left_enough(self, sent):
        return True

    def _grant_steps(self, fence, sent):
        return (yield from super()._grant_steps(fence, time.monotonic()))


class UnboundedSemaphore(Semaphore):
    """Negative control of a killed pending owner: queued, it is told no lease bounds its wait."""

    _acquire_script = without_lease_bound(Semaphore._acquire_script)


class UnboundedWrite(WriteHold):
    _acquire_script = without_lease_bound(WriteHold._acquire_script)


def make(family: str, url: str, ttl: float, wait: float, variant: str = "") -> Any:
    client = client_from_url(url)
    if family == "semaphore":
        cls = {
            "": Semaphore,
            "overconfident": OverconfidentSemaphore,
            "unfenced": UnfencedSemaphore,
            "trusting": TrustingSemaphore,
            "blind": BlindSemaphore,
            "unbounded": UnboundedSemaphore,
        }[variant]
        return cls(NAME, 1, ttl=ttl, wait=wait, client=client, prefix=PREFIX)
    rw = ReadWriteLock(NAME, client=client, prefix=PREFIX)
    cls = {
        "": WriteHold,
        "overconfident": OverconfidentWrite,
        "unfenced": UnfencedWrite,
        "trusting": TrustingWrite,
        "blind": BlindWrite,
        "unbounded": UnboundedWrite,
    }[variant]
    return cls(rw, **{**rw._defaults, "ttl": ttl, "wait": wait})


def holders(family: str, hold: Any) -> list[dict[str, Any]]:
    """The live holders the server reports (token, ttl s left, pid...)."""
    return hold.holders() if family == "semaphore" else hold.rwlock.holders()["holders"]


def queued(family: str, hold: Any) -> int:
    return hold.client.llen(hold.keys.queue)


def first_waiter(index, family, url, granted, go):
    """X: queues first; once granted, holds until told to release."""
    hold = make(family, url, ttl=30, wait=30)
    ok = hold.acquire()
    granted.put(ok)
    go.wait(30)
    if ok:
        hold.release()
    return ok


def second_waiter(index, family, url, ttl, wait, variant):
    """W: queues second (blocks on X's wake list); reports what it believes against what the
    server says."""
    hold = make(family, url, ttl=ttl, wait=wait, variant=variant)
    ok = hold.acquire()
    believes = ok and hold.held and not hold.lost
    server = None
    for h in holders(family, hold):  # the server's word, after the belief below was fixed
        if h["token"] == hold._owner:
            server = h["ttl"]
    checked = time.monotonic()
    left = (
        hold._valid_until - checked if ok else None
    )  # what W believes is left, at the latest instant the server answered
    if ok:
        try:
            hold.release()
        except Exception:  # noqa: BLE001 - lost: fine, reported through `server`
            pass
    return {"ok": ok, "believes": believes, "left": left, "server": server}


def _wait_until(check, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _hand_off_while_paused(family, url, w_func, *w_args):
    """A holds, X queues first, W (``w_func(index, family, url, *w_args)`` in a process of its
    own) second; W is SIGSTOPped while it waits on X's wake list; A releases to X, which pops its
    hand-off and tells W it is first in line now (the word waits in W's socket); X releases: W
    is handed the hold.

    Returns (the probe hold of the main process, W's process).
    """
    main = make(family, url, ttl=30, wait=0)
    assert main.acquire()
    granted, go = multiproc.queue(), multiproc.event()
    x = multiproc.start(first_waiter, family, url, granted, go, index=1)
    procs = [x]
    try:
        _wait_until(lambda: queued(family, main) == 1, "X queued")
        w = multiproc.start(w_func, family, url, *w_args, index=2)
        procs.append(w)
        _wait_until(lambda: queued(family, main) == 2, "W queued behind X")
        time.sleep(0.3)  # W blocks on X's wake list
        w.signal(signal.SIGSTOP)
        main.release()
        assert granted.get(timeout=15) is True  # (X told W before its acquire() returned)
        go.set()
        assert x.result(15) is True
        # X's release handed the hold to W (paused): its lease runs on the server from now.
        _wait_until(
            lambda: [h["pid"] for h in holders(family, main)] == [w.pid], "the hand-off to W"
        )
        return main, w
    except BaseException:
        for p in procs:
            p.stop()
        raise


def renewal(family: str, url: str, variant: str = "") -> dict[str, Any]:
    """W resumed well within its lease, after a pause: what it believes vs. the server's lease."""
    main, w = _hand_off_while_paused(family, url, second_waiter, 4.0, 20, variant)
    try:
        time.sleep(1.5)  # W stays paused while its lease runs on the server
        assert [h["pid"] for h in holders(family, main)] == [w.pid]
        w.signal(signal.SIGCONT)
        return w.result(30)
    finally:
        w.stop()


def renewal_ok(r: dict[str, Any]) -> bool:
    # the server's lease (read after W's belief was fixed) at least what W believes is left (ms
    # rounding)
    return r["ok"] and r["server"] is not None and r["server"] + 0.002 >= r["left"]


def stale_hand_off(family: str, url: str, variant: str = "") -> tuple[dict[str, Any], bool]:
    """W paused past its TTL after the hand-off; Y takes the hold; W resumed. Returns (W's
    report, Y held throughout)."""
    main, w = _hand_off_while_paused(family, url, second_waiter, 1.0, 4.0, variant)
    try:
        _wait_until(lambda: holders(family, main) == [], "W's lease to run out on the server")
        y = make(family, url, ttl=30, wait=0)
        assert y.acquire(), "the hold of a paused W whose lease ran out must be free"
        w.signal(signal.SIGCONT)
        report = w.result(30)
        y_held = [h["token"] for h in holders(family, y)] == [y._owner]
        y.release()
        return report, y_held
    finally:
        w.stop()


def timed_waiter(index, family, url, ttl=30):
    """P: queues second; reports when (wall clock) it got the hold."""
    hold = make(family, url, ttl=ttl, wait=20)
    ok = hold.acquire()
    at = time.time()
    if ok:
        hold.release()
    return {"ok": ok, "at": at}


def pending_hand_off(
    family: str, url: str, variant: str = "", fault: str = "stop"
) -> dict[str, Any]:
    """A hand-off waiting on ``first`` for its owner is not taken by a newcomer first in line.

    X queues first, P second (blocked on X's wake list); P is SIGSTOPped. The probe's release
    hands the hold to X, which pops it and tells P it is first in line now (the word waits in P's
    socket); X's release hands the hold to P, whose hand-off waits on ``first``. A newcomer F,
    first in line in the queue (``variant`` is F's), then waits. P is resumed: it blocks on
    ``first`` at once. Returns how long P took from SIGCONT, and whether F got the hold after it.
    A newcomer that blocked on ``first`` would pop P's hand-off (not its own: it looks again and
    waits on), and P would wait out the whole block its last look set (seconds).

    ``fault="kill"``: P (a 2 s lease) is SIGKILLed instead, while F waits behind it. Returns how
    long F took from the kill, and what was left of P's lease then: F's wait is bounded by it.
    """
    main, w = _hand_off_while_paused(
        family, url, timed_waiter, 2 if fault == "kill" else 30
    )  # (W is P here)
    try:
        newcomer = make(family, url, ttl=30, wait=20, variant=variant)
        got: list[Any] = []
        thread = threading.Thread(target=lambda: got.append((newcomer.acquire(), time.time())))
        thread.start()
        _wait_until(lambda: queued(family, main) == 1, "F queued")
        time.sleep(0.3)  # F blocks (or pops P's hand-off and looks again)
        if fault == "kill":
            [lease_left] = [h["ttl"] for h in holders(family, main)]
            killed = time.time()
            w.kill()
            thread.join(25)
            if got and got[0][0]:
                newcomer.release()
            return {
                "newcomer": bool(got and got[0][0]),
                "after_kill": got[0][1] - killed if got else None,
                "lease_left": lease_left,
            }
        resumed = time.time()
        w.signal(signal.SIGCONT)
        report = w.result(30)
        thread.join(25)
        if got and got[0][0]:
            newcomer.release()
        return {
            "ok": report["ok"],
            "took": report["at"] - resumed,
            "newcomer": bool(got and got[0][0]),
        }
    finally:
        w.stop()
