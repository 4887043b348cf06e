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

The parts, one module each: ``subreaper`` (the kernel calls behind unreaped
children and "no child left"), ``members`` (the registry of owned processes and
their ledger), ``discovery`` (scanning for descendants), ``shutdown`` (the
teardown algorithm). The Supervisor owns the lifecycle: enter, start, run,
quiesce, teardown, dispose.

Contract for callers: while a Supervisor is active the runner does not start
other child processes of its own (in subreaper mode any new child of the
runner is treated as belonging to the attempt). One Supervisor per process at a
time.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType

from sqlalchemy import Engine

from campaign import testhooks
from campaign.isolation import PrivateRoot
from campaign.store import repository
from campaign.supervise import confine, disposal
from campaign.supervise import pidfd as pidfds
from campaign.supervise.cgroup import AttemptCgroup, attempt_cgroup_name
from campaign.supervise.discovery import Discovery, Pace, now_ticks
from campaign.supervise.gate import Stdio, spawn_gated
from campaign.supervise.interrupt import critical
from campaign.supervise.members import Member, Members, Records, SupervisorError
from campaign.supervise.procfs import IS_LINUX, DarwinProc, ProcFS, default_proc
from campaign.supervise.rootmap import RootMap
from campaign.supervise.shutdown import RecoveryCommand, Shutdown, emergency_kill, record_verdict
from campaign.supervise.subreaper import Subreaper
from campaign.supervise.teardown import CleanupLog, RunResult, TeardownBudget, TeardownVerdict
from campaign.vocabulary import LEDGER_ROLES

# Names that lived in this module before its parts moved out, still importable here
# (``name as name`` marks a re-export).
from campaign.supervise.shutdown import RECOVERY_ENV as RECOVERY_ENV
from campaign.supervise.subreaper import (
    PR_GET_CHILD_SUBREAPER as PR_GET_CHILD_SUBREAPER,
    PR_SET_CHILD_SUBREAPER as PR_SET_CHILD_SUBREAPER,
    get_subreaper as get_subreaper,
    set_subreaper as set_subreaper,
)

# Roles a process is started in; "descendant" is only ever found, never started.
ROLES = tuple(role for role in LEDGER_ROLES if role != "descendant")


class Process:
    """Handle returned by ``Supervisor.start`` for a background process."""

    def __init__(self, members: Members, discovery: Discovery, member: Member) -> None:
        self._members = members
        self._discovery = discovery
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
        self._members.exited(self._m)
        return self._m.exit_code

    @property
    def returncode(self) -> int | None:
        return self.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        self._discovery.wait(self._m, timeout, sweep=True)
        return self._m.exit_code

    def terminate(self, grace: float) -> bool:
        """SIGTERM through its pidfd, then wait up to ``grace`` seconds; whether it exited.

        For members that finish their work on TERM (the profiler writes its flush
        marker); anything left is still torn down with the attempt.
        """
        self._members.signal(self._m, signal.SIGTERM)
        self._discovery.wait(self._m, grace)
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
        clock: Callable[[], dt.datetime] = repository.utcnow,
        timer: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        proc: ProcFS | DarwinProc | None = None,
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
        self._records = Records(engine, attempt_id, clock)
        self.linux = IS_LINUX and self.proc.available and pidfds.available()
        self.members = Members(self._records, self.proc, linux=self.linux)
        # Discovery and the teardown algorithm, made on entry once containment is known.
        self._shutdown: Shutdown | None = None
        self._subreaper = Subreaper()
        self._me = os.getpid()
        self._lock_fd: int | None = None
        self._verdict: TeardownVerdict | None = None
        self._entered = False

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
        since = 0
        if self.linux:
            self.linux = self.members.linux = self._subreaper.become()
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
            since = now_ticks()
            # Members get their own cgroup and mount namespaces, a read-only cgroupfs and
            # no CAP_SYS_ADMIN, so they can neither leave the cgroup nor mount over the host.
            self._confine = confine.cgroup_mounts() if self.confine_members and confine.available() else None
        self._records.update_attempt(containment=self.containment, private_root=str(self.root.path))
        discovery = Discovery(self.members, self.log, Pace(self.budget, self.timer, self.sleep), cgroup=self.cgroup, since=since, me=self._me)
        recovery = RecoveryCommand(tuple(self.recovery_argv), self.engine.url, self.attempt_id, self._lock_fd)
        self._shutdown = Shutdown(discovery, containment=self.containment, recovery=recovery)
        self._entered = True
        confined = "; members confined (cgroup+mount namespaces, read-only cgroupfs, no CAP_SYS_ADMIN)" if self._confine is not None else ""
        self.log(f"supervisor start: attempt {self.attempt_id}, containment {self.containment}{confined}")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
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
        root_map: RootMap | None = None,
    ) -> Process:
        """Start a background process behind the exec gate (ledger row first); with
        ``root_map``, in a root of its own with the map's paths (``rootmap``)."""
        active = self._active("start")
        if role not in ROLES:
            raise SupervisorError(f"role must be one of {', '.join(ROLES)}")
        if root_map is not None and self._confine is None:
            raise SupervisorError("a root map needs confined members: the runner must hold CAP_SYS_ADMIN")
        holder: dict[str, Member] = {}

        def on_forked(pid: int) -> None:
            fd = os.pidfd_open(pid) if self.linux else None
            ticks = self.proc.start_ticks(pid)
            if ticks is None:
                raise SupervisorError(f"cannot read the start time of the new {role} process")
            member = holder["m"] = self.members.add(Member(role, pid, ticks, pid, spawned=True, pidfd=fd))
            if self.cgroup is not None:
                self.cgroup.add(pid)
            self.members.record(member)
            testhooks.reached("ledger")

        with critical():
            try:
                where = {"cwd_fd": cwd_fd} if cwd_fd is not None else {"cwd": cwd or self.root.cwd}
                spawn_gated(argv, **where, env=env, on_forked=on_forked, stdout=stdout, stderr=stderr, stdin=stdin, confine=self._confine, root_map=root_map)
            except BaseException:
                member = holder.get("m")
                if member is not None:
                    # The child was reaped by the gate after aborting or failing exec.
                    member.exited = member.reaped = True
                raise
        member = holder["m"]
        self.log(f"spawned {role} pid {member.pid} ledger {member.ledger_id}")
        self.log.flush()
        return Process(self.members, active.discovery, member)

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
        root_map: RootMap | None = None,
    ) -> RunResult:
        """Run a deadline-owned command. Whatever happens, its process group (same-group
        background children included) is stopped before this returns.

        ``stop_when`` is asked between waits (every ``budget.sweep_interval``); when it
        answers True the command is stopped like one at its deadline, and the result
        says ``stopped`` instead of ``timed_out``."""
        t0 = self.timer()
        handle = self.start(role, argv, cwd=cwd, cwd_fd=cwd_fd, env=env, stdout=stdout, stderr=stderr, stdin=stdin, root_map=root_map)
        m = handle._m
        active = self._active("run")
        active.discovery.wait(m, timeout, sweep=True, stop_when=stop_when)
        ended = not m.exited
        stopped = ended and stop_when is not None and stop_when()
        timed_out = ended and not stopped
        why = None
        if ended:
            why = "was stopped by its watch" if stopped else f"hit its {timeout:.1f}s deadline"
        with critical():
            active.stop_command(m, why)
        wall = self.timer() - t0
        return RunResult(exit_code=None if ended else m.exit_code, timed_out=timed_out, wall_seconds=wall, stopped=stopped)

    def quiesce(self) -> bool:
        """Stop every member still alive (what the agent left running, the runtime, the
        replay provider) and wait until they are gone; whether that was proven.

        Called before the hidden verifier runs: nothing the agent started may change the
        working copy while the suite judges it."""
        if self._shutdown is None:
            return True  # not entered: nothing can have been spawned
        return self._shutdown.quiesce()

    def verify_ledger(self) -> None:
        """Check, from the store, that every member's ledger row is there and unaltered.
        Lanes call it after the runtime boots and before any paid call."""
        self.members.verify_ledger()

    def _active(self, call: str) -> Shutdown:
        """The parts made on entry, for a ``call`` that needs a live Supervisor."""
        if not self._entered or self._shutdown is None or self._verdict is not None:
            raise SupervisorError(f"{call}() needs an active Supervisor that has not been torn down")
        return self._shutdown

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
                        emergency_kill(self.members, self.cgroup, self.log)
                        self._verdict = TeardownVerdict(False, "unverified", self.containment, survivors=-1, reasons=("survivors",))
                        record_verdict(self._records, self.log, self._verdict)
                    self._release()
        return self._verdict

    def _teardown(self, t0: float) -> TeardownVerdict:
        if not self._entered or self._shutdown is None:  # nothing can have been spawned
            if self.cgroup is not None:
                self.cgroup.remove()
            return TeardownVerdict(True, "clean", self.containment, survivors=0)
        return self._shutdown.teardown(t0)

    def _release(self) -> None:
        self.members.release()
        self._subreaper.restore()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- disposal --------------------------------------------------------------

    def dispose(self, finalization_ok: bool = True) -> disposal.DisposalResult:
        """Dispose of the private root after a verified teardown; records both facts."""
        verdict = self.teardown()
        result = disposal.dispose(self.root, finalization_ok=finalization_ok, cleanup_complete=verdict.cleanup_complete)
        disposal.record(self.engine, self.attempt_id, result)
        return result
