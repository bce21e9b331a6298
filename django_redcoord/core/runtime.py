"""What the core takes from the program around it: options, a client, a time zone, job hooks.

The core (locks, queues, leader, periodic jobs, workers) never imports
Django. It reads its defaults (``LOCK_TTL``, ``KEY_PREFIX``...) from
:data:`runtime`, builds its shared client with the factory given here, shows
slot times in the zone given here, and calls the hooks given here around
each periodic job. Django fills it from ``settings.REDCOORD`` (see
:mod:`django_redcoord.conf`); a plain program either passes ``client=`` to
each object (and gets the built-in defaults) or configures it once::

    from django_redcoord.core.runtime import runtime
    runtime.configure({"URL": "redis://localhost:6379/0", "KEY_PREFIX": "myapp"})

Until something configures it, ``loader`` (if set) is called on first use:
the Django app sets it to install the project's settings when Django
settings exist, so a script with ``DJANGO_SETTINGS_MODULE`` set works before
``django.setup()``; it imports nothing when they do not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import timezone, tzinfo
from typing import Any

from .options import DEFAULTS, validate


def _utc() -> tzinfo:
    return timezone.utc


class Runtime:
    """The core's settings and hooks (one per process: :data:`runtime`)."""

    _config: dict[str, Any] | None
    _client_factory: Callable[[dict[str, Any]], Any] | None
    _timezone: Callable[[], tzinfo]
    _job_hooks: tuple[Callable[[], Any], ...]
    _forgetters: list[Callable[[], None]]

    def __init__(self) -> None:
        self.loader: Callable[[], None] | None = None
        self._lock = threading.RLock()
        self._forgetters: list[Callable[[], None]] = []
        self._unset()

    def configure(
        self,
        options: dict[str, Any] | None = None,
        *,
        client_factory: Callable[[dict[str, Any]], Any] | None = None,
        timezone: Callable[[], tzinfo] | None = None,
        job_hooks: Sequence[Callable[[], Any]] = (),
    ) -> None:
        """Set the options (validated over the defaults; raises ConfigurationError
        listing every problem) and the hooks. Forgets the shared clients.

        ``client_factory(config)`` builds the shared sync client (default: from
        ``URL``); ``timezone()`` gives the zone of slot times (default UTC);
        each of ``job_hooks`` is called before and after every periodic job
        (Django: ``close_old_connections``).
        """
        config = validate(options)
        with self._lock:
            replacing = self._config is not None
            self._config = config
            self._client_factory = client_factory
            self._timezone = timezone or _utc
            self._job_hooks = tuple(job_hooks)
        if (
            replacing
        ):  # (from "not configured", clear() already forgot them: the loader takes no other lock)
            self._forget_clients()

    def clear(self) -> None:
        """Back to "not configured": built-in defaults, until the loader or configure() runs
        again."""
        with self._lock:
            self._unset()
        self._forget_clients()

    def _forget_clients(self) -> None:
        for forget in tuple(self._forgetters):
            forget()

    def _unset(self) -> None:
        self._config = None
        self._client_factory = None
        self._timezone = _utc
        self._job_hooks = ()

    def _load(self) -> None:
        if self._config is None and self.loader is not None:
            with self._lock:
                if self._config is None:
                    self.loader()

    @property
    def configured(self) -> bool:
        """True once options were given (by the program, or by the loader)."""
        self._load()
        return self._config is not None

    @property
    def config(self) -> dict[str, Any]:
        """The options in force: as configured, else the built-in defaults."""
        self._load()
        return self._config if self._config is not None else DEFAULTS

    @property
    def client_factory(self) -> Callable[[dict[str, Any]], Any] | None:
        """The factory given to :meth:`configure` (None: the transport builds from ``URL``)."""
        self._load()
        return self._client_factory

    def when_reconfigured(self, forget: Callable[[], None]) -> None:
        """Call ``forget()`` whenever the options change or are cleared.

        The modules that cache clients built from the options (the transport's
        shared client, Redlock's masters) register here, so the runtime imports
        none of them: it sits below every primitive, and none of its imports
        leads back to it.
        """
        with self._lock:
            if forget not in self._forgetters:
                self._forgetters.append(forget)

    def timezone(self) -> tzinfo:
        self._load()
        return self._timezone()

    def job_hooks(self) -> tuple[Callable[[], Any], ...]:
        self._load()
        return self._job_hooks


#: The process's runtime.
runtime = Runtime()


def default_prefix() -> str:
    """KEY_PREFIX in force."""
    return runtime.config["KEY_PREFIX"]


def lock_defaults() -> tuple[float, float | None]:
    """(ttl, wait) defaults for locks: LOCK_TTL/LOCK_WAIT in force."""
    config = runtime.config
    return config["LOCK_TTL"], config["LOCK_WAIT"]


def configure(options: dict[str, Any] | None = None, **hooks: Any) -> None:
    """Configure the core for this process (see :meth:`Runtime.configure`).

    ``options`` is a dict with the keys of Django's ``REDCOORD`` setting
    (``URL``, ``KEY_PREFIX``, ``LOCK_TTL``...), validated at once: a
    ConfigurationError lists every problem.
    """
    runtime.configure(options, **hooks)
