"""The Markdown summary and the forest plot say what the JSON says, in words and a picture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from test_report_fixtures import full_attempt, insert_campaign, paired_trials

from campaign.report import build_report, render
from campaign.report.forest import render_svg
from campaign.report.markdown import render_markdown

SVG = "{http://www.w3.org/2000/svg}"


def _report(engine, tasks=12, **attempt_overrides):
    def attempt(task, rep, variant):
        i = int(task[1:])
        return full_attempt(
            verified_pass=(i + rep + (variant == "coding")) % 3 != 0,
            wall_seconds=None if (i == 0 and variant == "coding") else 60.0 + i + (5 if variant == "coding" else 0),
            **attempt_overrides,
        )

    return build_report(engine, insert_campaign(engine, paired_trials([f"t{i}" for i in range(tasks)], 2, attempt)))


def test_markdown_states_decision_table_intervals_missing_and_basis(engine):
    report = _report(engine, spend_complete=False, equivalent_spend_usd=0.01)
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
