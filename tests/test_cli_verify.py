"""`campaign verify`: intact chains exit 0, tampered ones name the problem and exit 1."""

from __future__ import annotations

import sqlite3

from campaign.cli import cli
from campaign.schedule import build_schedule
from campaign.store import chain, repository


def _sealed_campaign(engine, clock, n: int = 3, experiment: dict | None = None) -> tuple[int, list[int]]:
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="campaign", state="running", live=False, agent="offline", seed=5, experiment=experiment or {}),
        build_schedule(["task-a", "task-b"], 1, seed=5),
        model="offline:synthetic",
        default_provider="offline",
    )
    ids = []
    for trial in repository.trials_in_order(engine, campaign_id)[:n]:
        assert repository.admit_trial(engine, trial.id)
        attempt_id = repository.start_attempt(engine, trial, clock=clock)
        clock.advance(10)
        repository.finish_attempt(engine, attempt_id, trial.id, clock=clock, outcome="passed", verified_pass=True, output_tokens=40, cost_usd=0.01)
        chain.seal_attempt(engine, attempt_id)
        ids.append(attempt_id)
    return campaign_id, ids


def test_intact_chain_exits_zero(runner, engine, db_url, clock):
    first, _ = _sealed_campaign(engine, clock, 3)
    _sealed_campaign(engine, clock, 2, experiment={"k": 2})
    result = runner.invoke(cli, ["verify", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert result.output == "chain intact: 5 rows\n"
    result = runner.invoke(cli, ["verify", str(first), "--db", db_url])
    assert result.exit_code == 0 and result.output == "chain intact: 3 rows\n"


def test_empty_store_is_intact(runner, engine, db_url):
    result = runner.invoke(cli, ["verify", "--db", db_url])
    assert result.exit_code == 0 and result.output == "chain intact: 0 rows\n"


def test_an_edited_row_exits_one_naming_it(runner, engine, db_path, db_url, clock):
    campaign_id, ids = _sealed_campaign(engine, clock, 3)
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE attempts SET verified_pass = 0 WHERE id = ?", (ids[1],))
    result = runner.invoke(cli, ["verify", str(campaign_id), "--db", db_url])
    assert result.exit_code == 1
    assert f"campaign {campaign_id} seq 2 (attempt {ids[1]}): edited:" in result.output
    assert "1 chain problem(s) in 3 rows" in result.output
    assert "chain intact" not in result.output


def test_a_deleted_row_exits_one_with_one_line_per_problem(runner, engine, db_path, db_url, clock):
    campaign_id, ids = _sealed_campaign(engine, clock, 3)
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM attempts WHERE id = ?", (ids[0],))
    result = runner.invoke(cli, ["verify", "--db", db_url])
    assert result.exit_code == 1
    problem_lines = [line for line in result.output.splitlines() if line.startswith(f"campaign {campaign_id}")]
    assert len(problem_lines) == 2
    assert "missing: seq 1 missing" in problem_lines[0]
    assert "has no finished attempt row" in problem_lines[1]


def test_unknown_campaign_and_missing_store_are_usage_errors(runner, engine, db_url, tmp_path):
    result = runner.invoke(cli, ["verify", "42", "--db", db_url])
    assert result.exit_code == 2 and "no campaign 42" in result.output
    result = runner.invoke(cli, ["verify", "--db", str(tmp_path / "absent.db")])
    assert result.exit_code == 2 and "no store" in result.output
    assert not (tmp_path / "absent.db").exists()


def test_verify_is_listed_with_its_one_line_help(runner):
    result = runner.invoke(cli, ["--help"])
    assert any(line.split()[:2] == ["verify", "Check"] for line in result.output.splitlines() if line.strip())
