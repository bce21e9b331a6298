"""Periodic jobs of the demo, run by whichever ``manage.py run_leader`` leads.

``make demo`` starts one run_leader; start more in other terminals
(``python manage.py run_leader``) and stop the leader to watch a standby take
over. ``python manage.py run_leader --list`` shows each job's runs and last outcome.
"""

import logging
from datetime import timedelta

from django_redcoord import current_job, periodic

log = logging.getLogger(__name__)


@periodic(every=timedelta(seconds=30), name="demo.heartbeat")
def heartbeat():
    """Every 30 s (at :00 and :30): say who leads. Redis counts the runs in the job's state."""
    job = current_job()
    log.info("demo heartbeat: slot %s run by %s, term %d", job.slot, job.identity, job.term)


@periodic(cron="*/1 * * * *", name="demo.market_report")
def market_report():
    """Every minute (cron, in TIME_ZONE): log how the market is doing."""
    from .models import Item, Purchase

    job = current_job()
    when = job.slot.strftime("%H:%M") if job.slot else "now (run by hand)"
    log.info(
        "demo market report for %s: %d item(s) listed, %d purchase(s) so far (term %d)",
        when,
        Item.objects.count(),
        Purchase.objects.count(),
        job.term,
    )
