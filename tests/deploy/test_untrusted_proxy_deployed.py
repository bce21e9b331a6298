"""Behind nginx on a Unix socket with ``TRUSTED_PROXIES`` not naming it: refuse loudly, never lump.

gunicorn ``--bind unix:`` gives an empty ``REMOTE_ADDR`` and uvicorn ``--uds``
none at all. Counting all those requests as one client ("ip:") would let
one client lock the whole site out; a limit by IP must fail (a 500 whose
log says what to configure) while everything else keeps working.
"""

from __future__ import annotations

import pytest

from .servers import V4A, V4B, V6

pytestmark = pytest.mark.xdist_group("deploy")  # --dist loadgroup: one worker, servers started once


@pytest.mark.parametrize(
    "path", ["/rl/ip/", "/rl/aip/", "/mw/ip/", "/rl/user/", "/drf/concurrency/?hold=0"]
)
def test_a_limit_by_ip_refuses_loudly_instead_of_lumping_clients(untrusted_site, path):
    site = untrusted_site
    seen = [site.get(path, client=client).status for client in (V4A, V4A, V4A, V4B, V6)]
    assert seen == [500] * 5, (
        f"{site.name} {path}: {seen} (every client counted as one, or none limited)"
    )
    assert "TRUSTED_PROXIES" in site.logs(), (
        f"{site.name}: the error does not say what to configure:\n{site.logs()}"
    )


def test_views_without_a_limit_by_ip_keep_working(untrusted_site):
    site = untrusted_site
    assert site.get("/lock/fn/?hold=0", client=V4A).status == 200
    assert site.get("/whoami/", client=V4B).json()["remote_addr"] in (
        "",
        None,
    )  # as the proxy's socket gives it
    alice = site.sign_in("alice", client=V4A)
    assert (
        site.get("/rl/user/", client=V4A, cookie=alice).status == 200
    )  # a signed-in user is keyed by user
