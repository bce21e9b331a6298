"""Leader election on one Redis: one leader at a time, a term that grows on every change.

How it works (every operation is one round trip, one Lua script):

* ``campaign()`` runs ``leader/campaign.lua``. The record (a hash with a
  ``PEXPIRE`` lease) names the leader: identity, a random token per term, the
  term, since/renewed times (Redis server time). If the record carries our
  token we renew it (new lease, same term). If it is free, we become leader:
  ``INCR`` of the never-expiring term counter gives the new term.
* A leader renews every ``retry_period``. Standbys campaign every
  ``retry_period`` too, but wait by ``BLPOP`` on the ``notify`` list, so a
  resigning leader (``leader/resign.lua`` deletes the record and pushes onto
  it) is replaced at once, not a retry period later.
* ``is_leader()`` costs no round trip: it is true only while
  ``monotonic() < time the last successful renewal was *sent* + renew_deadline``.
  The record lives ``lease`` from the moment Redis *ran* the renewal, which is
  later, and ``renew_deadline < lease``: a leader that cannot renew (Redis
  unreachable, the process paused) stops believing it leads before anyone
  else can be elected. Timeline of the race this prevents::

      t=0    A renews (sent at 0, Redis runs it at 0+d): record lives to d+lease
      t=0.5  Redis unreachable for A; A keeps retrying
      t=rd   A's is_leader() turns False (rd = renew_deadline < lease)
      t=d+lease  the record expires; B campaigns and gets term+1

  A process paused (SIGSTOP, GC) past its lease resumes believing nothing, and
  its first check of ``is_leader()`` is already False; actions it had started
  are refused by the term-fenced scripts (``periodic/claim.lua``).

Timing rules are client-go's: ``lease > renew_deadline > 1.2 × retry_period``.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from ..exceptions import CoordinationUnavailable
from ..keys import LeaderKeys, validate_name
from ..observe import observe, observers
from ..transport.clients import UsesClient, key_builder
from ..transport.commands import as_text, blpop, max_block
from ..transport.drivers import arun
from ..transport.scripts import Script
from ..values import DEFAULT, check_timing, ms
from .records import Leadership, leader_defaults, leader_steps, read_leader

log = logging.getLogger("django_redcoord.leader")

_CAMPAIGN = Script("leader/campaign")
_RESIGN = Script("leader/resign")

#: The election ``manage.py run_leader`` takes part in.
DEFAULT_ELECTION = "default"

__all__ = [
    "DEFAULT_ELECTION",
    "LeaderElection",
    "Leadership",
    "check_timing",
    "leader_defaults",
    "read_leader",
]


def _check_identity(identity: object) -> str:
    if (
        not isinstance(identity, str)
        or not identity
        or len(identity) > 200
        or not identity.isprintable()
    ):
        raise ValueError(
            f"identity must be a printable str of 1 to 200 characters, not {identity!r}"
        )
    return identity


class _Lead(NamedTuple):
    term: int
    token: str
    valid_until: float  # time.monotonic() after which we no longer believe we lead


class LeaderElection(UsesClient):
    """Take part in the election ``name``: at most one candidate leads at a time.

    Args:
        name: the election, e.g. ``"default"`` (letters, digits, ``_ - . : / @ = + , # ~ |``).
        lease: seconds the leader record lives without renewal; a crashed
            leader is replaced within ``lease + retry_period``
            (default ``REDCOORD["LEADER_LEASE"]``, 15 s).
        renew_deadline: seconds after the last successful renewal was sent
            after which the leader stops believing it leads (default 10 s).
        retry_period: seconds between campaigns (renewals of the leader,
            attempts of the standbys) (default 2 s).
        identity: how this candidate is shown to others (default ``host:pid``).
        client: a redis-py client; default: the one REDCOORD configures.
        prefix: key prefix; default ``REDCOORD["KEY_PREFIX"]``.
        on_elected: called with the term when this candidate becomes leader.
        on_demoted: called with the term that ended when it stops leading.

    Raises ValueError unless ``lease > renew_deadline > 1.2 × retry_period``.
    Callbacks run on the thread that campaigned (the background thread after
    ``start()``) and must return quickly: renewals wait for them.
    """

    def __init__(
        self,
        name: str,
        lease: float = DEFAULT,
        renew_deadline: float = DEFAULT,
        retry_period: float = DEFAULT,
        *,
        identity: str | None = None,
        client: Any = None,
        prefix: str | None = None,
        on_elected: Callable[[int], Any] | None = None,
        on_demoted: Callable[[int], Any] | None = None,
    ) -> None:
        self.name = validate_name(name, "election name")
        defaults = (
            leader_defaults() if DEFAULT in (lease, renew_deadline, retry_period) else (0, 0, 0)
        )
        self.lease, self.renew_deadline, self.retry_period = check_timing(
            defaults[0] if lease is DEFAULT else lease,
            defaults[1] if renew_deadline is DEFAULT else renew_deadline,
            defaults[2] if retry_period is DEFAULT else retry_period,
        )
        self.identity = _check_identity(identity or f"{socket.gethostname()}:{os.getpid()}")
        for what, callback in (("on_elected", on_elected), ("on_demoted", on_demoted)):
            if callback is not None and not callable(callback):
                raise TypeError(f"{what} must be a callable taking the term, not {callback!r}")
        self.on_elected = on_elected
        self.on_demoted = on_demoted
        self._client = client
        self.keys: LeaderKeys = key_builder(prefix, client).leader(self.name)
        self._lead: _Lead | None = None
        self._stale = ""  # a token the record may still hold though we no longer lead with it
        self._seen_term = 0  # highest term ever seen: a new term is always above it
        self._expires_hint = math.inf  # seconds the record had left at our last campaign
        self._op_lock = threading.Lock()  # one campaign or resignation at a time
        self._thread: _Campaigner | None = None
        #: The error that ended the background campaign thread (None while it runs).
        self.failure: BaseException | None = None

    def __repr__(self) -> str:
        lead = self._lead
        state = f"leader, term {lead.term}" if lead and self.is_leader() else "standby"
        return f"<LeaderElection {self.name!r} {self.identity!r} {state}>"

    # -- local state (no round trip) ---------------------------------------------

    def is_leader(self) -> bool:
        """True while this candidate leads, by the local monotonic clock (no round trip).

        Turns False ``renew_deadline`` seconds after the last successful renewal
        was sent, even if nobody calls anything: before the lease can expire.
        """
        lead = self._lead
        return lead is not None and time.monotonic() < lead.valid_until

    @property
    def term(self) -> int | None:
        """The term this candidate leads, or None when it does not lead."""
        lead = self._lead
        return lead.term if lead is not None and time.monotonic() < lead.valid_until else None

    def fence(self) -> tuple[int, str] | None:
        """(term, token) of the term this candidate leads, for term-fenced scripts; else None."""
        lead = self._lead
        if lead is None or time.monotonic() >= lead.valid_until:
            return None
        return lead.term, lead.token

    def current(self) -> Leadership | None:
        """Who leads now according to Redis (one round trip; anyone may call it)."""
        return read_leader(self.keys, self.client)

    async def acurrent(self) -> Leadership | None:
        """``current()`` on the event loop, with a ``redis.asyncio`` client."""
        return await arun(self._async_client(), leader_steps(self.keys))

    # -- campaigning -------------------------------------------------------------

    def campaign(self) -> bool:
        """One round: become leader if the record is free, or renew it if ours.

        Returns ``is_leader()`` afterwards. Raises CoordinationUnavailable if
        Redis cannot be reached (a leader then keeps leading until its renew
        deadline; calling again is safe: a lost reply is recovered).
        """
        with self._op_lock:
            events, error = self._round()
        self._fire(events)
        if error is not None:
            raise error
        return self.is_leader()

    def _round(self) -> tuple[list[tuple[str, int]], CoordinationUnavailable | None]:
        events: list[tuple[str, int]] = []
        lead = self._lead
        if lead is not None and time.monotonic() >= lead.valid_until:
            events.append(
                self._step_down(f"no renewal within renew_deadline ({self.renew_deadline:g} s)")
            )
            lead = None
        fresh = secrets.token_hex(16)
        sent = time.monotonic()
        try:
            reply = _CAMPAIGN(
                self.client,
                [self.keys.record, self.keys.term],
                [
                    lead.token if lead else "",
                    self._stale,
                    fresh,
                    self.identity,
                    ms(self.lease),
                    self._seen_term,
                ],
                operation=f"campaign in election {self.name!r}",
            )
        except CoordinationUnavailable as exc:
            if lead is None:
                # The script may have run and made us leader with `fresh`: next
                # time a record holding it is recognised as ours. (A second
                # lost reply in a row forgets the first token; that record
                # then just expires after one lease.)
                self._stale = fresh
            return events, exc
        code, term, _since, identity, pttl = (
            int(reply[0]),
            int(reply[1]),
            reply[2],
            reply[3],
            int(reply[4]),
        )
        self._seen_term = max(self._seen_term, term)
        self._expires_hint = pttl / 1000.0 if pttl >= 0 else math.inf
        if code == 1 and lead is not None:
            self._lead = lead._replace(valid_until=sent + self.renew_deadline)
        elif code == 2:
            if lead is not None:
                events.append(
                    self._step_down("its record expired before the renewal reached Redis")
                )
            if int(reply[5]):
                log.warning(
                    "leader %s: the term counter went backwards (Redis lost data?); raised to %d",
                    self.name,
                    term,
                )
            self._lead = _Lead(term, fresh, sent + self.renew_deadline)
            self._stale = ""
            log.info("leader %s: %s elected, term %d", self.name, self.identity, term)
            events.append(("elected", term))
        else:
            if lead is not None:
                events.append(self._step_down(f"{as_text(identity)} leads term {term}"))
            # The record holds another candidate's token: ours can never come back.
            self._stale = ""
        return events, None

    def _step_down(self, reason: str, level: int = logging.WARNING) -> tuple[str, int]:
        lead, self._lead = self._lead, None
        assert lead is not None
        # Redis may still hold our record (we only lost track of it): the next
        # campaign replaces it at once with a new term instead of waiting.
        self._stale = lead.token
        log.log(
            level,
            "leader %s: %s stepped down from term %d: %s",
            self.name,
            self.identity,
            lead.term,
            reason,
        )
        return ("demoted", lead.term)

    def _fire(self, events: list[tuple[str, int]]) -> None:
        for event, term in events:
            if observers:
                observe("leader." + event, election=self.name, term=term)
            callback = self.on_elected if event == "elected" else self.on_demoted
            if callback is None:
                continue
            try:
                callback(term)
            except Exception:
                log.exception("leader %s: %s callback failed", self.name, "on_" + event)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the next campaign is due (at most ``timeout`` s, default retry_period).

        A standby waits on the ``notify`` list (BLPOP), so it returns at once
        when the leader resigns, and right after the record expires. A leader
        just sleeps.
        """
        timeout = self.retry_period if timeout is None else max(0.0, timeout)
        if self.is_leader():
            time.sleep(timeout)
            return
        block = max(0.01, min(timeout, self._expires_hint + 0.005))
        blpop(self.client, [self.keys.notify], block, operation=f"wait in election {self.name!r}")

    def _chunk(self) -> float:
        return max_block(self.client)

    # -- background thread ---------------------------------------------------------

    def start(self) -> None:
        """Campaign from a daemon thread until ``stop()`` or ``resign()``.

        The thread rides out Redis outages. Any other error ends it: the
        candidate steps down and ``failure`` holds the error (see ``running``).
        """
        if self._thread is not None and self._thread.is_alive():
            return
        self.failure = None
        self._thread = _Campaigner(self)
        self._thread.start()

    @property
    def running(self) -> bool:
        """True while the background campaign thread (``start()``) runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the background thread (leadership is kept until its lease expires)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()
            if thread is not threading.current_thread():
                thread.join(timeout if timeout is not None else self._chunk() + 1.0)

    def resign(self) -> bool:
        """Stop campaigning and give up leadership now; a standby takes over at once.

        Returns True if we led and the record was deleted, False if we did not
        lead (or the record had already passed on). The background thread is
        stopped first: it could otherwise renew, or re-elect us, right after.
        """
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()
        with self._op_lock:
            lead, events = self._lead, []
            resigned = False
            token = lead.token if lead is not None else self._stale
            # Stop believing first: the moment the record is deleted a standby
            # may be elected, and two candidates must never both say is_leader().
            if lead is not None:
                events.append(self._step_down("resigned", logging.INFO))
            try:
                if token:
                    resigned = bool(
                        _RESIGN(
                            self.client,
                            [self.keys.record, self.keys.notify],
                            [token, ms(max(self.retry_period, 1.0))],
                            operation=f"resign from election {self.name!r}",
                        )
                    )
            finally:
                self._stale = ""
        self._fire(events)
        if thread is not None and thread is not threading.current_thread():
            thread.join(self._chunk() + 1.0)
        return resigned


class _Campaigner(threading.Thread):
    """Campaigns every retry_period until stopped.

    Holds only a weak reference, so a forgotten election is collected and the
    thread ends (a leader's record then expires after its lease).
    """

    def __init__(self, election: LeaderElection) -> None:
        super().__init__(name=f"redcoord-leader:{election.name}", daemon=True)
        self._election = weakref.ref(election)
        self._stopped = threading.Event()

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        failing = False
        while not self._stopped.is_set():
            election = self._election()
            if election is None:
                return
            started = time.monotonic()
            try:
                with election._op_lock:
                    # Checked under the lock: resign() sets the flag, then takes
                    # the lock; no renewal can slip in after its DEL.
                    if self._stopped.is_set():
                        return
                    events, error = election._round()
                election._fire(events)
                if error is not None:
                    raise error
                if failing:
                    log.info("leader %s: Redis answers again", election.name)
                failing = False
                if election.is_leader():
                    pause = election.retry_period - (time.monotonic() - started)
                    self._stopped.wait(max(0.0, pause))
                else:
                    election.wait()
            except CoordinationUnavailable as exc:
                if not failing:
                    log.warning(
                        "leader %s: campaign failed, retrying every %g s: %s",
                        election.name,
                        election.retry_period,
                        exc,
                    )
                failing = True
                self._stopped.wait(election.retry_period)
            except BaseException as exc:
                # Not an outage: a bug or a fault no retry mends. Stop believing,
                # record why, and end: run_leader sees the thread gone and exits
                # non-zero instead of running on without a campaign.
                election.failure = exc
                log.critical("leader %s: campaign thread died", election.name, exc_info=exc)
                if election._lead is not None:
                    event = election._step_down(
                        f"the campaign thread failed: {exc!r}", logging.ERROR
                    )
                    try:
                        election._fire([event])
                    except BaseException:  # noqa: BLE001 - already dying of an error worth more
                        pass
                return
            finally:
                del election
