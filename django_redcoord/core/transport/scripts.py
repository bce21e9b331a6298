"""Lua scripts: ``core/lua/<family>/<operation>.lua``, run by EVALSHA.

A script is read from disk on first use (never at import), after the shared
time helper (``common/time.lua``) and its family's helpers, and runs by
EVALSHA; a server that does not know it yet (first use, restart, failover)
answers NOSCRIPT and we fall back to EVAL once, which also caches it. Each
file starts with a header naming every key and argument it takes.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import Any

import redis

from .commands import acommand, command

#: The helper every script starts with: server time and ever-growing counters.
_SHARED = "common/time"


class Script:
    """One Lua script, ``core/lua/<family>/<operation>.lua``, run against a client.

    ``Script("locks/acquire", includes=("locks/common",))``: the source is the
    shared time helper (``common/time.lua``), then each of ``includes`` (the
    family's helpers), then the script itself, read on first use.
    """

    __slots__ = ("name", "includes", "flags", "_loaded")

    def __init__(self, name: str, *, includes: tuple[str, ...] = (), flags: str = "") -> None:
        self.name = name
        self.includes = includes
        # : Redis 7 script flags (``"no-writes,allow-cross-slot-keys"``): the source starts with
        # ``#!lua flags=...``
        self.flags = flags
        self._loaded: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"Script({self.name!r})"

    def _load(self) -> tuple[str, str]:
        if self._loaded is None:
            source = "\n".join(_read(f) for f in (_SHARED, *self.includes, self.name))
            if self.flags:
                source = f"#!lua flags={self.flags}\n{source}"
            self._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
        return self._loaded

    @property
    def source(self) -> str:
        return self._load()[0]

    @property
    def sha(self) -> str:
        """The SHA1 digest EVALSHA names the script by (for a batch of commands)."""
        return self._load()[1]

    def queue(self, pipe: Any, keys: list[str], args: list[Any]) -> None:
        """Add a run of this script to a pipeline (see :func:`execute_pipeline`)."""
        pipe.execute_command(
            "EVALSHA", self._load()[1], len(keys), *keys, *args
        )  # a Cluster pipeline has no .evalsha()
        used = getattr(pipe, "redcoord_scripts", None)
        if used is None:
            used = pipe.redcoord_scripts = set()
        used.add(self)

    def __call__(self, client: Any, keys: list[str], args: list[Any], *, operation: str) -> Any:
        """Run the script: one round trip (two only after NOSCRIPT)."""
        source, sha = self._loaded or self._load()
        try:
            return command(client, "EVALSHA", sha, len(keys), *keys, *args, operation=operation)
        except redis.exceptions.NoScriptError:
            return command(client, "EVAL", source, len(keys), *keys, *args, operation=operation)

    async def arun(self, client: Any, keys: list[str], args: list[Any], *, operation: str) -> Any:
        """Run the script on a ``redis.asyncio`` client (see ``__call__``)."""
        source, sha = self._loaded or self._load()
        try:
            return await acommand(
                client, "EVALSHA", sha, len(keys), *keys, *args, operation=operation
            )
        except redis.exceptions.NoScriptError:
            return await acommand(
                client, "EVAL", source, len(keys), *keys, *args, operation=operation
            )


def _read(name: str) -> str:
    return (
        resources.files("django_redcoord.core").joinpath("lua").joinpath(f"{name}.lua").read_text()
    )
