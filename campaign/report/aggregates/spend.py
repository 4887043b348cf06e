"""What was paid for: every attempt of the campaign and of the campaigns it continues,
whatever its status (an interrupted attempt, or an earlier campaign's that was not
carried over, was paid for too). Sums are exact (``store.money``)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, and_, case, func, select

from campaign.report.aggregates.selections import FAULTED, FINISHED, SPENT, TRIAL_COLUMNS, Scope, attempts, count_if, trials
from campaign.store import money
from campaign.store.repository import counted_usd

@dataclass(frozen=True)
class SpendRow:
    """What one provider's attempts of one variant spent, over the whole lineage.

    ``attempts`` counts every attempt row; ``results`` those that are a trial's
    result; ``interrupted`` those the operator stopped (or left running by a killed
    runner, ``running`` of them); ``provider_errors`` and ``engine_errors`` those
    the provider or the engine ended (no verdict either); ``not_carried`` finished
    attempts of an earlier campaign whose trial ran again here. Sums are exact ``Decimal``.
    """

    provider: str
    variant: str
    attempts: int
    results: int
    interrupted: int
    running: int
    not_carried: int
    cost_sum: Decimal | None
    with_cost: int
    complete_spend: int
    equivalent_sum: Decimal | None
    with_equivalent: int
    provider_errors: int = 0
    engine_errors: int = 0


def spend_rows(conn: Connection, scope: Scope) -> list[SpendRow]:
    """Per (provider, variant): counts and exact sums over every attempt in the spend scope."""
    c = attempts.c
    result = scope.is_result()
    complete = and_(c.spend_complete.is_(True), c.cost_usd.is_not(None))
    stmt = (
        select(
            trials.c.provider,
            trials.c.variant,
            func.count(c.id).label("attempts"),
            count_if(result).label("results"),
            count_if(and_(~FINISHED, ~FAULTED)).label("interrupted"),
            count_if(and_(FAULTED, c.outcome == "provider_error")).label("provider_errors"),
            count_if(and_(FAULTED, c.outcome != "provider_error")).label("engine_errors"),
            count_if(c.status == "running").label("running"),
            count_if(and_(FINISHED, ~result)).label("not_carried"),
            money.sum_usd(c.cost_usd).label("cost_sum"),
            func.count(c.cost_usd).label("with_cost"),
            count_if(complete).label("complete_spend"),
            money.sum_usd(c.equivalent_spend_usd).label("equivalent_sum"),
            func.count(c.equivalent_spend_usd).label("with_equivalent"),
        )
        .select_from(SPENT)
        .where(*scope.spend_where())
        .group_by(trials.c.provider, trials.c.variant)
    )
    return [
        SpendRow(
            provider=row["provider"],
            variant=row["variant"],
            attempts=int(row["attempts"]),
            results=int(row["results"]),
            interrupted=int(row["interrupted"]),
            running=int(row["running"]),
            not_carried=int(row["not_carried"]),
            cost_sum=money.usd(row["cost_sum"]),
            with_cost=int(row["with_cost"]),
            complete_spend=int(row["complete_spend"]),
            equivalent_sum=money.usd(row["equivalent_sum"]),
            with_equivalent=int(row["with_equivalent"]),
            provider_errors=int(row["provider_errors"]),
            engine_errors=int(row["engine_errors"]),
        )
        for row in conn.execute(stmt).mappings()
    ]


@dataclass(frozen=True)
class FaultRow:
    """How many of one provider's attempts of one variant the provider ended, by fault."""

    provider: str
    variant: str
    fault: str
    attempts: int


def fault_rows(conn: Connection, scope: Scope) -> list[FaultRow]:
    """Per (provider, variant, fault): attempts the provider ended (the spend scope's, so a
    continuation counts its lineage), so an imbalance between variants shows."""
    c = attempts.c
    stmt = (
        select(trials.c.provider, trials.c.variant, c.failure_class, func.count(c.id))
        .select_from(SPENT)
        .where(*scope.spend_where(), c.outcome == "provider_error")
        .group_by(trials.c.provider, trials.c.variant, c.failure_class)
        .order_by(trials.c.provider, trials.c.variant, c.failure_class)
    )
    return [FaultRow(provider, variant, fault or "unknown", int(n)) for provider, variant, fault, n in conn.execute(stmt)]


@dataclass(frozen=True)
class AttemptCost:
    """One attempt of the spend scope, as a plan counts it (``campaign power``)."""

    provider: str
    task: str
    variant: str
    kind: str  # "result", "faulted" (the provider or the engine ended it) or "other"
    spend_nano: int | None  # counted spend (measured when complete, else list-price equivalent)
    measured: bool
    started_at: Any
    ended_at: Any


def attempt_costs(conn: Connection, scope: Scope) -> list[AttemptCost]:
    """Every attempt in the spend scope with its counted spend and its start and end (the
    durations are taken in Python: no dialect-neutral SQL subtracts two timestamps)."""
    c = attempts.c
    complete = and_(c.spend_complete.is_(True), c.cost_usd.is_not(None))
    kind = case((scope.is_result(), "result"), (FAULTED, "faulted"), else_="other")
    stmt = (
        select(trials.c.provider, trials.c.task, trials.c.variant, kind, money.nano_usd(counted_usd()), complete, c.started_at, c.ended_at)
        .select_from(SPENT)
        .where(*scope.spend_where())
    )
    return [
        AttemptCost(provider, task, variant, kind, None if nano is None else int(nano), bool(measured), started, ended)
        for provider, task, variant, kind, nano, measured, started, ended in conn.execute(stmt)
    ]


def spend_only_attempts(conn: Connection, scope: Scope) -> list[dict[str, Any]]:
    """Attempts that count towards spend but are no trial's result, in campaign and seq order:
    interrupted, left running by a killed runner, or an earlier campaign's not carried over."""
    c = attempts.c
    stmt = (
        select(
            *TRIAL_COLUMNS,
            c.campaign_id,
            c.seq.label("attempt_seq"),
            c.status.label("attempt_status"),
            c.outcome,
            c.wall_seconds,
            c.cost_usd,
            c.cost_reported,
            c.spend_complete,
            c.equivalent_spend_usd,
            c.cleanup_complete,
            c.disposal_complete,
            c.finalization_failed,
            c.teardown_outcome,
            c.containment,
        )
        .select_from(SPENT)
        .where(*scope.spend_where(), ~scope.is_result())
        .order_by(c.campaign_id, c.seq)
    )
    return [dict(row) for row in conn.execute(stmt).mappings()]


def has_attempts(conn: Connection, scope: Scope) -> bool:
    """Any attempt row in the spend scope (a campaign with none is plan-only or not started)."""
    return conn.execute(select(attempts.c.id).select_from(SPENT).where(*scope.spend_where()).limit(1)).first() is not None


__all__ = ["AttemptCost", "FaultRow", "SpendRow", "attempt_costs", "fault_rows", "has_attempts", "spend_only_attempts", "spend_rows"]
