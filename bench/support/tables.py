"""How the benchmarks report: markdown tables, ratios over rounds, percentiles, the header.

Ratios are taken within each round (both sides measured within seconds of
each other), then summarised over the rounds: the median, and the range.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import metadata
from typing import Any, Literal


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table, columns padded to their widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]

    def line(cells: Sequence[Any]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """:func:`format_table`, printed and flushed at once."""
    print(format_table(headers, rows))
    sys.stdout.flush()


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty sequence."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that are there (None: none is)."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt_ratios(
    ratios: Sequence[float], spread: Literal["always", "several", "never"] = "always"
) -> str:
    """Ratios over rounds: ``1.23x (1.10-1.40)``, the median and the range (with ``several``
    only when there are; with ``never`` the median alone); ``n/a`` without any."""
    if not ratios:
        return "n/a"
    text = f"{statistics.median(ratios):.2f}x"
    if spread == "always" or (spread == "several" and len(ratios) > 1):
        text += f" ({min(ratios):.2f}-{max(ratios):.2f})"
    return text


def per(total: float, count: int) -> str:
    """``total / count`` to two decimals (commands per acquisition...); n/a when count is 0."""
    return f"{total / count:.2f}" if count else "n/a"


def top_commands(commands: Counter[str], total: int, top: int, fmt: str = ".2f") -> str:
    """The ``top`` most frequent commands, each as calls per ``total`` (acquisitions...)."""
    if not total:
        return ""
    return ", ".join(f"{cmd} {calls / total:{fmt}}" for cmd, calls in commands.most_common(top))


def version(dist: str) -> str | None:
    """The installed version of a distribution, None if it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions(dists: Iterable[str], missing: str | None = "not installed") -> str:
    """``redis 5.2.1, hiredis not installed``: a missing one said so, or left out (None)."""
    found = ((dist, version(dist)) for dist in dists)
    return ", ".join(f"{d} {v or missing}" for d, v in found if v or missing is not None)


def header(title: str, server_version: str, details: str = "") -> str:
    """The first line of a report: ``# <title>: redis-server <v>, Python <v>, <n> cores;
    <details>``."""
    line = (
        f"# {title}: redis-server {server_version}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores"
    )
    return f"{line}; {details}" if details else line
