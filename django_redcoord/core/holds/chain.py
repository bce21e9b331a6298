"""Waiting in a chain of wake lists: every key a script touches is in its KEYS.

A hand-off cannot push onto the woken waiter's own wake list: only the script
knows who that is, and a key a script was not given is aborted mid-way by a
Redis Cluster node migrating the slot (refused outright by Dragonfly). So
(semaphores, read-write locks; locks do the same with their holder's list,
see ``lua/locks/common.lua``):

* the waiter first in line blocks on the primitive's ``first`` list; every
  hand-off pushes ``"<fence> <token>"`` there (a key the releaser declares);
* every other waiter blocks on the wake list of the live waiter just ahead
  of it (the acquire script's reply names it), which pushes a word there
  when it leaves the line (granted or giving up: the script does it, or, for
  a hand-off popped from ``first``, one more command), so the next one
  re-checks and takes its turn. A waiter that popped its hand-off from
  ``first`` was first in line, so its word is ``first``: the one behind it
  is first in line now and blocks on ``first`` at once, without a look, for
  what is left of the block its last look set (its place in the queue, its
  floor and the bound of the earliest lease are that look's);
* interruptions (see ``Hold._interrupt``) go to a list of the waiter's own.

A popped value for someone else (a grant its owner found by re-checking) only
costs a re-check. So does a stale hand-off of our own: one made before our
last look (our place was handed a permit while we were paused, its lease ran
out, and we queued again), left on ``first`` because we never blocked there.
Fences only grow, so every hand-off made after a look has a fence above the
look's ``floor`` (its reply's 4th element: the last fence issued, or the
server's clock in microseconds if higher); one not above it is ignored (see
``_fence_floor``). Ignoring a fresh one by mistake (a server clock stepped
back) is safe too: the re-check finds the grant and renews its lease. A waiter behind one that
died finds out at its next
re-check (within its wait chunk).
"""

from __future__ import annotations

from typing import Any

from ..transport.commands import as_text
from ..transport.drivers import Batch, Step

#: how long a 'moved' or 'first' marker waits for the waiter behind (ms): a queue lease at most
MOVED_TTL_MS = 15_000

#: the marker of a waiter that popped its hand-off from ``first``: the one behind it is first in
#: line now and blocks on ``first`` without looking again
FIRST = "first"


class FirstInLine:
    """The hooks of :class:`~.steps.HoldSteps` for a primitive whose keys have ``first()`` and
    ``interrupt()``."""

    keys: Any
    name: str
    _release_base: list[str]
    _wake_prefix: str

    def _acquire_keys(self, owner: str) -> list[str]:
        return [*self._release_base[:-1], self._wake_prefix + owner, self.keys.first()]

    def _wake_key(self, owner: str) -> str:
        return self.keys.interrupt(owner)

    def _wait_keys(self, owner: str, reply: Any) -> list[str]:
        ahead = as_text(reply[2]) if len(reply) > 2 else ""
        return [
            self._wake_prefix + ahead if ahead else self.keys.first(),
            self.keys.interrupt(owner),
        ]

    def _popped_fence(self, owner: str, popped: Any) -> int | None:
        fence, _, token = as_text(popped[1]).partition(" ")
        return (
            int(fence) if token == owner and fence.isdigit() else None
        )  # 'moved', an interruption, another's

    def _fence_floor(self, reply: Any) -> int:
        return int(reply[3]) if len(reply) > 3 else 0

    def _now_first(self, owner: str, reply: Any, popped: Any) -> list[str] | None:
        ahead = as_text(reply[2]) if len(reply) > 2 else ""
        if (
            ahead
            and as_text(popped[1]) == FIRST
            and as_text(popped[0]) == self._wake_prefix + ahead
        ):
            return [self.keys.first(), self.keys.interrupt(owner)]
        return None

    def _tell_next(self, owner: str) -> Step | None:
        # (we popped our hand-off from `first`: we were first in line, so the one behind us is now)
        wake = self._wake_prefix + owner
        return Batch(
            ("DEL", wake),
            ("LPUSH", wake, FIRST),
            ("PEXPIRE", wake, MOVED_TTL_MS),
            key=wake,
            operation=f"pass the turn on {self.name!r}",
        )
