"""The paired task rows: each candidate against the baseline, one comparison at a time."""

from __future__ import annotations

from test_report_fixtures import insert_campaign

from campaign.report.aggregates import Scope, task_rows

# Per (task, repetition): which of the three variants verified.
PASSED = {
    ("t1", 1): {"default": True, "lean": True, "terse": False},
    ("t1", 2): {"default": False, "lean": True, "terse": False},
    ("t2", 1): {"default": True, "lean": False, "terse": True},
    ("t2", 2): {"default": True, "lean": True, "terse": True},
}
WALL = {"default": 10.0, "lean": 7.0, "terse": 12.5}


def three_variants() -> list[dict]:
    return [
        {"task": task, "repetition": rep, "variant": v, "attempt": {"verified_pass": ok, "wall_seconds": WALL[v] + rep}}
        for (task, rep), by_variant in PASSED.items()
        for v, ok in by_variant.items()
    ]


def test_each_candidate_is_compared_with_the_baseline_alone(engine):
    scope = Scope(insert_campaign(engine, three_variants()))
    with engine.connect() as conn:
        lean = {t.task: t for t in task_rows(conn, scope, "default", "lean")}
        terse = {t.task: t for t in task_rows(conn, scope, "default", "terse")}
    # t1: lean wins the second pair; t2: lean loses the first.
    assert (lean["t1"].candidate_only, lean["t1"].baseline_only, lean["t1"].success_difference) == (1, 0, 0.5)
    assert (lean["t2"].candidate_only, lean["t2"].baseline_only, lean["t2"].success_difference) == (0, 1, -0.5)
    assert (lean["t1"].baseline_successes, lean["t1"].candidate_successes) == (1, 2)
    # terse loses t1's first pair and ties the rest; its walls are its own, not lean's.
    assert (terse["t1"].candidate_only, terse["t1"].baseline_only) == (0, 1) and terse["t2"].success_difference == 0.0
    assert lean["t1"].wall_differences == (-3.0, -3.0) and terse["t2"].wall_differences == (2.5, 2.5)
    assert all(t.pairs == 2 for t in (*lean.values(), *terse.values()))


def test_a_pair_missing_the_compared_candidate_is_not_counted(engine):
    rows = [r for r in three_variants() if not (r["variant"] == "terse" and r["task"] == "t1" and r["repetition"] == 2)]
    scope = Scope(insert_campaign(engine, rows))
    with engine.connect() as conn:
        assert {t.task: t.pairs for t in task_rows(conn, scope, "default", "terse")} == {"t1": 1, "t2": 2}
        assert {t.task: t.pairs for t in task_rows(conn, scope, "default", "lean")} == {"t1": 2, "t2": 2}


def test_a_report_keeps_operator_named_variants_in_the_experiments_order(engine):
    from campaign.report import build_report

    experiment = {"model": "replay:scripted", "seed": 107, "tasks": ["t1", "t2"], "variants": [{"name": n} for n in ("default", "terse", "lean")]}
    rows = three_variants() + [{"task": "t3", "repetition": 1, "variant": "Not-A-Name", "attempt": {"verified_pass": True}}]
    report = build_report(engine, insert_campaign(engine, rows, experiment=experiment))
    names = [v["variant"] for v in report["variants"]]
    # The experiment's three first, in its order; no row for the built-in pair it never ran.
    assert names[:3] == ["default", "terse", "lean"] and "baseline" not in names and "coding" not in names
    assert {t["variant"] for t in report["trials"]} >= {"default", "terse", "lean"}
    # A name outside the rule is an id the report does not show (nor calls a word).
    assert "Not-A-Name" not in {t["variant"] for t in report["trials"]} and "Not-A-Name" not in names
