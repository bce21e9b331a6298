"""A consumer of one queue: claims into its own processing list, acknowledges, retries.

Used by :class:`~.worker.Worker` (one per thread); usable alone to drain a
queue from any program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import CoordinationUnavailable
from ..values import check_count
from .messages import (
    CLAIM,
    HAND_BACK,
    MAX_BATCH,
    NACK,
    Message,
    queue_defaults,
    retry_delay,
)

if TYPE_CHECKING:
    from .queue import Queue


class Consumer:
    """One consumer of one queue: claims into its own processing list.

    Not thread-safe: one consumer per thread. ``timeout`` (seconds, default
    ``REDCOORD["WORKER_TIMEOUT"]``) is how long the consumer may go without a
    claim or :meth:`heartbeat` before the reaper takes its messages back.

    Every call may fail with CoordinationUnavailable and be repeated: the
    acknowledgements of a failed claim are sent with the next one, a claim
    whose reply was lost is delivered again by the next claim (once the
    consumer holds nothing unacknowledged), and a nack that could not be sent
    can be kept (:meth:`defer_nack`) and is sent before the next claim.
    """

    def __init__(self, queue: Queue, consumer_id: str, *, timeout: float | None = None) -> None:
        self.queue = queue
        self.id = consumer_id
        self.processing = queue.keys.processing(consumer_id)
        settings = queue_defaults()
        self.timeout = float(timeout if timeout is not None else settings["WORKER_TIMEOUT"])
        self.retry_base = float(settings["QUEUE_RETRY_DELAY"])
        self.retry_cap = float(settings["QUEUE_RETRY_MAX_DELAY"])
        self._acks: list[Any] = []
        self._held: set[Any] = set()  # delivered to us, not yet acknowledged, nacked or handed back
        self._nacks: list[
            tuple[Message, str, bool, float | None]
        ] = []  # to send before the next claim
        self._timeout_ms = int(self.timeout * 1000)
        self._lifo = "1" if queue.lifo else "0"
        #: A claim was sent and got no answer: it may have moved messages onto our list (the
        #: next claim recovers them); cleared by a claim that answers.
        self.in_doubt = False

    @property
    def owes_nothing(self) -> bool:
        """Nothing delivered to us is unsettled, no acknowledgement or nack waits to be sent,
        and no claim's outcome is unknown: leaving needs nothing of Redis."""
        return not (self._held or self._acks or self._nacks or self.in_doubt)

    @property
    def holding(self) -> int:
        """Messages delivered to this consumer and not yet settled (nacks waiting included)."""
        return len(self._held)

    def claim(self, n: int) -> tuple[list[Message], float | None]:
        """Acknowledge what :meth:`ack` collected, then claim up to ``n`` messages.

        Returns (messages, hint): when no message was claimed, ``hint`` is the
        seconds until the next delayed message is due (None: none is).
        """
        if n:
            check_count(n, "n", 0, MAX_BATCH)
        self._send_nacks()
        k = self.queue.keys
        acks, self._acks = self._acks, []
        keys = [
            k.ready,
            k.delayed,
            self.processing,
            k.consumers,
            k.wake,
            k.seq,
            k.paused,
            k.cancels,
            k.uniq,
            k.uniq_ids,
            *k.grouping(),
        ]
        recover = "0" if self._held else "1"
        args = [n, self._timeout_ms, self._lifo, recover, *acks]
        try:
            reply = CLAIM(
                self.queue.client, keys, args, operation=f"claim from queue {self.queue.name!r}"
            )
        except CoordinationUnavailable as exc:
            # Unknown outcome: the acknowledgements go again with the next
            # claim (removing an envelope twice is harmless); messages this
            # claim may have moved onto our list come back with it (recover).
            self._acks = acks + self._acks
            self.in_doubt = self.in_doubt or exc.sent
            raise
        self.in_doubt = False
        name = self.queue.name
        messages = [Message.parse(raw, name) for raw in reply[1:]]
        self._held.update(m.raw for m in messages)
        hint = int(reply[0])
        return messages, (None if hint < 0 else hint / 1000.0)

    def ack(self, message: Message) -> None:
        """Mark ``message`` done; sent with the next :meth:`claim` or :meth:`flush`."""
        self._acks.append(message.raw)
        self._held.discard(message.raw)

    def flush(self) -> None:
        """Send pending acknowledgements and nacks now (and renew the heartbeat)."""
        self.claim(0)

    heartbeat = flush

    def nack(
        self, message: Message, error: str, *, dead: bool = False, delay: float | None = None
    ) -> str:
        """The delivery failed: retry later with backoff, or dead-letter after the last attempt.

        Returns "retry", "dead", or "gone" (the reaper already took it back).
        """
        k = self.queue.keys
        if delay is None:
            delay = retry_delay(message.attempt, self.retry_base, self.retry_cap)
        result = NACK(
            self.queue.client,
            [self.processing, k.delayed, *k.settling()],
            [
                message.raw,
                max(1, int(delay * 1000)),
                error[:4000],
                "1" if dead else "0",
                self.queue.dead_letter_limit or 0,
            ],
            operation=f"nack on queue {self.queue.name!r}",
        )
        self._held.discard(message.raw)
        return {0: "gone", 1: "retry", 2: "dead"}[int(result)]

    def defer_nack(
        self, message: Message, error: str, *, dead: bool = False, delay: float | None = None
    ) -> None:
        """Keep a nack that could not be sent (Redis away); it is sent before the next claim.

        Until then the message stays on this consumer's list, heartbeated:
        nobody else runs it, and nothing else of the batch is held up.
        """
        self._nacks.append((message, error, dead, delay))

    def _send_nacks(self) -> None:
        while self._nacks:
            message, error, dead, delay = self._nacks[0]
            self.nack(message, error, dead=dead, delay=delay)
            self._nacks.pop(0)

    def release(self, messages: Sequence[Message]) -> int:
        """Return unstarted messages to the front of the queue, sending nothing else.

        Unlike :meth:`hand_back` no acknowledgement goes with it (their results
        may still be held back by the thread that owns this consumer), so a
        worker may call it from another thread while that one is stuck in a job.
        """
        if not messages:
            return 0
        k = self.queue.keys
        n = int(
            HAND_BACK(
                self.queue.client,
                [
                    self.processing,
                    k.ready,
                    k.consumers,
                    k.wake,
                    k.uniq,
                    k.uniq_ids,
                    *k.grouping()[1:],
                ],
                ["0", *(m.raw for m in messages)],
                operation=f"hand back to queue {self.queue.name!r}",
            )
        )
        for m in messages:
            self._held.discard(m.raw)
        return n

    def hand_back(self, messages: Sequence[Message], *, retire: bool = False) -> int:
        """Return unstarted messages to the front of the queue; with ``retire``, leave."""
        self.flush()
        k = self.queue.keys
        n = int(
            HAND_BACK(
                self.queue.client,
                [
                    self.processing,
                    k.ready,
                    k.consumers,
                    k.wake,
                    k.uniq,
                    k.uniq_ids,
                    *k.grouping()[1:],
                ],
                ["1" if retire else "0", *(m.raw for m in messages)],
                operation=f"hand back to queue {self.queue.name!r}",
            )
        )
        for m in messages:
            self._held.discard(m.raw)
        return n
