"""A project without ``django.contrib.auth`` runs its system checks (every manage.py command
does): the rate-limit middleware check imported auth's middleware, which raised there, so every
command failed at start. A rule keyed on "user" is then reported (E031), not a crash."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import django
    from django.conf import settings
    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django_redcoord"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        MIDDLEWARE=["django_redcoord.middleware.RateLimitMiddleware"],
        REDCOORD={"URL": "redis://127.0.0.1:1/0", "RATE_LIMITS": RULES},
    )
    django.setup()
    from django.core.checks import run_checks
    print(sorted({m.id for m in run_checks()}))
    """
)


def _ids(rules: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("RULES", rules)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_checks_run_without_django_contrib_auth() -> None:
    assert "redcoord.E031" not in _ids("[{'path': '/api/', 'policy': '10/s', 'key': 'ip'}]")


def test_a_user_keyed_rule_without_auth_is_reported() -> None:
    assert "redcoord.E031" in _ids("[{'path': '/api/', 'policy': '10/s', 'key': 'user'}]")
