"""The attempt supervisor: gated spawn with ledger, containment, provable teardown.

Ownership rules (Linux):

* Every process the attempt starts is our direct child, spawned behind a gate
  (see ``gate``) and recorded in the ledger before it may exec. It leads its
  own session and group (sid = pgid = pid). We keep it *unreaped* (exit codes
  are read with ``WNOWAIT``) until teardown ends, so its pid, and with it the
  number of its process group, cannot be reused meanwhile: ``killpg`` on it is
  safe, and any process found in that group or session is ours.
* We are a child subreaper, so a descendant whose parent dies is re-parented
  to us instead of escaping to init. With a cgroup, membership is exact.
* Discovered descendants (members of owned groups/sessions or the cgroup, our
  own subtree, orphans re-parented to us) are pinned with a pidfd, re-checked,
  and recorded as role ``descendant`` before they are signalled.
* Every signal goes through a pidfd, or ``killpg`` on a group whose leader is
  our unreaped child.

Contract for callers: while a Supervisor is active the runner does not start
other child processes of its own (in subreaper mode any new child of the
runner is treated as belonging to the attempt). One Supervisor per process at a
time.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from sqlalchemy import Engine

from campaign.vocabulary import LEDGER_ROLES
from campaign import testhooks
from campaign.errors import CampaignError
from campaign.isolation import PrivateRoot
from campaign.store import repository
from campaign.store.repository import LedgerMember
from campaign.supervise import pidfd as pidfds
from campaign.supervise.cgroup import AttemptCgroup, attempt_cgroup_name
from campaign.supervise import confine
from campaign.supervise.gate import Stdio, spawn_gated
from campaign.supervise.interrupt import critical
from campaign.supervise.procfs import IS_LINUX, Stat, default_proc
from campaign.supervise.teardown import CleanupLog, RunResult, TeardownBudget, TeardownVerdict

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
# Roles a process is started in; "descendant" is only ever found, never started.
ROLES = tuple(role for role in LEDGER_ROLES if role != "descendant")
RECOVERY_ENV = ("PATH", "LANG", "LC_ALL")


class SupervisorError(CampaignError):
    """The supervisor cannot be used as asked (e.g. another one holds the root)."""


def _prctl():
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl


def get_subreaper() -> bool:
    if not IS_LINUX:
        return False
    value = ctypes.c_int(0)
    _prctl()(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)
    return bool(value.value)


def set_subreaper(on: bool) -> bool:
    if not IS_LINUX:
        return False
    return _prctl()(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0


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


class Process:
    """Handle returned by ``Supervisor.start`` for a background process."""

    def __init__(self, sup: Supervisor, member: Member) -> None:
        self._sup = sup
        self._m = member

    @property
    def pid(self) -> int:
        return self._m.pid

    @property
    def role(self) -> str:
        return self._m.role

    @property
    def ledger_id(self) -> int | None:
        return self._m.ledger_id

    @property
    def start_ticks(self) -> int:
        return self._m.start_ticks

    def poll(self) -> int | None:
        self._sup._check_exit(self._m)
        return self._m.exit_code

    @property
    def returncode(self) -> int | None:
        return self.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        self._sup._wait_member(self._m, timeout, sweep=True)
        return self._m.exit_code

    def terminate(self, grace: float) -> bool:
        """SIGTERM through its pidfd, then wait up to ``grace`` seconds; whether it exited.

        For members that finish their work on TERM (the profiler writes its flush
        marker); anything left is still torn down with the attempt.
        """
        self._sup._signal(self._m, signal.SIGTERM)
        self._sup._wait_member(self._m, grace)
        return self._m.exited


class Supervisor:
    """Context manager owning every process of one attempt.

    ``containment``: "auto" (cgroup v2 with cgroup.kill when writable, else
    subreaper + pidfd + pgid), "cgroup2", or "subreaper-pidfd". Non-Linux is
    always "pgid-only" and never reports a verification it cannot make.
    """

    def __init__(
        self,
        engine: Engine,
        attempt_id: int,
        root: PrivateRoot,
        *,
        clock: Callable = repository.utcnow,
        timer: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        proc=None,
        budget: TeardownBudget | None = None,
        containment: str = "auto",
        confine_members: bool = True,
        python: str = sys.executable,
        recovery_argv: Sequence[str] | None = None,
    ) -> None:
        """``python`` runs the offline recovery process and must have ``campaign``
        importable (the runner's own interpreter, by default); ``recovery_argv``
        replaces the whole recovery command (the attempt id and options are appended)."""
        self.engine = engine
        self.attempt_id = attempt_id
        self.root = root
        self.clock = clock
        self.timer = timer
        self.sleep = sleep
        self.proc = proc or default_proc()
        self.budget = budget or TeardownBudget()
        self.requested_containment = containment
        self.python = python
        self.recovery_argv = list(recovery_argv) if recovery_argv else [python, "-I", "-m", "campaign.supervise.recovery"]
        self.containment = "pgid-only"
        self.cgroup: AttemptCgroup | None = None
        self.confine_members = confine_members
        self._confine: tuple[confine.CgroupMount, ...] | None = None
        self.log = CleanupLog(root, clock)
        self._members: list[Member] = []
        self._known: set[tuple[int, int]] = set()
        self._excluded: set[int] = set()
        self._escaped: set[tuple[int, int]] = set()
        self._since = 0
        self._me = os.getpid()
        self._lock_fd: int | None = None
        self._prev_subreaper = False
        self._subreaper_set = False
        self._verdict: TeardownVerdict | None = None
        self._entered = False
        self.linux = IS_LINUX and self.proc.available and pidfds.available()

    # -- lifecycle -------------------------------------------------------------

    @property
    def entered(self) -> bool:
        """Whether __enter__ completed: before that, nothing can have been spawned."""
        return self._entered

    def __enter__(self) -> Supervisor:
        if self._entered or self._verdict is not None:
            raise SupervisorError("a Supervisor can be entered once")
        try:
            with critical():
                self._enter()
        except BaseException:
            # __exit__ will not run when __enter__ raises (e.g. a deferred Interrupted).
            self.teardown()
            raise
        return self

    def _enter(self) -> None:
        self._lock_root()
        if self.linux:
            self._prev_subreaper = get_subreaper()
            self._subreaper_set = set_subreaper(True)
            self.linux = self._subreaper_set
        if self.linux:
            self.containment = "subreaper-pidfd"
            if self.requested_containment in ("auto", "cgroup2"):
                attempt = repository.get_attempt(self.engine, self.attempt_id)
                if attempt is None:
                    raise SupervisorError(f"attempt {self.attempt_id} does not exist")
                self.cgroup = AttemptCgroup.create(attempt_cgroup_name(attempt.id, attempt.campaign_id, attempt.started_at))
                if self.cgroup is not None:
                    self.containment = "cgroup2"
                elif self.requested_containment == "cgroup2":
                    raise SupervisorError("no writable cgroup v2 with cgroup.kill is available; use containment='auto'")
            self._since = self._now_ticks()
            # Members get their own cgroup and mount namespaces, a read-only cgroupfs and
            # no CAP_SYS_ADMIN, so they can neither leave the cgroup nor mount over the host.
            self._confine = confine.cgroup_mounts() if self.confine_members and confine.available() else None
        self._update_attempt(containment=self.containment, private_root=str(self.root.path))
        self._entered = True
        confined = "; members confined (cgroup+mount namespaces, read-only cgroupfs, no CAP_SYS_ADMIN)" if self._confine is not None else ""
        self.log(f"supervisor start: attempt {self.attempt_id}, containment {self.containment}{confined}")

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self.teardown()
        except BaseException:
            # An Interrupted raised before teardown's own critical section began:
            # teardown is idempotent, finish it, then let the interruption out.
            self.teardown()
            raise
        return False

    def _lock_root(self) -> None:
        dfd = os.open(self.root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            st = os.fstat(dfd)
            if (st.st_dev, st.st_ino) != (self.root.dev, self.root.ino):
                raise SupervisorError("the private root was replaced after it was created; refusing to use it")
            fd = os.open("supervisor.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        finally:
            os.close(dfd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SupervisorError("another supervisor holds this private root") from None
        self._lock_fd = fd

    def _now_ticks(self) -> int:
        """Current time in /proc start-time ticks (a lower bound for later births)."""
        try:
            with open("/proc/uptime", encoding="ascii") as fh:
                uptime = float(fh.read().split()[0])
            return int(uptime * os.sysconf("SC_CLK_TCK")) - 1
        except (OSError, ValueError):
            return 0

    # -- spawning --------------------------------------------------------------

    def start(
        self,
        role: str,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        cwd_fd: int | None = None,
        env: Mapping[str, str],
        stdout: Stdio = None,
        stderr: Stdio = None,
        stdin: Stdio = None,
    ) -> Process:
        """Start a background process behind the exec gate (ledger row first)."""
        if not self._entered or self._verdict is not None:
            raise SupervisorError("start() needs an active Supervisor that has not been torn down")
        if role not in ROLES:
            raise SupervisorError(f"role must be one of {', '.join(ROLES)}")
        holder: dict[str, Member] = {}

        def on_forked(pid: int) -> None:
            fd = os.pidfd_open(pid) if self.linux else None
            ticks = self.proc.start_ticks(pid)
            if ticks is None:
                raise SupervisorError(f"cannot read the start time of the new {role} process")
            member = Member(role, pid, ticks, pid, spawned=True, pidfd=fd)
            holder["m"] = member
            self._members.append(member)
            self._known.add((pid, ticks))
            if self.cgroup is not None:
                self.cgroup.add(pid)
            member.ledger_id = repository.record_ledger(self.engine, self.attempt_id, self._ledger_member(member), clock=self.clock)
            testhooks.reached("ledger")

        with critical():
            try:
                where = {"cwd_fd": cwd_fd} if cwd_fd is not None else {"cwd": cwd or self.root.cwd}
                spawn_gated(argv, **where, env=env, on_forked=on_forked, stdout=stdout, stderr=stderr, stdin=stdin, confine=self._confine)
            except BaseException:
                member = holder.get("m")
                if member is not None:
                    # The child was reaped by the gate after aborting or failing exec.
                    member.exited = member.reaped = True
                raise
        member = holder["m"]
        self.log(f"spawned {role} pid {member.pid} ledger {member.ledger_id}")
        self.log.flush()
        return Process(self, member)

    def run(
        self,
        role: str,
        argv: Sequence[str],
        *,
        timeout: float,
        cwd: str | os.PathLike[str] | None = None,
        cwd_fd: int | None = None,
        env: Mapping[str, str],
        stdout: Stdio = None,
        stderr: Stdio = None,
        stdin: Stdio = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> RunResult:
        """Run a deadline-owned command. Whatever happens, its process group (same-group
        background children included) is stopped before this returns.

        ``stop_when`` is asked between waits (every ``budget.sweep_interval``); when it
        answers True the command is stopped like one at its deadline, and the result
        says ``stopped`` instead of ``timed_out``."""
        t0 = self.timer()
        handle = self.start(role, argv, cwd=cwd, cwd_fd=cwd_fd, env=env, stdout=stdout, stderr=stderr, stdin=stdin)
        m = handle._m
        self._wait_member(m, timeout, sweep=True, stop_when=stop_when)
        ended = not m.exited
        stopped = ended and stop_when is not None and stop_when()
        timed_out = ended and not stopped
        with critical():
            if ended:
                why = "was stopped by its watch" if stopped else f"hit its {timeout:.1f}s deadline"
                self.log(f"{role} pid {m.pid} {why}; stopping its group")
                self._signal_group(m, signal.SIGTERM)
                self._wait_member(m, self.budget.run_grace)
                if not m.exited:
                    self._signal_group(m, signal.SIGKILL)
                    self._wait_member(m, self.budget.kill_wait)
            self._stop_group_leftovers(m)
        wall = self.timer() - t0
        return RunResult(exit_code=None if ended else m.exit_code, timed_out=timed_out, wall_seconds=wall, stopped=stopped)

    def quiesce(self) -> bool:
        """Stop every member still alive (what the agent left running, the runtime, the
        replay provider) and wait until they are gone; whether that was proven.

        Called before the hidden verifier runs: nothing the agent started may change the
        working copy while the suite judges it."""
        live = self._live()
        if not live and self._contained_empty():
            return True
        self.log(f"quiesce: stopping {len(live)} member(s) before verification")
        self._kill_all(live, signal.SIGKILL)
        return self._wait_until_gone(self.budget.kill_wait, resend=signal.SIGKILL)

    def verify_ledger(self) -> None:
        """Check, from the store, that every member's ledger row is there and unaltered.
        Lanes call it after the runtime boots and before any paid call."""
        rows = self._ledger_rows()
        if rows is None:
            raise SupervisorError("the process ledger is unreadable; refusing to continue before any paid call")
        by_id = {r.id: r for r in rows}
        for m in self._members:
            row = by_id.get(m.ledger_id)
            if row is None or (row.pid, row.start_ticks, row.boot_id) != (m.pid, m.start_ticks, self.proc.boot_id()):
                raise SupervisorError(f"the ledger row for {m.role} pid {m.pid} is missing or altered; refusing to continue")

    def _stop_group_leftovers(self, m: Member) -> None:
        """Record, then kill, whatever is left in a finished command's group."""
        if self.linux:
            self._sweep()
        if m.reaped:
            return
        self._killpg(m.pgid, signal.SIGKILL)
        deadline = self.timer() + self.budget.kill_wait
        for other in [x for x in self._members if x.pgid == m.pgid and x is not m]:
            if self._left_group_since(other, m.pgid):
                continue  # killpg cannot reach it: teardown will, so do not wait out kill_wait here
            self._wait_member(other, max(0.0, deadline - self.timer()))

    def _left_group_since(self, m: Member, pgid: int | None) -> bool:
        if not self.linux or self._check_exit(m):
            return False
        st = self.proc.stat(m.pid)
        return st is not None and st.start_ticks == m.start_ticks and st.pgrp != pgid

    # -- process state ---------------------------------------------------------

    def _ledger_member(self, m: Member) -> LedgerMember:
        return LedgerMember(
            role=m.role,
            pid=m.pid,
            start_ticks=m.start_ticks,
            boot_id=self.proc.boot_id(),
            pid_ns=self.proc.pid_ns(),
            pgid=m.pgid,
            discovered=m.discovered,
        )

    def _check_exit(self, m: Member) -> bool:
        if m.exited:
            return True
        if m.spawned and not hasattr(os, "waitid"):  # pragma: no cover - no WNOWAIT: reap now
            try:
                pid, status = os.waitpid(m.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = m.pid, 0
            if pid == 0:
                return False
            m.exited = m.reaped = True
            m.exit_code = os.waitstatus_to_exitcode(status)
            return True
        if m.spawned:
            try:
                res = os.waitid(os.P_PID, m.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                m.exited = m.reaped = True
                return True
            if res is None:
                return False
            m.exited = True
            m.exit_code = res.si_status if res.si_code == os.CLD_EXITED else -res.si_status
            return True
        if m.pidfd is not None and pidfds.has_exited(m.pidfd):
            m.exited = True
            return True
        if not self.linux:
            st = self.proc.stat(m.pid)
            if st is None or st.start_ticks != m.start_ticks:
                m.exited = True
        return m.exited

    def _wait_member(self, m: Member, timeout: float | None, *, sweep: bool = False, stop_when: Callable[[], bool] | None = None) -> bool:
        """Wait for ``m`` to exit. With ``sweep``, descendants are discovered and recorded
        every ``budget.sweep_interval`` meanwhile, so a runner killed mid-attempt leaves
        ledger rows for them too. ``stop_when`` answering True ends the wait early."""
        deadline = None if timeout is None else self.timer() + timeout
        while not self._check_exit(m):
            left = None if deadline is None else deadline - self.timer()
            if left is not None and left <= 0:
                return False
            if stop_when is not None and stop_when():
                return False
            step = self.budget.sweep_interval if left is None else min(left, self.budget.sweep_interval)
            if m.pidfd is not None:
                pidfds.wait_exit(m.pidfd, step)
            else:
                self.sleep(min(step, self.budget.poll))
            if sweep and self.linux:
                self._sweep()
        return True

    def _signal(self, m: Member, sig: int) -> None:
        if self._check_exit(m):
            return
        if m.pidfd is not None:
            pidfds.send_signal(m.pidfd, sig)
        elif m.spawned and not m.reaped:
            try:
                os.kill(m.pid, sig)  # our unreaped child: the pid cannot have been reused
            except ProcessLookupError:
                pass

    def _signal_group(self, m: Member, sig: int) -> None:
        self._signal(m, sig)
        if m.spawned and not m.reaped:
            self._killpg(m.pgid, sig)

    def _killpg(self, pgid: int | None, sig: int) -> None:
        if pgid is None:
            return
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _owned_groups(self) -> set[int]:
        """Group/session numbers held by an unreaped spawned leader: safe to follow."""
        return {m.pgid for m in self._members if m.spawned and not m.reaped and m.pgid is not None}

    # -- discovery (live supervisor only; recovery never scans) ----------------

    def _sweep(self) -> list[Member]:
        """Find, pin and record descendants; reap our re-parented zombies."""
        if not self.linux:
            return []
        procs = self.proc.scan()
        owned = self._owned_groups()
        children: dict[int, list[int]] = defaultdict(list)
        candidates: set[int] = set()
        for pid, st in procs.items():
            if pid == self._me or pid in self._excluded:
                continue
            children[st.ppid].append(pid)
            if st.pgrp in owned or st.session in owned:
                candidates.add(pid)
            elif st.ppid == self._me and st.start_ticks >= self._since:
                candidates.add(pid)
        if self.cgroup is not None:
            candidates.update(p for p in self.cgroup.pids() if p != self._me and p not in self._excluded)
        frontier = list(candidates | {m.pid for m in self._members if not m.exited})
        while frontier:
            for child in children.get(frontier.pop(), ()):
                if child not in candidates and child not in self._excluded:
                    candidates.add(child)
                    frontier.append(child)
        found = []
        for pid in sorted(candidates):
            st = procs.get(pid) or self.proc.stat(pid)
            if st is None:
                continue
            if st.exited:
                if st.ppid == self._me and not self._is_spawned(pid):
                    self._reap(pid)
                continue
            if (pid, st.start_ticks) in self._known:
                continue
            member = self._adopt(st)
            if member is not None:
                found.append(member)
        if self.cgroup is not None:
            for m in self._members:
                if not m.exited and not (m.pidfd is not None and pidfds.has_exited(m.pidfd)):
                    self._check_contained(m)
        return found

    def _is_spawned(self, pid: int) -> bool:
        return any(m.spawned and m.pid == pid and not m.reaped for m in self._members)

    def _reap(self, pid: int) -> None:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        for m in self._members:
            if m.pid == pid and not m.spawned:
                m.exited = True

    def _reap_any(self, pid: int) -> None:
        """Reap an exited child of ours, a spawned member included (its exit code first)."""
        for m in self._members:
            if m.spawned and m.pid == pid and not m.reaped:
                self._check_exit(m)
                if not m.exited:
                    return
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                m.reaped = True
                return
        self._reap(pid)

    def _adopt(self, st: Stat) -> Member | None:
        try:
            fd = os.pidfd_open(st.pid)
        except (ProcessLookupError, OSError):
            return None
        now = self.proc.stat(st.pid)
        if now is None or now.start_ticks != st.start_ticks or pidfds.has_exited(fd):
            os.close(fd)
            return None
        member = Member("descendant", st.pid, st.start_ticks, now.pgrp, spawned=False, pidfd=fd)
        self._members.append(member)
        self._known.add((st.pid, st.start_ticks))
        # Still pinned and stopped if the row cannot be written; the verdict then
        # fails closed on the missing row.
        self._safe(lambda: setattr(member, "ledger_id", repository.record_ledger(self.engine, self.attempt_id, self._ledger_member(member), clock=self.clock)))
        self.log(f"discovered descendant pid {st.pid} pgid {now.pgrp} sid {now.session} ledger {member.ledger_id}")
        self._check_contained(member)
        return member

    def _check_contained(self, m: Member) -> None:
        """With a cgroup, a live member outside it is a containment breach: an empty
        cgroup then proves nothing, so the verdict can no longer be complete."""
        if self.cgroup is None or m.exited or (m.pid, m.start_ticks) in self._escaped:
            return
        path = self.proc.cgroup2_path(m.pid)
        if path is None or self.cgroup.contains(path):
            return
        st = self.proc.stat(m.pid)
        if st is None or st.start_ticks != m.start_ticks or st.exited:
            return  # gone meanwhile: the path read may belong to a new process
        self._escaped.add((m.pid, m.start_ticks))
        self.log(f"breach: {m.role} pid {m.pid} left the attempt cgroup (now in {path})")

    def _live(self) -> list[Member]:
        """Members not yet proven exited, after a fresh sweep."""
        self._sweep()
        live = [m for m in self._members if not self._check_exit(m)]
        return live

    def _contained_empty(self) -> bool:
        return self.cgroup is None or not self.cgroup.pids()

    def _wait_until_gone(self, seconds: float, resend: int | None = None) -> bool:
        deadline = self.timer() + max(0.0, seconds)
        while True:
            live = self._live()
            if not live and self._contained_empty():
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
            self._signal(m, sig)
        for pgid in self._owned_groups():
            self._killpg(pgid, sig)

    # -- teardown --------------------------------------------------------------

    def teardown(self) -> TeardownVerdict:
        """Stop everything, prove it, record the verdict. Idempotent; never raises for
        an unprovable cleanup (the verdict says so)."""
        if self._verdict is not None:
            return self._verdict
        with critical():
            if self._verdict is None:
                t0 = self.timer()
                try:
                    self._verdict = self._teardown(t0)
                finally:
                    if self._verdict is None:  # teardown itself failed: stop what we can, claim nothing
                        self._emergency_kill()
                        self._verdict = TeardownVerdict(False, "unverified", self.containment, survivors=-1, reasons=("survivors",))
                        self._safe_record(self._verdict)
                    self._release()
        return self._verdict

    def _teardown(self, t0: float) -> TeardownVerdict:
        b = self.budget
        deadline = t0 + b.total
        if not self._entered:  # nothing can have been spawned
            if self.cgroup is not None:
                self.cgroup.remove()
            return TeardownVerdict(True, "clean", self.containment, survivors=0)
        forced = False
        if not self.linux:
            return self._teardown_pgid_only(t0)
        if all(self._check_exit(m) for m in self._members) and self._proven_gone():
            # The agent and everything it started are gone, and the kernel says so: there is
            # nothing to stop, nothing left to discover, no grace to wait, no recovery to run.
            self.log("teardown: every member exited, the cgroup is empty and no child is left; proven without signals or recovery")
            return self._final(t0, False, False, [], phases=(), immediate=True)
        live = self._live()
        phases: list[str] = []
        if live or not self._contained_empty():
            phases.append("term")
            self.log(f"teardown: TERM phase, {len(live)} member(s) alive, grace {b.grace:.1f}s")
            self._kill_all(live, signal.SIGTERM)
            self._wait_until_gone(min(b.grace, deadline - self.timer()))
        live = self._live()
        if live or not self._contained_empty():
            forced = True
            phases.append("kill")
            self.log(f"teardown: KILL phase, {len(live)} member(s) still alive")
            self._kill_all(live, signal.SIGKILL)
            self._wait_until_gone(min(b.kill_wait, deadline - self.timer() - 1.0), resend=signal.SIGKILL)
        reasons: list[str] = []
        recovered = False
        if b.recovery and self._members:
            phases.append("recovery")
            recovered = self._run_recovery(deadline - self.timer(), reasons)
        return self._final(t0, forced, recovered, reasons, phases=tuple(phases), immediate=False)

    def _proven_gone(self) -> bool:
        """With every member exited: whether cleanup is already proven. The cgroup (if
        any) reports ``populated 0`` and nothing left it, and once our exited children are
        reaped the kernel reports no child at all, which for a subreaper means no
        descendant (see ``_has_children``), so no /proc scan could find one. Anything
        less takes the full path."""
        if self._escaped or (self.cgroup is not None and self.cgroup.populated()):
            return False
        self._reap_exited_members()
        return not self._has_children()

    def _reap_exited_members(self) -> None:
        """Reap our own exited children, once no group of theirs needs its number kept."""
        for m in self._members:
            if m.spawned and m.exited and not m.reaped:
                try:
                    os.waitpid(m.pid, 0)
                except ChildProcessError:
                    pass
                m.reaped = True

    def _run_recovery(self, seconds: float, reasons: list[str]) -> bool:
        """Run offline recovery as a separate, credential-free process (failures go to
        ``reasons``). True when it had to signal a member itself."""
        if seconds <= 0.5:
            reasons.append("recovery_timeout")
            return False
        url = self.engine.url
        env = {k: os.environ[k] for k in RECOVERY_ENV if k in os.environ}
        argv = [*self.recovery_argv, str(self.attempt_id), "--wait", f"{max(0.5, min(self.budget.kill_wait, seconds / 2)):.2f}"]
        if url.password:
            env["CAMPAIGN_DB"] = url.render_as_string(hide_password=False)
        else:
            argv += ["--db", url.render_as_string(hide_password=False)]
        pass_fds: tuple[int, ...] = ()
        if self._lock_fd is not None:
            argv += ["--lock-fd", str(self._lock_fd)]
            pass_fds = (self._lock_fd,)
        self.log("recovery: starting offline recovery process")
        self.log.flush()
        proc = subprocess.Popen(argv, env=env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=pass_fds, start_new_session=True)
        self._excluded.add(proc.pid)
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
        return any(r.verification == "recovery_killed" for r in self._ledger_rows() or ())

    def _ledger_rows(self):
        try:
            return repository.ledger_for(self.engine, self.attempt_id)
        except Exception:  # the evidence itself is unreadable: fail closed
            return None

    def _has_children(self) -> bool:
        """Whether this process has any child at all, live or zombie. One syscall, answered
        by the kernel atomically (ECHILD means none), unlike any /proc scan. As a child
        subreaper, every live descendant of the attempt hangs, through live processes only,
        from one of our children (an exiting process hands its children up before it
        becomes a zombie), so "no children" proves "no descendants"."""
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return True

    def _drain_descendants(self, seconds: float) -> tuple[bool, int]:
        """After the kill phases: find our remaining children and their subtrees, pin,
        record and SIGKILL them, reap our zombies, until the kernel reports no child at
        all (proven) or ``seconds`` pass. Catches a chain of short-lived generations that
        every earlier sweep missed. Returns (proven, live descendants at the end)."""
        deadline = self.timer() + max(0.0, seconds)
        quiet = 0
        while True:
            if not self._has_children():
                return True, 0
            procs = self.proc.scan()
            children: dict[int, list[int]] = defaultdict(list)
            for pid, st in procs.items():
                if pid != self._me and pid not in self._excluded:
                    children[st.ppid].append(pid)
            # Our own children born during the attempt (older ones predate it and are
            # not the attempt's), then everything below them.
            ours = [p for p in children.get(self._me, ()) if procs[p].start_ticks >= self._since]
            subtree, frontier = set(ours), list(ours)
            while frontier:
                for child in children.get(frontier.pop(), ()):
                    if child not in subtree:
                        subtree.add(child)
                        frontier.append(child)
            live = 0
            for pid in sorted(subtree):
                st = procs[pid]
                if st.exited:
                    if st.ppid == self._me:
                        self._reap_any(pid)
                    continue
                live += 1
                m = next((x for x in self._members if x.pid == pid and x.start_ticks == st.start_ticks), None)
                if m is None:
                    m = self._adopt(st)
                if m is not None:
                    self._check_contained(m)
                    self._signal(m, signal.SIGKILL)
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
        live = [] if immediate else self._live()
        cgroup_ok = True
        if self.cgroup is not None:
            cgroup_ok = not self.cgroup.pids() and self.cgroup.remove()
            if not cgroup_ok:
                reasons.append("cgroup_busy")
        # Our own exited children are proven; reap them now that no group needs them.
        self._reap_exited_members()
        proven, late = self._drain_descendants(min(self.budget.kill_wait, 2.0))
        if late:
            self.log(f"teardown: {late} descendant(s) still alive after the final drain")
        elif not proven:
            self.log("teardown: no kernel proof that no descendant is left")
        if not immediate:
            self._sweep()
        live = [m for m in self._members if not self._check_exit(m)] if not live else live
        if self._escaped:
            reasons.append("escaped_cgroup")
        rows = self._ledger_rows()
        unverified = 0
        if rows is None:
            reasons.append("ledger_unreadable")
        else:
            ids = {r.id for r in rows}
            if any(m.ledger_id not in ids for m in self._members):
                reasons.append("ledger_missing")
            mine = {m.ledger_id: m for m in self._members}
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
                    self.log(f"unverified: {row.role} pid {row.pid} ({how})")
                self._safe(lambda r=row, s=state, h=how: repository.set_ledger_verdict(self.engine, r.id, state=s, verification=h, clock=self.clock))
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
        self._safe_record(verdict)
        return verdict

    def _emergency_kill(self) -> None:
        for action in (
            lambda: self.cgroup.kill() if self.cgroup is not None else None,
            lambda: [self._signal(m, signal.SIGKILL) for m in self._members],
            lambda: [self._killpg(g, signal.SIGKILL) for g in self._owned_groups()],
        ):
            self._safe(action)
        self.log("teardown failed; SIGKILL sent to every pinned member and owned group")

    def _teardown_pgid_only(self, t0: float) -> TeardownVerdict:  # pragma: no cover - non-Linux
        """Process groups only: no subreaper, no pidfd. Complete only when every owned
        group is verified empty; anything that left its group is unverifiable."""
        b = self.budget
        reasons: list[str] = []
        spawned = [m for m in self._members if m.spawned and not m.reaped]
        forced = False
        for sig, wait in ((signal.SIGTERM, b.grace), (signal.SIGKILL, b.kill_wait)):
            if all(self._check_exit(m) for m in spawned) and not any(self._group_alive(m.pgid) for m in spawned):
                break
            forced = sig == signal.SIGKILL
            for m in spawned:
                self._killpg(m.pgid, sig)
            deadline = self.timer() + wait
            while self.timer() < deadline and not (all(self._check_exit(m) for m in spawned) and not any(self._group_alive(m.pgid) for m in spawned)):
                self.sleep(b.poll)
        survivors = sum(1 for m in spawned if not self._check_exit(m) or self._group_alive(m.pgid))
        for m in spawned:
            if m.exited:
                try:
                    os.waitpid(m.pid, 0)
                except ChildProcessError:
                    pass
                m.reaped = True
        if survivors:
            reasons.append("survivors")
        if any(self._left_group(m) for m in spawned):
            reasons.append("platform_unverifiable")
        complete = not reasons
        verdict = TeardownVerdict(complete, ("forced" if forced else "clean") if complete else "unverified", "pgid-only", survivors, len(spawned), round(self.timer() - t0, 3), tuple(reasons))
        self._safe_record(verdict)
        return verdict

    def _group_alive(self, pgid: int | None) -> bool:  # pragma: no cover - non-Linux
        if pgid is None:
            return False
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def _left_group(self, m: Member) -> bool:  # pragma: no cover - non-Linux
        """Without a process table we cannot see a child that left the group; a
        leader that exited while its group lived on is the visible sign of it."""
        return m.exited and self._group_alive(m.pgid)

    # -- recording -------------------------------------------------------------

    def _safe(self, fn) -> bool:
        try:
            fn()
            return True
        except Exception as exc:  # recording must not abort teardown
            self.log(f"store write failed: {exc.__class__.__name__}")
            return False

    def _safe_record(self, verdict: TeardownVerdict) -> None:
        self._safe(lambda: self._update_attempt(cleanup_complete=verdict.cleanup_complete, teardown_outcome=verdict.outcome, containment=verdict.containment))
        self.log.flush()

    def _update_attempt(self, **fields) -> None:
        attempt = repository.get_attempt(self.engine, self.attempt_id)
        if attempt is None:
            raise SupervisorError(f"attempt {self.attempt_id} does not exist")
        repository.update_attempt(self.engine, self.attempt_id, expected=attempt.status, **fields)

    def _release(self) -> None:
        for m in self._members:
            if m.pidfd is not None:
                os.close(m.pidfd)
                m.pidfd = None
        if self._subreaper_set:
            set_subreaper(self._prev_subreaper)
            self._subreaper_set = False
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- disposal --------------------------------------------------------------

    def dispose(self, finalization_ok: bool = True):
        """Dispose of the private root after a verified teardown; records both facts."""
        from campaign.supervise import disposal

        verdict = self.teardown()
        result = disposal.dispose(self.root, finalization_ok=finalization_ok, cleanup_complete=verdict.cleanup_complete)
        disposal.record(self.engine, self.attempt_id, result)
        return result
