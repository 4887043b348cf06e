"""`campaign verify`: recompute the attempt rows' hash chain and name every break."""

from __future__ import annotations

from pathlib import Path

import click

from campaign.cli.common import ROW_ID, core_errors, db_option
from campaign.cli.paths import InputFile
from campaign.report.integrity import published_ends
from campaign.store import chain
from campaign.store.migrate import open_store


@click.command()
@click.argument("campaign_id", type=ROW_ID, required=False)
@click.option(
    "--against",
    type=InputFile("report"),
    metavar="REPORT.json",
    help="A report.json `campaign report` wrote from this store: also check the store still holds the chains it was built from "
    "(rows removed from a chain's end, or resealed, are named).",
)
@db_option
def verify(campaign_id: int | None, against: Path | None, db: str | None) -> None:
    """Check that no attempt row was edited, deleted or reordered.

    Recomputes every attempt row's hash and its link to the row before, for
    CAMPAIGN_ID or, without it, every campaign in the store. Exits 1 with one
    line per problem.

    A chain cut off at its end, or edited and resealed, still links up; a
    report publishes where each chain it read ended, and --against checks the
    store against that (and verifies every campaign the report read).

    \b
    Examples:
      campaign verify --db campaign-out/campaign.db
      campaign verify 1 --db campaign-out/campaign.db
      campaign verify --against campaign-out/report.json --db campaign-out/campaign.db
    """
    with core_errors():
        ends = published_ends(against) if against is not None else ()
        engine = open_store(db, readonly=True)
        try:
            problems, rows = chain.verify_against(engine, campaign_id, ends)
        finally:
            engine.dispose()
        if not problems:
            click.echo(f"chain intact: {rows} rows")
            if ends:
                held = ", ".join(f"campaign {end.campaign_id} to link {end.links}" for end in ends)
                click.echo(f"holds the chains {against} was built from: {held}")
            return
        for problem in problems:
            click.echo(problem.line())
        raise chain.ChainBroken(
            f"{len(problems)} chain problem(s) in {rows} rows: rows were changed outside the engine; "
            "do not resume this store, keep it (and its backups) as evidence",
            problems,
        )
