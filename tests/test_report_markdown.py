"""The Markdown summary and the forest plot say what the JSON says, in words and a picture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from test_report_fixtures import full_attempt, insert_campaign, paired_trials

from campaign.report import build_report, render
from campaign.report.forest import render_svg
from campaign.report.markdown import render_markdown
from campaign.report.words import signed

SVG = "{http://www.w3.org/2000/svg}"


def _report(engine, tasks=12, experiment=None, **attempt_overrides):
    def attempt(task, rep, variant):
        i = int(task[1:])
        return full_attempt(
            verified_pass=(i + rep + (variant == "coding")) % 3 != 0,
            wall_seconds=None if (i == 0 and variant == "coding") else 60.0 + i + (5 if variant == "coding" else 0),
            **attempt_overrides,
        )

    return build_report(engine, insert_campaign(engine, paired_trials([f"t{i}" for i in range(tasks)], 2, attempt), experiment=experiment))


# A multi-provider campaign records each provider's catalog price basis.
LIST_PRICED = {"model": "openai-codex:gpt-6.1-sol", "seed": 107, "providers": [{"name": "openai-codex", "agent": "codex", "basis": "public list price"}]}


def test_markdown_states_decision_table_intervals_missing_and_basis(engine):
    report = _report(engine, experiment=LIST_PRICED, spend_complete=False, equivalent_spend_usd=0.01)
    md = render_markdown(report, "plot.svg")
    assert "**Keep current defaults; keep the coding disclosure profile opt-in.**" in md
    assert "schema-token estimates are not evidence" in md
    assert "| baseline | 24 |" in md and "| coding | 24 |" in md
    assert "(partial)" in md and "null (incomplete_missing_spend)" in md
    assert "list-price equivalent, not billed" in md
    assert "verified success (rate)" in md and "[" in md.split("| verified success (rate) |")[1].splitlines()[0]
    assert "![Forest plot of paired differences per task](plot.svg)" in md
    assert "- coding, attempts (of 24) with the value unknown, recorded as null and never 0: wall seconds 2." in md
    assert "not a provider invoice" in md
    assert "provider default" in md
    assert "Exploratory" not in md  # twelve clusters


def test_small_task_sets_are_labelled_exploratory_and_one_cluster_has_no_interval(engine):
    report = _report(engine, tasks=1)
    md = render_markdown(report, "p.svg")
    assert "**Exploratory:**" in md
    assert "null (single_task_cluster)" in md
    assert report["decision"]["basis"] == "single_task_cluster"


def test_equivalent_spend_column_only_when_recorded(engine):
    md = render_markdown(_report(engine, tasks=2), "p.svg")
    assert "list-price equivalent" not in md


def test_forest_plot_is_a_standalone_svg_with_a_row_per_task_and_the_overall_interval(engine):
    report = _report(engine)
    svg = render_svg(report)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    circles = root.findall(f"{SVG}circle")
    tasks = report["paired_differences"]["per_task"]
    with_wall = [t for t in tasks if t["wall_seconds_difference"] is not None]
    assert len(circles) == len(tasks) + len(with_wall)
    assert len(root.findall(f"{SVG}polygon")) == 2  # overall success and wall estimates
    labels = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert any(label.startswith("t11 (n=2)") for label in labels)
    assert "Overall (95% CI)" in labels
    width, height = float(root.get("width")), float(root.get("height"))
    for c in circles:
        assert 0 <= float(c.get("cx")) <= width and 0 <= float(c.get("cy")) <= height
    lowered = svg.lower()
    assert "href" not in lowered and "<script" not in lowered and "foreignobject" not in lowered


def test_render_gives_json_markdown_and_svg_together(engine):
    report = _report(engine, tasks=3)
    text, md, svg = render(report, "x.svg")
    assert json.loads(text) == report
    assert len(text.splitlines()) > len(report["trials"])  # one line per trial, the rest indented
    assert md.startswith("# Paired disclosure report")
    assert svg.startswith("<svg")


def test_forest_wall_ticks_are_labelled_with_their_values_when_differences_are_small(engine):
    """Sub-second (or odd-step) wall differences get tick labels that say the tick's
    value: a tick at +0.25 s printed with no decimals would read "0"."""

    def attempt(task, rep, variant):
        return full_attempt(wall_seconds=10.0 + (0.3 if variant == "coding" else 0.0) + 0.01 * int(task[1:]))

    report = build_report(engine, insert_campaign(engine, paired_trials(["t0", "t1", "t2"], 2, attempt)))
    root = ET.fromstring(render_svg(report))
    numbers = []
    for t in root.iter(f"{SVG}text"):
        try:
            numbers.append(float(t.text))
        except (TypeError, ValueError):
            pass
    success_ticks, wall_ticks = numbers[:5], numbers[5:10]
    assert success_ticks == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert wall_ticks == [-0.5, -0.25, 0.0, 0.25, 0.5]
    # A zero label appears only where the tick is zero.
    assert [n for n in wall_ticks if n == 0] == [0.0]


def test_reasoning_is_described_as_recorded_not_as_a_fact_about_the_base_config(engine):
    """The engine never reads a reasoning setting out of the base config, so the
    summary may say what the experiment records, not that the base config lacks one."""
    md = render_markdown(_report(engine, tasks=2), "p.svg")
    line = next(line for line in md.splitlines() if line.startswith("- Reasoning:"))
    assert "provider default" in line and "not observed" in line
    assert "base config" not in line


def test_a_run_with_no_attempts_does_not_claim_every_counter_was_observed(engine):
    """Stopped before its first attempt: nothing was measured, which the summary must
    say rather than the vacuous "every counter was observed for every attempt"."""
    cid = insert_campaign(engine, paired_trials(["a"], 1, lambda t, r, v: None), live=True, state="stopped", stop_reason="run_deadline")
    md = render_markdown(build_report(engine, cid), "p.svg")
    missing = md.split("## What is missing and why")[1].split("\n## ")[0]
    assert "observed for every attempt" not in missing
    assert "No trial was attempted" in missing


def test_spend_that_no_attempt_reported_is_not_called_partial(engine):
    # The JSON says none_measured; the Markdown said "measured spend is partial".
    none = [{"task": "a", "repetition": 1, "variant": v, "attempt": {"verified_pass": True, "cost_usd": None, "spend_complete": False}} for v in ("baseline", "coding")]
    text = render_markdown(build_report(engine, insert_campaign(engine, none)))
    assert "spend complete for 0 of 1 attempts paid for, so no spend was measured and cost per verified success is not computed." in text
    assert "measured spend is partial" not in text
    some = [{"task": "a", "repetition": 1, "variant": v, "attempt": {"verified_pass": True, "cost_usd": 0.25, "spend_complete": False}} for v in ("baseline", "coding")]
    assert "so measured spend is partial and" in render_markdown(build_report(engine, insert_campaign(engine, some)))


def test_a_small_difference_never_prints_as_zero_or_negative_zero():
    assert signed(-0.0004, 1) == "-0.0004"
    assert signed(0.00004) == "+0.00004"
    assert signed(-0.0) == signed(0.0) == "+0.000"
    assert signed(-0.26, 1) == "-0.3" and signed(None) == "null"


def test_a_priced_run_without_token_counts_says_its_equivalent_spend_is_unknown(engine):
    # A no-usage agent on a list-priced route: the column stays, and says why it is empty.
    report = _report(engine, experiment=LIST_PRICED, uncached_input_tokens=None, cached_input_tokens=None, cache_write_tokens=None, output_tokens=None, equivalent_spend_usd=None)
    md = render_markdown(report, "p.svg")
    assert "equivalent spend USD (list-price equivalent, not billed)" in md
    assert md.count("unknown (no attempt recorded every token count it needs)") == 2  # one per variant
