"""Real clients end to end: installed from npm/PyPI, driven through whole paired runs.

Each client (versions pinned in clients/versions.env, installed by
scripts/install_clients.sh) runs a small paired campaign against the replay
provider with the recording proxy on: the recovery task (a tool error the
client must come back from), both variants, one repetition; the fastest client
runs all three tasks, once for the engine, the others run what is theirs alone. What crossed the wire is the evidence: the
client really changed the fixture (the hidden verifier passes), the wire
counters equal the replay script's usage, each variant's catalog differs and
matches the probe bound into the experiment, and teardown was proven.

Where the clients are found, and how a missing one fails CI: ``helpers/clients.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from campaign.replay.steps import usage_for_step
from helpers.clients import clients_path, env_with_clients, require, rows
from workspace import Workspace, approve_and_go_live

TASKS = "semver-precedence,invoice-rounding,unit-table-regen"
# A campaign over several tasks is the engine's behaviour, not a client's: one client runs
# it (the fastest, ~2 s an attempt); every client runs the recovery task, the one whose
# script needs the most of a client (six turns: a command that fails, edits, a generator run).
ALL_TASKS_CLIENT = "claude-code"
RECOVERY_TASK = "unit-table-regen"
# client -> (executable, --agent, replay model, wire format the profile speaks)
CLIENTS = {
    "claude-code": ("claude", "claude-code", "replay:claude-sonnet-4-5"),
    "codex": ("codex", "codex", "replay:gpt-5-codex"),
    "mini-swe-agent": ("mini", "mini-swe-agent", "replay:gpt-5-mini"),
    "opencode": ("opencode", "opencode", "replay:glm-4.6"),
    "gemini": ("gemini", "gemini", "replay:gemini-2.5-pro"),
}


def scripted(requests: int, openai_format: bool) -> dict[str, int]:
    """What the replay provider reported over the first ``requests`` model requests.

    The OpenAI formats have no cache-write figure: the replay folds those tokens
    into input, so on the wire they are uncached input.
    """
    steps = [usage_for_step(i) for i in range(requests)]
    return {
        "uncached_input_tokens": sum(u.uncached_input + (u.cache_write if openai_format else 0) for u in steps),
        "cached_input_tokens": sum(u.cached_input for u in steps),
        "output_tokens": sum(u.output for u in steps),
    }


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_paired_campaign_through_the_real_client(client, tmp_path, tokenizer_cache):
    env = env_with_clients(tokenizer_cache)
    _, agent, model = CLIENTS[client]
    require(agent, env)
    out = tmp_path / "out"
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    tasks = TASKS if client == ALL_TASKS_CLIENT else RECOVERY_TASK
    args = ["coding", "--campaign", "--providers", "replay", "--agent", agent, "--model", model, "--tasks", tasks,
            "--repetitions", "1", "--live", "--output-dir", str(out), "--failure-dir", str(tmp_path / "failures")]
    done = subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env={**env, "TMPDIR": str(runner_tmp)}, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    db = out / "campaign.db"
    (experiment,) = rows(db, "SELECT experiment_json FROM campaigns")
    provider = json.loads(experiment["experiment_json"])["providers"][0]
    expected = provider["wire_catalogs"]
    assert set(expected) == {"baseline", "coding"} and not set(expected["baseline"]) & set(expected["coding"])
    assert provider["client_version"]
    attempts = rows(db, "SELECT t.task, t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.seq")
    assert len(attempts) == 2 * len(tasks.split(","))
    for a in attempts:
        where = f"{a['task']}/{a['variant']}: {a['outcome']} {a['failure_class']}"
        # The client changed the fixture: the shipped fixture fails every hidden verifier.
        assert a["verified_pass"] == 1, where
        assert a["flush_complete"] == 1 and a["cleanup_complete"] == 1 and a["disposal_complete"] == 1, where
        diagnostics = json.loads(a["schema_diagnostics"])
        assert diagnostics["unmatched_requests"] == 0, where
        # Every tool-bearing request carried exactly the fingerprint the probe bound for this
        # variant (in another task, another private root, on another day): its catalog too.
        assert set(diagnostics["fingerprint_digests"]) <= set(expected[a["variant"]]), where
        assert set(diagnostics["catalog_set_digests"]) <= set(provider["wire_fingerprints"][a["variant"]]["tools"]), where
        assert json.loads(a["applied_profiles"]) == [{"baseline": "legacy", "coding": "coding"}[a["variant"]]], where
        # Counters equal the replay script's usage over the requests that crossed the wire.
        model_requests = diagnostics["request_count"]
        assert a["completed_turns"] == model_requests, where
        # opencode asks for a session title in a request of its own, a first step again.
        titles = 1 if client == "opencode" else 0
        usage = scripted(model_requests - titles, client != "claude-code")
        for key, value in scripted(1, client != "claude-code").items():
            usage[key] += titles * value
        assert {k: a[k] for k in ("uncached_input_tokens", "cached_input_tokens", "output_tokens")} == usage, where
        # Spend is known for every client: its own cost, or (a client that reports none) the
        # wire's proven usage at the catalog's prices, which says so; never unknown here.
        assert a["spend_complete"] == 1 and a["cost_usd"] is not None and a["equivalent_spend_usd"] is not None, where
        assert diagnostics["cost_basis"] == ("client_reported" if a["cost_reported"] else "wire_usage_x_catalog_price"), where
        if a["task"] == "unit-table-regen":
            assert a["tool_errors"] is not None and a["tool_errors"] >= 1, where
    ledger = rows(db, "SELECT role, state, verification FROM ledger")
    assert {"client", "profiler", "provider", "verifier"} <= {r["role"] for r in ledger}
    report = json.loads((out / "report.json").read_text())
    assert report["runtime"]["client_version"] == provider["client_version"]
    assert all(t["applied_profile_matches_variant"] is True for t in report["trials"])


def test_a_paired_live_run_through_claude_code_is_confirmed_on_the_wire(ws: Workspace, tokenizer_cache, monkeypatch):
    env = env_with_clients(tokenizer_cache)
    require("claude-code", env)
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    monkeypatch.setenv("REPLAY_TEST_API_KEY", "unused-value")
    args = ws.args("--agent", "claude-code", "--repetitions", "1", "--model", "replay:claude-sonnet-4-5", tasks="semver-precedence")
    result, plan, report = approve_and_go_live(ws, args, "REPLAY_TEST_API_KEY")
    assert result.exit_code == 0, result.output
    catalogs = plan["experiment"]["wire_catalogs"]
    assert catalogs["baseline"] != catalogs["coding"] and plan["experiment"]["client_version"]
    attempts = rows(ws.db_path, "SELECT outcome, applied_profiles, spend_complete FROM attempts")
    assert [a["outcome"] for a in attempts] == ["passed", "passed"]
    assert sorted(json.loads(a["applied_profiles"])[0] for a in attempts) == ["coding", "legacy"]
    assert all(a["spend_complete"] == 1 for a in attempts)
    assert json.loads(report.read_text())["experiment"]["wire_catalogs"] == catalogs


# The spec's own example (openai-codex,zai) with the other two paid providers after it: one
# campaign covers all four (the two-provider run alone took 84 s of a worker's time, and
# checked nothing this one does not).
@pytest.mark.parametrize("providers", ["openai-codex,zai,anthropic,gemini"])
def test_the_paid_campaign_rehearses_for_free(providers, tmp_path, tokenizer_cache):
    # All four paid providers together: the exact command an operator would pay for,
    # with --rehearse. No credential is set: none may be read.
    env = {k: v for k, v in env_with_clients(tokenizer_cache).items() if not k.endswith(("API_KEY", "AUTH_TOKEN", "ACCESS_TOKEN"))}
    names = providers.split(",")
    agents = {"openai-codex": "codex", "zai": "opencode", "anthropic": "claude-code", "gemini": "gemini"}
    for name in names:
        require(agents[name], env)
    out = tmp_path / "rehearsal"
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    args = ["coding", "--campaign", "--providers", providers, "--tasks", "semver-precedence", "--repetitions", "1", "--live", "--rehearse", "--output-dir", str(out)]
    done = subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env={**env, "TMPDIR": str(runner_tmp)}, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    db = out / "campaign.db"
    ((campaign,),) = [rows(db, "SELECT live, state, experiment_json FROM campaigns")]
    experiment = json.loads(campaign["experiment_json"])
    assert (campaign["live"], campaign["state"], experiment["rehearsal"]) == (0, "completed", True)
    assert [p["name"] for p in experiment["providers"]] == names
    for provider in experiment["providers"]:
        # Every upstream replayed, every price synthetic, and the real client, variants told apart.
        assert (provider["wire_upstream"], provider["basis"], provider["credential_env"]) == ("replay", "synthetic", None)
        assert provider["agent"] == agents[provider["name"]] and not set(provider["wire_catalogs"]["baseline"]) & set(provider["wire_catalogs"]["coding"])
    attempts = rows(db, "SELECT t.provider, t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert len(attempts) == 2 * len(names)
    for a in attempts:
        where = f"{a['provider']}/{a['variant']}: {a['outcome']} {a['failure_class']}"
        assert a["verified_pass"] == 1 and a["cleanup_complete"] == 1 and a["spend_complete"] == 1, where
        assert json.loads(a["applied_profiles"]) == [{"baseline": "legacy", "coding": "coding"}[a["variant"]]], where
    report = json.loads((out / "report.json").read_text())
    assert report["synthetic"] is True and report["evidence"] == "offline_unpaid"


SUITES = Path(__file__).parent / "suites"
# A suite is the engine's reading of tasks, not a client's: the fastest client runs them.
SUITE_CLIENT = "claude-code"


@pytest.mark.parametrize(("suite", "tasks"), [("engine-example", 4), ("harbor-example", 3)])
def test_a_paired_campaign_on_a_task_suite_through_a_real_client(suite, tasks, tmp_path, tokenizer_cache):
    # The replay provider derives each suite task's script from its reference solution
    # (an overlay written file by file, or its solve.sh run in the working copy).
    env = env_with_clients(tokenizer_cache)
    require(SUITE_CLIENT, env)
    # The clients come after the machine's own tools: a suite's verifier runs `python3`,
    # `node` or `bash` from the runner's PATH, and the client's virtualenv has a python3
    # without the verifier's pytest.
    env["PATH"] = os.environ.get("PATH", "") + os.pathsep + clients_path()
    out = tmp_path / "out"
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    args = ["coding", "--campaign", "--providers", "replay", "--agent", SUITE_CLIENT, "--model", CLIENTS[SUITE_CLIENT][2],
            "--task-suite", str(SUITES / suite), "--repetitions", "1", "--live", "--output-dir", str(out), "--failure-dir", str(tmp_path / "failures")]
    done = subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env={**env, "TMPDIR": str(runner_tmp)}, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"tasks: task suite {suite}" in done.stdout + done.stderr
    attempts = rows(out / "campaign.db", "SELECT t.task, t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.seq")
    assert len(attempts) == 2 * tasks
    for a in attempts:
        where = f"{a['task']}/{a['variant']}: {a['outcome']} {a['failure_class']}"
        # The client changed the working copy: every untouched fixture fails its verifier (`tasks check`).
        assert a["verified_pass"] == 1, where
        assert a["cleanup_complete"] == 1 and a["disposal_complete"] == 1, where
        assert json.loads(a["schema_diagnostics"])["unmatched_requests"] == 0, where
    report = json.loads((out / "report.json").read_text())
    assert report["experiment"]["task_suite"]["name"] == suite
