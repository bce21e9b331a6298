"""Lua scripts: each lives in ``scripts/<name>.lua`` and runs by EVALSHA.

A script is read from disk on first use (never at import), optionally
prefixed by shared helper files, and sent with EVALSHA: one round trip. A
server that does not know the script yet (first use, restart, failover)
answers NOSCRIPT and we fall back to EVAL once, which also caches it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from importlib import resources
from typing import Any

import redis

from .connection import unavailable_as_ours


class Script:
    """One Lua script file (plus shared helper files) run against a client."""

    __slots__ = ("name", "includes", "_loaded")

    def __init__(self, name: str, *, includes: tuple[str, ...] = ()) -> None:
        self.name = name
        self.includes = includes
        self._loaded: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"Script({self.name!r})"

    def _load(self) -> tuple[str, str]:
        if self._loaded is None:
            source = "\n".join(_read(f) for f in (*self.includes, f"{self.name}.lua"))
            self._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
        return self._loaded

    @property
    def source(self) -> str:
        return self._load()[0]

    def queue(self, pipe: Any, keys: list[str], args: list[Any]) -> None:
        """Add a run of this script to a pipeline (see :func:`execute_pipeline`)."""
        pipe.evalsha(self._load()[1], len(keys), *keys, *args)
        used = getattr(pipe, "redcoord_scripts", None)
        if used is None:
            used = pipe.redcoord_scripts = set()
        used.add(self)

    def __call__(self, client: Any, keys: list[str], args: list[Any], *, operation: str) -> Any:
        """Run the script: one round trip (two only after NOSCRIPT)."""
        source, sha = self._loaded or self._load()
        try:
            try:
                return client.evalsha(sha, len(keys), *keys, *args)
            except redis.exceptions.NoScriptError:
                return client.eval(source, len(keys), *keys, *args)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            # inline rather than a context manager: this is every operation's hot path
            with unavailable_as_ours(client, operation):
                raise exc from exc.__cause__


def _read(filename: str) -> str:
    return resources.files(__package__).joinpath("scripts", filename).read_text()


def execute_pipeline(client: Any, build: Callable[[Any], None], *, operation: str) -> list[Any]:
    """Run the commands ``build(pipe)`` queues in one round trip.

    If the server does not know a script yet, every EVALSHA of it failed
    without running, so we load the scripts the pipeline used (those added
    with :meth:`Script.queue`) and send it once more.
    """
    with unavailable_as_ours(client, operation):
        for attempt in (1, 2):
            pipe = client.pipeline(transaction=False)
            build(pipe)
            try:
                return pipe.execute()
            except redis.exceptions.NoScriptError:
                if attempt == 2:
                    raise
                for script in getattr(pipe, "redcoord_scripts", ()):
                    client.script_load(script.source)
    raise AssertionError("unreachable")  # pragma: no cover
