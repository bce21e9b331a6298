"""The admin's side of rate limits: the busiest keys of each limiter right now (no scan)."""

from __future__ import annotations

from typing import Any

import redis

from ..indexes import read_index, read_slot_buckets, skip_unreadable
from ..transport.clients import key_builder
from ..transport.commands import as_text, execute_pipeline
from ..transport.drivers import Command, Run
from ..transport.errors import is_passing, unavailable_as_ours
from . import native
from .limiter import RateLimiter


def busiest_keys(client: Any, *, prefix: str | None = None, top: int = 10) -> list[dict[str, Any]]:
    """Each limiter's busiest keys over this minute and the last (hits counted by
    ``hit()``, refused ones included), each with its state now: three round trips (four the first
    time, to learn
    whether the server has CL.THROTTLE)."""
    builder = key_builder(prefix, client)
    with unavailable_as_ours(client, "list rate limiters"):
        limiters = read_index(client, builder, "ratelimiters")
        names = sorted(limiters)
        counted = _counts(client, builder, names, top) if names else []
    out = []
    peeks: list[tuple[int, RateLimiter, str]] = []
    for name, hits in zip(names, counted, strict=True):
        busiest = sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        try:
            limiter = RateLimiter(
                limiters[name], name=name, track=False, client=client, prefix=builder.prefix
            )
        except ValueError:  # a policy this version does not read
            continue
        row = {
            "name": name,
            "policies": limiters[name],
            "keys": [{"key": k, "hits": int(h)} for k, h in busiest],
        }
        out.append(row)
        peeks += [(len(out) - 1, limiter, k) for k, _ in busiest]
    if peeks:
        # a limiter CL.THROTTLE decides keeps its counts in the command's key
        probe_key = builder.rate_limit_cell("probe", "probe")
        by_server = {id(lim): lim.native and native.probe(client, probe_key) for _, lim, _ in peeks}

        def build(pipe: Any) -> None:
            for _, limiter, key in peeks:
                call, _, _ = limiter.hit_call("peek", key, server_gcra=by_server[id(limiter)])
                if isinstance(call, Run):
                    call.script.queue(pipe, call.keys, call.args)
                elif isinstance(call, Command):
                    pipe.execute_command(*call.args)
                else:  # pragma: no cover - a peek is one script or one command
                    raise TypeError(f"a peek cannot be sent as {call!r}")

        results = execute_pipeline(client, build, operation="peek rate limits")
        for (at, limiter, key), reply in zip(peeks, results, strict=True):
            decision = limiter.decision(
                reply, key, None, peek=True, server_gcra=by_server[id(limiter)]
            )
            entry = next(e for e in out[at]["keys"] if e["key"] == key)
            entry.update(
                remaining=decision.remaining,
                retry_after=round(decision.retry_after, 3),
                allowed=decision.allowed,
            )
    return out


def _counts(client: Any, builder: Any, names: list[str], top: int) -> list[dict[str, float]]:
    """Per limiter, its keys' hits over this minute and the last of the server's clock.

    A busiest-keys zset counts the minute its member ``''`` is scored minus;
    an older one saw no hit since and is left out. On a Cluster each limiter
    has such zsets per slot (of the keys): every slot's are read and added up.
    """
    minute = (
        int(client.time()[0]) // 60
    )  # the server's minutes, like the counts' (clients' clocks never matter)
    fresh = (-minute, -(minute - 1))
    counted: list[dict[str, float]] = [{} for _ in names]
    if builder.cluster:
        shapes = [
            (head, tail, "zset")
            for name in names
            for head, tail in builder.rate_limit_top_parts(name)
        ]
        for shape_no, flat in read_slot_buckets(client, shapes, merge=False):
            pairs = dict(zip(map(as_text, flat[0::2]), map(float, flat[1::2]), strict=True))
            if pairs.pop("", None) in fresh:
                hits = counted[shape_no // 2]
                for member, score in pairs.items():
                    hits[member] = hits.get(member, 0) + score
        return counted
    pipe = client.pipeline(transaction=False)
    for name in names:
        for zset in builder.rate_limit_top(name):  # this minute's, the one before's
            pipe.zscore(zset, "")  # minus the minute it counts
            pipe.zrevrangebyscore(zset, "+inf", "(0", start=0, num=top, withscores=True)
    replies = pipe.execute(raise_on_error=False)
    for i, hits in enumerate(counted):
        for j in (0, 1):
            marker, members = replies[4 * i + 2 * j], replies[4 * i + 2 * j + 1]
            if isinstance(marker, Exception) or isinstance(members, Exception):
                error = marker if isinstance(marker, Exception) else members
                if not isinstance(error, redis.exceptions.ResponseError) or is_passing(error):
                    raise error
                skip_unreadable(
                    "rate limit hit counts", 1, names[i], str(error)
                )  # WRONGTYPE: not ours
                continue
            if marker is None or float(marker) not in fresh:
                continue  # older: no hit since
            for member, score in members:
                hits[as_text(member)] = hits.get(as_text(member), 0) + float(score)
    return counted


def reset_key(name: str, key: str, *, client: Any = None, prefix: str | None = None) -> int:
    """Forget what ``key`` counted in limiter ``name`` (an operator's action); returns keys
    deleted."""
    builder = key_builder(prefix, client)
    from ..transport.clients import get_client

    client = client or get_client()
    with unavailable_as_ours(client, f"read rate limiter {name!r}"):
        policies = read_index(client, builder, "ratelimiters").get(name)
    if policies is None:
        raise ValueError(f"no rate limiter named {name!r} has counted anything")
    return RateLimiter(
        as_text(policies), name=name, track=False, client=client, prefix=builder.prefix
    ).reset(key)
