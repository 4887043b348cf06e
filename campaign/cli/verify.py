"""`campaign verify`: recompute the attempt rows' hash chain and name every break."""

from __future__ import annotations

import click

from campaign.cli.common import ROW_ID, core_errors, db_option
from campaign.store import chain
from campaign.store.migrate import open_store


@click.command()
@click.argument("campaign_id", type=ROW_ID, required=False)
@db_option
def verify(campaign_id: int | None, db: str | None) -> None:
    """Check that no attempt row was edited, deleted or reordered.

    Recomputes every attempt row's hash and its link to the row before, for
    CAMPAIGN_ID or, without it, every campaign in the store. Exits 1 with one
    line per problem.

    \b
    Examples:
      campaign verify --db campaign-out/campaign.db
      campaign verify 1 --db campaign-out/campaign.db
    """
    with core_errors():
        engine = open_store(db, readonly=True)
        try:
            problems = chain.verify_chain(engine, campaign_id)
            rows = chain.count_rows(engine, campaign_id)
        finally:
            engine.dispose()
        if not problems:
            click.echo(f"chain intact: {rows} rows")
            return
        for problem in problems:
            click.echo(problem.line())
        raise chain.ChainBroken(
            f"{len(problems)} chain problem(s) in {rows} rows: rows were changed outside the engine; "
            "do not resume this store, keep it (and its backups) as evidence",
            problems,
        )
