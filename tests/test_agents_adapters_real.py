"""Output adapters against real client output, captured against the replay provider.

Every ``real_*`` sample under tests/samples/agents/ is what an installed client
printed (Claude Code 2.1.197, Codex CLI 0.171.0, mini-swe-agent 2.4.6) while it
solved a benchmark task through the recording proxy and the replay provider,
unedited. The replay provider scripts the reference solution, so the figures are
known: unit-table-regen runs a command that fails before the fix (one failed
tool call), and its six model requests carry the scripted usage. Variations a
sample cannot show by itself (a stream cut by a kill, a subagent, an unpriced
model) are derived from a real sample in the test, never written from scratch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from campaign.agents import profiles
from campaign.agents.adapters import get_adapter
from campaign.agents.record import AgentRecord, turn_usage_matched

SAMPLES = Path(__file__).parent / "samples" / "agents"
TOKENS = ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


def raw(client: str, sample: str) -> bytes:
    return (SAMPLES / client / sample).read_bytes()


def parse(client: str, body: bytes, exit_code: int | None = 0) -> AgentRecord:
    return get_adapter(client).parse(body, b"", exit_code)


def tokens(record: AgentRecord) -> tuple[int | None, ...]:
    return tuple(getattr(record, name) for name in TOKENS)


# --- claude-code (claude -p --output-format stream-json --verbose) ----------------


def test_claude_stream_counts_tool_calls_and_the_failed_one():
    r = parse("claude-code", raw("claude-code", "real_stream_unit_table_regen.jsonl"))
    assert r.completed_turns == 6 and r.error_class is None
    assert tokens(r) == (756, 16866, 1617, 291)
    assert r.cost_usd == pytest.approx(0.01775655) and r.cost_reported
    # Read, the failing probe (Bash, exit 1), Write, the generator and the tests (Bash).
    assert (r.tool_calls, r.tool_errors) == (5, 1)
    assert r.nested_sessions_observed is False
    assert r.model == "claude-sonnet-4-5" and r.session_id == "767e7236-efb6-41b1-89da-69caaf5d09c1"


def test_claude_permission_denials_are_failed_calls_and_the_error_class():
    # Without --dangerously-skip-permissions, headless Claude Code refuses Bash and Write.
    r = parse("claude-code", raw("claude-code", "real_stream_permission_denied.jsonl"))
    assert r.error_class == "permission_denied"
    assert (r.tool_calls, r.tool_errors) == (5, 4)  # only the Read ran


def test_claude_stream_cut_before_its_result_keeps_lower_bounds():
    lines = raw("claude-code", "real_stream_unit_table_regen.jsonl").decode().splitlines()
    assert json.loads(lines[-1])["type"] == "result"
    for body in ("\n".join(lines[:-1]) + "\n", "\n".join(lines[:-1]) + "\n" + lines[-1][:40]):
        cut = parse("claude-code", body.encode(), exit_code=None)
        assert cut.error_class == "unparseable_output"
        assert (cut.tool_calls, cut.tool_errors) == (5, 1)
        assert cut.completed_turns is None and cut.cost_usd is None and not cut.cost_reported
        assert tokens(cut) == (None, None, None, None)
        assert cut.session_id == "767e7236-efb6-41b1-89da-69caaf5d09c1"


def test_claude_subagent_messages_mark_nesting():
    lines = [json.loads(line) for line in raw("claude-code", "real_stream_unit_table_regen.jsonl").decode().splitlines()]
    lines[1]["parent_tool_use_id"] = "toolu_task_call"  # as a Task subagent's message carries it
    r = parse("claude-code", "\n".join(json.dumps(line) for line in lines).encode())
    assert r.nested_sessions_observed is True and r.tool_calls == 5


def test_claude_bare_result_shows_no_tool_counts():
    lines = raw("claude-code", "real_stream_unit_table_regen.jsonl").decode().splitlines()
    r = parse("claude-code", lines[-1].encode())  # what --output-format json prints
    assert r.completed_turns == 6 and r.cost_reported
    assert (r.tool_calls, r.tool_errors, r.nested_sessions_observed) == (None, None, None)


def test_claude_nonzero_exit_is_an_agent_error():
    assert parse("claude-code", raw("claude-code", "real_stream_unit_table_regen.jsonl"), exit_code=1).error_class == "agent_error"


# --- codex (codex exec --json) ----------------------------------------------------


def test_codex_exec_counts_commands_and_the_failed_one():
    r = parse("codex", raw("codex", "real_exec_unit_table_regen.jsonl"))
    # One user turn held six model requests; the events do not show them, so no count.
    assert r.completed_turns is None
    # input_tokens 19239 includes the 16866 cached; cache_write_input_tokens is a placeholder 0.
    assert tokens(r) == (19239 - 16866, 16866, None, 291)
    assert (r.tool_calls, r.tool_errors) == (5, 1)  # the probe exits 1
    assert r.cost_usd is None and not r.cost_reported
    # The "model metadata not found" item is a warning, not a failure.
    assert r.error_class is None
    assert r.session_id == "01a22fb4-6c24-7833-b0b7-5f119faa6836"


def test_codex_coding_variant_output_reads_the_same_way():
    r = parse("codex", raw("codex", "real_exec_semver_coding.jsonl"))
    assert r.completed_turns is None and r.error_class is None
    assert tokens(r) == (8766 - 7244, 7244, None, 182)
    assert (r.tool_calls, r.tool_errors) == (3, 0)


def test_codex_stream_cut_mid_run_keeps_the_commands_seen():
    lines = raw("codex", "real_exec_unit_table_regen.jsonl").decode().splitlines()
    assert json.loads(lines[-1])["type"] == "turn.completed"
    cut = parse("codex", ("\n".join(lines[:-1]) + "\n" + lines[-1][:30]).encode(), exit_code=None)
    assert cut.error_class == "unparseable_output"
    assert (cut.tool_calls, cut.tool_errors) == (5, 1)
    assert tokens(cut) == (None, None, None, None)


# --- mini-swe-agent (trajectory printed by the profile's wrapper) -------------------


def test_mini_tool_calling_trajectory():
    body = raw("mini-swe-agent", "real_toolcalling_unit_table_regen.json")
    r = parse("mini-swe-agent", body)
    assert r.completed_turns == 6 and r.error_class is None
    assert tokens(r) == (2373, 16866, None, 291)
    # Five commands ran, the probe failed; the submit command ended the run and is
    # padded with a "not executed" result of code -1, which is not a failure.
    assert (r.tool_calls, r.tool_errors) == (5, 1)
    padded = [m for m in json.loads(body)["messages"] if (m.get("extra") or {}).get("exception_info") == "action was not executed"]
    assert len(padded) == 1 and padded[0]["role"] == "tool"
    assert r.cost_usd == pytest.approx(0.0015969) and r.cost_reported
    assert r.model == "openai/gpt-5-mini" and r.nested_sessions_observed is False
    assert turn_usage_matched(r)


def test_mini_text_based_trajectory_counts_the_same_commands():
    # Captured with model.action_regex widened to ```bash, the fence the replay
    # provider writes (mini 2.4.6 asks for ```mswea_bash_command).
    r = parse("mini-swe-agent", raw("mini-swe-agent", "real_textbased_unit_table_regen.json"))
    tool_calling = parse("mini-swe-agent", raw("mini-swe-agent", "real_toolcalling_unit_table_regen.json"))
    assert (r.tool_calls, r.tool_errors) == (tool_calling.tool_calls, tool_calling.tool_errors) == (5, 1)
    assert r.completed_turns == 6 and tokens(r) == tokens(tool_calling)
    assert r.error_class is None and turn_usage_matched(r)


def test_mini_format_errors_are_turns_and_no_command_is_zero():
    # The replay's ```bash fence against 2.4.6's text protocol: three unparseable replies.
    r = parse("mini-swe-agent", raw("mini-swe-agent", "real_textbased_format_errors.json"))
    assert r.error_class == "agent_error"  # RepeatedFormatError
    assert r.completed_turns == 3  # each reply was a billed model call
    assert (r.tool_calls, r.tool_errors) == (0, 0)  # a 2.x trajectory shows every result: 0 is observed
    assert tokens(r) == (1074, 933, None, 123)
    assert turn_usage_matched(r)


def test_mini_responses_api_trajectory():
    r = parse("mini-swe-agent", raw("mini-swe-agent", "real_responses_unit_table_regen.json"))
    assert r.completed_turns == 6 and tokens(r) == (2373, 16866, None, 291)
    assert (r.tool_calls, r.tool_errors) == (5, 1)
    assert r.cost_reported and turn_usage_matched(r)


def test_mini_anthropic_route_takes_cache_writes_out_of_uncached_input():
    # litellm folds cache reads and writes into prompt_tokens on the Anthropic route.
    r = parse("mini-swe-agent", raw("mini-swe-agent", "real_anthropic_unit_table_regen.json"))
    assert tokens(r) == (756, 16866, 1617, 291)
    assert r.cost_usd == pytest.approx(0.01775655) and r.cost_reported
    assert (r.tool_calls, r.tool_errors) == (5, 1)


def _with_costs(body: bytes, costs: list[float]) -> bytes:
    trajectory = json.loads(body)
    calls = [m for m in trajectory["messages"] if m.get("role") == "assistant"]
    for message, cost in zip(calls, costs, strict=True):
        message["extra"]["cost"] = cost
    trajectory["info"]["model_stats"]["instance_cost"] = sum(costs)
    return json.dumps(trajectory).encode()


def test_mini_unpriced_model_cost_is_unknown_not_free():
    # MSWEA_COST_TRACKING=ignore_errors records 0.0 for a model litellm cannot price.
    body = raw("mini-swe-agent", "real_toolcalling_unit_table_regen.json")
    free = parse("mini-swe-agent", _with_costs(body, [0.0] * 6))
    assert free.cost_usd is None and not free.cost_reported
    partial = parse("mini-swe-agent", _with_costs(body, [0.001] * 5 + [0.0]))
    assert partial.cost_usd == pytest.approx(0.005) and not partial.cost_reported


def test_mini_nonzero_exit_is_an_agent_error():
    r = parse("mini-swe-agent", raw("mini-swe-agent", "real_toolcalling_unit_table_regen.json"), exit_code=1)
    assert r.error_class == "agent_error" and r.tool_errors == 1


# --- the profiles that produce these outputs ---------------------------------------

VALUES = {
    "prompt": "Fix it.", "prompt_file": "/p", "cwd": "/work", "config_path": "/c", "model": "replay:gpt-5-mini",
    "model_provider": "replay", "model_name": "gpt-5-mini", "python": "python3", "task": "t", "trial_id": "x",
    "seed": "0", "launcher": "l", "proxy_url": "http://127.0.0.1:4321",
}


def test_codex_profile_reaches_the_proxy_and_trims_the_catalog_under_coding():
    profile = profiles.load_profile("codex")
    assert profile.applied_profile_from == "wire" and profile.credential_env_default == "OPENAI_API_KEY"
    baseline = profiles.client_argv(profile, VALUES, "baseline")
    coding = profiles.client_argv(profile, VALUES, "coding")
    assert 'model_providers.campaign.base_url="http://127.0.0.1:4321/v1"' in baseline
    assert baseline == coding[: len(baseline)] and baseline[-1] == "Fix it."
    assert coding[len(baseline):].count("--disable") == 3


def test_mini_profile_prints_the_trajectory_and_switches_protocol_under_coding():
    profile = profiles.load_profile("mini-swe-agent")
    assert profile.adapter == "mini-swe-agent" and profile.applied_profile_from == "wire"
    env = profiles.client_env(profile, None, VALUES, "coding")
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:4321/v1" and env["MSWEA_COST_TRACKING"] == "ignore_errors"
    baseline = profiles.client_argv(profile, VALUES, "baseline")
    coding = profiles.client_argv(profile, VALUES, "coding")
    assert baseline[:2] == ["sh", "-c"] and "-m" in baseline and "openai/gpt-5-mini" in baseline
    assert baseline[-2:] == ["-c", "mini.yaml"]
    assert coding[-4:] == ["-c", "mini_textbased.yaml", "--model-class", "litellm_textbased"]
