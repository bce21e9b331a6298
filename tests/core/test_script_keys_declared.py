"""Every script declares every key it touches in KEYS (tests/support/lua_keys.py).

The static check reads every script as the server gets it; its negative
controls are scripts with a computed key that it must catch, its positive
controls the shapes our scripts use that it must accept. The same rule is
enforced at run time by a prelude (``tests/support/strict_keys.py`` runs whole suites
with it: `make test-valkey`), checked here on a real server.
"""

from __future__ import annotations

from importlib import resources

import pytest
import redis

from django_redcoord.core.transport.scripts import _SHARED

from ..support import lua_keys


@pytest.fixture(scope="module")
def scripts():
    return lua_keys.discover_scripts()


def test_every_script_declares_every_key_it_touches(scripts):
    assert len(scripts) > 40, sorted(scripts)  # the discovery found our scripts
    undeclared = {}
    for name, script in sorted(scripts.items()):
        found = lua_keys.check(lua_keys.parts_of(script))
        if found:
            undeclared[name] = [str(f) for f in found]
    unexpected = {n: f for n, f in undeclared.items() if n not in lua_keys.KNOWN_UNDECLARED}
    assert not unexpected, (
        "scripts touching keys not in KEYS (pass each key in KEYS, built by core/keys.py):\n"
        + "\n".join(f"{n}: {line}" for n, lines in unexpected.items() for line in lines)
    )
    fixed = sorted(set(lua_keys.KNOWN_UNDECLARED) - set(undeclared))
    assert not fixed, (
        f"these scripts declare every key now: take them out of KNOWN_UNDECLARED: {fixed}"
    )


def test_every_lua_file_is_checked_as_part_of_a_script(scripts):
    used = {name for s in scripts.values() for name in (s.name, *s.includes)} | set(_SHARED)
    root = resources.files("django_redcoord.core").joinpath("lua")
    files = {
        f"{family.name}/{f.name[:-4]}"
        for family in root.iterdir()
        if family.is_dir()
        for f in family.iterdir()
        if f.name.endswith(".lua")
    }
    assert files - used == set(), "Lua files no Script runs (so never checked)"


def test_the_check_looks_at_the_keys_of_every_call(scripts):
    """Not vacuous: it finds the key arguments our scripts pass (hundreds of them)."""
    checked = 0
    for script in scripts.values():
        analysed = lua_keys.Script(lua_keys.parts_of(script))
        checked += sum(
            1
            for i, t in enumerate(analysed.toks)
            if t.value == "redis"
            and analysed.toks[i + 2].value in ("call", "pcall")
            and analysed.owner[i].live
        )
    assert checked > 500


CAUGHT = {
    "a concatenated key": "redis.call('SET', KEYS[1] .. ':copy', 1)",
    "a key from ARGV": "redis.call('DEL', ARGV[1])",
    "a key read from a hash": "local other = redis.call('HGET', KEYS[1], "
    "'next')\nredis.call('LPUSH', other, 1)",
    "a key made by a helper": "local function key_of(x) return 'p:' .. x end\nredis.call('GET', "
    "key_of(ARGV[1]))",
    "a helper's parameter given a computed key once": (
        "local function touch(k) redis.call('PEXPIRE', k, 10) end\ntouch(KEYS[1])\ntouch(KEYS[1] "
        ".. ':x')"
    ),
    "a local reassigned a computed key": "local k = KEYS[1]\nif ARGV[1] then k = 'other' "
    "end\nredis.call('GET', k)",
    "keys from a zset's members": "for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do "
    "redis.call('DEL', k) end",
    "a table of computed keys unpacked": "local t = {KEYS[1], ARGV[1]}\nredis.call('DEL', "
    "unpack(t))",
    "a table filled by table.insert": "local t = {}\ntable.insert(t, 'x:' .. "
    "ARGV[1])\nredis.call('EXISTS', unpack(t))",
    "the second key of RENAME": "redis.call('RENAME', KEYS[1], ARGV[1])",
    "a key of XREADGROUP after STREAMS": "redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', "
    "ARGV[1], '>')",
    "a command named by a value": "local c = 'GET'\nredis.call(c, ARGV[1])",
    "a command the check does not know": "redis.call('SUNIONSTORE', KEYS[1], KEYS[2])",
    "a key used through pcall": "redis.pcall('GET', 'fixed')",
    "a key through Lua's pcall(redis.call, ...)": "local ok = pcall(redis.call, 'XGROUP', "
    "'CREATE', ARGV[1], 'g', '$')",
    "redis.call passed around": "local f = redis.call\nf('GET', KEYS[1])",
}

ACCEPTED = {
    "KEYS[i] and aliases": "local a, b = KEYS[1], KEYS[2]\nredis.call('SET', a, "
    "1)\nredis.call('RENAME', a, b)",
    "KEYS[#KEYS]": "redis.call('EXISTS', KEYS[#KEYS])",
    "helper parameters given keys at every call": (
        "local function touch(k, ms) redis.call('PEXPIRE', k, ms) end\ntouch(KEYS[1], "
        "5)\ntouch(KEYS[2], ARGV[1])"
    ),
    "a helper given a key or nothing": (
        "local function wake(w) if w then redis.call('LPUSH', w, 1) end "
        "end\nwake(KEYS[1])\nwake(nil)\nwake()"
    ),
    "a helper called through pcall": "local function get(k) return redis.call('GET', k) "
    "end\nlocal ok = pcall(get, KEYS[1])",
    "a or b of keys": "local k = ARGV[1] == 'x' and KEYS[1] or KEYS[2]\nredis.call('DEL', k)",
    "ipairs over KEYS and over a table of keys": (
        "for _, k in ipairs(KEYS) do redis.call('DEL', k) end\n"
        "for _, k in ipairs({KEYS[1], KEYS[2]}) do redis.call('PEXPIRE', k, 5) end"
    ),
    "unpack(KEYS)": "redis.call('DEL', unpack(KEYS))\nredis.call('EXISTS', unpack(KEYS, 2))",
    "values and fields are not keys": "redis.call('HSET', KEYS[1], 'f:' .. ARGV[1], ARGV[2] .. "
    "'x')",
    "Lua's pcall(redis.call, ...) with declared keys": "local ok, err = pcall(redis.call, "
    "'XGROUP', 'CREATE', KEYS[1], 'g', '$')",
    "XREADGROUP's declared stream": "redis.call('XREADGROUP', 'GROUP', 'g', ARGV[1], 'COUNT', 1, "
    "'STREAMS', KEYS[1], '>')",
    "a command named by a value, its key declared": "local w = {'HSET', 'f', 1}\nredis.call(w[1], "
    "KEYS[1], w[2], w[3])",
    "commands without keys": "local t = redis.call('TIME')\nredis.call('INFO', 'server')",
    "an unused helper with a computed key": "local function never() redis.call('GET', 'x' .. "
    "ARGV[1]) end",
    "strings and comments that look like calls": (
        "-- redis.call('GET', 'x')\nlocal s = \"redis.call('GET', 'x')\"\nlocal l = "
        "[[redis.call('DEL', ARGV[1])]]"
    ),
}


@pytest.mark.parametrize("case", sorted(CAUGHT))
def test_negative_control_a_computed_key_is_caught(case):
    found = lua_keys.check([("sample.lua", CAUGHT[case])])
    assert found, f"the check missed {case}"


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_the_shapes_our_scripts_use_are_accepted(case):
    assert lua_keys.check([("sample.lua", ACCEPTED[case])]) == []


def test_a_finding_names_the_file_line_command_and_argument():
    (found,) = lua_keys.check(
        [("a.lua", "-- header\n"), ("b.lua", "local x = 1\nredis.call('GET', 'p:' .. x)")]
    )
    assert str(found) == "b.lua:2: GET key argument `'p:' .. x` is not one of KEYS"


# -- the same rule at run time, on a real server -----------------------------------------------


def test_the_strict_prelude_refuses_an_undeclared_key_and_lets_declared_ones_through(redis_client):
    good = lua_keys.with_prelude(
        "redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1])"
    )
    assert redis_client.eval(good, 1, "k:{a}", "v") == b"v"
    assert (
        redis_client.eval(
            lua_keys.with_prelude("return redis.pcall('DEL', unpack(KEYS))"), 2, "x", "y"
        )
        == 0
    )
    assert (
        redis_client.eval(
            lua_keys.with_prelude(
                "return redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM')"
            ),
            1,
            "s:{a}",
        )
        == b"OK"
    )  # a subcommand, then the key
    for body in (
        "return redis.call('GET', 'other')",
        "return redis.pcall('DEL', KEYS[1], 'other')",
        "return redis.call('XREAD', 'COUNT', 1, 'STREAMS', KEYS[1], 'other', '0', '0')",
        "return redis.call('RENAME', KEYS[1], 'other')",
    ):
        with pytest.raises(redis.ResponseError, match="REDCOORD-UNDECLARED-KEY .* touches other"):
            redis_client.eval(lua_keys.with_prelude(body), 1, "k:{a}")
    assert redis_client.exists("other") == 0  # refused before it ran
    # helpers keep working through the proxy; a #!lua line (Redis 7+) stays first
    body = "return redis.status_reply(redis.sha1hex('x'))"
    assert (
        redis_client.eval(lua_keys.with_prelude(body), 0)
        == b"11f6ad8ec52a2984abaafd7c3b516503785c2072"
    )
    if int(redis_client.info("server")["redis_version"].split(".")[0]) >= 7:
        flagged = lua_keys.with_prelude("#!lua flags=no-writes\n" + body)
        assert flagged.startswith("#!lua flags=no-writes\nlocal redis = ")
        assert redis_client.eval(flagged, 0) == b"11f6ad8ec52a2984abaafd7c3b516503785c2072"


def test_a_known_exception_is_refused_at_run_time_too(redis_client, scripts):
    """queues/depths reads the processing lists named in its consumers zset: the prelude refuses
    it."""
    redis_client.zadd("q:{a}:consumers", {"q:{a}:processing:w1": 1})
    source = lua_keys.with_prelude(scripts["queues/depths"].source)
    with pytest.raises(
        redis.ResponseError, match="REDCOORD-UNDECLARED-KEY LLEN touches q:{a}:processing:w1"
    ):
        redis_client.eval(
            source, 4, "q:{a}:ready", "q:{a}:delayed", "q:{a}:dead", "q:{a}:consumers"
        )


def test_the_key_positions_agree_with_the_servers_command_table(redis_client):
    """COMMAND_KEYS against COMMAND INFO's first key, last key and step (this server's version)."""
    wrong = []
    for name, spec in sorted(lua_keys.COMMAND_KEYS.items()):
        if name in lua_keys.NOT_COMPARED:
            continue
        info = redis_client.execute_command("COMMAND", "INFO", name)[name.lower()]
        first, last, step = info["first_key_pos"], info["last_key_pos"], info["step_count"]
        if spec == "streams":
            ok = "movablekeys" in info["flags"]
        else:
            ok = (first, last, step) == ((0, 0, 0) if spec is None else tuple(spec[1:]))
        if not ok:
            wrong.append(f"{name}: ours {spec}, the server's {(first, last, step)}")
    assert not wrong
