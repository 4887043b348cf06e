"""Simulated campaigns, and what their intervals say. Pure numpy, no I/O.

``campaigns`` simulates the task means of future campaigns, with their pairs' spread
inside tasks (``spread``); the caller puts each through the report's own interval
(``report.stats.t_intervals``, the many-campaigns form of ``paired_interval``, so a
simulated campaign gets the interval its report would print; ``report.detectable.simulated``
does both). The campaigns are simulated with no effect; an effect ``e`` shifts every
task mean by ``e``, and the interval of shifted means is the interval shifted by ``e``. One set of simulations therefore
answers every effect size: the power at ``e``, and the smallest effect detected
often enough (``Simulated``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from campaign.report.spread import Spread
from campaign.report.stats import Within

DEFAULT_POWER = 0.8
DEFAULT_SIMULATIONS = 1000
NOT_DETECTABLE = "not_detectable_at_this_size"


@dataclass(frozen=True, eq=False)
class Simulated:
    """The intervals of ``sims`` simulated campaigns with no effect (one entry each)."""

    low: np.ndarray
    high: np.ndarray

    @property
    def sims(self) -> int:
        return int(self.low.shape[0])

    def half_width(self) -> float | None:
        """The expected half-width of the interval (the same at every effect size), over
        the campaigns that have one (None: none has)."""
        widths = (self.high - self.low)[~np.isnan(self.low)]
        return float(np.mean(widths) / 2.0) if widths.size else None

    def power(self, effect: float) -> float:
        """The share of campaigns whose interval excludes 0 when the true effect is ``effect``
        (at 0: the false-positive rate). A campaign without an interval (NaN: its task
        means all alike) excludes nothing."""
        return float(np.mean((self.low + effect > 0) | (self.high + effect < 0)))

    def detectable(self, power: float) -> float:
        """The smallest effect, either way, whose interval excludes 0 on its own side in at
        least ``power`` of the campaigns: the minimum detectable effect.

        An improvement ``e`` is seen when ``low + e > 0``, so it is the ``power``-quantile
        of ``-low`` (as order statistics: no interpolation); a regression likewise of
        ``high``. The larger of the two is reported, so it holds in both directions.
        """
        k = max(1, math.ceil(power * self.sims - 1e-9))
        # NaN (no interval) sorts last: with fewer than k intervals no effect is detected.
        up = float(np.sort(-self.low)[k - 1])
        down = float(np.sort(self.high)[k - 1])
        return math.inf if math.isnan(up) or math.isnan(down) else max(0.0, up, down)

    def bounded_detectable(self, power: float) -> tuple[float | None, str | None]:
        """``detectable``, or None with the reason when it is 1 or more: a difference of
        success rates is at most 1, so no possible effect would be detected."""
        effect = self.detectable(power)
        return (effect, None) if effect < 1.0 else (None, NOT_DETECTABLE)


def simulation_rng(seed: int, *key: int) -> np.random.Generator:
    """The simulations' own stream, apart from the bootstrap's (``stats.generator``) of the
    same seed: a child of the seed's sequence named by ``key``, so each row of a plan is
    reproducible whichever other rows are asked for."""
    sequence = np.random.SeedSequence(seed % (1 << 128), spawn_key=(25, *key))
    return np.random.Generator(np.random.PCG64(sequence))


def campaigns(spread: Spread, tasks: int, pairs: int | None, seed: int, sims: int) -> tuple[np.ndarray, Within]:
    """``tasks x sims`` task means of campaigns with ``pairs`` pairs per task (None: each
    pilot cluster's own number), with what their pairs say inside tasks, on the stream
    named by ``pairs``."""
    return spread.campaigns(simulation_rng(seed, pairs or 0), tasks, pairs, sims)
