"""A pilot read from the store: its paired outcomes per task and what its attempts cost.

The one part of the planner that touches the store, through the report's own
aggregates (``report.aggregates``: the SQL lives there), so a pilot's pairs are
exactly the pairs its report counts: a trial's result is its finished attempt;
interrupted and faulted attempts carry no verdict and are never outcomes, but what
they cost is read too (``forecast`` says which of them a forecast counts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine

from campaign.errors import UsageProblem
from campaign.power.forecast import CellCost
from campaign.report import aggregates, comparisons, detectable, identity, integrity
from campaign.report.spread import TaskPairs
from campaign.store import repository
from campaign.store import scope as store_scope
from campaign.vocabulary import CODING, VARIANTS


@dataclass(frozen=True)
class Pilot:
    campaign_id: int
    kind: str
    provider: str | None  # the one provider the pilot is limited to, if any
    providers: tuple[str, ...]
    seed: int
    tasks: tuple[TaskPairs, ...]
    cells: tuple[CellCost, ...]
    # Its variants in order, the first the baseline; ``tasks`` are the pairs of the baseline
    # and one candidate, the first unless the operator named one (an experiment of several
    # candidates: each candidate's pairs share that design, so one comparison's spread
    # stands in for each).
    variants: tuple[str, ...] = VARIANTS
    candidate: str = CODING

    @property
    def pairs(self) -> int:
        return sum(t.pairs for t in self.tasks)


def read_pilot(engine: Engine, campaign_id: int, provider: str | None = None, *, option: str = "--campaign", candidate: str | None = None) -> Pilot:
    """The pilot campaign's pairs and costs (``option`` names the operator's option in a refusal).
    ``candidate``: whose pairs against the baseline give the spread (default: the first
    candidate). A store that fails to read (a table dropped by hand) is one line naming it."""
    with store_scope.guarded(engine):
        return _read_pilot(engine, campaign_id, provider, option, candidate)


def _read_pilot(engine: Engine, campaign_id: int, provider: str | None, option: str, candidate: str | None = None) -> Pilot:
    campaign = repository.get_campaign(engine, campaign_id)
    if campaign is None:
        raise UsageProblem(f"no campaign {campaign_id} in this store; list them with `campaign sql \"SELECT id, kind, state FROM campaigns\"`", option=option)
    if campaign.kind == "nonpaired":
        raise UsageProblem(f"campaign {campaign_id} is a nonpaired run: it has no pairs to plan from; name a paired run or a campaign", option=option)
    scope = aggregates.Scope(campaign.id, provider, tuple(repository.lineage(engine, campaign.id)))
    # A plan from edited rows would forecast edited pairs and spend.
    integrity.refuse_unless_verified(integrity.check(engine, campaign.id), campaign.id, what_then="and a pilot whose rows do not verify is not planned from")
    with engine.connect() as conn:
        providers, _, _ = aggregates.distinct_values(conn, aggregates.Scope(campaign.id))
        if provider is not None and provider not in providers:
            raise UsageProblem(f"campaign {campaign_id} has no provider {provider!r}; it has {', '.join(providers) or 'none'}", option="--provider")
        if not aggregates.has_attempts(conn, scope):
            raise UsageProblem(f"campaign {campaign_id} has no attempts yet (planned, or not started): run it first, then plan from it", option=option)
        variants = comparisons.variant_order(identity.load_object(campaign.experiment_json))
        if candidate is not None and candidate not in variants[1:]:
            raise UsageProblem(f"campaign {campaign_id} has no candidate {candidate!r}; its candidates are {', '.join(variants[1:])} (its baseline {variants[0]})", option="--candidate")
        candidate = candidate or variants[1]
        tasks = detectable.task_pairs(aggregates.task_rows(conn, scope, variants[0], candidate))
        costs = aggregates.attempt_costs(conn, scope)
    return Pilot(
        campaign_id=campaign.id,
        kind=campaign.kind,
        provider=provider,
        providers=tuple(providers) if provider is None else (provider,),
        seed=campaign.seed,
        tasks=tasks,
        cells=cells(costs),
        variants=variants,
        candidate=candidate,
    )


def cells(rows: Sequence[aggregates.AttemptCost]) -> tuple[CellCost, ...]:
    """Attempts grouped by (provider, task, variant), in that order."""
    groups: dict[tuple[str, str, str], list[aggregates.AttemptCost]] = defaultdict(list)
    for row in rows:
        groups[(row.provider, row.task, row.variant)].append(row)
    return tuple(_cell(key, groups[key]) for key in sorted(groups))


def _cell(key: tuple[str, str, str], rows: list[aggregates.AttemptCost]) -> CellCost:
    counted = [r for r in rows if r.kind != "other"]
    aside = [r for r in rows if r.kind == "other"]
    durations = [_seconds(r) for r in counted]
    return CellCost(
        provider=key[0],
        task=key[1],
        variant=key[2],
        trials=sum(r.kind == "result" for r in rows),
        counted=len(counted),
        spend_nano=sum(r.spend_nano for r in counted if r.spend_nano is not None),
        spend_unknown=sum(r.spend_nano is None for r in counted),
        measured=sum(r.measured for r in counted),
        seconds=sum(d for d in durations if d is not None),
        seconds_unknown=sum(d is None for d in durations),
        set_aside=len(aside),
        set_aside_nano=sum(r.spend_nano for r in aside if r.spend_nano is not None),
    )


def _seconds(row: aggregates.AttemptCost) -> float | None:
    if row.started_at is None or row.ended_at is None:
        return None
    return max(0.0, (row.ended_at - row.started_at).total_seconds())

