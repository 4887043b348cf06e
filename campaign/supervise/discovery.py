"""Discovery: finding the attempt's processes that the supervisor never spawned.

A client starts helpers, daemons and double-forked children of its own. While a
command runs (every ``budget.sweep_interval``) and at every step of teardown,
the live supervisor scans the process table for the attempt's descendants:
members of an owned process group or session, members of the attempt's
cgroup, children re-parented to the runner (a subreaper) since the attempt
began, and everything below any of those. Each one found is pinned with a
pidfd, re-checked against its start time (the pid may have been reused between
the scan and the pin), and recorded in the ledger as role "descendant" before
anything signals it, so a runner killed mid-attempt still leaves a row for it.

With a cgroup, a live member found outside it is a breach: an empty cgroup then
proves nothing, and the verdict can no longer be complete (``escaped``).

Only a live supervisor scans: offline recovery trusts the ledger alone.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from campaign.supervise import pidfd as pidfds
from campaign.supervise.cgroup import AttemptCgroup
from campaign.supervise.members import Member, Members, guarded
from campaign.supervise.procfs import Stat
from campaign.supervise.teardown import CleanupLog, TeardownBudget


@dataclass(frozen=True)
class Pace:
    """How long waits last and how time passes: injectable, so tests run fast."""

    budget: TeardownBudget
    timer: Callable[[], float]
    sleep: Callable[[float], None]


def now_ticks() -> int:
    """Current time in /proc start-time ticks (a lower bound for later births)."""
    try:
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return int(uptime * os.sysconf("SC_CLK_TCK")) - 1
    except (OSError, ValueError):
        return 0


def below(children: Mapping[int, list[int]], roots: Iterable[int]) -> set[int]:
    """Every process under ``roots`` in the tree ``children`` (parent -> its children)."""
    found: set[int] = set()
    frontier = list(roots)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


class Discovery:
    """The live supervisor's view of the attempt's process tree. ``since`` (start ticks)
    tells the runner's children born during the attempt from older ones; ``me`` is the
    runner; pids in ``excluded`` (our own recovery process) are never the attempt's."""

    def __init__(self, members: Members, log: CleanupLog, pace: Pace, *, cgroup: AttemptCgroup | None, since: int, me: int) -> None:
        self.members = members
        self.proc = members.proc
        self.log = log
        self.pace = pace
        self.cgroup = cgroup
        self.since = since
        self.me = me
        self.excluded: set[int] = set()
        self.escaped: set[tuple[int, int]] = set()

    def tree(self, procs: Mapping[int, Stat]) -> dict[int, list[int]]:
        """Parent -> children over ``procs``, without the runner and the excluded."""
        children: dict[int, list[int]] = defaultdict(list)
        for pid, st in procs.items():
            if pid != self.me and pid not in self.excluded:
                children[st.ppid].append(pid)
        return children

    def sweep(self) -> list[Member]:
        """Find, pin and record descendants; reap our re-parented zombies."""
        if not self.members.linux:
            return []
        procs = self.proc.scan()
        owned = self.members.owned_groups()
        candidates: set[int] = set()
        for pid, st in procs.items():
            if pid == self.me or pid in self.excluded:
                continue
            if st.pgrp in owned or st.session in owned:
                candidates.add(pid)
            elif st.ppid == self.me and st.start_ticks >= self.since:
                candidates.add(pid)
        if self.cgroup is not None:
            candidates.update(p for p in self.cgroup.pids() if p != self.me and p not in self.excluded)
        candidates |= below(self.tree(procs), candidates | {m.pid for m in self.members if not m.exited})
        found = []
        for pid in sorted(candidates):
            st = procs.get(pid) or self.proc.stat(pid)
            if st is None:
                continue
            if st.exited:
                if st.ppid == self.me and not self.members.is_spawned(pid):
                    self.check_exited(st)
                    self.members.reap(pid)
                continue
            if (pid, st.start_ticks) in self.members.known:
                continue
            member = self.adopt(st)
            if member is not None:
                found.append(member)
        if self.cgroup is not None:
            for m in self.members:
                if not m.exited and not (m.pidfd is not None and pidfds.has_exited(m.pidfd)):
                    self.check_contained(m)
        return found

    def adopt(self, st: Stat) -> Member | None:
        """Pin ``st`` with a pidfd and record it as a descendant, unless it is gone or its
        pid now names another process."""
        try:
            fd = os.pidfd_open(st.pid)
        except (ProcessLookupError, OSError):
            return None
        now = self.proc.stat(st.pid)
        if now is None or now.start_ticks != st.start_ticks or pidfds.has_exited(fd):
            os.close(fd)
            if now is not None and now.start_ticks == st.start_ticks:
                self.check_exited(now)  # died before it could be pinned: where did it die?
            return None
        member = self.members.add(Member("descendant", st.pid, st.start_ticks, now.pgrp, spawned=False, pidfd=fd))
        # Still pinned and stopped if the row cannot be written; the verdict then
        # fails closed on the missing row.
        guarded(self.log, lambda: self.members.record(member))
        self.log(f"discovered descendant pid {st.pid} pgid {now.pgrp} sid {now.session} ledger {member.ledger_id}")
        self.check_contained(member)
        return member

    def check_contained(self, m: Member) -> None:
        """With a cgroup, a live member outside it is a containment breach: an empty
        cgroup then proves nothing, so the verdict can no longer be complete."""
        if self.cgroup is None or m.exited:
            return
        self._check_path(m.pid, m.start_ticks, m.role)

    def check_exited(self, st: Stat) -> None:
        """The same for a process of the attempt that has exited but is not yet reaped (a
        zombie keeps the cgroup it died in): a chain of short-lived generations is dead by
        the time any check reaches one of them, and each of its zombies outside the
        cgroup is the only trace of the breach. Called before such a zombie is reaped."""
        if self.cgroup is not None:
            self._check_path(st.pid, st.start_ticks, "descendant")

    def _check_path(self, pid: int, start_ticks: int, role: str) -> None:
        if (pid, start_ticks) in self.escaped:
            return
        path = self.proc.cgroup2_path(pid)
        if path is None or self.cgroup is None or self.cgroup.contains(path):
            return
        # The path was read from whatever held the pid then. Still the same process (alive,
        # or a zombie, which holds its pid until reaped): it was outside. Reaped and the
        # pid reused meanwhile: the path may be another process's, so it proves nothing.
        st = self.proc.stat(pid)
        if st is None or st.start_ticks != start_ticks:
            return
        self.escaped.add((pid, start_ticks))
        self.log(f"breach: {role} pid {pid} {'died' if st.exited else 'is'} outside the attempt cgroup (in {path})")

    def live(self) -> list[Member]:
        """Members not yet proven exited, after a fresh sweep."""
        self.sweep()
        return self.members.alive()

    def contained_empty(self) -> bool:
        return self.cgroup is None or not self.cgroup.pids()

    def wait(self, m: Member, timeout: float | None, *, sweep: bool = False, stop_when: Callable[[], bool] | None = None) -> bool:
        """Wait for ``m`` to exit. With ``sweep``, descendants are discovered and recorded
        every ``budget.sweep_interval`` meanwhile, so a runner killed mid-attempt leaves
        ledger rows for them too. ``stop_when`` answering True ends the wait early."""
        timer, budget = self.pace.timer, self.pace.budget
        deadline = None if timeout is None else timer() + timeout
        while not self.members.exited(m):
            left = None if deadline is None else deadline - timer()
            if left is not None and left <= 0:
                return False
            if stop_when is not None and stop_when():
                return False
            step = budget.sweep_interval if left is None else min(left, budget.sweep_interval)
            if m.pidfd is not None:
                pidfds.wait_exit(m.pidfd, step)
            else:
                self.pace.sleep(min(step, budget.poll))
            if sweep and self.members.linux:
                self.sweep()
        return True
