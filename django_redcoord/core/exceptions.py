"""The one exception hierarchy of django_redcoord.

Every error the package raises on purpose derives from :class:`RedcoordError`,
so ``except RedcoordError`` catches all of ours and nothing of anyone else's.
"""

from __future__ import annotations


class RedcoordError(Exception):
    """Root of every error raised by django_redcoord."""


class ConfigurationError(RedcoordError):
    """The ``REDCOORD`` settings (or arguments standing in for them) are wrong."""


class CoordinationUnavailable(RedcoordError):
    """Redis could not be reached, or did not answer in time.

    The message names the server (password masked) and the operation. When the
    cause was a timeout the outcome of a write is unknown: every coordination
    operation is idempotent for the same owner, so retrying it is safe.
    """

    def __init__(
        self, message: str, *, server: str = "", operation: str = "", sent: bool = True
    ) -> None:
        super().__init__(message)
        self.server = server
        self.operation = operation
        #: False when the command is known not to have left this process (the
        #: outcome is then known: nothing happened), e.g. a wait refused because
        #: the pool's connections that may wait are all waiting, or a server that
        #: refused the connection (or whose handshake failed) before anything was sent.
        self.sent = sent


class PoolExhausted(CoordinationUnavailable):
    """No connection of the client's pool came free in time: the pool is too small, Redis is fine.

    Raised instead of an outage when every connection of the pool
    (``max_connections``, ``REDCOORD['MAX_CONNECTIONS']``) stayed in use for
    as long as one call may take. Nothing was sent (``sent`` is False), so the
    outcome is known: nothing happened. ``max_connections`` is the pool's size.
    """

    def __init__(
        self, message: str, *, max_connections: int = 0, server: str = "", operation: str = ""
    ) -> None:
        super().__init__(message, server=server, operation=operation, sent=False)
        self.max_connections = max_connections


class QuorumNotReached(CoordinationUnavailable):
    """Too few of a quorum lock's masters answered to decide (see
    :class:`~django_redcoord.core.redlock.Redlock`).

    Not "held by someone else" (that is :class:`LockNotAcquired`): a majority
    of the masters could not be reached or did not answer in time.
    ``answered`` and ``needed`` say how many did and how many it takes;
    ``errors`` maps each master that failed (its URL, password masked) to why.
    """

    def __init__(
        self,
        message: str,
        *,
        answered: int,
        needed: int,
        errors: dict[str, str],
        operation: str = "",
    ) -> None:
        super().__init__(message, server=", ".join(errors), operation=operation)
        self.answered, self.needed, self.errors = answered, needed, errors


class ReplicasNotSynced(CoordinationUnavailable):
    """A grant was not acknowledged by the replicas asked for (``replicas=``), so it was given back.

    The write reached the master, but a failover now could promote a replica
    without it; the grant is released rather than held unsafely (fail
    closed). ``acked`` and ``needed`` say how many replicas acknowledged and
    how many were asked for.
    """

    def __init__(
        self, message: str, *, acked: int, needed: int, server: str = "", operation: str = ""
    ) -> None:
        super().__init__(message, server=server, operation=operation)
        self.acked, self.needed = acked, needed


class LockError(RedcoordError):
    """Base class of lock errors; ``name`` is the lock's name."""

    def __init__(self, message: str, *, name: str = "") -> None:
        super().__init__(message)
        self.name = name


class LockNotAcquired(LockError):
    """The lock could not be acquired within the allowed wait."""

    def __init__(self, message: str, *, name: str = "", wait: float | None = None) -> None:
        super().__init__(message, name=name)
        self.wait = wait


class LockLost(LockError):
    """The lock expired or passed to another owner while we believed we held it.

    Raised by ``release()`` and ``extend()``; never touches the other owner's lock.
    Work done under the lock since it was lost may have overlapped with another
    holder: the fencing token is how a downstream system can refuse it.
    """


class LockNotOwned(LockError):
    """``release()``/``extend()`` called on a lock this object never acquired."""


class DeliveryFailed(RedcoordError):
    """A message's delivery ended without an outcome from its handler.

    Recorded as the error of a Django Task whose worker died (or stopped
    heartbeating) during its last attempt, or whose message could not be read.
    """


class BrokenError(RedcoordError):
    """A latch or a barrier broke: a party died, gave up or timed out, so what
    everyone waits for will not happen. ``name`` is its name, ``reason`` why."""

    def __init__(self, message: str, *, name: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.name = name
        self.reason = reason


class LatchBroken(BrokenError):
    """A count-down latch broke (see :class:`BrokenError`)."""


class BarrierBroken(BrokenError):
    """A barrier broke (see :class:`BrokenError`)."""
