"""Paired differences and the task-cluster bootstrap. Pure numpy, no I/O.

The unit of analysis is the task cluster. Within each task the per-pair
differences (coding minus baseline) are averaged; the overall estimate is the
plain mean of those task means, so every task weighs the same however many of
its pairs completed. The uncertainty is a percentile bootstrap over whole
clusters: each replicate draws ``n`` tasks with replacement and averages their
task means (a task's pairs always travel together; attempts are never
resampled on their own). That follows Miller, "Adding Error Bars to Evals"
(2024): cluster on the unit of randomisation and analyse paired differences.

Choices, stated once:

- 2,000 resamples, 95% percentile interval (``numpy.quantile``, linear
  interpolation between order statistics).
- The generator is ``numpy.random.Generator(PCG64(seed))`` seeded by the
  experiment seed, one fresh generator per metric, so the same store and seed
  always give the same interval.
- One cluster has no interval (``single_task_cluster``); zero clusters have no
  estimate.
- Clusters whose means are all the same have no interval either
  (``no_spread_between_tasks``): every resample is then that mean, and a
  zero-width 95% interval would claim a certainty a handful of tasks cannot give
  (the bootstrap cannot show the spread of tasks it never saw differ).
- Fewer than ``EXPLORATORY_BELOW_TASKS`` (10) task clusters is labelled
  exploratory: with so few clusters the percentile bootstrap is known to
  under-cover, and a handful of selected tasks is no global ranking anyway.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
EXPLORATORY_BELOW_TASKS = 10
NO_SPREAD_BETWEEN_TASKS = "no_spread_between_tasks"
# Task means are fractions averaged the same way; equal ones may still differ in the last bits.
_SAME = 1e-12


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


def percentile_bounds(replicates: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """The percentile interval's two ends, taken along the last axis of the replicates."""
    tail = (1.0 - confidence) / 2.0
    return np.quantile(replicates, [tail, 1.0 - tail], axis=-1)


def intervals(cluster_means: np.ndarray, seed: int, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """``summarize``'s interval for many sets of cluster means at once: one set per column
    of the ``n_clusters x sets`` matrix; returns (lows, highs), one per set.

    The same resample matrix (``resample_indices`` of the seed) and the same percentile
    rule, so each column gets the interval its own report would print (equal to
    floating-point rounding: counting how often each cluster was drawn turns the
    gather into one matrix product, which is what lets the planner afford a thousand
    simulated campaigns of 500 tasks). A set whose means are all the same has no
    interval there either: NaN at both ends, which excludes nothing.
    """
    means = np.asarray(cluster_means, dtype=np.float64)
    n = means.shape[0]
    # One row of replicates per set, so the quantile partitions contiguous rows.
    low, high = percentile_bounds(means.T @ _drawn_counts(n, seed, resamples) / n, confidence)
    flat = np.ptp(means, axis=0) <= _SAME
    low[flat], high[flat] = np.nan, np.nan
    return low, high


@functools.lru_cache(maxsize=2)
def _drawn_counts(n_clusters: int, seed: int, resamples: int) -> np.ndarray:
    """``n_clusters x resamples``: how often each cluster is drawn in each replicate of
    ``resample_indices`` (cached read-only: a plan asks for it once per row of its table;
    two entries, 8 MB each at 500 clusters, so a long-running view holds little)."""
    idx = resample_indices(n_clusters, seed, resamples)
    flat = (idx * resamples + np.arange(resamples)[:, None]).ravel()
    counts = np.bincount(flat, minlength=n_clusters * resamples).reshape(n_clusters, resamples).astype(np.float64)
    counts.flags.writeable = False
    return counts


def exploratory(n_clusters: int) -> bool:
    return n_clusters < EXPLORATORY_BELOW_TASKS
