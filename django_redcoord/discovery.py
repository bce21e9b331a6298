"""Finding the project's periodic jobs: ``<app>.jobs`` of every installed app, and
``REDCOORD["JOBS"]``.

The Django side of :mod:`django_redcoord.core.periodic.jobs` (which never imports Django).
"""

from __future__ import annotations

import importlib

from .core import ConfigurationError, Job, get_jobs


def autodiscover() -> dict[str, Job]:
    """Import ``<app>.jobs`` of every installed app and the modules in REDCOORD["JOBS"].

    Called by ``manage.py run_leader``, never at import. Returns the registered jobs.
    """
    from django.utils.module_loading import autodiscover_modules

    from .conf import get_config

    autodiscover_modules("jobs")
    for module in get_config()["JOBS"]:
        try:
            importlib.import_module(module)
        except Exception as exc:  # missing, or raising as it is imported: named, in one line
            raise ConfigurationError(
                f"REDCOORD['JOBS'] names {module!r}, which cannot be imported: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return get_jobs()
