"""Every query the engine makes. State changes are compare-and-set updates.

Functions take an Engine and open their own short transaction, so each state
change is durable the moment the function returns (ledger rows above all: a
process may exec only after its row is committed).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, case, delete, func, select, update
from sqlalchemy.orm import Session

from campaign.errors import ConflictError
from campaign.schedule import ScheduledTrial
from campaign.store import chain, money
from campaign.store.models import Attempt, Campaign, LedgerEntry, SpendReservation, Trial

Clock = Callable[[], dt.datetime]
# Attempt statuses without a verdict: the trial goes back to the queue.
REQUEUED = ("interrupted", "faulted")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass(frozen=True)
class NewCampaign:
    kind: str
    state: str
    live: bool
    agent: str
    seed: int
    experiment: Mapping[str, Any]
    experiment_digest: str
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
    clock: Clock = utcnow,
) -> int:
    """Insert the campaign and its whole schedule in one transaction."""
    now = clock()
    with Session(engine) as session, session.begin():
        row = Campaign(
            kind=new.kind,
            state=new.state,
            live=new.live,
            agent=new.agent,
            seed=new.seed,
            experiment_json=json.dumps(new.experiment, sort_keys=True),
            experiment_digest=new.experiment_digest,
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
                model=model,
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
    with Session(engine, expire_on_commit=False) as session:
        return session.get(Campaign, campaign_id)


def latest_campaign(engine: Engine, kind: str | None = None) -> Campaign | None:
    stmt = select(Campaign).order_by(Campaign.id.desc()).limit(1)
    if kind:
        stmt = stmt.where(Campaign.kind == kind)
    with Session(engine, expire_on_commit=False) as session:
        return session.scalars(stmt).first()


def trials_in_order(engine: Engine, campaign_id: int) -> list[Trial]:
    stmt = select(Trial).where(Trial.campaign_id == campaign_id).order_by(Trial.position)
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(stmt))


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
    _cas(engine, update(Campaign).where(Campaign.id == campaign_id, Campaign.state.in_(tuple(expected))).values(**values), f"campaign {campaign_id}")


def admit_trial(engine: Engine, trial_pk: int, clock: Clock = utcnow) -> bool:
    """scheduled -> admitted; False when another runner admitted it first."""
    stmt = update(Trial).where(Trial.id == trial_pk, Trial.status == "scheduled").values(status="admitted", updated_at=clock())
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def mark_not_attempted(engine: Engine, trial_pk: int, reason: str, clock: Clock = utcnow) -> bool:
    stmt = (
        update(Trial)
        .where(Trial.id == trial_pk, Trial.status == "scheduled")
        .values(status="not_attempted", not_attempted_reason=reason, updated_at=clock())
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def _lock_campaign(executor: Session | Any, campaign_id: int) -> None:
    """Serialize this campaign's attempt numbering on PostgreSQL (SQLite's BEGIN IMMEDIATE
    already serializes every writer): workers start and finish attempts concurrently."""
    bind = executor.get_bind() if isinstance(executor, Session) else executor
    if bind.dialect.name == "postgresql":
        executor.execute(select(Campaign.id).where(Campaign.id == campaign_id).with_for_update())


def start_attempt(engine: Engine, trial: Trial, clock: Clock = utcnow, **fields: Any) -> int:
    """The attempt row exists (status running) before any process is spawned for it.

    A running row holds a provisional negative ``seq``; finishing it gives it the
    next place in the campaign's hash chain. The chain is thereby in the order
    attempts were sealed, so attempts of different providers running in parallel
    never leave a running row in the middle of it."""
    with Session(engine) as session, session.begin():
        _lock_campaign(session, trial.campaign_id)
        lowest = session.scalar(select(func.min(Attempt.seq)).where(Attempt.campaign_id == trial.campaign_id))
        seq = min(lowest or 0, 0) - 1
        row = Attempt(campaign_id=trial.campaign_id, trial_pk=trial.id, seq=seq, status="running", started_at=clock(), **fields)
        session.add(row)
        session.flush()
        return row.id


def update_attempt(engine: Engine, attempt_id: int, *, expected: str = "running", **fields: Any) -> None:
    """Record observed facts on a running attempt (counters as soon as they are seen)."""
    _cas(engine, update(Attempt).where(Attempt.id == attempt_id, Attempt.status == expected).values(**fields), f"attempt {attempt_id}")


def finish_attempt(engine: Engine, attempt_id: int, trial_pk: int, *, status: str = "finished", clock: Clock = utcnow, **fields: Any) -> None:
    """running -> finished|interrupted|faulted and the row sealed into the campaign's hash
    chain, atomically. A finished attempt finishes its trial; an interrupted or faulted
    one carries no verdict, so its trial goes back to the queue and gets a fresh attempt
    (the row keeps its spend and teardown outcome)."""
    trial_status = "scheduled" if status in REQUEUED else "finished"
    with engine.begin() as conn:
        campaign_id = conn.execute(select(Attempt.campaign_id).where(Attempt.id == attempt_id)).scalar_one_or_none()
        if campaign_id is not None:
            _lock_campaign(conn, campaign_id)
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
    with Session(engine, expire_on_commit=False) as session:
        return session.get(Attempt, attempt_id)


def attempts_for(engine: Engine, campaign_id: int) -> list[Attempt]:
    stmt = select(Attempt).where(Attempt.campaign_id == campaign_id).order_by(Attempt.seq)
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(stmt))


@dataclass(frozen=True)
class LedgerMember:
    """The birth-bound identity of one owned process."""

    role: str
    pid: int
    start_ticks: int
    boot_id: str
    pid_ns: str | None
    pgid: int | None
    discovered: bool = False


def record_ledger(engine: Engine, attempt_id: int, member: LedgerMember, clock: Clock = utcnow) -> int:
    """Commit one ownership proof; the caller opens the exec gate only after this returns."""
    with Session(engine) as session, session.begin():
        row = LedgerEntry(
            attempt_id=attempt_id,
            role=member.role,
            pid=member.pid,
            start_ticks=member.start_ticks,
            boot_id=member.boot_id,
            pid_ns=member.pid_ns,
            pgid=member.pgid,
            discovered=member.discovered,
            created_at=clock(),
            state="owned",
        )
        session.add(row)
        session.flush()
        return row.id


def ledger_for(engine: Engine, attempt_id: int) -> list[LedgerEntry]:
    stmt = select(LedgerEntry).where(LedgerEntry.attempt_id == attempt_id).order_by(LedgerEntry.id)
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(stmt))


def set_ledger_verdict(engine: Engine, ledger_id: int, *, state: str, verification: str, clock: Clock = utcnow) -> None:
    stmt = update(LedgerEntry).where(LedgerEntry.id == ledger_id).values(state=state, verification=verification, verified_at=clock())
    with engine.begin() as conn:
        conn.execute(stmt)


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
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(stmt.order_by(Attempt.id)))


def _cas(engine: Engine, stmt, what: str) -> None:
    with engine.begin() as conn:
        if conn.execute(stmt).rowcount != 1:
            raise ConflictError(f"{what} was not in the expected state; another runner changed it")


def measured_spend(engine: Engine, campaign_id: int, provider: str | None = None) -> Decimal:
    """Exact sum of the costs attempts reported (a partial sum when some are unknown),
    interrupted attempts included, over the campaign and every campaign it continues."""
    stmt = select(money.sum_usd(Attempt.cost_usd)).where(Attempt.campaign_id.in_(lineage(engine, campaign_id)))
    if provider is not None:
        stmt = stmt.join(Trial, Trial.id == Attempt.trial_pk).where(Trial.provider == provider)
    with engine.connect() as conn:
        return money.usd(conn.execute(stmt).scalar_one()) or Decimal(0)


def measured_spend_parts(engine: Engine, campaign_id: int) -> tuple[Decimal | None, int]:
    """(exact sum of the reported costs or None when no attempt reported one, attempts
    whose cost is unknown): a display never shows an unknown cost as 0."""
    stmt = select(money.sum_usd(Attempt.cost_usd), func.count(Attempt.id) - func.count(Attempt.cost_usd)).where(Attempt.campaign_id == campaign_id)
    with engine.connect() as conn:
        total, unknown = conn.execute(stmt).one()
    return money.usd(total), int(unknown)


def lineage(engine: Engine, campaign_id: int) -> list[int]:
    """The campaign and, newest first, every campaign it continues."""
    chain_ids = [campaign_id]
    with Session(engine) as session:
        while (before := session.scalar(select(Campaign.continues_campaign_id).where(Campaign.id == chain_ids[-1]))) is not None:
            if before in chain_ids:
                break  # a hand-made loop must not hang the gate
            chain_ids.append(before)
    return chain_ids


def fault_attempts(engine: Engine, campaign_ids: Sequence[int], trial_id: str) -> int:
    """How many attempts of a trial (by its stable id, over a continuation's lineage) the
    provider ended: the per-trial bound on fresh attempts reads this."""
    stmt = (
        select(func.count())
        .select_from(Attempt)
        .join(Trial, Trial.id == Attempt.trial_pk)
        .where(Attempt.campaign_id.in_(tuple(campaign_ids)), Trial.trial_id == trial_id, Attempt.outcome == "provider_error")
    )
    with engine.connect() as conn:
        return int(conn.execute(stmt).scalar_one())


def attempt_count(engine: Engine, campaign_id: int) -> int:
    stmt = select(func.count()).select_from(Attempt).where(Attempt.campaign_id == campaign_id)
    with engine.connect() as conn:
        return int(conn.execute(stmt).scalar_one())


def _has_live_attempt() -> Any:
    """The trial has an attempt that is running or finished (interrupted and faulted ones
    do not count: their trial went back to the queue)."""
    return select(Attempt.id).where(Attempt.trial_pk == Trial.id, Attempt.status.not_in(REQUEUED)).exists()


def mark_remaining_not_attempted(engine: Engine, campaign_id: int, reason: str, clock: Clock = utcnow) -> int:
    """Every trial of the campaign that never got an attempt row -> not_attempted(reason).

    That includes a trial admitted just before a stop or an interruption landed,
    which no process ever ran for; one statement, so the set cannot shift under us.
    """
    never_ran = (Trial.status == "scheduled") | ((Trial.status == "admitted") & ~_has_live_attempt())
    stmt = (
        update(Trial)
        .where(Trial.campaign_id == campaign_id, never_ran)
        .values(status="not_attempted", not_attempted_reason=reason, updated_at=clock())
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount


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
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def release_campaign(engine: Engine, campaign_id: int, me: RunnerIdentity) -> None:
    stmt = (
        update(Campaign)
        .where(Campaign.id == campaign_id, Campaign.runner_pid == me.pid, Campaign.runner_start_ticks == me.start_ticks, Campaign.runner_boot_id == me.boot_id)
        .values(runner_pid=None, runner_start_ticks=None, runner_boot_id=None)
    )
    with engine.begin() as conn:
        conn.execute(stmt)


def reopen_trials(engine: Engine, campaign_id: int, reasons: Iterable[str], clock: Clock = utcnow) -> int:
    """not_attempted for one of ``reasons`` -> scheduled: a resume tries them again, under
    the same gates (a cap still reached stops them again, with the same reason)."""
    stmt = (
        update(Trial)
        .where(Trial.campaign_id == campaign_id, Trial.status == "not_attempted", Trial.not_attempted_reason.in_(tuple(reasons)))
        .values(status="scheduled", not_attempted_reason=None, updated_at=clock())
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount


def reset_admitted_without_attempt(engine: Engine, campaign_id: int, clock: Clock = utcnow) -> int:
    """admitted -> scheduled for trials whose runner died before their attempt row existed.

    Nothing was spawned for such a trial (processes start only after the attempt
    row and its ledger rows are committed), so running it later repeats nothing.
    """
    stmt = (
        update(Trial)
        .where(Trial.campaign_id == campaign_id, Trial.status == "admitted", ~_has_live_attempt())
        .values(status="scheduled", updated_at=clock())
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount


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


# --- continuing a blocked campaign ---------------------------------------------------


def _result_attempt_ok() -> Any:
    """The trial's own finished attempt ran to a verified end: a result worth carrying."""
    return select(Attempt.id).where(
        Attempt.trial_pk == func.coalesce(Trial.carried_from_trial_pk, Trial.id),
        Attempt.status == "finished",
        Attempt.cleanup_complete.is_(True),
        Attempt.disposal_complete.is_not(False),
        Attempt.finalization_failed.is_not(True),
    ).exists()


def carryable_trials(engine: Engine, campaign_id: int) -> dict[str, int]:
    """trial_id -> the trial row holding its result, for every finished trial of the
    campaign whose attempt ended verified (a carried trial points at its origin)."""
    stmt = select(Trial.trial_id, func.coalesce(Trial.carried_from_trial_pk, Trial.id)).where(
        Trial.campaign_id == campaign_id, Trial.status == "finished", _result_attempt_ok()
    )
    with engine.connect() as conn:
        return {trial_id: origin for trial_id, origin in conn.execute(stmt)}


def create_continuation(engine: Engine, blocked_id: int, carried: Mapping[str, int], clock: Clock = utcnow) -> int:
    """A new campaign for the same experiment and schedule that continues ``blocked_id``.

    Carried trials are born finished and point at the row holding their result;
    the rest are scheduled. Nothing of the blocked campaign is edited."""
    now = clock()
    with Session(engine) as session, session.begin():
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
    with engine.connect() as conn:
        total, n_measured, n_equivalent, n_unknown = conn.execute(stmt).one()
    return ProviderSpend(money.usd(total) or Decimal(0), int(n_measured), int(n_equivalent), int(n_unknown))


def carried_results(engine: Engine, campaign_id: int) -> list[tuple[Trial, Attempt]]:
    """A continuation's carried trials with the finished attempt each points at."""
    stmt = (
        select(Trial, Attempt)
        .join(Attempt, Attempt.trial_pk == Trial.carried_from_trial_pk)
        .where(Trial.campaign_id == campaign_id, Attempt.status == "finished")
        .order_by(Trial.position)
    )
    with Session(engine, expire_on_commit=False) as session:
        return [(t, a) for t, a in session.execute(stmt)]


def record_spend_limits(engine: Engine, campaign_id: int, caps: Any, *, scope: str | None = None) -> None:
    """The caps this run is held to, as exact decimal text: ``SpendLimits`` (the paired
    lane's campaign-wide maximum) or a campaign's ``Caps`` (per provider and/or total)."""
    if hasattr(caps, "ceiling_usd"):
        limits = {"per_attempt_ceiling_usd": str(caps.ceiling_usd)}
        if caps.provider_max_usd is not None:
            limits["provider_max_spend_usd"] = str(caps.provider_max_usd)
        if caps.campaign_max_usd is not None:
            limits["max_spend_usd"] = str(caps.campaign_max_usd)
    else:
        limits = {"max_spend_usd": str(caps.max_spend_usd), "per_attempt_ceiling_usd": str(caps.per_attempt_ceiling_usd)}
    with engine.begin() as conn:
        conn.execute(update(Campaign).where(Campaign.id == campaign_id).values(spend_limits_json=json.dumps(limits, sort_keys=True)))
