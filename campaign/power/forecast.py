"""What a campaign of a given size will cost and how long it will take, from a pilot's
attempts. Pure numpy over plain values, no I/O.

The unit is the trial with a verdict. A task's cost per trial (each variant's, summed
over the variants) is what the pilot spent on that task's attempts that count, divided
by its trials with a verdict. The attempts that count are the verdicts and the ones the
provider or the engine ended (``faulted``): a fault's trial runs again, so what faults
cost, in money and time, is part of what a trial costs on that provider. Attempts the
operator interrupted (or a killed runner left running, or an earlier campaign's that
were not carried over) are not: they say nothing about the next campaign, and the
forecast reports them apart.

Spend per attempt is what the spend caps count: the measured cost when complete, else
the list-price equivalent (``repository.counted_spend``). An attempt with neither
makes the forecast a lower bound, and says how many there were.

A provider's forecast is ``repetitions x tasks x`` its mean cost per task; a task the
provider never finished counts at that provider's mean. The range (5th to 95th
percentile) resamples the pilot's task clusters, as the report's interval does: how
much the total moves with which tasks cost what. For a campaign of the pilot's own
tasks that is conservative (the same tasks will run).

Wall time is the attempts' own durations (admission to the row's end: set-up,
client, verifier, teardown), added up for one runner; with parallel workers each
provider still runs its trials one at a time, so the campaign takes as long as the
busiest worker (providers dealt out largest first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from campaign.store.limits import SpendLimits

RANGE = (0.05, 0.95)
NANO = Decimal(10**9)


@dataclass(frozen=True)
class CellCost:
    """One provider's attempts of one task and variant in the pilot."""

    provider: str
    task: str
    variant: str
    trials: int  # trials with a verdict
    counted: int  # their attempts plus the faulted ones: what the forecast spreads over trials
    spend_nano: int  # known spend of the counted attempts, exact nano-dollars
    spend_unknown: int  # counted attempts with no known spend
    measured: int  # counted attempts at their measured, complete cost
    seconds: float  # known durations of the counted attempts
    seconds_unknown: int
    set_aside: int = 0  # interrupted, left running, not carried: not forecast
    set_aside_nano: int = 0


@dataclass(frozen=True)
class ProviderForecast:
    provider: str
    usd: float | None
    low_usd: float | None
    high_usd: float | None
    complete: bool  # every counted attempt's spend was known (else usd is a lower bound)
    unknown_attempts: int
    basis: str
    seconds: float | None
    cap_usd: Decimal | None = None
    over_cap: bool | None = None  # the point forecast plus one ceiling passes the cap
    may_pass_cap: bool | None = None  # the high end does


@dataclass(frozen=True)
class SpendForecast:
    providers: tuple[ProviderForecast, ...]
    usd: float | None
    low_usd: float | None
    high_usd: float | None
    complete: bool
    seconds_one_runner: float | None
    seconds_parallel: float | None
    workers: int
    cap_usd: Decimal | None = None
    over_cap: bool | None = None
    may_pass_cap: bool | None = None


@dataclass(frozen=True, eq=False)
class CostModel:
    """Per task (rows) and provider (columns): cost and seconds of one trial of each variant."""

    providers: tuple[str, ...]
    tasks: tuple[str, ...]
    usd: np.ndarray
    seconds: np.ndarray
    cells: tuple[CellCost, ...]
    attempts_per_trial: float | None

    def provider_cells(self, provider: str) -> list[CellCost]:
        return [c for c in self.cells if c.provider == provider]


def cost_model(cells: Sequence[CellCost]) -> CostModel | None:
    """Per-task costs from the pilot's cells; None when no trial has a verdict."""
    usable = [c for c in cells if c.trials > 0]
    if not usable:
        return None
    providers = tuple(sorted({c.provider for c in cells}))
    tasks = tuple(sorted({c.task for c in usable}))
    usd = np.full((len(tasks), len(providers)), np.nan)
    seconds = np.full_like(usd, np.nan)
    row, col = {t: i for i, t in enumerate(tasks)}, {p: j for j, p in enumerate(providers)}
    for c in usable:
        i, j = row[c.task], col[c.provider]
        usd[i, j] = np.nansum([usd[i, j], c.spend_nano / 1e9 / c.trials])
        if c.seconds_unknown < c.counted:
            seconds[i, j] = np.nansum([seconds[i, j], c.seconds / c.trials])
    trials = sum(c.trials for c in cells)
    return CostModel(providers, tasks, _fill(usd), _fill(seconds), tuple(cells), sum(c.counted for c in cells) / trials if trials else None)


def _fill(matrix: np.ndarray) -> np.ndarray:
    """A task a provider never finished counts at the provider's mean task (NaN: none known)."""
    out = matrix.copy()
    for j in range(out.shape[1]):
        col = out[:, j]
        if np.isnan(col).all():
            continue
        col[np.isnan(col)] = np.nanmean(col)
    return out


def forecast(
    model: CostModel, repetitions: int, tasks: int, rng: np.random.Generator, *, sims: int, caps: SpendLimits | None = None, workers: int | None = None
) -> SpendForecast:
    """Spend and wall time of ``repetitions`` per task over ``tasks`` tasks, per provider and in total."""
    drawn = rng.integers(0, len(model.tasks), size=(sims, tasks))
    resampled = repetitions * np.nansum(model.usd[drawn], axis=1)  # sims x providers
    point = repetitions * tasks * np.nanmean(model.usd, axis=0)
    seconds = repetitions * tasks * np.nanmean(model.seconds, axis=0) if not np.isnan(model.seconds).all() else None
    ceiling = caps.per_attempt_ceiling_usd if caps is not None else None
    per_provider = []
    for j, name in enumerate(model.providers):
        cells = model.provider_cells(name)
        unknown = sum(c.spend_unknown for c in cells)
        counted = sum(c.counted for c in cells)
        known = not np.isnan(point[j]) and unknown < counted
        cap = caps.provider_max_spend_usd if caps is not None else None
        low, high = np.quantile(resampled[:, j], RANGE) if known else (None, None)
        per_provider.append(
            ProviderForecast(
                provider=name,
                usd=float(point[j]) if known else None,
                low_usd=_float(low),
                high_usd=_float(high),
                complete=unknown == 0,
                unknown_attempts=unknown,
                basis=_basis(cells),
                seconds=_float(seconds[j]) if seconds is not None and not np.isnan(seconds[j]) else None,
                cap_usd=cap,
                over_cap=_passes(point[j] if known else None, ceiling, cap),
                may_pass_cap=_passes(high, ceiling, cap),
            )
        )
    every = all(p.usd is not None for p in per_provider)
    total = float(point.sum()) if every else None
    low, high = np.quantile(resampled.sum(axis=1), RANGE) if every else (None, None)
    cap = caps.max_spend_usd if caps is not None else None
    durations = [p.seconds for p in per_provider]
    n_workers = workers or len(model.providers)
    return SpendForecast(
        providers=tuple(per_provider),
        usd=total,
        low_usd=_float(low),
        high_usd=_float(high),
        complete=every and all(p.complete for p in per_provider),
        seconds_one_runner=sum(durations) if None not in durations else None,  # type: ignore[arg-type]
        seconds_parallel=makespan(durations, n_workers) if None not in durations else None,  # type: ignore[arg-type]
        workers=n_workers,
        cap_usd=cap,
        over_cap=_passes(total, ceiling, cap),
        may_pass_cap=_passes(high, ceiling, cap),
    )


def makespan(durations: Sequence[float], workers: int) -> float:
    """How long ``workers`` take when each provider's trials run on one of them, one at a
    time (longest first onto the least busy worker)."""
    loads = [0.0] * max(1, min(workers, len(durations)))
    for d in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += d
    return max(loads)


def _passes(usd, ceiling: Decimal | None, cap: Decimal | None) -> bool | None:
    """Whether the spend gate would stop short: it admits an attempt only while the spend
    so far plus one attempt ceiling fits the cap."""
    if cap is None or usd is None:
        return None
    return Decimal(str(float(usd))) + (ceiling or Decimal(0)) > cap


def _basis(cells: Sequence[CellCost]) -> str:
    measured = sum(c.measured for c in cells)
    counted = sum(c.counted for c in cells)
    unknown = sum(c.spend_unknown for c in cells)
    equivalent = counted - measured - unknown
    parts = [name for name, n in (("measured", measured), ("list-price equivalent", equivalent)) if n]
    if unknown:
        parts.append(f"unknown for {unknown} attempt(s)")
    return " + ".join(parts) or "nothing spent"


def set_aside(cells: Sequence[CellCost]) -> tuple[int, Decimal]:
    """Attempts the forecast leaves out (interrupted, left running, not carried) and their spend."""
    return sum(c.set_aside for c in cells), Decimal(sum(c.set_aside_nano for c in cells)) / NANO


def _float(value) -> float | None:
    return None if value is None else float(value)


def by_provider(forecast: SpendForecast) -> Mapping[str, ProviderForecast]:
    return {p.provider: p for p in forecast.providers}
