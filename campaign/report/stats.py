"""Paired differences over task clusters: the report's interval, the spec's bootstrap,
and a randomisation test. Pure numpy, no I/O.

The unit of analysis is the task cluster. Within each task the per-pair
differences (coding minus baseline) are averaged; the overall estimate is the
plain mean of those task means, so every task weighs the same however many of
its pairs completed (Miller, "Adding Error Bars to Evals", 2024: cluster on the
unit of randomisation and analyse paired differences).

The headline interval (``paired_interval``) is a t interval on the task means with
k-1 degrees of freedom, its variance floored by the pairs' own spread within tasks.
Tasks are the unit sampled, pairs within a task are exchangeable, so the k task
means are independent draws and the t distribution carries the small-sample
allowance a percentile bootstrap lacks. Measured by simulation with known truths
(``report.calibration``; ``python bench/bench_coverage.py --summary``, the README's
table): at 8 to 50 tasks x 2 or 4 repetitions it covers 94.7-100% (95% nominal) and
rejects a true null in at most 4.3% of campaigns, where the spec's percentile
bootstrap covers 60-96% and rejects up to 11%: 84-95% at the spec's 12 tasks x 4.
It never claims zero width (``paired_interval``'s docstring says how).

The spec's interval stays beside it, under its own name (the report's
``bootstrap_percentile_95``): a percentile bootstrap over whole clusters, each
replicate drawing ``n`` tasks with replacement and averaging their task means (a
task's pairs always travel together; attempts are never resampled on their own).
Its choices:

- 2,000 resamples, 95% percentile interval (``numpy.quantile``, linear
  interpolation between order statistics).
- The generator is ``numpy.random.Generator(PCG64(seed))`` seeded by the
  experiment seed, one fresh generator per metric, so the same store and seed
  always give the same interval.
- One cluster has no interval (``single_task_cluster``); zero clusters have no
  estimate.
- Clusters whose means are all the same have no interval either
  (``no_spread_between_tasks``): every resample is then that mean, and a
  zero-width 95% interval would claim a certainty a handful of tasks cannot give.

``sign_flip_p`` is the exact randomisation test of "no effect" on the task means,
valid whatever the outcomes' distribution because the variants were assigned
within each pair. Fewer than ``EXPLORATORY_BELOW_TASKS`` (10) task clusters is
labelled exploratory whatever the interval says: a handful of selected tasks is no
global ranking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from campaign.report import student_t

RESAMPLES = 2000
CONFIDENCE = 0.95
EXPLORATORY_BELOW_TASKS = 10
NO_SPREAD_BETWEEN_TASKS = "no_spread_between_tasks"
# Task means are fractions averaged the same way; equal ones may still differ in the last bits.
_SAME = 1e-12
# Relative: two sums of the same squares differ in the last bits, never by this much.
_TIE = 1e-9


@dataclass(frozen=True)
class Estimate:
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    tasks: int
    estimate_reason: str | None
    interval_reason: str | None


def generator(seed: int) -> np.random.Generator:
    """The seeded generator; negative seeds wrap into PCG64's unsigned range."""
    return np.random.Generator(np.random.PCG64(seed % (1 << 128)))


def resample_indices(n_clusters: int, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """A ``resamples x n_clusters`` matrix of cluster indices drawn with replacement."""
    return generator(seed).integers(0, n_clusters, size=(resamples, n_clusters))


def bootstrap_means(cluster_means: np.ndarray, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """One replicate per row: the mean over a resample of whole clusters.

    Equal cluster weights make a replicate the mean of the drawn clusters'
    means; gathering by the index matrix does all replicates at once
    (2,000 x 500 is a million floats, a few milliseconds).
    """
    means = np.asarray(cluster_means, dtype=np.float64)
    idx = resample_indices(means.shape[0], seed, resamples)
    return means[idx].mean(axis=1)


def summarize(cluster_means: np.ndarray | list[float], seed: int, *, empty_reason: str, resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> Estimate:
    """Point estimate (mean of cluster means) and its percentile bootstrap interval."""
    means = np.asarray(cluster_means, dtype=np.float64)
    n = int(means.shape[0])
    if n == 0:
        return Estimate(None, None, None, 0, empty_reason, empty_reason)
    point = float(means.mean())
    if n == 1:
        return Estimate(point, None, None, 1, None, "single_task_cluster")
    if np.ptp(means) <= _SAME:
        return Estimate(point, None, None, n, None, NO_SPREAD_BETWEEN_TASKS)
    low, high = percentile_bounds(bootstrap_means(means, seed, resamples), confidence)
    return Estimate(point, float(low), float(high), n, None, None)


def floored(variance, floor):
    """Whether the floor applies (a bool, or an array of them for many campaigns): the task
    means vary no more than it. A tie is the floor's, however the last bit of either fell:
    the batched form (``t_intervals``) computes the same floor by another sum, and the two
    must not pick different degrees of freedom for it."""
    return variance <= floor * (1.0 + _TIE)


def paired_interval(
    pair_differences: Sequence[Sequence[float]],
    seed: int,
    confidence: float = CONFIDENCE,
    *,
    bounds: tuple[float, float] | None = None,
    empty_reason: str = "no_complete_pairs",
) -> Estimate:
    """The report's headline interval: one sequence per task cluster, that task's within-pair
    differences (candidate minus baseline).

    Method, and why: a t interval on the task means. Tasks are the unit sampled (a
    population of tasks like these), pairs within a task are exchangeable, so the task
    means are k independent draws; their variance is the between-task spread plus each
    mean's own repetition noise, and never less than that noise. So the variance is the
    task means' own (k-1 degrees of freedom), floored by the pooled within-task variance
    over the pairs per task, which is estimated from every pair (its degrees of freedom,
    the pairs less the tasks, then apply: ``between_task_spread_floored``). The plain t on
    task means under-covered where few tasks happened to agree (92.7% at 8 tasks x 4,
    with 6.6% false positives); floored, it covers 94.7-100% from 8 to 50 tasks with at
    most 4.3% false positives (``report.calibration``; ``bench/bench_coverage.py``).

    It never claims zero width. Every pair alike as well (no spread anywhere): with
    ``bounds`` (the differences' range, -1..1 for verified success), the share of pairs
    that could differ unseen in this many pairs at this confidence, times the room to
    each bound (``no_spread_bounded``); without bounds no interval
    (``no_spread_between_tasks``). ``seed`` names the randomisation stream of the parts
    that draw (``sign_flip_p``); the t interval draws none.
    """
    clusters = [c for c in (np.asarray(d, dtype=np.float64) for d in pair_differences) if c.size]
    k = len(clusters)
    if k == 0:
        return Estimate(None, None, None, 0, empty_reason, empty_reason)
    means = np.array([c.mean() for c in clusters])
    point = float(means.mean())
    if k == 1:
        return Estimate(point, None, None, 1, None, "single_task_cluster")
    within_df = sum(c.size - 1 for c in clusters)
    within_ss = float(sum(((c - c.mean()) ** 2).sum() for c in clusters))
    floor = within_ss / within_df * float(np.mean([1.0 / c.size for c in clusters])) if within_df else 0.0
    variance, df, reason = (float(means.var(ddof=1)) if np.ptp(means) > _SAME else 0.0), k - 1, None
    if floor > 0 and floored(variance, floor):
        variance, df, reason = floor, max(k - 1, within_df), "between_task_spread_floored"
    if variance <= 0:
        if bounds is None:
            return Estimate(point, None, None, k, None, NO_SPREAD_BETWEEN_TASKS)
        pairs = sum(c.size for c in clusters)
        unseen = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / pairs)
        low, high = bounds
        return Estimate(point, point - unseen * (point - low), point + unseen * (high - point), k, None, "no_spread_bounded")
    half = student_t.quantile(confidence, df) * math.sqrt(variance / k)
    low, high = point - half, point + half
    if bounds is not None:  # no effect lies outside what a difference can be
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(point, low, high, k, None, reason)


EXACT_SIGN_FLIPS_UP_TO = 16
SIGN_FLIP_DRAWS = 20_000


def sign_flip_p(task_means: Sequence[float], seed: int) -> float | None:
    """Two-sided randomisation p-value of "no effect" from the task mean differences: under
    no effect each task's sign is a coin flip (the variants were assigned within its
    pairs), so the observed |mean| is ranked among all 2^k sign patterns (exact up to
    ``EXACT_SIGN_FLIPS_UP_TO`` tasks, a seeded draw of ``SIGN_FLIP_DRAWS`` beyond).
    None with fewer than two tasks."""
    d = np.asarray(task_means, dtype=np.float64)
    k = d.shape[0]
    if k < 2:
        return None
    observed = abs(d.mean()) - _SAME
    if k <= EXACT_SIGN_FLIPS_UP_TO:
        patterns = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2 - 1
        return float(np.mean(np.abs(patterns @ d) / k >= observed))
    signs = generator(seed).choice((-1.0, 1.0), size=(SIGN_FLIP_DRAWS, k))
    # The observed pattern counts as one of the draws, so p is never 0.
    return float((1 + np.sum(np.abs(signs @ d) / k >= observed)) / (SIGN_FLIP_DRAWS + 1))


@dataclass(frozen=True, eq=False)
class Within:
    """What many simulated campaigns' pairs say inside their tasks, one entry per campaign:
    the floor ``paired_interval`` puts under the variance of a task mean (the pooled
    within-task variance times the mean of 1/pairs) and its degrees of freedom."""

    floor: np.ndarray
    df: np.ndarray


def t_intervals(
    cluster_means: np.ndarray, confidence: float = CONFIDENCE, *, within: Within | None = None, bounds: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``paired_interval`` for many campaigns at once: one campaign per column of the
    ``n_clusters x sets`` matrix of task means, with its pairs' ``within`` (None: no
    floor); returns (lows, highs).

    A column with no spread at all gets NaN at both ends (excludes nothing), where
    ``paired_interval`` would bound a verified-success difference by its pair count. The
    simulations that use this (``report.detectable``) shift whole campaigns by an
    effect, and this interval moves with its means (the pairs' spread inside a task does
    not change), so one set of intervals answers every effect size."""
    means = np.asarray(cluster_means, dtype=np.float64)
    k = means.shape[0]
    if k < 2:
        nan = np.full(means.shape[1:], np.nan)
        return nan, nan.copy()
    point = means.mean(axis=0)
    variance = np.where(np.ptp(means, axis=0) > _SAME, means.var(axis=0, ddof=1), 0.0)
    quantile = np.full(variance.shape, student_t.quantile(confidence, k - 1))
    if within is not None:
        floored_here = (within.floor > 0) & floored(variance, within.floor)
        variance = np.where(floored_here, within.floor, variance)
        dfs = np.maximum(k - 1, within.df).astype(np.int64)
        for df in np.unique(dfs[floored_here]):
            quantile[floored_here & (dfs == df)] = student_t.quantile(confidence, int(df))
    half = quantile * np.sqrt(variance / k)
    low, high = point - half, point + half
    if bounds is not None:
        low, high = np.maximum(low, bounds[0]), np.minimum(high, bounds[1])
    none = variance <= 0
    low[none], high[none] = np.nan, np.nan
    return low, high


def percentile_bounds(replicates: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """The percentile interval's two ends, taken along the last axis of the replicates."""
    tail = (1.0 - confidence) / 2.0
    return np.quantile(replicates, [tail, 1.0 - tail], axis=-1)


def exploratory(n_clusters: int) -> bool:
    return n_clusters < EXPLORATORY_BELOW_TASKS
