import binascii

import pytest

from django_redcoord import conf
from django_redcoord.core.exceptions import ConfigurationError
from django_redcoord.core.keys import KeyBuilder, validate_name


def test_defaults_are_documented_values():
    config = conf.validate({"URL": "redis://localhost:6379/0"})
    assert config["KEY_PREFIX"] == "redcoord"
    assert config["LOCK_TTL"] == 30.0 and config["LOCK_WAIT"] == 10.0
    assert config["SOCKET_TIMEOUT"] == 5.0


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"URL": "http://x"}, "must start with redis://, rediss:// or unix://"),
        ({"URL": "redis://x", "CACHE": "default"}, "set exactly one of them"),
        ({"URLS": "redis://x"}, "unknown REDCOORD key(s) URLS"),
        ({"URL": "redis://x", "KEY_PREFIX": "a{b}"}, "KEY_PREFIX must be"),
        (
            {"URL": "redis://x", "LOCK_TTL": 0},
            "['LOCK_TTL'] must be a finite number of seconds from 0.001 up to 31536000 (got 0)",
        ),
        ({"URL": "redis://x", "LOCK_WAIT": -1}, "['LOCK_WAIT'] must be seconds >= 0"),
        ("redis://x", "must be a dict"),
        (
            {"URL": "redis://x", "RATE_LIMITS": [{"path": "/a/", "policy": "1/s", "name": "a b"}]},
            "REDCOORD['RATE_LIMITS'][0]['name'] 'a b' contains ' '",
        ),
        ({"URL": "redis://x", "RATE_LIMITS": [{"path": "a/", "policy": "1/x"}]}, "['policy']: "),
        (  # an empty header name keyed by IP without a word
            {
                "URL": "redis://x",
                "RATE_LIMITS": [{"path": "/a/", "policy": "1/s", "key": "header:"}],
            },
            "['key'] must be 'ip', 'user' or 'header:<Name>', not 'header:'",
        ),
    ],
)
def test_bad_settings_raise_a_message_that_says_what_is_allowed(bad, message):
    with pytest.raises(ConfigurationError) as info:
        conf.validate(bad)
    assert message in str(info.value)


def test_override_settings_clears_the_cached_config(settings):
    settings.REDCOORD = {"URL": "redis://127.0.0.1:1/0", "KEY_PREFIX": "first"}
    assert conf.get_config()["KEY_PREFIX"] == "first"
    settings.REDCOORD = {"URL": "redis://127.0.0.1:1/0", "KEY_PREFIX": "second"}
    assert conf.get_config()["KEY_PREFIX"] == "second"


def test_every_lock_key_carries_the_prefix_and_one_hash_tag():
    keys = KeyBuilder("proj").lock("invoice:42")
    for key in (keys.lock, keys.queue, keys.wake("t")):
        assert key.startswith("proj:") and key.count("{invoice:42}") == 1
    # the index bucket follows the name's CRC16, like a Cluster slot
    assert keys.index == f"proj:index:locks:{binascii.crc_hqx(b'invoice:42', 0) % 256}"


@pytest.mark.parametrize(
    "name, error, message",
    [
        ("", ValueError, "must not be empty"),
        (42, TypeError, "must be a str, not int"),
        ("a{b", ValueError, "has misplaced braces"),
        ("{a}{b}", ValueError, "only as one non-empty {tag}"),
        ("a*b", ValueError, "contains '*'"),
        ("a b", ValueError, "contains ' '"),
        ("x" * 201, ValueError, "at most 200"),
    ],
)
def test_names_are_restricted_to_a_safe_charset(name, error, message):
    with pytest.raises(error) as info:
        validate_name(name)
    assert message in str(info.value)


def test_importing_the_package_touches_neither_settings_nor_redis():
    import subprocess
    import sys

    code = (
        "import sys, django_redcoord, django_redcoord.core.locks.lock;"
        "assert 'django.conf' not in sys.modules, 'django.conf imported';"
        "print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PATH": ""}
    )
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), float("-inf"), True, "5", None, -1, 0, 10**9]
)
def test_nan_infinity_and_out_of_range_seconds_are_refused(value):
    problems = conf.problems({"URL": "redis://x", "SOCKET_TIMEOUT": value})
    assert problems == [
        "REDCOORD['SOCKET_TIMEOUT'] must be a finite number of seconds from 0.01 up to 3600 (got "
        f"{value!r})"
    ]


def test_every_problem_is_reported_at_once():
    bad = {
        "URL": "http://x",
        "LOCK_TTL": float("nan"),
        "WORKER_PREFETCH": 0,
        "LOCK_WAIT": float("inf"),
        "QUEUE_DEAD_LETTER_LIMIT": 0,
        "NOPE": 1,
    }
    found = conf.problems(bad)
    assert len(found) == 6, found
    with pytest.raises(ConfigurationError) as info:
        conf.validate(bad)
    assert info.value.problems == found and str(info.value) == "; ".join(found)


@pytest.mark.parametrize(
    "settings_, message",
    [
        (
            {"WORKER_HEARTBEAT": 5, "WORKER_TIMEOUT": 5},
            "REDCOORD['WORKER_TIMEOUT'] (5 s) must be longer than REDCOORD['WORKER_HEARTBEAT'] (5 "
            "s)",
        ),
        (
            {"QUEUE_RETRY_DELAY": 10, "QUEUE_RETRY_MAX_DELAY": 1},
            "REDCOORD['QUEUE_RETRY_DELAY'] (10 s) must not exceed "
            "REDCOORD['QUEUE_RETRY_MAX_DELAY'] (1 s)",
        ),
        (
            {"LEADER_LEASE": 5, "LEADER_RENEW_DEADLINE": 6},
            "REDCOORD LEADER_*: lease (5 s) must be longer than renew_deadline (6 s)",
        ),
    ],
)
def test_related_settings_must_agree(settings_, message):
    [problem] = conf.problems({"URL": "redis://x", **settings_})
    assert problem.startswith(message)


def test_a_relation_is_not_reported_for_a_key_already_wrong():
    assert conf.problems({"URL": "redis://x", "WORKER_TIMEOUT": float("nan")}) == [
        "REDCOORD['WORKER_TIMEOUT'] must be a finite number of seconds from 0.05 up to 86400 (got "
        "nan)"
    ]


def test_the_dead_letter_limit_setting():
    assert conf.validate({"URL": "redis://x"})["QUEUE_DEAD_LETTER_LIMIT"] == 10_000
    assert (
        conf.validate({"URL": "redis://x", "QUEUE_DEAD_LETTER_LIMIT": None})[
            "QUEUE_DEAD_LETTER_LIMIT"
        ]
        is None
    )
    assert conf.problems({"URL": "redis://x", "QUEUE_DEAD_LETTER_LIMIT": 1.5}) == [
        "REDCOORD['QUEUE_DEAD_LETTER_LIMIT'] must be a whole number from 1 to 1000000000, "
        "or None to keep every dead letter (got 1.5)"
    ]


def test_a_refused_names_message_says_ascii_and_lists_its_characters_in_order():
    from django_redcoord.core.keys import validate_name

    with pytest.raises(ValueError) as refused:
        validate_name("ü名前 x", "lock name")
    message = str(refused.value)
    assert "contains 'ü名前 '" in message  # as they appear in the name, each once
    assert "allowed characters are ASCII letters, digits and" in message
