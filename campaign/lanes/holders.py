"""Who holds a campaign or a provider's lease, and whether that holder is provably dead.

A holder is named by the ledger's birth-bound identity: pid, start ticks and
boot id (plus, for a provider's lease, the host). On the machine and boot it
was recorded on, the kernel answers for it at once: a pid that is free, holds
a process born at another tick, or is a zombie, is a holder that will never
heartbeat again, so its lease is released now rather than after
``STALE_SECONDS`` without a heartbeat. A holder on another machine can only be
judged by the database's clock; the refusal then says how long that takes and
what to run afterwards.
"""

from __future__ import annotations

import shlex
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from campaign.errors import ConflictError
from campaign.store import leases
from campaign.store.repository import RunnerIdentity
from campaign.supervise.procfs import ProcFS
from sqlalchemy import Engine


def gone(proc: ProcFS, pid: int, start_ticks: int) -> bool:
    """Whether the process born at ``start_ticks`` has ended (on this boot)."""
    st = proc.stat(pid)
    return st is None or st.start_ticks != start_ticks or st.exited


def runner_alive(holder: RunnerIdentity, proc: ProcFS) -> bool:
    """A campaign's runner lease is held while its runner lives (same boot, same birth)."""
    return holder.boot_id == proc.boot_id() and not gone(proc, holder.pid, holder.start_ticks)


def this_host() -> str:
    return socket.gethostname()[:128]


def on_this_machine(holder: leases.WorkerIdentity, proc: ProcFS) -> bool:
    return holder.host == this_host() and holder.boot_id == proc.boot_id()


def dead_here(proc: ProcFS | None = None) -> Callable[[leases.WorkerIdentity], bool]:
    """The predicate ``leases.lost`` takes: a holder recorded on this machine and boot
    whose process has ended. A holder elsewhere is never judged from here."""
    proc = proc or ProcFS()
    return lambda holder: on_this_machine(holder, proc) and gone(proc, holder.pid, holder.start_ticks)


@dataclass(frozen=True)
class Held:
    """One provider's lease another holder keeps, as the refusal describes it."""

    provider: str
    holder: leases.WorkerIdentity | None
    here: bool  # on this machine: then it is alive (a dead one was released)
    heartbeat_age: float | None  # seconds, by the database's clock
    halted_reason: str | None = None
    halted_attempt_id: int | None = None

    def line(self, stale_seconds: float) -> str:
        h = self.holder
        who = f"pid {h.pid} on {'this host' if self.here else f'host {h.host}'}" if h else "nobody"
        if self.halted_reason is not None:
            return f"provider {self.provider}: halted ({self.halted_reason}): worker {who} was lost during attempt {self.halted_attempt_id}; its cleanup is unverified"
        if self.here:
            return f"provider {self.provider}: held by {who}, which is still running (campaign worker or another runner); it frees the lease when it ends"
        age = f"last heartbeat {self.heartbeat_age:.0f} s ago" if self.heartbeat_age is not None else "never heartbeaten"
        return f"provider {self.provider}: held by {who} ({age}); if that worker is gone, its lease goes stale in {self.wait_seconds(stale_seconds)} s"

    def wait_seconds(self, stale_seconds: float) -> int:
        if self.heartbeat_age is None:
            return 0
        return max(0, int(stale_seconds - self.heartbeat_age) + 1)


class LeaseHeld(ConflictError):
    """Another holder keeps some of the campaign's providers: this runner ran nothing.
    ``describe`` says what to wait for and the exact command to run after."""

    def __init__(self, campaign_id: int, held: Sequence[Held], *, stale_seconds: float, db: str) -> None:
        self.campaign_id, self.held, self.stale_seconds, self.db = campaign_id, tuple(held), stale_seconds, db
        super().__init__(self.describe())

    def describe(self, rerun: str = "the same command", program: str = "campaign", continue_blocked: str = "the same command with --continue-blocked added") -> str:
        names = ", ".join(h.provider for h in self.held)
        lines = [f"provider(s) {names} of campaign {self.campaign_id} are held by another process; this runner exits without running anything."]
        lines += [f"  {h.line(self.stale_seconds)}" for h in self.held]
        halted = [h for h in self.held if h.halted_reason is not None]
        if halted:
            hosts = sorted({h.holder.host for h in halted if h.holder})
            lines.append(f"Next, on {', '.join(hosts) or 'the worker host'}, prove the lost attempts' processes gone, then continue in a new campaign:")
            lines += [f"  {program} recover {h.halted_attempt_id} --db {shlex.quote(self.db)}" for h in halted]
            lines.append(f"  {continue_blocked}")
            return "\n".join(lines)
        wait = max((h.wait_seconds(self.stale_seconds) for h in self.held if not h.here), default=0)
        waiting = "for the holder to end" if all(h.here for h in self.held) else f"{wait} s (or for the holder to end)"
        lines.append(f"Next: wait {waiting}, then run:")
        lines.append(f"  {rerun}")
        return "\n".join(lines)


def held_by_others(engine: Engine, campaign_id: int, providers: Sequence[str], proc: ProcFS) -> list[Held]:
    now = leases.now_epoch(engine)
    wanted = set(providers)
    return [
        Held(
            lease.provider,
            lease.holder,
            here=lease.holder is not None and on_this_machine(lease.holder, proc),
            heartbeat_age=None if lease.heartbeat_epoch is None else max(0.0, now - lease.heartbeat_epoch),
            halted_reason=lease.halted_reason,
            halted_attempt_id=lease.halted_attempt_id,
        )
        for lease in leases.all_leases(engine, campaign_id)
        if lease.provider in wanted
    ]
