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


# --- the credential goes to the provider whose upstream the client talks to ------------


def _without_keys(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.endswith("_API_KEY")}


def test_a_client_routed_to_another_provider_needs_that_providers_key(tmp_path, tokenizer_cache):
    """Codex routed to anthropic talks to Anthropic's upstream: it gets ANTHROPIC_API_KEY
    (under the name codex reads), never the OPENAI_API_KEY its profile defaults to. Before,
    the OpenAI key was sent to api.anthropic.com."""
    out, db = tmp_path / "report.json", tmp_path / "store.db"
    env = {**_without_keys(os.environ), "TMPDIR": str(tmp_path), "OPENAI_API_KEY": "sk-canary-openai-0123456789", "CAMPAIGN_TOKENIZER_CACHE": str(tokenizer_cache)}
    args = ["coding", "--agent", "codex", "--model", "anthropic:claude-sonnet-4-5", "--tasks", "semver-precedence", "--output", str(out), "--db", str(db)]
    done = subprocess.run([sys.executable, "-m", "campaign", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("Error:")]
    assert "--model" in line and "provider anthropic" in line and "needs ANTHROPIC_API_KEY" in line
    assert not db.exists() and not out.exists()


def test_credentials_follow_the_upstream_not_the_profile():
    from campaign.agents.profiles import load_profile
    from campaign.lanes.nonpaired import _credentials
    from campaign.providers import load_catalog

    catalog = {p.name: p for p in load_catalog().providers}
    codex = load_profile("codex")
    assert _credentials(codex, catalog["anthropic"]) == ("ANTHROPIC_API_KEY",)
    assert _credentials(codex, catalog["openai-codex"]) == ("OPENAI_API_KEY",)
    assert _credentials(codex, catalog["replay"]) == ()  # a placeholder, never a real key
    assert _credentials(codex, None) == ("OPENAI_API_KEY",)  # no proxy: the client's own upstream


def test_the_replay_route_runs_a_real_client_without_a_real_key(tmp_path, tokenizer_cache):
    """The replay upstream takes any key: the client gets a placeholder. Before, the lane
    refused to start without ANTHROPIC_API_KEY, and with it set gave the real key to the client."""
    from helpers.clients import env_with_clients, require

    env = {**_without_keys(env_with_clients(tokenizer_cache)), "TMPDIR": str(tmp_path)}
    require("claude-code", env)
    out, db = tmp_path / "report.json", tmp_path / "store.db"
    args = ["coding", "--agent", "claude-code", "--model", "replay:claude-sonnet-4-5", "--tasks", "semver-precedence", "--output", str(out), "--db", str(db)]
    done = subprocess.run([sys.executable, "-m", "campaign", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(out.read_text())["trials"][0]["outcome"] == "passed"
