"""The teardown algorithm: stop every process of the attempt, then prove it.

Escalation, all inside ``budget.total``: TERM to the runtime and the owned
process groups with ``budget.grace`` (not waited once everything has exited),
SIGKILL and ``cgroup.kill`` with a bounded wait, then offline recovery as a
separate, credential-free process. Proof: the cgroup empty and removed, no
member outside it, the kernel reporting no child of the (subreaper) runner,
and every ledger row settled "gone"; anything less is a verdict of
"unverified" with its reasons, never an exception.

The fast path: when every member has already exited, the cgroup reports
``populated 0`` and, with our exited children reaped, the kernel reports no
child at all, the proof is immediate: no signal, no grace, no recovery process.

A deadline-owned command is stopped the same way, one group at a time
(``stop_command``), and ``quiesce`` stops everything before the verifier runs.
Without pidfds and /proc (non-Linux) only process groups are signalled, and a
cleanup is complete only when every owned group is verified empty.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass

from sqlalchemy import URL

from campaign.supervise import subreaper
from campaign.supervise.cgroup import AttemptCgroup
from campaign.supervise.discovery import Discovery, below
from campaign.supervise.members import Member, Members, Records, guarded, killpg
from campaign.supervise.teardown import CleanupLog, TeardownVerdict

RECOVERY_ENV = ("PATH", "LANG", "LC_ALL")


@dataclass(frozen=True)
class RecoveryCommand:
    """The offline recovery process teardown runs: ``argv`` (the attempt id and options
    are appended), the store it opens, and the root lock it may hold on our behalf."""

    argv: tuple[str, ...]
    url: URL
    attempt_id: int
    lock_fd: int | None


def record_verdict(records: Records, log: CleanupLog, verdict: TeardownVerdict) -> None:
    guarded(log, lambda: records.update_attempt(cleanup_complete=verdict.cleanup_complete, teardown_outcome=verdict.outcome, containment=verdict.containment))
    log.flush()


def emergency_kill(members: Members, cgroup: AttemptCgroup | None, log: CleanupLog) -> None:
    """Teardown itself failed: SIGKILL whatever can still be reached, claim nothing."""
    for action in (
        lambda: cgroup.kill() if cgroup is not None else None,
        lambda: [members.signal(m, signal.SIGKILL) for m in members],
        lambda: [killpg(g, signal.SIGKILL) for g in members.owned_groups()],
    ):
        guarded(log, action)
    log("teardown failed; SIGKILL sent to every pinned member and owned group")


class Shutdown:
    """Stops and proves the processes of one entered Supervisor."""

    def __init__(self, discovery: Discovery, *, containment: str, recovery: RecoveryCommand) -> None:
        self.discovery = discovery
        self.members = discovery.members
        self.cgroup = discovery.cgroup
        self.log = discovery.log
        self.budget = discovery.pace.budget
        self.timer = discovery.pace.timer
        self.sleep = discovery.pace.sleep
        self.containment = containment
        self.recovery = recovery

    # -- during the attempt ----------------------------------------------------

    def stop_command(self, m: Member, why: str | None) -> None:
        """After a deadline-owned command returned (``why`` None) or was cut short: stop
        its group, TERM then KILL, and whatever is left in it."""
        if why is not None:
            self.log(f"{m.role} pid {m.pid} {why}; stopping its group")
            self.members.signal_group(m, signal.SIGTERM)
            self.discovery.wait(m, self.budget.run_grace)
            if not m.exited:
                self.members.signal_group(m, signal.SIGKILL)
                self.discovery.wait(m, self.budget.kill_wait)
        if self.members.linux:
            self.discovery.sweep()
        if m.reaped:
            return
        killpg(m.pgid, signal.SIGKILL)
        deadline = self.timer() + self.budget.kill_wait
        for other in [x for x in self.members if x.pgid == m.pgid and x is not m]:
            if self._left_group_since(other, m.pgid):
                continue  # killpg cannot reach it: teardown will, so do not wait out kill_wait here
            self.discovery.wait(other, max(0.0, deadline - self.timer()))

    def _left_group_since(self, m: Member, pgid: int | None) -> bool:
        if not self.members.linux or self.members.exited(m):
            return False
        st = self.members.proc.stat(m.pid)
        return st is not None and st.start_ticks == m.start_ticks and st.pgrp != pgid

    def quiesce(self) -> bool:
        """Stop every member still alive and wait until they are gone; whether proven."""
        live = self.discovery.live()
        if not live and self.discovery.contained_empty():
            return True
        self.log(f"quiesce: stopping {len(live)} member(s) before verification")
        self._kill_all(live, signal.SIGKILL)
        return self._wait_until_gone(self.budget.kill_wait, resend=signal.SIGKILL)

    def _wait_until_gone(self, seconds: float, resend: int | None = None) -> bool:
        deadline = self.timer() + max(0.0, seconds)
        while True:
            live = self.discovery.live()
            if not live and self.discovery.contained_empty():
                return True
            if resend is not None:
                self._kill_all(live, resend)
            if self.timer() >= deadline:
                return False
            self.sleep(self.budget.poll)

    def _kill_all(self, live: list[Member], sig: int) -> None:
        if sig == signal.SIGKILL and self.cgroup is not None:
            self.cgroup.kill()
        for m in sorted(live, key=lambda x: x.role != "runtime"):
            self.members.signal(m, sig)
        for pgid in self.members.owned_groups():
            killpg(pgid, sig)

    # -- teardown --------------------------------------------------------------

    def teardown(self, t0: float) -> TeardownVerdict:
        """Stop everything, prove it, record the verdict (the caller handles a failure)."""
        b = self.budget
        deadline = t0 + b.total
        if not self.members.linux:
            return self._teardown_pgid_only(t0)
        if all(self.members.exited(m) for m in self.members) and self._proven_gone():
            # The agent and everything it started are gone, and the kernel says so: there is
            # nothing to stop, nothing left to discover, no grace to wait, no recovery to run.
            self.log("teardown: every member exited, the cgroup is empty and no child is left; proven without signals or recovery")
            return self._final(t0, False, False, [], phases=(), immediate=True)
        forced = False
        live = self.discovery.live()
        phases: list[str] = []
        if live or not self.discovery.contained_empty():
            phases.append("term")
            self.log(f"teardown: TERM phase, {len(live)} member(s) alive, grace {b.grace:.1f}s")
            self._kill_all(live, signal.SIGTERM)
            self._wait_until_gone(min(b.grace, deadline - self.timer()))
        live = self.discovery.live()
        if live or not self.discovery.contained_empty():
            forced = True
            phases.append("kill")
            self.log(f"teardown: KILL phase, {len(live)} member(s) still alive")
            self._kill_all(live, signal.SIGKILL)
            self._wait_until_gone(min(b.kill_wait, deadline - self.timer() - 1.0), resend=signal.SIGKILL)
        reasons: list[str] = []
        recovered = False
        if b.recovery and self.members:
            phases.append("recovery")
            recovered = self._run_recovery(deadline - self.timer(), reasons)
        return self._final(t0, forced, recovered, reasons, phases=tuple(phases), immediate=False)

    def _proven_gone(self) -> bool:
        """With every member exited: whether cleanup is already proven. The cgroup (if
        any) reports ``populated 0`` and nothing left it, and once our exited children are
        reaped the kernel reports no child at all, which for a subreaper means no
        descendant (see ``subreaper.has_children``), so no /proc scan could find one.
        Anything less takes the full path."""
        if self.discovery.escaped or (self.cgroup is not None and self.cgroup.populated()):
            return False
        self.members.reap_exited()
        return not subreaper.has_children()

    def _run_recovery(self, seconds: float, reasons: list[str]) -> bool:
        """Run offline recovery as a separate, credential-free process (failures go to
        ``reasons``). True when it had to signal a member itself."""
        if seconds <= 0.5:
            reasons.append("recovery_timeout")
            return False
        cmd = self.recovery
        env = {k: os.environ[k] for k in RECOVERY_ENV if k in os.environ}
        argv = [*cmd.argv, str(cmd.attempt_id), "--wait", f"{max(0.5, min(self.budget.kill_wait, seconds / 2)):.2f}"]
        if cmd.url.password:
            env["CAMPAIGN_DB"] = cmd.url.render_as_string(hide_password=False)
        else:
            argv += ["--db", cmd.url.render_as_string(hide_password=False)]
        pass_fds: tuple[int, ...] = ()
        if cmd.lock_fd is not None:
            argv += ["--lock-fd", str(cmd.lock_fd)]
            pass_fds = (cmd.lock_fd,)
        self.log("recovery: starting offline recovery process")
        self.log.flush()
        proc = subprocess.Popen(argv, env=env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=pass_fds, start_new_session=True)
        self.discovery.excluded.add(proc.pid)
        try:
            out, _ = proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            reasons.append("recovery_timeout")
            self.log("recovery: timed out")
            return False
        for line in (out or b"").decode("utf-8", "replace").splitlines():
            self.log(f"recovery: {line}")
        if proc.returncode != 0:
            reasons.append("recovery_failed")
        return any(r.verification == "recovery_killed" for r in self.members.records.ledger() or ())

    def _drain_descendants(self, seconds: float) -> tuple[bool, int]:
        """After the kill phases: find our remaining children and their subtrees, pin,
        record and SIGKILL them, reap our zombies, until the kernel reports no child at
        all (proven) or ``seconds`` pass. Catches a chain of short-lived generations that
        every earlier sweep missed. Returns (proven, live descendants at the end)."""
        d = self.discovery
        deadline = self.timer() + max(0.0, seconds)
        quiet = 0
        while True:
            if not subreaper.has_children():
                return True, 0
            procs = d.proc.scan()
            children = d.tree(procs)
            # Our own children born during the attempt (older ones predate it and are
            # not the attempt's), then everything below them.
            ours = [p for p in children.get(d.me, ()) if procs[p].start_ticks >= d.since]
            subtree = set(ours) | below(children, ours)
            live = 0
            for pid in sorted(subtree):
                st = procs[pid]
                if st.exited:
                    if st.ppid == d.me:
                        d.check_exited(st)
                        self.members.reap_any(pid)
                    continue
                live += 1
                m = self.members.find(pid, st.start_ticks)
                if m is None:
                    m = d.adopt(st)
                if m is not None:
                    d.check_contained(m)
                    self.members.signal(m, signal.SIGKILL)
            quiet = quiet + 1 if not subtree else 0
            if self.timer() >= deadline:
                return False, live
            if quiet >= 5:
                # Only children that predate the attempt remain: no atomic proof, but
                # five consecutive scans found nothing of ours.
                self.log("teardown: the runner has children older than the attempt; descendant check by scan only")
                return False, 0
            if subtree:  # give what was just killed a moment to go; a quiet scan repeats at once
                self.sleep(min(self.budget.poll, 0.01))

    def _final(self, t0: float, forced: bool, recovered: bool, reasons: list[str], *, phases: tuple[str, ...], immediate: bool) -> TeardownVerdict:
        # After the immediate proof no process of the attempt exists: no scan can find one.
        live = [] if immediate else self.discovery.live()
        cgroup_ok = True
        if self.cgroup is not None:
            cgroup_ok = not self.cgroup.pids() and self.cgroup.remove()
            if not cgroup_ok:
                reasons.append("cgroup_busy")
        # Our own exited children are proven; reap them now that no group needs them.
        self.members.reap_exited()
        proven, late = self._drain_descendants(min(self.budget.kill_wait, 2.0))
        if late:
            self.log(f"teardown: {late} descendant(s) still alive after the final drain")
        elif not proven:
            self.log("teardown: no kernel proof that no descendant is left")
        if not immediate:
            self.discovery.sweep()
        live = self.members.alive() if not live else live
        if self.discovery.escaped:
            reasons.append("escaped_cgroup")
        rows = self.members.records.ledger()
        unverified = 0
        if rows is None:
            reasons.append("ledger_unreadable")
        else:
            if self.members.unrecorded(rows):
                reasons.append("ledger_missing")
            unverified = self.members.settle(rows, self.log)
        survivors = max(len(live), unverified, late)
        if survivors:
            reasons.insert(0, "survivors")
        complete = not reasons
        outcome = "unverified" if not complete else "recovered" if recovered else "forced" if forced else "clean"
        verdict = TeardownVerdict(
            cleanup_complete=complete,
            outcome=outcome,
            containment=self.containment,
            survivors=survivors,
            members=len(rows or ()),
            seconds=round(self.timer() - t0, 3),
            reasons=tuple(dict.fromkeys(reasons)),
            phases=phases,
        )
        self.log(f"teardown verdict: {verdict.outcome} cleanup_complete={verdict.cleanup_complete} survivors={survivors} reasons={','.join(verdict.reasons) or '-'} seconds={verdict.seconds}")
        record_verdict(self.members.records, self.log, verdict)
        return verdict

    # -- without pidfds and /proc ----------------------------------------------

    def _teardown_pgid_only(self, t0: float) -> TeardownVerdict:  # pragma: no cover - non-Linux
        """Process groups only: no subreaper, no pidfd. Complete only when every owned
        group is verified empty; anything that left its group is unverifiable."""
        b = self.budget
        reasons: list[str] = []
        spawned = [m for m in self.members if m.spawned and not m.reaped]
        forced = False
        for sig, wait in ((signal.SIGTERM, b.grace), (signal.SIGKILL, b.kill_wait)):
            if self._groups_gone(spawned):
                break
            forced = sig == signal.SIGKILL
            for m in spawned:
                killpg(m.pgid, sig)
            deadline = self.timer() + wait
            while self.timer() < deadline and not self._groups_gone(spawned):
                self.sleep(b.poll)
        survivors = sum(1 for m in spawned if not self.members.exited(m) or _group_alive(m.pgid))
        for m in spawned:
            if m.exited:
                subreaper.reap(m.pid, block=True)
                m.reaped = True
        if survivors:
            reasons.append("survivors")
        # Without a process table we cannot see a child that left the group; a leader
        # that exited while its group lived on is the visible sign of it.
        if any(m.exited and _group_alive(m.pgid) for m in spawned):
            reasons.append("platform_unverifiable")
        complete = not reasons
        verdict = TeardownVerdict(complete, ("forced" if forced else "clean") if complete else "unverified", "pgid-only", survivors, len(spawned), round(self.timer() - t0, 3), tuple(reasons))
        record_verdict(self.members.records, self.log, verdict)
        return verdict

    def _groups_gone(self, spawned: list[Member]) -> bool:  # pragma: no cover - non-Linux
        return all(self.members.exited(m) for m in spawned) and not any(_group_alive(m.pgid) for m in spawned)


def _group_alive(pgid: int | None) -> bool:  # pragma: no cover - non-Linux
    if pgid is None:
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
