"""`campaign db`: schema upgrade, revision, drift check, backup, schema and tables."""

from __future__ import annotations

from pathlib import Path

import click

from campaign.cli.common import core_errors, db_option
from campaign.cli.paths import OutputFile, StoreTarget
from campaign.errors import Interrupted
from campaign.store import migrate, query
from campaign.store.engine import describe, open_failure, resolve_url


@click.group()
def db() -> None:
    """Manage the store's schema and backups, and look at its tables.

    \b
    Examples:
      campaign db upgrade --db campaign-out/campaign.db
      campaign db tables --db campaign-out/campaign.db
    """


@db.command()
@db_option
def upgrade(db: str | None) -> None:
    """Bring the store to the newest schema (backs up an existing SQLite store first).

    \b
    Example:
      campaign db upgrade --db campaign-out/campaign.db
    """
    with core_errors():
        before, after, saved = migrate.upgrade_store(db)
    if saved:
        click.echo(f"backup: {saved}")
    click.echo(f"{before or 'empty'} -> {after}" if before != after else f"already at {after}")


@db.command()
@db_option
def current(db: str | None) -> None:
    """Print the store's schema revision and the engine's head revision.

    \b
    Example:
      campaign db current --db campaign-out/campaign.db
    """
    with core_errors():
        url = resolve_url(db, must_exist=True)
        engine = migrate.make_engine(url, readonly=True)
        try:
            state = migrate.schema_state(engine)
            revision = migrate.current_revision(engine) if state != "empty" else None
        except Interrupted:
            raise  # the operator's stop, not a store that cannot be opened
        except Exception as exc:  # a file that is not a database, a refused connection
            raise open_failure(url, exc) from None
        finally:
            engine.dispose()
    click.echo(f"current: {revision or 'none'}\nhead: {migrate.head_revision()}\nstate: {state}")


@db.command()
@db_option
def check(db: str | None) -> None:
    """Fail when the models and the migrations disagree (checked on a fresh copy at head).

    \b
    Examples:
      campaign db check
      campaign db check --db campaign-out/campaign.db
    """
    with core_errors():
        problems = migrate.check_models_against_migrations(db)
    if problems:
        for line in problems:
            click.echo(line, err=True)
        raise click.ClickException(f"{len(problems)} difference(s) between models and migrations; write a migration (alembic revision --autogenerate)")
    click.echo("models and migrations agree")


@db.command()
@db_option
@click.option("--output", "output", type=OutputFile(), help="Backup file (default: next to the store, timestamped).")
def backup(db: str | None, output: Path | None) -> None:
    """Write a consistent copy of a SQLite store.

    \b
    Example:
      campaign db backup --db campaign-out/campaign.db --output /tmp/campaign-copy.db
    """
    with core_errors():
        url = resolve_url(db, must_exist=True)
        engine = migrate.open_store(db, create=False)
        try:
            saved = migrate.backup(engine, output or migrate.default_backup_path(url))
        finally:
            engine.dispose()
    click.echo(f"backup of {describe(url)}: {saved}")


@db.command()
@click.option("--db", "db", type=StoreTarget(), metavar="URL|PATH", help="Print this store's schema instead of a fresh store's at head.")
def schema(db: str | None) -> None:
    """Print the schema (CREATE statements) for ad-hoc SQL: a fresh store's at head, or --db's.

    \b
    Examples:
      campaign db schema
      campaign db schema --db campaign-out/campaign.db
    """
    with core_errors():
        click.echo(query.schema_of(db) if db else migrate.schema_sql(), nl=False)


@db.command()
@db_option
def tables(db: str | None) -> None:
    """List the store's tables with their row counts (read-only).

    \b
    Example:
      campaign db tables --db campaign-out/campaign.db
    """
    with core_errors():
        counts = query.table_counts(db)
    width = max(len(name) for name, _ in counts)
    for name, rows in counts:
        click.echo(f"{name.ljust(width)}  {rows}")
