"""`campaign db`: schema upgrade, revision, drift check and backup."""

from __future__ import annotations

from pathlib import Path

import click

from campaign.cli.common import core_errors, db_option
from campaign.store import migrate
from campaign.store.engine import describe, resolve_url


@click.group()
def db() -> None:
    """Manage the store's schema and backups."""


@db.command()
@db_option
def upgrade(db: str | None) -> None:
    """Bring the store to the newest schema (backs up an existing SQLite store first)."""
    with core_errors():
        before, after, saved = migrate.upgrade_store(db)
    if saved:
        click.echo(f"backup: {saved}")
    click.echo(f"{before or 'empty'} -> {after}" if before != after else f"already at {after}")


@db.command()
@db_option
def current(db: str | None) -> None:
    """Print the store's schema revision and the engine's head revision."""
    with core_errors():
        engine = migrate.make_engine(resolve_url(db, must_exist=True))
        try:
            state = migrate.schema_state(engine)
            revision = migrate.current_revision(engine) if state != "empty" else None
        finally:
            engine.dispose()
    click.echo(f"current: {revision or 'none'}\nhead: {migrate.head_revision()}\nstate: {state}")


@db.command()
@db_option
def check(db: str | None) -> None:
    """Fail when the models and the migrations disagree (checked on a fresh copy at head)."""
    with core_errors():
        problems = migrate.check_models_against_migrations(db)
    if problems:
        for line in problems:
            click.echo(line, err=True)
        raise click.ClickException(f"{len(problems)} difference(s) between models and migrations; write a migration (alembic revision --autogenerate)")
    click.echo("models and migrations agree")


@db.command()
@db_option
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=Path), help="Backup file (default: next to the store, timestamped).")
def backup(db: str | None, output: Path | None) -> None:
    """Write a consistent copy of a SQLite store."""
    with core_errors():
        url = resolve_url(db, must_exist=True)
        engine = migrate.open_store(db, create=False)
        try:
            saved = migrate.backup(engine, output or migrate.default_backup_path(url))
        finally:
            engine.dispose()
    click.echo(f"backup of {describe(url)}: {saved}")


@db.command()
def schema() -> None:
    """Print the schema (CREATE statements of a fresh store at head) for ad-hoc SQL."""
    click.echo(migrate.schema_sql(), nl=False)
