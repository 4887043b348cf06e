"""Honest results after interruption (real runner processes, the offline agent slowed down).

- A stop signal (Ctrl-C, SIGTERM, a closed terminal, SIGQUIT) ends the run with 130
  after persisting; the attempt in flight keeps its row and spend but no verdict, and
  ``--resume`` gives its trial a fresh attempt, so its pair completes.
- A SIGKILLed runner blocks its campaign for good; the printed next steps, followed
  literally, finish the experiment in a continuation that carries the verified trials.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.reports import results_only

from campaign.progress import format_usd
from campaign.store import repository

TASKS = "semver-precedence,invoice-rounding"
# The offline agent, started a little late so that a signal lands mid-attempt.
SLOW_AGENT = (
    'adapter = "generic"\npaid = false\nconfig_env = "CAMPAIGN_AGENT_CONFIG"\napplied_profile_from = "adapter"\n'
    'client = ["{python}", "-c", "import os, sys, time; time.sleep(1.5); '
    "os.execv(sys.executable, [sys.executable, '-P', '-m', 'campaign.agents.offline'] + sys.argv[1:])\", "
    '"--task", "{task}", "--prompt-file", "{prompt_file}", "--seed", "{seed}", "--trial-id", "{trial_id}"]\n'
)


@pytest.fixture
def slow_agent(tmp_path: Path) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(SLOW_AGENT)
    return path


def args_for(out: Path, agent: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--tasks", TASKS, "--repetitions", "1", "--agent", str(agent), "--output-dir", str(out), "--live", *extra]


def env_for(out: Path) -> dict[str, str]:
    # Retained private roots (evidence) stay inside the test's own tmp_path.
    tmp = out.parent / "runner-tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


def rows(out: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(out / "campaign.db") as conn:
        return conn.execute(sql, params).fetchall()


def wait_for_running_attempt(out: Path, *, after_finished: int = 0, timeout: float = 90.0) -> None:
    """Until an attempt is running with its client recorded (and ``after_finished`` others ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            finished = rows(out, "SELECT count(*) FROM attempts WHERE status != 'running'")[0][0]
            running = rows(out, "SELECT count(*) FROM attempts JOIN ledger ON ledger.attempt_id = attempts.id WHERE attempts.status = 'running' AND ledger.role = 'client'")[0][0]
        except sqlite3.OperationalError:
            finished = running = 0
        if running and finished >= after_finished:
            return
        time.sleep(0.05)
    raise AssertionError("no attempt reached its client in time")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP, signal.SIGQUIT], ids=lambda s: signal.Signals(s).name)
def test_a_stopped_attempt_keeps_its_row_without_a_verdict_and_runs_again_on_resume(tmp_path, slow_agent, sig):
    out = tmp_path / "out"
    proc = subprocess.Popen(args_for(out, slow_agent), env=env_for(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_running_attempt(out)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "progress is saved; to continue, run:" in stderr and "--resume" in stderr
    assert rows(out, "SELECT state, stop_reason FROM campaigns") == [("interrupted", "interrupted")]
    ((attempt_id, trial_pk, outcome, verdict, cleanup),) = rows(
        out, "SELECT id, trial_pk, outcome, verified_pass, cleanup_complete FROM attempts WHERE status = 'interrupted'"
    )
    assert (outcome, verdict, cleanup) == ("interrupted", None, 1)
    # No verdict, so the trial is back in the queue rather than finished as a failure.
    assert rows(out, "SELECT status FROM trials WHERE id = ?", trial_pk) == [("scheduled",)]

    resumed = subprocess.run(args_for(out, slow_agent, "--resume"), env=env_for(out), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert rows(out, "SELECT state FROM campaigns") == [("completed",)]
    # The spend shown after the resume is the store's, the interrupted attempt's included
    # (it was left out: the progress line read less than the caps counted).
    spent = [repository.counted_spend(*row) for row in rows(out, "SELECT cost_usd, spend_complete, equivalent_spend_usd FROM attempts")]
    shown = "?" if all(s is None for s in spent) else format_usd(float(sum(s for s in spent if s is not None))) + ("+?" if None in spent else "")
    last = [line for line in resumed.stderr.splitlines() if line.startswith("progress: campaign ")][-1]
    assert f" spend {shown}" in last, (last, spent)
    # The trial got exactly one fresh attempt; the interrupted row is untouched.
    assert rows(out, "SELECT id, status FROM attempts WHERE trial_pk = ? ORDER BY seq", trial_pk) == [(attempt_id, "interrupted"), (rows(out, "SELECT max(id) FROM attempts WHERE trial_pk = ?", trial_pk)[0][0], "finished")]
    assert rows(out, "SELECT count(*) FROM trials WHERE status != 'finished'") == [(0,)]
    assert rows(out, "SELECT count(*) FROM attempts WHERE status = 'finished'") == rows(out, "SELECT count(*) FROM trials")
    verify = subprocess.run([sys.executable, "-m", "campaign", "verify", "--db", str(out / "campaign.db")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_after_a_sigkill_the_printed_steps_followed_literally_finish_the_experiment(tmp_path, slow_agent):
    out = tmp_path / "out"
    first = subprocess.Popen(args_for(out, slow_agent), env=env_for(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_running_attempt(out, after_finished=2)
    first.kill()
    first.wait(timeout=30)
    (killed_id,) = rows(out, "SELECT id FROM attempts WHERE status = 'running'")[0]

    blocked = subprocess.run(args_for(out, slow_agent, "--resume"), env=env_for(out), capture_output=True, text=True, timeout=300)
    assert blocked.returncode == 1, blocked.stderr
    message = blocked.stderr
    assert "campaign 1 admits no more work (finalization_failed)" in message, message
    assert f"attempt {killed_id}: finalization incomplete (its runner stopped before recording it: killed, or its store failed)" in message
    kept = [line for line in message.splitlines() if f"attempt {killed_id} kept " in line]
    assert kept and "campaign-paired-runtime-" in kept[0] and "rm -rf" in kept[0]
    sealed = rows(out, "SELECT id, row_hash FROM attempts WHERE campaign_id = 1 ORDER BY seq")
    carried_expected = rows(
        out,
        "SELECT count(*) FROM trials JOIN attempts ON attempts.trial_pk = trials.id WHERE trials.campaign_id = 1 AND attempts.status = 'finished'"
        " AND attempts.cleanup_complete = 1 AND attempts.finalization_failed IS NOT 1 AND attempts.disposal_complete IS NOT 0",
    )[0][0]
    assert carried_expected >= 2
    assert f"carries over the {carried_expected} finished, verified trials of campaign 1" in message or "Next: prove" in message

    # Follow the printed steps literally: every command line after "Next:".
    steps = message.splitlines()[message.splitlines().index(next(line for line in message.splitlines() if line.startswith("Next:"))) + 1 :]
    assert steps and all(line.startswith("  ") for line in steps)
    for step in steps:
        done = subprocess.run(shlex.split(step), env=env_for(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    assert rows(out, "SELECT id, state, stop_reason, continues_campaign_id FROM campaigns ORDER BY id") == [
        (1, "stopped", "finalization_failed", None),
        (2, "completed", None, 1),
    ]
    # The blocked campaign's rows are evidence: never edited.
    assert rows(out, "SELECT id, row_hash FROM attempts WHERE campaign_id = 1 ORDER BY seq") == sealed
    assert rows(out, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND carried_from_trial_pk IS NOT NULL") == [(carried_expected,)]
    # Every trial of the experiment has a result: carried, or run in the continuation.
    assert rows(out, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND status != 'finished'") == [(0,)]
    ran_now = rows(out, "SELECT count(*) FROM attempts WHERE campaign_id = 2 AND status = 'finished'")[0][0]
    assert ran_now + carried_expected == rows(out, "SELECT scheduled_count FROM campaigns WHERE id = 2")[0][0]
    verify = subprocess.run([sys.executable, "-m", "campaign", "verify", "--db", str(out / "campaign.db")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["campaign"]["id"] == 2 if "campaign" in report and "id" in report["campaign"] else True
    # Keyed on this test's own runner TMPDIR (where the prompt file sits): another test's
    # agents, on another worker, may be running now.
    leftover = subprocess.run(["pgrep", "-f", f"campaign.agents.offline.*{out.parent / 'runner-tmp'}/"], capture_output=True)
    assert leftover.returncode == 1


def test_an_interrupted_and_resumed_campaign_reports_what_an_uninterrupted_one_does(tmp_path, slow_agent):
    straight = tmp_path / "straight"
    done = subprocess.run(args_for(straight, slow_agent), env=env_for(straight), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    broken = tmp_path / "broken"
    proc = subprocess.Popen(args_for(broken, slow_agent), env=env_for(broken), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_running_attempt(broken, after_finished=1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    resumed = subprocess.run(args_for(broken, slow_agent, "--resume"), env=env_for(broken), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    a, b = (json.loads((d / "report.json").read_text()) for d in (straight, broken))
    assert results_only(a) == results_only(b)
    # The interrupted attempt is there, as spend only, never as a failure.
    assert rows(broken, "SELECT count(*) FROM attempts WHERE status = 'interrupted'") == [(1,)]
    assert json.dumps(b).count('"interrupted_attempts": 1') >= 1
