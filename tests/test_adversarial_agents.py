"""Agents that attack the engine from inside their private root (issue 13's torture run).

Each agent is a generic-format shell script (``client = ["sh", "a.sh"]``) that
does one hostile thing, then prints a valid result. Outside its root sits a
canary tree holding the names the engine writes (``verifier.out``,
``_campaign_verifier``), so a write, truncation or deletion that follows a
planted link shows up. Attacks that could hang the engine run through the CLI
in a subprocess with a hard limit, so a regression fails instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.agents.profile_parse import parse_profile
from campaign.benchmark.suite import load_suite
from campaign.lanes.attempt import AttemptPlan, run_attempt
from campaign.schedule import single_run
from campaign.store import repository
from campaign.supervise import confine
from campaign.supervise import TeardownBudget
from helpers.procs import alive

TASK = "semver-precedence"
SUITES = Path(__file__).parent / "suites"
FAST = TeardownBudget(grace=1.0, kill_wait=3.0, total=15.0, run_grace=0.5)
RESULT = """echo '{"type": "result", "num_turns": 1}'"""
# The lane's own deadline plus the default cleanup allowance (35 s), plus start-up slack.
CLI_LIMIT_S = 5 + 35 + 20


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    canary = tmp_path / "outside"
    (canary / benchmark.VERIFIER_DIRNAME).mkdir(parents=True)
    (canary / benchmark.VERIFIER_DIRNAME / "keep.txt").write_text("precious")
    (canary / "sentinel.txt").write_text("precious")
    (canary / "verifier.out").write_text("precious")
    return canary


def snapshot(directory: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        found[rel] = "link" if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes()
    return found


def shell_profile(tmp_path: Path, attack: str):
    script = tmp_path / "a.sh"
    script.write_text(f"set -e\n{attack}\n{RESULT}\n")
    return parse_profile(
        {"adapter": "generic", "paid": False, "client": ["sh", str(script)], "config_env": "CAMPAIGN_AGENT_CONFIG", "applied_profile_from": "adapter"},
        "shell-agent",
    )


def _trial(engine):
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="nonpaired", state="running", live=False, agent="shell-agent", seed=0, experiment={}),
        single_run([benchmark.get_task(TASK).name]),
        model="offline:synthetic",
        default_provider="offline",
    )
    trial = repository.trials_in_order(engine, campaign_id)[0]
    assert repository.admit_trial(engine, trial.id)
    return trial


def attack(engine, tmp_path: Path, script: str, *, timeout: float = 20.0, task: benchmark.Task | None = None):
    """Run one attempt of the shell agent; (outcome, row, runner tmp dir, seconds)."""
    base = tmp_path / "runner-tmp"
    base.mkdir(exist_ok=True)
    plan = AttemptPlan(
        task=task or benchmark.get_task(TASK), profile=shell_profile(tmp_path, script), model="offline:synthetic",
        seed=0, timeout_s=timeout, teardown_budget=FAST, tmp_base=base,
    )
    started = time.monotonic()
    result = run_attempt(engine, _trial(engine), plan)
    elapsed = time.monotonic() - started
    return result, repository.get_attempt(engine, result.attempt_id), base, elapsed


def assert_all_gone(engine, attempt_id: int) -> None:
    for entry in repository.ledger_for(engine, attempt_id):
        assert not alive(entry.pid, entry.start_ticks), entry


# --- item 1: the verifier goes only where the engine pinned the working copy ------------


@pytest.mark.parametrize("swap", ["ln -s {outside} work", "mkdir work && ln -s {outside}/{vdir} work/{vdir}"])
def test_a_working_copy_swapped_for_a_link_is_never_followed(engine, tmp_path, outside, swap):
    before = snapshot(outside)
    step = swap.format(outside=outside, vdir=benchmark.VERIFIER_DIRNAME)
    result, row, base, elapsed = attack(engine, tmp_path, f"cd .. && mv work work.real && {step}")
    assert snapshot(outside) == before
    assert (result.outcome, result.failure_class, row.verifier_exit_code) == ("failed", "workspace_tampered", None)
    assert row.completed_turns == 1  # the client's own output was still read, through the pinned captures
    assert row.cleanup_complete is True and row.disposal_complete is True
    assert list(base.iterdir()) == []
    assert elapsed < 20 + FAST.total


@pytest.mark.parametrize("name", ["tmp", "home"])
def test_a_tmpdir_or_home_swapped_for_a_link_keeps_the_verifier_from_running(engine, tmp_path, outside, name):
    """The verifier gets TMPDIR and HOME as paths: through a link its writes would land outside."""
    before = snapshot(outside)
    result, row, base, _ = attack(engine, tmp_path, f"cd .. && mv {name} {name}.real && ln -s {outside} {name}")
    assert snapshot(outside) == before
    assert (result.failure_class, row.verifier_exit_code) == ("workspace_tampered", None)
    assert row.disposal_complete is True and list(base.iterdir()) == []


def _suite_task(tmp_path: Path, verifier_prefix: str) -> benchmark.Task:
    """sh-csv-total from the example suite, its verifier starting with ``verifier_prefix``."""
    suite = Path(shutil.copytree(SUITES / "engine-example", tmp_path / "suite"))
    run_tests = suite / "sh-csv-total" / "verifier" / "run_tests.sh"
    run_tests.write_text(verifier_prefix + run_tests.read_text())
    (task,) = [t for t in load_suite(suite).tasks if t.name == "sh-csv-total"]
    return task


def test_what_the_client_left_in_its_home_never_reaches_the_verifier(engine, tmp_path):
    """A verifier that trusts HOME (here: passes when a marker is there) is the client's to
    game if it shares the client's HOME; it gets a fresh one, so the unsolved task fails."""
    task = _suite_task(tmp_path, '[ -e "$HOME/solved" ] && exit 0\n[ -z "$(ls -A "$HOME")" ] || exit 3\n')
    result, row, base, _ = attack(engine, tmp_path, 'touch "$HOME/solved"', task=task)
    # Not 0 (the marker was seen) nor 3 (the HOME was not empty): the real check ran and failed.
    assert (result.failure_class, row.verifier_exit_code) == ("verifier_failed", 1)
    assert row.disposal_complete is True and list(base.iterdir()) == []


@pytest.mark.parametrize("sig", ["TERM", "INT", "HUP"])
def test_a_verifier_asked_to_end_from_outside_is_no_verdict_and_runs_again(engine, tmp_path, sig):
    """A request to end that the engine did not send (an operator, a shutdown) is not the
    agent's failure: an engine_error without a verdict, its trial back in the queue, and
    counted toward the trial's bound on fresh attempts."""
    task = _suite_task(tmp_path, f"kill -{sig} $$\n")
    result, row, base, _ = attack(engine, tmp_path, "true", task=task)
    assert (result.outcome, result.failure_class, row.verified_pass, row.status) == ("engine_error", "verifier_killed", None, "faulted")
    assert row.verifier_exit_code == -getattr(signal, f"SIG{sig}") and f"SIG{sig}" in result.error
    assert result.stop_reason == "engine_error"
    (trial,) = repository.trials_in_order(engine, row.campaign_id)
    assert trial.status == "scheduled" and repository.fault_attempts(engine, [row.campaign_id], trial.trial_id) == 1
    assert row.disposal_complete is True and list(base.iterdir()) == []


@pytest.mark.parametrize("sig", ["KILL", "SEGV"])
def test_a_verifier_killed_outright_or_crashed_stays_the_agents_failure(engine, tmp_path, sig):
    # The OOM killer's SIGKILL, or a segfault in the agent's code: a verdict, with the signal.
    task = _suite_task(tmp_path, f"kill -{sig} $$\n")
    result, row, base, _ = attack(engine, tmp_path, "true", task=task)
    assert (result.outcome, result.failure_class, row.verified_pass) == ("failed", "verifier_failed", False)
    assert row.verifier_exit_code == -getattr(signal, f"SIG{sig}")


def test_a_verifier_name_planted_as_a_link_is_replaced_not_followed(engine, tmp_path, outside):
    before = snapshot(outside)
    result, row, base, _ = attack(engine, tmp_path, f"ln -s {outside}/{benchmark.VERIFIER_DIRNAME} {benchmark.VERIFIER_DIRNAME}")
    assert snapshot(outside) == before
    # The link is removed, the shipped suite installed in its place and run: the fixture is unsolved.
    assert (result.failure_class, row.verifier_exit_code) == ("verifier_failed", 1)
    assert row.disposal_complete is True and list(base.iterdir()) == []


@pytest.mark.parametrize("replacement", ["ln -s {decoy} $R", "mkdir $R && ln -s {decoy} $R/work"])
def test_a_root_swapped_for_a_decoy_is_neither_verified_nor_disposed(engine, tmp_path, outside, replacement):
    decoy = outside
    before = snapshot(decoy)
    script = f'R=$(dirname "$PWD"); cd /; mv "$R" "$R.moved"; {replacement.format(decoy=decoy)}'
    result, row, base, _ = attack(engine, tmp_path, script)
    assert snapshot(decoy) == before
    assert (result.outcome, result.failure_class) == ("failed", "workspace_tampered")
    assert row.status == "finished" and row.cleanup_complete is True
    assert row.disposal_complete is False and result.stop_reason == "disposal_failed"
    (moved,) = base.glob("*.moved")
    assert (moved / "work").is_dir()  # the real root is retained as evidence, untouched


# --- item 2: captures are the engine's own files, read through the pinned directory -----


def test_a_captures_directory_swapped_for_a_link_is_never_written_through(engine, tmp_path, outside):
    before = snapshot(outside)
    result, row, base, _ = attack(engine, tmp_path, f"mv ../captures ../captures.real && ln -s {outside} ../captures")
    assert snapshot(outside) == before  # verifier.out not truncated, verifier.err not created
    assert (result.failure_class, row.completed_turns) == ("workspace_tampered", 1)
    assert row.disposal_complete is True and list(base.iterdir()) == []


# A FIFO would block a pre-fix engine forever in-process: see the lane tests below.
@pytest.mark.parametrize(
    "plant",
    [
        "ln -s {outside}/sentinel.txt ../captures/client.out",
        "mkdir ../captures/client.out",
        "cp ../captures/client.err ../captures/client.out",  # a regular file, but not the one the engine made
    ],
)
def test_a_client_capture_replaced_by_anything_else_is_unparseable_output(engine, tmp_path, outside, plant):
    before = snapshot(outside)
    script = f"rm ../captures/client.out && {plant.format(outside=outside)}"
    result, row, _, elapsed = attack(engine, tmp_path, script)
    assert snapshot(outside) == before
    assert (result.outcome, result.failure_class, row.verifier_exit_code) == ("failed", "unparseable_output", None)
    assert row.completed_turns is None and row.cleanup_complete is True and row.disposal_complete is True
    assert elapsed < 20 + FAST.total


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_device_planted_as_a_capture_is_refused(engine, tmp_path, outside):
    # /dev/null here; the same O_PATH pin and type check keep /dev/zero from ever being read.
    result, row, _, elapsed = attack(engine, tmp_path, "rm ../captures/client.out && mknod ../captures/client.out c 1 3")
    assert result.failure_class == "unparseable_output" and row.disposal_complete is True
    assert elapsed < 20 + FAST.total


def test_a_verifier_capture_planted_as_a_link_stops_the_verifier(engine, tmp_path, outside):
    before = snapshot(outside)
    result, row, _, _ = attack(engine, tmp_path, f"ln -s {outside}/verifier.out ../captures/verifier.out")
    assert snapshot(outside) == before
    assert (result.failure_class, row.verifier_exit_code) == ("workspace_tampered", None)
    assert row.cleanup_complete is True and row.disposal_complete is True


# --- item 3: disposal never crosses a mount point -----------------------------------------


def _can_bind_mount(tmp_path: Path) -> bool:
    if os.geteuid() != 0:
        return False
    source, target = tmp_path / "probe-src", tmp_path / "probe-dst"
    source.mkdir()
    target.mkdir()
    done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if done.returncode != 0:
        return False
    subprocess.run(["umount", str(target)], check=True)
    return True


def _mount_points() -> list[str]:
    # os.path.ismount cannot see a bind mount of a directory on the same filesystem.
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        return [line.split()[4] for line in fh]


def _unmount_beneath(directory: Path) -> None:
    for point in sorted((p for p in _mount_points() if p.startswith(str(directory) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def test_a_bind_mount_inside_the_root_is_retained_not_emptied(engine, tmp_path, outside):
    if not _can_bind_mount(tmp_path):
        pytest.skip("needs root and permission to bind mount")
    before = snapshot(outside)
    try:
        result, row, base, _ = attack(engine, tmp_path, f"mkdir mnt && mount --bind {outside} mnt; echo $? > ../mount-status")
        if confine.available():
            # A confined agent has no CAP_SYS_ADMIN: the mount is refused, nothing to retain.
            assert not [p for p in _mount_points() if p.startswith(str(base))], "a confined agent mounted"
            assert snapshot(outside) == before
            assert row.cleanup_complete is True and row.disposal_complete is True, row
        else:
            (root,) = base.iterdir()
            assert str(root / "work" / "mnt") in _mount_points(), "the agent's mount did not happen"
            assert snapshot(outside) == before
            assert row.cleanup_complete is True and row.disposal_complete is False
            assert row.private_root == str(root) and result.stop_reason == "disposal_failed"
    finally:
        _unmount_beneath(tmp_path / "runner-tmp")
    assert snapshot(outside) == before


# --- items 4 and 6, through the lane as a user runs it --------------------------------------


def run_lane(tmp_path: Path, attack_script: str, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    """`campaign coding --agent FILE.toml` with a shell agent, in its own session; a hang is a failure."""
    script = tmp_path / "a.sh"
    script.write_text(f"{attack_script}\n{RESULT}\n")
    profile = tmp_path / "shell-agent.toml"
    profile.write_text(f'adapter = "generic"\npaid = false\nclient = ["sh", "{script}"]\nconfig_env = "CAMPAIGN_AGENT_CONFIG"\napplied_profile_from = "adapter"\n')
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "campaign", "coding", "--agent", str(profile), "--tasks", TASK,
            "--output", str(tmp_path / "report.json"), "--db", str(tmp_path / "store.db"), "--timeout", "5", *extra]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=tmp_path, env={**os.environ, "TMPDIR": str(runner_tmp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=CLI_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the runner was still blocked {CLI_LIMIT_S}s after starting a 5s attempt")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr), time.monotonic() - started


def rows(tmp_path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / "store.db") as conn:
        return conn.execute(sql).fetchall()


# The sleeper leaves the client's session, so only teardown can end it.
SLEEPER = "setsid sleep 600 </dev/null >/dev/null 2>&1 &"


@pytest.mark.parametrize(
    ("fifo", "failure_class"),
    [
        ("rm ../captures/client.out && mkfifo ../captures/client.out", "unparseable_output"),
        ("mkfifo ../captures/verifier.out", "workspace_tampered"),
        ("rm -f ../cleanup.log && mkfifo ../cleanup.log", "verifier_failed"),
    ],
    ids=["client.out", "verifier.out", "cleanup.log"],
)
def test_a_planted_fifo_ends_as_a_recorded_failure_not_a_hang(tmp_path, fifo, failure_class):
    done, elapsed = run_lane(tmp_path, f"{fifo}\n{SLEEPER}")
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path, "SELECT status, outcome, failure_class, cleanup_complete, disposal_complete FROM attempts") == [
        ("finished", "failed", failure_class, 1, 1)
    ]
    assert rows(tmp_path, "SELECT state FROM campaigns") == [("completed",)]
    sleepers = rows(tmp_path, "SELECT pid, start_ticks FROM ledger WHERE role = 'descendant'")
    assert sleepers and not any(alive(pid, ticks) for pid, ticks in sleepers)
    assert elapsed < CLI_LIMIT_S


@pytest.mark.parametrize(
    "replace",
    [
        'R=$(dirname "$PWD"); cd /; mv "$R" "$R.moved"; mkdir "$R"',
        'R=$(dirname "$PWD"); cd /; mv "$R" "$R.moved"; ln -s {outside} "$R"',
        'B=$(dirname "$(dirname "$PWD")"); cd /; mv "$B" "$B.moved"; mkdir "$B"',  # the runner's TMPDIR
    ],
    ids=["root-dir", "root-link", "runner-tmpdir"],
)
def test_a_replaced_root_or_tmpdir_stops_the_lane_cleanly(tmp_path, outside, replace):
    before = snapshot(outside)
    done, _ = run_lane(tmp_path, replace.format(outside=outside), "--tasks", f"{TASK},invoice-rounding")
    assert done.returncode == 3, done.stderr  # stopped with a task left: said, and not 0
    assert "Traceback" not in done.stderr
    assert "stopped: disposal_failed" in done.stdout
    assert rows(tmp_path, "SELECT status, failure_class, cleanup_complete, disposal_complete FROM attempts") == [
        ("finished", "workspace_tampered", 1, 0)
    ]
    assert rows(tmp_path, "SELECT state, stop_reason FROM campaigns") == [("stopped", "disposal_failed")]
    assert rows(tmp_path, "SELECT task, status, not_attempted_reason FROM trials ORDER BY position")[1] == ("invoice-rounding", "not_attempted", "disposal_failed")
    assert snapshot(outside) == before


def test_an_engine_error_is_a_recorded_stop_not_a_traceback(tmp_path, monkeypatch):
    """Whatever the engine did not foresee ends the attempt as engine_error and the lane
    with that stop reason; here the runner's temp dir vanishes before the root is made."""
    from click.testing import CliRunner

    from campaign.cli import cli

    runner_tmp = tmp_path / "gone"
    monkeypatch.setattr("campaign.lanes.attempt.isolation.create_private_root", lambda base=None, **kw: os.mkdir(runner_tmp / "x"))
    profile = tmp_path / "shell-agent.toml"
    profile.write_text('adapter = "generic"\npaid = false\nclient = ["true"]\nconfig_env = "CAMPAIGN_AGENT_CONFIG"\napplied_profile_from = "adapter"\n')
    db = tmp_path / "store.db"
    result = CliRunner().invoke(cli, ["coding", "--agent", str(profile), "--tasks", TASK, "--output", str(tmp_path / "r.json"), "--db", str(db), "--timeout", "5"])
    # The run says what happened, and that it ended with work left (exit 3), never a traceback.
    assert result.exit_code == 3, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "stopped: engine_error" in result.output and "stopped by an engine error: FileNotFoundError" in result.output
    # The engine's fault is no verdict of the agent's.
    assert rows(tmp_path, "SELECT status, outcome, failure_class, verified_pass, disposal_complete FROM attempts") == [("faulted", "engine_error", "engine_error", None, 1)]
    assert rows(tmp_path, "SELECT state, stop_reason FROM campaigns") == [("stopped", "engine_error")]


def test_the_shell_agent_itself_passes_through_the_pinned_path(engine, tmp_path):
    """The control: the same agent with no attack, after a fixture solved by the script, passes."""
    solution = benchmark.get_task(TASK).solution_dir
    result, row, base, _ = attack(engine, tmp_path, f"cp -R {solution}/. .")
    assert (result.outcome, row.verifier_exit_code, row.completed_turns) == ("passed", 0, 1)
    assert row.disposal_complete is True and list(base.iterdir()) == []
    assert_all_gone(engine, result.attempt_id)



# --- what the agent leaves running cannot change the working copy during verification --------


def test_a_left_behind_process_cannot_rewrite_the_code_while_the_verifier_runs(engine, tmp_path):
    # The agent applies the reference solution, then leaves an escaped process that
    # keeps breaking it once the client has exited (i.e. while the verifier would run).
    solution = benchmark.get_task(TASK).solution_dir
    # It leaves the client's process group (the engine stops that group as soon as the
    # client returns), says so, waits for the hidden suite to be installed, then breaks every
    # module over and over. The client returns only once it has left: otherwise, under load,
    # the group stop could take it first and the test would pass without an attacker.
    saboteur = (
        f"setsid sh -c \"touch escaped; while [ ! -e {benchmark.VERIFIER_DIRNAME} ]; do sleep 0.002; done; "
        "while :; do for f in pkgversions/*.py; do echo 'raise SystemExit(3)' > \\$f; done; done\" "
        "</dev/null >/dev/null 2>&1 &\n"
        "while [ ! -e escaped ]; do sleep 0.01; done; rm escaped"
    )
    result, row, base, _ = attack(engine, tmp_path, f"cp -r {solution}/. .\n{saboteur}")
    assert (result.outcome, result.failure_class) == ("passed", None), (result.outcome, result.failure_class)
    assert row.verifier_exit_code == 0 and row.cleanup_complete is True
    assert_all_gone(engine, result.attempt_id)
