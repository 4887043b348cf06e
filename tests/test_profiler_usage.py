"""What a Responses stream's end says about its usage: an answer cut short by the
request's own limit is whole and billed; a failed one keeps what it reports, as partial."""

from __future__ import annotations

import json

from campaign.profiler import faults, proxy, usage, wire

USAGE = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 1200}, "output_tokens": 4096, "total_tokens": 9096}


def _stream(*events: dict) -> usage.UsageObservation:
    observer = usage.StreamObserver("responses")
    observer.feed(b'event: response.created\ndata: {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "usage": null}}\n\n')
    for event in events:
        observer.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    return observer.finish()


def _record(observed: usage.UsageObservation) -> dict:
    """The capture line the proxy writes for it, a 200."""
    summary = wire.summarize_request("/v1/responses", json.dumps({"model": "gpt-5-codex", "input": "hi", "stream": True}).encode())
    return proxy.model_record(1, summary, None, 200, observed)


def test_an_answer_cut_at_max_output_tokens_is_whole_billed_usage_and_no_fault():
    observed = _stream(
        {"type": "response.output_text.delta", "delta": "def f():"},
        {"type": "response.incomplete", "response": {"id": "resp_1", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "usage": USAGE}},
    )
    assert (observed.uncached_input, observed.cached_input, observed.output) == (3800, 1200, 4096)
    assert observed.complete and observed.error_event is None
    assert faults.billing(_record(observed)) == "complete" and faults.request_fault(_record(observed)) is None


def test_a_failed_response_keeps_the_usage_it_reports_as_partial():
    failed = {"id": "resp_1", "status": "failed", "error": {"code": "server_error", "message": "The model failed"}, "usage": USAGE}
    observed = _stream({"type": "response.failed", "response": failed})
    assert (observed.uncached_input, observed.output) == (3800, 4096)
    assert not observed.complete and observed.error_event == "server_error"
    assert faults.billing(_record(observed)) == "partial" and faults.request_fault(_record(observed)) == "http_5xx"


def test_a_failed_response_without_usage_reads_none_never_zero():
    observed = _stream({"type": "response.failed", "response": {"id": "resp_1", "status": "failed", "error": {"code": "rate_limit_exceeded"}, "usage": None}})
    assert not observed.has_usage and observed.uncached_input is None and observed.error_event == "rate_limited"


def test_a_stream_that_ends_without_its_terminal_event_has_no_usage():
    observed = _stream({"type": "response.output_text.delta", "delta": "def f():"})
    assert not observed.has_usage and not observed.complete
