"""`campaign coding --pilot`: before a run is paid for, what its size detects and costs (warns, never refuses)."""

from __future__ import annotations

import json

import pytest
from test_cli_coding_paired_variants import agent
from test_cli_power import pilot_store
from workspace import refused, run

TASKS = "semver-precedence,invoice-rounding"


@pytest.fixture
def pilot(tmp_path) -> str:
    # The paired lane's trials carry the model's provider (openai-codex by default).
    from test_report_fixtures import insert_campaign

    from campaign.store.engine import make_engine, resolve_url
    from campaign.store.migrate import upgrade_engine

    db = tmp_path / "pilot" / "pilot.db"
    db.parent.mkdir()
    engine = make_engine(resolve_url(str(db)))
    upgrade_engine(engine)
    trials = []
    for task in TASKS.split(","):
        for rep in (1, 2, 3):
            trials += [
                {"task": task, "repetition": rep, "variant": "baseline", "attempt": {"verified_pass": rep != 2, "cost_usd": 0.25, "spend_complete": True}},
                {"task": task, "repetition": rep, "variant": "coding", "attempt": {"verified_pass": rep != 3 or task == "invoice-rounding", "cost_usd": 0.125, "spend_complete": True}},
            ]
    insert_campaign(engine, trials)
    engine.dispose()
    return str(db)


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--live", "--plan", "p.json", "--approve-plan-digest", "a" * 64, "--pilot", "1"], "--pilot"),
        (["--target-effect", "0.1"], "--target-effect"),
        (["--pilot-db", "x.db"], "--pilot-db"),
        (["--pilot", "1", "--target-effect", "0"], "--target-effect"),
        (["--pilot", "9"], "--pilot"),
    ],
)
def test_misplaced_or_wrong_pilot_options_are_refused_and_nothing_is_written(ws, pilot, extra, option):
    extra = [pilot if e == "x.db" else e for e in extra]
    refused(ws, ws.args(*extra, "--pilot-db", pilot) if "--pilot-db" not in extra and "--pilot" in extra else ws.args(*extra), option)


def test_a_nonpaired_run_has_no_pilot(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["coding", "--output", str(tmp_path / "r.json"), "--pilot", "1"])
    assert result.exit_code == 2 and "--pilot" in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_plan_template_prints_the_forecast_and_warns_below_the_target(ws, pilot):
    plain = run(ws.args("--repetitions", "8", tasks=TASKS, output=ws.out_dir / "plain.json"))
    assert plain.exit_code == 0, plain.output
    result = run(ws.args("--repetitions", "8", "--pilot", "1", "--pilot-db", pilot, "--target-effect", "0.05", tasks=TASKS))
    assert result.exit_code == 0, result.output
    assert "forecast from pilot campaign 1 (2 task clusters, 6 complete pairs) for this run: 2 tasks x 8 repetitions x 1 provider(s), 32 trials" in result.output
    # Two task clusters: the interval over tasks has one degree of freedom wherever the
    # pairs' own spread does not floor it, so no effect is detected at 80% power; the
    # forecast says so, and warns against the target.
    assert "detectable effect: unknown (not_detectable_at_this_size)" in result.output
    assert "spend: 6.0000 USD" in result.output  # 2 tasks x 8 repetitions x (0.25 + 0.125)
    assert "WARNING: the smallest effect this size detects at 80% power is unknown, not below --target-effect 0.050" in result.output
    # The forecast is advice: the template and its digest are what they are without it.
    with_pilot, without = json.loads(ws.output.read_text()), json.loads((ws.out_dir / "plain.json").read_text())
    assert with_pilot["plan_digest"] == without["plan_digest"]


def test_a_campaign_warns_when_the_forecast_passes_its_cap_and_still_runs(tmp_path):
    db = pilot_store(tmp_path / "pilot.db", repetitions=2)
    out = tmp_path / "out"
    args = ["coding", "--campaign", "--providers", "offline", "--repetitions", "4", "--output-dir", str(out), "--pilot", "1", "--pilot-db", db]
    result = run([*args, "--max-spend-usd", "1", "--attempt-ceiling-usd", "0.1", "--target-effect", "0.5"])
    assert result.exit_code == 0, result.output
    assert "WARNING: the forecast spend passes a spend cap" in result.output
    assert "would run 96 of 96 trials" in result.output
    assert "not below --target-effect" not in result.output  # 12 task clusters of 4 pairs detect 0.5
    # Without --pilot-db the pilot is read from the run's own store, which does not exist yet.
    missing = run(args[:-2])
    assert missing.exit_code == 2 and "--pilot-db" in missing.output


def test_a_provider_the_pilot_never_ran_has_no_spend_forecast(tmp_path, tokenizer_cache, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))  # the replay provider's proxy needs it
    db = pilot_store(tmp_path / "pilot.db", repetitions=2)
    result = run(["coding", "--campaign", "--providers", "offline,replay", "--repetitions", "2", "--output-dir", str(tmp_path / "out"), "--pilot", "1", "--pilot-db", db])
    assert result.exit_code == 0, result.output
    assert "spend: no forecast: the pilot has no attempts of replay" in result.output
    assert "x 2 provider(s)" in result.output


def test_the_forecast_counts_every_variant_the_run_schedules(ws, pilot, tokenizer_cache, monkeypatch):
    # Three variants: three trials per pair, and intervals at the family's level.
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    args = ws.args("--agent", str(agent(ws)), "--variants", "plain,terse,think", "--model", "replay:scripted", "--repetitions", "8", "--pilot", "1", "--pilot-db", pilot, tasks=TASKS)
    result = run(args)
    assert result.exit_code == 0, result.output
    assert "for this run: 2 tasks x 8 repetitions x 1 provider(s) x 3 variants, 48 trials" in result.output
    assert "planned 48 trials (2 tasks x 3 variants x 8 repetitions)" in result.output
