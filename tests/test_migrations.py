"""Every past schema revision upgrades to head with its data, and work resumes on it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from campaign.canonical import spec_digest
from campaign.store import chain, repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import alembic_config, current_revision, drift, head_revision, known_revisions, open_store, upgrade_engine, upgrade_store

PAST = [rev.revision for rev in ScriptDirectory.from_config(alembic_config()).walk_revisions() if rev.revision != head_revision()]


def _old_store(db_path, revision: str) -> None:
    """A store written by an older engine: schema at ``revision`` with a scheduled campaign."""
    engine = make_engine(resolve_url(str(db_path)))
    upgrade_engine(engine, revision)
    engine.dispose()
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO campaigns (id, kind, state, live, agent, seed, experiment_json, experiment_digest, scheduled_count, created_at)"
            " VALUES (1, 'campaign', 'interrupted', 1, 'offline', 107, '{}', ?, 2, '2026-01-01 00:00:00')",
            (spec_digest({}),),  # the experiment's own digest, as every engine wrote it
        )
        for position, variant in enumerate(("baseline", "coding")):
            conn.execute(
                "INSERT INTO trials (campaign_id, pair_id, trial_id, provider, model, task, variant, repetition, pair_order, position, status, updated_at)"
                " VALUES (1, 't/r1', ?, 'offline', 'offline:synthetic', 't', ?, 1, ?, ?, 'scheduled', '2026-01-01 00:00:00')",
                (f"t/r1/{variant}", variant, position, position),
            )


@pytest.mark.parametrize("revision", PAST)
def test_an_old_store_upgrades_with_a_backup_and_work_resumes(tmp_path, revision):
    db_path = tmp_path / "old.db"
    _old_store(db_path, revision)
    before, after, backup = upgrade_store(str(db_path))
    assert (before, after) == (revision, head_revision())
    assert backup is not None and backup.is_file()
    engine = make_engine(resolve_url(str(db_path)))
    try:
        assert drift(engine) == []
        for trial in repository.trials_in_order(engine, 1):
            assert repository.admit_trial(engine, trial.id)
            attempt_id = repository.start_attempt(engine, trial)
            repository.finish_attempt(engine, attempt_id, trial.id, outcome="passed", verified_pass=True)
        assert chain.verify_chain(engine, 1) == []
        assert [t.status for t in repository.trials_in_order(engine, 1)] == ["finished", "finished"]
    finally:
        engine.dispose()


def test_every_migration_downgrades_and_upgrades_again(tmp_path):
    engine = make_engine(resolve_url(str(tmp_path / "round.db")))
    try:
        upgrade_engine(engine)
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "base")
        with engine.connect() as conn:
            tables = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables <= {"alembic_version"}
        upgrade_engine(engine)
        assert drift(engine) == []
    finally:
        engine.dispose()


def test_the_head_and_the_revisions_read_from_the_files_are_alembics():
    """``migrate`` reads the revision graph from the migration files' text, so that opening
    a store needs no alembic: it must be the graph alembic itself loads."""
    script = ScriptDirectory.from_config(alembic_config())
    assert head_revision() == script.get_current_head()
    assert known_revisions() == {rev.revision for rev in script.walk_revisions()}


@pytest.mark.parametrize("revision", [*PAST, "head"])
def test_the_stores_revision_read_in_sql_is_alembics(tmp_path, revision):
    from alembic.migration import MigrationContext

    engine = make_engine(resolve_url(str(tmp_path / "store.db")))
    try:
        assert current_revision(engine) is None  # no table yet
        upgrade_engine(engine, revision)
        with engine.connect() as conn:
            assert current_revision(engine) == MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def test_opening_a_store_at_head_imports_no_alembic(tmp_path):
    db = tmp_path / "store.db"
    open_store(str(db)).dispose()  # created: migrated through alembic
    probe = "import sys; from campaign.store.migrate import open_store; open_store(sys.argv[1]).dispose(); print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))"
    done = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
