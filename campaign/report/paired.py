"""The report's paired comparisons: each metric's headline interval, the spec's bootstrap
beside it, and the sign-flip p-value, from the task rows. Pure, no I/O.

Every interval or decision about the difference between the variants reads the
headline (``stats.paired_interval``, a t interval on the task means; its
calibration is in ``stats``). The spec's seeded percentile bootstrap is still
computed and reported under its own name (``bootstrap_percentile_95``), with what
simulation measured it to cover at the run's size (``PERCENTILE_COVERAGE``), so a
reader can see both and where they part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from campaign.report import stats
from campaign.report.aggregates import TaskRow
from campaign.report.detectable import task_pairs

# A verified-success difference lies in [-1, 1]; no interval reaches past it.
SUCCESS_BOUNDS = (-1.0, 1.0)

# What the percentile bootstrap covered of the true effect (95% nominal), by task clusters,
# over 2 and 4 repetitions: `python bench/bench_coverage.py --summary --sims 1000` (1,000
# campaigns a cell; Beta(0.8, 0.8) and Beta(0.2, 0.2) task populations, effects 0, +0.15
# on the probability and on the logit scale; a campaign without an interval covers
# nothing; the README's table). The row for a run is the largest at or below its tasks.
PERCENTILE_COVERAGE = ((2, "not measured below 4 tasks, where it was 39-87%"), (4, "39-87%"), (8, "60-90%"), (12, "75-95%"), (24, "89-94%"), (50, "93-96%"))


@dataclass(frozen=True)
class Compared:
    """One metric's comparison: the headline interval (what every decision reads), the
    spec's percentile bootstrap, and the sign-flip p-value of "no effect"."""

    headline: stats.Estimate
    percentile: stats.Estimate
    sign_flip_p: float | None
    pairs: int


def family_confidence(candidates: int, confidence: float = stats.CONFIDENCE) -> float:
    """The level of each candidate's interval so that all of a run's candidates' intervals
    hold at once with ``confidence`` (Bonferroni: the error shared out equally); the
    level itself for one candidate.

    Why not Holm: Holm's step-down decides more often than Bonferroni at the same
    family-wise error, but it adjusts p-values, not intervals, and every decision in
    a report is read from an interval (better, worse, or inconclusive at this size).
    Bonferroni's intervals hold together at the family's level whatever the
    comparisons' correlation (they share the baseline's trials), and the report stays
    one interval per candidate. Measured by simulation (``calibration.measure_family``,
    tests/test_report_calibration.py)."""
    if candidates < 1:
        raise ValueError("at least one candidate is compared")
    return 1.0 - (1.0 - confidence) / candidates


def compare(
    pair_differences: Sequence[Sequence[float]], seed: int, *, bounds: tuple[float, float] | None, empty_reason: str, confidence: float = stats.CONFIDENCE
) -> Compared:
    clusters = [d for d in pair_differences if len(d)]
    means = [float(np.mean(d)) for d in clusters]
    return Compared(
        headline=stats.paired_interval(clusters, seed, confidence, bounds=bounds, empty_reason=empty_reason),
        percentile=stats.summarize(means, seed, empty_reason=empty_reason),
        sign_flip_p=stats.sign_flip_p(means, seed),
        pairs=sum(len(d) for d in clusters),
    )


def success_and_wall(tasks: Sequence[TaskRow], seed: int, confidence: float = stats.CONFIDENCE) -> tuple[Compared, Compared]:
    """Verified success (pairs +1/0/-1, bounded) and wall seconds (pairs with both times),
    the headline intervals at ``confidence`` (``family_confidence`` for several candidates)."""
    success = compare([p.differences() for p in task_pairs(tasks)], seed, bounds=SUCCESS_BOUNDS, empty_reason="no_complete_pairs", confidence=confidence)
    wall = compare([t.wall_differences for t in tasks], seed, bounds=None, empty_reason="no_pairs_with_both_wall_times", confidence=confidence)
    return success, wall


def exploratory(success: Compared, wall: Compared) -> bool:
    """Either comparison resting on few task clusters is exploratory: missing wall times
    can leave the wall interval far fewer clusters than success."""
    return stats.exploratory(success.headline.tasks) or (wall.headline.tasks > 0 and stats.exploratory(wall.headline.tasks))


def as_report(metric: str, compared: Compared) -> dict[str, Any]:
    est, boot = compared.headline, compared.percentile
    return {
        "metric": metric,
        "estimate": est.estimate,
        "estimate_reason": est.estimate_reason,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "interval_reason": est.interval_reason,
        "tasks": est.tasks,
        "pairs": compared.pairs,
        "sign_flip_p": compared.sign_flip_p,
        "bootstrap_percentile_95": {"ci_low": boot.ci_low, "ci_high": boot.ci_high, "interval_reason": boot.interval_reason},
    }


def methods(seed: int) -> dict[str, Any]:
    """How the comparisons were made (the report's ``paired_differences`` header)."""
    return {
        "interval": {"method": "student_t_on_task_means", "confidence": stats.CONFIDENCE, "degrees_of_freedom": "tasks_minus_one"},
        "bootstrap": {"resamples": stats.RESAMPLES, "confidence": stats.CONFIDENCE, "seed": seed},
        "sign_flip": {"exact_up_to_tasks": stats.EXACT_SIGN_FLIPS_UP_TO, "draws_beyond": stats.SIGN_FLIP_DRAWS, "seed": seed},
    }


def percentile_coverage(tasks: int) -> str | None:
    """The bootstrap's measured coverage at this many task clusters (None below two)."""
    found = [words for at_least, words in PERCENTILE_COVERAGE if tasks >= at_least]
    return found[-1] if found else None


def excludes_zero(low: float | None, high: float | None) -> bool:
    return low is not None and high is not None and (low > 0 or high < 0)
