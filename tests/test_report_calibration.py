"""The headline interval covers what it says, measured by simulation with known truths
(issue 43): campaigns drawn from populations of tasks whose true mean effect is known.

A few hundred campaigns a cell keeps this to seconds; ``bench/bench_coverage.py`` prints
the full table. A cell fails when coverage falls below 95% by more than 2.5 Monte Carlo
standard errors, or (no effect) the interval excludes 0 more than 5% plus that margin.
"""

from __future__ import annotations

import math

import pytest

from campaign.report import calibration, paired, stats, student_t
from campaign.report.calibration import Setting

SIMS = 800
SPREAD_OUT_GAIN = Setting(0.8, 0.15, "probability")
SPREAD_OUT_NULL = Setting(0.8, 0.0, "probability")
NEAR_0_OR_1_NULL = Setting(0.2, 0.0, "probability")
MARGIN = 2.5 * math.sqrt(0.95 * 0.05 / SIMS)


@pytest.mark.parametrize("tasks", [8, 12, 24])
# beta0.8-null at 8 tasks is where the plain t on task means fell short (92.7-93.4% covered,
# 6.6% false positives over 1,000 campaigns) before its variance was floored by the pairs'.
@pytest.mark.parametrize("setting", [SPREAD_OUT_GAIN, SPREAD_OUT_NULL, NEAR_0_OR_1_NULL], ids=["beta0.8-gain", "beta0.8-null", "beta0.2-null"])
def test_the_headline_interval_covers_95_percent(setting, tasks):
    measured = calibration.measure(calibration.headline, setting, tasks, 4, SIMS, seed=tasks)
    assert measured.coverage >= 0.95 - MARGIN, measured
    if setting.effect == 0:
        assert measured.rejects_zero <= 0.05 + MARGIN, measured


@pytest.mark.parametrize("candidates", [2, 3])
@pytest.mark.parametrize("setting", [SPREAD_OUT_GAIN, SPREAD_OUT_NULL], ids=["beta0.8-gain", "beta0.8-null"])
def test_the_candidates_intervals_hold_together_at_95_percent(setting, candidates):
    # Every candidate's interval at once (they share the baseline's trials), at the
    # Bonferroni level each; with no effect, any of them excluding 0 is a false positive.
    measured = calibration.measure_family(setting, candidates, 12, 4, SIMS, paired.family_confidence(candidates), seed=candidates)
    assert measured.coverage >= 0.95 - MARGIN, measured
    if setting.effect == 0:
        assert measured.rejects_zero <= 0.05 + MARGIN, measured


def test_without_the_adjustment_three_candidates_do_not_hold_together():
    # Why the adjustment: each at 95%, three candidates' intervals all held in about 92%
    # of campaigns (2,000 simulated: 91.6%; adjusted, 98.0%).
    measured = calibration.measure_family(SPREAD_OUT_GAIN, 3, 12, 4, SIMS, stats.CONFIDENCE, seed=3)
    assert measured.coverage < 0.95 - MARGIN, measured


def test_one_candidate_keeps_the_reports_own_level():
    assert paired.family_confidence(1) == stats.CONFIDENCE
    assert paired.family_confidence(2) == pytest.approx(0.975) and paired.family_confidence(4) == pytest.approx(0.9875)
    with pytest.raises(ValueError):
        paired.family_confidence(0)


def test_the_specs_percentile_bootstrap_is_what_falls_short():
    # Why the headline is not the percentile bootstrap: at the spec's 12 tasks x 4 it under-covers.
    measured = calibration.measure(calibration.percentile, SPREAD_OUT_GAIN, 12, 4, SIMS, seed=12)
    assert measured.coverage < 0.95 - MARGIN, measured


@pytest.mark.parametrize(("df", "expected"), [(1, 12.7062047), (3, 3.1824463), (11, 2.2009852), (49, 2.0095752)])
def test_t_quantiles_match_the_tables(df, expected):
    assert student_t.quantile(0.95, df) == pytest.approx(expected, abs=1e-6)


def test_the_interval_is_the_t_interval_on_task_means():
    pairs = [[1, 0, 0, 1], [0, 0, 1, 0], [1, 1, 1, 0], [0, -1, 0, 0]]
    est = stats.paired_interval(pairs, 1)
    means = [0.5, 0.25, 0.75, -0.25]
    sd = math.sqrt(sum((m - 0.3125) ** 2 for m in means) / 3)
    assert est.estimate == pytest.approx(0.3125) and est.interval_reason is None
    assert (est.ci_high - est.ci_low) / 2 == pytest.approx(student_t.quantile(0.95, 3) * sd / 2)


def test_it_never_claims_zero_width():
    # Task means alike, pairs not: the pairs' spread within tasks floors the spread between them.
    floored = stats.paired_interval([[1, -1], [0, 0], [1, -1]], 1, bounds=(-1, 1))
    assert floored.interval_reason == "between_task_spread_floored" and floored.ci_low < 0 < floored.ci_high
    # Every pair alike: a bound from how many pairs were seen, with its reason.
    bounded = stats.paired_interval([[0, 0, 0, 0]] * 12, 1, bounds=(-1, 1))
    assert bounded.interval_reason == "no_spread_bounded" and -0.2 < bounded.ci_low < 0 < bounded.ci_high < 0.2
    # ... and without bounds (seconds of wall time), none, said so.
    assert stats.paired_interval([[3.0], [3.0]], 1).interval_reason == stats.NO_SPREAD_BETWEEN_TASKS
    assert stats.paired_interval([[1, 0]], 1).interval_reason == "single_task_cluster"
    assert stats.paired_interval([], 1).estimate is None


def test_the_sign_flip_p_value_is_exact_for_few_tasks_and_seeded_beyond():
    assert stats.sign_flip_p([0.5, 0.25, 0.75, 0.1, 0.2], 1) == pytest.approx(2 / 32)  # only all-plus and all-minus reach it
    assert stats.sign_flip_p([0.5, -0.5], 1) == 1.0
    many = [0.1] * 10 + [-0.05] * 10
    assert stats.sign_flip_p(many, 7) == stats.sign_flip_p(many, 7) and 0 < stats.sign_flip_p(many, 7) <= 1
    assert stats.sign_flip_p([0.3], 1) is None


def test_task_means_that_vary_less_than_their_pairs_allow_are_floored_by_the_pairs_spread():
    # Four tasks whose means happen to agree closely, each from noisy pairs: the spread of
    # the means (k-1 = 3 degrees of freedom) would claim a certainty the pairs deny.
    pairs = [[1, -1, 1, 0], [1, 0, -1, 1], [0, 1, -1, 1], [1, 1, -1, 0]]
    est = stats.paired_interval(pairs, 1)
    within = sum(sum((x - sum(p) / 4) ** 2 for x in p) for p in pairs) / (4 * 3)
    assert est.interval_reason == "between_task_spread_floored"
    assert (est.ci_high - est.ci_low) / 2 == pytest.approx(student_t.quantile(0.95, 12) * math.sqrt(within / 4 / 4))
