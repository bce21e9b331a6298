"""``manage.py check --deploy``: what the configured Redis keeps (W003, W004, W005)."""

import pytest
from django.core.checks import run_checks

from django_redcoord.core.transport.clients import client_from_url


def redcoord(include_deployment_checks=True):
    return [
        m
        for m in run_checks(include_deployment_checks=include_deployment_checks)
        if m.id.startswith("redcoord.")
    ]


@pytest.fixture
def server(redis_servers, settings):
    server = redis_servers(1)[0]
    settings.REDCOORD = {"URL": server.url}
    yield server
    # a server left with appendonly on finishes its AOF before exiting: seconds of teardown
    client_from_url(server.url).config_set("appendonly", "no")


def test_an_evicting_policy_is_w003(server):
    client = client_from_url(server.url)
    client.config_set("appendonly", "yes")  # persistence is not the point here
    for policy in ("allkeys-lru", "volatile-lru", "volatile-ttl"):
        client.config_set("maxmemory-policy", policy)
        [message] = redcoord()
        assert message.id == "redcoord.W003"
        assert message.msg == (
            f"Redis at {server.url} uses maxmemory-policy {policy}: under memory pressure it "
            "evicts keys, and django_redcoord's locks, fencing counters and queued tasks with "
            "them."
        )
        assert "maxmemory-policy noeviction" in message.hint
    client.config_set("maxmemory-policy", "noeviction")
    assert redcoord() == []


def test_no_persistence_is_w004_and_aof_or_save_points_clear_it(server):
    client = client_from_url(server.url)  # the test servers start with --save "" --appendonly no
    [message] = redcoord()
    assert message.id == "redcoord.W004"
    assert message.msg == (
        f"Redis at {server.url} persists nothing (appendonly no, no RDB save points): a restart "
        "loses every queued task and result."
    )
    client.config_set("save", "900 1")
    assert redcoord() == []
    client.config_set("save", "")
    client.config_set("appendonly", "yes")
    assert redcoord() == []


def test_a_user_that_may_not_read_the_config_is_w005(server, settings):
    client = client_from_url(server.url)
    client.execute_command("ACL", "SETUSER", "limited", "on", ">pw", "~*", "&*", "+@all", "-config")
    settings.REDCOORD = {"URL": f"redis://limited:pw@127.0.0.1:{server.port}/0"}
    [message] = redcoord()
    assert message.id == "redcoord.W005"
    assert message.msg.startswith(
        f"Could not verify what Redis at redis://limited:***@127.0.0.1:{server.port}/0 keeps: "
        "CONFIG GET save was refused"
    )


def test_the_deploy_checks_only_run_with_deploy(server):
    assert redcoord(include_deployment_checks=False) == []
    assert [m.id for m in redcoord()] == ["redcoord.W004"]


def test_the_embedded_server_and_an_unreachable_one_are_not_deploy_warnings(settings, tmp_path):
    from ..support.redis_servers import free_port

    settings.REDCOORD = {"URL": "embedded", "EMBEDDED_DIR": str(tmp_path)}
    assert [
        m.id
        for m in run_checks(include_deployment_checks=True)
        if m.id in ("redcoord.W003", "redcoord.W004")
    ] == []
    settings.REDCOORD = {"URL": f"redis://127.0.0.1:{free_port()}/0"}
    assert [m.id for m in redcoord()] == ["redcoord.W001"]


def test_every_problem_of_the_settings_is_its_own_e003(settings):
    settings.REDCOORD = {
        "URL": "redis://x",
        "LOCK_TTL": float("nan"),
        "SOCKET_TIMEOUT": float("inf"),
        "WORKER_PREFETCH": 0,
    }
    messages = [m for m in run_checks() if m.id == "redcoord.E003"]
    assert [m.msg for m in messages] == [
        "REDCOORD['SOCKET_TIMEOUT'] must be a finite number of seconds from 0.01 up to 3600 (got "
        "inf)",
        "REDCOORD['LOCK_TTL'] must be a finite number of seconds from 0.001 up to 31536000 (got "
        "nan)",
        "REDCOORD['WORKER_PREFETCH'] must be a whole number from 1 to 1000 (got 0)",
    ]


# -- the quorum lock masters (REDLOCK) -----------------------------------------------------------


@pytest.fixture
def redlock(redis_servers, settings, redis_url):
    servers = redis_servers(3)
    for s in servers:  # persistence is not the point unless a test says so
        client_from_url(s.url).config_set("save", "900 1")
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": [s.url for s in servers]}
    return servers


def ids(messages):
    return sorted(
        m.id
        for m in messages
        if m.id.startswith(("redcoord.E017", "redcoord.W017", "redcoord.I018"))
    )


def test_an_evicting_redlock_master_is_w017_and_one_that_persists_nothing_is_i018(redlock):
    assert ids(redcoord()) == []
    client = client_from_url(redlock[1].url)
    client.config_set("maxmemory-policy", "volatile-lru")
    [message] = [m for m in redcoord() if m.id == "redcoord.W017"]
    assert message.msg.startswith(
        f"Redlock master 2 of 3 ({redlock[1].url}) uses maxmemory-policy volatile-lru: "
    )
    assert "maxmemory-policy noeviction" in message.hint
    assert ids(redcoord(include_deployment_checks=False)) == []  # deploy only
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("save", "")
    [message] = [m for m in redcoord() if m.id == "redcoord.I018"]
    assert message.msg.startswith(
        f"Redlock master 2 of 3 ({redlock[1].url}) persists nothing: after each restart it "
        "refuses quorum grants for REDLOCK_MAX_TTL (60 s)"
    )
    client.config_set("appendonly", "yes")
    assert ids(redcoord()) == []
    client.config_set("appendonly", "no")


def test_one_server_named_twice_in_redlock_is_e017(redlock, settings, redis_url):
    a, b, _ = redlock
    for second in (f"redis://127.0.0.1:{a.port}/1", f"redis://localhost:{a.port}/0"):
        settings.REDCOORD = {"URL": redis_url, "REDLOCK": [a.url, b.url, second]}
        [message] = [
            m
            for m in redcoord(include_deployment_checks=False)
            if m.id.startswith("redcoord.") and m.level >= 40
        ]
        assert message.id == "redcoord.E017"
        assert message.msg.startswith(
            f"REDCOORD['REDLOCK'] masters 1 ({a.url}) and 3 ({second}) are one Redis server "
            "(run_id "
        )
    settings.REDCOORD = {"URL": redis_url, "REDLOCK": [s.url for s in redlock]}
    assert [m for m in redcoord() if m.id == "redcoord.E017"] == []
