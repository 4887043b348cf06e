"""Workers: provider leases, database-clock heartbeats, and admission under spend reservations.

A provider's trials run one at a time, in schedule order, by whichever worker
holds that provider's lease; different providers run in parallel on different
workers, on one machine or several sharing a store. The store is the only
coordinator: a lease is taken with ``SELECT ... FOR UPDATE SKIP LOCKED`` on
PostgreSQL and a compare-and-set on SQLite (whose writers are serialized by
``BEGIN IMMEDIATE``), and heartbeats are stamped with the database's clock so
that machines whose clocks disagree still agree on which lease went stale.

Admission re-checks the lease and reserves the per-attempt ceiling against the
caps in the same transaction, so racing workers can never hold more ceilings
than a cap allows; finalization releases the reservation.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, and_, delete, func, insert, literal_column, or_, select, update

from campaign.store import money, scope
from campaign.store.limits import SpendLimits
from campaign.store.models import Attempt, Campaign, ProviderLease, SpendReservation, Trial
from campaign.store.repository import REQUEUED, Clock, counted_usd, utcnow

leases = ProviderLease.__table__


@dataclass(frozen=True)
class WorkerIdentity:
    """A worker by birth-bound identity, plus the host recovery must run on."""

    host: str
    pid: int
    start_ticks: int
    boot_id: str

    @classmethod
    def of(cls, runner) -> WorkerIdentity:
        return cls(socket.gethostname()[:128], runner.pid, runner.start_ticks, runner.boot_id)

    def holds(self) -> list:
        return [
            ProviderLease.worker_pid == self.pid,
            ProviderLease.worker_start_ticks == self.start_ticks,
            ProviderLease.worker_boot_id == self.boot_id,
            ProviderLease.worker_host == self.host,
        ]


@dataclass(frozen=True)
class Lease:
    provider: str
    holder: WorkerIdentity | None
    heartbeat_epoch: float | None
    halted_reason: str | None
    halted_attempt_id: int | None
    halted_note: str | None = None


# The breaker's halt: the provider's upstream failed, nothing of the attempts' is unproven.
UNAVAILABLE = "provider_unavailable"


def db_epoch(conn: Connection):
    """The database's own clock in seconds since the epoch (fractional)."""
    if conn.dialect.name == "sqlite":
        return literal_column("((julianday('now') - 2440587.5) * 86400.0)")
    return func.extract("epoch", func.clock_timestamp())


def ensure_leases(engine: Engine, campaign_id: int, providers: Iterable[str]) -> None:
    """One lease row per provider of the campaign (idempotent)."""
    with scope.transaction(engine) as conn:
        have = set(conn.execute(select(ProviderLease.provider).where(ProviderLease.campaign_id == campaign_id)).scalars())
        missing = [p for p in providers if p not in have]
        if missing:
            conn.execute(insert(leases), [{"campaign_id": campaign_id, "provider": p} for p in missing])


def all_leases(engine: Engine, campaign_id: int) -> list[Lease]:
    with scope.reading(engine) as conn:
        rows = conn.execute(select(leases).where(leases.c.campaign_id == campaign_id).order_by(leases.c.provider)).mappings()
        return [_lease_row(r) for r in rows]


def _lease_row(r) -> Lease:
    holder = WorkerIdentity(r["worker_host"], r["worker_pid"], r["worker_start_ticks"], r["worker_boot_id"]) if r["worker_pid"] is not None else None
    return Lease(r["provider"], holder, r["heartbeat_epoch"], r["halted_reason"], r["halted_attempt_id"], r["halted_note"])


def _has_work():
    return (
        select(Trial.id)
        .where(Trial.campaign_id == ProviderLease.campaign_id, Trial.provider == ProviderLease.provider, Trial.status == "scheduled")
        .exists()
    )


def claim_provider(engine: Engine, campaign_id: int, me: WorkerIdentity, providers: Sequence[str] | None = None) -> str | None:
    """Take the lease of a provider that is free, not halted and has scheduled trials."""
    with scope.transaction(engine) as conn:
        wanted = [
            ProviderLease.campaign_id == campaign_id,
            ProviderLease.worker_pid.is_(None),
            ProviderLease.halted_reason.is_(None),
            _has_work(),
        ]
        if providers:
            wanted.append(ProviderLease.provider.in_(tuple(providers)))
        pick = select(ProviderLease.id, ProviderLease.provider).where(*wanted).order_by(ProviderLease.provider).limit(1)
        if conn.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        row = conn.execute(pick).first()
        if row is None:
            return None
        taken = conn.execute(
            update(ProviderLease)
            .where(ProviderLease.id == row.id, ProviderLease.worker_pid.is_(None), ProviderLease.halted_reason.is_(None))
            .values(worker_host=me.host, worker_pid=me.pid, worker_start_ticks=me.start_ticks, worker_boot_id=me.boot_id, heartbeat_epoch=db_epoch(conn))
        ).rowcount
        return row.provider if taken == 1 else None


def claim_all(engine: Engine, campaign_id: int, me: WorkerIdentity) -> list[str]:
    """Every free lease of the campaign, for a runner that drives all providers itself.
    Returns the providers whose lease another live holder has (empty: all are ours)."""
    with scope.transaction(engine) as conn:
        conn.execute(
            update(ProviderLease)
            .where(ProviderLease.campaign_id == campaign_id, ProviderLease.worker_pid.is_(None))
            .values(worker_host=me.host, worker_pid=me.pid, worker_start_ticks=me.start_ticks, worker_boot_id=me.boot_id, heartbeat_epoch=db_epoch(conn))
        )
        others = conn.execute(select(ProviderLease.provider).where(ProviderLease.campaign_id == campaign_id, ~and_(*me.holds()))).scalars()
        return sorted(others)


def heartbeat(engine: Engine, campaign_id: int, me: WorkerIdentity, provider: str | None = None) -> bool:
    """Stamp the database clock on the leases ``me`` holds; False when one was lost (halted or taken)."""
    with scope.transaction(engine) as conn:
        where = [ProviderLease.campaign_id == campaign_id, *me.holds()]
        if provider is not None:
            where.append(ProviderLease.provider == provider)
        touched = conn.execute(update(ProviderLease).where(*where, ProviderLease.halted_reason.is_(None)).values(heartbeat_epoch=db_epoch(conn))).rowcount
    return touched >= 1


def holds(engine: Engine, campaign_id: int, provider: str, me: WorkerIdentity) -> bool:
    with scope.reading(engine) as conn:
        stmt = select(ProviderLease.id).where(ProviderLease.campaign_id == campaign_id, ProviderLease.provider == provider, ProviderLease.halted_reason.is_(None), *me.holds())
        return conn.execute(stmt).first() is not None


def release(engine: Engine, campaign_id: int, me: WorkerIdentity, provider: str | None = None) -> None:
    """Give back the leases ``me`` holds (a halted lease keeps its holder: it names the host)."""
    where = [ProviderLease.campaign_id == campaign_id, ProviderLease.halted_reason.is_(None), *me.holds()]
    if provider is not None:
        where.append(ProviderLease.provider == provider)
    with scope.transaction(engine) as conn:
        conn.execute(
            update(ProviderLease).where(*where).values(worker_host=None, worker_pid=None, worker_start_ticks=None, worker_boot_id=None, heartbeat_epoch=None)
        )


def stale(engine: Engine, campaign_id: int, after_seconds: float) -> list[Lease]:
    """Held, not halted, and not heartbeaten for ``after_seconds`` by the database's clock."""
    with scope.reading(engine) as conn:
        stmt = select(leases).where(
            leases.c.campaign_id == campaign_id,
            leases.c.worker_pid.is_not(None),
            leases.c.halted_reason.is_(None),
            or_(leases.c.heartbeat_epoch.is_(None), leases.c.heartbeat_epoch < db_epoch(conn) - after_seconds),
        )
        return [_lease_row(r) for r in conn.execute(stmt).mappings()]


def lost(engine: Engine, campaign_id: int, after_seconds: float, *, dead: Callable[[WorkerIdentity], bool]) -> list[Lease]:
    """Leases of lost holders: stale (see ``stale``), or held by a holder ``dead`` proves
    gone (its process ended on this machine: released at once, without waiting)."""
    found = {lease.provider: lease for lease in stale(engine, campaign_id, after_seconds)}
    for lease in all_leases(engine, campaign_id):
        if lease.provider not in found and lease.holder is not None and lease.halted_reason is None and dead(lease.holder):
            found[lease.provider] = lease
    return [found[p] for p in sorted(found)]


def halt_lost(engine: Engine, campaign_id: int, lease: Lease, reason: str = "worker_lost", clock: Clock = utcnow) -> int | None:
    """A lost worker's lease: with an attempt of its provider running, halt the provider and
    mark that attempt's cleanup unverified (recovery on the worker's host may prove it
    later); with none, only free the lease and requeue what it admitted but never ran.
    A compare-and-set on the exact stale identity. Returns the halted attempt's id."""
    holder = lease.holder
    if holder is None:
        return None
    with scope.transaction(engine) as conn:
        running = conn.execute(
            select(Attempt.id)
            .join(Trial, Trial.id == Attempt.trial_pk)
            .where(Attempt.campaign_id == campaign_id, Trial.provider == lease.provider, Attempt.status == "running")
            .order_by(Attempt.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        same = [ProviderLease.campaign_id == campaign_id, ProviderLease.provider == lease.provider, ProviderLease.halted_reason.is_(None), *holder.holds()]
        if running is None:
            conn.execute(update(ProviderLease).where(*same).values(worker_host=None, worker_pid=None, worker_start_ticks=None, worker_boot_id=None, heartbeat_epoch=None))
            _requeue_admitted(conn, campaign_id, lease.provider, clock)
            return None
        moved = conn.execute(update(ProviderLease).where(*same).values(halted_reason=reason, halted_attempt_id=running)).rowcount
        if moved == 1:
            conn.execute(
                update(Attempt).where(Attempt.id == running, Attempt.status == "running").values(cleanup_complete=False, teardown_outcome="unverified")
            )
        return running if moved == 1 else None


def _requeue_admitted(conn: Connection, campaign_id: int, provider: str, clock: Clock) -> None:
    live = select(Attempt.id).where(Attempt.trial_pk == Trial.id, Attempt.status.not_in(REQUEUED)).exists()
    requeued = select(Trial.id).where(Trial.campaign_id == campaign_id, Trial.provider == provider, Trial.status == "admitted", ~live)
    conn.execute(delete(SpendReservation).where(SpendReservation.trial_pk.in_(requeued)))
    conn.execute(update(Trial).where(Trial.id.in_(requeued)).values(status="scheduled", updated_at=clock()))


@dataclass(frozen=True)
class Outlook:
    """What is left of a campaign, read in one statement so that its parts agree: two
    reads could see a trial go back to scheduled after its lease was already counted free."""

    state: str
    stop_reason: str | None
    left: int  # trials still scheduled
    claimable: int  # ... of them on a provider whose lease is free and not halted
    held: int  # leases a worker holds (not halted): work in flight, which may come back scheduled

    @property
    def settled(self) -> bool:
        """Nothing in flight and nothing a worker could take: only a halt or a stop leaves work."""
        return self.held == 0 and self.claimable == 0


def outlook(engine: Engine, campaign_id: int, providers: Sequence[str] | None = None) -> Outlook:
    """The campaign's outlook, limited to ``providers`` when given.

    A worker admits and runs attempts only under its lease and releases it after
    the attempt's row is final, and a lost holder's lease is halted or freed with
    its admissions requeued (``halt_lost``), so ``held == 0`` means no attempt is in flight."""
    scheduled = [Trial.campaign_id == campaign_id, Trial.status == "scheduled"]
    own = [ProviderLease.campaign_id == campaign_id, ProviderLease.halted_reason.is_(None)]
    if providers:
        scheduled.append(Trial.provider.in_(tuple(providers)))
        own.append(ProviderLease.provider.in_(tuple(providers)))
    free = (
        select(ProviderLease.id)
        .where(ProviderLease.campaign_id == Trial.campaign_id, ProviderLease.provider == Trial.provider, ProviderLease.halted_reason.is_(None), ProviderLease.worker_pid.is_(None))
        .exists()
    )
    stmt = select(
        Campaign.state,
        Campaign.stop_reason,
        select(func.count(Trial.id)).where(*scheduled).scalar_subquery(),
        select(func.count(Trial.id)).where(*scheduled, free).scalar_subquery(),
        select(func.count(ProviderLease.id)).where(*own, ProviderLease.worker_pid.is_not(None)).scalar_subquery(),
    ).where(Campaign.id == campaign_id)
    with scope.reading(engine) as conn:
        state, reason, left, claimable, held = conn.execute(stmt).one()
    return Outlook(state, reason, int(left), int(claimable), int(held))



def halted(engine: Engine, campaign_id: int, reason: str | None = None) -> list[Lease]:
    """Halted leases; with ``reason``, only those halted for it."""
    return [lease for lease in all_leases(engine, campaign_id) if lease.halted_reason is not None and reason in (None, lease.halted_reason)]


def halt_unavailable(engine: Engine, campaign_id: int, provider: str, note: str) -> bool:
    """The breaker halts a provider for every worker: freed, and claimed by none until a
    resume reopens it. False when it was already halted (for this or another reason)."""
    stmt = (
        update(ProviderLease)
        .where(ProviderLease.campaign_id == campaign_id, ProviderLease.provider == provider, ProviderLease.halted_reason.is_(None))
        .values(halted_reason=UNAVAILABLE, halted_note=note[:1000], worker_host=None, worker_pid=None, worker_start_ticks=None, worker_boot_id=None, heartbeat_epoch=None)
    )
    with scope.transaction(engine) as conn:
        return conn.execute(stmt).rowcount == 1


def reopen_unavailable(engine: Engine, campaign_id: int) -> list[str]:
    """Clear the breaker's halts (a resume tries the providers again); the providers reopened."""
    where = [ProviderLease.campaign_id == campaign_id, ProviderLease.halted_reason == UNAVAILABLE]
    with scope.transaction(engine) as conn:
        names = list(conn.execute(select(ProviderLease.provider).where(*where)).scalars())
        conn.execute(update(ProviderLease).where(*where).values(halted_reason=None, halted_note=None))
    return names


# --- admission under caps ---------------------------------------------------------------


def _spent_and_reserved(conn: Connection, campaign_ids: Sequence[int], provider: str | None) -> int:
    """Exact nano-dollars: counted spend of the lineage's attempts plus open reservations."""
    spent = select(func.coalesce(money.sum_usd(counted_usd()), 0)).join(Trial, Trial.id == Attempt.trial_pk).where(Attempt.campaign_id.in_(campaign_ids))
    held = select(func.coalesce(func.sum(SpendReservation.nano_usd), 0)).where(SpendReservation.campaign_id.in_(campaign_ids))
    if provider is not None:
        spent = spent.where(Trial.provider == provider)
        held = held.where(SpendReservation.provider == provider)
    return int(conn.execute(spent).scalar_one()) + int(conn.execute(held).scalar_one())


def _unbounded(conn: Connection, campaign_ids: Sequence[int]) -> bool:
    """Some ended attempt of the lineage, of any provider, has a spend nothing bounds (no
    complete cost, no list-price equivalent): a sum would count it as 0, so a cap over
    every provider cannot be held. A running attempt is bounded by its reservation."""
    stmt = select(Attempt.id).where(Attempt.campaign_id.in_(campaign_ids), Attempt.status != "running", counted_usd().is_(None)).limit(1)
    return conn.execute(stmt).first() is not None


def admit(
    engine: Engine,
    trial: Trial,
    *,
    me: WorkerIdentity | None,
    caps: SpendLimits | None,
    lineage: Sequence[int],
    clock: Clock = utcnow,
) -> str | None:
    """scheduled -> admitted, atomically with the lease check and the ceiling's reservation.

    ``caps`` are the run's spend limits: the attempt's ceiling is reserved, and must
    fit each cap with the spend and the reservations so far. Returns None when
    admitted, else why not: "lease_lost", "taken" (another worker admitted it),
    "stopped" (the campaign stopped), "spend_limit", "spend_incomplete" (a cap over every
    provider, and some attempt's spend, of any provider, is unknown)."""
    with scope.transaction(engine) as conn:
        if conn.dialect.name == "postgresql":
            # Admissions of one campaign queue on its row, so the sums below cannot race.
            conn.execute(select(Campaign.id).where(Campaign.id == trial.campaign_id).with_for_update())
        state = conn.execute(select(Campaign.state).where(Campaign.id == trial.campaign_id)).scalar_one()
        if state != "running":
            return "stopped"
        if me is not None:
            held = conn.execute(
                select(ProviderLease.id).where(
                    ProviderLease.campaign_id == trial.campaign_id, ProviderLease.provider == trial.provider, ProviderLease.halted_reason.is_(None), *me.holds()
                )
            ).first()
            if held is None:
                return "lease_lost"
        if caps is not None:
            if caps.max_spend_usd is not None and _unbounded(conn, lineage):
                return "spend_incomplete"
            ceiling = int(caps.per_attempt_ceiling_usd * money.NANO_PER_USD)
            for cap, provider in ((caps.provider_max_spend_usd, trial.provider), (caps.max_spend_usd, None)):
                if cap is not None and _spent_and_reserved(conn, lineage, provider) + ceiling > int(cap * money.NANO_PER_USD):
                    return "spend_limit"
        moved = conn.execute(
            update(Trial).where(Trial.id == trial.id, Trial.status == "scheduled").values(status="admitted", updated_at=clock())
        ).rowcount
        if moved != 1:
            return "taken"
        if caps is not None:
            conn.execute(
                insert(SpendReservation).values(
                    campaign_id=trial.campaign_id, trial_pk=trial.id, provider=trial.provider, nano_usd=int(caps.per_attempt_ceiling_usd * money.NANO_PER_USD), created_at=clock()
                )
            )
    return None


def now_epoch(engine: Engine) -> float:
    with scope.reading(engine) as conn:
        return float(conn.execute(select(db_epoch(conn))).scalar_one())


__all__ = [
    "Lease", "Outlook", "WorkerIdentity", "admit", "claim_all", "claim_provider", "ensure_leases", "halt_lost", "halt_unavailable",
    "halted", "heartbeat", "lost", "outlook", "release", "reopen_unavailable", "stale",
]  # fmt: skip
