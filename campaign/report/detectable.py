"""What a run could detect: the report's ``paired_differences.detectable_effect``.

"No difference" must never be read where a run could not have seen one. So every
report states the smallest effect on verified success that campaigns of its own size
and spread detect at 80% power (``at_run_size``: its task clusters and their pairs
redrawn as ``report.spread`` describes, every task shifted by the effect, each
simulated campaign through this report's own interval). Where the interval spans zero the
decision reads "inconclusive: effects smaller than X could not be detected at this
size". The sentences are written here once, for the Markdown and the view, from the
sanitized report only.

``simulated`` is also what ``campaign power`` runs for every row of its table: the
one place simulated campaigns meet the report's interval.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from campaign.report import stats
from campaign.report.aggregates import TaskRow
from campaign.report.simulate import (
    DEFAULT_POWER,
    DEFAULT_SIMULATIONS,
    NOT_DETECTABLE,
    Simulated,
    campaigns,
)
from campaign.report.spread import Spread, SpreadUnknown, TaskPairs, fit

METHOD = "simulated_campaigns_of_this_size"
_WHY = {
    "no_complete_pairs": "no complete pair",
    "single_task_cluster": "one task cluster",
    "no_spread_observed": "every pair agreed, so no spread was observed",
    "one_pair_per_task": "one pair per task cannot tell repetition noise from between-task spread",
    NOT_DETECTABLE: "not even the largest possible difference would be detected at this size",
}


def simulated(spread: Spread, tasks: int, pairs: int | None, seed: int, confidence: float, sims: int) -> Simulated:
    """``sims`` campaigns of ``tasks`` tasks with ``pairs`` pairs each (None: each task's
    own number, the pilot's size), each through this report's interval (``stats.t_intervals``,
    the many-campaigns form of ``stats.paired_interval``). Its ends are a mean plus or minus
    a spread, never on the grid of possible estimates, so no tie correction applies."""
    means, within = campaigns(spread, tasks, pairs, seed, sims)
    low, high = stats.t_intervals(means, confidence, within=within)
    return Simulated(low, high)


@dataclass(frozen=True)
class Detectable:
    effect: float | None
    reason: str | None
    power: float
    confidence: float
    sims: int


def at_run_size(
    tasks: Sequence[TaskPairs], seed: int, *, power: float = DEFAULT_POWER, confidence: float = stats.CONFIDENCE, sims: int = DEFAULT_SIMULATIONS
) -> Detectable:
    """The smallest effect, either way, that campaigns of this run's size and spread detect
    with ``power`` (None with the reason when the run cannot show its spread)."""
    try:
        spread = fit(tasks)
    except SpreadUnknown as exc:
        return Detectable(None, exc.reason, power, confidence, sims)
    effect, reason = simulated(spread, spread.tasks, None, seed, confidence, sims).bounded_detectable(power)
    return Detectable(effect, reason, power, confidence, sims)


def task_pairs(tasks: Sequence[TaskRow]) -> tuple[TaskPairs, ...]:
    """What the task rows say of each task's pairs: how many, and how many went each way."""
    return tuple(TaskPairs(t.task, t.pairs, t.candidate_only, t.baseline_only) for t in tasks)


def block(tasks: Sequence[TaskRow], seed: int, confidence: float = stats.CONFIDENCE) -> dict[str, Any]:
    """The report's JSON block for the run's task rows (its experiment seed), through the
    interval at ``confidence`` (a candidate's among several: ``paired.family_confidence``)."""
    return dict(_block(task_pairs(tasks), seed, confidence))


# The simulation is a pure function of the task pairs and the seed, and costs a few
# tenths of a second at 500 tasks: `campaign view` rebuilds a report on every refresh,
# and its runs' pairs change only when an attempt finishes.
@functools.lru_cache(maxsize=8)
def _block(tasks: tuple[TaskPairs, ...], seed: int, confidence: float) -> dict[str, Any]:
    found = at_run_size(tasks, seed, confidence=confidence)
    return {
        "metric": "verified_success",
        "effect": found.effect,
        "effect_reason": found.reason,
        "power": found.power,
        "confidence": found.confidence,
        "simulations": found.sims,
        "method": METHOD,
    }


def detectable_line(pd: Mapping[str, Any]) -> str:
    """The smallest detectable effect, with how it was computed."""
    d = pd["detectable_effect"]
    if d["effect"] is None:
        return f"Smallest detectable effect on verified success: not computed ({_WHY.get(d['effect_reason'], d['effect_reason'])})."
    return (
        f"Smallest effect on verified success this run could detect (either way, {d['power']:.0%} power): {d['effect']:.3f}. "
        f"How: {d['simulations']} campaigns of this size and spread were simulated (its task clusters and their pairs redrawn, "
        "every task shifted by the effect), each through this interval."
    )


def inconclusive(pd: Mapping[str, Any]) -> str | None:
    """Where the verified-success interval spans zero, or every task's difference is zero
    (no interval, and no difference seen): what the run could not have seen."""
    success, d = pd["verified_success"], pd["detectable_effect"]
    spans = success["ci_low"] is not None and success["ci_high"] is not None and success["ci_low"] <= 0 <= success["ci_high"]
    flat_zero = success["interval_reason"] == stats.NO_SPREAD_BETWEEN_TASKS and success["estimate"] == 0
    if not (spans or flat_zero):
        return None
    if d["effect_reason"] == NOT_DETECTABLE:
        return "inconclusive: not even the largest possible effect would be detected at this size"
    if d["effect"] is None:
        seen = "the interval includes zero" if spans else "every task's mean difference is zero"
        return f"inconclusive: {seen}, and this run cannot say which effects it could have detected ({_WHY.get(d['effect_reason'], d['effect_reason'])})"
    return f"inconclusive: effects smaller than {d['effect']:.3f} could not be detected at this size"
