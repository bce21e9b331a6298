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
"""

from __future__ import annotations

import signal
import time
from typing import Any

from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.rwlocks.rwlock import WriteHold
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.transport.clients import client_from_url

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


class UnfencedSemaphore(Semaphore):
    """Negative control: takes any hand-off of its own from ``first``, however old (the code
    before the fix)."""

    def _fence_floor(self, reply):
        return 0


class UnfencedWrite(WriteHold):
    def _fence_floor(self, reply):
        return 0


def make(family: str, url: str, ttl: float, wait: float, variant: str = "") -> Any:
    client = client_from_url(url)
    if family == "semaphore":
        cls = {
            "": Semaphore,
            "overconfident": OverconfidentSemaphore,
            "unfenced": UnfencedSemaphore,
        }[variant]
        return cls(NAME, 1, ttl=ttl, wait=wait, client=client, prefix=PREFIX)
    rw = ReadWriteLock(NAME, client=client, prefix=PREFIX)
    cls = {"": WriteHold, "overconfident": OverconfidentWrite, "unfenced": UnfencedWrite}[variant]
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


def _hand_off_while_paused(family, url, w_ttl, w_wait, variant):
    """A holds, X queues first, W second; W is SIGSTOPped; A releases to X, X releases: W is
    handed the hold.

    Returns (the probe hold of the main process, W's process).
    """
    main = make(family, url, ttl=30, wait=0)
    assert main.acquire()
    granted, go = multiproc.queue(), multiproc.event()
    x = multiproc.start(first_waiter, family, url, granted, go, index=1)
    procs = [x]
    try:
        _wait_until(lambda: queued(family, main) == 1, "X queued")
        w = multiproc.start(second_waiter, family, url, w_ttl, w_wait, variant, index=2)
        procs.append(w)
        _wait_until(lambda: queued(family, main) == 2, "W queued behind X")
        w.signal(signal.SIGSTOP)
        main.release()
        assert granted.get(timeout=15) is True
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
    main, w = _hand_off_while_paused(family, url, w_ttl=4.0, w_wait=20, variant=variant)
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
    main, w = _hand_off_while_paused(family, url, w_ttl=1.0, w_wait=4.0, variant=variant)
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
