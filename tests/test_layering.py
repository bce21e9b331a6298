"""The core never imports Django, nor the Django skin around it.

Core modules: plain Python on redis-py. The skin (conf, checks, decorators,
the Tasks backend, the admin, commands, job discovery) imports the core,
never the reverse; it hands the core its settings and hooks through
``django_redcoord.runtime``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .multiproc import run_python_without_settings

PACKAGE = Path(__file__).resolve().parent.parent / "django_redcoord"
CORE = (
    "connection", "embedded", "exceptions", "keys", "leader", "leadership", "locks", "options",
    "queues", "runtime", "schedule", "scheduler", "scripting", "steps", "worker",
)  # fmt: skip
SKIN = ("conf", "checks", "decorators", "tasks", "admin", "dashboard", "apps", "models", "discovery", "management")


def _imports(module: str) -> set[str]:
    """Every module ``module`` imports, at any depth of its code (relative ones made absolute)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = "django_redcoord" if node.module is None else f"django_redcoord.{node.module}"
                found.update(f"{base}.{alias.name}" if node.module is None else base for alias in node.names)
            else:
                found.add(node.module or "")
    return found


def _offending(module: str) -> list[str]:
    bad = []
    for name in _imports(module):
        top = name.split(".")[0]
        if top in ("django", "django_redis", "asgiref"):
            bad.append(name)
        elif name.startswith("django_redcoord.") and name.split(".")[1] in SKIN:
            bad.append(name)
    return sorted(bad)


def test_core_modules_import_neither_django_nor_the_skin():
    assert {module: _offending(module) for module in CORE if _offending(module)} == {}


def test_the_layering_check_catches_an_offender():
    """Negative control: the skin imports Django and the core, as it should; the check sees it."""
    assert _offending("decorators")  # django.http, asgiref
    assert _offending("apps")


def test_the_core_runs_without_django_in_the_process(redis_url):
    code = f"""
import asyncio, sys
import redis, redis.asyncio
from django_redcoord.locks import Lock
from django_redcoord.queues import Queue
from django_redcoord.leader import LeaderElection
from django_redcoord.runtime import runtime

client = redis.Redis.from_url({redis_url!r})
with Lock("core-only", client=client, wait=0) as lock:
    assert lock.token > 0
mid = Queue("core-only", client=client).push({{"n": 1}})
messages, _ = Queue("core-only", client=client).consumer("c").claim(1)
assert [m.id for m in messages] == [mid]
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
