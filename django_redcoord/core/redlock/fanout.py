"""Steps that talk to several independent Redis servers at once (Redlock's masters).

A quorum operation's generator yields a :class:`Fanout` — one step per
server — and gets back one outcome per server: the reply, or the exception
that server's round trip raised (an unreachable master is an answer like any
other: it counts against the quorum). The "client" the drivers pass in is
the list of the masters' clients.

Deciding on the first majority: a fan-out that knows how many answers it
``need``\\ s (and which answers count, ``yes``) returns as soon as that many
counted, or as soon as so many refused or failed that it cannot — it never
waits for a straggler it does not need — and at the latest after
``timeout`` seconds. A master that has not answered then is reported as
:class:`NoAnswer` (its outcome is unknown: the caller treats it like a
failure, and gives back what it may have written).

Threads (the sync driver): each master has a small executor of its own
(``MASTER_THREADS``), so a hung master (SIGSTOP, a black-holed host) ties up
only its own threads until their socket timeout, never the calls to the
others. A master with calls in flight and no answer for longer than the
fan-out's timeout (and ``STALL_AFTER``) is *stalled*: it is not asked again (``NoAnswer`` at once)
until one of those calls ends, so a hung master costs one socket timeout
per ``MASTER_THREADS`` calls, not a thread per call. A call still queued when
its fan-out has already decided is dropped unsent (an acquire only). The
asyncio driver runs one task per master on the loop. Stragglers run on (a
request already sent may still run); a later fan-out of the same lock sends
its call to that master only after the straggler there ended (``after``),
so a release never overtakes the acquire it gives back.

:class:`Pause` waits between two quorum attempts (interruptible in threads
through ``event``; a plain ``asyncio.sleep`` on the loop, which cancellation
reaches).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

from ..transport.drivers import Step

#: Threads per master: calls to one master at once (more wait for a thread).
#: A hung master ties up at most this many threads, until the socket timeout.
MASTER_THREADS = 16

#: Calls to one master waiting for a thread beyond which it is not asked (NoAnswer).
MASTER_BACKLOG = 256

#: A master with calls in flight and no answer for this long (or the fan-out's
#: timeout, if longer) is stalled: not asked until one of those calls ends.
#: Longer than the timeouts of short locks, so that a busy machine's slow
#: answers do not make a healthy master look hung.
STALL_AFTER = 1.0


class NoAnswer(Exception):
    """A master that had not answered within the fan-out's timeout (or was stalled and not
    asked)."""


class NotNeeded(NoAnswer):
    """A master whose answer the fan-out did not wait for: the others decided without it."""


class _NotSent(Exception):
    """A queued call whose fan-out decided before it was sent (dropped)."""


class _Master:
    """One master's executor and whether it is stalled (see the module docstring)."""

    __slots__ = ("executor", "lock", "pending", "progress")

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(MASTER_THREADS, thread_name_prefix="redcoord-redlock")
        self.lock = threading.Lock()
        self.pending = 0  # calls submitted and not ended
        self.progress = (
            0.0  # time.monotonic() of the last answer, or of the first call after an idle spell
        )

    def stalled(self, now: float, timeout: float) -> str | None:
        """Why not to ask this master now, or None (under ``self.lock``)."""
        if self.pending >= MASTER_BACKLOG:
            return f"{self.pending} calls to it are waiting already: not asked"
        if self.pending and now - self.progress > max(timeout, STALL_AFTER):
            return (
                f"it has not answered for {now - self.progress:.2f} s ({self.pending} calls in "
                "flight): not asked"
            )
        return None


_state_lock = threading.Lock()
_state: tuple[int, weakref.WeakKeyDictionary[Any, _Master]] | None = None


def _master(client: Any) -> _Master:
    """The state of ``client``'s master in this process (a forked child starts afresh: threads do
    not survive a fork)."""
    global _state
    with _state_lock:
        if _state is None or _state[0] != os.getpid():
            _state = (os.getpid(), weakref.WeakKeyDictionary())
        found = _state[1].get(client)
        if found is None:
            found = _state[1][client] = _Master()
        return found


class _Decision:
    """The outcomes so far, and whether they decide (shared by the sync and asyncio runs)."""

    def __init__(self, sent: int, need: int | None, yes: Callable[[Any], bool]) -> None:
        self.sent, self.need, self.yes = sent, need, yes
        self.counted = self.other = 0

    def add(self, outcome: Any) -> None:
        if not isinstance(outcome, BaseException) and self.yes(outcome):
            self.counted += 1
        else:
            self.other += 1

    @property
    def decided(self) -> bool:
        waiting = self.sent - self.counted - self.other
        if self.need is None or not waiting:
            return not waiting
        return self.counted >= self.need or self.counted + waiting < self.need


def _any_reply(outcome: Any) -> bool:
    return True


class Fanout(Step):
    """One step per server (``None``: nothing for that one), run concurrently.

    Returns, per server, its reply, the exception its round trip raised,
    :class:`NoAnswer` where it had not answered in time (:class:`NotNeeded`
    where the fan-out decided without it), or ``None`` where no step was given.

    Args:
        steps: one per server, or None.
        timeout: seconds to wait for the answers at most.
        need: decide once this many outcomes pass ``yes`` (or can no longer);
            None waits for every answer (within ``timeout``).
        yes: which outcomes count towards ``need`` (default: any reply).
        after: per server, a call of an earlier fan-out still running
            (its ``stragglers``): this one's call there is sent only once
            that one ended, so a release never overtakes the acquire it
            gives back (a straggler's grant would be left behind).
        droppable: a call not sent yet when the fan-out decides is not sent
            at all (safe for an acquire: a grant not asked for is no grant).

    After a run, ``stragglers`` holds the calls still running (per server).
    """

    __slots__ = ("steps", "timeout", "need", "yes", "after", "droppable", "stragglers")

    def __init__(
        self,
        steps: list[Step | None],
        *,
        timeout: float,
        need: int | None = None,
        yes: Callable[[Any], bool] = _any_reply,
        after: dict[int, Any] | None = None,
        droppable: bool = False,
    ) -> None:
        self.steps, self.timeout, self.need, self.yes = steps, timeout, need, yes
        self.after, self.droppable = after or {}, droppable
        self.stragglers: dict[int, Any] = {}

    def _no_answer(self, waited: float, decided: bool) -> NoAnswer:
        if decided:
            return NotNeeded(f"not waited for: decided after {waited:.3f} s without it")
        return NoAnswer(
            f"no answer within {waited:.2f} s (the {self.timeout:g} s the masters are given)"
        )

    def run(self, clients: Any) -> list[Any]:
        started = time.monotonic()
        deadline = started + self.timeout
        outcomes: list[Any] = [None] * len(self.steps)
        pending: set[int] = set()
        cond = threading.Condition()
        decision = _Decision(0, self.need, self.yes)
        done = [False]  # the fan-out decided: droppable calls not sent yet are dropped
        handles: dict[int, Future[Any]] = {}

        def call(i: int, step: Step, client: Any, master: _Master) -> None:
            outcome: Any
            try:
                if done[0] and self.droppable:
                    raise _NotSent
                outcome = step.run(client)
                answered = True
            except _NotSent:
                outcome, answered = None, False
            except Exception as exc:  # one master's failure is its answer
                outcome = exc
                answered = not _is_timeout(exc)
            finally:
                with master.lock:
                    master.pending -= 1
            if answered:
                with master.lock:
                    master.progress = time.monotonic()
            with cond:
                if i in pending:
                    pending.discard(i)
                    outcomes[i] = outcome
                    decision.add(outcome)
                    cond.notify()

        def submit(i: int, step: Step, client: Any, master: _Master, handle: Future[Any]) -> None:
            try:
                inner = master.executor.submit(call, i, step, client, master)
            except RuntimeError as exc:  # the interpreter is shutting down
                with master.lock:
                    master.pending -= 1
                with cond:
                    if i in pending:
                        pending.discard(i)
                        outcomes[i] = exc
                        decision.add(exc)
                        cond.notify()
                handle.set_result(None)
                return
            inner.add_done_callback(lambda _: handle.set_result(None))

        for i, (step, client) in enumerate(zip(self.steps, clients, strict=True)):
            if step is None:
                continue
            decision.sent += 1
            master = _master(client)
            now = time.monotonic()
            with master.lock:
                why = master.stalled(now, self.timeout)
                if why is None:
                    if not master.pending:
                        master.progress = now
                    master.pending += 1
            if why is not None:
                outcomes[i] = NoAnswer(why)
                decision.add(outcomes[i])
                continue
            with cond:
                pending.add(i)
            handle: Future[Any] = Future()
            handles[i] = handle
            before = self.after.get(i)
            if (
                not isinstance(before, Future) or before.done()
            ):  # (an asyncio task: that loop's own calls)
                submit(i, step, client, master, handle)
            else:  # after the earlier call there has ended (from the thread that ends it)
                before.add_done_callback(
                    partial(_submit_after, submit, i, step, client, master, handle)
                )
        with cond:
            try:
                while not decision.decided:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    cond.wait(left)
            finally:  # decided, timed out or interrupted: droppable calls not sent yet are dropped
                done[0] = True
            waited = time.monotonic() - started
            for i in pending:
                outcomes[i] = self._no_answer(waited, decision.decided)
                self.stragglers[i] = handles[i]
            pending.clear()
        return outcomes

    async def arun(self, clients: Any) -> list[Any]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        outcomes: list[Any] = [None] * len(self.steps)
        tasks: dict[asyncio.Future[Any], int] = {}
        done = [False]
        for i, (step, client) in enumerate(zip(self.steps, clients, strict=True)):
            if step is not None:
                task: asyncio.Future[Any] = asyncio.ensure_future(
                    self._acall(step, client, self.after.get(i), done)
                )
                task.add_done_callback(_retrieve)
                tasks[task] = i
        decision = _Decision(len(tasks), self.need, self.yes)
        waiting = set(tasks)
        try:
            while waiting and not decision.decided:
                left = started + self.timeout - loop.time()
                if left <= 0:
                    break
                finished, waiting = await asyncio.wait(
                    waiting, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
                for task in finished:
                    i = tasks[task]
                    outcomes[i] = (
                        task.exception() if task.exception() is not None else task.result()
                    )
                    decision.add(outcomes[i])
        finally:
            # Stragglers run on (never cancelled mid-reply: a request already sent could
            # still run after the call that gives it back); later calls wait for them.
            done[0] = True
            for task in waiting:
                self.stragglers[tasks[task]] = task
        for task in waiting:
            outcomes[tasks[task]] = self._no_answer(loop.time() - started, decision.decided)
        return outcomes

    async def _acall(self, step: Step, client: Any, before: Any, done: list[bool]) -> Any:
        if (
            isinstance(before, asyncio.Future)
            and not before.done()
            and before.get_loop() is asyncio.get_running_loop()
        ):
            await asyncio.wait([before])
        if done[0] and self.droppable:
            return None
        return await step.arun(client)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a straggler's exception as seen (it was reported as NoAnswer, or not needed)."""
    if not task.cancelled():
        task.exception()


def _is_timeout(exc: BaseException) -> bool:
    """True when a failed call got no answer at all (a timeout): not progress for the stall
    check."""
    cause = exc.__cause__ or exc
    return "timed out" in str(exc) or type(cause).__name__ in ("TimeoutError", "socket.timeout")


class Pause(Step):
    """Wait ``seconds`` between attempts; ``event`` set (from any thread) ends a sync wait early."""

    __slots__ = ("seconds", "event")

    def __init__(self, seconds: float, event: threading.Event) -> None:
        self.seconds, self.event = seconds, event

    def run(self, clients: Any) -> None:
        self.event.wait(self.seconds)

    async def arun(self, clients: Any) -> None:
        await asyncio.sleep(self.seconds)


def _submit_after(submit: Callable[..., None], *args: Any) -> None:
    """A done-callback that submits the next call to a master once the earlier one ended (its
    own argument, the earlier call's future, is not needed)."""
    submit(*args[:-1])
