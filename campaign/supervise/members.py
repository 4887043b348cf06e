"""The member registry: every process recorded as part of one attempt, and its ledger.

A member is spawned by the supervisor (behind the exec gate, its ledger row
committed before it may exec) or discovered (pinned with a pidfd, re-checked,
then recorded as role "descendant"). The registry keeps them in the order they
became ours, with what the kernel last said of each, and signals them only in
the two ways that cannot reach a stranger: through the member's pidfd, or
``killpg`` on a group whose leader is our unreaped child (see ``subreaper``).

At the end of teardown every ledger row is settled "gone" or "unverified": a
row the registry cannot prove gone is unverified, never assumed gone. A store
write that fails while processes are being stopped is logged and left to that
rule (``guarded``) instead of aborting teardown.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from campaign import testhooks
from campaign.errors import CampaignError, Interrupted
from campaign.store import repository
from campaign.store.repository import LedgerMember
from campaign.supervise import pidfd as pidfds
from campaign.supervise import subreaper
from campaign.supervise.procfs import DarwinProc, ProcFS
from campaign.supervise.teardown import CleanupLog

if TYPE_CHECKING:
    from campaign.store.models import LedgerEntry


class SupervisorError(CampaignError):
    """The supervisor cannot be used as asked (e.g. another one holds the root)."""


class Member:
    """One owned process: spawned by us or discovered."""

    def __init__(self, role: str, pid: int, start_ticks: int, pgid: int | None, *, spawned: bool, pidfd: int | None) -> None:
        self.role = role
        self.pid = pid
        self.start_ticks = start_ticks
        self.pgid = pgid
        self.spawned = spawned
        self.discovered = not spawned
        self.pidfd = pidfd
        self.ledger_id: int | None = None
        self.exit_code: int | None = None
        self.exited = False
        self.reaped = False

    def __repr__(self) -> str:
        return f"Member({self.role}, pid={self.pid}, exited={self.exited})"


@dataclass(frozen=True)
class Records:
    """The attempt's row and its ledger, as the supervisor writes them."""

    engine: Engine
    attempt_id: int
    clock: Callable[[], dt.datetime]

    def update_attempt(self, **fields: Any) -> None:
        attempt = repository.get_attempt(self.engine, self.attempt_id)
        if attempt is None:
            raise SupervisorError(f"attempt {self.attempt_id} does not exist")
        repository.update_attempt(self.engine, self.attempt_id, expected=attempt.status, **fields)

    def ledger(self) -> list[LedgerEntry] | None:
        """Every ledger row of the attempt; None when they cannot be read."""
        try:
            testhooks.reached("ledger-read")
            return repository.ledger_for(self.engine, self.attempt_id)
        except Interrupted:
            # The operator's stop, not an unreadable ledger: taken for one, it ended the
            # attempt as an engine error and the interrupt was lost (exit 3, not 130).
            raise
        except Exception:  # the evidence itself is unreadable: fail closed
            return None


def guarded(log: CleanupLog, action: Callable[[], object]) -> bool:
    """Run a store write that must not abort teardown; whether it succeeded."""
    try:
        action()
        return True
    except Interrupted:
        raise  # the operator's stop is never a failed write (teardown defers it anyway)
    except Exception as exc:  # recording must not abort teardown
        log(f"store write failed: {exc.__class__.__name__}")
        return False


def killpg(pgid: int | None, sig: int) -> None:
    """Signal a group whose leader is our unreaped child (callers check that)."""
    if pgid is None:
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Members:
    """The processes of one attempt. ``linux``: pidfds and /proc can be trusted (with
    the runner a subreaper); without them a member's exit is judged by its start time."""

    def __init__(self, records: Records, proc: ProcFS | DarwinProc, *, linux: bool) -> None:
        self.records = records
        self.proc = proc
        self.linux = linux
        self.all: list[Member] = []
        self.known: set[tuple[int, int]] = set()

    def __iter__(self) -> Iterator[Member]:
        return iter(self.all)

    def __len__(self) -> int:
        return len(self.all)

    def add(self, member: Member) -> Member:
        self.all.append(member)
        self.known.add((member.pid, member.start_ticks))
        return member

    def record(self, member: Member) -> None:
        """Write the member's ledger row (raises when the store refuses it)."""
        row = LedgerMember(
            role=member.role,
            pid=member.pid,
            start_ticks=member.start_ticks,
            boot_id=self.proc.boot_id(),
            pid_ns=self.proc.pid_ns(),
            pgid=member.pgid,
            discovered=member.discovered,
        )
        member.ledger_id = repository.record_ledger(self.records.engine, self.records.attempt_id, row, clock=self.records.clock)

    def find(self, pid: int, start_ticks: int) -> Member | None:
        return next((m for m in self.all if m.pid == pid and m.start_ticks == start_ticks), None)

    def is_spawned(self, pid: int) -> bool:
        return any(m.spawned and m.pid == pid and not m.reaped for m in self.all)

    def owned_groups(self) -> set[int]:
        """Group/session numbers held by an unreaped spawned leader: safe to follow."""
        return {m.pgid for m in self.all if m.spawned and not m.reaped and m.pgid is not None}

    # -- exits -----------------------------------------------------------------

    def exited(self, m: Member) -> bool:
        """Whether ``m`` has exited, asking the kernel if we do not know yet. A spawned
        member stays unreaped (see ``subreaper.peek_child``)."""
        if m.exited:
            return True
        if m.spawned:
            end = subreaper.peek_child(m.pid)
            if end is None:
                return False
            m.exited = True
            m.exit_code = end.code
            m.reaped = m.reaped or end.reaped
            return True
        if m.pidfd is not None and pidfds.has_exited(m.pidfd):
            m.exited = True
            return True
        if not self.linux:
            st = self.proc.stat(m.pid)
            if st is None or st.start_ticks != m.start_ticks:
                m.exited = True
        return m.exited

    def alive(self) -> list[Member]:
        """Members not yet proven exited (no discovery: see ``Discovery.live``)."""
        return [m for m in self.all if not self.exited(m)]

    def reap(self, pid: int) -> None:
        """Reap a re-parented zombie of ours that is no spawned member."""
        subreaper.reap(pid)
        for m in self.all:
            if m.pid == pid and not m.spawned:
                m.exited = True

    def reap_any(self, pid: int) -> None:
        """Reap an exited child of ours, a spawned member included (its exit code first)."""
        for m in self.all:
            if m.spawned and m.pid == pid and not m.reaped:
                self.exited(m)
                if not m.exited:
                    return
                subreaper.reap(pid)
                m.reaped = True
                return
        self.reap(pid)

    def reap_exited(self) -> None:
        """Reap our own exited children, once no group of theirs needs its number kept."""
        for m in self.all:
            if m.spawned and m.exited and not m.reaped:
                subreaper.reap(m.pid, block=True)
                m.reaped = True

    # -- signals ---------------------------------------------------------------

    def signal(self, m: Member, sig: int) -> None:
        if self.exited(m):
            return
        if m.pidfd is not None:
            pidfds.send_signal(m.pidfd, sig)
        elif m.spawned and not m.reaped:
            try:
                os.kill(m.pid, sig)  # our unreaped child: the pid cannot have been reused
            except ProcessLookupError:
                pass

    def signal_group(self, m: Member, sig: int) -> None:
        self.signal(m, sig)
        if m.spawned and not m.reaped:
            killpg(m.pgid, sig)

    # -- the ledger ------------------------------------------------------------

    def verify_ledger(self) -> None:
        """Check, from the store, that every member's ledger row is there and unaltered."""
        rows = self.records.ledger()
        if rows is None:
            raise SupervisorError("the process ledger is unreadable; refusing to continue before any paid call")
        by_id = {r.id: r for r in rows}
        for m in self.all:
            row = by_id.get(m.ledger_id)
            if row is None or (row.pid, row.start_ticks, row.boot_id) != (m.pid, m.start_ticks, self.proc.boot_id()):
                raise SupervisorError(f"the ledger row for {m.role} pid {m.pid} is missing or altered; refusing to continue")

    def unrecorded(self, rows: list[LedgerEntry]) -> bool:
        """Whether a member has no row among ``rows`` (its write failed)."""
        ids = {r.id for r in rows}
        return any(m.ledger_id not in ids for m in self.all)

    def settle(self, rows: list[LedgerEntry], log: CleanupLog) -> int:
        """Record each row "gone" or "unverified"; how many are unverified. A row with no
        member here is checked by its birth identity (pid, start ticks, boot id)."""
        mine = {m.ledger_id: m for m in self.all}
        unverified = 0
        for row in rows:
            m = mine.get(row.id)
            if m is not None and m.exited:
                state, how = "gone", (row.verification if row.verification == "recovery_killed" else "exited")
            elif m is not None:
                state, how = "unverified", "alive"
            else:
                probe = pidfds.verify(self.proc, row.pid, row.start_ticks, row.boot_id, row.pid_ns)
                probe.close()
                state = "gone" if probe.status == pidfds.GONE else "unverified"
                how = probe.reason
            if state != "gone":
                unverified += 1
                log(f"unverified: {row.role} pid {row.pid} ({how})")
            records = self.records
            guarded(log, lambda r=row, s=state, h=how: repository.set_ledger_verdict(records.engine, r.id, state=s, verification=h, clock=records.clock))
        return unverified

    def release(self) -> None:
        """Close every pidfd; the members' records stay."""
        for m in self.all:
            if m.pidfd is not None:
                os.close(m.pidfd)
                m.pidfd = None
