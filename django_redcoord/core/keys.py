"""The one place that builds Redis key names.

Every key is ``<prefix>:<kind>:{<name>}[:<part>]``. The ``{<name>}`` hash tag
puts every key a single script touches for one resource in the same Redis
Cluster slot. Names are restricted to a safe character set: no ``{}`` (they
would break the hash tag), no glob characters (``SCAN MATCH`` under our prefix
stays exact), no whitespace or control bytes, and a length cap.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

MAX_NAME_LENGTH = 200
ALLOWED_NAME_CHARS = "letters, digits and _ - . : / @ = + , # ~ |"
_NAME_RE = re.compile(r"[A-Za-z0-9_\-.:/@=+,#~|]+")
_PREFIX_RE = re.compile(r"[A-Za-z0-9_\-.:]+")
DEFAULT_PREFIX = "redcoord"
#: The live-lock index is split into this many hashes (by the name's CRC16,
#: as Redis Cluster slots are) so that each stays small enough for Redis's
#: compact listpack encoding (128 entries by default) up to ~30,000 live locks.
LOCK_INDEX_BUCKETS = 256


def validate_name(name: object, what: str = "name") -> str:
    """Return ``name`` if it is usable in a key, else raise ``ValueError``/``TypeError``.

    Allowed: a non-empty ``str`` of at most 200 characters drawn from letters,
    digits and ``_ - . : / @ = + , # ~ |``.
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, not {type(name).__name__} ({name!r})")
    if not name:
        raise ValueError(f"{what} must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"{what} is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed")
    if not _NAME_RE.fullmatch(name):
        bad = sorted({c for c in name if not _NAME_RE.fullmatch(c)})
        raise ValueError(
            f"{what} {name!r} contains {''.join(bad)!r}; allowed characters are {ALLOWED_NAME_CHARS}"
        )
    return name


def validate_prefix(prefix: object) -> str:
    """Return ``prefix`` if usable as KEY_PREFIX: letters, digits and ``_ - . :``."""
    if not isinstance(prefix, str) or not prefix or not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(
            f"KEY_PREFIX must be a non-empty str of letters, digits and _ - . : (got {prefix!r})"
        )
    if len(prefix) > 64:
        raise ValueError(f"KEY_PREFIX is {len(prefix)} characters long; at most 64 are allowed")
    return prefix


@dataclass(frozen=True)
class LockKeys:
    """Keys of one lock. All share the ``{name}`` hash tag."""

    lock: str  # string: MessagePack record [token, fence, expires_ms, depth, host, pid, thread, queue_until_ms]
    queue: str  # list: MessagePack waiter entries (see common/waiters.lua)
    index: str  # hash (the name's index bucket, shared with other locks): name -> expiry bound (s)
    waits: str  # list: "<minute> <grants> <sum_ms> <max_ms>" of grants that waited, newest first
    wait_index: str  # hash (the name's wait-index bucket): name -> last minute with a wait
    wake_prefix: str  # a waiter blocks on wake_prefix + its token

    def wake(self, token: str) -> str:
        return self.wake_prefix + token


@dataclass(frozen=True)
class LeaderKeys:
    """Keys of one election. Job state shares the election's hash tag, so a
    slot claim (checks the leader record, writes the job) is one script."""

    record: str  # hash: identity, token, term, since_ms, renewed_ms (PEXPIRE lease)
    term: str  # integer: last term issued (the fence of leader actions; expires a minute after the lease)
    notify: str  # list: pushed on resign so standbys campaign at once
    job_prefix: str  # job state hash = job_prefix + job name
    jobs: str  # set: names of the jobs with state under this election

    def job(self, job_name: str) -> str:
        validate_name(job_name, "job name")
        return self.job_prefix + job_name

    @property
    def requests(self) -> str:
        """hash: pending "run now" requests: request id -> JSON {job, slot_ms, requested_ms,
        expires_ms, by} (see periodic/request.lua); claimed ones are deleted by the leader."""
        return self.record + ":requests"


@dataclass(frozen=True)
class QueueKeys:
    """Keys of one queue. All share the ``{name}`` hash tag."""

    ready: str  # zset: envelope -> order score (priority band, then arrival)
    seq: str  # integer: arrival counter for the order score
    delayed: str  # zset: envelope -> due time (ms since the epoch)
    dead: str  # list: dead-lettered envelopes, oldest first
    errors: str  # hash: message id -> JSON {error, failed_ms} of dead letters
    settle: str  # list: dead letters whose result record must still be marked FAILED
    consumers: str  # zset: processing-list key -> heartbeat deadline (ms)
    processing_prefix: str  # list per consumer: processing_prefix + consumer id
    wake: str  # list: holds one token while messages may be ready (idle workers BLPOP it)
    index: str  # set (shared by all queues): queue names, for the admin

    def processing(self, consumer: str) -> str:
        validate_name(consumer, "consumer id")
        return self.processing_prefix + consumer


@dataclass(frozen=True)
class SemaphoreKeys:
    """Keys of one semaphore. All but the shared index share the ``{name}`` hash tag."""

    state: str  # hash: permits, cp, fence, ib, qu, and 'h:<token>' -> holder record (see semaphores/common.lua)
    holders: str  # zset: holder token -> lease expiry (ms)
    queue: str  # list: MessagePack waiter entries, oldest first
    index: str  # hash (shared by all semaphores): name -> bound on its holders' expiry (s)
    wake_prefix: str  # a waiter blocks on wake_prefix + its token


@dataclass(frozen=True)
class RWLockKeys:
    """Keys of one read-write lock. All but the shared index share the ``{name}`` hash tag."""

    state: str  # hash: w (the writer), fence, ib, qu, and 'r:<token>' -> reader record (see rwlocks/common.lua)
    readers: str  # zset: reader token -> lease expiry (ms)
    queue: str  # list: MessagePack waiter entries ('r' or 'w'), oldest first
    index: str  # hash (shared by all read-write locks): name -> bound on its holders' expiry (s)
    wake_prefix: str  # a waiter blocks on wake_prefix + its token


@dataclass(frozen=True)
class LatchKeys:
    """Keys of one count-down latch or barrier. All but the shared index share the ``{name}`` hash tag."""

    state: str  # hash: the count (latch) or generation (barrier), why it broke, and a record per party
    parties: str  # zset: party token -> lease expiry (ms)
    waiters: str  # zset: wake list -> registration deadline (ms), see common/broadcast.lua
    index: str  # hash (shared): name -> a bound on when it was last used (s)
    wake_prefix: str  # a waiter blocks on wake_prefix + its token


@dataclass(frozen=True)
class SignalKeys:
    """Keys of one event or signal. All but the shared index share the ``{name}`` hash tag."""

    state: str  # hash (events): set, data, gen
    waiters: str  # zset (events): wake list -> registration deadline; list (signals): waiter entries, oldest first
    index: str  # hash (shared): name -> a bound on when it was last used (s)
    wake_prefix: str  # a waiter blocks on wake_prefix + its token


class KeyBuilder:
    """Builds every key under one prefix (``REDCOORD["KEY_PREFIX"]``)."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        self.prefix = validate_prefix(prefix)

    def __repr__(self) -> str:
        return f"KeyBuilder({self.prefix!r})"

    def lock(self, name: str) -> LockKeys:
        validate_name(name, "lock name")
        base = f"{self.prefix}:lock:{{{name}}}"
        return LockKeys(
            lock=base,
            queue=f"{base}:queue",
            index=self.lock_index(bucket := binascii.crc_hqx(name.encode(), 0) % LOCK_INDEX_BUCKETS),
            waits=f"{base}:waits",
            wait_index=self.lock_wait_index(bucket),
            wake_prefix=f"{base}:wake:",
        )

    def lock_index(self, bucket: int) -> str:
        """hash: name -> expires_ms of live locks whose name falls in ``bucket``."""
        return f"{self.prefix}:index:locks:{bucket}"

    def lock_indexes(self) -> list[str]:
        """Every bucket of the live-lock index, for the admin."""
        return [self.lock_index(b) for b in range(LOCK_INDEX_BUCKETS)]

    def lock_wait_index(self, bucket: int) -> str:
        """hash: name -> last minute (server time // 60 s) a grant of that lock waited, for names in ``bucket``."""
        return f"{self.prefix}:index:lockwaits:{bucket}"

    def lock_wait_indexes(self) -> list[str]:
        """Every bucket of the lock-wait index, for the admin."""
        return [self.lock_wait_index(b) for b in range(LOCK_INDEX_BUCKETS)]

    def semaphore(self, name: str) -> SemaphoreKeys:
        validate_name(name, "semaphore name")
        base = f"{self.prefix}:sem:{{{name}}}"
        return SemaphoreKeys(
            state=base,
            holders=f"{base}:holders",
            queue=f"{base}:queue",
            index=self.semaphore_index(),
            wake_prefix=f"{base}:wake:",
        )

    def semaphore_index(self) -> str:
        """hash: name -> a bound (s) on when the holders of that semaphore expire, for the admin."""
        return f"{self.prefix}:index:semaphores"

    def rwlock(self, name: str) -> RWLockKeys:
        validate_name(name, "read-write lock name")
        base = f"{self.prefix}:rw:{{{name}}}"
        return RWLockKeys(
            state=base,
            readers=f"{base}:readers",
            queue=f"{base}:queue",
            index=self.rwlock_index(),
            wake_prefix=f"{base}:wake:",
        )

    def rwlock_index(self) -> str:
        """hash: name -> a bound (s) on when the holders of that read-write lock expire, for the admin."""
        return f"{self.prefix}:index:rwlocks"

    def latch(self, name: str) -> LatchKeys:
        validate_name(name, "latch name")
        return self._latch_like("latch", name, self.latch_index())

    def latch_index(self) -> str:
        """hash: latch name -> a bound (s) on when it was last used, for the admin."""
        return f"{self.prefix}:index:latches"

    def barrier(self, name: str) -> LatchKeys:
        validate_name(name, "barrier name")
        return self._latch_like("barrier", name, self.barrier_index())

    def barrier_index(self) -> str:
        """hash: barrier name -> a bound (s) on when it was last used, for the admin."""
        return f"{self.prefix}:index:barriers"

    def _latch_like(self, kind: str, name: str, index: str) -> LatchKeys:
        base = f"{self.prefix}:{kind}:{{{name}}}"
        return LatchKeys(
            state=base, parties=f"{base}:parties", waiters=f"{base}:waiters", index=index, wake_prefix=f"{base}:wake:"
        )

    def event(self, name: str) -> SignalKeys:
        validate_name(name, "event name")
        base = f"{self.prefix}:event:{{{name}}}"
        return SignalKeys(state=base, waiters=f"{base}:waiters", index=self.event_index(), wake_prefix=f"{base}:wake:")

    def event_index(self) -> str:
        """hash: event name -> a bound (s) on when it was last used, for the admin."""
        return f"{self.prefix}:index:events"

    def signal(self, name: str) -> SignalKeys:
        validate_name(name, "signal name")
        base = f"{self.prefix}:signal:{{{name}}}"
        return SignalKeys(state=base, waiters=f"{base}:waiters", index=self.signal_index(), wake_prefix=f"{base}:wake:")

    def signal_index(self) -> str:
        """hash: signal name -> a bound (s) on when it was last waited on, for the admin."""
        return f"{self.prefix}:index:signals"

    def topic(self, name: str) -> str:
        """stream: the messages of a durable topic (consumer groups are the subscribers)."""
        validate_name(name, "topic name")
        return f"{self.prefix}:topic:{{{name}}}"

    def topic_index(self) -> str:
        """set: topic names, for the admin."""
        return f"{self.prefix}:index:topics"

    def rate_limit(self, limiter: str, key: str) -> tuple[str, str]:
        """(state hash, in-flight zset) of one key of a rate limiter, under one hash tag.

        The tag holds the limiter's name with its length, then the key, so
        no two (limiter, key) pairs share it whatever characters they use.
        """
        base = self._rate_limit_base(limiter, key)
        return base, f"{base}:inflight"

    def rate_limit_cell(self, limiter: str, key: str) -> str:
        """string: the GCRA state ``CL.THROTTLE`` keeps (redis-cell's format), beside ``rate_limit``'s."""
        return f"{self._rate_limit_base(limiter, key)}:cell"

    def _rate_limit_base(self, limiter: str, key: str) -> str:
        validate_name(limiter, "rate limiter name")
        validate_name(key, "rate-limit key")
        return f"{self.prefix}:rl:{{{len(limiter)}:{limiter}:{key}}}"

    def rate_limit_top(self, limiter: str) -> tuple[str, str]:
        """zsets: key -> hits in one minute of the server's clock, the admin's busiest
        keys: this minute's, then the one before. Member ``''`` (never a key) is
        scored minus the minute (unix time // 60) a zset counts; the decision
        script moves this minute's to the other when the minute turns."""
        validate_name(limiter, "rate limiter name")
        base = f"{self.prefix}:rl-top:{{{limiter}}}"
        return f"{base}:now", f"{base}:before"

    def rate_limit_index(self) -> str:
        """hash: rate limiter name -> its policies, for the admin."""
        return f"{self.prefix}:index:ratelimiters"

    def leader(self, name: str) -> LeaderKeys:
        validate_name(name, "election name")
        base = f"{self.prefix}:leader:{{{name}}}"
        return LeaderKeys(
            record=base,
            term=f"{base}:term",
            notify=f"{base}:notify",
            job_prefix=f"{base}:job:",
            jobs=f"{base}:jobs",
        )

    def queue(self, name: str) -> QueueKeys:
        validate_name(name, "queue name")
        base = f"{self.prefix}:queue:{{{name}}}"
        return QueueKeys(
            ready=f"{base}:ready",
            seq=f"{base}:seq",
            delayed=f"{base}:delayed",
            dead=f"{base}:dead",
            errors=f"{base}:errors",
            settle=f"{base}:settle",
            consumers=f"{base}:consumers",
            processing_prefix=f"{base}:processing:",
            wake=f"{base}:wake",
            index=self.queue_index(),
        )

    def queue_index(self) -> str:
        return f"{self.prefix}:index:queues"

    def queue_history(self, name: str) -> str:
        """list: the queue's samples, newest first, one a minute at most (see
        queues/sample.lua): ``"<minute> <depth> <done>"``, numbers only."""
        validate_name(name, "queue name")
        return f"{self.prefix}:queue:{{{name}}}:history"

    def queue_counts(self, name: str) -> str:
        """hash: ``done`` (messages finished by the queue's workers, as they
        report it once a minute) and ``sampled`` (the minute last sampled)."""
        validate_name(name, "queue name")
        return f"{self.prefix}:queue:{{{name}}}:counts"

    def workers(self) -> str:
        """zset: worker id -> heartbeat deadline (ms), for the admin page."""
        return f"{self.prefix}:index:workers"

    def worker(self, worker_id: str) -> str:
        """hash: identity, host, pid, queues, current job, started_ms, heartbeat_ms."""
        validate_name(worker_id, "worker id")
        return f"{self.prefix}:worker:{{{worker_id}}}"

    def task_result(self, result_id: str) -> str:
        """hash: a Django Task's result (status, times, return value, errors)."""
        validate_name(result_id, "task result id")
        return f"{self.prefix}:task:{{{result_id}}}"
