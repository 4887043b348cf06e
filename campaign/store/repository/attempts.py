"""Attempt rows: started before any process, finished and sealed into the hash chain at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, delete, func, select, update

from campaign.errors import ConflictError
from campaign.store import chain, scope
from campaign.store.models import Attempt, SpendReservation, Trial
from campaign.store.repository.common import REQUEUED, Clock, cas, lock_campaign, utcnow
from campaign.vocabulary import VERIFIER_KILLED


def start_attempt(engine: Engine, trial: Trial, clock: Clock = utcnow, **fields: Any) -> int:
    """The attempt row exists (status running) before any process is spawned for it.

    A running row holds a provisional negative ``seq``; finishing it gives it the
    next place in the campaign's hash chain. The chain is thereby in the order
    attempts were sealed, so attempts of different providers running in parallel
    never leave a running row in the middle of it."""
    with scope.session(engine, write=True) as session:
        lock_campaign(session, trial.campaign_id)
        lowest = session.scalar(select(func.min(Attempt.seq)).where(Attempt.campaign_id == trial.campaign_id))
        seq = min(lowest or 0, 0) - 1
        row = Attempt(campaign_id=trial.campaign_id, trial_pk=trial.id, seq=seq, status="running", started_at=clock(), **fields)
        session.add(row)
        session.flush()
        return row.id


def update_attempt(engine: Engine, attempt_id: int, *, expected: str = "running", **fields: Any) -> None:
    """Record observed facts on a running attempt (counters as soon as they are seen)."""
    cas(engine, update(Attempt).where(Attempt.id == attempt_id, Attempt.status == expected).values(**fields), f"attempt {attempt_id}")


def finish_attempt(engine: Engine, attempt_id: int, trial_pk: int, *, status: str = "finished", clock: Clock = utcnow, **fields: Any) -> None:
    """running -> finished|interrupted|faulted and the row sealed into the campaign's hash
    chain, atomically. A finished attempt finishes its trial; an interrupted or faulted
    one carries no verdict, so its trial goes back to the queue and gets a fresh attempt
    (the row keeps its spend and teardown outcome)."""
    trial_status = "scheduled" if status in REQUEUED else "finished"
    with scope.transaction(engine) as conn:
        campaign_id = conn.execute(select(Attempt.campaign_id).where(Attempt.id == attempt_id)).scalar_one_or_none()
        if campaign_id is not None:
            lock_campaign(conn, campaign_id)
            # The next place in the chain (a legacy row numbered at its start keeps its seq).
            last = conn.execute(select(func.coalesce(func.max(Attempt.seq), 0)).where(Attempt.campaign_id == campaign_id, Attempt.seq > 0)).scalar_one()
            conn.execute(update(Attempt).where(Attempt.id == attempt_id, Attempt.status == "running", Attempt.seq < 0).values(seq=last + 1))
        done = conn.execute(
            update(Attempt).where(Attempt.id == attempt_id, Attempt.status == "running").values(status=status, ended_at=clock(), **fields)
        ).rowcount
        moved = conn.execute(update(Trial).where(Trial.id == trial_pk, Trial.status == "admitted").values(status=trial_status, updated_at=clock())).rowcount
        if done != 1 or moved != 1:
            raise ConflictError(f"attempt {attempt_id} or its trial changed under us; refusing to overwrite")
        # The attempt's recorded spend now stands where its reserved ceiling did.
        conn.execute(delete(SpendReservation).where(SpendReservation.trial_pk == trial_pk))
        # Sealed in the same transaction: a finished row is never visible unchained.
        chain.seal_attempt(conn, attempt_id)


def get_attempt(engine: Engine, attempt_id: int) -> Attempt | None:
    with scope.session(engine) as session:
        return session.get(Attempt, attempt_id)


def attempts_for(engine: Engine, campaign_id: int) -> list[Attempt]:
    stmt = select(Attempt).where(Attempt.campaign_id == campaign_id).order_by(Attempt.seq)
    with scope.session(engine) as session:
        return list(session.scalars(stmt))


def unresolved_attempts(engine: Engine, campaign_id: int | None = None) -> list[Attempt]:
    """Attempts that block further work: cleanup/disposal/finalization unproven, or still running."""
    stmt = select(Attempt).where(
        (Attempt.cleanup_complete.is_not(True))
        | (Attempt.disposal_complete.is_(False))
        | (Attempt.finalization_failed.is_(True))
        | (Attempt.status != "finished")
    )
    if campaign_id is not None:
        stmt = stmt.where(Attempt.campaign_id == campaign_id)
    with scope.session(engine) as session:
        return list(session.scalars(stmt.order_by(Attempt.id)))


def fault_attempts(engine: Engine, campaign_ids: Sequence[int], trial_id: str) -> int:
    """How many attempts of a trial (by its stable id, over a continuation's lineage) the
    provider ended, or ended without a verdict because something outside the engine
    stopped its verifier: the per-trial bound on fresh attempts reads this."""
    stmt = (
        select(func.count())
        .select_from(Attempt)
        .join(Trial, Trial.id == Attempt.trial_pk)
        .where(Attempt.campaign_id.in_(tuple(campaign_ids)), Trial.trial_id == trial_id, (Attempt.outcome == "provider_error") | (Attempt.failure_class == VERIFIER_KILLED))
    )
    with scope.reading(engine) as conn:
        return int(conn.execute(stmt).scalar_one())
