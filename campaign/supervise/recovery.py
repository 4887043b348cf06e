"""Offline recovery: prove, from the ledger alone, that an attempt's processes are gone.

Recovery runs as its own process (``campaign recover``), receives no
credentials and boots nothing. It reads only the attempt row and its ledger
rows, and signals only a member whose birth-bound proof still holds: a pidfd
is opened first, then the start time and boot id are re-checked, then
``pidfd_send_signal`` (to the member's process group when it leads one). It
never scans the process table to infer ownership.

A verdict is complete only with a containment witness for processes the ledger
may not name: the attempt's cgroup (empty and removed), or, when the live
supervisor delegates to us (``lock_fd``), that supervisor's own sweep. An
unreadable ledger, another pid namespace, or no witness fail closed as
``cleanup_unverified``.

An attempt with no ledger row at all never started a process: every process
is held at its exec gate until its row is committed, and a gated child whose
runner died reads EOF and exits without running anything. That is the proof
for a runner killed between the attempt row and its first spawn, once the
attempt's cgroup, if it made one, is empty and removed. A row that records
what a client returned says a process did run, so there a missing ledger
still fails closed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Engine

from campaign import testhooks
from campaign.errors import Interrupted, UsageProblem
from campaign.store import repository
from campaign.supervise import pidfd as pidfds
from campaign.containers import attempt_container_name
from campaign.supervise import container_record
from campaign.supervise.cgroup import AttemptCgroup, attempt_cgroup_name, remove_v1_twins
from campaign.supervise.procfs import default_proc


@dataclass
class AttemptRecovery:
    attempt_id: int
    cleanup_complete: bool
    members: int = 0
    proven: int = 0
    signalled: int = 0
    unverified: int = 0
    alive: int = 0
    reasons: list[str] = field(default_factory=list)
    skipped: str | None = None
    private_root: str | None = None
    nothing_started: bool = False  # no ledger row: no process of the attempt ever ran
    container: str | None = None  # the attempt's container, where its task ran in one
    runtime: str | None = None  # ... and the runtime's command that started it

    def line(self) -> str:
        head = f"attempt {self.attempt_id}:"
        if self.skipped == "already_verified":
            return f"{head} cleanup already verified; nothing to do"
        if self.skipped == "live_supervisor":
            return f"{head} still supervised by a live runner; not touched (run recover again after it ends)"
        if self.cleanup_complete and self.nothing_started:
            return f"{head} cleanup verified: no process was ever started for it (no ledger row; nothing of it is running)"
        if self.cleanup_complete:
            return f"{head} cleanup verified ({self.proven} ledger member(s) proven gone, {self.signalled} signalled)"
        kept = f"; private root kept at {self.private_root}" if self.private_root else ""
        if self.container and "container_kept" in self.reasons:
            kept += f"; container {self.container} kept for inspection (remove it with {self.runtime or 'podman'} rm -f {self.container})"
        why = ", ".join(_REASON_TEXT.get(r, r) for r in dict.fromkeys(self.reasons)) or "not proven"
        return f"{head} cleanup_unverified: {self.unverified} of {self.members} ledger member(s) not proven gone; {why}{kept}; later trials stay blocked"


_REASON_TEXT = {
    "ledger_missing": "no ledger rows for an attempt that ran",
    "ledger_unreadable": "ledger unreadable",
    "survivors": "members still alive",
    "unprovable_member": "some members cannot be checked here (other pid namespace or no pidfd)",
    "no_containment_witness": "no cgroup witness: unrecorded descendants cannot be excluded after the supervisor was lost",
    "cgroup_busy": "the attempt's cgroup is still populated",
    "container_kept": "its container could not be shown removed",
}


def _open_root(path: str | None) -> int | None:
    """The retained private root, pinned: a real directory we own, not a symlink."""
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or (st.st_mode & 0o077):
        os.close(fd)
        return None
    return fd


def supervisor_alive(private_root: str | None) -> bool:
    """A live supervisor holds an exclusive flock on ``supervisor.lock`` in its root."""
    dfd = _open_root(private_root)
    if dfd is None:
        return False
    try:
        fd = os.open("supervisor.lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)  # a planted FIFO must not block
    except OSError:
        return False
    finally:
        os.close(dfd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)


def delegated_by(private_root: str | None, lock_fd: int | None) -> bool:
    """True when ``lock_fd`` is the live supervisor's own lock (we run on its behalf)."""
    if lock_fd is None:
        return False
    dfd = _open_root(private_root)
    if dfd is None:
        return False
    try:
        return os.path.samestat(os.fstat(lock_fd), os.stat("supervisor.lock", dir_fd=dfd, follow_symlinks=False))
    except OSError:
        return False
    finally:
        os.close(dfd)


def _append_log(private_root: str | None, lines: list[str]) -> None:
    dfd = _open_root(private_root)
    if dfd is None:
        return
    try:
        fd = os.open("cleanup.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            os.write(fd, "".join(f"recover: {line}\n" for line in lines).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def recover_attempt(
    engine: Engine,
    attempt_id: int,
    *,
    wait: float = 10.0,
    lock_fd: int | None = None,
    proc=None,
    clock: Callable = repository.utcnow,
    timer: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> AttemptRecovery:
    proc = proc or default_proc()
    attempt = repository.get_attempt(engine, attempt_id)
    if attempt is None:
        raise UsageProblem(f"no attempt {attempt_id} in this store; list attempts with `campaign sql`", option="ATTEMPT_ID")
    report = AttemptRecovery(attempt_id, cleanup_complete=False, private_root=attempt.private_root)
    delegated = delegated_by(attempt.private_root, lock_fd)
    if not delegated:
        if attempt.cleanup_complete is True:
            report.cleanup_complete, report.skipped = True, "already_verified"
            return report
        if supervisor_alive(attempt.private_root):
            report.skipped, report.reasons = "live_supervisor", ["live_supervisor"]
            return report
    log: list[str] = []
    try:
        testhooks.reached("recovering")
        rows = repository.ledger_for(engine, attempt_id)
    except Interrupted:
        raise  # the operator's stop, not an unreadable ledger: nothing is recorded
    except Exception:
        rows = None
    if rows is None:
        report.reasons.append("ledger_unreadable")
    elif not rows:
        report.nothing_started = not _client_ran(attempt)
        if not report.nothing_started:
            report.reasons.append("ledger_missing")
    rows = rows or []
    report.members = len(rows)

    # 1. Visit every ledger member; signal only proven ones.
    pending: list[tuple[object, pidfds.Probe]] = []
    for row in rows:
        probe = pidfds.verify(proc, row.pid, row.start_ticks, row.boot_id, row.pid_ns)
        if probe.status == pidfds.ALIVE:
            _kill(probe.pidfd, leads_group=row.pgid == row.pid and _pgrp(proc, row.pid) == row.pgid)
            report.signalled += 1
            log.append(f"signalled {row.role} pid {row.pid} (identity proven)")
            pending.append((row, probe))
        else:
            _verdict(engine, row, probe.status == pidfds.GONE, probe.reason, clock, report)
            log.append(f"{row.role} pid {row.pid}: {probe.reason}")

    # 2. The cgroup witness, when the attempt had one (a runner killed right after making
    # it never recorded its containment, so an unrecorded one is looked for too).
    group = None
    if attempt.containment in ("cgroup2", None):
        group = AttemptCgroup.locate(attempt_cgroup_name(attempt.id, attempt.campaign_id, attempt.started_at))
        if group is not None and group.pids():
            group.kill()
            log.append("cgroup.kill written")

    deadline = timer() + wait
    for row, probe in pending:
        gone = pidfds.wait_exit(probe.pidfd, max(0.0, deadline - timer()))
        probe.close()
        _verdict(engine, row, gone, "recovery_killed" if gone else "alive", clock, report)
    if group is not None:
        while group.pids() and timer() < deadline:
            sleep(0.02)
        if group.pids() or not group.remove():
            report.reasons.append("cgroup_busy")
        else:
            log.append("cgroup empty and removed")
    if attempt.containment != "cgroup2" and not delegated and not report.nothing_started:
        report.reasons.append("no_containment_witness")
    # 3. The attempt's container, once its processes are proven gone: the runtime still
    # keeps a container whose conmon was killed; removed, and the runtime asked that it is.
    runtime = container_record.read_runtime(attempt.private_root)
    if runtime is not None:
        cgroup_name = attempt_cgroup_name(attempt.id, attempt.campaign_id, attempt.started_at)
        report.container, report.runtime = attempt_container_name(cgroup_name), os.path.basename(runtime)
        if report.alive or not container_record.remove(runtime, report.container):
            report.reasons.append("container_kept")
        else:
            log.append(f"container {report.container} removed")
        if remove_v1_twins(cgroup_name):
            report.reasons.append("cgroup_busy")

    if report.alive:
        report.reasons.insert(0, "survivors")
    if report.unverified > report.alive:
        report.reasons.append("unprovable_member")
    report.cleanup_complete = not report.reasons and report.unverified == 0
    fresh = repository.get_attempt(engine, attempt_id)
    if not delegated and fresh.status == "running":
        # Only an unfinished row (its runner died) takes the verdict; a finished row is
        # sealed evidence, and a later proof must never rewrite it to clear a stop.
        outcome = "recovered" if report.cleanup_complete else "unverified"
        repository.update_attempt(engine, attempt_id, cleanup_complete=report.cleanup_complete, teardown_outcome=outcome)
    log.append(report.line())
    _append_log(attempt.private_root, log)
    return report


def _client_ran(attempt) -> bool:
    """The row holds what a client or verifier returned: some process of it did run."""
    seen = (attempt.wall_seconds, attempt.completed_turns, attempt.output_tokens, attempt.cost_usd, attempt.verifier_exit_code)
    return any(value is not None for value in seen)


def _verdict(engine: Engine, row, gone: bool, reason: str, clock, report: AttemptRecovery) -> None:
    if gone:
        report.proven += 1
    else:
        report.unverified += 1
        report.alive += reason == "alive"
    repository.set_ledger_verdict(engine, row.id, state="gone" if gone else "unverified", verification=reason, clock=clock)


def _pgrp(proc, pid: int) -> int | None:
    st = proc.stat(pid)
    return st.pgrp if st else None


def _kill(fd: int | None, *, leads_group: bool) -> None:
    if fd is None:
        return
    if leads_group and pidfds.group_signalling_supported() is not False:
        try:
            pidfds.send_signal(fd, signal.SIGKILL, group=True)
            return
        except NotImplementedError:
            pass
    pidfds.send_signal(fd, signal.SIGKILL)


def recover_all(engine: Engine, **kwargs) -> list[AttemptRecovery]:
    """Every attempt whose cleanup is not yet verified."""
    return [recover_attempt(engine, a.id, **kwargs) for a in repository.unresolved_attempts(engine) if a.cleanup_complete is not True]


def main(argv: list[str] | None = None) -> int:
    """Lean entry point used by a live supervisor (``python -I -m campaign.supervise.recovery``).

    Same arguments and verdicts as ``campaign recover``, without importing the
    rest of the CLI, so teardown neither waits for nor depends on unrelated
    command modules.
    """
    import argparse
    import sys

    from campaign.errors import CampaignError
    from campaign.store.engine import make_engine, resolve_url

    parser = argparse.ArgumentParser(prog="campaign recover", description="Offline, credential-free cleanup from the ledger alone.")
    parser.add_argument("attempt_id", type=int)
    parser.add_argument("--db", default=None)
    parser.add_argument("--wait", type=float, default=10.0)
    parser.add_argument("--lock-fd", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        engine = make_engine(resolve_url(args.db, must_exist=True))
        try:
            report = recover_attempt(engine, args.attempt_id, wait=args.wait, lock_fd=args.lock_fd)
        finally:
            engine.dispose()
    except CampaignError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    print(report.line())
    if not report.cleanup_complete:
        print(f"Error: cleanup unverified for attempt {args.attempt_id}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
