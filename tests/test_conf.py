import pytest

from django_redcoord import conf
from django_redcoord.exceptions import ConfigurationError
from django_redcoord.keys import KeyBuilder, validate_name


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
        ({"URL": "redis://x", "LOCK_TTL": 0}, "['LOCK_TTL'] must be a number of seconds > 0"),
        ({"URL": "redis://x", "LOCK_WAIT": -1}, "['LOCK_WAIT'] must be seconds >= 0"),
        ("redis://x", "must be a dict"),
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
    for key in (keys.lock, keys.fence, keys.queue, keys.waiters, keys.wake("t")):
        assert key.startswith("proj:") and key.count("{invoice:42}") == 1
    assert keys.index == "proj:index:locks"


@pytest.mark.parametrize(
    "name, error, message",
    [
        ("", ValueError, "must not be empty"),
        (42, TypeError, "must be a str, not int"),
        ("a{b}", ValueError, "contains '{}'"),
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
        "import sys, django_redcoord, django_redcoord.locks;"
        "assert 'django.conf' not in sys.modules, 'django.conf imported';"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PATH": ""})
    assert out.stdout.strip() == "ok", out.stderr
