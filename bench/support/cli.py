"""A benchmark's command line: ``--quick``, and the options whose default ``--quick`` shrinks.

::

    cli = Options(__doc__, quick="~30 s smoke run")
    cli.number("--seconds", 8.0, 2.0, "window per run", above=0)
    cli.number("--rounds", 3, 1, "interleaved rounds", least=1)
    args = cli.parse(argv)

An option left out gets its ``--quick`` value in a quick run, else its
default (its help says both); an explicit value always wins. Out-of-range
values end the run with argparse's usage error (exit status 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn


@dataclass(frozen=True)
class _Number:
    flag: str
    default: Any
    quick: Any
    least: float | None
    above: float | None
    unit: str

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def problem(self, value: Any) -> str:
        if self.least is not None and value < self.least:
            bound = f">= {self.least:g}"
        elif self.above is not None and value <= self.above:
            bound = f"> {self.above:g}"
        else:
            return ""
        return f"{self.flag} must be {bound}" + (f" ({self.unit})" if self.unit else "")


def _shown(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


class Options:
    """The parser of one benchmark script.

    Args:
        doc: the script's docstring; its first line describes the script.
        quick: the help of ``--quick`` (what the smoke run is).
    """

    def __init__(self, doc: str | None, quick: str) -> None:
        self.parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
        self.parser.add_argument("--quick", action="store_true", help=quick)
        self._numbers: list[_Number] = []

    def add(self, *flags: str, **kwargs: Any) -> None:
        """Any other option, as ``argparse``'s ``add_argument``."""
        self.parser.add_argument(*flags, **kwargs)

    def number(
        self,
        flag: str,
        default: float,
        quick: float | None,
        help: str,
        *,
        least: float | None = None,
        above: float | None = None,
        unit: str = "",
    ) -> None:
        """A numeric option of ``default``'s type: ``default``, or ``quick`` in a quick run
        (None: the same); it must be >= ``least`` and > ``above`` (``unit`` is named in the
        error). ``help`` says what it is; the defaults are added to it."""
        said = f"default {_shown(default)}" + (
            "" if quick is None else f", --quick {_shown(quick)}"
        )
        self.parser.add_argument(flag, type=type(default), default=None, help=f"{help} ({said})")
        self._numbers.append(
            _Number(flag, default, default if quick is None else quick, least, above, unit)
        )

    def parse(self, argv: Sequence[str] | None = None) -> argparse.Namespace:
        args = self.parser.parse_args(argv)
        for number in self._numbers:
            if getattr(args, number.dest) is None:
                setattr(args, number.dest, number.quick if args.quick else number.default)
            if problem := number.problem(getattr(args, number.dest)):
                self.error(problem)
        return args

    def error(self, message: str) -> NoReturn:
        """End the run with a usage error (exit status 2)."""
        self.parser.error(message)
