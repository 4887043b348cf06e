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


def _seed_one_campaign(db_path):
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO campaigns (kind, state, live, agent, seed, experiment_json, experiment_digest, scheduled_count, created_at)"
            " VALUES ('paired', 'planned', 0, 'offline', 1, '{}', 'x', 0, '2026-01-01 00:00:00')"
        )


def test_tables_lists_every_table_with_its_row_count_and_changes_nothing(runner, engine, db_path, db_url):
    _seed_one_campaign(db_path)
    before = db_path.read_bytes()
    result = runner.invoke(cli, ["db", "tables", "--db", db_url])
    assert result.exit_code == 0, result.output
    counts = dict(line.split() for line in result.output.splitlines())
    assert counts["campaigns"] == "1" and counts["alembic_version"] == "1"
    assert counts["trials"] == "0" and counts["attempts"] == "0" and "ledger" in counts
    assert db_path.read_bytes() == before


def test_tables_on_a_missing_store_is_a_usage_error_and_creates_nothing(runner, tmp_path):
    missing = tmp_path / "missing.db"
    result = runner.invoke(cli, ["db", "tables", "--db", str(missing)])
    assert result.exit_code == 2 and "--db" in result.output
    assert not missing.exists()


def _lines(schema: str) -> list[str]:
    # A batch-rebuilt table may list its constraints in another order: compare the lines.
    return sorted(line.strip().rstrip(",") for line in schema.splitlines())


def test_schema_with_db_prints_that_stores_schema(runner, engine, db_url, db_path, tmp_path):
    fresh = runner.invoke(cli, ["db", "schema"])
    at_head = runner.invoke(cli, ["db", "schema", "--db", db_url])
    assert at_head.exit_code == 0, at_head.output
    assert _lines(at_head.output) == _lines(fresh.output)
    old = tmp_path / "old.db"
    old_engine = make_engine(resolve_url(str(old)))
    upgrade_engine(old_engine, "0001")
    old_engine.dispose()
    before = old.read_bytes()
    older = runner.invoke(cli, ["db", "schema", "--db", str(old)])
    assert older.exit_code == 0, older.output
    assert "CREATE TABLE campaigns" in older.output and _lines(older.output) != _lines(fresh.output)
    assert old.read_bytes() == before  # read-only: not upgraded


def test_schema_with_a_missing_store_creates_nothing(runner, tmp_path):
    missing = tmp_path / "missing.db"
    result = runner.invoke(cli, ["db", "schema", "--db", str(missing)])
    assert result.exit_code == 2 and "--db" in result.output
    assert not missing.exists()


def test_tables_and_schema_read_each_backend(runner, backend_url):
    assert runner.invoke(cli, ["db", "upgrade", "--db", backend_url]).exit_code == 0
    tables = runner.invoke(cli, ["db", "tables", "--db", backend_url])
    assert tables.exit_code == 0, tables.output
    counts = dict(line.split() for line in tables.output.splitlines())
    assert counts["alembic_version"] == "1" and counts["campaigns"] == "0" and "attempts" in counts
    schema = runner.invoke(cli, ["db", "schema", "--db", backend_url])
    assert schema.exit_code == 0, schema.output
    for table in ("campaigns", "trials", "attempts", "ledger"):
        assert f"CREATE TABLE {table} (" in schema.output


def _foreign(path):
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE foo (x INTEGER)")
        conn.execute("INSERT INTO foo VALUES (1)")
    return path.read_bytes()


def test_a_database_that_is_not_a_store_is_refused_and_left_as_it_was(runner, tmp_path):
    """Another program's SQLite file was called an older store, switched to WAL, and
    `db upgrade` then wrote campaign tables into it (found by an audit of bad input)."""
    path = tmp_path / "other.db"
    before = _foreign(path)
    for args in (["worker"], ["recover", "--all"], ["db", "upgrade"], ["coding", "--campaign", "--providers", "offline", "--tasks", "semver-precedence", "--live", "--output-dir", str(tmp_path / "out")]):
        result = runner.invoke(cli, [*args, "--db", str(path)])
        assert result.exit_code == 2, (args, result.output)
        assert "is a database with tables that are not a campaign store" in result.output, (args, result.output)
        assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["other.db"], args
    assert "state: foreign" in runner.invoke(cli, ["db", "current", "--db", str(path)]).output


def test_refusing_an_empty_file_leaves_it_empty(runner, tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    for args in (["worker"], ["recover", "--all"]):
        result = runner.invoke(cli, [*args, "--db", str(path)])
        assert result.exit_code == 2 and "holds no campaign store" in result.output, (args, result.output)
        assert path.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"], args
