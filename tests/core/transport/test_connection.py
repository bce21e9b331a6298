import asyncio
import time

import pytest
import redis

from django_redcoord.core.exceptions import CoordinationUnavailable, RedcoordError
from django_redcoord.core.locks import Lock
from django_redcoord.core.transport.clients import async_client_like, client_from_url, get_client
from django_redcoord.core.transport.commands import command
from django_redcoord.core.transport.errors import describe, mask_url

from ...support import multiproc


def test_mask_url_hides_the_password_only():
    assert mask_url("redis://app:s3cret@db.example:6380/2") == "redis://app:***@db.example:6380/2"
    assert mask_url("rediss://:s3cret@h:6379/0") == "rediss://:***@h:6379/0"
    assert mask_url("redis://h:6379/0") == "redis://h:6379/0"


def test_describe_names_the_server_without_the_password():
    client = client_from_url("rediss://app:s3cret@db.example:6380/2")
    assert describe(client) == "rediss://app:***@db.example:6380/2"
    assert describe(client_from_url("unix:///tmp/x.sock")) == "unix:///tmp/x.sock"


def test_get_client_uses_the_configured_url(redis_url):
    client = get_client()
    assert client.ping()
    assert describe(client) == redis_url


def test_cache_alias_reuses_the_django_redis_server_settings(settings, redis_url):
    settings.REDCOORD = {"CACHE": "default", "KEY_PREFIX": "viacache"}
    client = get_client()
    assert describe(client) == redis_url
    with Lock("via-cache", client=None, wait=0) as lock:
        assert lock.keys.lock.startswith("viacache:")
        assert client.exists(lock.keys.lock)


def test_acl_user_and_password_work(redis_servers):
    port = redis_servers(1)[0].port
    admin = client_from_url(f"redis://127.0.0.1:{port}/0")
    admin.execute_command("ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all")
    client = client_from_url(f"redis://app:s3cret@127.0.0.1:{port}/0")
    assert client.acl_whoami() in ("app", b"app")
    with Lock("acl", client=client, wait=0) as lock:
        assert lock.token > 0
    bad = client_from_url(f"redis://app:wrong@127.0.0.1:{port}/0")
    with pytest.raises(CoordinationUnavailable) as info:
        Lock("acl", client=bad, wait=0).acquire()
    assert "app:***@127.0.0.1" in str(info.value) and "wrong" not in str(info.value)


def test_unix_socket_url_works(tmp_path):
    import subprocess

    from ...support.redis_servers import STARTED_PIDS, server_binary

    sock = tmp_path / "r.sock"
    proc = subprocess.Popen(
        [
            server_binary(),
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    STARTED_PIDS.append(proc.pid)
    try:
        client = client_from_url(f"unix://{sock}")
        deadline = time.monotonic() + 5
        while True:
            try:
                assert client.ping()
                break
            except CoordinationUnavailable:
                raise
            except redis.ConnectionError:
                assert time.monotonic() < deadline
                time.sleep(0.02)
        with Lock("over-unix", client=client, wait=0) as lock:
            assert lock.token > 0
    finally:
        proc.terminate()
        proc.wait(5)


def test_killed_server_raises_coordination_unavailable_naming_it_then_recovers(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=1.0, connect_timeout=1.0)
    lock = Lock("mid-use", ttl=5, wait=0, client=client, prefix="t")
    assert lock.acquire()
    server.kill()
    started = time.monotonic()
    with pytest.raises(CoordinationUnavailable) as info:
        lock.release()
    elapsed = time.monotonic() - started
    assert isinstance(info.value, RedcoordError)
    assert f"127.0.0.1:{server.port}" in str(info.value) and "release lock 'mid-use'" in str(
        info.value
    )
    assert info.value.operation == "release lock 'mid-use'"
    assert elapsed < 1.5, f"no silent retries expected, took {elapsed:.2f}s"
    server.start()  # same port, empty (no persistence)
    again = Lock("mid-use", ttl=5, wait=0, client=client, prefix="t")
    assert again.acquire() and again.token > 0
    again.release()


def test_fencing_tokens_keep_growing_across_a_redis_restart_and_a_lower_one_is_refused(
    redis_servers,
):
    from django_redcoord.core.exceptions import LockError

    server = redis_servers(1)[0]
    client = client_from_url(server.url)
    lock = Lock("ledger", ttl=5, wait=0, client=client, prefix="t")
    for _ in range(3):
        with lock:
            pass
    before = lock._fence
    server.restart()  # no persistence: the fencing counter is gone
    with lock:
        assert lock.token > before  # a hybrid logical clock: it keeps growing
    # Only a server clock behind the one that issued the last token could go
    # back (the one assumption); the grant is then refused and given back.
    lock._fence = lock._fence + 10**12
    with pytest.raises(LockError, match=r"went backwards"):
        lock.acquire()
    assert not lock.held and not lock.locked(), "the refused grant was given back"


def test_paused_server_is_reported_after_the_socket_timeout(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.5, connect_timeout=0.5)
    client.ping()
    server.pause()
    try:
        started = time.monotonic()
        with pytest.raises(CoordinationUnavailable) as info:
            Lock("paused", wait=0, client=client).acquire()
        assert "timed out" in str(info.value)
        assert time.monotonic() - started < 1.5
    finally:
        server.resume()


def test_rediss_tls_url_works(tmp_path):
    """A TLS-only server (Debian's redis-server is built with TLS) reached by rediss://."""
    import shutil
    import subprocess

    from ...support.redis_servers import STARTED_PIDS, free_port, server_binary

    openssl = shutil.which("openssl")
    assert openssl, ".ci/run installs openssl; it is needed to make the test certificate"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    proc = subprocess.Popen(
        [
            server_binary(),
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--tls-port",
            str(port),
            "--tls-cert-file",
            str(cert),
            "--tls-key-file",
            str(key),
            "--tls-ca-cert-file",
            str(cert),
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    STARTED_PIDS.append(proc.pid)
    try:
        client = client_from_url(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}")
        assert describe(client) == f"rediss://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 5
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert proc.poll() is None, "this redis-server was built without TLS support"
                assert time.monotonic() < deadline
                time.sleep(0.05)
        with Lock("over-tls", client=client, wait=0) as lock:
            assert lock.token > 0
        plain = client_from_url(f"redis://127.0.0.1:{port}/0", socket_timeout=1)
        with pytest.raises(CoordinationUnavailable):
            Lock("plain-to-tls", client=plain, wait=0).acquire()

        async def over_tls_async():  # the async client derived from it speaks TLS too
            aclient = async_client_like(client)
            async with Lock("over-tls-async", client=aclient, wait=0) as lock:
                token = lock.token
            await aclient.aclose()
            return token

        assert asyncio.run(over_tls_async()) > 0
    finally:
        proc.terminate()
        proc.wait(5)


def _client_id_after_fork(index, client):
    # the client object was built before the fork and its parent already used its pool
    with Lock("fork:child", ttl=5, wait=1, client=client):
        pass
    return command(client, "CLIENT", "ID", operation="test")


def test_forked_child_never_uses_its_parents_connection(redis_url):
    client = client_from_url(redis_url)
    with Lock("fork:parent", ttl=5, wait=1, client=client):
        pass
    parent_id = command(client, "CLIENT", "ID", operation="test")
    child_id = multiproc.start(_client_id_after_fork, client).result()
    assert child_id != parent_id
    # the parent's stream is still in step after the child ran
    assert command(client, "CLIENT", "ID", operation="test") == parent_id
    with Lock("fork:parent", ttl=5, wait=1, client=client) as lock:
        assert lock.owned()


def test_the_async_client_from_settings_matches_the_sync_one(settings, redis_url):
    """No client=: each event loop gets a redis.asyncio client built from the same REDCOORD."""
    from django_redcoord.core.transport.clients import get_async_client

    settings.REDCOORD = {**settings.REDCOORD, "SOCKET_TIMEOUT": 3.5}

    async def scenario():
        client = get_async_client()
        assert client is get_async_client()  # one per loop
        kwargs = client.connection_pool.connection_kwargs
        assert (
            kwargs["socket_timeout"] == 3.5
            and kwargs["port"] == get_client().connection_pool.connection_kwargs["port"]
        )
        async with Lock("from-settings", wait=0) as lock:
            return await lock.alocked(), lock.token

    held, token = asyncio.run(scenario())
    assert held and token > 0
    assert not Lock("from-settings").locked()
