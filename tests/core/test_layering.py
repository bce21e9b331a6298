"""The core never imports Django, nor the Django skin around it.

Core modules: plain Python on redis-py. The skin (conf, checks, decorators,
the Tasks backend, the admin, commands, job discovery) imports the core,
never the reverse; it hands the core its settings and hooks through
``django_redcoord.core.runtime``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..support.multiproc import run_python_without_settings

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


# -- the door: the Django layer takes the core only from django_redcoord.core ---------------------

MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _door_imports(source: str, module: str, is_package: bool) -> list[tuple[str, str]]:
    """(module, name) of every ``from`` import of the core in ``source``, at any depth; a plain
    ``import django_redcoord.core.x`` gives (module, "")."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(
                    package[: len(package) - node.level + 1]
                    + ([node.module] if node.module else [])
                )
            else:
                base = node.module or ""
            if base == "django_redcoord" and any(a.name == "core" for a in node.names):
                found.append(("django_redcoord.core", ""))
            elif base.startswith("django_redcoord.core"):
                found += [(base, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("django_redcoord.core")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a module path handed to import_module() or a lazy-export table
            if node.value.startswith("django_redcoord.core.") and " " not in node.value:
                found.append((node.value, "<string>"))
    return found


def _through_the_door(source: str, module: str, is_package: bool = False) -> list[str]:
    """What in ``source`` reaches past the door: the offending imports, as text."""
    import django_redcoord.core as door

    bad = []
    for base, name in _door_imports(source, module, is_package):
        if base != "django_redcoord.core" or (name and name not in door.__all__):
            bad.append(f"{base}:{name}" if name else base)
    return sorted(bad)


def test_the_django_layer_enters_the_core_only_through_its_door():
    """Every import of the core outside it is ``from django_redcoord.core import <a name of
    its __all__>``: no ``core.transport.*``, no family module, no private name."""
    offenders = {
        module: _through_the_door(path.read_text(), module, path.name == "__init__.py")
        for module, path in MODULES.items()
        if not module.startswith("django_redcoord.core")
    }
    assert {m: bad for m, bad in offenders.items() if bad} == {}


def test_the_door_check_catches_a_way_around_the_door():
    """Negative control: each of these reaches past the door, and the check says so."""
    module = "django_redcoord.dashboard"
    assert _through_the_door("from .core.transport.clients import get_client\n", module)
    assert _through_the_door("def f():\n    from .core.locks.lock import Lock\n", module)
    assert _through_the_door("from .core import _WHERE\n", module)
    assert _through_the_door("import django_redcoord.core.keys\n", module)
    assert _through_the_door('M = {"Lock": "django_redcoord.core.locks"}\n', module)
    assert _through_the_door("from ..core.keys import KeyBuilder\n", "django_redcoord.tasks.x")
    assert not _through_the_door("from .core import KeyBuilder, get_client\n", module)


def test_every_name_of_the_door_resolves_and_none_is_shadowed_by_a_submodule():
    """A door name equal to a submodule's (``observe``, ``runtime``, ``periodic``) would be
    replaced by that module once it is imported; every name must give what it says."""
    import django_redcoord.core as door

    submodules = {
        p.stem if p.name != "__init__.py" else p.parent.name
        for p in (PACKAGE / "core").glob("*")
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert not submodules & set(door.__all__)
    for name in door.__all__:
        assert getattr(door, name) is not None, name


# -- no import circle ------------------------------------------------------------------------------


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _nodes(tree: ast.AST):
    """Every node, leaving out ``if TYPE_CHECKING:`` blocks (they never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not _is_type_checking(c))


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module -> the modules of ``sources`` it imports, at module level or inside a function
    (a lazy import is still an edge: it runs), ``from pkg import submodule`` included."""

    def known(name: str) -> str | None:
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        package = module.split(".") if is_package else module.split(".")[:-1]
        edges: set[str | None] = set()
        for node in _nodes(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                base = (
                    ".".join(
                        package[: len(package) - node.level + 1]
                        + ([node.module] if node.module else [])
                    )
                    if node.level
                    else node.module or ""
                )
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    edges.add(full if full in sources else known(base))
            elif isinstance(node, ast.Import):
                edges.update(known(alias.name) for alias in node.names)
        # importing a.b.c first runs a/__init__ and a/b/__init__ (those not already running
        # around the importer): a circle through a package's __init__ is a circle too
        own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
        for target in [e for e in edges if e]:
            parts = target.split(".")
            edges.update(
                ancestor
                for ancestor in (".".join(parts[:i]) for i in range(1, len(parts)))
                if ancestor in sources and ancestor not in own
            )
        graph[module] = {e for e in edges if e and e != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {m: (p.read_text(), p.name == "__init__.py") for m, p in MODULES.items()}


def test_the_package_has_no_import_circle():
    """No module imports, however lazily, one that leads back to it: every layer can be read,
    tested and replaced from the bottom up."""
    graph = import_graph(_package_sources())
    assert len(graph) > 80
    assert circles(graph) == []


def test_the_circle_check_finds_a_circle():
    """Negative control: a lazy import back (as trouble.py once had from the dashboard that
    imports it) is a circle; a type-only import is not."""
    sources = {
        "pkg": ("", True),
        "pkg.dashboard": ("from .trouble import find\n", False),
        "pkg.trouble": ("def find():\n    from .dashboard import live\n", False),
        "pkg.hold": ("from .watchdog import Renewer\n", False),
        "pkg.watchdog": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .hold import Hold\n",
            False,
        ),
    }
    assert circles(import_graph(sources)) == [["pkg.dashboard", "pkg.trouble"]]
    sources["pkg.watchdog"] = ("from . import hold\n", False)
    assert sorted(circles(import_graph(sources))) == [
        ["pkg.dashboard", "pkg.trouble"],
        ["pkg.hold", "pkg.watchdog"],
    ]
    # through a package's __init__: importing pkg.views.holds runs pkg/views/__init__, which
    # imports pkg.limits, which is still being imported (the rate_limit decorator's near miss)
    circular = {
        "pkg": ("", True),
        "pkg.views": ("from ..limits import rate_limit\n", True),
        "pkg.views.holds": ("", False),
        "pkg.limits": ("from .views.holds import find\n", False),
    }
    assert circles(import_graph(circular)) == [["pkg.limits", "pkg.views"]]
    circular["pkg.views"] = ("", True)  # the package imports nothing: no circle
    assert circles(import_graph(circular)) == []


def test_the_options_and_the_runtime_import_no_primitive():
    """Everything below the primitives reaches only leaves: the primitives register with the
    runtime (``when_reconfigured``), the runtime imports none of them."""
    graph = import_graph(_package_sources())
    leaves = {
        "django_redcoord.core.exceptions",
        "django_redcoord.core.keys",
        "django_redcoord.core.values",
        "django_redcoord.core.rates",
        "django_redcoord.core.options",
        "django_redcoord.core.runtime",
    }
    reached: set[str] = set()
    todo = ["django_redcoord.core.options", "django_redcoord.core.runtime"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph[module])
    assert reached <= leaves, sorted(reached - leaves)
