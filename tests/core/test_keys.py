"""No two valid names share a Redis key (core/keys.py).

A name with a ``{tag}`` has its keys under ``<prefix>:<kind>:{<tag>}:<name>``, parts appended as
``:<part>``: ``"job{t}:waits"`` would be the wait list of lock ``"job{t}"``. Such a name is
refused with an error that says why; ``keys.PARTS`` lists what each kind appends, and is checked
here against every key the builders make. Then, over many names, every key a builder makes for
one valid name is made for no other.
"""

from __future__ import annotations

import itertools

import pytest

from django_redcoord.core import keys as keys_module
from django_redcoord.core.keys import PARTS, KeyBuilder

BUILDER = KeyBuilder("p")

#: kind -> (the builder's method, the keys it makes for a name, as a list)
KINDS = {
    "lock": lambda n: list(vars(BUILDER.lock(n)).values()),
    "sem": lambda n: list(vars(BUILDER.semaphore(n)).values()),
    "rw": lambda n: list(vars(BUILDER.rwlock(n)).values()),
    "latch": lambda n: list(vars(BUILDER.latch(n)).values()),
    "barrier": lambda n: list(vars(BUILDER.barrier(n)).values()),
    "event": lambda n: list(vars(BUILDER.event(n)).values()),
    "signal": lambda n: list(vars(BUILDER.signal(n)).values()),
    "topic": lambda n: [BUILDER.topic(n)],
    "leader": lambda n: list(vars(BUILDER.leader(n)).values()),
    "queue": lambda n: [
        *vars(BUILDER.queue(n)).values(),
        BUILDER.queue_history(n),
        BUILDER.queue_counts(n),
    ],
}


def _own(kind: str, name: str) -> list[str]:
    """The keys (and key prefixes) of ``name`` under its base: not the shared indexes and hub."""
    base = BUILDER._base(kind, name)
    return [k for k in KINDS[kind](name) if isinstance(k, str) and k.startswith(base)]


def test_every_kind_is_listed() -> None:
    assert set(KINDS) == set(PARTS)


@pytest.mark.parametrize("kind", sorted(PARTS))
def test_parts_list_what_the_builders_append(kind: str) -> None:
    name = "job{t}"
    base = BUILDER._base(kind, name)
    made = {k[len(base) + 1 :] for k in _own(kind, name) if k != base}
    assert made == set(PARTS[kind]), f"keys.PARTS[{kind!r}] is out of date"


@pytest.mark.parametrize(("kind", "part"), [(k, p) for k in PARTS for p in PARTS[k]])
def test_a_tagged_name_ending_in_a_part_is_refused(kind: str, part: str) -> None:
    name = "job{t}:" + (part + "abc" if part.endswith(":") else part)
    with pytest.raises(ValueError, match="which names a key of") as info:
        KINDS[kind](name)
    assert repr("job{t}") in str(info.value)


NAMES = [
    "".join(parts)
    for parts in itertools.product(
        ("", "a", "a:"), ("{t}", "{t:x}"), ("", ":queue", ":ready", ":wake", ":x", ":queue:7")
    )
] + [f"{{t}}:{p}{s}" for parts in PARTS.values() for p in parts for s in ("", "x", ":y")]


@pytest.mark.parametrize("kind", sorted(PARTS))
def test_no_two_valid_names_share_a_key(kind: str) -> None:
    owner: dict[str, str] = {}
    goes_on: set[tuple[str, str]] = set()
    accepted = 0
    for name in NAMES:
        try:
            made = _own(kind, name)
        except ValueError:
            continue
        accepted += 1
        base = BUILDER._base(kind, name)
        for key in made:
            other = owner.setdefault(key, name)
            assert other == name, f"{kind} names {other!r} and {name!r} share key {key!r}"
        goes_on.update((k, name) for k in made if k != base and k.endswith(":"))
    assert accepted > 10
    # A part that goes on (the wake lists' "wake:<owner>") begins no other name's key.
    for prefix, name in goes_on:
        clash = [(k, by) for k, by in owner.items() if by != name and k.startswith(prefix)]
        assert not clash, (prefix, name, clash)


def test_negative_control_without_the_check_two_names_share_a_key(monkeypatch) -> None:
    monkeypatch.setattr(keys_module, "_check_tagged", lambda kind, name: None)
    assert BUILDER.lock("job{t}:waits").lock == BUILDER.lock("job{t}").waits


def test_the_admin_leaves_out_an_indexed_name_it_can_no_longer_build_keys_for(redis_client):
    """A tagged name an older version took ("job{t}:waits") may still be listed in an admin index
    after an upgrade: the readers leave it out (logged), as any entry they cannot use, rather
    than fail the page on the key builder's ValueError."""
    from django_redcoord.core.indexes import read_index
    from django_redcoord.core.locks import Lock

    keys = KeyBuilder("idx")
    lock = Lock("job{t}", ttl=30, client=redis_client, prefix="idx")
    assert lock.acquire(wait=0)
    old = "job{t}:waits"
    redis_client.hset(keys._index("locks", "", old), old, 2**40)  # as an older version wrote it
    assert set(read_index(redis_client, keys, "locks")) == {"job{t}"}
    lock.release()
