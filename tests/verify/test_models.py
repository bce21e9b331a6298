"""The SPIN models beside our Lua scripts still stand for them, and parse.

* every ``//! models:`` hash matches the script's current bytes (a changed script needs its
  model reviewed again);
* every model states safety (``//! check: safety``) and a liveness property (``//! check: ltl``)
  and has a negative control (a mutant the checker must reject);
* ``spin -a`` accepts every model and every mutant of it.

The exhaustive runs themselves (``python -m tests.verify.run``, tens of seconds of gcc and pan)
are ``make verify``, which CI runs after ``make test``. Without ``spin`` on PATH these tests skip,
except where ``REDCOORD_REQUIRE_SPIN=1`` (CI): there they fail.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.verify import run

MODELS = sorted(run.LUA_ROOT.rglob("*.pml"))


def _name(path):
    return str(path.relative_to(run.LUA_ROOT))


@pytest.fixture
def spin():
    if shutil.which("spin") is None:
        why = "spin is not on PATH (Debian: apt-get install spin)"
        if os.environ.get("REDCOORD_REQUIRE_SPIN") == "1":
            pytest.fail(why)
        pytest.skip(why)


def test_there_are_models():
    assert MODELS, f"no *.pml models under {run.LUA_ROOT}"


@pytest.mark.parametrize("path", MODELS, ids=_name)
def test_model_headers_match_the_scripts_they_model(path):
    model = run.parse(path)
    assert model.modelled, f"{model.name}: no '//! models: <lua path> sha256=<16 hex>' line"
    for modelled in model.modelled:
        current = modelled.current_sha()
        assert current is not None, f"{model.name} models {modelled.script}, which does not exist"
        assert current == modelled.sha, (
            f"{modelled.script} changed since {model.name} was reviewed: check the model still "
            f"stands for it, then update the sha256 in its header (now sha256={current})"
        )


@pytest.mark.parametrize("path", MODELS, ids=_name)
def test_model_checks_something_and_has_a_negative_control(path):
    model = run.parse(path)
    assert any(c.prop == "safety" for c in model.checks), f"{model.name}: no '//! check: safety'"
    assert any(c.prop != "safety" for c in model.checks), (
        f"{model.name}: no liveness property ('//! check: ltl <name>' and its 'ltl <name> {{...}}')"
    )
    assert model.mutants, (
        f"{model.name}: no '//! mutant: <MACRO> expect: <property>' negative control"
    )
    text = path.read_text()
    properties = {c.prop for c in model.checks}
    for check in model.checks + model.mutants:
        if check.prop != "safety":
            assert f"ltl {check.prop}" in text, (
                f"{model.name}: no 'ltl {check.prop} {{...}}' in the file"
            )
        if check.mutant:
            assert f"#ifdef {check.mutant}" in text or f"#ifndef {check.mutant}" in text, (
                f"{model.name}: mutant {check.mutant} changes nothing (no #ifdef {check.mutant})"
            )
            assert check.prop in properties, (
                f"{model.name}: mutant {check.mutant} expects {check.prop}, which is not a '//! "
                "check:'"
            )


@pytest.mark.parametrize("path", MODELS, ids=_name)
def test_spin_accepts_the_model_and_its_mutants(spin, path):
    model = run.parse(path)
    variants = [()] + [("LIVENESS",)] * any(c.prop != "safety" for c in model.checks)
    variants += [(m.mutant, *(["LIVENESS"] if m.prop != "safety" else [])) for m in model.mutants]
    for macros in variants:
        complaint = run.spin_syntax(model, *macros)
        assert complaint is None, (
            f"spin -a {''.join(f'-D{m} ' for m in macros)}{model.name}:\n{complaint}"
        )


def test_the_parser_rejects_a_malformed_header(tmp_path):
    bad = tmp_path / "bad.pml"
    bad.write_text("//! models: locks/acquire.lua sha=abc\n")
    with pytest.raises(run.ModelError, match="sha256=<16 hex>"):
        run.parse(bad)
    bad.write_text("//! mutant: NO_GUARD\n")
    with pytest.raises(run.ModelError, match="expect:"):
        run.parse(bad)


TOY = """\
//! models: locks/release.lua sha256=0000000000000000
//! check: safety
//! check: ltl ends
//! mutant: UNSAFE expect: safety
//! mutant: HARMLESS expect: safety
byte x;
bool done;
active proctype P() {
  x = 1;
#ifdef UNSAFE
  x = 2;
#endif
#ifdef HARMLESS
  skip;
#endif
  assert(x == 1);
  done = true
}
ltl ends { <> done }
"""


def test_the_runner_passes_a_sound_model_and_rejects_what_it_must(spin, tmp_path):
    """The runner's own negative control: a mutant the model cannot see is a failure."""
    if shutil.which("gcc") is None:
        if os.environ.get("REDCOORD_REQUIRE_SPIN") == "1":
            pytest.fail("gcc is not on PATH: the models cannot be compiled")
        pytest.skip("gcc is not on PATH")
    path = tmp_path / "toy.pml"
    path.write_text(TOY)
    results = {
        r.check.label: r
        for r in run.verify([run.parse(path)], echo=lambda line: None, optimize="-O0")
    }
    assert results["safety"].verdict == "verified" and results["safety"].ok
    assert results["ltl ends"].verdict == "verified" and results["ltl ends"].ok
    assert results["mutant UNSAFE -> safety"].verdict == "rejected"
    assert results["mutant UNSAFE -> safety"].ok
    assert results["mutant HARMLESS -> safety"].verdict == "NOT REJECTED"
    assert not results["mutant HARMLESS -> safety"].ok
    path.write_text(TOY.replace("assert(x == 1)", "assert(x == 2)"))
    broken = {
        r.check.label: r
        for r in run.verify([run.parse(path)], echo=lambda line: None, optimize="-O0")
    }
    assert broken["safety"].verdict == "FAILED" and "assertion violated" in broken["safety"].note
    for result in [*results.values(), *broken.values()]:
        if result.kept:
            shutil.rmtree(result.kept, ignore_errors=True)
