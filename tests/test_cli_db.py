"""`campaign db`: upgrade (with backup), current, check, backup, schema."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

from campaign.cli import cli
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import head_revision, upgrade_engine


def test_upgrade_creates_a_store_at_head(runner, db_path):
    result = runner.invoke(cli, ["db", "upgrade", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert f"-> {head_revision()}" in result.output
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == head_revision()


def test_upgrade_of_an_older_store_takes_a_backup_first(runner, db_path, db_url):
    engine = make_engine(resolve_url(db_url))
    upgrade_engine(engine, "0001")
    engine.dispose()
    result = runner.invoke(cli, ["db", "upgrade", "--db", db_url])
    assert result.exit_code == 0, result.output
    backups = list(db_path.parent.glob("campaign.db.backup-*"))
    assert len(backups) == 1
    with sqlite3.connect(backups[0]) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0001"
    result = runner.invoke(cli, ["db", "current", "--db", db_url])
    assert f"current: {head_revision()}" in result.output and "state: head" in result.output


def test_current_on_a_missing_store_is_a_usage_error_and_creates_nothing(runner, tmp_path):
    missing = tmp_path / "missing.db"
    result = runner.invoke(cli, ["db", "current", "--db", str(missing)])
    assert result.exit_code == 2
    assert "--db" in result.output
    assert not missing.exists()


def test_check_passes_when_models_and_migrations_agree(runner, engine, db_url):
    result = runner.invoke(cli, ["db", "check", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "agree" in result.output


def test_check_fails_when_a_model_column_has_no_migration():
    # A separate interpreter, so the mutated metadata cannot leak into other tests.
    script = textwrap.dedent(
        """
        from sqlalchemy import Column, Integer
        from campaign.store.models import Attempt
        Attempt.__table__.append_column(Column("unmigrated_counter", Integer, nullable=True))
        from campaign.cli import cli
        cli(["db", "check"], prog_name="campaign")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "unmigrated_counter" in proc.stderr
    assert "write a migration" in proc.stderr


def test_backup_is_a_consistent_copy_of_the_store(runner, engine, db_path, db_url, tmp_path):
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO campaigns (kind, state, live, agent, seed, experiment_json, experiment_digest, scheduled_count, created_at)"
            " VALUES ('paired', 'planned', 0, 'offline', 1, '{}', 'x', 0, '2026-01-01 00:00:00')"
        )
    out = tmp_path / "b" / "copy.db"
    result = runner.invoke(cli, ["db", "backup", "--db", db_url, "--output", str(out)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(out) as conn:
        assert conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == 1
    again = runner.invoke(cli, ["db", "backup", "--db", db_url, "--output", str(out)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_schema_prints_every_table(runner):
    result = runner.invoke(cli, ["db", "schema"])
    assert result.exit_code == 0
    for table in ("campaigns", "trials", "attempts", "ledger"):
        assert f"CREATE TABLE {table}" in result.output
