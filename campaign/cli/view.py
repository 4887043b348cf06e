"""`campaign view`: serve a local, read-only web page of the store's campaigns."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from campaign.cli.common import ROW_ID, core_errors, db_option
from campaign.cli.paths import InputDir
from campaign.view import ViewOptions, serve


@click.command()
@click.option("--output-dir", type=InputDir(), metavar="DIR", help="A campaign's --output-dir: view the store (campaign.db) there.")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind; anything else needs --allow-remote.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port to bind; 0 picks a free one.")
@click.option("--campaign", "campaign_id", type=ROW_ID, metavar="ID", help="Print the URL of this campaign's page (it must exist).")
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host: anyone who can reach it can read the pages.")
def view(output_dir: Path | None, db: str | None, host: str, port: int, campaign_id: int | None, allow_remote: bool) -> None:
    """Serve a read-only page of the campaigns on loopback and print its URL; Ctrl-C stops it.

    The page shows only what a shared report may show, refreshes itself while
    a campaign runs, and warns when `campaign verify` would fail.

    \b
    Examples:
      campaign view --output-dir campaign-out
      campaign view --db campaign-out/campaign.db --campaign 1 --port 8765
    """
    ctx = click.get_current_context()
    if output_dir is not None and db is not None:
        if ctx.get_parameter_source("db") == ParameterSource.ENVIRONMENT:
            db = None  # an explicit --output-dir names the store; $CAMPAIGN_DB is only the default
        else:
            raise click.UsageError("give --output-dir or --db, not both")
    if allow_remote:
        click.echo("campaign view: --allow-remote: anyone who can reach this address can read these pages", err=True)
    options = ViewOptions(db=db, output_dir=output_dir, host=host, port=port, campaign_id=campaign_id, allow_remote=allow_remote)
    with core_errors():
        serve(options, lambda url: click.echo(f"campaign view: serving {url} (Ctrl-C to stop)"))
