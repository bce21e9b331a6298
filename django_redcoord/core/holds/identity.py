"""Who holds a lock: owner tokens per object, thread or asyncio task, and fork handling.

An owner token is what Redis compares on release and extend. A plain Lock
takes a fresh random token per hold; a reentrant one shares the token of its
thread (or asyncio task) in this process, so every reentrant Lock of a name
in one thread nests. A forked child is another owner: the process nonce and
a fork generation counter change in the child, so an inherited Lock object
reads as not held there.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import secrets
import socket
import threading
import weakref
from typing import Any

_thread_ids = threading.local()
_hostname: str | None = None
#: What this process made once, by (name, pid): a child has its own (see _per_process).
_made: dict[tuple[str, int], Any] = {}


def _per_process(name: str, make: Any) -> Any:
    """``make()``'s value, made once per process and shared by all its threads: the first thread
    to store one wins (``dict.setdefault`` is atomic), so two threads that both find none still
    return the same value (a check-then-assign let each keep its own: two waiters of one
    process then passed two different process ids)."""
    key = (name, os.getpid())
    value = _made.get(key)
    if value is None:
        value = _made.setdefault(key, make())
    return value


def _nonce() -> str:
    """A random id for this process, renewed after fork (a child is another owner)."""
    return _per_process("nonce", lambda: secrets.token_urlsafe(6))


def thread_owner_token() -> str:
    """Token shared by every reentrant Lock of this thread in this process."""
    nonce = _nonce()
    mine = getattr(_thread_ids, "value", None)
    if mine is None or mine[0] != nonce:
        mine = (nonce, f"r:{nonce}:{secrets.token_urlsafe(6)}")
        _thread_ids.value = mine
    return mine[1]


_task_ids: weakref.WeakKeyDictionary[Any, tuple[str, str]] = weakref.WeakKeyDictionary()


def task_owner_token() -> str:
    """Token shared by every reentrant Lock acquired by this asyncio task."""
    task = asyncio.current_task()
    nonce = _nonce()
    mine = _task_ids.get(task)
    if mine is None or mine[0] != nonce:
        mine = (nonce, f"r:{nonce}:{secrets.token_urlsafe(6)}")
        _task_ids[task] = mine
    return mine[1]


def _key() -> bytes:
    """A secret of this process, renewed after fork (see :func:`hold_token`)."""
    return _per_process("key", lambda: secrets.token_bytes(16))


def _tag(random_part: bytes) -> bytes:
    return hashlib.blake2b(random_part, key=_key(), digest_size=3).digest()


def hold_token() -> str:
    """A fresh owner token for one hold: 12 characters, as ``secrets.token_urlsafe(9)``, of
    which 48 random bits and a 24-bit tag of them keyed by this process's secret, so that
    :func:`made_here` recognises it (without keeping a record of every token made)."""
    random_part = secrets.token_bytes(6)
    return base64.urlsafe_b64encode(random_part + _tag(random_part)).decode()


def made_here(token: str) -> bool:
    """Whether owner token ``token`` was made by this process (a reentrant token: by its
    nonce; a fresh one: by its tag; a token of another process passes with odds of 2**-24)."""
    if token.startswith("r:"):
        return token.startswith(f"r:{_nonce()}:")
    if len(token) != 12:
        return False
    try:
        raw = base64.urlsafe_b64decode(token)
    except ValueError:
        return False
    return secrets.compare_digest(raw[6:], _tag(raw[:6]))


def process_nonce() -> str:
    """This process's id in the queue entries of its waiters (renewed after fork)."""
    return _nonce()


def host() -> str:
    """This machine's name, for the admin (read once)."""
    global _hostname
    if _hostname is None:
        _hostname = socket.gethostname()
    return _hostname


# --- fork handling ------------------------------------------------------------------

_fork_generation = 0
_fork_hook = False


def _after_fork_in_child() -> None:
    global _fork_generation
    _fork_generation += 1
    _made.clear()  # (an ancestor's pid, reused by a descendant, must not bring its values back)


def watch_forks() -> None:
    """Count forks (registered on first use, never at import): a forked child
    holds none of its parent's locks, whatever the Lock objects it inherited say."""
    global _fork_hook
    if not _fork_hook:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook = True


def fork_generation() -> int:
    """How many times this process's ancestry forked since it first used a lock (changes in a
    child)."""
    return _fork_generation
