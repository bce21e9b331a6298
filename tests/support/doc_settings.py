"""Settings for the docs' Django examples (tests/django/test_doc_examples.py).

The demo site's settings without the demo app (its jobs and views), with
REDCOORD pointing at the throwaway server the test started (REDIS_URL), an
in-memory database, and the Tasks backend the docs' examples use (queues
"default" and "emails", as on docs/installation.md).
"""

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "testproject.demo"]
ROOT_URLCONF = __name__
urlpatterns: list = []

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
REDCOORD = {"URL": os.environ["REDIS_URL"], "KEY_PREFIX": "docs"}
TASKS = {
    "default": {
        "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
        "QUEUES": ["default", "emails"],
    }
}
