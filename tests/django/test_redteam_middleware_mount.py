"""RATE_LIMITS rules match the path within the app (``path_info``), wherever it is mounted.

Red-team finding: rules were matched against ``request.path``, which starts with
SCRIPT_NAME: with the app mounted at ``/app`` a rule for ``/login/`` never matched
(``/app/login/``), and the login was not limited at all.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.urls("tests.support.decorator_views")


def _rules(settings, *rules):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django_redcoord.middleware.RateLimitMiddleware"]
    settings.REDCOORD = {**settings.REDCOORD, "RATE_LIMITS": list(rules)}


def test_a_rule_matches_under_a_script_name(client, settings):
    _rules(settings, {"path": "/rl/soft/", "policy": "2/m", "key": "ip", "name": "mounted"})
    answers = [client.get("/rl/soft/", SCRIPT_NAME="/app") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]


def test_a_rule_naming_the_mount_point_does_not_match_inside_it(client, settings):
    # rules are about the app's own paths (as its URL patterns): "/app/rl/soft/" is not one of them
    _rules(settings, {"path": "/app/rl/soft/", "policy": "3/h", "key": "ip", "name": "outer"})
    answer = client.get("/rl/soft/", SCRIPT_NAME="/app")
    assert answer.status_code == 200 and '"3/h"' not in answer.get("RateLimit-Policy", "")
