"""Fixtures of the deployment matrix: one Redis and one SQLite file for the run, one server per
deployment.

``site`` is parametrized over the four deployments (session-scoped, so pytest
runs every test of one deployment before starting the next, and each server
starts once); ``untrusted_site`` over the two Unix-socket deployments whose
settings do not trust the proxy. Each test starts on an empty Redis.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from django_redcoord.core.transport.clients import client_from_url

from ..support.redis_servers import RedisServer
from .servers import Deployment, nginx_binary, prepare_db

DEPLOYMENTS = {
    "wsgi-tcp": dict(server="gunicorn", socket=False),
    "wsgi-uds": dict(server="gunicorn", socket=True),
    "asgi-tcp": dict(server="uvicorn", socket=False),
    "asgi-uds": dict(server="uvicorn", socket=True),
}


@pytest.fixture(scope="session")
def deploy_redis():
    server = RedisServer().start()
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def deploy_db():
    folder = tempfile.mkdtemp(prefix="redcoord-deploy-db-")
    path = os.path.join(folder, "site.sqlite3")
    prepare_db(path)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def _start(name: str, deploy_redis, deploy_db, **options) -> Deployment:
    if options.get("socket") and nginx_binary() is None:
        pytest.fail(
            "the deployment matrix needs nginx (apt-get install nginx; .ci/run installs it)"
        )
    return Deployment(name, redis_url=deploy_redis.url, db=deploy_db, **options).start()


@pytest.fixture(scope="session", params=list(DEPLOYMENTS))
def deployment(request, deploy_redis, deploy_db):
    site = _start(request.param, deploy_redis, deploy_db, **DEPLOYMENTS[request.param])
    yield site
    site.stop()


@pytest.fixture(scope="session", params=["wsgi-uds-untrusted", "asgi-uds-untrusted"])
def untrusted_deployment(request, deploy_redis, deploy_db):
    server = "gunicorn" if request.param.startswith("wsgi") else "uvicorn"
    site = _start(
        request.param, deploy_redis, deploy_db, server=server, socket=True, trusted=False, workers=1
    )
    yield site
    site.stop()


@pytest.fixture
def deploy_client(deploy_redis):
    """A client of the matrix's Redis, emptied first (the servers keep their pools)."""
    client = client_from_url(deploy_redis.url)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def site(deployment, deploy_client):
    for process in deployment.processes:
        assert process.alive(), f"{deployment.name}: {process.name} died:\n{deployment.logs()}"
    deployment.redis = deploy_client
    return deployment


@pytest.fixture
def untrusted_site(untrusted_deployment, deploy_client):
    untrusted_deployment.redis = deploy_client
    return untrusted_deployment
