"""``pytest -p tests.support.strict_keys``: every script refuses a key it did not declare in KEYS.

What Dragonfly does by default, on any Redis: each ``Script``'s source gets
:func:`tests.support.lua_keys.strict_prelude` first, so a ``redis.call``/``redis.pcall``
whose key argument is not one of KEYS raises ``REDCOORD-UNDECLARED-KEY ...``
(the operation fails with it). The scripts listed in
``tests.support.lua_keys.KNOWN_UNDECLARED`` run unchanged. The run also fails at its
end if any such refusal was seen, however the code handled the error.
`make test-valkey` runs its suites this way.
"""

from __future__ import annotations

import threading

import pytest

from . import lua_keys

_lock = threading.Lock()
REFUSED: list[str] = []


def _note(exc: BaseException) -> None:
    if "REDCOORD-UNDECLARED-KEY" in str(exc):
        with _lock:
            REFUSED.append(str(exc).split("REDCOORD-UNDECLARED-KEY", 1)[1][:300])


def pytest_configure(config):
    from django_redcoord.core.transport.scripts import Script

    if getattr(Script, "_strict_keys", False):
        return
    load, call, arun = Script._load, Script.__call__, Script.arun

    def _load(self):
        if self._loaded is None:
            source, _ = load(self)
            if self.name not in lua_keys.KNOWN_UNDECLARED:
                import hashlib

                source = lua_keys.with_prelude(source)
                self._loaded = (source, hashlib.sha1(source.encode()).hexdigest())
        return self._loaded

    def __call__(self, *args, **kwargs):
        try:
            return call(self, *args, **kwargs)
        except Exception as exc:
            _note(exc)
            raise

    async def _arun(self, *args, **kwargs):
        try:
            return await arun(self, *args, **kwargs)
        except Exception as exc:
            _note(exc)
            raise

    Script._load, Script.__call__, Script.arun = _load, __call__, _arun
    Script._strict_keys = True


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    REFUSED.extend(getattr(node, "workeroutput", {}).get("redcoord_undeclared", []))


def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["redcoord_undeclared"] = list(REFUSED)
        return
    if REFUSED and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workeroutput"):
        return
    for refusal in sorted(set(REFUSED)):
        terminalreporter.write_line(
            f"FAILED (strict keys): a script touched an undeclared key:{refusal}", red=True
        )
