"""An experiment of its own variants is reported candidate by candidate against its baseline,
each interval adjusted for the number of candidates; the built-in pair's report is unchanged."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_report_fixtures import insert_campaign

from campaign.cli import cli
from campaign.report import build_report, paired, stats
from campaign.view.pages import differences_section

TASKS = [f"task-{i:02d}" for i in range(12)]
REPETITIONS = 3
# Each variant's chance to verify: "lean" clearly better than the baseline, "terse" about the same.
RATES = {"default": 0.3, "lean": 0.9, "terse": 0.35, "baseline": 0.3, "coding": 0.9}


def outcomes(variants: tuple[str, ...], seed: int = 5) -> dict[tuple[str, int, str], tuple[bool, float]]:
    rng = random.Random(seed)
    return {(t, r, v): (rng.random() < RATES[v], round(rng.uniform(50, 150), 1)) for t in TASKS for r in range(1, REPETITIONS + 1) for v in variants}


def store(engine, variants: tuple[str, ...], *, experiment_variants: bool = True) -> tuple[int, dict]:
    seen = outcomes(variants)
    rows = [
        {"task": t, "repetition": r, "variant": v, "attempt": {"verified_pass": ok, "wall_seconds": wall}}
        for (t, r, v), (ok, wall) in seen.items()
    ]
    experiment = {"model": "replay:scripted", "seed": 107, "tasks": TASKS}
    if experiment_variants:
        experiment["variants"] = [{"name": v} for v in variants]
    return insert_campaign(engine, rows, experiment=experiment), seen


def expected_success(seen: dict, baseline: str, candidate: str, confidence: float) -> stats.Estimate:
    """The interval computed here from the pairs, as the report's method states it."""
    clusters = [[float(seen[(t, r, candidate)][0]) - float(seen[(t, r, baseline)][0]) for r in range(1, REPETITIONS + 1)] for t in TASKS]
    return stats.paired_interval(clusters, 107, confidence, bounds=paired.SUCCESS_BOUNDS, empty_reason="no_complete_pairs")


def test_each_candidate_is_compared_with_the_baseline_at_the_familys_level(engine):
    campaign_id, seen = store(engine, ("default", "terse", "lean"))
    pd = build_report(engine, campaign_id)["paired_differences"]
    assert pd["direction"] == "candidate_minus_baseline" and pd["baseline"] == "default"
    assert pd["adjustment"] == {"method": "bonferroni", "candidates": 2, "family_confidence": 0.95, "comparison_confidence": 0.975}
    # The built-in pair's one comparison is not there: nothing reads a default-minus-nothing.
    assert [pd[k] for k in ("verified_success", "wall_seconds", "detectable_effect", "per_task", "exploratory")] == [None] * 5
    assert [c["candidate"] for c in pd["comparisons"]] == ["terse", "lean"]
    for c in pd["comparisons"]:
        want = expected_success(seen, "default", c["candidate"], 0.975)
        got = c["verified_success"]
        assert (got["estimate"], got["ci_low"], got["ci_high"], got["tasks"], got["pairs"]) == pytest.approx(
            (want.estimate, want.ci_low, want.ci_high, len(TASKS), len(TASKS) * REPETITIONS)
        )
        # Wider than the unadjusted 95% interval of the same pairs.
        plain = expected_success(seen, "default", c["candidate"], 0.95)
        assert got["ci_low"] < plain.ci_low and got["ci_high"] > plain.ci_high
        assert c["detectable_effect"]["confidence"] == 0.975 and c["exploratory"] is False
        means = {t["task"]: t["success_difference"] for t in c["per_task"]}
        for task in TASKS:
            diffs = [float(seen[(task, r, c["candidate"])][0]) - float(seen[(task, r, "default")][0]) for r in range(1, REPETITIONS + 1)]
            assert means[task] == pytest.approx(np.mean(diffs))
    lean, terse = pd["comparisons"][1], pd["comparisons"][0]
    assert lean["verified_success"]["ci_low"] > 0 and lean["decision_basis"] == "measured_benefit_requires_review"
    assert terse["decision_basis"] == "interval_includes_zero"


def test_two_variants_of_their_own_are_one_comparison_at_95(engine):
    campaign_id, seen = store(engine, ("default", "lean"))
    report = build_report(engine, campaign_id)
    pd = report["paired_differences"]
    assert pd["adjustment"]["comparison_confidence"] == 0.95 and [c["candidate"] for c in pd["comparisons"]] == ["lean"]
    want = expected_success(seen, "default", "lean", 0.95)
    assert (pd["comparisons"][0]["verified_success"]["ci_low"], pd["comparisons"][0]["verified_success"]["ci_high"]) == pytest.approx((want.ci_low, want.ci_high))
    # Decisions are the candidates': the experiment as a whole records none of its own,
    # nor the spec's word on its own question (the coding disclosure stays opt-in).
    assert report["decision"]["basis"] is None and "coding_profile" not in report["decision"]


def test_the_builtin_pair_keeps_its_one_comparison_and_no_new_keys(engine):
    for named in (True, False):  # stores written before the experiment named its variants too
        campaign_id, seen = store(engine, ("baseline", "coding"), experiment_variants=named)
        report = build_report(engine, campaign_id)
        pd = report["paired_differences"]
        assert pd["direction"] == "coding_minus_baseline"
        assert not {"baseline", "adjustment", "comparisons"} & set(pd)
        want = expected_success(seen, "baseline", "coding", 0.95)
        assert (pd["verified_success"]["ci_low"], pd["verified_success"]["ci_high"]) == pytest.approx((want.ci_low, want.ci_high))
        assert report["decision"]["basis"] == "measured_benefit_requires_review" and report["decision"]["coding_profile"] == "opt_in"


def test_the_report_files_say_each_candidate_minus_the_baseline_and_decide_per_candidate(engine, db_url, runner, tmp_path):
    store(engine, ("default", "terse", "lean"))
    out = tmp_path / "r" / "report.json"
    result = runner.invoke(cli, ["report", "--output", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    md = out.with_suffix(".md").read_text()
    assert "## Paired differences (each candidate minus default)" in md
    assert md.index("### terse minus default") < md.index("### lean minus default")
    assert "| metric | estimate | 97.5% interval |" in md and "coding minus baseline" not in md
    assert "**No variant is adopted by this report.**" in md and "Keep current defaults" not in md
    assert "- `lean minus default`: **better** (verified success +" in md
    assert "- `terse minus default`: **inconclusive at this size** (" in md
    svg = out.with_suffix(".svg").read_text()
    assert "each candidate minus default" in svg and "terse minus default (97.5% CI)" in svg and "lean minus default (97.5% CI)" in svg


def test_the_view_shows_each_comparison_with_its_own_ids(engine):
    campaign_id, _ = store(engine, ("default", "terse", "lean"))
    html = differences_section(build_report(engine, campaign_id)["paired_differences"])
    assert html.count("<table") == 2 and 'id="differences-0"' in html and 'id="differences-1"' in html
    assert "terse minus default" in html and "lean minus default" in html and "97.5% interval" in html
