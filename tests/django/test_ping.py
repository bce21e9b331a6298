"""``manage.py redcoord ping``: the server's product and version, the topology, the fast paths."""

from __future__ import annotations

import io
import re
import subprocess

import pytest
from django.core.management import CommandError, call_command

from ..support.redis_servers import server_binary


def ping() -> str:
    out = io.StringIO()
    call_command("redcoord", "ping", stdout=out)
    return out.getvalue()


def product_and_version() -> tuple[str, str]:
    """What the test servers are (the binary the fixtures start): ("Redis" | "Valkey", "x.y.z")."""
    text = subprocess.run([server_binary(), "--version"], capture_output=True, text=True).stdout
    return ("Valkey" if text.startswith("Valkey") else "Redis"), re.search(r"v=(\S+)", text).group(
        1
    )


def test_one_server_names_its_product_version_topology_and_fast_paths(redis_url):
    product, version = product_and_version()
    text = ping()
    assert f"Redis at {redis_url} answered PING" in text
    if product == "Valkey":  # Valkey says which Redis it is compatible with too
        assert re.search(
            rf"server: +Valkey {re.escape(version)} \(redis_version 7\.2\.\d+\), standalone mode",
            text,
        ), text
    else:
        assert re.search(rf"server: +Redis {re.escape(version)}, standalone mode", text), text
    assert re.search(r"topology: +one server \(master, 0 replica\(s\)\)", text), text
    assert re.search(r"fast paths: +CL\.THROTTLE no; hiredis parser (yes|no); RESP2", text), text


def test_cl_throttle_is_named_when_the_server_has_it(settings, redis_cell_url):
    settings.REDCOORD = {"URL": redis_cell_url, "KEY_PREFIX": "ping"}
    text = ping()
    assert "CL.THROTTLE yes (rate limits decided by the server)" in text, text


def test_resp3_is_named_when_the_client_speaks_it(settings, redis_url):
    settings.REDCOORD = {"URL": redis_url + "?protocol=3", "KEY_PREFIX": "ping"}
    assert re.search(r"fast paths: .*; RESP3$", ping(), re.M)


def test_sentinel_names_the_service_its_master_replicas_and_sentinels(settings, sentinel_topology):
    product, version = product_and_version()
    hosts = sentinel_topology.config["SENTINEL"]["HOSTS"]
    settings.REDCOORD = {"SENTINEL": {"HOSTS": hosts, "SERVICE": "mymaster"}, "KEY_PREFIX": "ping"}
    text = ping()
    assert "answered PING" in text and f"{product} {version}" in text, text
    master_port = sentinel_topology.master_url.split(":")[2].split("/")[0]
    sentinels = ", ".join(f"{h}:{p}" for h, p in hosts)
    assert (
        f"topology:   Sentinel service 'mymaster': master 127.0.0.1:{master_port} with 2 "
        f"replica(s), sentinels {sentinels}"
    ) in text, text


def test_cluster_names_its_primaries_and_replicas(settings, cluster_topology):
    product, version = product_and_version()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "ping"}
    text = ping()
    assert f"{product} {version}" in text and "cluster mode" in text, text
    primaries = sorted(f"127.0.0.1:{n.port}" for n in cluster_topology.primaries())
    assert f"Cluster of 6 nodes: 3 primaries ({', '.join(primaries)}), 3 replicas (" in text, text


def test_a_server_that_does_not_answer_is_a_command_error_naming_it(settings):
    settings.REDCOORD = {"URL": "redis://127.0.0.1:1/0", "CONNECT_TIMEOUT": 0.5}
    with pytest.raises(CommandError, match=r"127\.0\.0\.1:1"):
        ping()
