"""The registry of panels: what each family shows on the admin dashboard and in
``manage.py redcoord status``, registered once.

A panel names its part of :func:`django_redcoord.dashboard.overview` (``key``),
the reader that fills it, the fragment template the admin page and its live
refresh render it with, and the tables ``redcoord status`` prints from the same
data. The built-in families register theirs in :mod:`django_redcoord.dashboard`,
each beside its reader; so adding a family costs one reader (its records in
``core/<family>/``), one :func:`register_panel` and one template
(``templates/admin/django_redcoord/fragments/<fragment>.html``). The admin's
sections, the overview's JSON and the status command's tables all follow the
registry, in its order.

This module imports nothing of the package but the core's door: a leaf every side can use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import timezone

from .core import whole_span


@dataclass(frozen=True)
class Reading:
    """What a panel's reader is given: one overview's client, keys, server time and filters."""

    client: Any
    keys: Any
    now_ms: int
    contains: str
    page: int
    elections: tuple[str, ...]
    #: name -> index bound of every live lock, read once for the locks panel and the trouble list
    live: dict[str, int]
    #: False for the trouble panel's own refresh (``overview(only=TROUBLE_ONLY)``)
    page_too: bool


#: One table of ``redcoord status``: (title, header, rows).
Table = tuple[str, list[str], list[list[Any]]]


@dataclass(frozen=True)
class Panel:
    """A family's part of the dashboard and of ``redcoord status``."""

    #: The overview's key for this part (``overview(...)[key]``; the JSON of ``status --json``).
    key: str
    #: What it reads, in words: records left out as unreadable are counted under it.
    what: str
    #: ``read(reading)``: the part's data (JSON-ready).
    read: Callable[[Reading], Any]
    #: ``empty(reading)``: the part when it is not read (trouble-only) or cannot be read.
    empty: Callable[[Reading], Any]
    #: The fragment template's name (``fragments/<fragment>.html``) and the page element's id.
    fragment: str
    section_id: str
    #: ``tables(data, now_ms)``: the tables ``redcoord status`` prints from ``data`` (this key's).
    tables: Callable[[Any, int], list[Table]]
    #: Read for the trouble list too (else only for the page).
    for_trouble: bool = False
    css: str = "module rc-section"

    @property
    def template(self) -> str:
        return f"admin/django_redcoord/fragments/{self.fragment}.html"


_PANELS: dict[str, Panel] = {}


def register_panel(panel: Panel) -> Panel:
    """Add ``panel`` after those registered before it (again under its key: replaced in place).

    Raises ValueError if another panel already uses its fragment or element id.
    """
    for other in _PANELS.values():
        if other.key != panel.key and (
            other.fragment == panel.fragment or other.section_id == panel.section_id
        ):
            raise ValueError(
                f"panel {panel.key!r}: fragment {panel.fragment!r} / element "
                f"{panel.section_id!r} are taken by panel {other.key!r}; each panel needs its own"
            )
    _PANELS[panel.key] = panel
    return panel


def panels() -> tuple[Panel, ...]:
    """The registered panels, in order. The built-in ones are registered by importing
    :mod:`django_redcoord.dashboard`, which every reader of the registry does first (the
    overview is its own)."""
    return tuple(_PANELS.values())


# -- text for the terminal (redcoord status) -----------------------------------------------------


def dash(value: Any) -> str:
    return "-" if value is None else str(value)


def span(seconds: Any) -> str:
    """A duration as people read it: 850 ms, 12.5 s, 3 min 20 s, 2 h 5 min, 3 d 4 h."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "-"
    seconds = abs(float(seconds))
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return whole_span(int(seconds))


def ago(seconds: Any) -> str:
    return "-" if not isinstance(seconds, (int, float)) else f"{span(seconds)} ago"


def when(ms: Any, now_ms: int) -> str:
    """A time (ms since the epoch) in TIME_ZONE with its date and zone, and how far from now."""
    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        return "-"
    local = timezone.localtime(datetime.fromtimestamp(ms / 1000, tz=dt_timezone.utc))
    delta = (ms - now_ms) / 1000
    return (
        f"{local:%Y-%m-%d %H:%M:%S %Z} "
        f"({'in ' + span(delta) if delta >= 0 else span(delta) + ' ago'})"
    )


def pause_text(paused: dict[str, Any] | None) -> str:
    """A queue's pause in words: since when (local time) and why."""
    if not paused:
        return "not paused"
    since = paused["since_ms"]
    moment = (
        timezone.localtime(datetime.fromtimestamp(since / 1000, tz=dt_timezone.utc))
        if since
        else None
    )
    text = f"since {moment:%Y-%m-%d %H:%M:%S %Z}" if moment else "since an unknown time"
    return text + (f" ({paused['reason']})" if paused["reason"] else "")
