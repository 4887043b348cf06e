"""Simulated campaigns with known truths, to measure what an interval really covers.

A population of tasks: each task's baseline success probability is drawn from
Beta(a, a) (a = 0.8: spread out; a = 0.2: most tasks near 0 or 1), and the candidate
shifts it by an effect that varies between tasks (uniform from 0 to twice the mean
effect), on the probability scale (clipped to [0, 1]) or on the logit scale. A
campaign draws ``tasks`` tasks and, per task, ``repetitions`` pairs of independent
pass/fail outcomes; a pair's difference is candidate minus baseline (-1, 0 or +1).
The truth an interval should cover is the population's mean task effect (tasks are a
sample from it). Pure numpy, seeded; the suite checks coverage with it
(tests/test_report_calibration.py) and ``bench/bench_coverage.py`` prints the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from campaign.report import stats


@dataclass(frozen=True)
class Setting:
    beta_a: float  # the Beta(a, a) of baseline success probabilities
    effect: float  # the mean effect, on ``scale``
    scale: str  # "probability" or "logit"

    def shifted(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Each task's candidate probability: the baseline ``p`` shifted by effect x ``u`` (u ~ U(0, 2))."""
        if self.scale == "probability":
            return np.clip(p + self.effect * u, 0.0, 1.0)
        logit = np.log(p) - np.log1p(-p)
        return 1.0 / (1.0 + np.exp(-(logit + self.effect * u)))

    def draw_baselines(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` tasks' baseline success probabilities."""
        return np.clip(rng.beta(self.beta_a, self.beta_a, size=n), 1e-9, 1 - 1e-9)

    def draw_tasks(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        p = self.draw_baselines(rng, n)
        return p, self.shifted(p, rng.uniform(0.0, 2.0, size=n))

    def truth(self, seed: int = 0, n: int = 400_000) -> float:
        """The population's mean task effect (a large draw; exact to about 1e-3)."""
        p, q = self.draw_tasks(np.random.default_rng(seed), n)
        return float(np.mean(q - p))


def campaigns(setting: Setting, tasks: int, repetitions: int, sims: int, seed: int) -> Iterator[list[np.ndarray]]:
    """``sims`` campaigns, each a list of per-task arrays of pair differences."""
    rng = np.random.default_rng(seed)
    for _ in range(sims):
        p, q = setting.draw_tasks(rng, tasks)
        base = rng.random((tasks, repetitions)) < p[:, None]
        cand = rng.random((tasks, repetitions)) < q[:, None]
        yield list((cand.astype(np.float64) - base.astype(np.float64)))


def family_campaigns(setting: Setting, candidates: int, tasks: int, repetitions: int, sims: int, seed: int) -> Iterator[list[list[np.ndarray]]]:
    """``sims`` campaigns of ``candidates`` candidates against one baseline: per candidate,
    the per-task arrays of pair differences, every candidate's pairs sharing the
    baseline's outcomes (as in a run, where each pair holds one trial per variant)."""
    rng = np.random.default_rng(seed)
    for _ in range(sims):
        p = setting.draw_baselines(rng, tasks)
        base = (rng.random((tasks, repetitions)) < p[:, None]).astype(np.float64)
        out = []
        for _ in range(candidates):
            q = setting.shifted(p, rng.uniform(0.0, 2.0, size=tasks))
            out.append(list((rng.random((tasks, repetitions)) < q[:, None]).astype(np.float64) - base))
        yield out


Interval = Callable[[list[np.ndarray], int], stats.Estimate]


def headline(pairs: list[np.ndarray], seed: int) -> stats.Estimate:
    return stats.paired_interval(pairs, seed, bounds=(-1.0, 1.0))


def percentile(pairs: list[np.ndarray], seed: int) -> stats.Estimate:
    """The spec's seeded percentile bootstrap over task clusters, as the report runs it."""
    return stats.summarize([float(np.mean(d)) for d in pairs], seed, empty_reason="no_complete_pairs")


@dataclass(frozen=True)
class Measured:
    coverage: float  # share of campaigns whose interval holds the truth (no interval: not covered)
    rejects_zero: float  # share whose interval excludes 0
    sims: int

    @property
    def error(self) -> float:
        """The Monte Carlo standard error of a 95% coverage at this many campaigns."""
        return float(np.sqrt(0.95 * 0.05 / self.sims))


def measure(interval: Interval, setting: Setting, tasks: int, repetitions: int, sims: int, seed: int = 1, truth: float | None = None) -> Measured:
    truth = setting.truth() if truth is None else truth
    covered = rejected = 0
    for i, pairs in enumerate(campaigns(setting, tasks, repetitions, sims, seed)):
        est = interval(pairs, seed + i)
        if est.ci_low is None or est.ci_high is None:
            continue
        covered += est.ci_low <= truth <= est.ci_high
        rejected += est.ci_low > 0 or est.ci_high < 0
    return Measured(covered / sims, rejected / sims, sims)


def measure_family(setting: Setting, candidates: int, tasks: int, repetitions: int, sims: int, confidence: float, seed: int = 1) -> Measured:
    """The share of campaigns in which every candidate's headline interval (at
    ``confidence`` each) holds the truth, and in which any of them excludes 0."""
    truth = setting.truth()
    covered = rejected = 0
    for i, per_candidate in enumerate(family_campaigns(setting, candidates, tasks, repetitions, sims, seed)):
        found = [stats.paired_interval(pairs, seed + i, confidence, bounds=(-1.0, 1.0)) for pairs in per_candidate]
        if any(e.ci_low is None or e.ci_high is None for e in found):
            continue
        covered += all(e.ci_low <= truth <= e.ci_high for e in found)
        rejected += any(e.ci_low > 0 or e.ci_high < 0 for e in found)
    return Measured(covered / sims, rejected / sims, sims)
