"""The rows of the dashboard's big tables (live locks, lock waits, queues), written in Python.

Django's own admin writes its change list's rows in Python too
(``admin_list.items_for_result``): a template of a row costs a variable
lookup, an escape and a localisation per cell, and a page of 100 queues and
50 locks spent more on that than on reading Redis. The fragment templates
keep the tables' head, the empty rows and the notes; each row here is the
markup the templates wrote, cell for cell (the live refresh and the tests
find cells by the same ids, ``data-name`` and ``data-series``).

Numbers are written as Python writes them (the page is in English: the
templates had ``{% localize off %}`` for the same reason); every text is
escaped; names in links are quoted whole (``urlencode:''``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any
from urllib.parse import quote

from django.utils.dateformat import format as date_format
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe


def _text(value: Any) -> str:
    """A cell's value as ``{{ value }}`` under ``{% localize off %}`` writes it: escaped."""
    if value is None:
        return "None"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return conditional_escape(value if isinstance(value, str) else localize(value, use_l10n=False))


def _quoted(name: str) -> str:
    """A name in a query string (``|urlencode:''``), escaped for an attribute."""
    return conditional_escape(quote(str(name), safe=""))


def _when(at: datetime | None) -> str:
    """A time cell's content, as ``fragments/when.html`` writes it."""
    if not at:
        return "–"
    return (
        "<time "
        f'datetime="{date_format(at, "c")}">'
        f"{conditional_escape(date_format(at, 'Y-m-d H:i:s T'))}</time>"
    )


def _chart(row: dict[str, Any], series: str) -> str:
    chart = row.get("charts", {}).get(series)
    return str(chart["html"]) if chart else ""


def _rows(items: Iterable[dict[str, Any]], row: Callable[[dict[str, Any]], str]) -> SafeString:
    return mark_safe("".join(map(row, items)))


def lock_rows(items: Iterable[dict[str, Any]], can_change: bool) -> SafeString:
    """The rows of the live locks' table."""

    def row(lock: dict[str, Any]) -> str:
        name = _text(lock["name"])
        action = (
            '<td class="rc-actions"><a '
            f'href="action/force-release/?name={_quoted(lock["name"])}'
            f'&amp;fence={_text(lock["fence"])}">Force '
            "release</a></td>"
            if can_change
            else ""
        )
        return (
            f'\n    <tr data-name="{name}">\n'
            f"      <td>{name}</td><td>{_text(lock['host'])} {_text(lock['pid'])} "
            f"{_text(lock['thread'])}</td>\n"
            f'      <td class="rc-when">{_when(lock.get("acquired_at"))}</td>\n'
            f'      <td class="rc-num">{_text(lock["ttl_left"])}</td>'
            f'<td class="rc-num">{_text(lock["fence"])}</td>'
            f'<td class="rc-num">{_text(lock["waiters"])}</td>\n'
            f"      {action}\n    </tr>"
        )

    return _rows(items, row)


def lock_wait_rows(items: Iterable[dict[str, Any]]) -> SafeString:
    """The rows of the lock waits' table."""

    def row(lock: dict[str, Any]) -> str:
        name = _text(lock["name"])
        return (
            f'\n    <tr data-name="{name}">\n      <td>{name}</td><td '
            f'class="rc-num">{_text(lock["grants"])}</td><td '
            f'class="rc-num">{_text(lock["mean_wait"])}</td>\n      <td '
            f'class="rc-num">{_text(lock["max_wait"])}</td><td '
            f'class="rc-num">{_text(lock["total_wait"])}</td>\n      <td class="rc-chart" '
            'data-series="max_wait" title="Longest wait for the lock (s) per minute, over the '
            f'last hour">{_chart(lock, "max_wait")}</td>\n      <td class="rc-chart" '
            'data-series="mean_wait" title="Mean wait for the lock (s) per minute, over the last '
            f'hour">{_chart(lock, "mean_wait")}</td>\n    </tr>'
        )

    return _rows(items, row)


def queue_rows(items: Iterable[dict[str, Any]], can_change: bool) -> SafeString:
    """The rows of the queues' table."""

    def row(queue: dict[str, Any]) -> str:
        name, quoted = _text(queue["name"]), _quoted(queue["name"])
        dead = (
            f'<a href="dead-letters/?name={quoted}" title="List the dead '
            f'letters">{_text(queue["dead"])}</a>'
            if queue["dead"]
            else "0"
        )
        oldest = queue["oldest_age"]
        paused = queue.get("paused")
        pause = (
            f'\n        <a href="action/resume-queue/?name={quoted}">Resume</a>'
            if paused
            else f'\n        <a href="action/pause-queue/?name={quoted}">Pause</a>'
        )
        actions = (
            f'<td class="rc-actions">\n'
            f'        <a href="action/requeue-dead/?name={quoted}">Requeue dead</a>\n'
            f'        <a href="action/purge-dead/?name={quoted}">Purge dead</a>\n'
            f'        <a href="action/purge-queue/?name={quoted}">Purge queue</a>{pause}</td>'
            if can_change
            else ""
        )
        badge = (
            ' <span class="rc-paused" '
            f'title="{_text(paused.get("reason") or "paused")}">paused</span>'
            if paused
            else ""
        )
        if queue.get("groups"):
            badge += (
                f' <a class="rc-groups" href="groups/?name={quoted}" title="List its groups">'
                f"{_text(queue['groups'])} group{'s' if queue['groups'] != 1 else ''}</a>"
            )
        return (
            f'\n    <tr data-name="{name}">\n'
            f'      <td>{name}{badge}</td><td class="rc-num">{_text(queue["ready"])}</td>'
            f'<td class="rc-num">{_text(queue["delayed"])}</td>\n'
            f'      <td class="rc-num">{_text(queue["processing"])}</td>\n'
            f'      <td class="rc-num">{dead}</td>\n'
            f'      <td class="rc-num">{"–" if oldest is None else _text(oldest)}</td>\n'
            '      <td class="rc-chart" data-series="depth" '
            'title="Depth (ready + delayed + processing) over the last '
            f'hour">{_chart(queue, "depth")}</td>\n'
            '      <td class="rc-chart" data-series="done" '
            'title="Deliveries finished per minute by its workers, over the '
            f'last hour">{_chart(queue, "done_per_minute")}</td>\n'
            f"      {actions}\n    </tr>"
        )

    return _rows(items, row)
