"""Whose fault is a model request, and was it billed: the rules over capture lines."""

from __future__ import annotations

import json

import pytest

from campaign.profiler import faults, usage

USAGE = {"uncached_input": 100, "cached_input": 0, "cache_write": 0, "output": 10}


def line(seq: int = 1, status: int | None = 200, **extra) -> dict:
    record = {"kind": "model", "seq": seq, "status": status, "upstream_error": None, "error_event": None, "response_id": None, "usage": None, "usage_complete": False}
    return {**record, **extra}


COMPLETE = dict(response_id="r1", usage=USAGE, usage_complete=True)


@pytest.mark.parametrize(
    ("record", "fault", "billing"),
    [
        (line(**COMPLETE), None, "complete"),
        (line(status=429), "http_429", "unbilled"),
        (line(status=529), "http_529", "unbilled"),
        (line(status=503), "http_5xx", "unbilled"),
        (line(status=408), "http_5xx", "unbilled"),
        (line(status=401), "http_auth", "unbilled"),
        (line(status=401, error_event="billing"), "http_auth", "unbilled"),
        # The operator's account or catalog, never the agent's: 402, a refusal for money, 404.
        (line(status=402), "http_billing", "unbilled"),
        (line(status=400, error_event="billing"), "http_billing", "unbilled"),
        (line(status=429, error_event="billing"), "http_billing", "unbilled"),
        (line(status=403, error_event="billing"), "http_billing", "unbilled"),
        (line(status=404), "http_not_found", "unbilled"),
        # A 200 whose body is only an error counts by what it says; its spend is unseen, as today.
        (line(error_event="billing"), "http_billing", "unseen"),
        (line(error_event="server_error"), "http_5xx", "unseen"),
        # A 5xx whose body mentions billing is still the provider's server error.
        (line(status=500, error_event="billing"), "http_5xx", "unbilled"),
        # Caused by the request itself (context too long, payload too large): the agent's.
        (line(status=400), None, "unbilled"),
        (line(status=400, error_event="other"), None, "unbilled"),
        (line(status=413), None, "unbilled"),
        (line(status=None, upstream_error="unreachable"), "unreachable", "unbilled"),
        (line(status=None, upstream_error="reset"), "connection_reset", "unseen"),
        (line(status=None, upstream_error="silent"), "upstream_silent", "unseen"),
        (line(upstream_error="silent", usage=USAGE), "upstream_silent", "partial"),
        (line(upstream_error="cut", usage=USAGE), "stream_cut", "partial"),
        (line(upstream_error="cut"), "stream_cut", "unseen"),
        (line(error_event="overloaded", usage=USAGE), "http_529", "partial"),
        (line(error_event="rate_limited"), "http_429", "unseen"),
        # An error event that is not the provider's (an incomplete response, a bad request).
        (line(error_event="other", usage=USAGE), None, "partial"),
        # The proxy stopped waiting at shutdown: nobody's fault, and unseen spend.
        (line(status=None, upstream_error="aborted"), None, "unseen"),
    ],
)
def test_fault_and_billing_of_one_request(record, fault, billing):
    assert faults.request_fault(record) == fault
    assert faults.billing(record) == billing


def test_the_last_request_decides_whether_the_provider_ended_the_attempt():
    recovered = [line(1, 529), line(2, **COMPLETE)]
    assert faults.ending_fault(recovered) is None
    gave_up = [line(2, 529), line(1, **COMPLETE)]  # by seq, not by the order lines were written
    assert faults.ending_fault(gave_up) == "http_529"
    assert faults.ending_fault([]) is None


def test_the_client_gave_out_after_three_faults_in_a_row():
    assert faults.gave_out([line(1, 429), line(2, 429)]) is None
    assert faults.gave_out([line(1, 429), line(2, **COMPLETE), line(3, 429), line(4, 429)]) is None
    assert faults.gave_out([line(1, 429), line(2, 529), line(3, None, upstream_error="silent")]) == "upstream_silent"


def test_counts_and_their_words():
    counts = faults.fault_counts([line(1, 529), line(2, 529), line(3, upstream_error="cut"), line(4, **COMPLETE)])
    assert counts["http_529"] == 2 and counts["stream_cut"] == 1 and sum(counts.values()) == 3
    assert faults.describe(counts) == "HTTP 529 x2, cut stream x1"
    assert faults.describe(faults.fault_counts([])) == "no fault on the wire"


CREDIT = {"type": "error", "error": {"type": "invalid_request_error", "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}


@pytest.mark.parametrize(
    ("fmt", "body", "event"),
    [
        ("anthropic", CREDIT, "billing"),
        ("chat", {"error": {"message": "Insufficient credits", "code": 402}}, "billing"),
        ("responses", {"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}}, "billing"),
        # OpenRouter: a 200 carrying the upstream's HTTP status as a numeric code.
        ("chat", {"error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "X"}}}, "server_error"),
        ("chat", {"error": {"code": 429, "message": "Rate limit exceeded"}}, "rate_limited"),
        ("chat", {"error": {"code": 529, "message": "busy"}}, "overloaded"),
        ("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "overloaded"),
        # Caused by the request: the agent's, as before.
        ("anthropic", {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}, "other"),
        ("anthropic", {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}, "other"),
        # An answer is no error body, whatever else it carries.
        ("chat", {"id": "c1", "choices": [{"message": {"content": "hi"}}], "error": {"code": 502}}, None),
        ("responses", {"id": "r1", "output": [], "error": None, "usage": {"input_tokens": 1, "output_tokens": 1}}, None),
    ],
)
def test_an_error_body_is_read_for_what_it_says(fmt, body, event):
    observed = usage.observe_json(fmt, json.dumps(body).encode())
    assert observed.error_event == event
    assert observed.clean_end is (event is None)  # an error body is no complete response
    assert not observed.has_usage or event is None  # nothing read as usage: unknown stays None


def test_a_streamed_error_with_a_numeric_code_is_the_providers():
    stream = usage.StreamObserver("chat")
    stream.feed(b'data: {"id": "gen-1", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": null}]}\n\n')
    stream.feed(b'data: {"error": {"code": 502, "message": "Provider returned error"}}\n\n')
    observed = stream.finish()
    assert observed.error_event == "server_error" and not observed.clean_end and observed.uncached_input is None
