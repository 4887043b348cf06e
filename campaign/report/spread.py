"""How much the paired verified-success difference varies: between tasks, and from one
repetition to the next within a task. Pure numpy over plain values, no I/O.

A pair's difference (coding minus baseline verified success) is +1, 0 or -1, so a
task's pairs are fully described by three counts (``TaskPairs``). A future campaign's
task mean is simulated in two stages, the way the report's interval sees a campaign
(task clusters, each the mean of its pairs):

1. a task cluster is drawn with replacement from the pilot's tasks;
2. its pairs are drawn with replacement from that task's own pairs, as many as the
   future campaign runs per task.

Drawn naively, a pilot of ``r`` repetitions counts each task's repetition noise
twice (once inside its mean, once again in the redraw) and underestimates it inside
the task (``r - 1`` over ``r``). So the two stages are adjusted by the method of
moments (Davison and Hinkley, *Bootstrap Methods*, 1997, section 3.8): a task's
redrawn pairs are scaled by ``sqrt(r / (r - 1))`` around its own mean, and the task
means are shrunk towards their average until their spread is the between-task
component alone (the spread of task means minus the repetition noise they carry).
Both stages keep what the pilot showed: a task whose pairs always agreed stays
quiet, a task that flips stays noisy.

What a pilot cannot show is refused, never filled in (``SpreadUnknown``): no
complete pair, one task cluster (the report has no interval either), no variation
at all, or one pair per task (repetition noise cannot then be told apart from
between-task spread, and redrawing a lone pair would make every task look certain).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from campaign.errors import CampaignError
from campaign.report import stats

# Why no spread: the codes a report or a plan may carry (report schema NULL_REASONS).
NO_COMPLETE_PAIRS = "no_complete_pairs"
SINGLE_TASK_CLUSTER = "single_task_cluster"
NO_SPREAD_OBSERVED = "no_spread_observed"
ONE_PAIR_PER_TASK = "one_pair_per_task"

EXPLAINED = {
    NO_COMPLETE_PAIRS: "no pair has both variants' verdicts, so there is no paired outcome to resample",
    SINGLE_TASK_CLUSTER: "one task cluster has complete pairs, and one cluster has no interval (the report gives none either)",
    NO_SPREAD_OBSERVED: "every pair agreed and every task mean is the same, so the pilot shows no spread to resample; a made-up spread would be a made-up answer",
    ONE_PAIR_PER_TASK: "each task has one complete pair, so repetition-to-repetition spread cannot be told apart from between-task spread "
    "(run the pilot with --repetitions 2 or more, or over two providers)",
}

# Synthetic task clusters standing in for stated assumptions (a normal grid of task effects).
ASSUMED_CLUSTERS = 200


class SpreadUnknown(CampaignError):
    """The pilot cannot say how the difference varies; ``reason`` is a bounded code."""

    def __init__(self, reason: str) -> None:
        super().__init__(EXPLAINED[reason])
        self.reason = reason


@dataclass(frozen=True)
class TaskPairs:
    """One task's complete pairs: how many, and how many went each way."""

    task: str
    pairs: int
    candidate_only: int  # the candidate verified, the baseline not: +1
    baseline_only: int  # the baseline verified, the candidate not: -1

    def differences(self) -> tuple[float, ...]:
        """The task's pair differences (+1, -1, then 0 for the pairs that agreed): the
        report's interval reads them per task (``stats.paired_interval``)."""
        agreed = self.pairs - self.candidate_only - self.baseline_only
        return (1.0,) * self.candidate_only + (-1.0,) * self.baseline_only + (0.0,) * agreed


@dataclass(frozen=True, eq=False)
class Spread:
    """The fitted two-stage model (arrays are per pilot task cluster).

    ``means``: each cluster's mean difference; ``shrink``: the factor that leaves their
    spread to the between-task component; ``probs``: the chance of a -1, 0, +1 pair
    when a repetition is redrawn, ``center`` its expectation and ``scale`` the factor
    that makes its variance the unbiased within-task variance; ``own_pairs``: each
    cluster's own number of pairs. ``within`` and ``between`` are the two variance
    components (of one pair's difference, and of task means).
    """

    means: np.ndarray
    shrink: float
    probs: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    own_pairs: np.ndarray
    within: float
    between: float

    @property
    def tasks(self) -> int:
        return int(self.means.shape[0])

    def task_means(self, rng: np.random.Generator, tasks: int, pairs: int | None, sims: int) -> np.ndarray:
        """``tasks x sims`` simulated task means, centred on zero (no effect), each of
        ``pairs`` pairs (None: each drawn cluster's own number, the pilot's own size)."""
        return self.campaigns(rng, tasks, pairs, sims)[0]

    def campaigns(self, rng: np.random.Generator, tasks: int, pairs: int | None, sims: int) -> tuple[np.ndarray, stats.Within]:
        """``task_means``, with what each simulated campaign's pairs say inside its tasks
        (the floor the report's interval puts under a task mean's variance): a redrawn
        pair is ``scale`` times a -1/0/+1 draw, so a task's sum of squares is ``scale``
        squared times that of its draws."""
        drawn = rng.integers(0, self.tasks, size=(sims, tasks))
        n = self.own_pairs[drawn].astype(np.int64) if pairs is None else np.full((sims, tasks), pairs, dtype=np.int64)
        counts = rng.multinomial(n, self.probs[drawn])
        up, down = counts[..., 2], counts[..., 0]
        redrawn = (up - down) / n
        deviation = self.means[drawn] - self.means.mean()
        means = (self.shrink * deviation + self.scale[drawn] * (redrawn - self.center[drawn])).T
        squares = self.scale[drawn] ** 2 * ((up + down) - (up - down) ** 2 / n)
        df = (n - 1).sum(axis=1)
        floor = np.where(df > 0, squares.sum(axis=1) / np.maximum(df, 1), 0.0) * (1.0 / n).mean(axis=1)
        return means, stats.Within(floor, df)


def fit(tasks: Sequence[TaskPairs]) -> Spread:
    """The two-stage model of a pilot's task clusters (raises ``SpreadUnknown``)."""
    if not tasks:
        raise SpreadUnknown(NO_COMPLETE_PAIRS)
    if len(tasks) == 1:
        raise SpreadUnknown(SINGLE_TASK_CLUSTER)
    n = np.array([t.pairs for t in tasks], dtype=np.float64)
    up = np.array([t.candidate_only for t in tasks], dtype=np.float64)
    down = np.array([t.baseline_only for t in tasks], dtype=np.float64)
    probs = np.stack([down / n, (n - up - down) / n, up / n], axis=1)
    means = (up - down) / n
    spread_inside = (up + down) / n - means**2  # per task, over its own pairs (ddof 0)
    if not spread_inside.any() and np.ptp(means) == 0:
        raise SpreadUnknown(NO_SPREAD_OBSERVED)
    multi = n >= 2
    if not multi.any():
        raise SpreadUnknown(ONE_PAIR_PER_TASK)
    # Pooled within-task variance (unbiased): each task's sum of squares over its degrees of freedom.
    within = float((n * spread_inside)[multi].sum() / (n[multi] - 1).sum())
    per_task = np.where(multi, spread_inside * n / np.maximum(n - 1, 1), within)
    # The spread of task means carries each task's repetition noise; what is left is between tasks.
    between = max(0.0, float(means.var(ddof=1) - (per_task / n).mean()))
    deviations = float(means.var())
    shrink = math.sqrt(between / deviations) if deviations > 0 else 0.0
    # A task with one pair borrows the repetition spread of the tasks that have several.
    pooled = probs[multi].T @ n[multi] / n[multi].sum()
    pooled_center = pooled[2] - pooled[0]
    pooled_var = pooled[2] + pooled[0] - pooled_center**2
    borrowed = math.sqrt(within / pooled_var) if pooled_var > 0 else 0.0
    return Spread(
        means=means,
        shrink=shrink,
        probs=np.where(multi[:, None], probs, pooled),
        center=np.where(multi, means, pooled_center),
        scale=np.where(multi, np.sqrt(n / np.maximum(n - 1, 1)), borrowed),
        own_pairs=n,
        within=within,
        between=between,
    )


def assumed(baseline_rate: float, effect: float, task_spread: float) -> Spread:
    """Stated assumptions instead of a pilot: every task succeeds at ``baseline_rate``
    under baseline and ``effect`` more under coding (independently, pair by pair), and
    the task means differ with standard deviation ``task_spread`` (a normal grid of
    synthetic clusters, so the same simulation serves both)."""
    coding = min(1.0, max(0.0, baseline_rate + effect))
    up, down = coding * (1 - baseline_rate), baseline_rate * (1 - coding)
    k = ASSUMED_CLUSTERS
    grid = np.array([NormalDist().inv_cdf((i + 0.5) / k) for i in range(k)])
    means = task_spread * grid / grid.std()
    probs = np.tile([down, 1 - up - down, up], (k, 1))
    return Spread(
        means=means,
        shrink=1.0,
        probs=probs,
        center=np.full(k, up - down),
        scale=np.ones(k),
        own_pairs=np.ones(k),
        within=up + down - (up - down) ** 2,
        between=task_spread**2,
    )
