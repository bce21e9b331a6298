"""Behind a trusted TCP proxy that forwards no usable client address: refused, never lumped.

Red-team finding (issue 31 item 2, "never lump"): a request from a proxy in
TRUSTED_PROXIES with no X-Forwarded-For, an empty one or a garbage one was
counted as the proxy's own address, so all its clients shared one budget.
Now it is RateLimitMisconfigured (an ImproperlyConfigured) naming the header,
as for the proxy on a Unix socket.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.http import JsonResponse
from django.urls import path

from django_redcoord import rate_limit
from django_redcoord.http import RateLimitMisconfigured, client_ip

pytestmark = pytest.mark.urls(__name__)


@rate_limit("1/m", key="ip", name="rt-proxy-ip")
def by_ip(request):
    return JsonResponse({"ok": True})


urlpatterns = [path("ip/", by_ip)]


def trust(settings, *proxies):
    settings.REDCOORD = {**settings.REDCOORD, "TRUSTED_PROXIES": list(proxies)}


@pytest.mark.parametrize("forwarded", [None, "", "garbage", " , ,", "unknown", "10.0.0.3, garbage"])
@pytest.mark.parametrize("proxy", ["10.0.0.1", "::1", "::ffff:10.0.0.1"])
def test_a_trusted_tcp_proxy_without_a_usable_forwarded_for_is_refused(
    rf, settings, proxy, forwarded
):
    trust(settings, "10.0.0.0/8", "::1")
    extra = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    request = rf.get("/", REMOTE_ADDR=proxy, **extra)
    with pytest.raises(RateLimitMisconfigured, match="X-Forwarded-For") as caught:
        client_ip(request)
    assert "trusted proxy" in str(caught.value)


def test_the_view_refuses_loudly_instead_of_counting_every_client_as_the_proxy(client, settings):
    trust(settings, "10.0.0.0/8")
    with pytest.raises(ImproperlyConfigured, match="X-Forwarded-For"):
        client.get("/ip/", REMOTE_ADDR="10.0.0.1")
    # what the proxy does forward still counts per client
    assert (
        client.get("/ip/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.1").status_code
        == 200
    )
    assert (
        client.get("/ip/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.2").status_code
        == 200
    )
    assert (
        client.get("/ip/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.1").status_code
        == 429
    )


def test_an_untrusted_peer_is_its_own_client_whatever_it_forwards(rf, settings):
    trust(settings, "10.0.0.0/8")
    assert client_ip(rf.get("/", REMOTE_ADDR="192.0.2.9")) == "192.0.2.9"
    assert (
        client_ip(rf.get("/", REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR="garbage"))
        == "192.0.2.9"
    )
