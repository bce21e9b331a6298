"""The core never imports Django, nor the Django skin around it.

Core modules: plain Python on redis-py. The skin (conf, checks, decorators,
the Tasks backend, the admin, commands, job discovery) imports the core,
never the reverse; it hands the core its settings and hooks through
``django_redcoord.core.runtime``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..multiproc import run_python_without_settings

PACKAGE = Path(__file__).resolve().parents[2] / "django_redcoord"
CORE = sorted((PACKAGE / "core").rglob("*.py"))
SKIN = sorted(p for p in PACKAGE.rglob("*.py") if "core" not in p.relative_to(PACKAGE).parts)


def _module(path: Path) -> str:
    parts = ("django_redcoord", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (relative ones made absolute)."""
    tree = ast.parse(path.read_text())
    package = _module(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(
                    package[: len(package) - node.level + 1]
                    + ([node.module] if node.module else [])
                )
                if node.module is None:  # from .. import module
                    found.update(f"{base}.{alias.name}" for alias in node.names)
                else:
                    found.add(base)
            else:
                found.add(node.module or "")
    return found


def _offending(path: Path) -> list[str]:
    bad = []
    for name in _imports(path):
        top = name.split(".")[0]
        if top in ("django", "django_redis", "asgiref"):
            bad.append(name)
        elif name.startswith("django_redcoord") and not name.startswith("django_redcoord.core"):
            bad.append(name)
    return sorted(bad)


def test_core_modules_import_neither_django_nor_the_skin():
    assert len(CORE) > 20 and len(SKIN) > 10
    assert {_module(p): _offending(p) for p in CORE if _offending(p)} == {}


def test_the_layering_check_catches_an_offender():
    """Negative control: the skin imports Django and the core, as it should; the check sees it."""
    assert _offending(PACKAGE / "decorators" / "locks.py")  # django.http, asgiref
    assert _offending(PACKAGE / "apps.py")
    assert _offending(PACKAGE / "management" / "commands" / "run_leader.py")  # from ... import conf


def test_the_core_runs_without_django_in_the_process(redis_url):
    code = f"""
import asyncio, sys
import redis, redis.asyncio
from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.leader.election import LeaderElection
from django_redcoord.core.runtime import runtime

client = redis.Redis.from_url({redis_url!r})
with Lock("core-only", client=client, wait=0) as lock:
    assert lock.token > 0
mid = Queue("core-only", client=client).push({{"n": 1}})
messages, _ = Queue("core-only", client=client).consumer("c").claim(1)
assert [m.id for m in messages] == [mid]
from django_redcoord.core.semaphores import Semaphore
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.latches import CountDownLatch
from django_redcoord.core.signals import Event
with Semaphore("core-only", 2, client=client, wait=0) as permit:
    assert permit.token > 0
with ReadWriteLock("core-only", client=client, wait=0).read():
    pass
latch = CountDownLatch("core-only", 1, client=client)
latch.count_down()
assert latch.wait(0)
Event("core-only", client=client).set()
election = LeaderElection("core-only", identity="me", client=client)
assert election.campaign() and election.current().identity == "me"
election.resign()

async def main():
    aclient = redis.asyncio.Redis.from_url({redis_url!r})
    async with Lock("core-only-async", client=aclient, wait=0) as lock:
        assert lock.token > 0
    await aclient.aclose()
asyncio.run(main())

runtime.configure({{"URL": {redis_url!r}, "KEY_PREFIX": "plain", "LOCK_TTL": 7}})
lock = Lock("configured")  # no client: the runtime's
assert lock.ttl == 7 and lock.keys.lock.startswith("plain:")
with lock:
    pass
loaded = sorted(m for m in sys.modules if m == "django" or m.startswith(("django.", "asgiref")))
print("DJANGO:", loaded)
"""
    result = run_python_without_settings(code)
    assert result.returncode == 0, result.stderr
    assert "DJANGO: []" in result.stdout, result.stdout
