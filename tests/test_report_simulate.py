"""What simulated intervals say: power at an effect, the smallest detectable effect."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.report import simulate
from campaign.report.simulate import NOT_DETECTABLE, Simulated
from campaign.report.spread import TaskPairs, fit


def test_power_is_the_share_of_shifted_intervals_that_exclude_zero():
    sims = Simulated(low=np.array([-0.3, -0.2, -0.1, -0.05]), high=np.array([0.3, 0.2, 0.1, 0.05]))
    assert sims.power(0.0) == 0.0
    assert sims.power(0.15) == 0.5  # -0.1 and -0.05 move above 0
    assert sims.power(-0.25) == 0.75  # the high ends 0.2, 0.1, 0.05 move below 0
    assert sims.half_width() == pytest.approx((0.3 + 0.2 + 0.1 + 0.05) / 4)


def test_the_detectable_effect_is_the_smallest_seen_with_the_asked_power_either_way():
    low = -np.linspace(0.1, 0.5, 101)
    sims = Simulated(low=low, high=-low * 0.5)
    effect = sims.detectable(0.8)
    assert sims.power(effect + 1e-12) >= 0.8
    assert sims.power(effect - 1e-3) < 0.8
    # A regression needs its high ends below 0: a wider upper side sets the figure.
    lopsided = Simulated(low=low * 0.5, high=-low)
    assert lopsided.detectable(0.8) == pytest.approx(effect)


def test_a_campaign_without_an_interval_detects_nothing_and_has_no_width():
    # NaN ends: the campaign's task means were all alike, so its report has no interval.
    sims = Simulated(low=np.array([-0.1, np.nan, -0.2, np.nan]), high=np.array([0.1, np.nan, 0.2, np.nan]))
    assert sims.power(0.15) == 0.25 and sims.power(5.0) == 0.5
    assert sims.half_width() == pytest.approx(0.15)
    assert sims.detectable(0.5) == pytest.approx(0.2)
    # More than half without an interval: no effect reaches 80% power.
    assert sims.detectable(0.8) == float("inf") and sims.bounded_detectable(0.8) == (None, NOT_DETECTABLE)
    assert Simulated(low=np.array([np.nan]), high=np.array([np.nan])).half_width() is None


def test_no_effect_of_one_or_more_is_a_detectable_effect():
    sims = Simulated(low=np.full(10, -1.2), high=np.full(10, 1.2))
    assert sims.bounded_detectable(0.8) == (None, NOT_DETECTABLE)
    assert Simulated(low=np.full(10, -0.3), high=np.full(10, 0.3)).bounded_detectable(0.8) == (pytest.approx(0.3), None)


def test_campaigns_are_seeded_and_each_size_has_its_own_stream():
    fitted = fit([TaskPairs(f"t{i}", 3, i % 2, (i + 1) % 3 // 2) for i in range(9)])
    a, within = simulate.campaigns(fitted, 12, 4, seed=7, sims=50)
    assert np.array_equal(a, simulate.campaigns(fitted, 12, 4, seed=7, sims=50)[0])
    assert np.array_equal(within.floor, simulate.campaigns(fitted, 12, 4, seed=7, sims=50)[1].floor)
    assert (within.df == 12 * 3).all() and (within.floor >= 0).all()
    assert not np.array_equal(a, simulate.campaigns(fitted, 12, 4, seed=8, sims=50)[0])
    # The stream of one size does not depend on which other sizes were simulated first.
    simulate.campaigns(fitted, 12, 2, seed=7, sims=50)
    assert np.array_equal(a, simulate.campaigns(fitted, 12, 4, seed=7, sims=50)[0])
