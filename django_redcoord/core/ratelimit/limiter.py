"""Rate limiting on Redis: GCRA, sliding windows and concurrency limits, several at once.

::

    api = RateLimiter("10/s;burst=20 & 1000/h", name="api")
    decision = api.hit("user:42")            # one round trip, on Redis's clock
    if not decision.allowed:
        retry_in = decision.retry_after      # seconds
    await api.ahit("user:42")                # the same on the event loop

    exports = RateLimiter("concurrency=5", name="exports")
    with exports.slot("user:42") as decision:   # released when the block ends
        ...

Every policy of a limiter is decided in one Lua script, on the Redis
server's clock (clients' clocks never matter), all or nothing: a request
passes only if every policy lets it through, and only then counts against
all of them. **GCRA** (the generic cell rate algorithm, a token bucket
without a refill job) admits at most ``burst`` at once and ``limit`` per
``period`` after that, exactly. The **sliding-window counter** weighs the
previous fixed window by how much of it the sliding window still covers: at
most ``limit`` in any fixed window, and about ``limit`` in a sliding one while
traffic is steady (it assumes the previous window's requests came evenly: a
burst at the end of one window, then steady requests, can let up to nearly
``2 * limit`` into one sliding span). Use GCRA where a sliding bound must be
exact.
A **concurrency** limit counts requests in flight; each holds a slot leased
for ``lease`` seconds, so a crashed request's slot comes back.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import NoScriptError

from ..exceptions import CoordinationUnavailable, RedcoordError
from ..holds.settling import settle_later
from ..keys import _NAME_RE, validate_name
from ..observe import observe, observers
from ..rates import Policy, parse
from ..transport.clients import UsesClient, key_builder
from ..transport.drivers import Batch, Command, Run, Step, Steps, arun, run, uncancellable
from ..transport.scripts import Script
from ..values import check_count
from . import native as cell

HIT = Script("ratelimit/hit", includes=("ratelimit/common",))
COUNT = Script("ratelimit/count", includes=("ratelimit/common",))
RELEASE = Script("ratelimit/release")
#: Seconds after Redis first answers a slot's give-back in doubt before it is asked again.
SLOT_AGAIN = 0.25
RESET = Script("ratelimit/reset")

_KIND = {"gcra": "g", "window": "w", "concurrency": "c"}
#: How many keys' script keys a limiter remembers (see RateLimiter._hit_keys).
KEYS_KEPT = 1024


class RateLimited(RedcoordError):
    """A request was refused by a rate limit; ``decision`` says which and for how long."""

    def __init__(self, message: str, *, decision: Decision) -> None:
        super().__init__(message)
        self.decision = decision


@dataclass(frozen=True)
class PolicyState:
    """Where one policy stands for a key after a decision (seconds)."""

    policy: Policy
    remaining: int
    reset: float
    retry_after: float


@dataclass(frozen=True)
class Decision:
    """The outcome of ``hit``/``peek``: ``allowed``, and the numbers headers need.

    ``remaining``: requests the tightest policy still lets through now;
    ``reset``: seconds until the tightest policy is back to full;
    ``retry_after``: seconds until a refused request could pass (0 when allowed);
    ``denied_by``: the policy that refused it (None when allowed);
    ``policies``: every policy's own state; ``token``: the concurrency slot to
    ``release()`` (None without a concurrency policy, or when refused).
    """

    allowed: bool
    remaining: int
    reset: float
    retry_after: float
    denied_by: Policy | None
    policies: tuple[PolicyState, ...] = field(default=())
    key: str = ""
    token: str | None = None


def safe_key(key: object) -> str:
    """A rate-limit key as stored: itself when it is a valid name, else a digest.

    Keys come from requests (an IP, a user id, a header): any text. One that
    a key name cannot hold (spaces, braces, too long) is stored as
    ``#`` + the first 32 hex digits of its SHA-256.
    """
    if not isinstance(key, str):
        key = str(key)
    if key and len(key) <= 200 and _NAME_RE.fullmatch(key):
        return key
    return "#" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class _SlotInDoubt:
    """A concurrency slot a hit cut off by an outage may still take once Redis answers (see
    ``holds.settling``): given back by its token."""

    __slots__ = ("limiter", "inflight")

    def __init__(self, limiter: RateLimiter, inflight: str) -> None:
        self.limiter, self.inflight = limiter, inflight

    @property
    def kind(self) -> str:
        return "rate limit"

    @property
    def name(self) -> str:
        return self.limiter.name

    def settle(self, token: str) -> bool:
        """Give the slot of ``token`` back; True once it was there (the hit ran: done)."""
        released = Run(
            RELEASE,
            [self.inflight],
            [token],
            f"give back a slot of rate limit {self.limiter.name!r} in doubt",
        ).run(self.limiter.client)
        return bool(int(released))


class RateLimiter(UsesClient):
    """Policies checked together for any key: ``hit``, ``peek``, ``reset``, ``release``, ``slot``.

    Args:
        policies: text like ``"10/s;burst=20 & 1000/h"`` (see
            :mod:`~django_redcoord.core.rates`), a Policy, or a list.
        name: the limiter's name (keys of different limiters never mix).
        track: count every key's hits per minute for the admin's busiest keys
            (two more commands per decision; default True).
        native: decide a lone GCRA policy with the server's ``CL.THROTTLE``
            when it has one (redis-cell, Dragonfly; whole-second answers, see
            :mod:`~django_redcoord.core.ratelimit.native`); False keeps to the
            Lua script.
        client, prefix: as for a lock.
    """

    def __init__(
        self,
        policies: Any,
        *,
        name: str = "default",
        track: bool = True,
        native: bool = True,
        client: Any = None,
        prefix: str | None = None,
    ) -> None:
        self.policies = tuple(parse(policies))
        if sum(p.kind == "concurrency" for p in self.policies) > 1:
            raise ValueError("a rate limiter takes at most one concurrency policy")
        self.name = validate_name(
            name, "rate limiter name", tag=False
        )  # a composite key part: no {tag}
        self.track = bool(track)
        self._client = client
        self.keys = key_builder(prefix, client)
        self._text = " & ".join(p.text for p in self.policies)  # as the admin's index keeps them
        self._args = [self.name, self._text, str(len(self.policies))]
        for p in self.policies:
            self._args += [_KIND[p.kind], str(p.limit), str(int(p.period * 1000)), str(p.burst)]
        self._concurrency = any(p.kind == "concurrency" for p in self.policies)
        self._single = len(self.policies) == 1
        self._keys_of: dict[str, list[str]] = {}  # see _hit_keys
        # the largest cost a request can have and still pass some day
        self._most_cost = min(
            [
                p.burst if p.kind == "gcra" else p.limit
                for p in self.policies
                if p.kind != "concurrency"
            ]
            or [1_000_000]
        )
        self.native = bool(native) and cell.eligible(
            self.policies
        )  # CL.THROTTLE may decide, if the server has it
        self._cell_client: Any = None  # the last client CL.THROTTLE answered on
        self._operation = f"rate limit {self.name!r}"

    def __repr__(self) -> str:
        return f"<RateLimiter {self.name!r} {' & '.join(p.text for p in self.policies)}>"

    # -- decisions ----------------------------------------------------------------

    def hit(self, key: Any, cost: int = 1) -> Decision:
        """Decide a request of ``key`` and count it if it passes (one round trip)."""
        client = self.client
        if self._concurrency or (
            self.native and (client is self._cell_client or cell.known(client) is not False)
        ):
            return run(client, self._hit_steps("hit", key, cost, client))
        # The script decides and no slot can need giving back: _hit_steps's one step, sent
        # without driving steps (the most frequent call of all, once per request).
        call, stored, _ = self.hit_call("hit", key, cost)
        decided = self.decision(call.run(client), stored, None)
        if observers:
            observe("ratelimit.hit", limiter=self.name, allowed=decided.allowed)
        return decided

    async def ahit(self, key: Any, cost: int = 1) -> Decision:
        """``hit()`` on the event loop."""
        client = self._async_client()
        return await arun(client, self._hit_steps("hit", key, cost, client))

    def peek(self, key: Any) -> Decision:
        """What ``hit()`` would decide now, counting nothing; ``remaining`` is what remains now."""
        client = self.client
        return run(client, self._hit_steps("peek", key, 1, client))

    async def apeek(self, key: Any) -> Decision:
        """``peek()`` on the event loop."""
        client = self._async_client()
        return await arun(client, self._hit_steps("peek", key, 1, client))

    def _hit_steps(self, mode: str, key: Any, cost: int, client: Any) -> Steps:
        tracked = (
            self.track
        )  # counted for the admin (each minute's first count names the limiter in its index)
        # the last client seen to have CL.THROTTLE saves looking its server up on every hit
        if self.native and (client is self._cell_client or cell.known(client) is not False):
            call, stored, _ = self.hit_call(mode, key, cost, server_gcra=True)
            counted: Any = None  # the count's reply (a batch's second)
            try:
                reply = yield call
                if isinstance(call, Batch):  # the command, then the count for the admin
                    reply, counted = reply
                    if isinstance(reply, Exception):
                        raise reply
                    if isinstance(
                        counted, NoScriptError
                    ):  # a server that does not know the count yet
                        yield Run(
                            COUNT,
                            self._count_keys(stored),
                            [stored, cost, self.name, self._text],
                            self._operation,
                        )
                    elif isinstance(counted, Exception):
                        raise counted
            except Exception as exc:
                if not cell.is_unknown_command(exc):
                    raise
                cell.learn(client, False)  # this server has no CL.THROTTLE: the script decides
                self._cell_client = None
                if counted is not None and not isinstance(counted, Exception):
                    tracked = False  # the hit was counted already
            else:
                if client is not self._cell_client:
                    cell.learn(client, True)
                    self._cell_client = client
                decided = self.decision(
                    reply, stored, None, peek=mode == "peek", server_gcra=True, cost=cost
                )
                if observers and mode == "hit":
                    observe("ratelimit.hit", limiter=self.name, allowed=decided.allowed)
                return decided
        call, stored, token = self.hit_call(mode, key, cost, track=tracked)
        try:
            reply = yield call
        except CoordinationUnavailable as exc:
            if token and exc.sent:
                # Timed out or cut off after it was sent: a paused server runs the hit once it
                # answers again, perhaps after a give-back sent now (another connection), and
                # nobody would give that slot back before its lease ran out. The settling
                # thread gives it back once Redis answers (the request does not wait for it).
                _, inflight = self.keys.rate_limit(self.name, stored)
                if self._settles_in_thread():
                    lease = next(p.period for p in self.policies if p.kind == "concurrency")
                    # (asked at once, and again shortly after Redis first answers: the hit may
                    # have waited at the resume beside our first ask and run after it)
                    settle_later(_SlotInDoubt(self, inflight), token, lease, SLOT_AGAIN, first=0.0)
                else:  # no client the settling thread can use: give it back now, as we can
                    yield from self._give_back_steps(inflight, token)
            raise
        except BaseException:
            if token:  # cancelled or interrupted: the script may have granted the slot
                _, inflight = self.keys.rate_limit(self.name, stored)
                yield from self._give_back_steps(inflight, token)
            raise
        decided = self.decision(reply, stored, token, peek=mode == "peek")
        if observers and mode == "hit":
            observe("ratelimit.hit", limiter=self.name, allowed=decided.allowed)
        return decided

    def _give_back_steps(self, inflight: str, token: str) -> Steps:
        """Give back now the slot of ``token`` a hit may have taken (best effort: with Redis
        unreachable, the slot's lease returns it)."""
        try:
            yield Run(RELEASE, [inflight], [token], f"give back a slot of rate limit {self.name!r}")
        except Exception:  # noqa: S110 - (see above)
            pass

    def hit_call(
        self,
        mode: str,
        key: Any,
        cost: int = 1,
        *,
        server_gcra: bool = False,
        track: bool | None = None,
    ) -> tuple[Step, str, str | None]:
        """The round trip of a ``hit`` or ``peek`` (a step, for pipelines too), the key as
        stored, and the slot token.

        ``server_gcra``: by ``CL.THROTTLE`` (only for a limiter whose ``native``
        is true); ``track``: count the hit for the admin (default: ``self.track``).
        """
        if (
            type(cost) is not int or cost != 1
        ):  # the usual cost needs no checking (True is not 1 here)
            check_count(cost, "cost", 1, 1_000_000)
            self._check_cost(cost)
        stored = safe_key(key)
        track = self.track if track is None else track
        if server_gcra:
            args = cell.throttle_args(
                self.keys.rate_limit_cell(self.name, stored),
                self.policies[0],
                0 if mode == "peek" else cost,
            )
            if track and mode == "hit":
                counting = (
                    "EVALSHA",
                    COUNT.sha,
                    3,
                    *self._count_keys(stored),
                    stored,
                    cost,
                    self.name,
                    self._text,
                )
                return (
                    Batch(
                        args, counting, operation=self._operation, raise_errors=False, key=args[1]
                    ),
                    stored,
                    None,
                )
            return Command(*args, operation=self._operation), stored, None
        token = secrets.token_urlsafe(9) if self._concurrency and mode == "hit" else ""
        call = Run(
            HIT,
            self._hit_keys(stored),
            [mode, cost, stored if track else "", token, *self._args],
            self._operation,
        )
        return call, stored, token or None

    def _hit_keys(self, stored: str) -> list[str]:
        """The keys of ``ratelimit/hit.lua`` for ``stored``, remembered for the last
        ``KEYS_KEPT`` keys seen (building them costs more than the rest of a hit's Python)."""
        keys = self._keys_of.get(stored)
        if keys is None:
            if len(self._keys_of) >= KEYS_KEPT:
                self._keys_of.clear()
            state, inflight = self.keys.rate_limit(self.name, stored)
            keys = self._keys_of[stored] = [state, inflight, *self._count_keys(stored)]
        return keys

    def _count_keys(self, stored: str) -> list[str]:
        """The keys counting hits of ``stored`` for the admin: this minute's and the last's
        busiest keys,
        the index of limiters (on a Cluster, those of the key's slot)."""
        return [
            *self.keys.rate_limit_top(self.name, stored),
            self.keys.rate_limit_index(self.name, stored),
        ]

    def _check_cost(self, cost: int) -> None:
        if cost <= self._most_cost:
            return
        for p in self.policies:
            most = p.burst if p.kind == "gcra" else p.limit if p.kind == "window" else cost
            if cost > most:
                what = "burst" if p.kind == "gcra" else "limit"
                raise ValueError(
                    f"rate limit {self.name!r}: a cost of {cost} could never pass policy "
                    f"{p.text!r} (its {what} is {most}); use a cost from 1 to {self._most_cost}"
                )

    def decision(
        self,
        reply: Any,
        key: str,
        token: str | None,
        *,
        peek: bool = False,
        server_gcra: bool = False,
        cost: int = 1,
    ) -> Decision:
        """The Decision of a ``ratelimit/hit.lua`` reply (of ``CL.THROTTLE``'s with
        ``server_gcra``)."""
        if server_gcra:
            policy = self.policies[0]
            passed, remaining, reset, retry = cell.numbers(reply, policy, peek=peek, cost=cost)
            state = PolicyState(policy, remaining, reset, retry)
            return Decision(
                passed, remaining, reset, retry, None if passed else policy, (state,), key
            )
        if self._single:  # one policy (most limiters): its state is the decision's
            allowed, _, remaining, reset_ms, retry_ms = map(int, reply)
            if peek and retry_ms == 0:
                remaining += 1
            policy = self.policies[0]
            reset, retry = reset_ms / 1000.0, retry_ms / 1000.0
            return Decision(
                bool(allowed),
                remaining,
                reset,
                retry,
                None if allowed else policy,
                (PolicyState(policy, remaining, reset, retry),),
                key,
                token if allowed else None,
            )
        allowed, denied, *numbers = (int(x) for x in reply)
        # The script answers as if a request were made; a peek made none:
        # what remains now is one more wherever that request would pass.
        states = tuple(
            PolicyState(
                p,
                numbers[3 * i] + (1 if peek and numbers[3 * i + 2] == 0 else 0),
                numbers[3 * i + 1] / 1000.0,
                numbers[3 * i + 2] / 1000.0,
            )
            for i, p in enumerate(self.policies)
        )
        return Decision(
            allowed=bool(allowed),
            remaining=min(s.remaining for s in states),
            reset=max(s.reset for s in states),
            retry_after=max(s.retry_after for s in states),
            denied_by=None if allowed else self.policies[denied - 1],
            policies=states,
            key=key,
            token=token if allowed else None,
        )

    # -- concurrency slots -------------------------------------------------------------

    def release(self, decision: Decision) -> bool:
        """Give back the concurrency slot ``decision`` holds; False if its lease had run out."""
        return run(self.client, self._release_steps(decision))

    async def arelease(self, decision: Decision) -> bool:
        """``release()`` on the event loop."""
        return await arun(self._async_client(), self._release_steps(decision))

    def _release_steps(self, decision: Decision) -> Steps:
        if not decision.token:
            return False
        _, inflight = self.keys.rate_limit(self.name, decision.key)
        released = yield Run(
            RELEASE, [inflight], [decision.token], f"release a slot of rate limit {self.name!r}"
        )
        return bool(int(released))

    @contextmanager
    def slot(self, key: Any, cost: int = 1) -> Iterator[Decision]:
        """``hit()`` for a block: raises RateLimited when refused; releases the concurrency slot
        at the end."""
        decision = self.hit(key, cost)
        if not decision.allowed:
            raise self.limited(decision)
        try:
            yield decision
        finally:
            self.release(decision)

    @asynccontextmanager
    async def aslot(self, key: Any, cost: int = 1) -> Any:
        """``slot()`` on the event loop."""
        decision = await self.ahit(key, cost)
        if not decision.allowed:
            raise self.limited(decision)
        try:
            yield decision
        finally:
            await uncancellable(
                self.arelease(decision), reraise=True
            )  # even if cancelled again meanwhile

    def limited(self, decision: Decision) -> RateLimited:
        """The error for a refused ``decision``."""
        policy = decision.denied_by.text if decision.denied_by else "?"
        return RateLimited(
            f"rate limit {self.name!r} ({policy}) refused key {decision.key!r}: "
            f"retry in {decision.retry_after:.3f} s",
            decision=decision,
        )

    # -- operation ---------------------------------------------------------------------

    def reset(self, key: Any) -> int:
        """Forget what ``key`` has counted (its next request starts afresh); returns keys
        deleted."""
        return run(self.client, self._reset_steps(key))

    async def areset(self, key: Any) -> int:
        """``reset()`` on the event loop."""
        return await arun(self._async_client(), self._reset_steps(key))

    def _reset_steps(self, key: Any) -> Steps:
        stored = safe_key(key)
        state, inflight = self.keys.rate_limit(self.name, stored)
        keys = [
            state,
            inflight,
            *self.keys.rate_limit_top(self.name, stored),
            self.keys.rate_limit_cell(self.name, stored),
        ]
        deleted = yield Run(RESET, keys, [stored], f"reset rate limit {self.name!r}")
        return int(deleted)
