"""`campaign power`'s options, checked, and the plan they ask for.

Every check raises ``UsageProblem`` naming the option, before the store is opened.
A pilot whose spread cannot be estimated is no usage problem: the plan carries the
reason (and the spend forecast, which needs no spread), and the command refuses the
target it cannot assess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import Engine

from campaign.errors import UsageProblem
from campaign.lanes.options import DEFAULT_SEED, MAX_PARALLEL_PROVIDERS, MAX_REPETITIONS
from campaign.power import forecast as fc
from campaign.power import planner
from campaign.power.pilot import Pilot, read_pilot
from campaign.power.render import Assumptions
from campaign.report import spread, stats

DEFAULT_MAX_REPETITIONS = 10
MAX_TABLE_ROWS = 100
SIMULATIONS = (100, 100_000)
# Task clusters a plan simulates: each simulated campaign holds every one of them.
MAX_TASKS = 10_000
# Simulated campaigns x task clusters: the simulation holds a few dozen bytes per one at
# once (about 0.8 GB here, the default simulations at MAX_TASKS).
MAX_SIMULATED_TASKS = planner.DEFAULT_SIMULATIONS * MAX_TASKS


@dataclass(frozen=True)
class PowerOptions:
    campaign_id: int | None = None
    provider: str | None = None
    baseline_rate: float | None = None
    task_spread: float | None = None
    tasks: int | None = None
    effect: float | None = None
    power: float | None = None
    half_width: float | None = None
    confidence: float | None = None
    max_repetitions: int | None = None
    simulations: int | None = None
    seed: int | None = None
    caps: fc.SpendLimits | None = None
    parallel_providers: int | None = None
    candidate: str | None = None


def check(o: PowerOptions) -> None:
    if (o.campaign_id is None) == (o.baseline_rate is None):
        raise UsageProblem("plan from a pilot (--campaign ID) or from stated assumptions (--baseline-rate with --tasks), one of the two", option="--campaign")
    if o.candidate is not None and o.campaign_id is None:
        raise UsageProblem("--candidate picks one of a pilot's variants; it needs --campaign", option="--candidate")
    if o.provider is not None and o.campaign_id is None:
        raise UsageProblem("--provider limits a pilot campaign to one provider; it needs --campaign", option="--provider")
    if o.baseline_rate is not None:
        _within(o.baseline_rate, "--baseline-rate", 0.0, 1.0, closed=True)
        if o.tasks is None:
            raise UsageProblem("stated assumptions need the suite size too: --tasks N", option="--tasks")
        if o.caps is not None or o.parallel_providers is not None:
            raise UsageProblem("spend and wall time are forecast from a pilot's attempts; without --campaign there is nothing to forecast them from", option="--max-spend-usd" if o.caps else "--parallel-providers")
    if o.task_spread is not None:
        if o.baseline_rate is None:
            raise UsageProblem("--task-spread is a stated assumption; a pilot (--campaign) measures its own spread", option="--task-spread")
        _within(o.task_spread, "--task-spread", 0.0, 1.0, closed=True)
    if o.tasks is not None and not 2 <= o.tasks <= MAX_TASKS:
        raise UsageProblem(f"must be between 2 (one task cluster has no interval) and {MAX_TASKS}, got {o.tasks}", option="--tasks")
    if o.effect is not None and o.half_width is not None:
        raise UsageProblem("give one target: --effect (with --power) or --half-width", option="--half-width")
    if o.effect is not None and (not math.isfinite(o.effect) or o.effect == 0 or abs(o.effect) > 1):
        raise UsageProblem(f"must be a difference in success rate, non-zero, between -1 and 1 (0.10 is ten points), got {o.effect}", option="--effect")
    if o.effect is not None and o.baseline_rate is not None and not 0.0 <= o.baseline_rate + o.effect <= 1.0:
        raise UsageProblem(
            f"a baseline rate of {o.baseline_rate:g} moved by {o.effect:g} is no success rate ({o.baseline_rate + o.effect:g}); "
            "the coding variant's rate must stay within [0, 1]",
            option="--effect",
        )
    if o.power is not None:
        _within(o.power, "--power", 0.0, 1.0)
    if o.half_width is not None:
        _within(o.half_width, "--half-width", 0.0, 1.0)
    if o.confidence is not None:
        _within(o.confidence, "--confidence", 0.0, 1.0)
    if o.max_repetitions is not None and not 1 <= o.max_repetitions <= min(MAX_TABLE_ROWS, MAX_REPETITIONS):
        raise UsageProblem(f"must be between 1 and {min(MAX_TABLE_ROWS, MAX_REPETITIONS)}, got {o.max_repetitions}", option="--max-repetitions")
    if o.simulations is not None and not SIMULATIONS[0] <= o.simulations <= SIMULATIONS[1]:
        raise UsageProblem(f"must be between {SIMULATIONS[0]} and {SIMULATIONS[1]}, got {o.simulations}", option="--simulations")
    if o.parallel_providers is not None and not 1 <= o.parallel_providers <= MAX_PARALLEL_PROVIDERS:
        raise UsageProblem(f"must be between 1 and {MAX_PARALLEL_PROVIDERS}, got {o.parallel_providers}", option="--parallel-providers")
    if o.tasks is not None:
        fits_in_memory(o, o.tasks)


def fits_in_memory(o: PowerOptions, tasks: int) -> None:
    """The simulation holds every simulated campaign's task means at once."""
    sims = o.simulations or planner.DEFAULT_SIMULATIONS
    if sims * tasks > MAX_SIMULATED_TASKS:
        raise UsageProblem(
            f"{sims:,} simulations of {tasks:,} task clusters would hold {sims * tasks:,} simulated tasks at once, more than "
            f"{MAX_SIMULATED_TASKS:,}: give at most --simulations {max(MAX_SIMULATED_TASKS // tasks, SIMULATIONS[0]):,}",
            option="--simulations",
        )


def _within(value: float, option: str, low: float, high: float, *, closed: bool = False) -> None:
    inside = low <= value <= high if closed else low < value < high
    if not math.isfinite(value) or not inside:
        bounds = f"[{low:g}, {high:g}]" if closed else f"({low:g}, {high:g})"
        raise UsageProblem(f"must be within {bounds}, got {value}", option=option)


def target(o: PowerOptions) -> planner.Target:
    return planner.Target(effect=o.effect, power=o.power if o.power is not None else planner.DEFAULT_POWER, half_width=o.half_width)


def request(o: PowerOptions, *, tasks: int, providers: int, seed: int, variants: int = 2) -> planner.Request:
    top = o.max_repetitions or DEFAULT_MAX_REPETITIONS
    return planner.Request(
        repetitions=tuple(range(1, top + 1)),
        tasks=o.tasks or tasks,
        providers=providers,
        seed=o.seed if o.seed is not None else seed,
        target=target(o),
        confidence=o.confidence if o.confidence is not None else stats.CONFIDENCE,
        sims=o.simulations or planner.DEFAULT_SIMULATIONS,
        caps=o.caps,
        workers=o.parallel_providers,
        variants=variants,
    )


def from_pilot(engine: Engine, o: PowerOptions) -> tuple[planner.Plan, Pilot]:
    pilot = read_pilot(engine, o.campaign_id, o.provider, candidate=o.candidate)  # type: ignore[arg-type]
    fits_in_memory(o, len(pilot.tasks))
    try:
        fitted: spread.Spread | spread.SpreadUnknown = spread.fit(pilot.tasks)
    except spread.SpreadUnknown as exc:
        fitted = exc
    req = request(o, tasks=max(len(pilot.tasks), 2), providers=len(pilot.providers), seed=pilot.seed, variants=len(pilot.variants))
    return planner.plan(fitted, fc.cost_model(pilot.cells), req), pilot


def from_assumptions(o: PowerOptions) -> tuple[planner.Plan, Assumptions]:
    rate, spread_sd = o.baseline_rate, o.task_spread or 0.0
    model = spread.assumed(rate, o.effect or 0.0, spread_sd)  # type: ignore[arg-type]
    req = request(o, tasks=o.tasks, providers=1, seed=DEFAULT_SEED)  # type: ignore[arg-type]
    return planner.plan(model, None, req), Assumptions(rate, spread_sd)  # type: ignore[arg-type]
