"""Lua scripts: ``core/lua/<family>/<operation>.lua``, run by EVALSHA.

A script is read from disk on first use (never at import), after the shared
helpers (``common/time.lua``, ``common/index.lua``) and its family's helpers, and runs by
EVALSHA; a server that does not know it yet (first use, restart, failover)
answers NOSCRIPT and we fall back to EVAL once, which also caches it. Each
file starts with a header naming every key and argument it takes.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from typing import Any

import redis

from .commands import acommand, command

#: The helpers every script starts with (only those its body calls are kept, see
#: :func:`assemble`): server time and ever-growing counters, the admin's name indexes.
_SHARED = ("common/time", "common/index")


class Script:
    """One Lua script, ``core/lua/<family>/<operation>.lua``, run against a client.

    ``Script("locks/acquire", includes=("locks/common",))``: the source is the
    shared helpers (``common/time.lua``, ``common/index.lua``), then each of ``includes``
    (the family's helpers), then the script itself, read on first use.
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
            source = assemble([_read(f) for f in (*_SHARED, *self.includes)], _read(self.name))
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


def assemble(helpers: list[str], body: str) -> str:
    """A script's source: ``body`` after the helper functions of ``helpers`` that it calls.

    Each run of a script defines every helper function above its body anew (a Lua closure
    each), and every script cached on the server keeps its own copy of them: a helper that a
    script never calls costs it that closure on every call, the garbage collector its sweep,
    and the server's Lua memory its copy. So only the helpers the body calls, directly or
    through other helpers, are kept (in their order). A helper file's other top-level
    statements (constants, a guard that runs) are always kept, and what they name counts as
    called. Names are matched as words of the code (comments left out, strings kept).
    """
    blocks = [block for text in helpers for block in _blocks(text)]
    needed = _names(body)
    for name, text in blocks:
        if name is None:
            needed.update(_names(text))
    kept: set[int] = set()
    grew = True
    while grew:  # the helpers the needed names call, until no more are found
        grew = False
        for i, (name, text) in enumerate(blocks):
            if name is not None and i not in kept and name in needed:
                kept.add(i)
                needed.update(_names(text))
                grew = True
    parts = [text for i, (name, text) in enumerate(blocks) if name is None or i in kept]
    return "\n".join([*parts, body])


#: A Lua name, as a word.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A Lua string in quotes, or a comment (to its line's end).
_STRING_OR_COMMENT = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|--[^\n]*")


def _names(text: str) -> set[str]:
    """The words of Lua ``text``'s code: its comments left out (strings kept: a name in one
    counts too, which only keeps more)."""
    return set(
        _WORD.findall(_STRING_OR_COMMENT.sub(lambda m: "" if m[0][0] == "-" else m[0], text))
    )


#: The first line of a top-level helper function (a line at column 0).
_FUNCTION = re.compile(r"local function ([A-Za-z_][A-Za-z0-9_]*)\s*\(")
#: Lines at column 0 that go on the block above (its end, a comment, a blank line).
_CONTINUES = ("end", "}", ")", "--", "else", "until")


def _blocks(text: str) -> list[tuple[str | None, str]]:
    """A helper file's top-level blocks: (the helper function it defines, or None for any
    other statement; its text). A block starts at a line at column 0 that is not an ``end``,
    a comment or a blank line (the files keep function bodies indented)."""
    blocks: list[tuple[str | None, list[str]]] = []
    for line in text.split("\n"):
        starts = line[:1] not in ("", " ", "\t") and not line.startswith(_CONTINUES)
        if starts or not blocks:
            match = _FUNCTION.match(line) if starts else None
            blocks.append((match.group(1) if match else None, [line]))
        else:
            blocks[-1][1].append(line)
    return [(name, "\n".join(lines)) for name, lines in blocks]


def _read(name: str) -> str:
    return (
        resources.files("django_redcoord.core").joinpath("lua").joinpath(f"{name}.lua").read_text()
    )
