"""`campaign coding --paired --live`: approval, exact binding, stop rules, interruption.

Every run here uses the offline agent (no network, no spend) with fake
credential variables; the plan is generated, extracted and approved exactly as
an operator would.
"""

from __future__ import annotations

import hashlib
import json
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
from campaign.lanes.attempt import AttemptOutcome
from campaign.lanes.paired_live import after_attempt, gate
from campaign.canonical import spec_digest
from campaign.agents.record import AgentRecord
from campaign.approval import Approval
from campaign.store.limits import SpendLimits
from helpers.procs import open_in_this_process
from workspace import Workspace, run

CRED = "OFFLINE_TEST_API_KEY"
CANARY = "sk-live-canary-0123456789abcdef"
TASKS = "semver-precedence,invoice-rounding"
BOUND_FIELDS = (
    "tasks", "model", "revision", "source_digest", "compiled_build_digest", "repetitions", "seed",
    "timeout", "run_timeout", "variants", "config_digest", "fixture_digests", "profile_python_digest", "pricing_catalog_digest",
)


@pytest.fixture(autouse=True)
def credential(monkeypatch):
    monkeypatch.setenv(CRED, CANARY)


def agent_file(ws: Workspace, *modes: str, name: str = "agent.toml") -> Path:
    """The offline agent through the recording proxy (a live paired run needs the wire's
    flush for complete spend), optionally misbehaving, as an operator's profile file."""
    text = (Path(benchmark.__file__).parents[1] / "agents" / "profiles" / "offline-wire.toml").read_text()
    extra = "".join(f'  "--mode", "{m}",\n' for m in modes)
    path = ws.root / "operator" / name
    path.write_text(text.replace('  "--trial-id", "{trial_id}",\n', '  "--trial-id", "{trial_id}",\n' + extra))
    return path


def unproven_agent(ws: Workspace) -> Path:
    """A client with the recording proxy on its route that sends nothing through it and
    reports no usage: nothing proves its spend (the offline agent off the wire, no-usage)."""
    text = (Path(benchmark.__file__).parents[1] / "agents" / "profiles" / "offline.toml").read_text()
    path = ws.root / "operator" / "unproven.toml"
    path.write_text(text.replace('  "--trial-id", "{trial_id}",\n', '  "--trial-id", "{trial_id}",\n  "--mode", "no-usage",\n') + '\n[env]\nANTHROPIC_BASE_URL = "{proxy_url}"\n')
    return path


def live_args(ws: Workspace, agent: Path, *extra: str) -> list[str]:
    return ws.args("--agent", str(agent), "--repetitions", "1", "--model", "offline:synthetic", *extra, tasks=TASKS)


def approve(ws: Workspace, agent: Path, *extra: str, **limits) -> tuple[Path, str]:
    """Generate the template, extract the plan, approve it, return (plan path, digest)."""
    result = run(live_args(ws, agent, *extra))
    assert result.exit_code == 0, result.output
    plan = json.loads(ws.output.read_text())["plan"]
    plan.update(
        approved=True,
        max_spend_usd=10.0,
        per_attempt_spend_ceiling_usd=1.0,
        provider_budget_enforced=True,
        credential_env=[CRED],
    )
    plan.update(limits)
    path = ws.root / "operator" / "plan.json"
    path.write_text(json.dumps(plan, indent=2))
    return path, spec_digest(plan)


def go_live(ws: Workspace, agent: Path, plan: Path, digest: str, *extra: str):
    report = ws.root / "reports" / "live.json"
    args = live_args(ws, agent, *extra) + ["--live", "--plan", str(plan), "--approve-plan-digest", digest]
    args[args.index("--output") + 1] = str(report)
    return run(args), report


def rows(ws: Workspace, sql: str):
    with sqlite3.connect(ws.db_path) as conn:
        return conn.execute(sql).fetchall()


def live_campaign(ws: Workspace):
    return rows(ws, "SELECT id, state, stop_reason, live, approved_plan_digest FROM campaigns WHERE live = 1")


# --- a whole run -------------------------------------------------------------


def test_approved_run_follows_the_schedule_and_writes_the_report(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)
    result, report = go_live(ws, agent, plan, digest)
    assert result.exit_code == 0, result.output
    assert open_in_this_process(ws.db_path) == []  # closed by the run, not by the collector later
    ((cid, state, stop, live, approved),) = live_campaign(ws)
    assert (state, stop, live, approved) == ("completed", None, 1, digest)
    order = rows(ws, f"SELECT t.position FROM attempts a JOIN trials t ON t.id = a.trial_pk WHERE a.campaign_id = {cid} ORDER BY a.seq")
    assert [p for (p,) in order] == [0, 1, 2, 3]
    pairs = rows(ws, f"SELECT pair_id, variant FROM trials WHERE campaign_id = {cid} ORDER BY position")
    assert pairs[0][0] == pairs[1][0] and {pairs[0][1], pairs[1][1]} == {"baseline", "coding"}
    doc = json.loads(report.read_text())
    assert doc["kind"] == "live_agentic_coding_paired" and doc["schema_version"] == 3
    assert (doc["redaction"]["unlisted_values"], doc["redaction"]["redacted_ids"], doc["redaction"]["nulled_values"]) == (0, 0, 0)
    assert doc["completion"]["all_scheduled_attempted"] is True
    assert report.with_suffix(".md").is_file()


# --- approval failures: exit 2, nothing run ------------------------------------


def refused_live(ws: Workspace, result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    assert needle in result.output, result.output
    assert live_campaign(ws) == []
    assert rows(ws, "SELECT count(*) FROM attempts") == [(0,)]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"approved": False}, "approved must be true"),
        ({"max_spend_usd": None}, "max_spend_usd must be a positive finite number"),
        ({"max_spend_usd": -1}, "max_spend_usd must be a positive finite number"),
        ({"per_attempt_spend_ceiling_usd": 0}, "per_attempt_spend_ceiling_usd must be a positive finite number"),
        ({"per_attempt_spend_ceiling_usd": 20.0}, "must not exceed max_spend_usd"),
        ({"max_spend_usd": 1e20}, "max_spend_usd must be under 10^12 US dollars"),
        ({"per_attempt_spend_ceiling_usd": 1e-13}, "per_attempt_spend_ceiling_usd must be under 10^12 US dollars with at most 12 decimal places"),
        ({"max_attempts": 3}, "max_attempts must be a whole number of at least the scheduled count (4)"),
        ({"provider_budget_enforced": False}, "provider_budget_enforced must be true"),
        ({"credential_env": []}, "credential_env must be a non-empty list"),
        ({"credential_env": [CRED, CRED]}, "must be distinct"),
        ({"credential_env": ["offline_test_api_key"]}, "must be upper case and end in API_KEY"),
        ({"credential_env": ["OFFLINE_PASSWORD"]}, "must be upper case and end in API_KEY"),
        ({"credential_env": ["MISSING_API_KEY"]}, "MISSING_API_KEY is not set"),
        ({"surprise": 1}, "unknown field(s) surprise"),
    ],
)
def test_each_approval_failure_is_refused_before_any_trial(ws: Workspace, change, needle):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent, **change)
    result, _ = go_live(ws, agent, plan, digest)
    refused_live(ws, result, needle)


def test_a_credential_written_in_place_of_its_name_is_never_echoed(ws: Workspace):
    agent = agent_file(ws)
    value = "sk-ant-api03-" + "Q" * 40
    plan, digest = approve(ws, agent, credential_env=[CRED, value])
    result, _ = go_live(ws, agent, plan, digest)
    refused_live(ws, result, "credential_env entry 2 is not a credential variable name")
    assert "QQQQ" not in result.output


def test_a_report_beside_the_output_that_could_not_be_written_is_refused_before_any_trial(ws: Workspace):
    # The run used to pay for every trial, then find report.md a directory and exit 2.
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)
    (ws.root / "reports" / "live.md").mkdir(parents=True)
    result, report = go_live(ws, agent, plan, digest)
    refused_live(ws, result, "--output: " + str(report.with_suffix(".md")) + " is there and is not a file the report can replace")
    assert not report.exists()


def test_template_wrapper_is_not_a_plan(ws: Workspace):
    agent = agent_file(ws)
    approve(ws, agent)
    result, _ = go_live(ws, agent, ws.output, spec_digest(json.loads(ws.output.read_text())))
    refused_live(ws, result, "plan-template wrapper")


def test_digest_must_match_the_plan(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)
    result, _ = go_live(ws, agent, plan, "0" * 64)
    refused_live(ws, result, "does not equal the canonical digest")


def test_an_edited_plan_needs_a_new_digest(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)
    data = json.loads(plan.read_text())
    data["max_spend_usd"] = 11.0
    plan.write_text(json.dumps(data))
    result, _ = go_live(ws, agent, plan, digest)
    refused_live(ws, result, "does not equal the canonical digest")


def test_several_problems_are_reported_together(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent, approved=False, provider_budget_enforced=False)
    result, _ = go_live(ws, agent, plan, digest)
    assert "approved must be true" in result.output and "provider_budget_enforced must be true" in result.output


def test_declared_build_artifacts_must_exist(ws: Workspace):
    agent = agent_file(ws)
    text = agent.read_text().replace("build_artifacts = []", 'build_artifacts = ["_build/*.beam"]')
    agent.write_text(text)
    plan, digest = approve(ws, agent)
    result, _ = go_live(ws, agent, plan, digest)
    refused_live(ws, result, "declares build artifacts but none exist")


# --- exact binding -------------------------------------------------------------


def _different(value):
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1")
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    if isinstance(value, dict):
        return {**value, "extra": "0" * 64}
    return "deadbeef"


@pytest.mark.parametrize("field", BOUND_FIELDS)
def test_a_mismatch_in_each_bound_field_is_named(ws: Workspace, field):
    agent = agent_file(ws)
    plan_path, _ = approve(ws, agent)
    plan = json.loads(plan_path.read_text())
    plan["experiment"][field] = _different(plan["experiment"][field])
    plan_path.write_text(json.dumps(plan))
    result, _ = go_live(ws, agent, plan_path, spec_digest(plan))
    refused_live(ws, result, f"differs from the approved plan in: {field}")
    assert "generate a new plan" in result.output


def test_real_changes_after_approval_are_caught(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)
    (ws.source / "untracked.py").write_text("x = 1\n")  # an untracked, non-ignored file
    ws.config.write_text(ws.config.read_text() + "\n[extra]\nk = 1\n")
    result, _ = go_live(ws, agent, plan, digest, "--seed", "5")
    refused_live(ws, result, "differs from the approved plan in: config_digest, seed, source_digest")


def test_prices_changed_after_approval_are_caught(ws: Workspace):
    # The catalog's prices cost a client that reports none: a plan approved under one
    # price list must not run (and be held to its caps) under another.
    agent = agent_file(ws)
    catalog = ws.root / "operator" / "providers.toml"
    catalog.write_text((Path(benchmark.__file__).parents[1] / "providers.toml").read_text())
    plan, digest = approve(ws, agent, "--providers-catalog", str(catalog))
    bound = json.loads(plan.read_text())["experiment"]["pricing_catalog_digest"]
    assert bound == hashlib.sha256(catalog.read_bytes()).hexdigest()
    text = catalog.read_text()
    catalog.write_text(text.replace("[providers.offline.prices]\n", "[providers.offline.prices]\n# cheaper now\n", 1))
    assert catalog.read_text() != text
    result, _ = go_live(ws, agent, plan, digest, "--providers-catalog", str(catalog))
    refused_live(ws, result, "differs from the approved plan in: pricing_catalog_digest")


def test_ignored_files_do_not_break_the_binding(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent, max_spend_usd=0.0001, per_attempt_spend_ceiling_usd=0.0001)
    (ws.source / "debug.log").write_text("ignored\n")
    result, _ = go_live(ws, agent, plan, digest)
    assert result.exit_code == 3, result.output


# --- stop conditions ------------------------------------------------------------


def stopped_with(ws: Workspace, reason: str, attempted: int) -> None:
    """The run stopped for ``reason`` after ``attempted`` attempts (it exited 3 and said so)."""
    ((cid, state, stop, _, _),) = live_campaign(ws)
    assert (state, stop) == ("stopped", reason)
    assert rows(ws, f"SELECT count(*) FROM attempts WHERE campaign_id = {cid}") == [(attempted,)]
    skipped = rows(ws, f"SELECT status, not_attempted_reason FROM trials WHERE campaign_id = {cid} AND status != 'finished'")
    assert skipped == [("not_attempted", reason)] * (4 - attempted)


def test_spend_gate_stops_before_the_ceiling_could_pass_the_maximum(ws: Workspace):
    agent = agent_file(ws)
    # The four attempts cost about $0.035 in all, the first two about $0.024.
    plan, digest = approve(ws, agent, max_spend_usd=0.04, per_attempt_spend_ceiling_usd=0.025)
    result, report = go_live(ws, agent, plan, digest)
    assert result.exit_code == 3, result.output
    ((cid, *_),) = live_campaign(ws)
    costs = [c for (c,) in rows(ws, f"SELECT cost_usd FROM attempts WHERE campaign_id = {cid} ORDER BY seq")]
    assert costs and all(c is not None for c in costs)
    assert sum(costs) + 0.025 > 0.04 and sum(costs[:-1]) + 0.025 <= 0.04
    stopped_with(ws, "spend_limit", len(costs))
    doc = json.loads(report.read_text())
    assert doc["campaign"]["stop_reason"] == "spend_limit"
    assert {t["reason"] for t in doc["not_attempted_trials"]} == {"spend_limit"}


def test_an_attempt_over_its_ceiling_stops_later_trials(ws: Workspace):
    agent = agent_file(ws, "overspend=5")
    plan, digest = approve(ws, agent)
    result, _ = go_live(ws, agent, plan, digest)
    assert result.exit_code == 3, result.output
    stopped_with(ws, "attempt_exceeded_ceiling", 1)


def test_missing_spend_stops_later_trials(ws: Workspace):
    agent = unproven_agent(ws)
    plan, digest = approve(ws, agent)
    result, _ = go_live(ws, agent, plan, digest)
    assert result.exit_code == 3, result.output
    stopped_with(ws, "spend_incomplete", 1)
    assert rows(ws, "SELECT cost_usd, spend_complete, flush_complete FROM attempts") == [(None, 0, 1)]
    assert "spend incomplete: no cost: the client reported none and the wire did not prove one" in result.output


def test_a_client_off_the_recording_proxy_is_refused_before_any_trial(ws: Workspace):
    """Issue 42 item 2: without a profiler flush no attempt's spend is complete, so a live
    paired run of such a client would stop after its first (paid) attempt."""
    plain = ws.root / "operator" / "plain.toml"
    plain.write_text((Path(benchmark.__file__).parents[1] / "agents" / "profiles" / "offline.toml").read_text())
    plan, digest = approve(ws, plain)
    result, _ = go_live(ws, plain, plan, digest)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert "--agent" in line and "recording proxy" in line and "offline-wire" in line
    assert live_campaign(ws) == [] and rows(ws, "SELECT count(*) FROM attempts") == [(0,)]


# --- one approval, several runs: the plan bounds the experiment, not one invocation ----


def test_a_second_run_of_a_used_up_approval_is_refused_and_runs_nothing(ws: Workspace):
    agent = agent_file(ws)
    plan, digest = approve(ws, agent)  # max_attempts: the scheduled 4
    first, report = go_live(ws, agent, plan, digest)
    assert first.exit_code == 0, first.output
    before = report.read_bytes()
    again, _ = go_live(ws, agent, plan, digest)
    assert again.exit_code == 2, again.output
    (line,) = [x for x in again.output.splitlines() if x.startswith("Error:")]
    ((cid, *_),) = live_campaign(ws)
    assert "--approve-plan-digest" in line and f"approved plan {digest[:12]} already ran in this store (campaign {cid})" in line
    assert "4 of max_attempts 4" in line and "approve a new plan" in line
    assert len(live_campaign(ws)) == 1 and rows(ws, "SELECT count(*) FROM attempts") == [(4,)]
    assert report.read_bytes() == before


def test_a_second_run_gets_only_what_the_first_left_of_the_spend(ws: Workspace):
    agent = agent_file(ws)
    # The offline agent's four costs add up to about $0.035: a second whole run would pass $0.06.
    plan, digest = approve(ws, agent, max_spend_usd=0.06, per_attempt_spend_ceiling_usd=0.02, max_attempts=40)
    first, _ = go_live(ws, agent, plan, digest)
    assert first.exit_code == 0, first.output
    ((cid, *_),) = live_campaign(ws)
    second, _ = go_live(ws, agent, plan, digest)
    assert f"approved plan {digest[:12]} already ran in this store (campaign {cid}): this run gets what is left of 4 of max_attempts 40" in second.output
    assert second.exit_code == 3, second.output
    costs = [c for (c,) in rows(ws, "SELECT cost_usd FROM attempts ORDER BY campaign_id, seq")]
    # Over both runs, every attempt started while the spend so far plus its ceiling fit the one maximum,
    # and the second run stopped when the next ceiling no longer did.
    assert 4 < len(costs) < 8 and all(sum(costs[:i]) + 0.02 <= 0.06 for i in range(len(costs)))
    assert sum(costs) + 0.02 > 0.06
    assert rows(ws, f"SELECT state, stop_reason FROM campaigns WHERE id = {cid + 1}") == [("stopped", "spend_limit")]
    third, _ = go_live(ws, agent, plan, digest)
    assert third.exit_code == 2 and "and used it" in third.output, third.output
    assert rows(ws, "SELECT count(*) FROM attempts")[0][0] == len(costs) and len(live_campaign(ws)) == 2


def test_a_run_after_one_whose_spend_is_unknown_is_refused(ws: Workspace):
    agent = unproven_agent(ws)
    plan, digest = approve(ws, agent, max_attempts=40)
    first, _ = go_live(ws, agent, plan, digest)
    assert first.exit_code == 3, first.output
    again, _ = go_live(ws, agent, plan, digest)
    assert again.exit_code == 2, again.output
    assert "the spend of 1 attempt(s) there is unknown" in again.output and "--approve-plan-digest" in again.output
    assert rows(ws, "SELECT count(*) FROM attempts") == [(1,)] and len(live_campaign(ws)) == 1


def test_approval_left_counts_every_earlier_run():
    from campaign.lanes.paired_live import approval_left
    from campaign.store.repository import ApprovalUse
    from decimal import Decimal

    assert approval_left(ApprovalUse((), 0, Decimal(0), 0), APPROVAL) is None
    assert approval_left(ApprovalUse((1,), 3, Decimal("0.5"), 0), APPROVAL) is None  # 0.5 spent + 0.5 ceiling fits 1.0
    assert "and used it" in approval_left(ApprovalUse((1,), 3, Decimal("0.51"), 0), APPROVAL)
    assert "and used it" in approval_left(ApprovalUse((1, 2), 4, Decimal(0), 0), APPROVAL)
    assert "unknown" in approval_left(ApprovalUse((1,), 1, Decimal(0), 1), APPROVAL)


def test_run_deadline_caps_the_per_attempt_deadline(ws: Workspace):
    agent = agent_file(ws, "hang")
    plan, digest = approve(ws, agent, "--run-timeout", "2")
    started = time.monotonic()
    result, _ = go_live(ws, agent, plan, digest, "--run-timeout", "2")
    assert result.exit_code == 3, result.output
    assert time.monotonic() - started < 60  # not the 660 s per-attempt default
    # The timed-out attempt reported no cost, which is the first stop it triggers.
    stopped_with(ws, "spend_incomplete", 1)
    ((outcome, cleanup, wall),) = rows(ws, "SELECT outcome, cleanup_complete, wall_seconds FROM attempts")
    assert (outcome, cleanup) == ("timeout", 1) and wall < 10


def _outcome(**kw) -> AttemptOutcome:
    base = dict(attempt_id=1, outcome="passed", failure_class=None, verified_pass=True, wall_seconds=1.0, record=AgentRecord(cost_usd=0.1, cost_reported=True), spend_complete=True, cleanup_complete=True, disposal_complete=True, finalization_failed=False)
    base.update(kw)
    return AttemptOutcome(**base)


APPROVAL = Approval(plan_digest="0" * 64, limits=SpendLimits(1.0, 0.5), max_attempts=4, credential_env=(CRED,))


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (_outcome(), None),
        (_outcome(cleanup_complete=False), "cleanup_unverified"),
        (_outcome(finalization_failed=True), "finalization_failed"),
        (_outcome(disposal_complete=False), "disposal_failed"),
        (_outcome(record=AgentRecord(cost_usd=0.6, cost_reported=True)), "attempt_exceeded_ceiling"),
        (_outcome(spend_complete=False), "spend_incomplete"),
    ],
)
def test_after_attempt_stop_rules(outcome, reason):
    assert after_attempt(outcome, APPROVAL) == reason


def test_gate_rules():
    ok = dict(stop_reason=None, now=0.0, deadline=10.0, attempted=0, approval=APPROVAL, measured=0.0)
    assert gate(**ok) is None
    assert gate(**{**ok, "now": 10.0}) == "run_deadline"
    assert gate(**{**ok, "attempted": 4}) == "max_attempts"
    assert gate(**{**ok, "measured": 0.51}) == "spend_limit"
    assert gate(**{**ok, "measured": 0.5}) is None
    assert gate(**{**ok, "stop_reason": "cleanup_unverified", "now": 99.0}) == "cleanup_unverified"


# --- credentials never leak ------------------------------------------------------


def test_a_canary_credential_never_reaches_any_file_the_run_writes(ws: Workspace, tmp_path):
    # An agent that prints every credential it can see: the worst case for leaks.
    leaky = ws.root / "operator" / "leaky.toml"
    leaky.write_text(
        'adapter = "generic"\npaid = false\nconfig_env = "CAMPAIGN_AGENT_CONFIG"\napplied_profile_from = "adapter"\n'
        'client = ["{python}", "-c", "import os, sys; print(os.environ.get(\'%s\')); sys.stderr.write(str(dict(os.environ)))"]\n'
        '[env]\nANTHROPIC_BASE_URL = "{proxy_url}"\n' % CRED
    )
    plan, digest = approve(ws, leaky)
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    failures = tmp_path / "failures"
    report = ws.root / "reports" / "live.json"
    args = live_args(ws, leaky, "--failure-dir", str(failures)) + ["--live", "--plan", str(plan), "--approve-plan-digest", digest]
    args[args.index("--output") + 1] = str(report)
    proc = subprocess.run([sys.executable, "-m", "campaign", *args], env={**os.environ, "TMPDIR": str(runner_tmp)}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr  # its attempts fail without spend: the run stops early
    assert CANARY not in proc.stdout and CANARY not in proc.stderr
    assert list(failures.glob("*/client.out")), "the failed attempts left no bundle to scan"
    scanned = 0
    for base in (ws.root / "reports", ws.db_path.parent, failures, runner_tmp):
        for path in base.rglob("*"):
            if path.is_file():
                scanned += 1
                assert CANARY.encode() not in path.read_bytes(), path
    assert scanned >= 5


# --- interruption ----------------------------------------------------------------


def test_interrupt_mid_attempt_exits_130_with_the_row_persisted(ws: Workspace):
    agent = agent_file(ws, "hang")
    plan, digest = approve(ws, agent)
    report = ws.root / "reports" / "live.json"
    args = live_args(ws, agent) + ["--live", "--plan", str(plan), "--approve-plan-digest", digest]
    args[args.index("--output") + 1] = str(report)
    runner_tmp = ws.root / "runner-tmp"
    runner_tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "campaign", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(runner_tmp)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not rows(ws, "SELECT count(*) FROM ledger WHERE role = 'client'")[0][0]:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    ((cid, state, stop, _, _),) = live_campaign(ws)
    assert (state, stop) == ("interrupted", "interrupted")
    assert rows(ws, f"SELECT status, outcome, cleanup_complete FROM attempts WHERE campaign_id = {cid}") == [("interrupted", "interrupted", 1)]
    # Every trial, the interrupted attempt's own included (it carries no verdict), has no result and says why.
    assert rows(ws, f"SELECT count(*) FROM trials WHERE campaign_id = {cid} AND not_attempted_reason = 'interrupted'") == [(4,)]
    assert json.loads(report.read_text())["kind"] == "live_agentic_coding_paired"


# --- a task suite (--task-suite) --------------------------------------------------------


def test_a_task_of_the_suite_changed_after_approval_is_named_and_nothing_runs(ws: Workspace):
    suite = Path(shutil.copytree(Path(__file__).parent / "suites" / "engine-example", ws.root / "operator" / "engine-example"))
    agent = agent_file(ws)
    extra = ("--task-suite", str(suite))
    tasks = "py-wordcount,node-slugify"
    planned = run(ws.args("--agent", str(agent), "--repetitions", "1", "--model", "offline:synthetic", *extra, tasks=tasks))
    assert planned.exit_code == 0, planned.output
    assert "tasks: task suite engine-example (2 of its 4 tasks)" in planned.output and "never checked" in planned.output
    plan = json.loads(ws.output.read_text())["plan"]
    bound = plan["experiment"]["task_suite"]
    assert (bound["name"], sorted(bound["tasks"]), sorted(bound["unchecked"])) == ("engine-example", ["node-slugify", "py-wordcount"], ["node-slugify", "py-wordcount"])
    plan.update(approved=True, max_spend_usd=10.0, per_attempt_spend_ceiling_usd=1.0, provider_budget_enforced=True, credential_env=[CRED])
    plan_path = ws.root / "operator" / "plan.json"
    plan_path.write_text(json.dumps(plan))
    live = ws.args("--agent", str(agent), "--repetitions", "1", "--model", "offline:synthetic", *extra, "--live", "--plan", str(plan_path),
                   "--approve-plan-digest", spec_digest(plan), output=ws.root / "reports" / "live.json", tasks=tasks)  # fmt: skip
    verifier = suite / "node-slugify" / "verifier" / "check_slugify.js"
    original = verifier.read_bytes()
    verifier.write_bytes(original + b"\n")
    refused_live(ws, run(live), "differs from the approved plan in: task_suite.tasks[node-slugify]")
    verifier.write_bytes(original)
    result = run(live)
    assert result.exit_code == 0, result.output
    assert rows(ws, "SELECT count(*) FROM attempts") == [(4,)]
