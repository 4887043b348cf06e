"""What every report query is built from: the two tables, whose attempts a trial reads,
the joins from a trial to its result and from an attempt to its trial, and the scope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, case, func, or_, select

from campaign.store.models import Attempt, Trial

attempts = Attempt.__table__
trials = Trial.__table__

# The trial row whose attempts a trial reads: its own, or, for a trial a
# continuation carried over, the earlier campaign's trial holding its result.
# Every join from a trial to its attempts goes through this expression.
OWNER = func.coalesce(trials.c.carried_from_trial_pk, trials.c.id)
FINISHED = attempts.c.status == "finished"
# Ended by the provider or the engine (DESIGN.md §9): no verdict, spend kept, trial ran again.
FAULTED = attempts.c.status == "faulted"
# A trial with its result attempt (inner: trials that have one; outer: every trial).
RESULTS = trials.join(attempts, and_(attempts.c.trial_pk == OWNER, FINISHED))
RESULTS_OUTER = trials.outerjoin(attempts, and_(attempts.c.trial_pk == OWNER, FINISHED))
# An attempt with the trial row it belongs to (for spend: who ran it, not who reads it).
SPENT = attempts.join(trials, trials.c.id == attempts.c.trial_pk)


@dataclass(frozen=True)
class Scope:
    """Which trials a report covers: one campaign, optionally one provider of it.

    ``lineage`` is the campaign and every campaign it continues (newest first),
    whose attempts the spend includes; empty means the campaign alone.
    """

    campaign_id: int
    provider: str | None = None
    lineage: tuple[int, ...] = field(default=())

    @property
    def campaigns(self) -> tuple[int, ...]:
        return self.lineage or (self.campaign_id,)

    @property
    def continues(self) -> bool:
        return len(self.campaigns) > 1

    def where(self) -> list[Any]:
        """The trials in scope."""
        clauses = [trials.c.campaign_id == self.campaign_id]
        if self.provider is not None:
            clauses.append(trials.c.provider == self.provider)
        return clauses

    def spend_where(self) -> list[Any]:
        """The attempts in scope for spend (with ``SPENT``): the whole lineage's."""
        clauses = [attempts.c.campaign_id.in_(self.campaigns)]
        if self.provider is not None:
            clauses.append(trials.c.provider == self.provider)
        return clauses

    def is_result(self) -> Any:
        """For an attempt row of the lineage: is it the result of a trial in this campaign?

        Finished, and either this campaign's own or carried by one of its trials
        (a continuation's earlier attempts that were not carried are spend only).
        """
        if not self.continues:
            return FINISHED
        carrying = trials.alias("carrying")
        carried = select(carrying.c.carried_from_trial_pk).where(carrying.c.campaign_id == self.campaign_id, carrying.c.carried_from_trial_pk.is_not(None))
        return and_(FINISHED, or_(attempts.c.campaign_id == self.campaign_id, attempts.c.trial_pk.in_(carried)))


def count_if(condition) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def verified_passed() -> Any:
    return attempts.c.verified_pass.is_(True)


# The trial columns of the per-trial rows. Attempt.private_root is never read by a
# report (not even the chain check reads it), and the allowlist drops the hashes.
TRIAL_COLUMNS: Sequence[Any] = (
    trials.c.trial_id,
    trials.c.pair_id,
    trials.c.task,
    trials.c.variant,
    trials.c.provider,
    trials.c.repetition,
    trials.c.pair_order,
    trials.c.position,
)


def as_float(value: Any) -> float | None:
    return None if value is None else float(value)


__all__ = ["FAULTED", "FINISHED", "OWNER", "RESULTS", "RESULTS_OUTER", "SPENT", "TRIAL_COLUMNS", "Scope", "as_float", "attempts", "count_if", "trials", "verified_passed"]
