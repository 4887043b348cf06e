"""`campaign recover`: offline, credential-free cleanup from the ledger alone."""

from __future__ import annotations

import click

from campaign.cli.common import ROW_ID, FiniteRange, core_errors, db_option
from campaign.errors import CleanupUnverified, UsageProblem
from campaign.store.migrate import open_store
from campaign.supervise import recovery


@click.command()
@click.argument("attempt_id", type=ROW_ID, required=False)
@click.option("--all", "all_", is_flag=True, help="Every attempt whose cleanup is not yet verified.")
@click.option("--wait", type=FiniteRange(0, 60), default=10.0, show_default=True, help="Seconds to wait for signalled members to exit.")
@click.option("--lock-fd", type=int, hidden=True)
@db_option
def recover(attempt_id: int | None, all_: bool, wait: float, lock_fd: int | None, db: str | None) -> None:
    """Signal only ledger members whose birth-bound identity still matches, and prove them gone.

    \b
    Examples:
      campaign recover --all --db campaign-out/campaign.db
      campaign recover 7 --db campaign-out/campaign.db
    """
    with core_errors():
        if (attempt_id is None) == (not all_):
            raise UsageProblem("give one ATTEMPT_ID or --all", option="ATTEMPT_ID")
        engine = open_store(db, create=False)
        try:
            if all_:
                reports = recovery.recover_all(engine, wait=wait)
            else:
                reports = [recovery.recover_attempt(engine, attempt_id, wait=wait, lock_fd=lock_fd)]
        finally:
            engine.dispose()
        for report in reports:
            click.echo(report.line())
        if not reports:
            click.echo("no attempt has unverified cleanup")
        failed = [r.attempt_id for r in reports if not r.cleanup_complete]
        if failed:
            raise CleanupUnverified(
                f"cleanup unverified for attempt(s) {', '.join(map(str, failed))}; the private roots are kept "
                "and later trials stay blocked until termination is verified independently"
            )
