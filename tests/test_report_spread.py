"""The two-stage spread model: what a pilot shows, what it refuses to make up."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.report import spread
from campaign.report.spread import SpreadUnknown, TaskPairs, assumed, fit


def pairs(*rows: tuple[int, int, int]) -> list[TaskPairs]:
    return [TaskPairs(f"t{i}", n, up, down) for i, (n, up, down) in enumerate(rows)]


@pytest.mark.parametrize(
    ("tasks", "reason"),
    [
        ([], spread.NO_COMPLETE_PAIRS),
        (pairs((4, 2, 1)), spread.SINGLE_TASK_CLUSTER),
        (pairs((3, 0, 0), (3, 0, 0), (2, 0, 0)), spread.NO_SPREAD_OBSERVED),
        (pairs((1, 1, 0), (1, 0, 0), (1, 0, 1)), spread.ONE_PAIR_PER_TASK),
    ],
)
def test_a_pilot_that_cannot_show_its_spread_is_refused_with_the_reason(tasks, reason):
    with pytest.raises(SpreadUnknown) as refused:
        fit(tasks)
    assert refused.value.reason == reason
    assert str(refused.value) == spread.EXPLAINED[reason]


def test_the_components_are_the_method_of_moments_by_hand():
    # Task a: pairs +1,+1,0,-1 (mean .25); task b: 0,0,0,0; task c: +1,+1,+1,+1.
    fitted = fit(pairs((4, 2, 1), (4, 0, 0), (4, 4, 0)))
    means = np.array([0.25, 0.0, 1.0])
    inside = np.array([(1 + 1 + 0 + 1) / 4 - 0.25**2, 0.0, 0.0])  # per task, ddof 0
    within = (4 * inside).sum() / 9  # pooled over 3 + 3 + 3 degrees of freedom
    between = means.var(ddof=1) - (inside * 4 / 3 / 4).mean()
    assert fitted.within == pytest.approx(within)
    assert fitted.between == pytest.approx(between)
    assert fitted.shrink == pytest.approx(np.sqrt(between / means.var()))
    assert fitted.scale == pytest.approx(np.sqrt(4 / 3))


def test_between_task_spread_never_goes_negative():
    # Task means agree more than their repetition noise implies: between is 0, not less.
    fitted = fit(pairs((2, 1, 1), (2, 1, 1), (2, 1, 1)))
    assert fitted.between == 0.0 and fitted.shrink == 0.0


def test_a_task_with_one_pair_borrows_the_pooled_repetition_spread():
    fitted = fit(pairs((4, 2, 1), (4, 1, 1), (1, 1, 0)))
    lone = 2
    draws = fitted.probs[lone]
    mean = draws[2] - draws[0]
    variance = draws[2] + draws[0] - mean**2
    assert fitted.center[lone] == pytest.approx(mean)
    assert fitted.scale[lone] ** 2 * variance == pytest.approx(fitted.within)


@pytest.mark.parametrize("pairs_per_task", [1, 3, 10])
def test_simulated_task_means_have_the_fitted_variance_and_no_effect(pairs_per_task):
    rng = np.random.default_rng(5)
    tasks = [TaskPairs(f"t{i}", 5, int(u), int(d)) for i, (u, d) in enumerate(zip(rng.integers(0, 3, 60), rng.integers(0, 3, 60)))]
    fitted = fit(tasks)
    means = fitted.task_means(np.random.default_rng(1), 40, pairs_per_task, 4000)
    assert means.shape == (40, 4000)
    expected = fitted.between + fitted.within / pairs_per_task
    assert means.var() == pytest.approx(expected, rel=0.05)
    assert abs(means.mean()) < 0.01


def test_the_pilots_own_size_draws_each_cluster_with_its_own_number_of_pairs():
    fitted = fit(pairs((2, 1, 0), (8, 3, 3)))
    means = fitted.task_means(np.random.default_rng(0), 1, None, 20000)[0]
    # A cluster of 2 pairs gives means on a grid of 1/2, one of 8 on a grid of 1/8.
    assert fitted.own_pairs.tolist() == [2.0, 8.0]
    assert len(np.unique(np.round(means, 9))) > 5


def test_stated_assumptions_are_independent_pairs_at_the_two_rates():
    model = assumed(0.6, 0.1, 0.05)
    up, down = 0.7 * 0.4, 0.6 * 0.3
    assert model.probs[0].tolist() == pytest.approx([down, 1 - up - down, up])
    assert model.within == pytest.approx(up + down - (up - down) ** 2)
    assert model.means.std() == pytest.approx(0.05)
    means = model.task_means(np.random.default_rng(2), 30, 4, 4000)
    assert means.var() == pytest.approx(0.05**2 + model.within / 4, rel=0.05)
