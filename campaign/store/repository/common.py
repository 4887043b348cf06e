"""What the repository's modules share: the clock, the compare-and-set, the campaign lock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from campaign.errors import ConflictError
from campaign.store import scope
from campaign.store.models import Attempt, Campaign, Trial

Clock = Callable[[], dt.datetime]
# Attempt statuses without a verdict: the trial goes back to the queue.
REQUEUED = ("interrupted", "faulted")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def cas(engine: Engine, stmt, what: str) -> None:
    with scope.transaction(engine) as conn:
        if conn.execute(stmt).rowcount != 1:
            raise ConflictError(f"{what} was not in the expected state; another runner changed it")


def lock_campaign(executor: Session | Any, campaign_id: int) -> None:
    """Serialize this campaign's attempt numbering on PostgreSQL (SQLite's BEGIN IMMEDIATE
    already serializes every writer): workers start and finish attempts concurrently."""
    bind = executor.get_bind() if isinstance(executor, Session) else executor
    if bind.dialect.name == "postgresql":
        executor.execute(select(Campaign.id).where(Campaign.id == campaign_id).with_for_update())


def has_live_attempt() -> Any:
    """The trial has an attempt that is running or finished (interrupted and faulted ones
    do not count: their trial went back to the queue)."""
    return select(Attempt.id).where(Attempt.trial_pk == Trial.id, Attempt.status.not_in(REQUEUED)).exists()
