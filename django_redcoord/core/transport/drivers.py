"""Primitives written once: their round trips as steps, run by a sync or an asyncio driver.

A primitive's operation is a generator that yields the round trips it needs
(:class:`Run` a script, :class:`Command`, :class:`Blpop`) and gets each reply
back (or has the round trip's exception thrown in at the ``yield``), then
returns its result. It never does I/O itself, so the same logic serves
``lock.acquire()`` and ``await lock.aacquire()``:

    def _extend_steps(self, owner, ttl):
        ok = yield Run(_EXTEND, keys, args, "extend lock 'x'")
        return bool(ok)

    run(client, lock._extend_steps(...))            # sync: one thread blocks
    await arun(aclient, lock._extend_steps(...))    # asyncio: the loop goes on

The drivers own the I/O, the error translation (``CoordinationUnavailable``)
and cancellation: an exception raised by a round trip, a ``KeyboardInterrupt``
or an asyncio cancellation is thrown into the generator at its ``yield``, so
one ``except BaseException`` there gives back what the operation took, by
yielding more steps. In the asyncio driver those clean-up steps run to the
end even if the task is cancelled again meanwhile; the generator re-raises
the original cancellation afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Generator, Iterator
from typing import Any

import redis

from ..exceptions import CoordinationUnavailable
from . import nearby
from .commands import (
    MIN_BLOCK,
    _is_cluster,
    ablocking,
    ablpop,
    acommand,
    answered_by,
    blocking,
    blpop,
    command,
    ending_waits,
    max_block,
    out_of_time,
    socket_timeout,
)
from .commands import acommands as asend_commands
from .commands import commands as send_commands
from .errors import outages_in, unavailable_as_ours
from .hub import apop_wake, aread_wake, pop_wake, read_wake
from .scripts import Script

#: What a primitive's operation is: a generator of steps returning its result.
Steps = Generator["Step", Any, Any]


class Step:
    """One round trip to Redis."""

    __slots__ = ()

    def run(self, client: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def arun(self, client: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class Run(Step):
    """Run a Lua script (EVALSHA, EVAL after NOSCRIPT)."""

    __slots__ = ("script", "keys", "args", "operation")

    def __init__(self, script: Script, keys: list[str], args: list[Any], operation: str) -> None:
        self.script, self.keys, self.args, self.operation = script, keys, args, operation

    def run(self, client: Any) -> Any:
        return self.script(client, self.keys, self.args, operation=self.operation)

    async def arun(self, client: Any) -> Any:
        return await self.script.arun(client, self.keys, self.args, operation=self.operation)


class Command(Step):
    """Send one command."""

    __slots__ = ("args", "operation")

    def __init__(self, *args: Any, operation: str) -> None:
        self.args, self.operation = args, operation

    def run(self, client: Any) -> Any:
        return command(client, *self.args, operation=self.operation)

    async def arun(self, client: Any) -> Any:
        return await acommand(client, *self.args, operation=self.operation)


class Blpop(Step):
    """BLPOP ``keys`` for at most ``timeout`` seconds (in chunks below the socket timeout),
    through the process's wake hub (``hub.py``) when the client allows; ``quiet``: only a hold of
    this process pushes onto them, and it hands what it pushes in-process (``nearby.py``), so the
    wait blocks there, without Redis."""

    __slots__ = ("keys", "timeout", "operation", "hub_prefix", "quiet")

    def __init__(
        self,
        keys: list[str],
        timeout: float,
        operation: str,
        hub_prefix: str = "",
        quiet: bool = False,
    ) -> None:
        self.keys, self.timeout, self.operation = keys, timeout, operation
        self.hub_prefix, self.quiet = hub_prefix, quiet

    def run(self, client: Any) -> Any:
        if self.quiet:
            return nearby.wait(self.keys, self.timeout)
        if not self.hub_prefix:
            return blpop(client, self.keys, self.timeout, operation=self.operation)
        block = max(MIN_BLOCK, min(self.timeout, max_block(client)))
        return pop_wake(
            client, self.keys, block, hub_prefix=self.hub_prefix, operation=self.operation
        )

    async def arun(self, client: Any) -> Any:
        if self.quiet:
            return await nearby.await_(self.keys, self.timeout)
        if not self.hub_prefix:
            return await ablpop(client, self.keys, self.timeout, operation=self.operation)
        block = max(MIN_BLOCK, min(self.timeout, max_block(client)))
        return await apop_wake(
            client, self.keys, block, hub_prefix=self.hub_prefix, operation=self.operation
        )


class Blocking(Step):
    """A blocking command (``XREADGROUP ... BLOCK``), counted against the pool's share for waits."""

    __slots__ = ("args", "operation")

    def __init__(self, *args: Any, operation: str) -> None:
        self.args, self.operation = args, operation

    def run(self, client: Any) -> Any:
        return blocking(client, *self.args, operation=self.operation)

    async def arun(self, client: Any) -> Any:
        return await ablocking(client, *self.args, operation=self.operation)


class ReadWake(Step):
    """A broadcast wait's blocked read: the entries of stream ``stream`` after id ``mark``, for
    at most ``seconds``, through the process's wake hub (``hub.py``) when the client allows."""

    __slots__ = ("stream", "mark", "seconds", "hub_prefix", "operation")

    def __init__(
        self, stream: str, mark: str, seconds: float, hub_prefix: str, operation: str
    ) -> None:
        self.stream, self.mark, self.seconds = stream, mark, seconds
        self.hub_prefix, self.operation = hub_prefix, operation

    def run(self, client: Any) -> Any:
        return read_wake(
            client,
            self.stream,
            self.mark,
            self.seconds,
            hub_prefix=self.hub_prefix,
            operation=self.operation,
        )

    async def arun(self, client: Any) -> Any:
        return await aread_wake(
            client,
            self.stream,
            self.mark,
            self.seconds,
            hub_prefix=self.hub_prefix,
            operation=self.operation,
        )


class EndsWaits(Step):
    """A round trip that ends waits (a release, a hand-off, a waiter giving up its place).

    It may use the connections the pool keeps for such calls, which the
    waiters' own calls never take (see ``commands.ending_waits``).
    """

    __slots__ = ("step",)

    def __init__(self, step: Step) -> None:
        self.step = step

    def run(self, client: Any) -> Any:
        with ending_waits():
            return self.step.run(client)

    async def arun(self, client: Any) -> Any:
        with ending_waits():
            return await self.step.arun(client)


class Pause(Step):
    """No round trip: wait ``seconds`` (a blocking sleep, or ``asyncio.sleep`` on the loop)."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def run(self, client: Any) -> None:
        time.sleep(self.seconds)

    async def arun(self, client: Any) -> None:
        await asyncio.sleep(self.seconds)


class Within(Step):
    """No round trip: the operation's later round trips must all be answered by ``deadline``
    (time.monotonic()) plus one socket timeout.

    A wait yields it once, first: on a paused server its blocked read, its
    last look and its unregistering then end by that bound together, instead
    of each waiting out a socket timeout (a round trip started with nothing
    left is not sent: an outage, ``sent`` False). Clean-up after a
    cancellation is bounded the same way.

    ``Within(None)`` lifts the bound for the round trips after it (a grant whose reply did
    arrive is given back however late: the server answers).
    """

    __slots__ = ("deadline",)

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def until(self, client: Any) -> float | None:
        if self.deadline is None:
            return None
        timeout = socket_timeout(client)
        return self.deadline + float(timeout) if timeout else None  # no socket timeout: no bound

    def run(self, client: Any) -> None:  # (the drivers apply it; run alone it does nothing)
        return None

    async def arun(self, client: Any) -> None:
        return None


class Transaction(Step):
    """Send commands in one MULTI/EXEC (a consistent read of several keys); replies as a list."""

    __slots__ = ("commands", "operation")

    def __init__(self, *commands: tuple[Any, ...], operation: str) -> None:
        self.commands, self.operation = commands, operation

    def run(self, client: Any) -> Any:
        with (
            unavailable_as_ours(client, self.operation),
            _migrating_as_ours(client, self.operation),
        ):
            return self._queue(client.pipeline(transaction=True)).execute()

    async def arun(self, client: Any) -> Any:
        with (
            unavailable_as_ours(client, self.operation),
            _migrating_as_ours(client, self.operation),
        ):
            if _is_cluster(client):
                # the slot map first: redis-py 8.1's async Cluster pipeline, when a transaction is
                # a new client's first call and meets ASK, breaks the client ("Event loop is
                # closed" on every later call); read on first use, a no-op later
                await client.initialize()
            return await self._queue(client.pipeline(transaction=True)).execute()

    def _queue(self, pipe: Any) -> Any:
        for args in self.commands:
            pipe.execute_command(*args)
        return pipe


#: What a Cluster's transaction meets while its slot migrates: its keys answered ``ASK`` (or
#: ``TRYAGAIN``) as they were queued, so the node discarded the transaction (``EXECABORT``).
_MIGRATING = (
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ExecAbortError,
)


@contextlib.contextmanager
def _migrating_as_ours(client: Any, operation: str) -> Iterator[None]:
    """A transaction on a Cluster refused because its slot is migrating: nothing of it ran, so an
    outage to ride out (``sent=False``), on both drivers alike, never a raw ``AskError``."""
    try:
        yield
    except _MIGRATING as exc:
        if not _is_cluster(client):
            raise
        raise CoordinationUnavailable(
            f"{operation}: the slot is being migrated ({type(exc).__name__}); try again",
            operation=operation,
            sent=False,
        ) from exc


class Batch(Step):
    """Send commands together, without MULTI/EXEC (one round trip; each runs on its own).

    Replies come back in order; the first error reply is raised, or with
    ``raise_errors=False`` every error reply is returned in its place (one that is an outage as
    its CoordinationUnavailable, see ``errors.outages_in``).
    ``key``: on a Redis Cluster, they all go to the node of that key's slot,
    on one connection (see ``commands.commands``).
    """

    __slots__ = ("commands", "operation", "raise_errors", "key")

    def __init__(
        self,
        *commands: tuple[Any, ...],
        operation: str,
        raise_errors: bool = True,
        key: str | None = None,
    ) -> None:
        self.commands, self.operation, self.raise_errors, self.key = (
            commands,
            operation,
            raise_errors,
            key,
        )

    def run(self, client: Any) -> Any:
        replies = send_commands(
            client,
            self.commands,
            operation=self.operation,
            raise_errors=self.raise_errors,
            key=self.key,
        )
        return replies if self.raise_errors else outages_in(client, self.operation, replies)

    async def arun(self, client: Any) -> Any:
        replies = await asend_commands(
            client,
            self.commands,
            operation=self.operation,
            raise_errors=self.raise_errors,
            key=self.key,
        )
        return replies if self.raise_errors else outages_in(client, self.operation, replies)


def _advance(steps: Steps, reply: Any, error: BaseException | None) -> tuple[bool, Any]:
    """Give the operation a reply (or throw the round trip's error in): (done, result or next
    step)."""
    try:
        return False, (steps.send(reply) if error is None else steps.throw(error))
    except StopIteration as done:
        return True, done.value


def run(client: Any, steps: Steps) -> Any:
    """Run an operation's steps on a sync client; returns its result."""
    reply, error, within = None, None, _Bound()
    while True:
        done, step = _advance(steps, reply, error)
        if done:
            return step
        reply, error = None, None
        if within.takes(step, client):
            continue
        try:
            within.check(step, client)
            with answered_by(within.until):
                reply = step.run(client)
            within.answered(step)
        except BaseException as exc:  # thrown in: the operation gives back what it took
            within.saw(exc)
            error = exc


async def arun(client: Any, steps: Steps) -> Any:
    """Run an operation's steps on a ``redis.asyncio`` client; returns its result.

    Once a cancellation has been thrown into the operation, the steps it
    yields to clean up run to completion even if the task is cancelled again.
    """
    reply, error, cleaning_up, within = None, None, False, _Bound()
    cancelling = _cancelling()
    while True:
        done, step = _advance(steps, reply, error)
        if done:
            return step
        reply, error = None, None
        if within.takes(step, client):
            continue
        try:
            within.check(step, client)
            with answered_by(within.until):  # (uncancellable's task copies this context)
                reply = await (
                    uncancellable(step.arun(client)) if cleaning_up else step.arun(client)
                )
            within.answered(step)
            if not cleaning_up and _cancelling() > cancelling:
                # Cancelled, yet the round trip returned: the cancellation was
                # swallowed on the way (asyncio.wait_for's race in redis-py's
                # connect on Python 3.11). Deliver it, or the wait goes on.
                raise asyncio.CancelledError
        except BaseException as exc:
            if (
                not cleaning_up
                and not isinstance(exc, asyncio.CancelledError)
                and _cancelling() > cancelling
            ):
                # Cancelled, and the round trip raised something else: the
                # cancellation landed inside redis-py's read, which turned it
                # into a "Timeout reading" error. It is a cancellation: the
                # operation gives back what it took, and the task stops.
                cancelled = asyncio.CancelledError()
                cancelled.__cause__ = exc
                exc = cancelled
            cleaning_up = cleaning_up or isinstance(exc, asyncio.CancelledError)
            within.saw(exc)
            error = exc


class _Bound:
    """An operation's :class:`Within` bound, as the drivers apply it.

    Every round trip reads for at most what is left of the bound (the
    deadline plus one socket timeout). Once one timed out (the server does
    not answer) and the deadline has passed, the later ones are not sent at
    all (an outage, ``sent`` False): each would wait for a new connection's
    handshake too, which the bound cannot shorten.
    """

    __slots__ = ("deadline", "until", "stalled")

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.until: float | None = None
        self.stalled = False

    def takes(self, step: Step, client: Any) -> bool:
        if not isinstance(step, Within):
            return False
        self.deadline, self.until = step.deadline, step.until(client)
        return True

    def check(self, step: Step, client: Any) -> None:
        if self.stalled and self.until is not None and time.monotonic() >= self.deadline:  # type: ignore[operator]
            operation = _operation(step)
            if operation is not None:  # (a Pause is not a round trip)
                raise out_of_time(client, operation)

    def answered(self, step: Step) -> None:
        """A round trip came back: the server answers again (a pause that timed out an earlier
        one is over), so the later ones are sent, however late (they end the wait: its last
        re-check, leaving its place)."""
        if self.stalled and _operation(step) is not None:
            self.stalled = False

    def saw(self, exc: BaseException) -> None:
        if self.until is not None and not self.stalled:
            self.stalled = _timed_out(exc)


def _operation(step: Step) -> str | None:
    """The operation a step's round trip is part of (None: no round trip, as a Pause)."""
    return getattr(step, "operation", None) or getattr(
        getattr(step, "step", None), "operation", None
    )


def _timed_out(exc: BaseException | None) -> bool:
    """True when ``exc`` (or what caused it) is a timeout: the server did not answer."""
    seen = 0
    while exc is not None and seen < 5:
        if (
            isinstance(exc, (TimeoutError, asyncio.TimeoutError))
            or type(exc).__name__ == "TimeoutError"
        ):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _cancelling() -> int:
    """How many cancellations of the current task are pending (Python 3.11+; 0 before)."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None and hasattr(task, "cancelling") else 0


async def uncancellable(awaitable: Any, *, reraise: bool = False) -> Any:
    """Await ``awaitable`` to its end, whatever cancellations this task receives meanwhile.

    With ``reraise``, a cancellation received meanwhile is raised once it is
    done (clean-up that must finish, after which the task still stops);
    without, it is dropped (the caller already re-raises an earlier one).
    """
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if not task.done():
                cancelled = True
                continue
            if task.cancelled():
                raise
            result = task.result()
            cancelled = True
            break
    if cancelled and reraise:
        raise asyncio.CancelledError
    return result
