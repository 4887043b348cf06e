"""Gated spawn: the ledger row is committed before the target can run."""

from __future__ import annotations

import os
import sys

import pytest

from campaign import isolation
from campaign.store import repository
from campaign.supervise import Supervisor, TeardownBudget
from campaign.supervise.gate import GATE_ABORTED, SpawnError, spawn_gated
from campaign.supervise.procfs import ProcFS, parse_stat

FAST = TeardownBudget(grace=0.5, kill_wait=3.0, run_grace=0.3)

# The target looks itself up in the store: it can only find its row if the row
# was committed before it was allowed to run.
LOOKUP = (
    "import os, sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1])\n"
    "rows = c.execute('select role, start_ticks, pgid from ledger where pid = ?', (os.getpid(),)).fetchall()\n"
    "stat = open('/proc/self/stat').read().rsplit(')', 1)[1].split()\n"
    "print(rows, stat[19], os.getpgid(0), os.getsid(0))\n"
)


def test_ledger_row_is_committed_before_the_target_runs(engine, make_attempt, db_path, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    env = isolation.build_env(root, os.environ)
    out = root.capture("lookup.out")
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        res = sup.run("fixture", [sys.executable, "-I", "-c", LOOKUP, str(db_path)], env=env, timeout=30, stdout=out)
    assert res.exit_code == 0 and not res.timed_out
    row = repository.ledger_for(engine, attempt_id)[0]
    assert out.read_text().split(" ", 1)[0] != "[]"
    expected = f"[('fixture', {row.start_ticks}, {row.pid})] {row.start_ticks} {row.pid} {row.pid}"
    assert out.read_text().strip() == expected  # its own row, its own birth, its own session and group
    assert row.boot_id == ProcFS().boot_id() and row.pid_ns == ProcFS().pid_ns()
    assert row.discovered is False and row.state == "gone"


def test_a_failed_ledger_commit_means_the_target_never_runs(tmp_path):
    marker = tmp_path / "ran"
    forked = []

    def on_forked(pid):
        forked.append(pid)
        raise RuntimeError("store unavailable")

    with pytest.raises(RuntimeError):
        spawn_gated(["sh", "-c", f"echo > {marker}"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, on_forked=on_forked)
    assert not marker.exists()
    with pytest.raises(ChildProcessError):  # aborted and already reaped: nothing left running
        os.waitpid(forked[0], os.WNOHANG)


def test_the_gate_holds_until_released(tmp_path):
    marker = tmp_path / "ran"
    seen = {}

    def on_forked(pid):
        import time

        time.sleep(0.3)  # every chance to run, were it not gated
        seen["before"] = marker.exists()
        seen["state"] = ProcFS().stat(pid).state

    pid = spawn_gated(["sh", "-c", f"echo > {marker}"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, on_forked=on_forked)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert seen == {"before": False, "state": "S"} and marker.exists()


def test_exec_failures_are_reported_and_leave_nothing(tmp_path):
    bad = tmp_path / "not-a-binary"
    bad.write_bytes(b"\x00\x01garbage")
    bad.chmod(0o755)
    with pytest.raises(SpawnError, match="exec"):
        spawn_gated([str(bad)], cwd=tmp_path, env={"PATH": "/bin"}, on_forked=lambda pid: None)
    with pytest.raises(SpawnError, match="not found"):
        spawn_gated(["no-such-tool-xyz"], cwd=tmp_path, env={"PATH": "/bin"}, on_forked=lambda pid: None)
    with pytest.raises(SpawnError, match="working directory"):
        spawn_gated(["true"], cwd=tmp_path / "missing", env={"PATH": "/bin"}, on_forked=lambda pid: None)


def test_gate_abort_exit_code_is_distinct():
    assert GATE_ABORTED == 125


def test_stat_parsing_survives_hostile_command_names():
    data = b"4242 (a) b (c) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 1 1 1\n"
    st = parse_stat(4242, data)
    assert (st.state, st.ppid, st.pgrp, st.session, st.start_ticks) == ("S", 1, 4242, 4242, 987654)
    me = ProcFS().stat(os.getpid())
    assert me.pid == os.getpid() and me.start_ticks > 0
