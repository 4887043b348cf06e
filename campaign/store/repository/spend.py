"""Spend as the gates count it: exact sums in SQL, per provider and over a lineage."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, case, func, select, update

from campaign.store import money, scope
from campaign.store.limits import SpendLimits
from campaign.store.models import Attempt, Campaign, Trial
from campaign.store.repository.campaigns import lineage


def measured_spend(engine: Engine, campaign_id: int, provider: str | None = None) -> Decimal:
    """Exact sum of the costs attempts reported (a partial sum when some are unknown),
    interrupted attempts included, over the campaign and every campaign it continues."""
    stmt = select(money.sum_usd(Attempt.cost_usd)).where(Attempt.campaign_id.in_(lineage(engine, campaign_id)))
    if provider is not None:
        stmt = stmt.join(Trial, Trial.id == Attempt.trial_pk).where(Trial.provider == provider)
    with scope.reading(engine) as conn:
        return money.usd(conn.execute(stmt).scalar_one()) or Decimal(0)


@dataclass(frozen=True)
class ApprovalUse:
    """What the live campaigns of this store run under one approved plan have used of it:
    the plan bounds the experiment, not one invocation, so a second run of the same
    plan gets only what the first left."""

    campaign_ids: tuple[int, ...]
    attempts: int
    spent_usd: Decimal  # the exact sum of the costs known
    unknown: int  # attempts whose cost is unknown: what is left cannot be bounded


def approval_use(engine: Engine, approved_plan_digest: str) -> ApprovalUse:
    # By campaign, not lineage: a continuation carries the digest and its own attempts only.
    ids = select(Campaign.id).where(Campaign.approved_plan_digest == approved_plan_digest, Campaign.live.is_(True))
    totals = select(func.count(Attempt.id), money.sum_usd(Attempt.cost_usd), func.count(Attempt.id) - func.count(Attempt.cost_usd)).where(
        Attempt.campaign_id.in_(ids)
    )
    with scope.reading(engine) as conn:
        campaigns = tuple(int(i) for i in conn.execute(ids.order_by(Campaign.id)).scalars())
        attempts, spent, unknown = conn.execute(totals).one()
    return ApprovalUse(campaigns, int(attempts), money.usd(spent) or Decimal(0), int(unknown))


def measured_spend_parts(engine: Engine, campaign_id: int) -> tuple[Decimal | None, int]:
    """(exact sum of the reported costs or None when no attempt reported one, attempts
    whose cost is unknown): a display never shows an unknown cost as 0."""
    stmt = select(money.sum_usd(Attempt.cost_usd), func.count(Attempt.id) - func.count(Attempt.cost_usd)).where(Attempt.campaign_id == campaign_id)
    with scope.reading(engine) as conn:
        total, unknown = conn.execute(stmt).one()
    return money.usd(total), int(unknown)


@dataclass(frozen=True)
class ProviderSpend:
    """What a provider's attempts spent, exactly, and on which basis each was counted."""

    usd: Decimal
    measured: int  # attempts counted at their client-reported, complete cost
    equivalent: int  # attempts counted at their list-price equivalent
    unknown: int  # attempts with neither: the spend cannot be bounded

    @property
    def basis(self) -> str:
        parts = [name for name, n in (("measured", self.measured), ("list-price equivalent", self.equivalent)) if n]
        if self.unknown:
            parts.append(f"unknown for {self.unknown} attempt(s)")
        return " + ".join(parts) or "nothing spent yet"


def counted_spend(cost_usd: float | None, spend_complete: bool | None, equivalent_usd: float | None) -> Decimal | None:
    """One attempt's spend for a campaign cap: its measured cost when complete, else its
    list-price equivalent, else unknown (None)."""
    if spend_complete is True and cost_usd is not None:
        return money.to_decimal(cost_usd)
    return money.to_decimal(equivalent_usd)


def _measured() -> Any:
    return (Attempt.spend_complete.is_(True)) & Attempt.cost_usd.is_not(None)


def counted_usd() -> Any:
    """An attempt's spend for the caps, in SQL: its complete measured cost, else its
    list-price equivalent, else NULL (unknown)."""
    return case((_measured(), Attempt.cost_usd), else_=Attempt.equivalent_spend_usd)


def provider_spend(engine: Engine, campaign_id: int, provider: str) -> ProviderSpend:
    """A provider's spend over the campaign and every campaign it continues, interrupted
    attempts included: measured cost where complete, list-price equivalent otherwise."""
    measured, counted = _measured(), counted_usd()
    stmt = (
        select(
            money.sum_usd(counted),
            func.count(case((measured, 1))),
            func.count(case((~measured & Attempt.equivalent_spend_usd.is_not(None), 1))),
            func.count(case((~measured & Attempt.equivalent_spend_usd.is_(None), 1))),
        )
        .join(Trial, Trial.id == Attempt.trial_pk)
        .where(Attempt.campaign_id.in_(lineage(engine, campaign_id)), Trial.provider == provider)
    )
    with scope.reading(engine) as conn:
        total, n_measured, n_equivalent, n_unknown = conn.execute(stmt).one()
    return ProviderSpend(money.usd(total) or Decimal(0), int(n_measured), int(n_equivalent), int(n_unknown))


def largest_attempt_spend(engine: Engine, campaign_id: int) -> dict[str, Decimal]:
    """Per provider, the most any one of its attempts spent (as the caps count it) over the
    campaign and every campaign it continues; providers whose every spend is unknown are absent."""
    stmt = (
        select(Trial.provider, func.max(money.nano_usd(counted_usd())))
        .join(Trial, Trial.id == Attempt.trial_pk)
        .where(Attempt.campaign_id.in_(lineage(engine, campaign_id)))
        .group_by(Trial.provider)
    )
    with scope.reading(engine) as conn:
        return {provider: money.usd(nano) for provider, nano in conn.execute(stmt) if nano is not None}


def record_spend_limits(engine: Engine, campaign_id: int, limits: SpendLimits) -> None:
    """The limits this run is held to, in their stored form (``SpendLimits.stored``)."""
    with scope.transaction(engine) as conn:
        conn.execute(update(Campaign).where(Campaign.id == campaign_id).values(spend_limits_json=limits.stored()))


def spend_limits(engine: Engine, campaign_id: int) -> SpendLimits | None:
    """The limits the campaign's latest run recorded; None when it recorded none (or
    none this engine can read: an unknown cap is never shown as one)."""
    with scope.reading(engine) as conn:
        text = conn.execute(select(Campaign.spend_limits_json).where(Campaign.id == campaign_id)).scalar_one_or_none()
    return SpendLimits.from_stored(text)
