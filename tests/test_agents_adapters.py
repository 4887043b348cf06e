"""Each output adapter against realistic samples written from the clients' documented formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from campaign.agents.adapters import adapter_names, get_adapter
from campaign.agents.record import AgentRecord, turn_usage_matched

SAMPLES = Path(__file__).parent / "samples" / "agents"
TOKEN_FIELDS = ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


def parse(adapter: str, sample: str, exit_code: int | None = 0) -> AgentRecord:
    return get_adapter(adapter).parse((SAMPLES / adapter / sample).read_bytes(), b"", exit_code)


def assert_all_unknown(record: AgentRecord) -> None:
    for name in (*TOKEN_FIELDS, "completed_turns", "tool_calls", "tool_errors", "cost_usd"):
        assert getattr(record, name) is None, name
    assert record.cost_reported is False


def test_registry_knows_every_builtin():
    assert set(adapter_names()) == {"generic", "claude-code", "codex", "gemini", "opencode", "mini-swe-agent"}
    with pytest.raises(KeyError, match="known: claude-code"):
        get_adapter("nope")


def test_every_sample_directory_has_an_adapter():
    assert {p.name for p in SAMPLES.iterdir() if p.is_dir()} == set(adapter_names())


# --- claude-code ---------------------------------------------------------------


def test_claude_success():
    r = parse("claude-code", "success.json")
    assert (r.completed_turns, r.uncached_input_tokens, r.cached_input_tokens) == (7, 38, 98123)
    assert (r.cache_write_tokens, r.output_tokens) == (12094, 2214)
    assert r.cost_usd == pytest.approx(0.18342675) and r.cost_reported
    assert r.session_id == "3f2b6c1e-8d4a-4c51-9f0e-2a7d1b5e9c44"
    assert r.model == "claude-sonnet-4-5-20250929"  # not the helper model
    assert r.error_class is None and r.input_includes_cached is False
    # The result object shows no tool counts, turn identities or disclosure: unknown.
    assert (r.tool_calls, r.tool_errors, r.turn_usage, r.applied_profiles) == (None, None, None, None)
    assert not turn_usage_matched(r)


def test_claude_error_classes():
    assert parse("claude-code", "max_turns.json").error_class == "max_turns"
    denied = parse("claude-code", "permission_denied.json")
    assert denied.error_class == "permission_denied" and denied.output_tokens == 402
    assert parse("claude-code", "success.json", exit_code=1).error_class == "agent_error"


def test_claude_verbose_array_finds_the_result():
    r = parse("claude-code", "verbose_array.json")
    assert (r.completed_turns, r.output_tokens, r.cost_usd) == (2, 290, 0.0301)


def test_claude_truncated_and_missing_usage():
    cut = parse("claude-code", "truncated.json")
    assert cut.error_class == "unparseable_output"
    assert_all_unknown(cut)
    bare = parse("claude-code", "missing_usage.json")
    assert bare.error_class == "agent_error" and bare.completed_turns == 0
    for name in (*TOKEN_FIELDS, "cost_usd"):
        assert getattr(bare, name) is None, name
    assert bare.cost_reported is False


# --- codex -----------------------------------------------------------------------


def test_codex_success_uses_the_last_running_total_and_subtracts_cached():
    r = parse("codex", "success.jsonl")
    # Its events show user turns, not model requests: the turn count is the wire's to give.
    assert r.completed_turns is None
    assert r.cached_input_tokens == 49664
    assert r.uncached_input_tokens == 51020 - 49664  # input includes cached; last total only
    assert r.output_tokens == 310 and r.cache_write_tokens is None
    assert r.cost_usd is None and r.cost_reported is False
    assert r.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert (r.tool_calls, r.tool_errors) == (3, 1)
    # The "error" item is a warning, not a failure.
    assert r.error_class is None and r.input_includes_cached is True


def test_codex_failure_truncation_and_garbage():
    assert parse("codex", "failed.jsonl").error_class == "agent_error"
    cut = parse("codex", "truncated.jsonl", exit_code=None)
    # Killed mid-write: the complete lines before the cut are still observations.
    assert cut.error_class == "unparseable_output"
    assert (cut.completed_turns, cut.uncached_input_tokens, cut.cached_input_tokens) == (None, 1000, 8000)
    garbled = parse("codex", "garbled.jsonl")
    assert garbled.error_class == "unparseable_output"
    assert_all_unknown(garbled)


def test_codex_missing_usage_is_none_not_zero():
    r = parse("codex", "missing_usage.jsonl")
    assert r.completed_turns is None and r.error_class is None
    for name in TOKEN_FIELDS:
        assert getattr(r, name) is None, name


def test_codex_recovered_stream_error_is_not_a_failure():
    # A top-level "error" event is also how codex reports a stream retry
    # ("Reconnecting... 1/5"); a turn that then completes did not fail.
    r = parse("codex", "stream_retry.jsonl")
    assert r.error_class is None and r.completed_turns is None
    assert (r.uncached_input_tokens, r.cached_input_tokens, r.output_tokens) == (2220, 16000, 240)
    # An error that no completed turn follows is still a failure.
    assert parse("codex", "error_then_exit.jsonl", exit_code=None).error_class == "agent_error"


def test_codex_default_zero_usage_is_unknown():
    # codex prints Usage::default() (all zeros) when it saw no token count: not an observed 0.
    r = parse("codex", "no_token_count.jsonl")
    assert r.completed_turns is None and r.error_class is None
    for name in TOKEN_FIELDS:
        assert getattr(r, name) is None, name


# --- gemini ----------------------------------------------------------------------


def test_gemini_success_sums_models():
    r = parse("gemini", "success.json")
    assert r.cached_input_tokens == 60112
    assert r.uncached_input_tokens == 84211 + 1620 - 60112
    assert r.output_tokens == 1433 + 1246 + 12 + 32  # thoughts are billed as output
    assert (r.tool_calls, r.tool_errors) == (5, 1)
    assert r.model == "gemini-2.5-pro" and r.session_id.startswith("c2a4e6f8")
    assert r.completed_turns is None and r.cost_usd is None and r.error_class is None


def test_gemini_error_truncated_missing():
    err = parse("gemini", "error.json", exit_code=1)
    assert err.error_class == "agent_error" and err.tool_calls == 0
    cut = parse("gemini", "truncated.json")
    assert cut.error_class == "unparseable_output"
    assert_all_unknown(cut)
    bare = parse("gemini", "missing_usage.json")
    assert bare.error_class is None
    assert_all_unknown(bare)


# --- opencode --------------------------------------------------------------------


def test_opencode_success_pairs_steps():
    r = parse("opencode", "success.jsonl")
    assert r.completed_turns == 3
    assert r.uncached_input_tokens == 1840 + 310 + 150
    assert r.cached_input_tokens == 10240 + 12288 + 12544
    assert r.cache_write_tokens == 2048
    assert r.output_tokens == 96 + 64 + 120 + 40
    assert r.cost_usd == pytest.approx(0.0246) and r.cost_reported
    assert (r.tool_calls, r.tool_errors) == (2, 1)
    assert r.nested_sessions_observed is False
    assert [t.request_id for t in r.turn_usage][0] == "prt_b6b8e8ff6001kGh2Jq3xV1aaaa"
    assert turn_usage_matched(r)


def test_opencode_pricing_a_model_it_does_not_know_at_zero_is_an_unknown_cost():
    # Found by an adversarial audit: opencode's $0 for an unpriced model was counted as
    # the measured, complete spend, so no spend cap ever moved.
    body = re.sub(rb'"cost":[0-9.]+', b'"cost":0', (SAMPLES / "opencode" / "success.jsonl").read_bytes())
    r = get_adapter("opencode").parse(body, b"", 0)
    assert (r.cost_usd, r.cost_reported) == (None, False)
    assert r.uncached_input_tokens == 1840 + 310 + 150 and turn_usage_matched(r)  # the wire can still cost it


def test_opencode_nested_session_counts_only_the_parent():
    r = parse("opencode", "nested.jsonl")
    assert r.session_id == "ses_parent00000000000000000001"
    assert (r.completed_turns, r.uncached_input_tokens, r.cost_usd) == (1, 900, 0.01)
    assert r.nested_sessions_observed is True
    assert not turn_usage_matched(r)  # the child's spend is not proven to be in ours


def test_opencode_error_truncated_missing():
    assert parse("opencode", "error.jsonl").error_class == "agent_error"
    cut = parse("opencode", "truncated.jsonl", exit_code=None)
    assert cut.error_class == "unparseable_output" and cut.completed_turns == 1
    bare = parse("opencode", "missing_usage.jsonl")
    assert bare.completed_turns == 1
    for name in (*TOKEN_FIELDS, "cost_usd"):
        assert getattr(bare, name) is None, name
    assert bare.cost_reported is False and not turn_usage_matched(bare)


def test_opencode_tool_errors_unknown_when_the_stream_cannot_show_them():
    # Older `opencode run --format json` emits tool_use only for completed tools:
    # with no failed part and no closing "done" event, failures were invisible.
    old = parse("opencode", "completed_only.jsonl")
    assert (old.tool_calls, old.tool_errors) == (None, None)
    assert old.completed_turns == 2 and old.cost_reported
    # A client that ends with "done" also reports failed tool parts: 0 is observed.
    new = parse("opencode", "done_no_errors.jsonl")
    assert (new.tool_calls, new.tool_errors) == (1, 0)


def test_opencode_unfinished_step_is_an_unmatched_request():
    # A step that started but never finished (the request errored and was retried)
    # is a request without terminal usage: spend is not proven complete.
    r = parse("opencode", "retried_step.jsonl")
    assert r.completed_turns == 1
    assert r.cost_usd == 0.004 and not r.cost_reported  # the failed request's cost is not in it
    matched = [t for t in r.turn_usage if t.usage_id is not None]
    assert [t.request_id for t in matched] == ["prt_try_s2"]  # the finish closes the latest start
    assert not turn_usage_matched(r)


# --- mini-swe-agent --------------------------------------------------------------


def test_mini_swe_agent_success():
    r = parse("mini-swe-agent", "success.json")
    assert r.completed_turns == 3
    assert r.uncached_input_tokens == 1510 + (1702 - 1408) + (1820 - 1664)
    assert r.cached_input_tokens == 1408 + 1664
    assert r.output_tokens == 42 + 61 + 30
    assert (r.tool_calls, r.tool_errors) == (3, 1)
    assert r.cost_usd == 0.0213 and r.model == "openai/gpt-4.1-mini"
    assert r.error_class is None and turn_usage_matched(r)


def test_mini_swe_agent_limits_truncated_missing():
    assert parse("mini-swe-agent", "limits_exceeded.json").error_class == "max_turns"
    cut = parse("mini-swe-agent", "truncated.json")
    assert cut.error_class == "unparseable_output"
    assert_all_unknown(cut)
    bare = parse("mini-swe-agent", "missing_usage.json")
    assert bare.completed_turns == 1 and bare.tool_calls == 1
    for name in (*TOKEN_FIELDS, "cost_usd"):
        assert getattr(bare, name) is None, name


def test_mini_swe_agent_timed_out_command_is_a_failed_tool_call():
    r = parse("mini-swe-agent", "timeout.json")
    assert (r.tool_calls, r.tool_errors) == (2, 1)
    assert r.completed_turns == 3 and turn_usage_matched(r)


# --- generic ---------------------------------------------------------------------


def test_generic_single_object():
    r = parse("generic", "success.json")
    assert r.completed_turns == 3
    assert (r.uncached_input_tokens, r.cached_input_tokens) == (6250, 10880)
    assert (r.cache_write_tokens, r.output_tokens) == (5120, 625)
    assert (r.tool_calls, r.tool_errors) == (4, 1)
    assert r.cost_usd == 0.0421 and r.cost_reported
    assert r.applied_profiles == ("coding",) and r.diagnostic_events_version == 1
    # error search + empty ok search; malformed search + unknown_tool rejection.
    assert (r.discovery_failures, r.incorrect_tool_calls) == (2, 2)
    assert turn_usage_matched(r)
    diag = r.schema_diagnostics
    assert diag["request_count"] == 3
    assert diag["disclosure_measurements"] == [
        {"profile": "coding", "active": True, "estimated_tokens": 9120, "disclosed_tokens": 2010,
         "hidden_count": 31, "disclosed_count": 6}
    ]
    assert list(diag["resolved_bridge_invocations"].values()) == [{"calls": 2, "errors": 1}]
    json.dumps(diag)  # plain JSON only


def test_generic_jsonl_and_marker_rules():
    r = parse("generic", "events.jsonl")
    assert r.applied_profiles == ("legacy",)
    assert (r.discovery_failures, r.incorrect_tool_calls) == (0, 0)  # marker + nothing relevant = observed 0
    assert (r.uncached_input_tokens, r.cached_input_tokens, r.output_tokens) == (1200, 1000, 100)
    old = parse("generic", "no_marker.jsonl")
    assert old.applied_profiles == ("coding",)
    assert (old.diagnostic_events_version, old.discovery_failures, old.incorrect_tool_calls) == (None, None, None)


def test_generic_error_truncated_no_usage():
    err = parse("generic", "error.json", exit_code=1)
    assert err.error_class == "max_turns" and err.tool_errors == 7
    cut = parse("generic", "truncated.jsonl", exit_code=3)
    assert cut.error_class == "unparseable_output" and cut.applied_profiles == ("coding",)
    assert_all_unknown(cut)
    bare = parse("generic", "no_usage.json")
    assert bare.completed_turns == 3 and bare.error_class is None
    for name in (*TOKEN_FIELDS, "cost_usd", "tool_calls", "tool_errors"):
        assert getattr(bare, name) is None, name


def test_generic_rejects_unknown_format_version_and_keeps_profile_names_bounded():
    adapter = get_adapter("generic")
    assert adapter.parse(b'{"format_version": 2, "cost_usd": 1}', b"", 0).cost_usd is None
    r = adapter.parse(b'{"applied_profiles": ["coding", "<script>"]}', b"", 0)
    assert r.applied_profiles == ("coding", "unknown")


def test_generic_tool_entry_without_a_known_status_makes_errors_unknown():
    # An entry that does not say how the call ended is a call of unknown outcome,
    # so the error count is unknown rather than a lower bound shown as exact.
    adapter = get_adapter("generic")
    r = adapter.parse(b'{"tools": [{"name": "bash"}, {"status": "ok"}, {"status": "error"}]}', b"", 0)
    assert (r.tool_calls, r.tool_errors) == (3, None)
    ok = adapter.parse(b'{"tools": [{"status": "ok"}, {"status": "cancelled"}]}', b"", 0)
    assert (ok.tool_calls, ok.tool_errors) == (2, 0)


def test_a_lone_event_line_is_not_a_result():
    line = b'{"event":"disclosure.applied","profile":"coding","diagnostic_events_version":1}\n'
    r = get_adapter("generic").parse(line, b"", 3)
    assert r.error_class == "unparseable_output" and r.applied_profiles == ("coding",)
    # The marker was seen, but the events after it were lost with the cut: counts unknown, not 0.
    assert (r.diagnostic_events_version, r.discovery_failures, r.incorrect_tool_calls) == (1, None, None)


# --- every adapter ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(adapter_names()))
@pytest.mark.parametrize("raw", [b"", b"   \n", b"\xff\xfe\x00garbage", b"null", b"[1,2]", b"{", b'"text"'])
def test_bad_output_never_raises_and_never_invents(name, raw):
    r = get_adapter(name).parse(raw, b"stderr noise", None)
    assert r.error_class in ("empty_output", "unparseable_output")
    assert_all_unknown(r)


FUZZ_KEYS = [
    "type", "usage", "turns", "item", "part", "tokens", "stats", "models", "messages", "info",
    "event", "status", "input_tokens", "cost_usd", "total_cost_usd", "num_turns", "result",
    "step_finish", "extra", "response", "cache", "read", "profile", "matched_count",
    "applied_profiles", "reason", "error", "class", "subtype", "exit_status", "sessionID", "tool",
    "state", "exit_code", "events", "modelUsage", "permission_denials", "diagnostic_events_version",
]
# Words the parsers branch on, so fuzzing reaches past the first type check.
FUZZ_WORDS = [
    "result", "disclosure.applied", "disclosure.search", "disclosure.invoke_rejected", "disclosure.invoke",
    "thread.started", "item.completed", "turn.completed", "turn.failed", "step_start", "step_finish",
    "tool_use", "command_execution", "assistant", "user", "ok", "error", "malformed", "coding", "legacy",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(FUZZ_WORDS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FUZZ_KEYS), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=json_values, lines=st.booleans())
def test_parsers_are_total_on_arbitrary_json(value, lines):
    raw = ("\n".join(json.dumps(v) for v in (value if isinstance(value, list) else [value])) if lines else json.dumps(value)).encode()
    for name in adapter_names():
        # parse_output, not the safety net: the parsers themselves must not raise.
        record = get_adapter(name).parse_output(raw.decode(), 0)
        assert isinstance(record, AgentRecord)


def test_the_parse_safety_net_never_takes_the_operators_stop_for_unreadable_output():
    from campaign.agents.adapters.base import Adapter
    from campaign.errors import Interrupted

    def stopped(body: str, exit_code: int | None) -> AgentRecord:
        raise Interrupted("received SIGINT")

    def broken(body: str, exit_code: int | None) -> AgentRecord:
        raise KeyError("usage")

    with pytest.raises(Interrupted):
        Adapter("x", False, stopped).parse(b"{}", b"", 0)
    assert Adapter("x", False, broken).parse(b"{}", b"", 0).error_class == "unparseable_output"
