"""`campaign sql`: read-only ad-hoc SQL over the store."""

from __future__ import annotations

import click

from campaign.cli.common import core_errors, db_option


@click.command()
@click.argument("statement")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Rows as a JSON array of objects.")
@click.option("--csv", "as_csv", is_flag=True, help="Rows as CSV with a header line.")
def sql(statement: str, db: str | None, as_json: bool, as_csv: bool) -> None:
    """Run one read-only SQL statement against the store and print the rows.

    \b
    Examples:
      campaign sql "SELECT task, variant, status FROM trials" --db campaign-out/campaign.db
      campaign sql "SELECT outcome, count(*) FROM attempts GROUP BY outcome" --json
      campaign db tables --db campaign-out/campaign.db   # what there is to query
    """
    if as_json and as_csv:
        # One flag used to win silently over the other.
        raise click.UsageError("--json and --csv cannot be combined; choose one format")
    # Imported here so `campaign sql --help` and a refused flag need no SQLAlchemy.
    from campaign.store.query import format_rows, run_readonly

    with core_errors():
        columns, rows = run_readonly(db, statement)
    click.echo(format_rows(columns, rows, "json" if as_json else "csv" if as_csv else "table"), nl=False)
