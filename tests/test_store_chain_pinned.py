"""The campaign and trial rows the chain pins through its genesis: real campaigns run by
the real CLI (offline agent), then edited with raw SQL the way a hand in the store would.
Each edit changes what a report publishes; each must fail verification, by name, while
the untouched store verifies intact."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from campaign.canonical import spec_digest
from campaign.cli import cli
from campaign.report import write_report
from campaign.experiment import stored_schedule
from campaign.schedule import build_schedule, single_run
from campaign.store import chain, repository
from campaign.store.engine import make_engine, resolve_url
from helpers.catalogs import offline_copies

TASKS = "semver-precedence,invoice-rounding"


def _coding(tmp: Path, *args: str) -> None:
    runner_tmp = tmp / "runner-tmp"
    runner_tmp.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "campaign", "coding", "--tasks", TASKS, *args],
        capture_output=True, text=True, timeout=600, cwd=tmp, env={**os.environ, "TMPDIR": str(runner_tmp)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> dict[str, Path]:
    """Two finished stores, run once: a two-provider campaign (2 tasks x 2 repetitions x 2
    variants x 2 providers) and a non-paired run of the same tasks."""
    tmp = tmp_path_factory.mktemp("pinned")
    catalog = tmp / "providers.toml"
    catalog.write_text(offline_copies(("alpha", "beta")))
    _coding(tmp, "--campaign", "--providers", "alpha,beta", "--providers-catalog", str(catalog), "--repetitions", "2",
            "--output-dir", str(tmp / "multi"), "--live")  # fmt: skip
    _coding(tmp, "--output", str(tmp / "nonpaired" / "report.json"), "--db", str(tmp / "nonpaired" / "store.db"))
    return {"campaign": tmp / "multi" / "campaign.db", "nonpaired": tmp / "nonpaired" / "store.db", "catalog": catalog}


@pytest.fixture
def store(finished, tmp_path, request) -> Path:
    copy = tmp_path / "store.db"
    shutil.copy(finished[getattr(request, "param", "campaign")], copy)
    return copy


def _sql(db: Path, *statements: tuple[str, tuple]) -> None:
    with sqlite3.connect(db) as conn:
        for sql, params in statements:
            conn.execute(sql, params)


def _problems(db: Path) -> list[chain.ChainProblem]:
    engine = make_engine(resolve_url(str(db)))
    try:
        return chain.verify_chain(engine)
    finally:
        engine.dispose()


def _rows(db: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def _one(db: Path, sql: str, *params):
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchone()


@pytest.mark.parametrize("store", ["campaign", "nonpaired"], indirect=True)
def test_the_stores_the_engine_wrote_verify_intact_and_their_schedules_rebuild(store):
    assert _problems(store) == []
    kind, experiment_json, count = _one(store, "SELECT kind, experiment_json, scheduled_count FROM campaigns")
    schedule = stored_schedule(json.loads(experiment_json))
    assert schedule is not None and schedule.kind == kind and len(schedule.rows) == count


# Each edit, and the words verify names it by. Trial ids are the engine's: provider/task/rN/variant.
EDITS = {
    "a pair's variants swapped, ids and all": (
        ("UPDATE trials SET trial_id = trial_id || '~' WHERE pair_id = 'alpha/semver-precedence/r1'", ()),  # past the unique index
        ("UPDATE trials SET variant = CASE variant WHEN 'baseline' THEN 'coding' ELSE 'baseline' END,"
         " trial_id = pair_id || '/' || CASE variant WHEN 'baseline' THEN 'coding' ELSE 'baseline' END WHERE pair_id = 'alpha/semver-precedence/r1'", ()),
        "its trial_id, variant differ",
    ),
    "only the variant column swapped": (
        ("UPDATE trials SET variant = CASE variant WHEN 'baseline' THEN 'coding' ELSE 'baseline' END WHERE pair_id = 'beta/invoice-rounding/r2'", ()),
        "its variant differs",
    ),
    "a task renamed": (("UPDATE trials SET task = 'csv-merge' WHERE trial_id = 'alpha/invoice-rounding/r1/coding'", ()), "its task differs"),
    "a provider moved": (("UPDATE trials SET provider = 'beta' WHERE trial_id = 'alpha/invoice-rounding/r2/baseline'", ()), "its provider differs"),
    "a model edited": (("UPDATE trials SET model = 'offline:other' WHERE id = 3", ()), "its model differs"),
    "a repetition edited": (("UPDATE trials SET repetition = 1 WHERE trial_id = 'beta/semver-precedence/r2/coding'", ()), "its repetition differs"),
    "the experiment edited": (("UPDATE campaigns SET experiment_json = replace(experiment_json, '\"repetitions\": 2', '\"repetitions\": 9')", ()), "does not match its experiment_digest"),
    "the experiment made unreadable": (("UPDATE campaigns SET experiment_json = 'not json'", ()), "is not the JSON the engine writes"),
    "the seed edited": (("UPDATE campaigns SET seed = seed + 1", ()), "row's seed is not its experiment's"),
    "the agent edited": (("UPDATE campaigns SET agent = 'claude-code'", ()), "row's agent is not its experiment's"),
    "the kind edited": (("UPDATE campaigns SET kind = 'paired'", ()), "row's kind is not its experiment's"),
    # A resume would run it again: a second verdict for one trial.
    "a finished trial reopened": (("UPDATE trials SET status = 'scheduled' WHERE id = 5", ()), "holds a finished attempt yet is not finished"),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edit_to_what_the_report_publishes_fails_verification_by_name(store, edit, tmp_path):
    *statements, words = EDITS[edit]
    _sql(store, *statements)
    problems = _problems(store)
    assert problems and all(p.kind == "edited" for p in problems), [p.line() for p in problems]
    assert any(words in p.detail for p in problems), [p.line() for p in problems]
    # ... and the report refuses it, as it refuses an edited attempt row.
    result = CliRunner().invoke(cli, ["report", "1", "--output", str(tmp_path / "r.json"), "--db", str(store)])
    assert result.exit_code == 1 and "do not verify" in result.output
    assert not (tmp_path / "r.json").exists()


def test_each_providers_trials_carry_its_own_model_and_its_report_says_so(store, tmp_path):
    models = dict(_rows(store, "SELECT DISTINCT provider, model FROM trials"))
    assert models == {"alpha": "alpha:synthetic", "beta": "beta:synthetic"}
    engine = make_engine(resolve_url(str(store)))
    try:
        written = write_report(engine, 1, tmp_path / "beta.json", provider="beta")
    finally:
        engine.dispose()
    assert json.loads(written.json.read_text())["runtime"]["model"] == "beta:synthetic"


def test_a_store_written_before_with_the_first_providers_model_on_every_trial_still_verifies(store):
    _sql(store, ("UPDATE trials SET model = 'alpha:synthetic'", ()))
    assert _problems(store) == []
    # ... but not a mix of the two forms.
    _sql(store, ("UPDATE trials SET model = 'beta:synthetic' WHERE id = 16", ()))
    assert any("its model differs" in p.detail for p in _problems(store))


def test_a_trial_row_deleted_with_its_attempts_and_the_count_edited_to_match_is_named(store):
    pk = _one(store, "SELECT id FROM trials WHERE trial_id = 'alpha/invoice-rounding/r1/coding'")[0]
    # The trial count agrees with the campaign row again; the experiment's schedule does not.
    _sql(store, ("DELETE FROM attempts WHERE trial_pk = ?", (pk,)), ("DELETE FROM trials WHERE id = ?", (pk,)), ("UPDATE campaigns SET scheduled_count = scheduled_count - 1", ()))
    details = [p.detail for p in _problems(store)]
    assert any("row's scheduled_count is not its experiment's" in d for d in details), details


def test_two_trial_rows_that_trade_ids_are_out_of_place(store):
    """Every column but the id swapped: each attempt now belongs to the other trial."""
    a, b = (_one(store, "SELECT id FROM trials WHERE trial_id = ?", t)[0] for t in ("alpha/semver-precedence/r1/baseline", "alpha/semver-precedence/r1/coding"))
    cols = "pair_id, trial_id, provider, model, task, variant, repetition, pair_order, position"
    with sqlite3.connect(store) as conn:
        ra, rb = (conn.execute(f"SELECT {cols} FROM trials WHERE id = ?", (pk,)).fetchone() for pk in (a, b))
        sets = ", ".join(f"{c} = ?" for c in cols.split(", "))
        conn.execute("UPDATE trials SET trial_id = 'x', position = -1 WHERE id = ?", (a,))  # past the unique indexes
        conn.execute(f"UPDATE trials SET {sets} WHERE id = ?", (*ra, b))
        conn.execute(f"UPDATE trials SET {sets} WHERE id = ?", (*rb, a))
    details = [p.detail for p in _problems(store)]
    assert sum("is not the trial the experiment scheduled" in d for d in details) == 2, details


def test_trial_rows_renumbered_under_their_attempts_are_named(store):
    """Each attempt keeps its hashed trial_pk, which now names the next trial of the
    schedule (a coding attempt counted for a baseline trial, and so on)."""
    _sql(store, ("UPDATE trials SET id = id - 1", ()), ("UPDATE trials SET status = 'not_attempted' WHERE id = 0", ()))
    details = [p.detail for p in _problems(store)]
    assert any("did not run its trial row's variant and task" in d for d in details), details
    assert any("more attempt rows do not match their trial rows" in d for d in details), details


def test_an_attempt_whose_trial_row_moved_to_another_campaign_is_named(store):
    _sql(store, ("UPDATE trials SET campaign_id = 7 WHERE id = 16", ()), ("UPDATE campaigns SET scheduled_count = scheduled_count - 1", ()))
    details = [p.detail for p in _problems(store)]
    assert any("belongs to no trial row of its campaign (trial_pk 16" in d for d in details), details


def test_a_carried_result_pointed_at_another_trial_is_named(store):
    """A continuation made by the engine verifies; pointing one of its carried trials at
    another trial's row (a passing one, say) does not."""
    engine = make_engine(resolve_url(str(store)))
    try:
        origins = {t.trial_id: t.id for t in repository.trials_in_order(engine, 1)}
        continued = repository.create_continuation(engine, 1, origins)
        assert chain.verify_chain(engine, continued) == []
    finally:
        engine.dispose()
    other = origins["beta/invoice-rounding/r2/coding"]
    _sql(store, ("UPDATE trials SET carried_from_trial_pk = ? WHERE campaign_id = ? AND trial_id = 'alpha/semver-precedence/r1/baseline'", (other, continued)))
    details = [p.detail for p in _problems(store) if p.campaign_id == continued]
    assert len(details) == 1 and "carries a result that is not its own trial's" in details[0], details


@pytest.mark.parametrize(("target", "words"), [(None, "yet the campaign continues none"), (99, "continues no earlier campaign"), (2, "continues no earlier campaign")])
def test_a_continuation_pointed_away_from_the_campaign_it_continues_is_named(store, target, words):
    """Its report takes in the earlier campaign's interrupted attempts and spend: unlinked,
    they would drop out of it."""
    engine = make_engine(resolve_url(str(store)))
    try:
        continued = repository.create_continuation(engine, 1, repository.carryable_trials(engine, 1))
        assert chain.verify_chain(engine, continued) == []
    finally:
        engine.dispose()
    _sql(store, ("UPDATE campaigns SET continues_campaign_id = ? WHERE id = ?", (target, continued)))
    details = [p.detail for p in _problems(store) if p.campaign_id == continued]
    assert any(words in d for d in details), details


def _continued_after_a_cut(store: Path) -> int:
    """The last two trials' rows removed, then a continuation the engine makes: it carries
    every verified result and schedules the two again."""
    last = _rows(store, "SELECT trial_pk FROM attempts ORDER BY seq DESC LIMIT 2")
    _sql(store, *(("UPDATE trials SET status = 'not_attempted', not_attempted_reason = 'not_reached' WHERE id = ?", pk) for pk in last))
    _sql(store, ("DELETE FROM attempts WHERE trial_pk IN (?, ?)", tuple(pk for (pk,) in last)))
    engine = make_engine(resolve_url(str(store)))
    try:
        continued = repository.create_continuation(engine, 1, repository.carryable_trials(engine, 1))
        assert chain.verify_chain(engine) == []
    finally:
        engine.dispose()
    assert _one(store, "SELECT count(*) FROM trials WHERE campaign_id = ? AND carried_from_trial_pk IS NULL", continued) == (2,)
    return continued


def test_a_carried_result_dropped_from_a_continuation_is_named(store):
    """Set back to run again, a passing trial could get a second, different verdict."""
    continued = _continued_after_a_cut(store)
    _sql(store, ("UPDATE trials SET carried_from_trial_pk = NULL, status = 'scheduled' WHERE campaign_id = ? AND position = 0", (continued,)))
    details = [p.detail for p in _problems(store) if p.campaign_id == continued]
    assert len(details) == 1 and details[0].startswith("1 verified results of the campaign it continues are not carried over, first 'alpha/"), details


def test_a_continuation_carrying_a_result_the_campaign_it_continues_never_had_is_named(store):
    continued = _continued_after_a_cut(store)
    (trial_id, origin), = _rows(store, "SELECT t.trial_id, o.id FROM trials t JOIN trials o ON o.trial_id = t.trial_id AND o.campaign_id = 1 "
                                       "WHERE t.campaign_id = ? AND t.carried_from_trial_pk IS NULL ORDER BY t.position LIMIT 1", continued)  # fmt: skip
    _sql(store, ("UPDATE trials SET carried_from_trial_pk = ?, status = 'finished' WHERE campaign_id = ? AND trial_id = ?", (origin, continued, trial_id)))
    details = [p.detail for p in _problems(store) if p.campaign_id == continued]
    assert any(d.startswith(f"1 trials carry a result the campaign it continues holds no verified result for, first {trial_id!r}") for d in details), details


@pytest.mark.parametrize("store", ["nonpaired"], indirect=True)
def test_a_nonpaired_runs_task_renamed_is_named(store):
    _sql(store, ("UPDATE trials SET task = 'csv-merge' WHERE position = 1", ()))
    assert any("its task differs" in p.detail for p in _problems(store))


def test_a_probe_or_task_check_written_with_the_all_zero_digest_still_verifies(store):
    """Before their digest was computed, probes and task checks stored an all-zero one."""
    _sql(store, ("UPDATE campaigns SET experiment_json = ?, experiment_digest = ?", ('{"kind": "probe"}', "0" * 64)), ("DELETE FROM attempts", ()))
    assert [p.detail for p in _problems(store) if "experiment" in p.detail] == []
    # ... but not any other experiment under the all-zero digest.
    _sql(store, ("UPDATE campaigns SET experiment_json = ?", ('{"kind": "campaign"}',)))
    assert any("does not match its experiment_digest" in p.detail for p in _problems(store))


# --- values no column type reads: one line from every command, never a traceback ----------------------

HOSTILE = {
    "a seed that is text": ("UPDATE campaigns SET seed = 'abc'", "row's seed is not its experiment's"),
    "a campaign timestamp that is text": ("UPDATE campaigns SET created_at = 'nope'", "the campaign row's created_at is no timestamp"),
    "a campaign timestamp that is a blob": ("UPDATE campaigns SET deadline_at = X'00'", "the campaign row's deadline_at is no timestamp"),
    "a trial timestamp that is text": ("UPDATE trials SET updated_at = 'nope' WHERE id = 2", "trial row 2's updated_at is no timestamp"),
    # Timestamps SQLite's own datetime() reads, and the models' reader does not.
    "a campaign timestamp of 'now'": ("UPDATE campaigns SET started_at = 'now'", "the campaign row's started_at is no timestamp"),
    "a trial timestamp on 30 February": ("UPDATE trials SET updated_at = '2026-02-30 00:00:00' WHERE id = 4", "trial row 4's updated_at is no timestamp"),
    "an experiment that is no JSON": ("UPDATE campaigns SET experiment_json = '[1'", "is not the JSON the engine writes"),
}


@pytest.mark.parametrize("edit", HOSTILE, ids=list(HOSTILE))
def test_a_value_no_reader_can_read_is_named_by_verify_and_stops_every_command_with_one_line(store, finished, edit, tmp_path):
    sql, words = HOSTILE[edit]
    _sql(store, (sql, ()))
    assert any(words in p.detail for p in _problems(store)), [p.line() for p in _problems(store)]
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(store, out / "campaign.db")
    commands = [
        ["report", "1", "--output", str(tmp_path / "r.json"), "--allow-unverified", "--db", str(store)],
        ["export", "1", "--output-dir", str(tmp_path / "e"), "--allow-unverified", "--db", str(store)],
        ["power", "--campaign", "1", "--effect", "0.1", "--db", str(store)],
        ["coding", "--campaign", "--providers", "alpha,beta", "--providers-catalog", str(finished["catalog"]), "--tasks", TASKS,
         "--repetitions", "2", "--live", "--resume", "--output-dir", str(out)],
    ]  # fmt: skip
    for args in commands:
        result = CliRunner().invoke(cli, args)
        # Published unverified, a report may be written; what it may not do is crash.
        assert result.exception is None or isinstance(result.exception, SystemExit), (args[0], result.exception)
        if result.exit_code != 0:
            assert result.exit_code == 1 and result.output.startswith("Error:") and "Traceback" not in result.output, (args[0], result.output)
    assert _one(out / "campaign.db", "SELECT count(*) FROM attempts") == _one(store, "SELECT count(*) FROM attempts")


# --- the schedules the experiments rebuild (pure) ---------------------------------------------------


def test_each_lanes_experiment_rebuilds_the_schedule_that_lane_wrote():
    tasks = ["t-a", "t-b", "t-c"]
    variants = [{"name": "baseline", "overlay_digest": "a" * 64}, {"name": "coding", "overlay_digest": "b" * 64}]
    paired = stored_schedule({"tasks": tasks, "repetitions": 3, "seed": 11, "variants": variants, "model": "zai:glm-5", "agent": "codex"})
    assert (paired.kind, paired.model, paired.provider) == ("paired", "zai:glm-5", "zai")
    assert paired.rows == [dataclasses.astuple(t) for t in build_schedule(tasks, 3, 11)]
    many = stored_schedule({"kind": "campaign", "tasks": tasks, "repetitions": 2, "seed": 5, "variants": variants,
                            "providers": [{"name": "alpha", "model": "m:1"}, {"name": "beta", "model": "m:2"}]})  # fmt: skip
    assert (many.kind, many.model, many.provider) == ("campaign", "m:1", None)
    assert many.rows == [dataclasses.astuple(t) for t in build_schedule(tasks, 2, 5, providers=["alpha", "beta"])]
    single = stored_schedule({"kind": "nonpaired", "tasks": tasks, "model": "offline:synthetic"})
    assert (single.kind, single.provider) == ("nonpaired", "offline")
    assert single.rows == [dataclasses.astuple(t) for t in single_run(tasks)]


@pytest.mark.parametrize("experiment", [{}, {"kind": "probe"}, {"kind": "task_check", "suite": "s"}, {"kind": "campaign", "tasks": "abc"}, {"tasks": ["a"], "variants": 3}])
def test_an_experiment_that_fixes_no_schedule_rebuilds_none(experiment):
    assert stored_schedule(experiment) is None


def test_the_stored_digest_is_the_experiments_own(engine):
    """create_campaign computes the genesis: no caller can store a digest of something else."""
    experiment = {"kind": "nonpaired", "tasks": ["semver-precedence"], "model": "offline:synthetic"}
    cid = repository.create_campaign(
        engine, repository.NewCampaign(kind="nonpaired", state="running", live=False, agent="offline", seed=0, experiment=experiment),
        single_run(["semver-precedence"]), model="offline:synthetic", default_provider="offline",
    )  # fmt: skip
    with engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT experiment_digest FROM campaigns WHERE id = ?", (cid,)).scalar_one()
    assert stored == spec_digest(experiment)
    assert chain.verify_chain(engine, cid) == []
