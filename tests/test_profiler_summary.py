"""From a capture to the row: wire counters, identities, catalogs, disagreements."""

from __future__ import annotations

import json
from dataclasses import replace

from campaign.agents.record import AgentRecord, nothing_billed, turn_usage_matched
from campaign.profiler.capture import parse_capture
from campaign.profiler.summary import merge, summarize
from campaign.spend import spend_complete, wire_cost


def line(**record) -> bytes:
    return (json.dumps(record) + "\n").encode()


def model(seq: int, *, tools: int, digest: str, usage=None, rid: str | None = None, complete: bool = True) -> bytes:
    usage = usage or {"uncached_input": 100, "cached_input": 50, "cache_write": 10, "output": 5}
    return line(kind="model", seq=seq, tool_count=tools, catalog_digest=digest, schema_tokens=tools * 10, status=200,
                response_id=rid or f"msg_{seq}", usage=usage, usage_complete=complete, terminal=True, clean_end=complete,
                cache_read_observable=True, cache_write_observable=True, stream=True)


def flushed(*lines: bytes) -> bytes:
    return b"".join(lines) + line(kind="flush", records=len(lines))


def test_tool_less_side_requests_are_not_the_catalog():
    capture = parse_capture(flushed(model(1, tools=0, digest="e" * 64), model(2, tools=4, digest="a" * 64), model(3, tools=4, digest="a" * 64)))
    diagnostics = summarize(capture).diagnostics
    assert diagnostics["catalog_digests"] == ["a" * 64]
    assert diagnostics["tool_bearing_requests"] == 2 and diagnostics["catalog_tool_counts"] == {"a" * 64: 4}


def test_a_client_that_never_offers_tools_has_the_empty_catalog():
    capture = parse_capture(flushed(model(1, tools=0, digest="e" * 64), model(2, tools=0, digest="e" * 64)))
    diagnostics = summarize(capture).diagnostics
    assert diagnostics["catalog_digests"] == ["e" * 64] and diagnostics["tool_bearing_requests"] == 0


def test_wire_counters_replace_the_adapters_and_disagreements_are_recorded_not_averaged():
    capture = parse_capture(flushed(model(1, tools=2, digest="a" * 64), model(2, tools=2, digest="a" * 64)))
    adapter = AgentRecord(completed_turns=7, uncached_input_tokens=200, cached_input_tokens=100, output_tokens=999, cost_usd=0.5, cost_reported=True)
    merged = merge(adapter, summarize(capture))
    assert (merged.completed_turns, merged.uncached_input_tokens, merged.output_tokens, merged.cache_write_tokens) == (2, 200, 10, 20)
    assert merged.schema_diagnostics["wire_adapter_disagreements"] == {
        "completed_turns": {"wire": 2, "adapter": 7},
        "output_tokens": {"wire": 10, "adapter": 999},
    }
    assert turn_usage_matched(merged) and merged.cost_usd == 0.5


def test_a_repeated_response_id_or_a_missing_flush_is_not_matched():
    repeated = summarize(parse_capture(flushed(model(1, tools=1, digest="a" * 64, rid="msg_x"), model(2, tools=1, digest="a" * 64, rid="msg_x"))))
    assert not repeated.usage_matched
    unflushed = summarize(parse_capture(model(1, tools=1, digest="a" * 64)))
    assert not unflushed.flush_complete and not unflushed.usage_matched
    # An incomplete flush is not zero activity: the request seen is still counted.
    assert unflushed.model_requests == 1 and unflushed.counters["output_tokens"] == 5


def test_anything_after_the_flush_marker_makes_the_capture_malformed():
    capture = parse_capture(flushed(model(1, tools=1, digest="a" * 64)) + model(2, tools=1, digest="a" * 64))
    assert capture.problem == "malformed" and not capture.flush_complete


def rejected(seq: int, status: int = 429) -> bytes:
    """An HTTP error response without usage, as the proxy records one."""
    return line(kind="model", seq=seq, status=status, upstream_error=None, error_event=None, response_id=None, usage=None, usage_complete=False, stream=True)


def test_requests_that_were_all_refused_without_usage_prove_a_zero_spend():
    """A lone 429 the client gave up on: nothing was billed, and the wire proves it, so the
    spend is a known 0 (complete), not unknown; an empty or unflushed capture proves nothing."""
    codex = AgentRecord(cost_usd=None, nested_sessions_observed=None)  # a client that reports no cost
    refused = merge(codex, summarize(parse_capture(flushed(rejected(1), rejected(2, 529)))))
    assert (refused.completed_turns, refused.uncached_input_tokens, refused.cached_input_tokens, refused.cache_write_tokens, refused.output_tokens) == (0, 0, 0, 0, 0)
    assert refused.wire_requests == 2 and nothing_billed(refused) and not turn_usage_matched(refused)
    assert wire_cost(refused, flush_complete=True, equivalent_usd=0.0) == 0.0
    assert spend_complete(replace(refused, cost_usd=0.0), flush_complete=True, wire_costed=True)

    empty = merge(codex, summarize(parse_capture(flushed())))
    unflushed = merge(codex, summarize(parse_capture(rejected(1))))
    for unknown in (empty, unflushed):
        assert not nothing_billed(unknown) and unknown.output_tokens is None
    # One billed request beside the refused one: the usual rule (its usage must match).
    mixed = merge(codex, summarize(parse_capture(flushed(rejected(1), model(2, tools=1, digest="a" * 64)))))
    assert not nothing_billed(mixed) and turn_usage_matched(mixed) and mixed.output_tokens == 5
    # A client that saw a nested session proves nothing about the parent's spend.
    nested = merge(replace(codex, nested_sessions_observed=True), summarize(parse_capture(flushed(rejected(1)))))
    assert not nothing_billed(nested)


def test_a_cache_write_count_no_response_carried_is_unknown_not_the_clients_zero():
    # opencode on a Chat Completions route reports `cache.write: 0`; no response could carry one.
    chat = {"uncached_input": 100, "cached_input": 50, "cache_write": None, "output": 5}
    unobservable = json.loads(model(1, tools=2, digest="a" * 64, usage=chat))
    unobservable["cache_write_observable"] = False
    capture = parse_capture(flushed(line(**unobservable)))
    merged = merge(AgentRecord(completed_turns=1, cache_write_tokens=0, cost_usd=0.01, cost_reported=True), summarize(capture))
    assert merged.cache_write_tokens is None and merged.uncached_input_tokens == 100
    # Where the wire carried it, the wire's figure stands.
    carried = merge(AgentRecord(completed_turns=1, cache_write_tokens=0), summarize(parse_capture(flushed(model(1, tools=2, digest="a" * 64)))))
    assert carried.cache_write_tokens == 10
