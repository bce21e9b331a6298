"""The dashboard opened while Redis is down: every section is there for the
live refresh to fill in once Redis answers (the browser side is in
test_browser.py)."""

import pytest

from ..support.redis_servers import free_port

URL = "/admin/django_redcoord/dashboard/"
SKELETON = (
    'id="rc-locks"',
    'id="rc-queues"',
    'id="rc-workers"',
    'id="rc-leaders"',
    'class="rc-jobs"',
    'class="rc-leader"',
    'id="rc-locks-total"',
    'id="rc-page"',
    'id="rc-pages"',
    'id="rc-error"',
)


@pytest.mark.django_db
def test_a_page_rendered_during_an_outage_has_every_section_and_says_why(admin_client, settings):
    settings.REDCOORD = {"URL": f"redis://127.0.0.1:{free_port()}/0", "CONNECT_TIMEOUT": 0.2}
    response = admin_client.get(URL)
    assert response.status_code == 200
    page = response.content.decode()
    missing = [part for part in SKELETON if part not in page]
    assert missing == [], f"sections missing from the outage page: {missing}"
    assert "could not be reached during read the coordination overview" in page
    assert page.count("Waiting for Redis") >= 4
    data = admin_client.get(URL + "data.json")
    assert data.status_code == 503 and "could not be reached" in data.json()["error"]


@pytest.mark.django_db
def test_a_page_rendered_with_redis_up_has_the_same_sections(admin_client):
    page = admin_client.get(URL).content.decode()
    assert [part for part in SKELETON if part not in page] == []
    assert "Waiting for Redis" not in page
