"""`campaign coding` without --paired: the nonpaired lane as a user runs it (real processes)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from campaign import benchmark

TASKS = "semver-precedence,invoice-rounding"


def _campaign(tmp_path: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "campaign", "coding", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        **kw,
    )


def _agent_file(tmp_path: Path, *modes: str) -> Path:
    """The offline profile, made to misbehave: the env allowlist drops mode variables."""
    text = (Path(benchmark.__file__).parents[1] / "agents" / "profiles" / "offline.toml").read_text()
    extra = "".join(f'  "--mode", "{m}",\n' for m in modes)
    path = tmp_path / "misbehaving.toml"
    path.write_text(text.replace('  "--trial-id", "{trial_id}",\n', '  "--trial-id", "{trial_id}",\n' + extra))
    return path


def test_runs_each_task_once_and_writes_report_and_store(tmp_path):
    out, db = tmp_path / "out" / "report.json", tmp_path / "store.db"
    proc = _campaign(tmp_path, "--tasks", TASKS, "--output", str(out), "--db", str(db))
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "[1/2] semver-precedence:" in stderr and "[2/2] invoice-rounding:" in stderr
    assert f"report: {out}" in stdout and f"store: {db}" in stdout
    report = json.loads(out.read_text())
    assert report["kind"] == "nonpaired_coding_run" and report["synthetic"] is True
    assert [t["task"] for t in report["trials"]] == TASKS.split(",")
    assert report["attempts"] == 2 and report["state"] == "completed"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT kind, state FROM campaigns").fetchall() == [("nonpaired", "completed")]
        assert conn.execute("SELECT count(*) FROM attempts WHERE cleanup_complete = 1 AND disposal_complete = 1").fetchone()[0] == 2
    assert not list(tmp_path.glob("campaign-paired-runtime-*"))


def test_bad_task_name_writes_nothing(tmp_path):
    out, db = tmp_path / "report.json", tmp_path / "store.db"
    proc = _campaign(tmp_path, "--tasks", "no-such-task", "--output", str(out), "--db", str(db))
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "--tasks" in stderr and "no-such-task" in stderr
    assert not out.exists() and not db.exists()


def test_interrupt_mid_attempt_exits_130_with_the_row_persisted(tmp_path):
    out, db = tmp_path / "report.json", tmp_path / "store.db"
    agent = _agent_file(tmp_path, "hang")
    proc = _campaign(tmp_path, "--tasks", TASKS, "--agent", str(agent), "--output", str(out), "--db", str(db))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # Wait on the condition the interrupt must find: a client in the ledger.
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    if conn.execute("SELECT count(*) FROM ledger WHERE role = 'client'").fetchone()[0]:
                        break
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT state, stop_reason FROM campaigns").fetchone() == ("interrupted", "interrupted")
        rows = conn.execute("SELECT status, outcome, cleanup_complete FROM attempts").fetchall()
        assert rows == [("interrupted", "interrupted", 1)]
        statuses = conn.execute("SELECT status, not_attempted_reason FROM trials ORDER BY position").fetchall()
        # The interrupted attempt carries no verdict: its trial has no result, and says why.
        assert statuses == [("not_attempted", "interrupted"), ("not_attempted", "interrupted")]
    assert json.loads(out.read_text())["state"] == "interrupted"
