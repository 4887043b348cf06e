"""`campaign report` and `campaign export`: regenerate a campaign's report from the store."""

from __future__ import annotations

from pathlib import Path

import click

from campaign.cli.common import ROW_ID, core_errors, db_option
from campaign.cli.paths import OutputDir, OutputFile

campaign_argument = click.argument("campaign_id", required=False, type=ROW_ID, metavar="[CAMPAIGN_ID]")
allow_unverified_option = click.option(
    "--allow-unverified",
    "allow_unverified",
    is_flag=True,
    help="Publish even when the attempt rows fail `campaign verify`; the report is marked unverified.",
)


@click.command()
@campaign_argument
@click.option("--output", "output", required=True, type=OutputFile(), help="Report JSON; the .md summary and .svg plot go beside it.")
@allow_unverified_option
@db_option
def report(campaign_id: int | None, output: Path, db: str | None, allow_unverified: bool) -> None:
    """Write a campaign's sanitized JSON report with its Markdown summary and forest plot (default: the latest campaign).

    \b
    Examples:
      campaign report --db campaign-out/campaign.db --output /tmp/report.json
      campaign report 2 --output /tmp/campaign-2.json
    """
    # Here, not at the top: the report's statistics and the store (numpy, SQLAlchemy,
    # alembic) are most of a second to import, and `--help` or a refused option needs none.
    from campaign.report import write_report
    from campaign.store.migrate import open_store

    with core_errors():
        engine = open_store(db, readonly=True)
        try:
            written = write_report(engine, campaign_id, output, allow_unverified=allow_unverified)
        finally:
            engine.dispose()
    click.echo(f"campaign {written.campaign_id}: {written.json}, {written.markdown}, {written.svg}")


@click.command()
@campaign_argument
@click.option("--output-dir", "output_dir", required=True, type=OutputDir(), help="Directory for the shareable JSON, Markdown and SVG.")
@allow_unverified_option
@db_option
def export(campaign_id: int | None, output_dir: Path, db: str | None, allow_unverified: bool) -> None:
    """Write the sanitized report pair for sharing; refuses a plan-only campaign.

    \b
    Example:
      campaign export --db campaign-out/campaign.db --output-dir /tmp/share
    """
    from campaign.report import export_report
    from campaign.store.migrate import open_store

    with core_errors():
        engine = open_store(db, readonly=True)
        try:
            written = export_report(engine, campaign_id, output_dir, allow_unverified=allow_unverified)
        finally:
            engine.dispose()
    click.echo(f"campaign {written.campaign_id}: {written.json}, {written.markdown}, {written.svg}")
    click.echo("review both files before sharing; never attach private failure bundles, environment snapshots or the base config")
