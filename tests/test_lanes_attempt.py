"""One attempt end to end, through the real offline agent, supervisor and verifier."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.config import parse_base_config, render_variant
from campaign.errors import Interrupted
from campaign.lanes import bundles
from campaign.lanes.attempt import AttemptPlan, classify, interruption_in, run_attempt, within
from campaign.agents.record import AgentRecord
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.supervise import TeardownBudget

FAST = TeardownBudget(grace=1.0, kill_wait=5.0, total=15.0, run_grace=0.5)
RECOVERY = next(t.name for t in benchmark.all_tasks() if t.requires_failed_tool_call)
PLAIN = "semver-precedence"


def _trial(engine, task: str, variant: str = "coding"):
    schedule = [t for t in build_schedule([task], 1, seed=3) if t.variant == variant]
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=3, experiment={}),
        schedule,
        model="offline:synthetic",
        default_provider="offline",
    )
    trial = repository.trials_in_order(engine, campaign_id)[0]
    assert repository.admit_trial(engine, trial.id)
    return trial


def _plan(task: str, *, variant: str | None = "coding", modes=(), success=1.0, timeout=60.0, tmp_base=None, **kw) -> AttemptPlan:
    config_text = render_variant(parse_base_config(b"[agent]\nname = 'x'\n"), variant).text if variant else None
    args = ["--success-legacy", str(success), "--success-coding", str(success)]
    for mode in modes:
        args += ["--mode", mode]
    return AttemptPlan(
        task=benchmark.get_task(task),
        profile=load_profile("offline"),
        model="offline:synthetic",
        seed=5,
        timeout_s=timeout,
        variant=variant,
        config_text=config_text,
        teardown_budget=FAST,
        extra_client_args=tuple(args),
        tmp_base=tmp_base,
        **kw,
    )


@pytest.fixture
def tmp_base(tmp_path):
    base = tmp_path / "runner-tmp"
    base.mkdir()
    return base


def test_a_solved_task_passes_with_counters_and_is_disposed(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, tmp_base=tmp_base))
    assert (result.outcome, result.verified_pass, result.failure_class) == ("passed", True, None)
    row = repository.get_attempt(engine, result.attempt_id)
    assert row.status == "finished" and row.verified_pass is True and row.verifier_exit_code == 0
    assert row.completed_turns and row.output_tokens and row.cost_usd is not None
    # Its cost is reported, but no profiler flush proves the wire whole: this client does
    # not talk through the recording proxy (tests/test_lanes_wire.py has one that does).
    assert row.spend_complete is False and row.flush_complete is None and result.spend_gap == "no_flush"
    assert row.cleanup_complete is True and row.disposal_complete is True
    assert row.finalization_failed is False and row.private_root is None
    assert json.loads(row.applied_profiles) == ["coding"]
    assert row.config_digest and row.fixture_digest == benchmark.fixture_digest(benchmark.get_task(PLAIN))
    assert list(tmp_base.iterdir()) == []
    assert {e.role for e in repository.ledger_for(engine, result.attempt_id)} >= {"client", "verifier"}


def test_an_unsolved_task_fails_on_the_verifier_not_on_the_agents_word(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, success=0.0, tmp_base=tmp_base))
    assert (result.outcome, result.failure_class, result.verified_pass) == ("failed", "verifier_failed", False)
    row = repository.get_attempt(engine, result.attempt_id)
    assert row.verifier_exit_code not in (None, 0)
    assert row.cost_usd is not None  # a failed attempt still keeps its spend


def test_a_hanging_agent_times_out_and_teardown_is_verified(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, modes=("ignore-term",), timeout=3.0, tmp_base=tmp_base))
    assert (result.outcome, result.failure_class) == ("timeout", "timeout")
    assert result.cleanup_complete is True
    row = repository.get_attempt(engine, result.attempt_id)
    assert row.cleanup_complete is True and row.verifier_exit_code is None
    assert 2.5 <= row.wall_seconds < 30


def test_a_crashing_agent_keeps_no_invented_counters(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, modes=("crash",), tmp_base=tmp_base))
    assert result.outcome == "failed"
    row = repository.get_attempt(engine, result.attempt_id)
    assert row.cost_usd is None and row.output_tokens is None and row.completed_turns is None
    assert row.spend_complete is False and row.cleanup_complete is True


def test_a_background_child_is_still_cleaned_up(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, modes=("background-child",), tmp_base=tmp_base))
    assert result.cleanup_complete is True
    ledger = repository.ledger_for(engine, result.attempt_id)
    for entry in ledger:
        assert not _alive(entry.pid, entry.start_ticks), entry
    assert any(e.discovered for e in ledger), "the double-forked child was never recorded"


def test_no_usage_gives_null_counters_not_zero(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, modes=("no-usage",), tmp_base=tmp_base))
    assert result.outcome == "passed"  # the verifier passed; spend is what is unknown
    row = repository.get_attempt(engine, result.attempt_id)
    for name in ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_usd"):
        assert getattr(row, name) is None, name
    assert row.spend_complete is False and result.spend_gap == "no_cost"


def test_recovery_task_fails_without_an_observed_failed_tool_call():
    task = benchmark.get_task(RECOVERY)
    plan = _plan(RECOVERY)
    observed = AgentRecord(tool_errors=0, applied_profiles=("coding",))
    assert classify(plan, gate_ok=True, boot_ok=True, client_timed_out=False, record=observed, verifier_exit=0, verifier_timed_out=False) == ("failed", "no_failed_tool_call", False)
    unknown = dataclasses.replace(observed, tool_errors=None)
    assert classify(plan, gate_ok=True, boot_ok=True, client_timed_out=False, record=unknown, verifier_exit=0, verifier_timed_out=False)[1] == "no_failed_tool_call"
    assert task.requires_failed_tool_call


def test_recovery_task_passes_when_the_agent_recovered_from_a_failed_call(engine, tmp_base):
    trial = _trial(engine, RECOVERY)
    result = run_attempt(engine, trial, _plan(RECOVERY, tmp_base=tmp_base))
    assert result.outcome == "passed", result
    assert repository.get_attempt(engine, result.attempt_id).tool_errors >= 1


def test_profile_gate_refuses_a_config_that_resolves_to_another_profile(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    baseline_text = render_variant(parse_base_config(b""), "baseline").text
    plan = dataclasses.replace(_plan(PLAIN, tmp_base=tmp_base), config_text=baseline_text)  # coding label, legacy config
    result = run_attempt(engine, trial, plan)
    assert (result.outcome, result.failure_class) == ("failed", "profile_gate")
    row = repository.get_attempt(engine, result.attempt_id)
    assert row.completed_turns is None and row.cost_usd is None
    assert [e.role for e in repository.ledger_for(engine, result.attempt_id)] == []  # no client ever ran


def test_observed_wrong_profile_cannot_pass(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, modes=("wrong-profile",), tmp_base=tmp_base))
    assert (result.outcome, result.failure_class, result.verified_pass) == ("failed", "profile_unconfirmed", False)


@pytest.mark.parametrize(("applied", "outcome"), [(("coding",), "passed"), (("legacy", "coding"), "profile_unconfirmed"), (("legacy",), "profile_unconfirmed"), ((), "profile_unconfirmed")])
def test_only_its_own_treatment_and_nothing_else_confirms_a_variant(applied, outcome):
    # Two variants' catalogs on one attempt's wire (or two profiles reported) prove neither.
    record = AgentRecord(applied_profiles=applied)
    found = classify(_plan(PLAIN), gate_ok=True, boot_ok=True, client_timed_out=False, record=record, verifier_exit=0, verifier_timed_out=False)
    assert (found[1] or found[0]) == outcome


def _custom_offline(tmp_path: Path, table: str):
    path = tmp_path / "custom-offline.toml"
    path.write_text((Path(__file__).resolve().parents[1] / "campaign" / "agents" / "profiles" / "offline.toml").read_text() + table)
    return load_profile(str(path))


def test_a_variant_of_another_name_is_confirmed_by_the_disclosure_it_applies(engine, tmp_base, tmp_path):
    from campaign.config import render_config

    profile = _custom_offline(tmp_path, '[variants.terse]\ndisclosure = "coding"\n')
    trial = _trial(engine, PLAIN)
    config = render_config(parse_base_config(b""), "terse", "coding").text
    plan = dataclasses.replace(_plan(PLAIN, tmp_base=tmp_base), profile=profile, variant="terse", config_text=config)
    assert (plan.expected_disclosure, plan.expected_label) == ("coding", "coding")
    result = run_attempt(engine, trial, plan)
    assert (result.outcome, result.verified_pass) == ("passed", True), result
    assert result.record.applied_profiles == ("coding",)


def test_a_variant_an_adapter_cannot_confirm_never_runs(engine, tmp_base, tmp_path):
    from campaign.config import render_config

    # No disclosure of its own: the offline agent reports only disclosure profiles, so
    # nothing it reports could confirm this variant; no client runs.
    profile = _custom_offline(tmp_path, '[variants.lean]\nenv = { LEAN = "1" }\n')
    trial = _trial(engine, PLAIN)
    plan = dataclasses.replace(_plan(PLAIN, tmp_base=tmp_base), profile=profile, variant="lean", config_text=render_config(parse_base_config(b""), "lean", None).text)
    assert (plan.expected_disclosure, plan.expected_label) == (None, None)
    result = run_attempt(engine, trial, plan)
    assert (result.outcome, result.failure_class) == ("failed", "profile_gate")
    assert [e.role for e in repository.ledger_for(engine, result.attempt_id)] == []


def test_agent_without_profile_reporting_fails_the_gate(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    plan = _plan(PLAIN, tmp_base=tmp_base)
    plan = dataclasses.replace(plan, profile=dataclasses.replace(plan.profile, applied_profile_from="none"))
    assert run_attempt(engine, trial, plan).failure_class == "profile_gate"


def test_failure_bundle_is_private_and_scrubbed(engine, tmp_base, tmp_path, monkeypatch):
    canary = "sk-canary-" + "7" * 24
    monkeypatch.setenv("OFFLINE_TEST_API_KEY", canary)
    trial = _trial(engine, PLAIN)
    failures = tmp_path / "failures"
    plan = _plan(PLAIN, success=0.0, tmp_base=tmp_base, failure_dir=failures, credential_names=("OFFLINE_TEST_API_KEY",))
    result = run_attempt(engine, trial, plan)
    assert result.outcome == "failed"
    bundle = failures / "semver-precedence_r1_coding"
    assert (bundle / "client.out").is_file() and (bundle / "cleanup.log").is_file()
    assert oct(failures.stat().st_mode & 0o777) == "0o700"
    for path in failures.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes()


def test_a_trial_that_fails_again_gets_a_bundle_of_its_own(engine, tmp_base, tmp_path):
    """The same trial of two campaigns (or a trial run again): no bundle is overwritten or
    mixed with another attempt's files."""
    failures = tmp_path / "failures"
    plan = _plan(PLAIN, success=0.0, tmp_base=tmp_base, failure_dir=failures)
    assert [run_attempt(engine, _trial(engine, PLAIN), plan).outcome for _ in range(2)] == ["failed", "failed"]
    assert sorted(p.name for p in failures.iterdir()) == ["semver-precedence_r1_coding", "semver-precedence_r1_coding.2"]
    assert all((failures / name / "cleanup.log").is_file() for name in ("semver-precedence_r1_coding", "semver-precedence_r1_coding.2"))


@pytest.mark.parametrize("before", [b"", b"x", b"xy", b'{"Authorization": "Basic '])
@pytest.mark.parametrize("after", [b"", b"z", b"zz"])
def test_a_credential_is_scrubbed_trimmed_and_base64_encoded_too(before, after):
    """A header's value reaches the provider trimmed, and a provider may echo it back, or
    encode it (Basic auth, a JWT-like id): every such form is redacted."""
    key = "sk-ant-AUDIT1234567890SECRETabcdef "  # set with a trailing space
    forms = bundles.secret_forms(key)
    for written in (before + key.strip().encode() + after, base64.b64encode(before + key.strip().encode() + after)):
        scrubbed = bundles._scrub(b"echo: " + written + b" end", forms)
        assert bundles.REDACTED in scrubbed and b"AUDIT1234567890" not in scrubbed
        # What is left of an encoded key is its edges: at most 3 of its characters each side.
        assert len(scrubbed) <= len(b"echo: ") + len(before) * 2 + 8 + len(bundles.REDACTED) + len(after) * 2 + 8 + len(b" end")


@pytest.mark.parametrize(
    "echo",
    [
        b"key=sk-proj%2Fab%2Bcd%3D0123456789xyz",  # percent-encoded, upper case hex
        b"key=sk-proj%2fab%2bcd%3d0123456789xyz",  # lower case hex, as some stacks write it
        b'{"error": "bad key sk-proj\\/ab+cd=0123456789xyz"}',  # a JSON encoder that escapes "/"
    ],
)
def test_a_credential_is_scrubbed_in_the_encodings_an_echo_may_use(echo):
    forms = bundles.secret_forms("sk-proj/ab+cd=0123456789xyz")
    scrubbed = bundles._scrub(echo, forms)
    assert bundles.REDACTED in scrubbed and b"0123456789xyz" not in scrubbed


def _alive(pid: int, start_ticks: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return int(fields[19]) == start_ticks and fields[0] != "Z"


def test_interruption_mid_attempt_persists_the_row_and_tears_down(engine, tmp_base):
    import signal
    import threading

    trial = _trial(engine, PLAIN)
    from campaign.supervise import interruptible

    timer = threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    with interruptible():
        timer.start()
        started = time.monotonic()
        with pytest.raises(Interrupted):
            run_attempt(engine, trial, _plan(PLAIN, modes=("hang",), timeout=60, tmp_base=tmp_base))
    assert time.monotonic() - started < 30
    (row,) = repository.attempts_for(engine, trial.campaign_id)
    assert row.status == "interrupted" and row.outcome == "interrupted"
    assert row.cleanup_complete is True and row.teardown_outcome in ("clean", "forced", "recovered")
    for entry in repository.ledger_for(engine, row.id):
        assert not _alive(entry.pid, entry.start_ticks)


def test_every_classification_is_a_reportable_word():
    from itertools import product

    from campaign import vocabulary
    from campaign.vocabulary import ERROR_CLASSES

    for task in (PLAIN, RECOVERY):
        plan = _plan(task)
        for gate_ok, boot_ok, timed_out, output_ok, workspace_ok, exit_code, v_timeout, error, tool_errors, applied in product(
            (True, False), (True, False), (True, False), (True, False), (True, False), (None, 0, 1), (True, False), (None, *sorted(ERROR_CLASSES)), (None, 0, 1), (None, ("coding",), ("legacy",))
        ):
            record = AgentRecord(error_class=error, tool_errors=tool_errors, applied_profiles=applied)
            outcome, failure, verified = classify(
                plan, gate_ok=gate_ok, boot_ok=boot_ok, client_timed_out=timed_out, output_ok=output_ok, workspace_ok=workspace_ok,
                record=record, verifier_exit=exit_code, verifier_timed_out=v_timeout,
            )
            assert outcome in vocabulary.OUTCOMES
            assert failure is None or failure in vocabulary.FAILURE_CLASSES
            if not (output_ok and workspace_ok):
                assert verified is False  # tampered evidence can never pass


def test_an_interrupt_before_the_supervisor_starts_still_persists_the_row(engine, tmp_base, monkeypatch):
    import signal

    from campaign import isolation
    from campaign.lanes import attempt as attempt_module
    from campaign.supervise import interruptible

    real = isolation.create_private_root

    def signalled_then_create(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # a real signal, landing exactly here
        return real(*args, **kwargs)

    monkeypatch.setattr(attempt_module.isolation, "create_private_root", signalled_then_create)
    trial = _trial(engine, PLAIN)
    with interruptible(), pytest.raises(Interrupted):
        run_attempt(engine, trial, _plan(PLAIN, tmp_base=tmp_base))
    (row,) = repository.attempts_for(engine, trial.campaign_id)
    assert (row.status, row.outcome, row.cleanup_complete, row.disposal_complete) == ("interrupted", "interrupted", True, True)
    assert repository.ledger_for(engine, row.id) == []
    assert list(tmp_base.iterdir()) == []


RUNTIME_SERVER = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == '/healthz' else 404); self.end_headers()
    def log_message(self, *a): pass
server = http.server.HTTPServer(('127.0.0.1', 0), H)
print('listening on 127.0.0.1:%d' % server.server_address[1], flush=True)
server.serve_forever()
"""
# The client proves the runtime answers on its announced port, then runs the offline agent.
CLIENT_VIA_RUNTIME = (
    "import os, sys, urllib.request; "
    "assert urllib.request.urlopen('http://127.0.0.1:%s/healthz' % sys.argv[1], timeout=5).status == 200; "
    "os.execv(sys.executable, [sys.executable, '-P', '-m', 'campaign.agents.offline'] + sys.argv[2:])"
)


def _runtime_profile(runtime_code: str):
    from campaign.agents.profile_parse import parse_profile

    return parse_profile(
        {
            "adapter": "generic",
            "paid": False,
            "config_env": "CAMPAIGN_AGENT_CONFIG",
            "applied_profile_from": "adapter",
            "client": ["{python}", "-c", CLIENT_VIA_RUNTIME, "{runtime_port}", "--task", "{task}", "--prompt-file", "{prompt_file}", "--seed", "{seed}", "--trial-id", "{trial_id}", "--success-coding", "1.0"],
            "runtime": {"argv": ["{python}", "-c", runtime_code], "deadline_seconds": 20, "health": {"kind": "http", "port_pattern": r"listening on 127\.0\.0\.1:(\d+)", "path": "/healthz"}},
        },
        "with-runtime",
    )


def test_a_runtime_is_booted_fresh_health_checked_and_torn_down(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    plan = dataclasses.replace(_plan(PLAIN, tmp_base=tmp_base), profile=_runtime_profile(RUNTIME_SERVER), extra_client_args=())
    result = run_attempt(engine, trial, plan)
    assert (result.outcome, result.cleanup_complete) == ("passed", True), result
    ledger = repository.ledger_for(engine, result.attempt_id)
    runtime = [e for e in ledger if e.role == "runtime"]
    assert len(runtime) == 1 and not _alive(runtime[0].pid, runtime[0].start_ticks)


def test_a_runtime_that_dies_during_boot_fails_the_attempt_before_any_client_call(engine, tmp_base):
    trial = _trial(engine, PLAIN)
    plan = dataclasses.replace(_plan(PLAIN, tmp_base=tmp_base), profile=_runtime_profile("import sys; sys.exit(3)"), extra_client_args=())
    result = run_attempt(engine, trial, plan)
    assert (result.outcome, result.failure_class, result.cleanup_complete) == ("failed", "runtime_boot_failed", True)
    assert [e.role for e in repository.ledger_for(engine, result.attempt_id)] == ["runtime"]


def test_an_engine_error_is_recorded_and_stops_the_lane_instead_of_raising(engine, tmp_base, monkeypatch):
    from campaign.lanes import attempt as attempt_module

    def vanished(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", str(tmp_base / "gone"))

    monkeypatch.setattr(attempt_module.isolation, "create_private_root", vanished)
    trial = _trial(engine, PLAIN)
    result = run_attempt(engine, trial, _plan(PLAIN, tmp_base=tmp_base))
    # The engine's fault is no verdict of the agent's: the trial goes back to the queue.
    assert (result.outcome, result.failure_class, result.stop_reason, result.verified_pass) == ("engine_error", "engine_error", "engine_error", None)
    assert result.error.startswith("FileNotFoundError")
    (row,) = repository.attempts_for(engine, trial.campaign_id)
    assert (row.status, row.failure_class, row.cleanup_complete, row.disposal_complete) == ("faulted", "engine_error", True, True)
    assert [t.status for t in repository.trials_in_order(engine, trial.campaign_id) if t.id == trial.id] == ["scheduled"]


def test_tampered_captures_or_workspace_never_pass():
    plan = _plan(PLAIN)
    passing = AgentRecord(applied_profiles=("coding",))
    kw = dict(gate_ok=True, boot_ok=True, client_timed_out=False, record=passing, verifier_exit=0, verifier_timed_out=False)
    assert classify(plan, **kw) == ("passed", None, True)
    assert classify(plan, output_ok=False, **kw) == ("failed", "unparseable_output", False)
    assert classify(plan, workspace_ok=False, **kw) == ("failed", "workspace_tampered", False)


@pytest.mark.parametrize(("remaining", "own", "deadline"), [(100.0, None, 100.0), (100.0, 30.0, 30.0), (20.0, 30.0, 20.0), (-5.0, 30.0, 0.001)])
def test_a_tasks_own_timeout_applies_within_what_is_left_of_the_attempt(remaining, own, deadline):
    assert within(remaining, own) == deadline


def test_a_failure_raised_while_an_interrupt_unwound_is_that_interrupt():
    # A cleanup that met a half-done step raises its own error with the operator's stop in
    # its chain: the attempt is interrupted, never an engine error.
    stop = Interrupted("received SIGINT")
    try:
        try:
            raise stop
        except Interrupted:
            raise OSError("Bad file descriptor")
    except OSError as exc:
        secondary = exc
    assert interruption_in(secondary) is stop and interruption_in(stop) is stop
    assert interruption_in(RuntimeError("no stop anywhere")) is None
    wrapped = ValueError("wrapped")
    wrapped.__cause__ = secondary
    assert interruption_in(wrapped) is stop
