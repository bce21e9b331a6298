"""An unmanaged model: gives the dashboard its admin entry and permissions.

No table is created. ``view_dashboard`` lets a staff user see the dashboard
and its JSON feed; ``change_dashboard`` lets them act (force-release a lock,
requeue or purge dead letters, purge a queue); ``change_schedule`` lets them
edit the schedule and arguments of periodic jobs (``admin_schedules.py``).
"""

from django.db import models


class Dashboard(models.Model):
    class Meta:
        managed = False
        default_permissions = ("view", "change")
        permissions = [("change_schedule", "Can edit the schedules of periodic jobs")]
        verbose_name = "coordination dashboard"
        verbose_name_plural = "coordination dashboard"

    def __str__(self) -> str:
        return "coordination dashboard"
