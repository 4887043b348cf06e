"""The offline agent, run as a real subprocess in a fixture copy, judged by the real verifier."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.agents import offline
from campaign.agents.adapters import get_adapter
from campaign.agents.profiles import client_argv, client_env, load_profile
from campaign.agents.record import AgentRecord, turn_usage_matched

TASK = "lru-cache-eviction"
REPO = Path(__file__).resolve().parents[1]


def options(**changes) -> offline.Options:
    base = offline.parse_args(["--task", TASK], {})
    return dataclasses.replace(base, **changes)


def solved(seed: int, profile: str = "coding", trial: str = "t") -> bool:
    return offline.plan_attempt(options(seed=seed, trial_id=trial), profile, False).solved


def seed_where(outcome: bool, profile: str = "coding") -> int:
    return next(s for s in range(200) if solved(s, profile) is outcome)


@dataclasses.dataclass
class Attempt:
    workdir: Path
    config: Path
    task: benchmark.Task

    def argv(self, seed: int, trial: str = "t", extra: tuple[str, ...] = ()) -> list[str]:
        prompt = self.workdir.parent / "prompt.txt"
        prompt.write_text(self.task.prompt)
        values = {
            "python": sys.executable, "task": self.task.name, "prompt_file": str(prompt),
            "model": "offline:synthetic", "seed": str(seed), "trial_id": trial,
        }
        return client_argv(load_profile("offline"), values) + list(extra)

    def env(self, **extra: str) -> dict[str, str]:
        # What the engine forwards (PATH, LANG) plus the profile's config variable;
        # PYTHONPATH only so the test does not depend on how campaign is installed.
        env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
        return {**env, **client_env(load_profile("offline"), self.config), **extra}

    def run(self, seed: int, trial: str = "t", extra: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(seed, trial, extra), cwd=self.workdir, env=self.env(**env),
                              capture_output=True, timeout=60, check=False)

    def start(self, seed: int, extra: tuple[str, ...]) -> subprocess.Popen:
        return subprocess.Popen(self.argv(seed, extra=extra), cwd=self.workdir, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def verified(self) -> bool:
        benchmark.install_verifier(self.task, self.workdir)
        argv = benchmark.verifier_argv(self.task, sys.executable, self.workdir)
        return subprocess.run(argv, cwd=self.workdir, capture_output=True, timeout=120, check=False).returncode == 0


def make_attempt(root: Path, profile: str | None = "coding", task: str = TASK, config_text: str | None = None) -> Attempt:
    root.mkdir(parents=True, exist_ok=True)
    workdir = root / "work"
    benchmark.copy_fixture(benchmark.get_task(task), workdir)
    config = root / "variant.toml"
    if config_text is None:
        # The engine's shape: the base config plus the appended disclosure table.
        config_text = 'model = "offline:synthetic"\n'
        if profile is not None:
            config_text += f'\n[runtime.tools.disclosure]\nenabled = true\ncatalog_tokens = 2000\nmax_results = 5\nprofile = "{profile}"\nbudget_tokens = 40000\n'
    config.write_text(config_text)
    return Attempt(workdir, config, benchmark.get_task(task))


@pytest.fixture
def attempt(tmp_path: Path) -> Attempt:
    return make_attempt(tmp_path)


def record_of(done: subprocess.CompletedProcess | tuple[bytes, bytes, int | None]) -> AgentRecord:
    if isinstance(done, subprocess.CompletedProcess):
        return get_adapter("generic").parse(done.stdout, done.stderr, done.returncode)
    return get_adapter("generic").parse(*done)


# --- outcome and output -----------------------------------------------------------


def test_solved_attempt_passes_the_verifier(attempt):
    done = attempt.run(seed_where(True))
    assert done.returncode == 0, done.stderr
    assert attempt.verified()
    r = record_of(done)
    assert r.error_class is None and r.synthetic is True
    assert r.applied_profiles == ("coding",) and r.diagnostic_events_version == 1
    assert r.discovery_failures is not None and r.incorrect_tool_calls is not None
    assert r.cost_reported and r.cost_usd > 0
    assert r.uncached_input_tokens > 0 and r.cached_input_tokens > 0 and r.output_tokens > 0
    assert r.tool_errors == 0 and turn_usage_matched(r)


def test_failed_attempt_leaves_the_fixture_broken(attempt):
    done = attempt.run(seed_where(False))
    assert done.returncode == 0
    assert record_of(done).error_class is None  # the agent ran fine; it just did not solve it
    assert not attempt.verified()


def test_same_seed_same_run(tmp_path):
    a, b = make_attempt(tmp_path / "a"), make_attempt(tmp_path / "b")
    first, second = a.run(7, "trial-3"), b.run(7, "trial-3")
    assert first.stdout == second.stdout
    assert a.verified() == b.verified() == solved(7, trial="trial-3")
    assert a.run(7, "trial-4").stdout != first.stdout  # the trial id is part of the seed


def test_profiles_have_different_success_rates():
    def rate(profile: str) -> float:
        return sum(solved(seed, profile, f"trial-{seed}") for seed in range(3000)) / 3000

    legacy, coding = rate("legacy"), rate("coding")
    assert abs(legacy - 0.70) < 0.03 and abs(coding - 0.78) < 0.03
    assert coding - legacy > 0.04


def test_success_probability_is_configurable(attempt):
    assert attempt.run(1, extra=("--success-coding", "1.0")).returncode == 0 and attempt.verified()
    never = options(success={"legacy": 0.0, "coding": 0.0})
    assert not any(offline.plan_attempt(dataclasses.replace(never, seed=s), "coding", False).solved for s in range(100))
    env_parsed = offline.parse_args(["--task", TASK], {"CAMPAIGN_OFFLINE_SUCCESS_LEGACY": "0.25"})
    assert env_parsed.success == {"legacy": 0.25, "coding": 0.78}


def test_config_defaults_disabled_and_unsupported(tmp_path):
    no_table = make_attempt(tmp_path / "none", profile=None)
    assert record_of(no_table.run(1)).applied_profiles == ("legacy",)  # the runtime default
    disabled = make_attempt(tmp_path / "off", config_text="[runtime.tools.disclosure]\nenabled = false\n")
    r = record_of(disabled.run(1))
    assert r.applied_profiles == () and r.diagnostic_events_version is None and r.discovery_failures is None
    bad = make_attempt(tmp_path / "bad", profile="budgeted")
    done = bad.run(1)
    assert done.returncode == 2
    r = record_of(done)
    assert r.error_class == "agent_error" and r.applied_profiles is None
    assert r.cost_usd is None and r.uncached_input_tokens is None


def test_unknown_task_is_bad_input(attempt):
    argv = [a if a != TASK else "no-such-task" for a in attempt.argv(1)]
    done = subprocess.run(argv, cwd=attempt.workdir, env=attempt.env(), capture_output=True, timeout=60, check=False)
    assert done.returncode == 2 and record_of(done).error_class == "agent_error"


# --- recovery task ------------------------------------------------------------------


def test_recovery_path_makes_a_real_failing_tool_call(tmp_path, monkeypatch, capsys):
    # A suite holding a copy of the task that requires the failed call, so this runs whatever tasks ship.
    real = benchmark.get_task(TASK)
    suite = tmp_path / "suite"
    shutil.copytree(real.root, suite / TASK)
    definition = suite / TASK / "task.toml"
    definition.write_text(definition.read_text().replace("requires_failed_tool_call = false", "requires_failed_tool_call = true"))
    assert benchmark.load_suite(suite).get(TASK).requires_failed_tool_call
    workdir = tmp_path / "work"
    benchmark.copy_fixture(real, workdir)
    monkeypatch.chdir(workdir)
    assert offline.run(options(seed=seed_where(True), config=None, task_suite=suite)) == 0
    out = capsys.readouterr().out.encode()
    r = record_of((out, b"", 0))
    assert r.tool_errors == 1 and r.tool_calls >= 2
    first_tool = json.loads(out.splitlines()[-1])["tools"][0]
    assert first_tool["status"] == "error" and first_tool["exit_code"] != 0
    assert (workdir / "cachekit" / "lru.py").read_bytes() == (real.solution_dir / "cachekit" / "lru.py").read_bytes()


def test_shipped_recovery_tasks_report_the_failed_call(tmp_path):
    tasks = [t for t in benchmark.all_tasks() if t.requires_failed_tool_call]
    assert tasks, "the benchmark must ship a recovery task"
    for task in tasks:
        attempt = make_attempt(tmp_path / task.name, task=task.name)
        r = record_of(attempt.run(3))
        assert r.tool_errors == 1, task.name


# --- misbehaviour -------------------------------------------------------------------


def test_crash_leaves_partial_output_and_no_counters(attempt):
    done = attempt.run(1, extra=("--mode", "crash"))
    assert done.returncode == 3
    assert not done.stdout.endswith(b"\n")  # cut mid-line
    r = record_of(done)
    assert r.error_class == "unparseable_output"
    assert r.applied_profiles == ("coding",)  # what came before the cut is kept
    assert (r.cost_usd, r.uncached_input_tokens, r.completed_turns, r.tool_errors) == (None, None, None, None)


def test_no_usage_gives_none_not_zero(attempt):
    r = record_of(attempt.run(1, extra=("--mode", "no-usage")))
    assert r.error_class is None and r.completed_turns is not None
    for name in ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_usd"):
        assert getattr(r, name) is None, name
    assert r.cost_reported is False and r.turn_usage is None and not turn_usage_matched(r)


def test_mode_from_environment(attempt):
    r = record_of(attempt.run(1, CAMPAIGN_OFFLINE_MODE="no-usage,overspend=2.5"))
    assert r.cost_usd is None  # no-usage wins: nothing about spend is reported
    r = record_of(attempt.run(1, CAMPAIGN_OFFLINE_MODE="overspend=2.5"))
    assert r.cost_usd == 2.5 and r.cost_reported


def test_overspend_reports_the_given_cost(attempt):
    r = record_of(attempt.run(1, extra=("--mode", "overspend=12.75")))
    assert r.cost_usd == 12.75 and r.output_tokens is not None


def test_wrong_profile_reports_the_other_profile(attempt):
    r = record_of(attempt.run(1, extra=("--mode", "wrong-profile")))
    assert r.applied_profiles == ("legacy",)


def test_unknown_mode_is_a_usage_error(attempt):
    assert attempt.run(1, extra=("--mode", "explode")).returncode == 2


def test_hang_runs_until_terminated(attempt):
    proc = attempt.start(1, ("--mode", "hang"))
    try:
        first = proc.stdout.readline()  # the applied event comes out before the hang
        assert json.loads(first)["event"] == "disclosure.applied"
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_ignore_term_survives_sigterm(attempt):
    proc = attempt.start(1, ("--mode", "ignore-term"))
    try:
        proc.stdout.readline()  # the handler is installed before the hang starts
        proc.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)
        proc.kill()
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_background_child_escapes_into_its_own_session(attempt):
    done = attempt.run(seed_where(True), extra=("--mode", "background-child"))
    match = re.search(rb"background child pid (\d+)", done.stderr)
    assert done.returncode == 0 and match, done.stderr
    pid = int(match.group(1))
    try:
        assert os.getsid(pid) != os.getsid(0)  # a new session: killing our group misses it
        assert record_of(done).error_class is None and attempt.verified()
    finally:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z"):
            break  # killed; waiting for its new parent to reap it
        time.sleep(0.05)


@pytest.mark.parametrize("task", benchmark.task_names())
def test_every_task_solved_and_unsolved(tmp_path, task):
    # Certainty both ways proves the verifier, not the agent's claim, decides the outcome.
    sure = make_attempt(tmp_path / "sure", task=task)
    done = sure.run(1, extra=("--success-coding", "1"))
    assert done.returncode == 0 and sure.verified(), done.stderr
    never = make_attempt(tmp_path / "never", task=task)
    assert never.run(1, extra=("--success-coding", "0")).returncode == 0
    assert not never.verified()
    if benchmark.get_task(task).requires_failed_tool_call:
        assert record_of(done).tool_errors == 1
