"""The plan: one row per number of repetitions, and the fewest that meet the target."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.power import planner
from campaign.power.forecast import CellCost, cost_model
from campaign.power.planner import Request, Target
from campaign.report import detectable
from campaign.report.spread import SpreadUnknown, TaskPairs, fit

# A pilot of 30 tasks x 3 pairs, some flipping, some not.
PILOT = [TaskPairs(f"t{i:02d}", 3, i % 3 == 0, i % 5 == 0) for i in range(30)]
CELLS = [CellCost("p", f"t{i:02d}", v, 3, 3, 3 * 10**8, 0, 3, 30.0, 0) for i in range(30) for v in ("baseline", "coding")]


def request(**kw) -> Request:
    return Request(**{"repetitions": (1, 2, 4, 8), "tasks": 30, "providers": 1, "seed": 11, "sims": 400, **kw})


def test_more_repetitions_narrow_the_interval_and_shrink_the_detectable_effect():
    plan = planner.plan(fit(PILOT), cost_model(CELLS), request(target=Target(effect=0.15)))
    widths = [r.half_width for r in plan.rows]
    effects = [r.detectable for r in plan.rows]
    assert widths == sorted(widths, reverse=True) and effects == sorted(effects, reverse=True)
    assert [r.power for r in plan.rows] == sorted(r.power for r in plan.rows)
    assert [r.trials for r in plan.rows] == [2 * r * 30 for r in (1, 2, 4, 8)]
    assert [r.spend.usd for r in plan.rows] == pytest.approx([r * 30 * 0.2 for r in (1, 2, 4, 8)])


def test_the_smallest_number_of_repetitions_meeting_the_target_is_named():
    plan = planner.plan(fit(PILOT), None, request(target=Target(half_width=0.1)))
    meets = [r.meets for r in plan.rows]
    assert meets == sorted(meets)  # once met, met
    assert plan.smallest is not None and plan.smallest.half_width <= 0.1
    assert all(not r.meets for r in plan.rows if r.repetitions < plan.smallest.repetitions)
    assert planner.plan(fit(PILOT), None, request()).smallest is None  # no target, no name


def test_a_plan_is_reproducible_and_a_row_does_not_depend_on_the_others():
    a = planner.plan(fit(PILOT), cost_model(CELLS), request(target=Target(effect=0.2)))
    b = planner.plan(fit(PILOT), cost_model(CELLS), request(target=Target(effect=0.2), repetitions=(4,)))
    assert a.rows[2] == b.rows[0]
    again = planner.plan(fit(PILOT), cost_model(CELLS), request(target=Target(effect=0.2)))
    assert a.rows == again.rows


def test_providers_multiply_the_pairs_of_a_task():
    one = planner.plan(fit(PILOT), None, request(repetitions=(4,)))
    two = planner.plan(fit(PILOT), None, request(repetitions=(2,), providers=2))
    assert one.rows[0].half_width == pytest.approx(two.rows[0].half_width)
    assert one.rows[0].trials == two.rows[0].trials


def test_a_pilot_without_spread_still_forecasts_spend_and_says_why_nothing_else():
    unknown = pytest.raises(SpreadUnknown, fit, [TaskPairs(f"t{i}", 1, i % 2, 0) for i in range(5)]).value
    plan = planner.plan(unknown, cost_model(CELLS), request(target=Target(effect=0.1)))
    assert plan.spread is None and plan.spread_reason == "one_pair_per_task"
    assert all(r.half_width is None and r.power is None and r.reason == "one_pair_per_task" for r in plan.rows)
    assert all(r.spend is not None and r.spend.usd for r in plan.rows)
    assert plan.smallest is None


def test_the_planners_row_at_the_pilots_size_matches_the_reports_detectable_effect():
    found = detectable.at_run_size(PILOT, seed=11, sims=400)
    plan = planner.plan(fit(PILOT), None, request(repetitions=(3,)))
    assert found.effect == pytest.approx(plan.rows[0].detectable, abs=0.03)


def test_a_run_whose_spread_is_unknown_reports_why():
    assert detectable.at_run_size([TaskPairs("a", 4, 1, 1)], seed=1).reason == "single_task_cluster"
    assert detectable.at_run_size([TaskPairs("a", 2, 0, 0), TaskPairs("b", 2, 0, 0)], seed=1).reason == "no_spread_observed"
    tiny = detectable.at_run_size([TaskPairs("a", 1, 1, 0), TaskPairs("b", 2, 0, 1)], seed=1)
    assert (tiny.effect, tiny.reason) == (None, "not_detectable_at_this_size")


def test_stated_assumptions_plan_like_a_pilot_with_that_spread():
    from campaign.report.spread import assumed

    plan = planner.plan(assumed(0.5, 0.0, 0.0), None, request(repetitions=(4,), target=Target(effect=0.2)))
    (row,) = plan.rows
    # 30 tasks x 4 pairs of variance 0.5: the mean's standard error is sqrt(0.5 / 120).
    assert row.half_width == pytest.approx(1.96 * np.sqrt(0.5 / 120), rel=0.1)
    assert row.spend is None


def test_more_candidates_mean_more_trials_and_each_interval_at_the_familys_level():
    cells3 = [CellCost("p", f"t{i:02d}", v, 3, 3, 3 * 10**8, 0, 3, 30.0, 0) for i in range(30) for v in ("default", "lean", "terse")]
    two = planner.plan(fit(PILOT), cost_model(CELLS), request(target=Target(effect=0.15)))
    three = planner.plan(fit(PILOT), cost_model(cells3), request(target=Target(effect=0.15), variants=3))
    assert three.request.interval_confidence == pytest.approx(0.975) and two.request.interval_confidence == pytest.approx(0.95)
    assert [r.trials for r in three.rows] == [3 * r * 30 for r in (1, 2, 4, 8)]
    # The same pairs, each interval at 97.5%: wider, and a larger effect needed to detect.
    for a, b in zip(two.rows, three.rows):
        assert b.half_width > a.half_width and b.detectable >= a.detectable
    assert [r.spend.usd for r in three.rows] == pytest.approx([r * 30 * 0.3 for r in (1, 2, 4, 8)])
