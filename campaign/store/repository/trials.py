"""Trial rows: the schedule in order and every move of a trial's status (compare-and-set)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine, select, update

from campaign.store import scope
from campaign.store.models import Trial
from campaign.store.repository.common import Clock, has_live_attempt, utcnow


def trials_in_order(engine: Engine, campaign_id: int) -> list[Trial]:
    stmt = select(Trial).where(Trial.campaign_id == campaign_id).order_by(Trial.position)
    with scope.session(engine) as session:
        return list(session.scalars(stmt))


def admit_trial(engine: Engine, trial_pk: int, clock: Clock = utcnow) -> bool:
    """scheduled -> admitted; False when another runner admitted it first."""
    stmt = update(Trial).where(Trial.id == trial_pk, Trial.status == "scheduled").values(status="admitted", updated_at=clock())
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount == 1


def mark_not_attempted(engine: Engine, trial_pk: int, reason: str, clock: Clock = utcnow) -> bool:
    stmt = (
        update(Trial)
        .where(Trial.id == trial_pk, Trial.status == "scheduled")
        .values(status="not_attempted", not_attempted_reason=reason, updated_at=clock())
    )
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount == 1


def mark_remaining_not_attempted(engine: Engine, campaign_id: int, reason: str, clock: Clock = utcnow) -> int:
    """Every trial of the campaign that never got an attempt row -> not_attempted(reason).

    That includes a trial admitted just before a stop or an interruption landed,
    which no process ever ran for; one statement, so the set cannot shift under us.
    """
    never_ran = (Trial.status == "scheduled") | ((Trial.status == "admitted") & ~has_live_attempt())
    stmt = (
        update(Trial)
        .where(Trial.campaign_id == campaign_id, never_ran)
        .values(status="not_attempted", not_attempted_reason=reason, updated_at=clock())
    )
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount


def reopen_trials(engine: Engine, campaign_id: int, reasons: Iterable[str], clock: Clock = utcnow, providers: Iterable[str] | None = None) -> int:
    """not_attempted for one of ``reasons`` (of one of ``providers``, when given) ->
    scheduled: a resume tries them again, under the same gates (a cap still reached stops
    them again, with the same reason)."""
    held = (Trial.campaign_id == campaign_id) & (Trial.status == "not_attempted") & Trial.not_attempted_reason.in_(tuple(reasons))
    if providers is not None:
        held &= Trial.provider.in_(tuple(providers))
    stmt = (
        update(Trial)
        .where(held)
        .values(status="scheduled", not_attempted_reason=None, updated_at=clock())
    )
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount


def reset_admitted_without_attempt(engine: Engine, campaign_id: int, clock: Clock = utcnow) -> int:
    """admitted -> scheduled for trials whose runner died before their attempt row existed.

    Nothing was spawned for such a trial (processes start only after the attempt
    row and its ledger rows are committed), so running it later repeats nothing.
    """
    stmt = (
        update(Trial)
        .where(Trial.campaign_id == campaign_id, Trial.status == "admitted", ~has_live_attempt())
        .values(status="scheduled", updated_at=clock())
    )
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount
