"""Every report says what its run could detect, and "inconclusive" where its interval spans 0."""

from __future__ import annotations

from test_report_fixtures import insert_campaign

from campaign.report import build_report, detectable
from campaign.report.aggregates import TaskRow
from campaign.report.markdown import render_markdown
from campaign.report.allowlist import is_allowlisted
from campaign.report.schema import REPORT_SCHEMA
from campaign.view.pages import differences_section


def trials(tasks: int, repetitions: int, coding_wins: bool) -> list[dict]:
    out = []
    for i in range(tasks):
        for rep in range(1, repetitions + 1):
            base = (i + rep) % 2 == 0
            coding = True if coding_wins else (i * rep) % 3 != 0
            out += [
                {"task": f"t{i:02d}", "repetition": rep, "variant": "baseline", "attempt": {"verified_pass": base}},
                {"task": f"t{i:02d}", "repetition": rep, "variant": "coding", "attempt": {"verified_pass": coding}},
            ]
    return out


def test_a_report_states_the_smallest_effect_its_size_detects_and_how(engine):
    report = build_report(engine, insert_campaign(engine, trials(12, 3, coding_wins=False)))
    found = report["paired_differences"]["detectable_effect"]
    assert 0 < found["effect"] < 1 and found["effect_reason"] is None
    assert (found["metric"], found["power"], found["confidence"], found["simulations"], found["method"]) == (
        "verified_success", 0.8, 0.95, 1000, "simulated_campaigns_of_this_size",
    )  # fmt: skip
    assert is_allowlisted(report, REPORT_SCHEMA)
    again = build_report(engine, insert_campaign(engine, trials(12, 3, coding_wins=False)))
    assert again["paired_differences"]["detectable_effect"] == found  # seeded


def test_where_the_interval_spans_zero_the_decision_says_inconclusive_below_that_effect(engine):
    report = build_report(engine, insert_campaign(engine, trials(12, 3, coding_wins=False)))
    pd = report["paired_differences"]
    assert pd["verified_success"]["ci_low"] <= 0 <= pd["verified_success"]["ci_high"]
    effect = pd["detectable_effect"]["effect"]
    md = render_markdown(report)
    decision = md.split("## Decision")[1].split("## Per variant")[0]
    assert f"Verified success is inconclusive: effects smaller than {effect:.3f} could not be detected at this size." in decision
    assert f"this run could detect (either way, 80% power): {effect:.3f}. How: 1000 campaigns" in md
    page = differences_section(pd)
    assert 'id="inconclusive"' in page and f"effects smaller than {effect:.3f}" in page
    assert f'data-value="{effect}"' in page


def test_an_interval_that_excludes_zero_is_not_called_inconclusive(engine):
    report = build_report(engine, insert_campaign(engine, trials(12, 3, coding_wins=True)))
    pd = report["paired_differences"]
    assert pd["verified_success"]["ci_low"] > 0
    assert detectable.inconclusive(pd) is None
    assert "inconclusive" not in render_markdown(report) and 'id="inconclusive"' not in differences_section(pd)
    assert pd["detectable_effect"]["effect"] is not None


def test_a_run_with_one_pair_per_task_says_why_it_cannot_tell(engine):
    report = build_report(engine, insert_campaign(engine, trials(12, 1, coding_wins=False)))
    found = report["paired_differences"]["detectable_effect"]
    assert (found["effect"], found["effect_reason"]) == (None, "one_pair_per_task")
    md = render_markdown(report)
    assert "Smallest detectable effect on verified success: not computed (one pair per task cannot tell repetition noise from between-task spread)." in md
    assert report["paired_differences"]["verified_success"]["ci_low"] < 0  # the interval spans 0
    assert "Verified success is inconclusive: the interval includes zero, and this run cannot say which effects it could have detected" in md


def test_the_simulation_runs_once_for_the_same_pairs_and_seed():
    rows = [TaskRow(f"t{i}", 4, 0.25, 1, 2, 4, None, candidate_only=1 + i % 2, baseline_only=i % 3) for i in range(6)]
    first = detectable.block(rows, 7)
    first["effect"] = "changed by its caller"
    before = detectable._block.cache_info()
    again = detectable.block(list(rows), 7)
    assert detectable._block.cache_info().hits == before.hits + 1
    assert again == detectable.block(rows, 7) and again["effect"] != "changed by its caller"
    detectable.block(rows, 8)
    assert detectable._block.cache_info().misses == before.misses + 1  # another seed, another simulation
