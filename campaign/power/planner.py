"""The plan: for each number of repetitions, what the interval will look like, what it
can detect, and what it will cost. Pure functions over plain values.

``plan(spread, costs, request)`` simulates ``request.sims`` campaigns per row (see
``spread`` for how, ``simulate`` for the interval) and forecasts spend and wall time
(``forecast``). A campaign of ``r`` repetitions over ``k`` providers has ``r x k``
pairs per task in the whole-campaign report (the report pools a task's pairs across
providers), so that is what a row simulates; each simulated campaign goes through
the report's own interval (``report.detectable.simulated``). A row the pilot cannot
answer carries the reason instead of a number.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from campaign.power import forecast as fc
from campaign.report import paired, simulate, stats
from campaign.report.detectable import simulated
from campaign.report.simulate import DEFAULT_POWER, DEFAULT_SIMULATIONS
from campaign.report.spread import Spread, SpreadUnknown


@dataclass(frozen=True)
class Target:
    """What the plan must reach: ``effect`` detected with ``power``, or ``half_width``."""

    effect: float | None = None
    power: float = DEFAULT_POWER
    half_width: float | None = None

    def met(self, row: Row) -> bool | None:
        if self.effect is not None:
            return None if row.power is None else row.power >= self.power
        if self.half_width is not None:
            return None if row.half_width is None else row.half_width <= self.half_width
        return None


@dataclass(frozen=True)
class Request:
    repetitions: tuple[int, ...]
    tasks: int
    providers: int  # pairs per task per repetition
    seed: int
    target: Target = Target()
    confidence: float = stats.CONFIDENCE
    sims: int = DEFAULT_SIMULATIONS
    caps: fc.SpendLimits | None = None
    workers: int | None = None
    # Trials per pair. Beyond two, each candidate's interval is at the family's level
    # (report.paired.family_confidence), as the report will compute it.
    variants: int = 2

    @property
    def interval_confidence(self) -> float:
        return paired.family_confidence(self.variants - 1, self.confidence)


@dataclass(frozen=True)
class Row:
    repetitions: int
    tasks: int
    trials: int
    half_width: float | None
    power: float | None  # at the target effect
    detectable: float | None  # at the target power
    false_positive: float | None  # the share of campaigns with no effect whose interval excludes 0
    reason: str | None  # why the figures above are None
    spend: fc.SpendForecast | None
    meets: bool | None


@dataclass(frozen=True)
class Plan:
    request: Request
    rows: tuple[Row, ...]
    spread: Spread | None
    spread_reason: str | None

    @property
    def smallest(self) -> Row | None:
        """The fewest repetitions that meet the target (None: none in the table does, or
        there is no target)."""
        return next((row for row in self.rows if row.meets), None)


def plan(spread: Spread | SpreadUnknown, costs: fc.CostModel | None, request: Request) -> Plan:
    fitted = spread if isinstance(spread, Spread) else None
    rows = tuple(_row(fitted, spread if fitted is None else None, costs, request, r) for r in request.repetitions)
    return Plan(request, rows, fitted, None if fitted is not None else spread.reason)


def _row(spread: Spread | None, unknown: SpreadUnknown | None, costs: fc.CostModel | None, request: Request, repetitions: int) -> Row:
    pairs = repetitions * request.providers
    half_width = power = detectable = false_positive = None
    reason = unknown.reason if unknown is not None else None
    if spread is not None:
        sims = simulated(spread, request.tasks, pairs, request.seed, request.interval_confidence, request.sims)
        half_width = sims.half_width()
        power = sims.power(request.target.effect) if request.target.effect is not None else None
        false_positive = sims.power(0.0)
        detectable, reason = sims.bounded_detectable(request.target.power)
    spend = None
    if costs is not None:
        rng = simulate.simulation_rng(request.seed, 26, repetitions)
        spend = fc.forecast(costs, repetitions, request.tasks, rng, sims=request.sims, caps=request.caps, workers=request.workers)
    row = Row(repetitions, request.tasks, request.variants * pairs * request.tasks, half_width, power, detectable, false_positive, reason, spend, None)
    return dataclasses.replace(row, meets=request.target.met(row))
