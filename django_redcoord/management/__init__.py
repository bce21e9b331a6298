"""The management commands' shared pieces."""

from __future__ import annotations

import argparse
import math
from typing import Any


def seconds(text: str) -> float:
    """An argparse ``type`` for a duration option: a finite number (argparse then refuses
    ``nan``, ``inf`` and words with a usage error that names the option, as for any bad
    value); whether it must be positive is for the option's own check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    return value


#: The exit code of a command whose options or arguments make no sense, as argparse's own
#: errors; 1 is for the rest (settings, Redis down, a check or a job that failed).
USAGE = 2


def usage_error(message: str) -> Any:
    """The CommandError of options or arguments that make no sense: exit code :data:`USAGE`."""
    from django.core.management.base import CommandError

    return CommandError(message, returncode=USAGE)
