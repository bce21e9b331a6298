"""``redcoord health`` run as a probe runs it, for the health tests."""

from __future__ import annotations

import io

from django.core.management import CommandError, call_command


def health(*args: str) -> tuple[int, str, str]:
    """Run ``redcoord health``; return (exit code, the lines it printed, the error)."""
    out = io.StringIO()
    try:
        call_command("redcoord", "health", *args, stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), str(exc)
    return 0, out.getvalue(), ""
