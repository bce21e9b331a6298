import os
import subprocess
import sys
from pathlib import Path

import pytest

from django_redcoord.checks import check_settings
from django_redcoord.core.transport.errors import mask_url

ROOT = Path(__file__).resolve().parents[2]


def ids(messages):
    return [m.id for m in messages]


def test_configured_and_reachable_redis_passes(settings):
    assert check_settings() == []


def test_no_redis_configured_is_e001(settings):
    settings.REDCOORD = {}
    [message] = check_settings()
    assert message.id == "redcoord.E001"
    assert message.msg == "No Redis is configured for django_redcoord."
    assert "REDCOORD = {'URL': 'redis://127.0.0.1:6379/0'}" in message.hint


def test_cache_that_is_not_django_redis_is_e002(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.REDCOORD = {"CACHE": "default"}
    [message] = check_settings()
    assert message.id == "redcoord.E002"
    assert "'django.core.cache.backends.locmem.LocMemCache'" in message.msg
    settings.REDCOORD = {"CACHE": "missing"}
    [message] = check_settings()
    assert message.id == "redcoord.E002" and "is not defined in settings.CACHES" in message.msg


def test_malformed_settings_are_e003(settings):
    settings.REDCOORD = {"URL": "http://localhost"}
    [message] = check_settings()
    assert message.id == "redcoord.E003"
    assert "must start with redis://, rediss:// or unix://" in message.msg


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"URL": "redis://127.0.0.1:abc/0"}, "Port could not be cast to integer"),
        ({"URL": "redis://127.0.0.1:99999/0"}, "Port out of range"),
        ({"URL": "redis://127.0.0.1/0?ssl_ca_cert=/x.pem"}, "'ssl_ca_cert'"),
        ({"URL": "redis://[::1/0"}, "Invalid IPv6 URL"),
        ({"URL": "redis://u:secret@127.0.0.1:6379/abc"}, "the database 'abc' is not a number"),
        ({"URL": "redis://u:secret@127.0.0.1:abc/0"}, "<unparseable url>"),
        (
            {
                "URL": "redis://127.0.0.1:1/0",
                "REDLOCK": ["redis://a:1/0", "redis://b:abc/0", "redis://c:1/0"],
            },
            "REDCOORD['REDLOCK'][1] 'redis://b:abc/0' is not a URL",
        ),
        ({"URL": "redis://127.0.0.1:1/0", "EMBEDDED_DIR": 5}, "['EMBEDDED_DIR'] must be"),
        # redis-py's own errors for some options (RedisError, not ValueError)
        ({"URL": "redis://127.0.0.1:1/0?protocol=9"}, "protocol must be either 2 or 3"),
        ({"URL": "rediss://127.0.0.1:1/0?ssl_cert_reqs=bogus"}, "Invalid SSL Certificate"),
        (
            {
                "URL": "redis://127.0.0.1:1/0",
                "REDLOCK": ["redis://a:1/0?protocol=9", "redis://b:1/0"],
            },
            "REDCOORD['REDLOCK'][0]",
        ),
        ({"URL": "unix://"}, "it names no socket path"),
        ({"URL": "unix:///"}, "it names no socket path"),
        # (redis-py refuses these only when it connects: check's ping crashed)
        ({"URL": "redis://127.0.0.1:1/0?socket_timeout=-1"}, "socket_timeout=-1 is not a number"),
        ({"URL": "redis://127.0.0.1:1/0?socket_connect_timeout=nan"}, "is not a number of seconds"),
    ],
)
def test_a_url_redis_py_cannot_use_is_e003_not_a_traceback(settings, config, reason):
    # These passed the checks and then crashed check (and runserver) with redis-py's ValueError
    # or TypeError when it built the client, hiding every later message.
    settings.REDCOORD = config
    messages = check_settings()
    assert [m.id for m in messages] == ["redcoord.E003"], messages
    assert reason in messages[0].msg and "secret" not in messages[0].msg, messages[0].msg


def test_unreachable_redis_is_w001_with_the_password_masked(settings):
    from ..support.redis_servers import free_port

    url = f"redis://app:topsecret@127.0.0.1:{free_port()}/0"
    settings.REDCOORD = {"URL": url}
    [message] = check_settings()
    assert message.id == "redcoord.W001"
    assert mask_url(url) in message.msg and "topsecret" not in message.msg


def test_embedded_with_debug_false_is_w002(settings, tmp_path):
    settings.DEBUG = False
    settings.REDCOORD = {"URL": "embedded", "EMBEDDED_DIR": str(tmp_path)}
    assert ids(check_settings()) == ["redcoord.W002"]
    settings.DEBUG = True
    assert check_settings() == []


def _manage_check(env_url):
    env = {**os.environ, "REDCOORD_REDIS_URL": env_url, "DEMO_DB_PATH": ":memory:"}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_manage_py_check_passes_on_testproject(redis_url):
    result = _manage_check(redis_url)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_manage_py_check_prints_the_error_id_and_how_to_fix_it():
    result = _manage_check("http://wrong-scheme:6379")
    assert result.returncode != 0
    assert "redcoord.E003" in result.stderr
    assert "must start with redis://, rediss:// or unix://" in result.stderr
    assert "HINT: See docs/configuration.md" in result.stderr


def test_redlock_masters_are_checked_each_unreachable_one_named(settings, redis_servers, redis_url):
    from ..support.redis_servers import free_port

    up = [s.url for s in redis_servers(2)]
    down = f"redis://app:topsecret@127.0.0.1:{free_port()}/0"
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": [up[0], down, up[1]]}
    [message] = check_settings()
    assert message.id == "redcoord.W006"
    assert message.msg.startswith(f"Redlock master 2 of 3 ({mask_url(down)}) did not answer: ")
    assert "topsecret" not in message.msg and "need 2 of the 3 masters; 2 answer" in message.hint
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": up}
    [message] = check_settings()
    assert message.id == "redcoord.W007" and "survives the loss of 0" in message.msg
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": [up[0], up[0], up[1]]}
    [message] = check_settings()
    assert message.id == "redcoord.E003" and "names a master twice" in message.msg
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": "redis://a:6379/0"}
    [message] = check_settings()
    assert (
        message.id == "redcoord.E003"
        and "must be a list of the quorum lock masters' URLs" in message.msg
    )


def test_a_replica_timeout_that_does_not_fit_the_socket_timeout_is_e019(settings, redis_url):
    from django.core.checks import run_checks

    settings.REDCOORD = {"URL": redis_url, "SOCKET_TIMEOUT": 1.0, "REPLICA_TIMEOUT": 1.0}
    [message] = [m for m in run_checks() if m.id == "redcoord.E019"]
    assert message.msg.startswith(
        "REDCOORD['REPLICA_TIMEOUT'] (1 s) does not fit within REDCOORD['SOCKET_TIMEOUT'] (1 s)"
    )
    assert message.hint == "Set REPLICA_TIMEOUT to at most 0.5 s, or raise SOCKET_TIMEOUT."
    settings.REDCOORD = {"URL": redis_url, "SOCKET_TIMEOUT": 1.0, "REPLICA_TIMEOUT": 0.5}
    assert [m for m in run_checks() if m.id == "redcoord.E019"] == []
    settings.REDCOORD = {
        "URL": redis_url,
        "SOCKET_TIMEOUT": 1.0,
    }  # the default fits whatever the socket timeout
    assert [m for m in run_checks() if m.id == "redcoord.E019"] == []
    from django_redcoord.core.locks import Lock

    assert Lock("x", replicas=1).replica_timeout == 0.5
    settings.REDCOORD = {"URL": redis_url, "SOCKET_TIMEOUT": 1.0, "REPLICA_TIMEOUT": 1.0}
    import pytest

    with pytest.raises(
        ValueError,
        match=r"replica_timeout=1 s does not fit within REDCOORD\['SOCKET_TIMEOUT'\] \(1 s\)",
    ):
        Lock("x", replicas=1)
