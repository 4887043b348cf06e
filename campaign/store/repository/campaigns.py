"""Campaign rows: creation with the whole schedule, state changes, lineage and the runner lease."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, case, func, select, update

from campaign.canonical import spec_digest
from campaign.schedule import ScheduledTrial
from campaign.store import chain, scope
from campaign.store.models import Attempt, Campaign, Trial
from campaign.store.repository.common import Clock, cas, utcnow
from campaign.store.repository.trials import mark_remaining_not_attempted, trials_in_order


@dataclass(frozen=True)
class NewCampaign:
    kind: str
    state: str
    live: bool
    agent: str
    seed: int
    # Stored with its digest, which is the chain's genesis: the experiment and, through the
    # schedule it rebuilds, the trial rows are pinned by the chain (verify checks both).
    experiment: Mapping[str, Any]
    plan_digest: str | None = None
    approved_plan_digest: str | None = None
    deadline_at: dt.datetime | None = None


def create_campaign(
    engine: Engine,
    new: NewCampaign,
    trials: Sequence[ScheduledTrial],
    *,
    model: str,
    default_provider: str,
    provider_models: Mapping[str, str] | None = None,
    clock: Clock = utcnow,
) -> int:
    """Insert the campaign and its whole schedule in one transaction. Each trial's model is
    its provider's (``provider_models``, for a campaign of several), else ``model``."""
    models = dict(provider_models or {})
    now = clock()
    with scope.session(engine, write=True) as session:
        row = Campaign(
            kind=new.kind,
            state=new.state,
            live=new.live,
            agent=new.agent,
            seed=new.seed,
            experiment_json=json.dumps(new.experiment, sort_keys=True),
            experiment_digest=spec_digest(new.experiment),
            plan_digest=new.plan_digest,
            approved_plan_digest=new.approved_plan_digest,
            scheduled_count=len(trials),
            created_at=now,
            deadline_at=new.deadline_at,
        )
        session.add(row)
        session.flush()
        session.add_all(
            Trial(
                campaign_id=row.id,
                pair_id=t.pair_id,
                trial_id=t.trial_id,
                provider=t.provider or default_provider,
                model=models.get(t.provider or default_provider, model),
                task=t.task,
                variant=t.variant,
                repetition=t.repetition,
                pair_order=t.pair_order,
                position=t.position,
                status="scheduled",
                updated_at=now,
            )
            for t in trials
        )
        return row.id


def get_campaign(engine: Engine, campaign_id: int) -> Campaign | None:
    with scope.session(engine) as session:
        return session.get(Campaign, campaign_id)


def latest_campaign(engine: Engine, kind: str | None = None) -> Campaign | None:
    stmt = select(Campaign).order_by(Campaign.id.desc()).limit(1)
    if kind:
        stmt = stmt.where(Campaign.kind == kind)
    with scope.session(engine) as session:
        return session.scalars(stmt).first()


def set_campaign_state(
    engine: Engine,
    campaign_id: int,
    *,
    expected: Iterable[str],
    state: str,
    stop_reason: str | None = None,
    completion: Mapping[str, Any] | None = None,
    clock: Clock = utcnow,
) -> None:
    # The stop reason describes the current state only: resuming (running) or completing
    # clears an earlier interruption's reason.
    values: dict[str, Any] = {"state": state, "stop_reason": stop_reason}
    if completion is not None:
        values["completion_json"] = json.dumps(completion, sort_keys=True)
    if state == "running":
        values["started_at"] = clock()
    if state in ("stopped", "completed", "interrupted"):
        values["finished_at"] = clock()
    cas(engine, update(Campaign).where(Campaign.id == campaign_id, Campaign.state.in_(tuple(expected))).values(**values), f"campaign {campaign_id}")


def close_campaign(engine: Engine, campaign_id: int, stop_reason: str | None, *, state: str, mark_remaining: bool = True, clock: Clock = utcnow) -> None:
    """End a lane's run: trials a stop prevented become not_attempted(reason) (unless
    ``mark_remaining`` is False: a halted provider's trials stay scheduled for a resume),
    and the campaign records its state, stop reason and completion (never proof that all ran)."""
    if stop_reason is not None and mark_remaining:
        mark_remaining_not_attempted(engine, campaign_id, stop_reason, clock)
    trials = trials_in_order(engine, campaign_id)
    completion = {
        "scheduled": len(trials),
        "attempted": sum(t.status == "finished" for t in trials),
        "not_attempted": sum(t.status == "not_attempted" for t in trials),
        "all_scheduled_trials_ran": all(t.status == "finished" for t in trials),
    }
    set_campaign_state(
        engine, campaign_id, expected=("running", "interrupted", "stopped", "completed"), state=state, stop_reason=stop_reason, completion=completion, clock=clock
    )


def lineage(engine: Engine, campaign_id: int) -> list[int]:
    """The campaign and, newest first, every campaign it continues."""
    chain_ids = [campaign_id]
    with scope.session(engine) as session:
        while (before := session.scalar(select(Campaign.continues_campaign_id).where(Campaign.id == chain_ids[-1]))) is not None:
            if before in chain_ids:
                break  # a hand-made loop must not hang the gate
            chain_ids.append(before)
    return chain_ids


@dataclass(frozen=True)
class RunnerIdentity:
    pid: int
    start_ticks: int
    boot_id: str


def campaign_runner(engine: Engine, campaign_id: int) -> RunnerIdentity | None:
    row = get_campaign(engine, campaign_id)
    if row is None or row.runner_pid is None:
        return None
    return RunnerIdentity(row.runner_pid, row.runner_start_ticks, row.runner_boot_id)


def acquire_campaign(engine: Engine, campaign_id: int, me: RunnerIdentity, *, stale: RunnerIdentity | None) -> bool:
    """Take the campaign's runner lease: free, or held by ``stale`` (proven gone by the caller).

    A compare-and-set on the exact identity observed, so of two resumers that
    both saw the same dead runner, only one wins.
    """
    held = Campaign.runner_pid.is_(None) if stale is None else (
        (Campaign.runner_pid == stale.pid) & (Campaign.runner_start_ticks == stale.start_ticks) & (Campaign.runner_boot_id == stale.boot_id)
    )
    stmt = update(Campaign).where(Campaign.id == campaign_id, held).values(runner_pid=me.pid, runner_start_ticks=me.start_ticks, runner_boot_id=me.boot_id)
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount == 1


def release_campaign(engine: Engine, campaign_id: int, me: RunnerIdentity) -> None:
    stmt = (
        update(Campaign)
        .where(Campaign.id == campaign_id, Campaign.runner_pid == me.pid, Campaign.runner_start_ticks == me.start_ticks, Campaign.runner_boot_id == me.boot_id)
        .values(runner_pid=None, runner_start_ticks=None, runner_boot_id=None)
    )
    with scope.transaction(engine) as conn:
        conn.execute(stmt)


@dataclass(frozen=True)
class CampaignCounts:
    """One campaign as a list of campaigns shows it: its words as stored (a reader that
    shares them passes them through its vocabularies) and its trial counts."""

    id: int
    kind: str
    state: str
    stop_reason: str | None
    finished: int
    scheduled: int


def campaign_counts(engine: Engine, campaign_id: int | None = None) -> list[CampaignCounts]:
    """Every campaign (or one), oldest first, with finished/scheduled trial counts."""
    t = Trial.__table__.c
    grouped = select(t.campaign_id, func.count().label("scheduled"), func.coalesce(func.sum(case((t.status == "finished", 1), else_=0)), 0).label("finished"))
    if campaign_id is not None:  # one campaign's trials counted, not every campaign's (the view asks on every poll)
        grouped = grouped.where(t.campaign_id == campaign_id)
    counts = grouped.group_by(t.campaign_id).subquery()
    stmt = (
        select(Campaign.id, Campaign.kind, Campaign.state, Campaign.stop_reason, counts.c.finished, counts.c.scheduled)
        .outerjoin(counts, counts.c.campaign_id == Campaign.id)
        .order_by(Campaign.id)
    )
    if campaign_id is not None:
        stmt = stmt.where(Campaign.id == campaign_id)
    with scope.reading(engine) as conn:
        rows = conn.execute(stmt).all()
    return [CampaignCounts(int(cid), kind, state, reason, int(finished or 0), int(scheduled or 0)) for cid, kind, state, reason, finished, scheduled in rows]


def report_inputs(engine: Engine, campaign_id: int) -> tuple[Any, ...]:
    """A summary of everything a campaign's report is built from, for a reader that keeps
    a report until its inputs change (``campaign view``): equal summaries, same report.

    The campaign row (its runner lease aside), and for it and every campaign it continues:
    its trials' count, statuses and latest change, its chain head, and its running
    attempts in full (their counters change before they join the chain). Every change
    the engine makes moves one of these; an edit made outside the engine moves the
    chain head of a campaign that is not running (``chain.head``), and a running one's
    with its next attempt."""
    c, t, a = Campaign.__table__.c, Trial.__table__.c, Attempt.__table__.c
    own = [col for col in Campaign.__table__.columns if not col.name.startswith("runner_")]
    parts: list[Any] = []
    with scope.reading(engine) as conn:
        parts.append(tuple(conn.execute(select(*own).where(c.id == campaign_id)).one_or_none() or ()))
    for cid in lineage(engine, campaign_id):
        with scope.reading(engine) as conn:
            trials = conn.execute(select(t.status, func.count(), func.max(t.updated_at)).where(t.campaign_id == cid).group_by(t.status).order_by(t.status)).all()
            running = conn.execute(select(Attempt.__table__).where(a.campaign_id == cid, a.status == "running").order_by(a.id)).all()
        parts.append((cid, tuple(map(tuple, trials)), chain.head(engine, cid), tuple(map(tuple, running))))
    return tuple(parts)


def input_heads(inputs: tuple[Any, ...]) -> dict[int, tuple[Any, ...]]:
    """The chain head (``chain.head``) of each campaign a ``report_inputs`` summary covers."""
    return {part[0]: part[2] for part in inputs[1:]}
