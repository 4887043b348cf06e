"""Continuing a blocked campaign: a new campaign that carries finished, verified trials by reference."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Engine, select

from campaign.store import scope
from campaign.store.carry import carryable_select
from campaign.store.models import Attempt, Campaign, Trial
from campaign.store.repository.common import Clock, utcnow


def carryable_trials(engine: Engine, campaign_id: int) -> dict[str, int]:
    """trial_id -> the trial row holding its result, for every finished trial of the
    campaign whose attempt ended verified (a carried trial points at its origin)."""
    with scope.reading(engine) as conn:
        return {trial_id: origin for trial_id, origin in conn.execute(carryable_select(campaign_id))}


def create_continuation(engine: Engine, blocked_id: int, carried: Mapping[str, int], clock: Clock = utcnow) -> int:
    """A new campaign for the same experiment and schedule that continues ``blocked_id``.

    Carried trials are born finished and point at the row holding their result;
    the rest are scheduled. Nothing of the blocked campaign is edited."""
    now = clock()
    with scope.session(engine, write=True) as session:
        old = session.get(Campaign, blocked_id)
        row = Campaign(
            kind=old.kind,
            state="running",
            live=old.live,
            agent=old.agent,
            seed=old.seed,
            experiment_json=old.experiment_json,
            experiment_digest=old.experiment_digest,
            plan_digest=old.plan_digest,
            approved_plan_digest=old.approved_plan_digest,
            scheduled_count=old.scheduled_count,
            created_at=now,
            deadline_at=old.deadline_at,
            continues_campaign_id=old.id,
        )
        session.add(row)
        session.flush()
        for t in session.scalars(select(Trial).where(Trial.campaign_id == blocked_id).order_by(Trial.position)):
            origin = carried.get(t.trial_id)
            session.add(
                Trial(
                    campaign_id=row.id,
                    pair_id=t.pair_id,
                    trial_id=t.trial_id,
                    provider=t.provider,
                    model=t.model,
                    task=t.task,
                    variant=t.variant,
                    repetition=t.repetition,
                    pair_order=t.pair_order,
                    position=t.position,
                    status="finished" if origin is not None else "scheduled",
                    updated_at=now,
                    carried_from_trial_pk=origin,
                )
            )
        return row.id


def carried_results(engine: Engine, campaign_id: int) -> list[tuple[Trial, Attempt]]:
    """A continuation's carried trials with the finished attempt each points at."""
    stmt = (
        select(Trial, Attempt)
        .join(Attempt, Attempt.trial_pk == Trial.carried_from_trial_pk)
        .where(Trial.campaign_id == campaign_id, Attempt.status == "finished")
        .order_by(Trial.position)
    )
    with scope.session(engine) as session:
        return [(t, a) for t, a in session.execute(stmt)]
