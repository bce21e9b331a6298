"""The deployment matrix's one periodic job: its schedule is edited through the proxy."""

from django_redcoord import periodic


@periodic(every=3600, name="deploy.nightly")
def nightly_report(batch: int = 100) -> None:
    """Never run here (no leader runs in the matrix): only its schedule is read and edited."""
