"""A script's source keeps only the helper functions its body calls (transport/scripts.assemble).

Each helper a script carries costs it a closure on every call and the server's Lua heap a copy,
which its garbage collector walks (with every script of the package cached, one lock pair ran
about 46 against 26 µs of server time before and after). Dropping a helper a script does call
would fail on the server only on the path that calls it, so the whole package is checked here:
every helper name a script's code names is defined in its source.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import re

import pytest

import django_redcoord.core as core
from django_redcoord.core.transport.scripts import _SHARED, Script, _names, _read, assemble

HELPERS = """-- a header that names unused_helper and called

local LIMIT = limit_of(7) -- a constant whose value a helper makes

local function limit_of(n)
  return n * 2
end

local function leaf(x)
  return x + 1
end

local function called(x)
  -- (this comment names unused_helper: comments do not count)
  return leaf(x) + LIMIT
end

local function unused_helper()
  return leaf(0)
end

local function in_a_string()
  return 1
end
"""


def _defined(source: str) -> list[str]:
    return re.findall(r"^local function (\w+)", source, re.M)


def test_only_the_helpers_the_body_calls_are_kept_in_their_order() -> None:
    source = assemble([HELPERS], "return called(1)")
    assert _defined(source) == ["limit_of", "leaf", "called"]
    assert source.endswith("return called(1)")
    assert "local LIMIT = limit_of(7)" in source  # a statement is always kept


def test_a_name_in_a_string_keeps_its_helper_and_one_in_a_comment_does_not() -> None:
    source = assemble([HELPERS], "-- in_a_string\nreturn redis.call('GET', 'in_a_string')")
    assert "in_a_string" in _defined(source)
    assert "unused_helper" not in _defined(assemble([HELPERS], "-- unused_helper()\nreturn 1"))
    assert _names("x = 'a--b' .. f(y) -- g(z)") == {"x", "a", "b", "f", "y"}


def _package_scripts() -> list[Script]:
    for module in pkgutil.walk_packages(core.__path__, "django_redcoord.core."):
        importlib.import_module(module.name)
    scripts = {id(s): s for s in gc.get_objects() if isinstance(s, Script)}
    return sorted(scripts.values(), key=lambda s: (s.name, s.includes))


SCRIPTS = _package_scripts()


def test_the_package_has_scripts_with_helpers() -> None:
    assert len(SCRIPTS) > 40
    assert sum(bool(s.includes) for s in SCRIPTS) > 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: f"{s.name}+{len(s.includes)}")
def test_every_helper_a_script_names_is_in_its_source(script: Script) -> None:
    helpers = {
        name
        for part in (*_SHARED, *script.includes)
        for name in re.findall(r"^local function (\w+)", _read(part), re.M)
    }
    source = script.source
    defined = set(_defined(source))
    missing = (_names(source) & helpers) - defined
    assert not missing, f"{script.name} names helpers its source lacks: {sorted(missing)}"


def test_the_check_above_catches_a_dropped_helper() -> None:
    """Negative control: a source that lost a helper its body calls is caught by the same test."""
    whole = assemble([HELPERS], "return called(1)")
    broken = whole.replace("local function leaf(x)\n  return x + 1\nend\n", "")
    helpers = set(_defined(HELPERS))
    assert (_names(broken) & helpers) - set(_defined(broken)) == {"leaf"}
