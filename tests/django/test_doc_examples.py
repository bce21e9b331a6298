"""Every Python block of the README and docs/ runs, as a user would run it.

Each ```python block of README.md and docs/**/*.md runs in its own process
against a throwaway Redis server (``REDIS_URL``), so an example that
contradicts the code fails here. The HTML comment on the line before a block
says how:

- no comment, or ``<!-- example: django -->``: after ``django.setup()`` with
  the settings of ``tests/support/doc_settings.py`` (the same server);
- ``<!-- example: standalone -->``: as a plain script (no Django settings);
- ``<!-- example: fragment -->``: a piece of a file that cannot run alone
  (a model, settings naming servers that do not exist here): only compiled.

A block may use ``await`` at the top level (as in an asyncio REPL): it then
runs under ``asyncio.run``. The names the docs use for *your* code
(``write_somewhere``, ``send_mail``, ...) are stand-ins that do nothing.

Besides running: every ``REDCOORD`` dict a block spells out names only keys
of ``core/options.py``'s DEFAULTS, every ``TASKS`` backend of ours only its
known OPTIONS, and every ``manage.py`` command and ``redcoord`` subcommand a
shell block shows exists.
"""

from __future__ import annotations

import ast
import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from ..support.redis_servers import RedisServer

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
BLOCK = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)\n(?P=indent)```[ ]*$", re.S | re.M
)
MARKER = re.compile(r"<!-- example: (\w+) -->\s*$")
KINDS = ("django", "standalone", "fragment")

#: Stand-ins for the reader's own code, which the examples call by these names.
PLACEHOLDERS = """\
def _your_code(*args, **kwargs):
    return None


async def _your_async_code(*args, **kwargs):
    return None


write_somewhere = import_prices = render_prices = import_part = run_ocr = _your_code
send_mail = make_thumbnail = pay = build_report = _your_code
write_somewhere_async = _your_async_code
"""

#: One per pytest worker and kind: imports (and ``django.setup()``) once, then forks a child
#: per example (a fresh process state, a flushed server) and answers its exit status.
ZYGOTE = """\
import ast, asyncio, atexit, json, os, sys, threading, traceback, types
if sys.argv[1] == "django":
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.support.doc_settings"
    import django
    django.setup()
import django_redcoord, redis  # noqa: the imports every example makes
def run(request):
    out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.chdir(request["cwd"])
    module = types.ModuleType("__main__")  # a script's own: tasks are found by their path
    sys.modules["__main__"] = module
    namespace = module.__dict__
    exec(sys.argv[2], namespace)
    with open(request["script"]) as f:
        code = compile(f.read(), request["id"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    threading._shutdown()  # as the interpreter ends: executors stop, other threads are joined
    atexit._run_exitfuncs()
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            run(request)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class Zygote:
    """A process that has imported what the examples need and forks one child per example."""

    def __init__(self, kind: str, url: str) -> None:
        env = {**os.environ, "REDIS_URL": url, "PYTHONPATH": str(ROOT)}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE, kind, PLACEHOLDERS],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._pending = b""  # read from the pipe, not answered yet

    def _answer(self, timeout: float) -> dict:
        # Lines are split here, from raw reads: a buffered readline() could take both answers of a
        # quick example (its pid and its status) at once, and select() would then wait for the
        # second in vain (it sat in the reader's buffer: a 100 s "hang" of a two-line example).
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no answer within {timeout} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the example runner exited ({self.process.wait()})")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, script: Path, name: str, timeout: float = 100.0) -> tuple[int, str]:
        out = script.with_suffix(".out")
        request = {"script": str(script), "out": str(out), "cwd": str(script.parent), "id": name}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        pid = self._answer(120.0)["pid"]  # the first also waits for the imports
        try:
            status = self._answer(timeout)["status"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            self._answer(10.0)
            status = -signal.SIGKILL
        return status, out.read_text() if out.exists() else ""

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def examples_runner():
    """This worker's server and its runners (one per kind), started on first use."""
    server = RedisServer().start()
    zygotes: dict[str, Zygote] = {}

    def run(kind: str, script: Path, name: str) -> tuple[int, str]:
        redis.Redis.from_url(server.url).flushall()
        if kind not in zygotes:
            zygotes[kind] = Zygote(kind, server.url)
        return zygotes[kind].run(script, name)

    yield run
    for zygote in zygotes.values():
        zygote.close()
    server.cleanup()


def blocks(lang: str) -> list[tuple[str, int, str, str]]:
    """(page, line, kind, code) of every ``lang`` block; kind from the marker before it."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in BLOCK.finditer(text):
            if match["lang"] != lang:
                continue
            before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
            marker = MARKER.search(before)
            kind = marker.group(1) if marker else "django"
            code = "\n".join(line[len(match["indent"]) :] for line in match["code"].split("\n"))
            line = text.count("\n", 0, match.start()) + 1
            found.append((str(page.relative_to(ROOT)), line, kind, code))
    return found


PYTHON = blocks("python")


def params(kinds: tuple[str, ...]) -> list:
    return [
        pytest.param(kind, code, id=f"{page}:{line}")
        for page, line, kind, code in PYTHON
        if kind in kinds
    ]


def test_the_blocks_are_found_and_marked_well():
    """A pattern that stopped matching would leave every example unrun; a typo in a marker, one."""
    assert len(PYTHON) >= 30
    bad = [f"{page}:{line}: {kind!r}" for page, line, kind, _ in PYTHON if kind not in KINDS]
    assert not bad, f"unknown example kinds (allowed: {KINDS}): {bad}"
    fragments = [f"{page}:{line}" for page, line, kind, _ in PYTHON if kind == "fragment"]
    assert len(fragments) <= 6, f"too many blocks only compiled, make them run: {fragments}"


@pytest.mark.parametrize(("kind", "code"), params(("django", "standalone")))
def test_example_runs(kind, code, tmp_path, request, examples_runner):
    script = tmp_path / "example.py"
    script.write_text(code + "\n")
    status, output = examples_runner(kind, script, request.node.callspec.id)
    assert status == 0, f"the example failed (exit status {status}):\n{output}"


def test_a_failing_example_fails(tmp_path, examples_runner):
    """The negative control: an example that raises, or calls the library wrongly, is reported."""
    script = tmp_path / "bad.py"
    script.write_text("from django_redcoord import Lock\nLock('no spaces allowed')\n")
    status, output = examples_runner("django", script, "bad")
    assert status == 1 and "ValueError" in output, output


@pytest.mark.parametrize(("kind", "code"), params(KINDS))
def test_example_compiles(kind, code):
    """Fragments too: valid Python (top-level ``await`` allowed, as when they run)."""
    compile(code, "<example>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _literal_keys(node: ast.expr) -> list[str]:
    return [
        k.value
        for k in getattr(node, "keys", [])
        if isinstance(k, ast.Constant) and isinstance(k.value, str)
    ]


def _settings_problems(code: str) -> list[str]:
    """Keys of REDCOORD / TASKS OPTIONS dicts spelled out in ``code`` that do not exist."""
    from django_redcoord.core.options import DEFAULTS
    from django_redcoord.tasks.backend import OPTION_DEFAULTS as BACKEND_OPTIONS

    problems = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if "REDCOORD" in names:
                problems += [
                    f"REDCOORD[{k!r}]" for k in _literal_keys(node.value) if k not in DEFAULTS
                ]
            if "TASKS" in names:
                for backend in node.value.values:
                    if not isinstance(backend, ast.Dict):
                        continue
                    for key, value in zip(backend.keys, backend.values, strict=True):
                        if (
                            isinstance(key, ast.Constant)
                            and key.value == "OPTIONS"
                            and isinstance(value, ast.Dict)
                        ):
                            problems += [
                                f"OPTIONS[{k!r}]"
                                for k in _literal_keys(value)
                                if k not in BACKEND_OPTIONS
                            ]
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "REDCOORD"
        ):
            key = node.slice
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and key.value not in DEFAULTS
            ):
                problems.append(f"REDCOORD[{key.value!r}]")
    return problems


@pytest.mark.parametrize(("kind", "code"), params(KINDS))
def test_example_settings_exist(kind, code):
    assert not _settings_problems(code), (
        f"settings the code does not know: {_settings_problems(code)}"
    )


def test_the_settings_check_can_fail():
    """The negative control: a misspelt key is caught."""
    assert _settings_problems('REDCOORD = {"URL": "redis://x", "LOCK_TTLS": 3}') == [
        "REDCOORD['LOCK_TTLS']"
    ]
    assert _settings_problems('TASKS = {"d": {"OPTIONS": {"RETRIES": 3}}}') == [
        "OPTIONS['RETRIES']"
    ]


def _shell_commands() -> list[tuple[str, str, list[str]]]:
    """(where, command, words) of each ``manage.py`` or ``django-admin`` line of a shell block."""
    found = []
    for lang in ("sh", "bash", "shell", "console"):
        for page, line, _kind, code in blocks(lang):
            for offset, text in enumerate(code.split("\n")):
                text = text.split(" #", 1)[0].strip().removeprefix("$ ")
                if "manage.py" not in text:
                    continue
                try:
                    words = shlex.split(text)
                except ValueError:
                    words = text.split()
                words = words[words.index(next(w for w in words if w.endswith("manage.py"))) + 1 :]
                found.append((f"{page}:{line + offset + 1}", text, words))
    return found


def _unknown_commands(shown: list[tuple[str, str, list[str]]]) -> list[str]:
    """The lines of ``shown`` naming a management command or ``redcoord`` subcommand that does
    not exist."""
    from django.core.management import get_commands

    from django_redcoord.management.commands.redcoord import Command

    commands = set(get_commands())
    parser = Command().create_parser("manage.py", "redcoord")
    subactions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    subcommands = set(subactions[0].choices)
    bad = []
    for where, text, words in shown:
        if not words or words[0] not in commands:
            bad.append(f"{where}: {text!r}: no command {words[:1]}")
        elif words[0] == "redcoord":
            rest = [w for w in words[1:] if not w.startswith("-")]
            for sub in rest[0].split("|") if rest else ["(none)"]:
                if sub not in subcommands:
                    bad.append(
                        f"{where}: {text!r}: no subcommand {sub!r} (known: {sorted(subcommands)})"
                    )
    return bad


def test_every_shell_command_the_docs_show_exists():
    """Each ``manage.py <command>`` exists, and each ``redcoord <subcommand>`` (``a|b|c`` is
    three)."""
    shown = _shell_commands()
    assert len(shown) >= 20
    bad = _unknown_commands(shown)
    assert not bad, "\n".join(bad)


def test_the_command_check_can_fail():
    """The negative control: a command and a subcommand that do not exist are named."""
    shown = [
        ("x", "manage.py run_workers", ["run_workers"]),
        ("y", "manage.py redcoord stats", ["redcoord", "stats"]),
    ]
    assert len(_unknown_commands(shown)) == 2
    assert (
        _unknown_commands(
            [("z", "manage.py redcoord embedded start|stop", ["redcoord", "embedded"])]
        )
        == []
    )
