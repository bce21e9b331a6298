"""Reading events, signals and topics from outside: the admin's side (from their indexes; no
scan)."""

from __future__ import annotations

from typing import Any

from ..indexes import live_names, read_index, skip_unreadable
from ..transport.clients import key_builder
from ..transport.commands import as_text
from ..transport.errors import is_passing, unavailable_as_ours


def read_signals(
    client: Any, *, prefix: str | None = None, now_ms: int
) -> dict[str, list[dict[str, Any]]]:
    """Events (set or not, waiters), signals (waiters queued) and topics (length, groups): three
    round trips."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list events, signals and topics"):
        events_index = read_index(client, builder, "events")
        signals_index = read_index(client, builder, "signals")
        topic_names = read_index(client, builder, "topics")
        events = live_names(events_index, now_ms)
        signals = live_names(signals_index, now_ms)
        topics = sorted(as_text(n) for n in topic_names)
        pipe = client.pipeline(transaction=False)
        for name in events:
            k = builder.event(name)
            pipe.hget(k.state, "set")
            pipe.zcount(k.waiters, now_ms, "+inf")
        for name in signals:
            pipe.llen(builder.signal(name).waiters)
        for name in topics:
            pipe.xlen(builder.topic(name))
        # a record of another type (WRONGTYPE) is skipped and counted, never raised: one bad
        # record must not hide the rest (an outage still raises)
        replies = pipe.execute(raise_on_error=False) if events or signals or topics else []
        for reply in replies:
            if isinstance(reply, Exception) and is_passing(reply):
                raise reply
        groups = {}
        for name in topics:
            try:
                groups[name] = client.xinfo_groups(builder.topic(name))
            except Exception:  # the stream was trimmed away, is not there yet, or is not a stream
                groups[name] = []
    bad: list[tuple[str, str]] = []

    def readable(name: str, *found: Any) -> bool:
        errors = [r for r in found if isinstance(r, Exception)]
        if errors:
            bad.append((name, str(errors[0])))
        return not errors

    out_events = [
        {
            "name": name,
            "set": as_text(replies[2 * i] or "") == "1",
            "waiters": int(replies[2 * i + 1]),
        }
        for i, name in enumerate(events)
        if readable(name, replies[2 * i], replies[2 * i + 1])
    ]
    base = 2 * len(events)
    out_signals = [
        {"name": name, "waiters": int(replies[base + i])}
        for i, name in enumerate(signals)
        if readable(name, replies[base + i])
    ]
    base += len(signals)
    out_topics = [
        {
            "name": name,
            "length": int(replies[base + i]),
            "groups": [
                {
                    "group": as_text(g.get("name")),
                    "consumers": int(g.get("consumers", 0)),
                    "pending": int(g.get("pending", 0)),
                    "lag": g.get("lag"),
                }
                for g in groups[name]
            ],
        }
        for i, name in enumerate(topics)
        if readable(name, replies[base + i])
    ]
    if bad:
        skip_unreadable("events, signals and topics", len(bad), bad[0][0], bad[0][1])
    return {"events": out_events, "signals": out_signals, "topics": out_topics}
