"""The coordination dashboard inside the Django admin.

``/admin/django_redcoord/dashboard/`` shows live locks, semaphores, queues
(with a chart of their last hour), workers, the leader and periodic jobs;
``fragments/`` feeds the live refresh with each section rendered again by the
same templates (``{section id: html}``); ``data.json`` is the same data for
other tools; ``dead-letters/?name=<queue>`` lists a queue's dead letters a page
at a time; ``task-result/?id=<id>`` looks a Django Task's result up. Seeing
needs ``django_redcoord.view_dashboard``; acting needs ``change_dashboard``.
Every action is confirmed on a GET page and done by a POST with a CSRF token,
and is written to the admin's LogEntry history.

The package: :mod:`.site` (the ModelAdmin and its views, registered when
Django's admin imports this package), :mod:`.actions` (the registry of
actions), :mod:`.rows` (the big tables' rows, written in Python),
:mod:`.schedules` (the schedule editor). The sections come from the panel
registry (:mod:`django_redcoord.panels`).
"""

from .actions import ACTIONS, Action, Call, register_action
from .site import DashboardAdmin, sections

__all__ = ["ACTIONS", "Action", "Call", "DashboardAdmin", "register_action", "sections"]
