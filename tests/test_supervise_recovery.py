"""Offline recovery: only proven members are signalled, and only proof completes cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from helpers import procs
from helpers.procs import RUNNER, alive, start_ticks, wait_for, wait_pids

from campaign.store import repository
from campaign.store.repository import LedgerMember
from campaign.supervise import recovery
from campaign.supervise.procfs import ProcFS

pids_file = procs.pids_file  # fixture
tmp_base = procs.tmp_base  # fixture

PROC = ProcFS()
MODES = procs.containment_modes()
RECOVER = [sys.executable, "-I", "-m", "campaign", "recover"]
CLEAN_ENV = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}


def _member(role, pid, ticks, **kw):
    base = dict(role=role, pid=pid, start_ticks=ticks, boot_id=PROC.boot_id(), pid_ns=PROC.pid_ns(), pgid=None)
    base.update(kw)
    return LedgerMember(**base)


@pytest.fixture
def bystander():
    """A live process of ours that no ledger owns."""
    proc = subprocess.Popen(["sleep", "60"])
    wait_for(lambda: start_ticks(proc.pid))
    yield proc
    proc.kill()
    proc.wait()


def test_stale_start_time_is_never_signalled(engine, make_attempt, bystander):
    attempt_id, _ = make_attempt()
    owned = subprocess.Popen(["sleep", "60"])
    try:
        ticks = wait_for(lambda: start_ticks(owned.pid))
        stale = repository.record_ledger(engine, attempt_id, _member("runtime", bystander.pid, start_ticks(bystander.pid) - 1))
        proven = repository.record_ledger(engine, attempt_id, _member("client", owned.pid, ticks))
        report = recovery.recover_attempt(engine, attempt_id, wait=5)
        assert bystander.poll() is None  # same pid, different birth: untouched
        assert owned.wait(5) == -signal.SIGKILL  # identity proven: stopped
        verdicts = {r.id: (r.state, r.verification) for r in repository.ledger_for(engine, attempt_id)}
        assert verdicts == {stale: ("gone", "pid_reused"), proven: ("gone", "recovery_killed")}
        assert report.signalled == 1 and report.proven == 2
        # No cgroup and no live supervisor: unrecorded descendants cannot be excluded.
        assert not report.cleanup_complete and report.reasons == ["no_containment_witness"]
    finally:
        owned.kill()
        owned.wait()


def test_other_boot_is_gone_other_namespace_is_unverified(engine, make_attempt, bystander):
    attempt_id, _ = make_attempt()
    ticks = start_ticks(bystander.pid)
    repository.record_ledger(engine, attempt_id, _member("runtime", bystander.pid, ticks, boot_id="00000000-0000-0000-0000-000000000000"))
    repository.record_ledger(engine, attempt_id, _member("client", bystander.pid, ticks, pid_ns="pid:[1]"))
    report = recovery.recover_attempt(engine, attempt_id, wait=1)
    assert bystander.poll() is None
    states = [(r.state, r.verification) for r in repository.ledger_for(engine, attempt_id)]
    assert states == [("gone", "rebooted"), ("unverified", "other_pid_namespace")]
    assert not report.cleanup_complete and "unprovable_member" in report.reasons


def test_missing_ledger_of_an_attempt_that_ran_is_cleanup_unverified(engine, make_attempt):
    attempt_id, _ = make_attempt()
    repository.update_attempt(engine, attempt_id, output_tokens=12)  # a client's counters: something ran
    report = recovery.recover_attempt(engine, attempt_id)
    assert not report.cleanup_complete and "ledger_missing" in report.reasons
    assert "no ledger rows" in report.line()
    row = repository.get_attempt(engine, attempt_id)
    assert (row.cleanup_complete, row.teardown_outcome) == (False, "unverified")


needs_cgroup = pytest.mark.skipif("cgroup2" not in MODES, reason="no writable cgroup v2")


def test_no_ledger_row_means_nothing_was_started(engine, make_attempt):
    # A runner killed between the attempt row and its first spawn: no process of the
    # attempt ever passed its exec gate, which is the proof (no cgroup witness needed).
    attempt_id, _ = make_attempt()
    report = recovery.recover_attempt(engine, attempt_id)
    assert report.cleanup_complete and report.nothing_started and report.reasons == []
    assert "no process was ever started" in report.line()
    row = repository.get_attempt(engine, attempt_id)
    assert (row.cleanup_complete, row.teardown_outcome) == (True, "recovered")


@needs_cgroup
def test_no_ledger_row_and_a_cgroup_the_killed_runner_made_but_never_recorded(engine, make_attempt):
    # Killed right after making the attempt's cgroup, before recording its containment, and
    # with a process forked into it that never got past its gate: cgroup.kill and rmdir.
    from campaign.supervise.cgroup import AttemptCgroup, attempt_cgroup_name

    attempt_id, _ = make_attempt()
    row = repository.get_attempt(engine, attempt_id)
    group = AttemptCgroup.create(attempt_cgroup_name(row.id, row.campaign_id, row.started_at))
    gated = subprocess.Popen(["sleep", "60"])
    try:
        group.add(gated.pid)
        report = recovery.recover_attempt(engine, attempt_id, wait=5)
        assert gated.wait(5) == -signal.SIGKILL
    finally:
        gated.kill()
        gated.wait()
    assert report.cleanup_complete and report.nothing_started
    assert not group.exists()


def _start_runner(db_url, attempt_id, trial, tmp_base, pids_file, containment, sweep=0.1):
    ready = tmp_base / "ready"
    proc = subprocess.Popen(
        [*RUNNER, db_url, str(attempt_id), str(trial.id), str(tmp_base), str(pids_file), str(ready), containment, str(sweep)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    rows = wait_pids(pids_file, ["self", "self", "self", "escaped"], timeout=30)
    wait_for(lambda: ready.exists() and ready.read_text())
    return proc, rows, ready.read_text()


def _recover(attempt_id, db_url):
    return subprocess.run([*RECOVER, str(attempt_id), "--db", db_url], env=CLEAN_ENV, capture_output=True, text=True, timeout=60)


CRASHES = [
    # cgroup: the escapee is never recorded, yet cgroup.kill stops it and the removed cgroup proves it.
    pytest.param("cgroup2", 1000.0, id="cgroup2-unrecorded-escapee", marks=pytest.mark.skipif("cgroup2" not in MODES, reason="no writable cgroup v2")),
    # subreaper: every member recorded and stopped, but without a witness the attempt stays blocked.
    pytest.param("subreaper-pidfd", 0.1, id="subreaper-recorded"),
    # subreaper: an escapee born after the last sweep survives; that is why it stays blocked.
    pytest.param("subreaper-pidfd", 1000.0, id="subreaper-unrecorded-escapee"),
]


@pytest.mark.parametrize(("containment", "sweep"), CRASHES)
def test_recovery_after_the_runner_was_killed(engine, db_url, make_attempt, tmp_base, pids_file, containment, sweep):
    attempt_id, trial = make_attempt()
    runner, rows, root = _start_runner(db_url, attempt_id, trial, tmp_base, pids_file, containment, sweep)
    escapee = next(r for r in rows if r[0] == "escaped")
    try:
        busy = _recover(attempt_id, db_url)  # while the runner lives, recovery refuses to touch it
        assert busy.returncode == 1 and "still supervised by a live runner" in busy.stdout
        assert all(alive(pid, ticks) for _l, pid, ticks in rows)
        if sweep < 1:
            wait_for(lambda: any(r.pid == escapee[1] for r in repository.ledger_for(engine, attempt_id)))
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(10)
    assert all(alive(pid, ticks) for _l, pid, ticks in rows)  # orphans outlive their runner
    recorded = {r.pid for r in repository.ledger_for(engine, attempt_id)}
    assert (escapee[1] in recorded) == (sweep < 1)

    done = _recover(attempt_id, db_url)
    ledger = repository.ledger_for(engine, attempt_id)
    assert all(r.state == "gone" for r in ledger)  # every ledger member proven gone
    assert all(not alive(pid, ticks) for _l, pid, ticks in rows if pid in recorded)
    attempt = repository.get_attempt(engine, attempt_id)
    if containment == "cgroup2":
        assert done.returncode == 0, done.stdout + done.stderr
        assert "cleanup verified" in done.stdout
        assert not alive(escapee[1], escapee[2])
        assert (attempt.cleanup_complete, attempt.teardown_outcome) == (True, "recovered")
    else:
        assert done.returncode == 1 and "no cgroup witness" in done.stdout
        assert "cleanup unverified for attempt(s)" in done.stderr
        assert attempt.cleanup_complete is False
        assert alive(escapee[1], escapee[2]) == (sweep > 1)
    assert os.path.isdir(root) and "recover:" in open(os.path.join(root, "cleanup.log")).read()
