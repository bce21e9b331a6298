"""Model-check the Promela models of our Lua protocols with SPIN.

Every ``*.pml`` under ``django_redcoord/core/lua`` is a model of the scripts beside it. Its
header says what to check, one directive a line::

    //! models: locks/acquire.lua sha256=0123456789abcdef   (a modelled script, the first 16 hex
                                                           of its sha256;
                                                           tests/verify/test_models.py
                                                           fails when the script changes)
    //! check: safety                  assertions + invalid end states, exhaustive (-DSAFETY)
    //! check: ltl <name>              the file's ``ltl <name> {...}``, acceptance search under
                                       weak fairness (pan -a -f -N <name>)
    //! mutant: <MACRO> expect: <name or safety>
                                       a negative control: -D<MACRO> turns on a known-unsafe
                                       variant (``#ifdef <MACRO>`` blocks) which the checker
                                       must reject for that property
                                       A liveness check and its mutants are built with
                                       -DLIVENESS, so a model can state the fairness its
                                       property assumes (``#ifdef LIVENESS``: e.g. a waiter that
                                       looks again every tick) without narrowing its safety check.
    //! spin: <flags>                  extra flags: -D... go to gcc (e.g. -DVECTORSZ=4096),
                                       the rest to pan (e.g. -m100000)

    python -m tests.verify.run [model ...]    (a model: its stem, e.g. ``hold``, or a path)

Each check runs ``spin -a``, ``gcc -O2`` and ``pan`` in a temporary directory and prints one
row (model, check, states, depth, errors, time, verdict). The exit status is non-zero when a
check fails, a mutant is NOT rejected, or pan's search was incomplete (depth or memory bound
hit: raise ``-m`` in ``//! spin:``). A failing check keeps its directory and prints the command
that replays the counterexample.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LUA_ROOT = ROOT / "django_redcoord" / "core" / "lua"

DIRECTIVE = re.compile(r"^//!\s*(\w+):\s*(.*?)\s*$")
MODELS_ARG = re.compile(r"^(\S+)\s+sha256=([0-9a-f]{16})$")
CHECK_ARG = re.compile(r"^(safety|ltl\s+(\w+))$")
MUTANT_ARG = re.compile(r"^(\w+)\s+expect:\s*(\w+)$")
# A claim generated from an LTL formula fails with its own assert (``assert(!(!(p)))``,
# printed with two spaces); an acceptance cycle is a liveness counterexample.
LTL_ERROR = re.compile(
    r"acceptance cycle|non-progress cycle|claim violated|assertion violated {2}!\( !\("
)
INCOMPLETE = (
    "max search depth too small",
    "out of memory",
    "MEMLIM",
    "too many processes",
    "NFAIR",
    "cannot find claim",
    "VECTORSZ",
)


# Shared machines: a model whose state space blows up stops at 2 GB (MEMLIM, MB; a model may raise
# it in //! spin:) and reads as INCOMPLETE instead of swapping.
DEFAULT_GCC = ["-DMEMLIM=2048"]
# Seconds a check may take (gcc + pan). The largest take a few minutes of CPU, but CI runs them at
# the lowest priority beside the test suite, where one took 626 s and, with more tests beside
# it, over 900 s: the bound is for a state space that blew up, not for a busy machine.
DEFAULT_TIMEOUT = 2400.0


class ModelError(ValueError):
    """A model whose header does not follow the conventions above."""


@dataclasses.dataclass(frozen=True)
class Modelled:
    script: str  # relative to core/lua
    sha: str  # first 16 hex of the sha256 the model was reviewed against

    @property
    def path(self) -> Path:
        return LUA_ROOT / self.script

    def current_sha(self) -> str | None:
        return (
            hashlib.sha256(self.path.read_bytes()).hexdigest()[:16] if self.path.is_file() else None
        )


@dataclasses.dataclass(frozen=True)
class Check:
    prop: str  # "safety" or the ltl property's name
    mutant: str | None = None  # the -D macro of a negative control

    @property
    def label(self) -> str:
        what = "safety" if self.prop == "safety" else f"ltl {self.prop}"
        return f"mutant {self.mutant} -> {what}" if self.mutant else what


@dataclasses.dataclass
class Model:
    path: Path
    modelled: list[Modelled]
    checks: list[Check]
    mutants: list[Check]
    gcc_flags: list[str]
    pan_flags: list[str]

    @property
    def name(self) -> str:
        return (
            str(self.path.relative_to(LUA_ROOT))
            if self.path.is_relative_to(LUA_ROOT)
            else self.path.name
        )


def parse(path: Path) -> Model:
    """Read a model's ``//!`` header (directives anywhere in the file's leading comments)."""
    model = Model(path, [], [], [], [], [])
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = DIRECTIVE.match(line.strip())
        if not match:
            continue
        key, arg = match.groups()
        where = f"{path}:{number}"
        if key == "models":
            m = MODELS_ARG.match(arg)
            if not m:
                raise ModelError(
                    f"{where}: expected '//! models: <lua path> sha256=<16 hex>', got {arg!r}"
                )
            model.modelled.append(Modelled(m.group(1), m.group(2)))
        elif key == "check":
            m = CHECK_ARG.match(arg)
            if not m:
                raise ModelError(
                    f"{where}: expected '//! check: safety' or '//! check: ltl <name>', got {arg!r}"
                )
            model.checks.append(Check(m.group(2) or "safety"))
        elif key == "mutant":
            m = MUTANT_ARG.match(arg)
            if not m:
                raise ModelError(
                    f"{where}: expected '//! mutant: <MACRO> expect: <ltl name or safety>', got "
                    f"{arg!r}"
                )
            model.mutants.append(Check(m.group(2), mutant=m.group(1)))
        elif key == "spin":
            for flag in arg.split():
                (model.gcc_flags if flag.startswith("-D") else model.pan_flags).append(flag)
        else:
            raise ModelError(f"{where}: unknown directive //! {key}: (models, check, mutant, spin)")
    return model


def discover(selected: list[str] | None = None) -> list[Model]:
    paths = sorted(LUA_ROOT.rglob("*.pml"))
    if selected:
        chosen = []
        for sel in selected:
            hits = [
                p
                for p in paths
                if sel in (p.stem, p.name, str(p.relative_to(LUA_ROOT))) or Path(sel).resolve() == p
            ]
            if not hits:
                raise SystemExit(
                    f"no model {sel!r} under {LUA_ROOT} (have: {', '.join(p.stem for p in paths)})"
                )
            chosen += [p for p in hits if p not in chosen]
        paths = chosen
    return [parse(p) for p in paths]


@dataclasses.dataclass
class Result:
    model: str
    check: Check
    states: int | None = None
    depth: int | None = None
    errors: int | None = None
    seconds: float = 0.0
    verdict: str = "?"
    ok: bool = False
    note: str = ""
    kept: Path | None = None


def _number(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def spin_syntax(model: Model, *macros: str) -> str | None:
    """``spin -a`` the model (with a mutant's macro, LIVENESS...); return spin's complaint, or
    None."""
    with tempfile.TemporaryDirectory(prefix="redcoord-spin-") as tmp:
        cmd = ["spin", *(f"-D{macro}" for macro in macros), "-a", str(model.path)]
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        out = proc.stdout + proc.stderr
        if proc.returncode != 0 or "error" in out.lower() or not (Path(tmp) / "pan.c").is_file():
            return out.strip() or f"spin exited {proc.returncode}"
    return None


def run_check(
    model: Model, check: Check, timeout: float = DEFAULT_TIMEOUT, optimize: str = "-O2"
) -> Result:
    res = Result(model.name, check)
    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f"redcoord-spin-{model.path.stem}-"))
    keep = False
    try:
        macro = [f"-D{check.mutant}"] if check.mutant else []
        if (
            check.prop != "safety"
        ):  # a model may assume fairness (a prompt waiter) for liveness alone
            macro.append("-DLIVENESS")
        steps = [
            ["spin", *macro, "-a", str(model.path)],
            [
                "gcc",
                optimize,
                "-w",
                "-o",
                "pan",
                "pan.c",
                *DEFAULT_GCC,
                *model.gcc_flags,
                *(["-DSAFETY", "-DNOCLAIM"] if check.prop == "safety" else []),
            ],
        ]
        for cmd in steps:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout)
            if proc.returncode != 0:
                res.verdict, res.note, keep = (
                    "BUILD FAILED",
                    f"{' '.join(cmd)}:\n{proc.stdout}{proc.stderr}",
                    True,
                )
                return res
        pan = ["./pan", *model.pan_flags]
        if check.prop != "safety":
            pan += ["-a", "-f", "-N", check.prop]
        proc = subprocess.run(pan, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        out = proc.stdout + proc.stderr
        nfair = re.search(r"recompile with (-DNFAIR=\d+)", out)
        if nfair:  # weak fairness needs room for every process: build again with what pan asks for
            subprocess.run(
                [*steps[1], nfair.group(1)],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
            proc = subprocess.run(pan, cwd=tmp, capture_output=True, text=True, timeout=timeout)
            out = proc.stdout + proc.stderr
        res.errors = _number(r"errors: (\d+)", out)
        res.depth = _number(r"depth reached (\d+)", out)
        res.states = _number(r"(\d+) states, stored", out)
        first = re.search(r"^pan:1: (.*)$", out, re.M)
        incomplete = [flag for flag in INCOMPLETE if flag in out]
        if res.errors is None:
            res.verdict, res.note, keep = "NO RESULT", out[-2000:], True
        elif check.mutant:
            found = res.errors > 0 and first is not None
            if found and check.prop != "safety" and not LTL_ERROR.search(first.group(1)):
                res.verdict, res.note = (
                    "WRONG ERROR",
                    f"expected a violation of ltl {check.prop}, got: {first.group(1)}",
                )
            elif found:
                res.verdict, res.ok, res.note = "rejected", True, first.group(1)
            else:
                res.verdict = "NOT REJECTED" + (" (incomplete)" if incomplete else "")
                res.note = "the negative control found no error: the model cannot see this bug"
                if incomplete:
                    res.note += f"; pan: {', '.join(incomplete)}"
        elif res.errors:
            res.verdict, res.note, keep = "FAILED", first.group(1) if first else out[-2000:], True
        elif incomplete:
            res.verdict, res.note, keep = (
                "INCOMPLETE",
                f"pan: {', '.join(incomplete)} (raise -m/-w in //! spin:)",
                True,
            )
        else:
            res.verdict, res.ok = "verified", True
        if keep and (tmp / f"{model.path.name}.trail").is_file():
            res.note += (
                f"\n  replay: cd {tmp} && spin -t -p -g -l {' '.join(macro)} "
                f"-k {model.path.name}.trail {model.path}"
            )
        return res
    except subprocess.TimeoutExpired:
        res.verdict, res.note, keep = "TIMEOUT", f"over {timeout:.0f} s", True
        return res
    finally:
        res.seconds = time.monotonic() - start
        if keep:
            res.kept = tmp
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def checks_of(model: Model) -> list[Check]:
    return [*model.checks, *model.mutants]


def table(results: list[Result]) -> str:
    head = ("model", "check", "states", "depth", "errors", "time", "verdict")
    rows = [head] + [
        (
            r.model,
            r.check.label,
            "" if r.states is None else f"{r.states:,}",
            "" if r.depth is None else str(r.depth),
            "" if r.errors is None else str(r.errors),
            f"{r.seconds:.1f} s",
            r.verdict,
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w) if i < 6 else cell
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verify(models: list[Model], echo=print, optimize: str = "-O2", jobs: int = 1) -> list[Result]:
    """Every check of every model, ``jobs`` at a time (each in its own directory), in model
    order."""
    work = []
    for model in models:
        if not model.checks and not model.mutants:
            raise ModelError(f"{model.path}: no //! check: or //! mutant: directive")
        work.extend((model, check) for check in checks_of(model))

    def one(item: tuple[Model, Check]) -> Result:
        res = run_check(item[0], item[1], optimize=optimize)
        echo(f"{res.verdict:>12}  {res.model}  {res.check.label}  ({res.seconds:.1f} s)")
        return res

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, work))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.verify.run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("models", nargs="*", help="model stems or paths (default: every model)")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="checks run at once (default: the number of CPUs); each is gcc, then pan",
    )
    args = parser.parse_args(argv)
    for tool in ("spin", "gcc"):
        if shutil.which(tool) is None:
            print(f"{tool} is not on PATH (Debian: apt-get install {tool})", file=sys.stderr)
            return 2
    try:
        models = discover(args.models)
    except ModelError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not models:
        print(f"no *.pml models under {LUA_ROOT}", file=sys.stderr)
        return 2
    start = time.monotonic()
    stale = [
        f"{m.script} changed since {model.name} was reviewed (sha256 {m.sha} != {m.current_sha()})"
        for model in models
        for m in model.modelled
        if m.current_sha() != m.sha
    ]
    results = verify(
        models, echo=lambda line: print(line, file=sys.stderr, flush=True), jobs=args.jobs
    )
    print()
    print(table(results))
    total = time.monotonic() - start
    bad = [r for r in results if not r.ok]
    for r in bad:
        print(
            f"\n{r.verdict}: {r.model} {r.check.label}: {r.note}"
            + (f"\n  kept: {r.kept}" if r.kept else "")
        )
    for line in stale:
        print(f"\nSTALE: {line}")
    print(
        f"\n{len(results)} checks of {len(models)} models in {total:.1f} s: "
        + (
            "all as expected"
            if not bad and not stale
            else f"{len(bad)} failed, {len(stale)} stale headers"
        )
    )
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
