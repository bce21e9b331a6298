"""The one place that builds Redis key names.

Every key is ``<prefix>:<kind>:{<name>}[:<part>]``. The ``{<name>}`` hash tag
puts every key a single script touches for one resource in the same Redis
Cluster slot. A name may choose its slot itself with one ``{tag}``
(``"invoice:{customer-7}:12"``, as Redisson does): its keys are then
``<prefix>:<kind>:{<tag>}:<name>[:<part>]``, in the tag's slot, so resources
that share a tag share a slot (and a Cluster node). Names are restricted to a
safe character set: braces only as that one tag, no glob characters (``SCAN
MATCH`` under our prefix stays exact), no whitespace or control bytes, and a
length cap.

The admin indexes (which locks, queues, workers... exist) are written by the
same scripts as the resources. On one server (or Sentinel) each is one key,
or 256 buckets for live locks. On Redis Cluster (``KeyBuilder(cluster=True)``)
a resource's index entry lives in a bucket of *its own slot*,
``<prefix>:index:<kind>:{<slot tag>}``, where the slot tag is a short string
of that slot (:func:`slot_tag`): every script still touches one slot, and the
admin reads each primary's buckets in one round trip (``core/indexes.py``).
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

MAX_NAME_LENGTH = 200
ALLOWED_NAME_CHARS = "ASCII letters, digits and _ - . : / @ = + , # ~ |"
_NAME_RE = re.compile(r"[A-Za-z0-9_\-.:/@=+,#~|]+")
#: A name with one ``{tag}``: the tag (non-empty) chooses the Redis Cluster slot.
_TAGGED_RE = re.compile(
    r"([A-Za-z0-9_\-.:/@=+,#~|]*)\{([A-Za-z0-9_\-.:/@=+,#~|]+)\}([A-Za-z0-9_\-.:/@=+,#~|]*)"
)
TAG_RULE = "braces only as one non-empty {tag}, which chooses the Redis Cluster slot"
#: Redis Cluster's hash slots.
SLOTS = 16384
_PREFIX_RE = re.compile(r"[A-Za-z0-9_\-.:]+")
DEFAULT_PREFIX = "redcoord"
#: The live-lock index is split into this many hashes (by the name's CRC16,
#: as Redis Cluster slots are) so that each stays small enough for Redis's
#: compact listpack encoding (128 entries by default) up to ~30,000 live locks.
LOCK_INDEX_BUCKETS = 256


def is_valid_name(name: str, *, tag: bool = True) -> bool:
    """True if ``name`` is a valid name as :func:`validate_name` would take it."""
    try:
        validate_name(name, tag=tag)
    except (TypeError, ValueError):
        return False
    return True


def validate_name(name: object, what: str = "name", *, tag: bool = True) -> str:
    """Return ``name`` if it is usable in a key, else raise ``ValueError``/``TypeError``.

    Allowed: a non-empty ``str`` of at most 200 characters drawn from ASCII letters,
    digits and ``_ - . : / @ = + , # ~ |``, with at most one ``{tag}`` (not
    with ``tag=False``: names that are part of a composite key, such as
    worker ids and rate-limit keys).
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, not {type(name).__name__} ({name!r})")
    if not name:
        raise ValueError(f"{what} must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"{what} is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed"
        )
    if _NAME_RE.fullmatch(name):
        return name
    allowed_braces = {"{", "}"} if tag else set()
    bad = [  # in the order they first appear
        c for c in dict.fromkeys(name) if c not in allowed_braces and not _NAME_RE.fullmatch(c)
    ]
    if bad:
        raise ValueError(
            f"{what} {name!r} contains {''.join(bad)!r}; allowed characters are "
            f"{ALLOWED_NAME_CHARS}" + (f", and {TAG_RULE}" if tag else "")
        )
    if not _TAGGED_RE.fullmatch(name):
        raise ValueError(
            f"{what} {name!r} has misplaced braces; allowed characters are {ALLOWED_NAME_CHARS}, "
            f"and {TAG_RULE} (as in 'invoice:{{customer-7}}:12')"
        )
    return name


def hash_tag(name: str) -> str:
    """The part of a (validated) name that chooses its Cluster slot: its ``{tag}``, else the
    whole name."""
    if "{" not in name:
        return name
    return name[name.index("{") + 1 : name.index("}")]


def key_slot(key: str | bytes) -> int:
    """The Redis Cluster hash slot of ``key``: CRC16 of its first non-empty ``{...}``, else of
    the whole key."""
    raw = key.encode() if isinstance(key, str) else bytes(key)
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1 : end]
    return binascii.crc_hqx(raw, 0) % SLOTS


#: The part keys each kind of resource keeps beside its base key (``<base>:<part>``; a part
#: ending in ``:`` is followed by more, as an owner token): what a tagged name may not end in.
#: ``tests/core/test_keys.py`` checks it against every key the builders make.
PARTS: dict[str, tuple[str, ...]] = {
    "lock": ("queue", "waits", "wake:"),
    "sem": ("holders", "queue", "wake:"),
    "rw": ("readers", "queue", "wake:"),
    "latch": ("parties", "waiters", "wake", "wake:", "probe"),
    "barrier": ("parties", "waiters", "wake", "wake:", "probe"),
    "event": ("waiters", "wake", "wake:", "probe"),
    "signal": ("waiters", "wake", "wake:", "deliveries", "due", "probe"),
    "topic": (),
    "leader": ("term", "notify", "job:", "jobs"),
    "queue": (
        "ready",
        "seq",
        "delayed",
        "dead",
        "errors",
        "settle",
        "consumers",
        "processing:",
        "wake",
        "paused",
        "cancels",
        "unique",
        "unique:ids",
        "groups",
        "groups:pending",
        "groups:waiting",
        "history",
        "counts",
    ),
}
_KIND_WORDS = {"sem": "semaphore", "rw": "read-write lock", "leader": "election"}
#: The key kind of the names each admin index lists (for :func:`usable_in_index`).
_INDEX_KINDS = {
    "locks": "lock",
    "lockwaits": "lock",
    "semaphores": "sem",
    "rwlocks": "rw",
    "latches": "latch",
    "barriers": "barrier",
    "events": "event",
    "signals": "signal",
    "topics": "topic",
    "queues": "queue",
}


def usable_in_index(index: str, name: str) -> None:
    """ValueError when the (valid) ``name`` listed by admin index ``index`` is one its kind's
    keys cannot be built for (a tagged name refused by :func:`_check_tagged`, which an older
    version took): the index readers leave it out rather than fail the page."""
    kind = _INDEX_KINDS.get(index)
    if kind is not None and "{" in name:
        _check_tagged(kind, name)


def _check_tagged(kind: str, name: str) -> None:
    """ValueError when the tagged ``name`` ends in ``:<part>`` of its kind after its tag: its key
    would be that part key of the shorter name (both share the tag's ``{...}``)."""
    parts = PARTS[kind]
    after = name.index("}") + 1
    at = name.find(":", after)
    while at != -1:
        rest = name[at + 1 :]
        for part in parts:
            # (a part that goes on, "wake:<owner>", also refuses its bare "wake": safe side)
            if rest == part.rstrip(":") or (part.endswith(":") and rest.startswith(part)):
                what = _KIND_WORDS.get(kind, kind)
                raise ValueError(
                    f"{what} name {name!r} ends in {':' + rest!r}, which names a key of {what} "
                    f"{name[:at]!r}; after its {{tag}}, a {what} name may not end in ':' and "
                    f"one of {', '.join(p + ('...' if p.endswith(':') else '') for p in parts)}"
                )
        at = name.find(":", at + 1)


_slot_tags: list[str] | None = None
_suffixes: list[str] | None = None
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def in_slot(text: str, slot: int) -> str:
    """``text`` and 3 more letters or digits, chosen so that the result's Cluster slot is ``slot``.

    A Django Task's result id is made this way so that its record shares its
    queue's slot: the push and the record are one script on a Cluster too.
    CRC16 (XMODEM, as Cluster uses) is linear: crc(text + s) equals
    crc(text + 3 zero bytes) xor crc(s) for any 3-byte s, so one table of
    3-character suffixes by their CRC (built once, ~0.2 s) answers at once.
    """
    global _suffixes
    table = _suffixes
    if table is None:
        import itertools

        found: list[str | None] = [None] * SLOTS
        for chars in itertools.product(_ALPHABET, repeat=3):
            suffix = "".join(chars)
            s = binascii.crc_hqx(suffix.encode(), 0) % SLOTS
            if found[s] is None:
                found[s] = suffix
        assert None not in found, "every slot has a 3-character suffix"
        table = _suffixes = [t for t in found if t is not None]
    base = binascii.crc_hqx(text.encode() + b"\0\0\0", 0)
    return text + table[(base ^ slot) % SLOTS]


def slot_tag(slot: int) -> str:
    """A short string whose Cluster hash slot is ``slot`` (the same one on every machine).

    Built once, on first use (~0.1 s): for each slot the first string, in a
    fixed order of 1 to 3 characters, that hashes to it.
    """
    global _slot_tags
    tags = _slot_tags
    if tags is None:
        import itertools

        alphabet = _ALPHABET
        found: list[str | None] = [None] * SLOTS
        missing = SLOTS
        for length in (1, 2, 3):
            for chars in itertools.product(alphabet, repeat=length):
                candidate = "".join(chars)
                s = binascii.crc_hqx(candidate.encode(), 0) % SLOTS
                if found[s] is None:
                    found[s] = candidate
                    missing -= 1
            if not missing:
                break
        assert not missing, "every slot has a tag of at most 3 characters"
        tags = _slot_tags = [t for t in found if t is not None]
    return tags[slot]


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

    # string: MessagePack record [token, fence, expires_ms, depth, host, pid, thread,
    # queue_until_ms]
    lock: str
    queue: str  # list: MessagePack waiter entries (see common/waiters.lua)
    index: str  # hash (the name's index bucket, shared with other locks): name -> expiry bound (s)
    waits: str  # list: "<minute> <grants> <sum_ms> <max_ms>" of grants that waited, newest first
    wait_index: str  # hash (the name's wait-index bucket): name -> last minute with a wait
    wake_prefix: str  # a waiter blocks on wake_prefix + the token of whoever is just ahead of it
    hub_prefix: str = ""  # the wake hub's control list: see wake_hub_key

    def wake(self, token: str) -> str:
        return self.wake_prefix + token

    def interrupt(self, token: str) -> str:
        """List: ``interrupt`` markers for the waiter of owner ``token`` (its wake list is its
        successor's)."""
        return f"{self.lock}:stop:{token}"


@dataclass(frozen=True)
class LeaderKeys:
    """Keys of one election. Job state shares the election's hash tag, so a
    slot claim (checks the leader record, writes the job) is one script."""

    record: str  # hash: identity, token, term, since_ms, renewed_ms (PEXPIRE lease)
    # integer: last term issued (the fence of leader actions; expires a minute after the lease)
    term: str
    notify: str  # list: pushed on resign so standbys campaign at once
    job_prefix: str  # job state hash = job_prefix + job name
    jobs: str  # set: names of the jobs with state under this election

    def job(self, job_name: str) -> str:
        validate_name(job_name, "job name", tag=False)
        return self.job_prefix + job_name

    @property
    def requests(self) -> str:
        """hash: pending "run now" requests: request id -> JSON {job, slot_ms, requested_ms,
        expires_ms, by} (see periodic/request.lua); claimed ones are deleted by the leader."""
        return self.record + ":requests"

    def schedule(self, job_name: str) -> str:
        """hash: the schedule edits of one job, oldest kept first (see periodic/edit_schedule.lua):
        version, first, spec:<v> (JSON), since:<v> (ms since the epoch)."""
        validate_name(job_name, "job name", tag=False)
        return f"{self.record}:schedule:{job_name}"


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
    paused: str  # string, while the queue is paused: JSON {since_ms, reason} (queues/pause.lua)
    cancels: str  # zset: id -> cancel time (ms) of the messages cancelled while claimed
    uniq: str  # hash: unique key -> its holder, "<id>\n<state>\n<expires_ms>\n<until>\n<envelope>"
    uniq_ids: str  # hash: message id -> the unique key it holds (see queues/common.lua)
    gpend: str  # zset (lexical): "<group>\n<order>\n<envelope>" of grouped messages not yet in line
    gstate: str  # hash: group -> "<in_line> <running> <tat_ms>" (see queues/common.lua, Groups)
    gwait: str  # zset: envelope -> due (ms) of grouped messages in line that wait (retry, rate)
    index: str  # set (shared by all queues): queue names, for the admin

    def processing(self, consumer: str) -> str:
        validate_name(consumer, "consumer id", tag=False)
        return self.processing_prefix + consumer

    def settling(self) -> list[str]:
        """The keys every script that ends a delivery declares after its own two, in this order
        (queues/nack.lua and queues/reap.lua: dead-letter it, wake a worker, free its unique
        key, drop its cancel, keep its group's counts)."""
        return [
            self.dead,
            self.errors,
            self.wake,
            self.settle,
            self.cancels,
            self.uniq,
            self.uniq_ids,
            *self.grouping(),
        ]

    def grouping(self) -> list[str]:
        """The group keys (queues/common.lua, Groups) a script that moves grouped messages
        declares, in this order."""
        return [self.ready, self.seq, self.gpend, self.gstate, self.gwait]


@dataclass(frozen=True)
class SemaphoreKeys:
    """Keys of one semaphore. All but the shared index share the ``{name}`` hash tag."""

    # hash: permits, cp, fence, ib, qu, and 'h:<token>' -> holder record (see semaphores/common.lua)
    state: str
    holders: str  # zset: holder token -> lease expiry (ms)
    queue: str  # list: MessagePack waiter entries, oldest first
    index: str  # hash (shared by all semaphores): name -> bound on its holders' expiry (s)
    wake_prefix: str  # wake_prefix + token: the list the waiter queued behind that token blocks on
    hub_prefix: str = ""  # the wake hub's control list: see wake_hub_key

    def first(self) -> str:
        """List: hand-offs (``"<fence> <token>"``) for the waiter first in line, the only one
        blocking on it."""
        return f"{self.state}:wake"

    def interrupt(self, token: str) -> str:
        """List: ``interrupt`` markers for the waiter of owner ``token``."""
        return f"{self.state}:stop:{token}"


@dataclass(frozen=True)
class RWLockKeys:
    """Keys of one read-write lock. All but the shared index share the ``{name}`` hash tag."""

    # hash: w (the writer), fence, ib, qu, and 'r:<token>' -> reader record (see rwlocks/common.lua)
    state: str
    readers: str  # zset: reader token -> lease expiry (ms)
    queue: str  # list: MessagePack waiter entries ('r' or 'w'), oldest first
    index: str  # hash (shared by all read-write locks): name -> bound on its holders' expiry (s)
    wake_prefix: str  # wake_prefix + token: the list the waiter queued behind that token blocks on
    hub_prefix: str = ""  # the wake hub's control list: see wake_hub_key

    def first(self) -> str:
        """List: hand-offs (``"<fence> <token>"``) for the waiter first in line, the only one
        blocking on it."""
        return f"{self.state}:wake"

    def interrupt(self, token: str) -> str:
        """List: ``interrupt`` markers for the waiter of owner ``token``."""
        return f"{self.state}:stop:{token}"


@dataclass(frozen=True)
class LatchKeys:
    """Keys of one count-down latch or barrier. All but the shared index share the ``{name}``
    hash tag."""

    state: (
        str  # hash: the count (latch) or generation (barrier), why it broke, and a record per party
    )
    parties: str  # zset: party token -> lease expiry (ms)
    waiters: str  # zset: wake list -> registration deadline (ms), see common/broadcast.lua
    index: str  # hash (shared): name -> a bound on when it was last used (s)
    wake_prefix: str  # (before issue 31: a waiter's own wake list; no longer used)
    #: stream: one entry per wake-up (open, break, trip, reset); every waiter reads it
    #: (XREAD BLOCK from the entry its last look saw), so one entry wakes them all
    wake: str = ""
    #: never written: declared last by every script that writes, so that a Cluster node
    #: refuses the script whole (TRYAGAIN) while the slot migrates (common/broadcast.lua)
    probe: str = ""
    hub_prefix: str = ""  # the wake hub's control stream: see wake_hub_key


@dataclass(frozen=True)
class SignalKeys:
    """Keys of one event or signal. All but the shared index share the ``{name}`` hash tag."""

    state: str  # hash (events): set, data, gen
    # zset (events): wake list -> registration deadline; list (signals): waiter entries, oldest
    # first
    waiters: str
    index: str  # hash (shared): name -> a bound on when it was last used (s)
    wake_prefix: str  # (before issue 31: a waiter's own wake list; no longer used)
    #: stream: one entry per set() / send() / broadcast(), naming its recipient (signals);
    #: every waiter reads it (XREAD BLOCK from the entry its last look saw)
    wake: str = ""
    deliveries: str = (
        ""  # hash (signals): waiter token -> its signals not yet confirmed taken (cmsgpack)
    )
    due: str = ""  # zset (signals): waiter token -> when its deliveries are forgotten (ms)
    probe: str = ""  # never written: see LatchKeys.probe
    hub_prefix: str = ""  # the wake hub's control stream: see wake_hub_key


#: The admin indexes: kind -> the Redis type of each of its keys (see KeyBuilder.index_keys).
INDEX_TYPES: dict[str, str] = {
    "locks": "hash",
    "lockwaits": "hash",
    "semaphores": "hash",
    "rwlocks": "hash",
    "latches": "hash",
    "barriers": "hash",
    "events": "hash",
    "signals": "hash",
    "topics": "set",
    "ratelimiters": "hash",
    "queues": "set",
    "workers": "zset",
    "workflows": "zset",
}


def wake_hub_key(hub_prefix: str, hub_id: str) -> str:
    """stream (a hub of stream waits) or list (of list waits): the control key of one wake hub
    (``transport/hub.py``), which a wait the hub's read in flight does not cover writes to, to
    end that read. One per hub (a pool in a process or event loop, a kind of wait), in its own
    slot; it expires a minute after its last write."""
    return f"{hub_prefix}:{{{hub_id}}}"


class KeyBuilder:
    """Builds every key under one prefix (``REDCOORD["KEY_PREFIX"]``).

    ``cluster=True`` lays the admin indexes out per Cluster slot (see the
    module's docstring); every other key is the same in both layouts.
    """

    __slots__ = ("prefix", "cluster")

    def __init__(self, prefix: str = DEFAULT_PREFIX, *, cluster: bool = False) -> None:
        self.prefix = validate_prefix(prefix)
        self.cluster = bool(cluster)

    def __repr__(self) -> str:
        return f"KeyBuilder({self.prefix!r}{', cluster=True' if self.cluster else ''})"

    def _base(self, kind: str, name: str) -> str:
        """``<prefix>:<kind>:{<name>}``, or ``<prefix>:<kind>:{<tag>}:<name>`` for a name with a
        ``{tag}``.

        A plain name's key has one brace pair, a tagged one's two: no plain
        name and tagged name share a key. Two tagged names cannot either: one
        that would name another's part key (``"job{t}:queue"`` is the queue
        of lock ``"job{t}"``) is refused (:func:`_check_tagged`).
        """
        if "{" in name:
            _check_tagged(kind, name)
            return f"{self.prefix}:{kind}:{{{hash_tag(name)}}}:{name}"
        return f"{self.prefix}:{kind}:{{{name}}}"

    # -- the admin indexes -------------------------------------------------

    def _index(self, kind: str, of_key: str, name: str = "") -> str:
        """The index bucket of ``kind`` for the resource ``name`` whose key is ``of_key``."""
        if self.cluster:
            return f"{self.prefix}:index:{kind}:{{{slot_tag(key_slot(of_key))}}}"
        if kind in ("locks", "lockwaits"):  # 256 buckets, by the name's CRC16
            bucket = binascii.crc_hqx(name.encode(), 0) % LOCK_INDEX_BUCKETS
            return f"{self.prefix}:index:{kind}:{bucket}"
        return f"{self.prefix}:index:{kind}"

    def index_keys(self, kind: str) -> list[str]:
        """Every key of the admin index ``kind`` (one server: 1, or 256 for locks).

        On a Cluster the buckets are per slot: read them with
        ``core.indexes.read_index``, which asks each primary for its own.
        """
        if self.cluster:
            raise ValueError(
                "a Cluster's indexes are per slot: read them with core.indexes.read_index"
            )
        if kind in ("locks", "lockwaits"):
            return [f"{self.prefix}:index:{kind}:{b}" for b in range(LOCK_INDEX_BUCKETS)]
        if kind not in INDEX_TYPES:
            raise ValueError(f"unknown index {kind!r}; the indexes are {', '.join(INDEX_TYPES)}")
        return [f"{self.prefix}:index:{kind}"]

    def index_parts(self, kind: str) -> tuple[str, str]:
        """(head, tail) of a Cluster index bucket: its key is head + slot tag + tail."""
        return f"{self.prefix}:index:{kind}:{{", "}"

    def rate_limit_top_parts(self, limiter: str) -> tuple[tuple[str, str], tuple[str, str]]:
        """(head, tail) of a Cluster limiter's per-slot busiest-keys zsets (this minute's, the
        one before's)."""
        validate_name(limiter, "rate limiter name", tag=False)
        head = f"{self.prefix}:index:rl-top:{{"
        return (head, f"}}:{limiter}:now"), (head, f"}}:{limiter}:before")

    # -- resources -----------------------------------------------------------

    def lock(self, name: str) -> LockKeys:
        validate_name(name, "lock name")
        base = self._base("lock", name)
        return LockKeys(
            lock=base,
            queue=f"{base}:queue",
            index=self._index("locks", base, name),
            waits=f"{base}:waits",
            wait_index=self._index("lockwaits", base, name),
            wake_prefix=f"{base}:wake:",
            hub_prefix=self.wake_hub_prefix(),
        )

    def redlock_boot(self) -> str:
        """A quorum lock master's boot record (one per master and prefix; see
        ``lua/redlock/guard.lua``)."""
        return f"{self.prefix}:redlock:boot"

    def semaphore(self, name: str) -> SemaphoreKeys:
        validate_name(name, "semaphore name")
        base = self._base("sem", name)
        return SemaphoreKeys(
            state=base,
            holders=f"{base}:holders",
            queue=f"{base}:queue",
            index=self._index("semaphores", base),
            wake_prefix=f"{base}:wake:",
            hub_prefix=self.wake_hub_prefix(),
        )

    def rwlock(self, name: str) -> RWLockKeys:
        validate_name(name, "read-write lock name")
        base = self._base("rw", name)
        return RWLockKeys(
            state=base,
            readers=f"{base}:readers",
            queue=f"{base}:queue",
            index=self._index("rwlocks", base),
            wake_prefix=f"{base}:wake:",
            hub_prefix=self.wake_hub_prefix(),
        )

    def latch(self, name: str) -> LatchKeys:
        validate_name(name, "latch name")
        return self._latch_like("latch", name, "latches")

    def barrier(self, name: str) -> LatchKeys:
        validate_name(name, "barrier name")
        return self._latch_like("barrier", name, "barriers")

    def _latch_like(self, kind: str, name: str, index: str) -> LatchKeys:
        base = self._base(kind, name)
        return LatchKeys(
            state=base,
            parties=f"{base}:parties",
            waiters=f"{base}:waiters",
            index=self._index(index, base),
            wake_prefix=f"{base}:wake:",
            wake=f"{base}:wake",
            probe=f"{base}:probe",
            hub_prefix=self.wake_hub_prefix(),
        )

    def event(self, name: str) -> SignalKeys:
        validate_name(name, "event name")
        base = self._base("event", name)
        return SignalKeys(
            state=base,
            waiters=f"{base}:waiters",
            index=self._index("events", base),
            wake_prefix=f"{base}:wake:",
            wake=f"{base}:wake",
            probe=f"{base}:probe",
            hub_prefix=self.wake_hub_prefix(),
        )

    def signal(self, name: str) -> SignalKeys:
        validate_name(name, "signal name")
        base = self._base("signal", name)
        return SignalKeys(
            state=base,
            waiters=f"{base}:waiters",
            index=self._index("signals", base),
            wake_prefix=f"{base}:wake:",
            wake=f"{base}:wake",
            deliveries=f"{base}:deliveries",
            due=f"{base}:due",
            probe=f"{base}:probe",
            hub_prefix=self.wake_hub_prefix(),
        )

    def wake_hub_prefix(self) -> str:
        """What a wake hub's control stream starts with (see :func:`wake_hub_key`)."""
        return f"{self.prefix}:hub"

    def topic(self, name: str) -> str:
        """stream: the messages of a durable topic (consumer groups are the subscribers)."""
        validate_name(name, "topic name")
        return self._base("topic", name)

    def topic_index(self, name: str) -> str:
        """set: topic names (of the topic's slot on a Cluster), for the admin."""
        return self._index("topics", self.topic(name))

    def rate_limit(self, limiter: str, key: str) -> tuple[str, str]:
        """(state hash, in-flight zset) of one key of a rate limiter, under one hash tag.

        The tag holds the limiter's name with its length, then the key, so
        no two (limiter, key) pairs share it whatever characters they use.
        """
        base = self._rate_limit_base(limiter, key)
        return base, f"{base}:inflight"

    def rate_limit_cell(self, limiter: str, key: str) -> str:
        """string: the GCRA state ``CL.THROTTLE`` keeps (redis-cell's format), beside
        ``rate_limit``'s."""
        return f"{self._rate_limit_base(limiter, key)}:cell"

    def _rate_limit_base(self, limiter: str, key: str) -> str:
        validate_name(limiter, "rate limiter name", tag=False)
        validate_name(key, "rate-limit key", tag=False)
        return f"{self.prefix}:rl:{{{len(limiter)}:{limiter}:{key}}}"

    def rate_limit_top(self, limiter: str, key: str | None = None) -> tuple[str, str]:
        """zsets: key -> hits in one minute of the server's clock, the admin's busiest
        keys: this minute's, then the one before. Member ``''`` (never a key) is
        scored minus the minute (unix time // 60) a zset counts; the decision
        script moves this minute's to the other when the minute turns.

        On a Cluster they are per slot (of the rate-limit ``key``'s state), so
        the decision script touches one slot; the admin adds them up."""
        validate_name(limiter, "rate limiter name", tag=False)
        if self.cluster:
            if key is None:
                raise ValueError(
                    "on a Cluster a limiter's busiest-keys zsets are per slot: give the "
                    "rate-limit key"
                )
            tag = slot_tag(key_slot(self._rate_limit_base(limiter, key)))
            base = f"{self.prefix}:index:rl-top:{{{tag}}}:{limiter}"
        else:  # one server: an admin index like the others, shared by the limiter's keys
            base = f"{self.prefix}:index:rl-top:{limiter}"
        return f"{base}:now", f"{base}:before"

    def rate_limit_index(self, limiter: str, key: str) -> str:
        """hash: rate limiter name -> its policies (of the key's slot on a Cluster), for the
        admin."""
        return self._index("ratelimiters", self._rate_limit_base(limiter, key))

    def leader(self, name: str) -> LeaderKeys:
        validate_name(name, "election name")
        base = self._base("leader", name)
        return LeaderKeys(
            record=base,
            term=f"{base}:term",
            notify=f"{base}:notify",
            job_prefix=f"{base}:job:",
            jobs=f"{base}:jobs",
        )

    def queue(self, name: str) -> QueueKeys:
        validate_name(name, "queue name")
        base = self._base("queue", name)
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
            paused=f"{base}:paused",
            cancels=f"{base}:cancels",
            uniq=f"{base}:unique",
            uniq_ids=f"{base}:unique:ids",
            gpend=f"{base}:groups:pending",
            gstate=f"{base}:groups",
            gwait=f"{base}:groups:waiting",
            index=self._index("queues", base),
        )

    def queue_history(self, name: str) -> str:
        """list: the queue's samples, newest first, one a minute at most (see
        queues/sample.lua): ``"<minute> <depth> <done>"``, numbers only."""
        validate_name(name, "queue name")
        return f"{self._base('queue', name)}:history"

    def queue_counts(self, name: str) -> str:
        """hash: ``done`` (messages finished by the queue's workers, as they
        report it once a minute) and ``sampled`` (the minute last sampled)."""
        validate_name(name, "queue name")
        return f"{self._base('queue', name)}:counts"

    def workers(self, worker_id: str) -> str:
        """zset: worker id -> heartbeat deadline (ms) (of the worker's slot on a Cluster), for
        the admin page."""
        return self._index("workers", self.worker(worker_id))

    def worker(self, worker_id: str) -> str:
        """hash: identity, host, pid, queues, current job, started_ms, heartbeat_ms."""
        validate_name(worker_id, "worker id", tag=False)
        return f"{self.prefix}:worker:{{{worker_id}}}"

    def workflow(self, workflow_id: str) -> str:
        """hash: a workflow of Django Tasks (see core/lua/tasks/workflow.lua)."""
        validate_name(workflow_id, "workflow id", tag=False)
        return f"{self.prefix}:workflow:{{{workflow_id}}}"

    def workflow_index(self, workflow_key: str) -> str:
        """zset: workflow id -> when a sweeper looks at it next (ms), of the running workflows
        (one per slot on a Cluster, in the workflow's slot)."""
        return self._index("workflows", workflow_key)

    def task_result(self, result_id: str) -> str:
        """hash: a Django Task's result (status, times, return value, errors)."""
        validate_name(result_id, "task result id", tag=False)
        return f"{self.prefix}:task:{{{result_id}}}"
