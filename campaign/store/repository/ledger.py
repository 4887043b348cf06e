"""Ledger rows: each owned process's birth-bound identity, committed before it may run."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select, update

from campaign.store import scope
from campaign.store.models import LedgerEntry
from campaign.store.repository.common import Clock, utcnow


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
    with scope.session(engine, write=True) as session:
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
    with scope.session(engine) as session:
        return list(session.scalars(stmt))


def set_ledger_verdict(engine: Engine, ledger_id: int, *, state: str, verification: str, clock: Clock = utcnow) -> None:
    stmt = update(LedgerEntry).where(LedgerEntry.id == ledger_id).values(state=state, verification=verification, verified_at=clock())
    with scope.transaction(engine) as conn:
        conn.execute(stmt)
