"""``manage.py check --deploy``: what the configured Redis keeps (W003, W004, W005)."""

import pytest
from django.core.checks import run_checks

from django_redcoord.core.transport.clients import client_from_url


def redcoord(include_deployment_checks=True):
    return [m for m in run_checks(include_deployment_checks=include_deployment_checks) if m.id.startswith("redcoord.")]


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
            f"Redis at {server.url} uses maxmemory-policy {policy}: under memory pressure it evicts "
            "keys, and django_redcoord's locks, fencing counters and queued tasks with them."
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
    assert message.msg.startswith(f"Could not verify what Redis at redis://limited:***@127.0.0.1:{server.port}/0 keeps: CONFIG GET save was refused")


def test_the_deploy_checks_only_run_with_deploy(server):
    assert redcoord(include_deployment_checks=False) == []
    assert [m.id for m in redcoord()] == ["redcoord.W004"]


def test_the_embedded_server_and_an_unreachable_one_are_not_deploy_warnings(settings, tmp_path):
    from .redis_servers import free_port

    settings.REDCOORD = {"URL": "embedded", "EMBEDDED_DIR": str(tmp_path)}
    assert [m.id for m in run_checks(include_deployment_checks=True) if m.id in ("redcoord.W003", "redcoord.W004")] == []
    settings.REDCOORD = {"URL": f"redis://127.0.0.1:{free_port()}/0"}
    assert [m.id for m in redcoord()] == ["redcoord.W001"]


def test_every_problem_of_the_settings_is_its_own_e003(settings):
    settings.REDCOORD = {"URL": "redis://x", "LOCK_TTL": float("nan"), "SOCKET_TIMEOUT": float("inf"), "WORKER_PREFETCH": 0}
    messages = [m for m in run_checks() if m.id == "redcoord.E003"]
    assert [m.msg for m in messages] == [
        "REDCOORD['SOCKET_TIMEOUT'] must be a finite number of seconds from 0.01 up to 3600 (got inf)",
        "REDCOORD['LOCK_TTL'] must be a finite number of seconds from 0.001 up to 31536000 (got nan)",
        "REDCOORD['WORKER_PREFETCH'] must be a whole number from 1 to 1000 (got 0)",
    ]
