"""The store: migrations own the schema, revisions are checked, state changes are CAS."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import inspect
from sqlalchemy.exc import DBAPIError

from campaign.errors import SchemaAhead, SchemaBehind, StoreError, UsageProblem
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import current_revision, drift, head_revision, open_store, upgrade_engine


def test_empty_store_is_migrated_to_head_not_created(db_url):
    engine = open_store(db_url)
    try:
        assert current_revision(engine) == head_revision()
        assert {"campaigns", "trials", "attempts", "ledger"} <= set(inspect(engine).get_table_names())
        assert drift(engine) == []
    finally:
        engine.dispose()


def test_sqlite_pragmas_are_set_on_every_connection(engine):
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_store_behind_head_is_refused_with_the_upgrade_command(db_url):
    engine = make_engine(resolve_url(db_url))
    upgrade_engine(engine, "0001")
    engine.dispose()
    with pytest.raises(SchemaBehind, match="campaign db upgrade"):
        open_store(db_url)


def test_store_ahead_of_head_is_refused(db_path, db_url, engine):
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'fffffff'")
    with pytest.raises(SchemaAhead, match="newer"):
        open_store(db_url)


def test_missing_store_is_not_created_when_it_must_exist(tmp_path):
    missing = tmp_path / "nope.db"
    with pytest.raises(UsageProblem, match="--db"):
        open_store(str(missing), create=False)
    assert not missing.exists()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    bogus = tmp_path / "bogus.db"
    bogus.write_text("this is not sqlite " * 100)
    with pytest.raises(StoreError, match="cannot open the store"):
        open_store(str(bogus))
    assert bogus.read_text().startswith("this is not sqlite")


def test_a_read_only_store_cannot_write_and_follows_a_writer_that_starts_later(db_path, db_url, engine, make_attempt):
    make_attempt("task-a")
    engine.dispose()  # at rest: no -wal or -shm beside it
    reader = open_store(db_url, readonly=True)
    try:
        count = "SELECT count(*) FROM trials"
        with reader.connect() as conn:
            assert conn.exec_driver_sql(count).scalar() == 1
            with pytest.raises(DBAPIError, match="readonly"):
                conn.exec_driver_sql("DELETE FROM trials")
        assert sorted(p.name for p in db_path.parent.iterdir()) == ["campaign.db"]
        make_attempt("task-b")  # a writer opens the store while the reader lives
        with reader.connect() as conn:
            assert conn.exec_driver_sql(count).scalar() == 2
    finally:
        reader.dispose()
        engine.dispose()
    assert sorted(p.name for p in db_path.parent.iterdir()) == ["campaign.db"]


def test_non_sqlalchemy_url_is_a_usage_problem():
    with pytest.raises(UsageProblem, match="--db"):
        make_engine(resolve_url("nosuchdialect://x/y"))


def test_foreign_keys_are_enforced(engine):
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        repository.record_ledger(engine, 999, repository.LedgerMember("client", 1, 1, "b", None, None))


def _campaign(engine, tasks=("t1",), reps=1):
    return repository.create_campaign(
        engine,
        repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=7, experiment={"k": 1}),
        build_schedule(list(tasks), reps, seed=7),
        model="offline:sim",
        default_provider="offline",
    )


def test_admission_is_compare_and_set(engine):
    campaign_id = _campaign(engine)
    trial = repository.trials_in_order(engine, campaign_id)[0]
    assert repository.admit_trial(engine, trial.id) is True
    assert repository.admit_trial(engine, trial.id) is False
    assert repository.mark_not_attempted(engine, trial.id, "budget") is False


def test_two_engines_never_admit_the_same_trial(db_url, engine):
    campaign_id = _campaign(engine, tasks=("a", "b", "c"), reps=2)
    other = make_engine(resolve_url(db_url))
    try:
        wins = []
        for trial in repository.trials_in_order(engine, campaign_id):
            wins.append(repository.admit_trial(engine, trial.id) + repository.admit_trial(other, trial.id))
        assert wins == [1] * 12
    finally:
        other.dispose()


def test_attempt_counters_default_to_null_not_zero(engine):
    campaign_id = _campaign(engine)
    trial = repository.trials_in_order(engine, campaign_id)[0]
    repository.admit_trial(engine, trial.id)
    attempt_id = repository.start_attempt(engine, trial)
    repository.finish_attempt(engine, attempt_id, trial.id, outcome="failed")
    row = repository.get_attempt(engine, attempt_id)
    for name in ("completed_turns", "uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "tool_errors", "cost_usd", "spend_complete", "cleanup_complete"):
        assert getattr(row, name) is None, name
    assert row.status == "finished"
    assert repository.trials_in_order(engine, campaign_id)[0].status == "finished"


def test_finishing_twice_is_a_conflict(engine):
    from campaign.errors import ConflictError

    campaign_id = _campaign(engine)
    trial = repository.trials_in_order(engine, campaign_id)[0]
    repository.admit_trial(engine, trial.id)
    attempt_id = repository.start_attempt(engine, trial)
    repository.finish_attempt(engine, attempt_id, trial.id)
    with pytest.raises(ConflictError):
        repository.finish_attempt(engine, attempt_id, trial.id, outcome="passed")
    assert repository.get_attempt(engine, attempt_id).outcome is None


def test_a_stop_marks_admitted_trials_without_an_attempt_not_attempted(engine):
    campaign_id = _campaign(engine, tasks=("a", "b"))
    first, second, third, _ = repository.trials_in_order(engine, campaign_id)
    repository.admit_trial(engine, first.id)
    attempt_id = repository.start_attempt(engine, first)
    repository.finish_attempt(engine, attempt_id, first.id)
    repository.admit_trial(engine, second.id)  # an interruption landed before its attempt row
    assert repository.mark_remaining_not_attempted(engine, campaign_id, "interrupted") == 3
    statuses = [(t.status, t.not_attempted_reason) for t in repository.trials_in_order(engine, campaign_id)]
    assert statuses == [("finished", None)] + [("not_attempted", "interrupted")] * 3
