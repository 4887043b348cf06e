"""Which results a continuation carries over: every finished trial of the campaign it
continues whose result attempt ran to a verified end (cleanup proven, disposal not
failed, finalization not failed), by the trial row that holds that result.

One rule, read by two: ``repository.create_continuation``'s caller, which carries them,
and the chain check (``chain.pinned``), which holds a continuation to exactly these. The
rule reads only what the chain pins (trial status, the attempt rows' hashed columns), so
it gives the same answer long after the continuation was made."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select

from campaign.store.models import Attempt, Trial


def carryable_select(campaign_id: int) -> Select[Any]:
    """trial_id and the trial row holding its result (a carried trial's origin), for
    each trial of ``campaign_id`` whose result may be carried."""
    origin = func.coalesce(Trial.carried_from_trial_pk, Trial.id)
    result_ok = select(Attempt.id).where(
        Attempt.trial_pk == origin,
        Attempt.status == "finished",
        Attempt.cleanup_complete.is_(True),
        Attempt.disposal_complete.is_not(False),
        Attempt.finalization_failed.is_not(True),
    ).exists()
    return select(Trial.trial_id, origin).where(Trial.campaign_id == campaign_id, Trial.status == "finished", result_ok).order_by(Trial.position)
