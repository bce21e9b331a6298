"""The core: coordination primitives in plain Python on redis-py.

It never imports Django (``tests/core/test_layering.py`` checks), so it serves
Celery tasks, scripts and other frameworks as well as the Django skin around
it. Give each object a ``client=`` (a ``redis.Redis`` or ``redis.asyncio.Redis``),
or configure the process once::

    from django_redcoord.core import configure
    configure({"URL": "redis://localhost:6379/0", "KEY_PREFIX": "myapp"})

Families: :mod:`.locks`, :mod:`.semaphores`, :mod:`.rwlocks`, :mod:`.latches`,
:mod:`.signals`, :mod:`.leader`, :mod:`.periodic`, :mod:`.queues`,
:mod:`.ratelimit`, :mod:`.redlock`; :mod:`.transport` (clients, scripts, the
sync and asyncio drivers) carries them all. Keys are built in :mod:`.keys`,
options validated in :mod:`.options`.

This module is also **the door**: the Django layer around the core (the admin,
the decorators, the Tasks backend, the commands...) imports the core only from
here, and only the names of :data:`__all__` (``tests/core/test_layering.py``
holds it to that). So what the core offers its skin is one list, below, and
everything else in the core may change without the skin noticing. Each name is
imported on first use (nothing at import time; importing the door costs the
runtime and the options only).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .runtime import configure

# module (relative to this package) -> the names the door takes from it; "name=attr" gives an
# attribute another name here (no door name may be a submodule's name: ``core.observe`` is a
# module, so its ``observe`` is ``observe_event`` here; ``core.periodic`` a package, so the
# ``@periodic`` decorator is ``periodic_decorator``; ``core.runtime`` a module, so its
# ``runtime`` is ``process_runtime``).
_DOOR: dict[str, tuple[str, ...]] = {
    ".exceptions": (
        "BarrierBroken",
        "BrokenError",
        "ConfigurationError",
        "CoordinationUnavailable",
        "DeliveryFailed",
        "LatchBroken",
        "LockError",
        "LockLost",
        "LockNotAcquired",
        "LockNotOwned",
        "PoolExhausted",
        "QuorumNotReached",
        "RedcoordError",
        "ReplicasNotSynced",
    ),
    ".runtime": ("process_runtime=runtime",),
    ".options": ("DEFAULTS", "EMBEDDED", "URL_SCHEMES", "problems", "tracing_option", "validate"),
    ".values": (
        "DEFAULT",
        "check_count",
        "check_seconds",
        "check_ttl",
        "check_wait",
        "finite_number",
        "whole_span",
    ),
    ".keys": (
        "INDEX_TYPES",
        "KeyBuilder",
        "MAX_NAME_LENGTH",
        "in_slot",
        "is_valid_name",
        "key_slot",
        "validate_name",
    ),
    ".indexes": ("counting_unreadable", "read_index", "reading_all", "skip_unreadable"),
    ".observe": ("add_observer", "observe_event=observe", "observers", "remove_observer"),
    ".transport.clients": (
        "build_client",
        "client_from_url",
        "get_async_client",
        "get_client",
        "is_async_client",
        "is_cluster",
        "key_builder",
        "no_retry",
    ),
    ".transport.commands": (
        "answered_by",
        "as_text",
        "command",
        "commands",
        "execute_pipeline",
    ),
    ".transport.drivers": ("uncancellable",),
    ".transport.errors": ("describe", "is_passing", "mask_url", "unavailable_as_ours"),
    ".transport.scripts": ("Script",),
    ".holds": ("Hold",),
    ".holds.settling": ("settle_later",),
    ".holds.steps": ("replica_check_limit",),
    ".locks": ("Lock", "force_release", "read_holders"),
    ".semaphores": ("Semaphore", "read_semaphores", "revoke_permit"),
    ".semaphores.semaphore": ("check_permits",),
    ".rwlocks": ("ReadWriteLock", "read_rwlocks"),
    ".latches": ("Barrier", "CountDownLatch", "read_barriers", "read_latches"),
    ".signals": ("Event", "Signal", "Topic", "read_signals"),
    ".redlock": ("Redlock",),
    ".ratelimit": (
        "Decision",
        "RateLimited",
        "RateLimiter",
        "busiest_keys",
        "parse",
        "reset_key",
    ),
    ".leader.election": ("DEFAULT_ELECTION", "LeaderElection", "read_leader"),
    ".periodic.control": (
        "DEFAULT_REQUEST_TTL",
        "pause_job",
        "pending_requests",
        "request_run",
        "resume_job",
    ),
    ".periodic.jobs": (
        "Job",
        "MAX_LATE_LIMIT",
        "current_job",
        "get_jobs",
        "periodic_decorator=periodic",
    ),
    ".periodic.overdue": ("assess", "edited_since_claim", "election_timing", "job_health"),
    ".periodic.scheduler": ("Scheduler", "read_job_states"),
    ".periodic.server": ("ElectionDied", "PeriodicServer"),
    ".periodic.schedules": (
        "check_schedule",
        "decode_versions",
        "edit_schedule",
        "editable_params",
        "parse_param",
        "read_versions",
        "revert_schedule",
        "Timeline",
    ),
    ".queues": ("Queue", "depths"),
    ".queues.groups": ("Group", "check_group_name"),
    ".queues.messages": (
        "HAS_RECORD",
        "QUEUE_INCLUDES",
        "REQUEUED",
        "EncodedJSON",
        "Message",
        "current_tracer",
        "queue_defaults",
        "set_tracer",
        "to_json",
    ),
    ".queues.queue": ("HISTORY_SAMPLES", "Sample", "Unique", "read_history"),
    ".queues.records": ("RESULTS", "iso", "until", "utcnow", "valid_id", "when", "write_records"),
    ".queues.worker": ("Cancelled", "DeadLetter", "Retry", "Worker"),
}

# Two modules the door hands out whole, as the services they are: the embedded server's
# controls (start, stop, its socket) and the probe of the redis-cell module.
_MODULES = {"embedded": ".transport.embedded", "native": ".ratelimit.native"}

_WHERE: dict[str, tuple[str, str]] = {name: (module, "") for name, module in _MODULES.items()}
for _module, _names in _DOOR.items():
    for _entry in _names:
        _name, _, _attr = _entry.partition("=")
        _WHERE[_name] = (_module, _attr or _name)

__all__ = ["configure", *sorted(_WHERE)]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    found = import_module(module, __name__)
    value = getattr(found, attr) if attr else found
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
